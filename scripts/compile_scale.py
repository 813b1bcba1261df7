#!/usr/bin/env python3
"""Times the release build of a user crate holding the generated code of a qwen3_5-like
circuit, at several layer counts, to check that it grows linearly with the layers.

For each L (default 64, 128, 256, 512) it writes circuits/qwen3_5.toml with its blocks/
include into target/compile-scale/circuits/, keeping only the first checkpoint with
`layers = L`; generates its module with the workspace's CLI (`metrale-codegen gen`); and
includes it in a scratch crate (target/compile-scale/crate, its own workspace, depending on
metrale-circuit by path) with a pub fn that calls `StatePlan::new`, so the plan is not dead
code. After one warm-up build of the dependencies, it touches src/lib.rs and times
`cargo build --release` (wall clock, best of --runs) for each L, then prints a table and the
ratios t(128)/t(64) <= 2.5 and t(512)/t(128) <= 4.4 (linear growth is 2 and 4; each time
also holds a fixed cost of about half a second: cargo, the crate's metadata, the rlib).

Exit 0 whatever the times (a report); 1 when the CLI or a build fails.

    python3 scripts/compile_scale.py [--layers 64,128,256,512] [--runs 2]
"""

import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
CIRCUIT = ROOT / "circuits" / "qwen3_5.toml"
WORK = ROOT / "target" / "compile-scale"
CRATE = WORK / "crate"
CLI = ROOT / "target" / "release" / "metrale-codegen"

TARGETS = (
    # (numerator L, denominator L, largest ratio allowed)
    (128, 64, 2.5),
    (512, 128, 4.4),
)


def fail(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


def run(cmd, cwd=ROOT):
    """Runs `cmd`; exits 1 with its output when it fails."""
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stdout)
        sys.stderr.write(result.stderr)
        fail(f"`{' '.join(map(str, cmd))}` exited {result.returncode}")
    sys.stderr.write(result.stderr)
    return result


def synthetic_circuit(layers: int) -> str:
    """circuits/qwen3_5.toml with only its first checkpoint, that one of `layers` layers."""
    text = CIRCUIT.read_text()
    # Split at each `[checkpoint.<name>]` header; the comment block above a header belongs to
    # that checkpoint, so cut at the start of the comment lines just before it.
    headers = [m.start() for m in re.finditer(r"^\[checkpoint\.[A-Za-z0-9_]+\]", text, re.M)]
    if not headers:
        fail(f"{CIRCUIT} has no [checkpoint.*] table")
    first, rest = headers[0], headers[1:]
    end = len(text)
    if rest:
        end = rest[0]
        # Drop the comment lines that introduce the second checkpoint too.
        while True:
            previous = text.rfind("\n", 0, end - 1)
            line = text[previous + 1 : end]
            if previous < first or not line.lstrip().startswith("#"):
                break
            end = previous + 1
    checkpoint = text[first:end]
    checkpoint, count = re.subn(r"^layers\s*=\s*\d+", f"layers = {layers}", checkpoint, flags=re.M)
    if count != 1:
        fail(f"the first checkpoint of {CIRCUIT} has {count} `layers = N` lines, not one")
    return text[:first] + checkpoint.rstrip() + "\n"


def module_name() -> str:
    """The first checkpoint's name: the generated `qwen3_5::<name>` module."""
    match = re.search(r"^\[checkpoint\.([A-Za-z0-9_]+)\]", CIRCUIT.read_text(), re.M)
    return match.group(1)


def arch() -> str:
    match = re.search(r'^arch\s*=\s*"([^"]+)"', CIRCUIT.read_text(), re.M)
    return match.group(1)


def write_crate() -> None:
    """The scratch crate: src/lib.rs includes src/generated.rs (rewritten for each L)."""
    (CRATE / "src").mkdir(parents=True, exist_ok=True)
    runtime = os.path.relpath(ROOT / "metrale-circuit", CRATE)
    (CRATE / "Cargo.toml").write_text(
        f"""[package]
name = "compile-scale"
version = "0.0.0"
edition = "2024"
publish = false

# Not a member of the metrale workspace.
[workspace]

[dependencies]
metrale-circuit = {{ path = "{runtime}" }}

[lib]
path = "src/lib.rs"
"""
    )
    checkpoint = module_name()
    (CRATE / "src" / "lib.rs").write_text(
        f"""//! Scratch crate of scripts/compile_scale.py: the generated code of one checkpoint.
#![allow(missing_docs, clippy::all)]

include!("generated.rs");

/// Keeps the plan alive: a run-time call of the generated `StatePlan::new`.
pub fn plan<'a>(
    dims: &{arch()}::Dims,
    inputs: &{arch()}::Inputs<'a>,
    align: u64,
) -> Result<{arch()}::{checkpoint}::StatePlan<'a>, ::metrale_circuit::PlanError> {{
    {arch()}::{checkpoint}::StatePlan::new(dims, inputs, align)
}}

/// The same plan's regions, so `regions()` is compiled too.
pub fn regions(
    plan: &{arch()}::{checkpoint}::StatePlan<'_>,
) -> [::metrale_circuit::Region; {arch()}::{checkpoint}::TERM_COUNT] {{
    plan.regions()
}}

/// Its layers, so `layers()` is compiled too.
pub fn layer_count(plan: &{arch()}::{checkpoint}::StatePlan<'_>) -> usize {{
    plan.layers().len()
}}

/// The const tables, so their evaluation is part of the build.
pub fn first_term() -> &'static str {{
    {arch()}::{checkpoint}::TERMS[0].state
}}
"""
    )


def generate(layers: int) -> pathlib.Path:
    """Writes the circuit of `layers` layers and its generated module; returns the module."""
    circuits = WORK / "circuits"
    (circuits / "blocks").mkdir(parents=True, exist_ok=True)
    for block in (CIRCUIT.parent / "blocks").glob("*.toml"):
        shutil.copyfile(block, circuits / "blocks" / block.name)
    circuit = circuits / f"{CIRCUIT.stem}.toml"
    circuit.write_text(synthetic_circuit(layers))
    # One folder per L so that every circuit keeps its name (and its arch module's doc).
    out = WORK / "generated" / f"{CIRCUIT.stem}_{layers}.rs"
    out.parent.mkdir(parents=True, exist_ok=True)
    run([CLI, "gen", circuit, "-o", out])
    return out


def cargo_build() -> float:
    start = time.monotonic()
    result = subprocess.run(
        ["cargo", "build", "--release", "-q"],
        cwd=CRATE,
        capture_output=True,
        text=True,
    )
    elapsed = time.monotonic() - start
    if result.returncode != 0:
        sys.stderr.write(result.stdout)
        sys.stderr.write(result.stderr[-20000:])
        fail(f"`cargo build --release` of {CRATE} exited {result.returncode}")
    return elapsed


def touch(path: pathlib.Path) -> None:
    now = time.time()
    os.utime(path, (now, now))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", default="64,128,256,512", help="comma-separated layer counts")
    parser.add_argument("--runs", type=int, default=2, help="builds per layer count (best kept)")
    args = parser.parse_args()
    try:
        layer_counts = [int(part) for part in args.layers.split(",") if part.strip()]
    except ValueError:
        fail(f"--layers takes comma-separated integers, not `{args.layers}`")
    if not layer_counts or min(layer_counts) < 1 or args.runs < 1:
        fail("--layers needs positive counts and --runs a positive number")

    print("building the CLI (cargo build --release -p metrale-cli)...", file=sys.stderr)
    run(["cargo", "build", "-q", "--release", "-p", "metrale-cli"])
    if not CLI.exists():
        fail(f"no CLI at {CLI}")

    write_crate()
    modules = {layers: generate(layers) for layers in layer_counts}
    generated = CRATE / "src" / "generated.rs"
    lib = CRATE / "src" / "lib.rs"

    # Warm-up: the dependencies (metrale-circuit) and one build of the smallest module.
    print("warm-up build of the dependencies...", file=sys.stderr)
    shutil.copyfile(modules[min(layer_counts)], generated)
    cargo_build()

    times = {}
    for layers in layer_counts:
        shutil.copyfile(modules[layers], generated)
        lines = sum(1 for _ in generated.open())
        best = None
        for _ in range(args.runs):
            touch(lib)
            elapsed = cargo_build()
            best = elapsed if best is None else min(best, elapsed)
        times[layers] = best
        print(f"  L={layers:<5} {best:7.2f} s   ({lines} generated lines)", file=sys.stderr)

    print()
    print(f"release build of the generated code of {CIRCUIT.name}, one checkpoint, best of {args.runs}")
    print(f"{'layers':>7}  {'seconds':>8}  {'s/layer':>8}")
    for layers in layer_counts:
        print(f"{layers:>7}  {times[layers]:>8.2f}  {times[layers] / layers * 1000:>6.1f}ms")
    print()
    for top, bottom, limit in TARGETS:
        if top in times and bottom in times:
            ratio = times[top] / times[bottom]
            verdict = "met" if ratio <= limit else "NOT met"
            linear = top / bottom
            print(
                f"t({top})/t({bottom}) = {ratio:5.2f}   target <= {limit} (linear: {linear:g})   {verdict}"
            )
        else:
            print(f"t({top})/t({bottom}): not measured (needs --layers with {bottom} and {top})")


if __name__ == "__main__":
    main()
