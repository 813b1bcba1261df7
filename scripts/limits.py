#!/usr/bin/env python3
"""Builds the largest circuit the loader accepts at each of its limits
(metrale-circuit/src/load/text/limits.rs), generates its module and compiles it, printing the
time and peak memory of each step: the check that everything the loader accepts, the generator
handles in linear time and memory and rustc compiles.

Cases (each at its limits, the others small):
  layers       one checkpoint of MAX_LAYERS layers, MAX_TERMS / MAX_LAYERS states a layer
  checkpoints  MAX_CHECKPOINTS checkpoints sharing MAX_TERMS states terms
  wide         MAX_LAYER_KINDS layer kinds of 4 blocks (MAX_BLOCKS blocks) of 4 states
               (MAX_STATES states), MAX_DIMS dims and MAX_DIMS derived dims (a chain), every
               name but the state ids MAX_NAME_BYTES long (to fit MAX_FILE_BYTES)
  states       MAX_STATES states in blocks of MAX_STATES_PER_BLOCK, long names
  shapes       MAX_STATES_PER_BLOCK states of MAX_SHAPE_TERMS factors over long names, in
               MAX_TERMS / MAX_STATES_PER_BLOCK layers
  half-*       the layers and checkpoints cases at half their terms, for the ratio of
               generation times (linear: 2)

For each: `metrale-codegen check` and `gen` (wall time, peak RSS via /usr/bin/time), the
module's size, then `cargo build` (debug, and --release with --release) of a scratch crate
(target/limits/crate, its own workspace, depending on metrale-circuit by path) that includes
it, timed after a warm-up build of the dependency. A case past a limit is checked to fail
with the limit's message. Exit 1 when any step fails.

    python3 scripts/limits.py [--release] [--cases layers,checkpoints,wide]
"""

import argparse
import os
import pathlib
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORK = ROOT / "target" / "limits"
CRATE = WORK / "crate"
CLI = ROOT / "target" / "release" / "metrale-codegen"
LIMITS = ROOT / "metrale-circuit" / "src" / "load" / "text" / "limits.rs"


def limits() -> dict:
    """The `pub const MAX_*` values of limits.rs."""
    found = {}
    for name, value in re.findall(r"pub const (MAX_\w+): \w+ = ([^;]+);", LIMITS.read_text()):
        value = value.replace("_", "")
        found[name] = 1 << int(value[5:]) if value.startswith("1 << ") else int(value)
    return found


L = limits()


def fail(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


def name(prefix: str, i: int, long: bool) -> str:
    """`prefix<i>`, padded with `_x` to MAX_NAME_BYTES when `long`."""
    base = f"{prefix}{i}"
    if not long:
        return base
    return (base + "_" + "x" * L["MAX_NAME_BYTES"])[: L["MAX_NAME_BYTES"]]


def circuit(kinds: int, blocks_per_kind: int, states: int, checkpoints: int, layers: int,
            dims: int, derived: int, long: bool, shape_terms: int, compact: bool = False) -> str:
    """A list-layout circuit: layer kind k<i> holds blocks b<i*blocks_per_kind ...>, each block
    `states` states (alternately a paged KV side and a recurrent state with verify), every
    checkpoint `layers` layers cycling through the kinds. `compact`: each block's states as one
    array of inline tables with short ids (so the widest case fits MAX_FILE_BYTES)."""
    dim_names = [name("d", i, long) for i in range(dims)]
    derived_names = [name("e", i, long) for i in range(derived)]
    readable = dim_names + derived_names
    out = ["schema = 2", 'arch = "limits"', "dims = [" + ", ".join(f'"{d}"' for d in dim_names) + "]"]
    if derived:
        out.append("[derive]")
        for i, d in enumerate(derived_names):
            # Each reads the one before (a chain as long as the limit), the first a dim.
            source = derived_names[i - 1] if i else dim_names[0]
            out.append(f'{d} = "{source} + 1"')
    out += ["[layout]", 'kind = "list"', "[layout.blocks]"]
    block_names = []
    for k in range(kinds):
        names = [name("b", k * blocks_per_kind + j, long) for j in range(blocks_per_kind)]
        block_names += names
        out.append(f'{name("k", k, long)} = [' + ", ".join(f'"{b}"' for b in names) + "]")
    for b in block_names:
        if compact:
            items = []
            for s in range(states):
                items.append(f'{{id="s{s}",kind="paged_kv",format="f32",shape="{s + 1}"}}')
            out.append(f"[block.{b}]")
            out.append("state=[" + ",".join(items) + "]")
            continue
        for s in range(states):
            # A shape of `shape_terms` factors, over the dims and derived dims in turn.
            factors = [readable[(s + f) % len(readable)] for f in range(shape_terms)]
            out.append(f"[[block.{b}.state]]")
            out.append(f'id = "{name("s", s, long)}"')
            if s % 2:
                out += ['kind = "recurrent"', 'format = "{h}"', 'verify = "h_steps"']
            else:
                out += ['kind = "paged_kv"', 'format = "{kv}"']
            out.append(f'shape = "{" * ".join(factors)}"')
    for c in range(checkpoints):
        kinds_list = ", ".join(f'"{name("k", l % kinds, long)}"' for l in range(layers))
        values = ", ".join(f"{d} = {2 if i == 0 else 1}" for i, d in enumerate(dim_names))
        out.append(f"[checkpoint.{name('c', c, long)}]")
        out.append(f"layer_kinds = [{kinds_list}]")
        out.append(f"dims = {{ {values} }}")
    return "\n".join(out) + "\n"


def cases() -> dict:
    terms, layers = L["MAX_TERMS"], L["MAX_LAYERS"]
    ckpts = L["MAX_CHECKPOINTS"]
    small = dict(kinds=1, blocks_per_kind=1, states=1, checkpoints=1, layers=1, dims=1,
                 derived=0, long=False, shape_terms=1)
    wide_kinds, per_kind = L["MAX_LAYER_KINDS"], L["MAX_BLOCKS"] // L["MAX_LAYER_KINDS"]
    return {
        "layers": dict(small, layers=layers, states=terms // layers),
        "half-layers": dict(small, layers=layers, states=terms // layers // 2),
        "checkpoints": dict(small, checkpoints=ckpts, layers=terms // ckpts),
        "half-checkpoints": dict(small, checkpoints=ckpts, layers=terms // ckpts // 2),
        "wide": dict(small, kinds=wide_kinds, blocks_per_kind=per_kind,
                     states=L["MAX_STATES"] // L["MAX_BLOCKS"], layers=wide_kinds,
                     dims=L["MAX_DIMS"], derived=L["MAX_DIMS"], long=True, compact=True),
        "states": dict(small, kinds=L["MAX_STATES"] // L["MAX_STATES_PER_BLOCK"],
                       states=L["MAX_STATES_PER_BLOCK"],
                       layers=L["MAX_STATES"] // L["MAX_STATES_PER_BLOCK"], long=True),
        "shapes": dict(small, states=L["MAX_STATES_PER_BLOCK"],
                       layers=terms // L["MAX_STATES_PER_BLOCK"], dims=L["MAX_SHAPE_TERMS"],
                       long=True, shape_terms=L["MAX_SHAPE_TERMS"]),
    }


def past(case: dict) -> list:
    """Variants one past a limit, with the message each must fail with."""
    out = []
    if case["layers"] == L["MAX_LAYERS"]:
        out.append((dict(case, layers=case["layers"] + 1), "too many layers"))
    if case["checkpoints"] == L["MAX_CHECKPOINTS"]:
        out.append((dict(case, checkpoints=case["checkpoints"] + 1), "too many checkpoints"))
    if case["states"] * case["layers"] * case["checkpoints"] == L["MAX_TERMS"]:
        # One layer more, or (at the layer limit) one state more a block.
        more = (dict(case, layers=case["layers"] + 1) if case["layers"] < L["MAX_LAYERS"]
                else dict(case, states=case["states"] + 1))
        out.append((more, "too many state terms"))
    if case["shape_terms"] == L["MAX_SHAPE_TERMS"]:
        out.append((dict(case, shape_terms=case["shape_terms"] + 1), "too many terms"))
    return out


def timed(cmd, cwd=ROOT):
    """Runs `cmd` under /usr/bin/time: (seconds, peak RSS in MB, result)."""
    start = time.monotonic()
    result = subprocess.run(["/usr/bin/time", "-f", "%M"] + [str(c) for c in cmd], cwd=cwd,
                            capture_output=True, text=True)
    elapsed = time.monotonic() - start
    rss_kb = int(result.stderr.strip().splitlines()[-1])
    return elapsed, rss_kb / 1024, result


def write_crate() -> None:
    (CRATE / "src").mkdir(parents=True, exist_ok=True)
    runtime = os.path.relpath(ROOT / "metrale-circuit", CRATE)
    (CRATE / "Cargo.toml").write_text(f"""[package]
name = "limits-check"
version = "0.0.0"
edition = "2024"
publish = false

# Not a member of the metrale workspace.
[workspace]

[dependencies]
metrale-circuit = {{ path = "{runtime}", default-features = false }}
""")
    (CRATE / "src" / "lib.rs").write_text(
        "//! Scratch crate of scripts/limits.py: one generated module at the loader's limits.\n"
        "#![deny(warnings, missing_docs)]\n\n"
        'include!("generated.rs");\n')


def build(release: bool) -> tuple:
    (CRATE / "src" / "lib.rs").touch()
    cmd = ["cargo", "build", "-q"] + (["--release"] if release else [])
    seconds, rss, result = timed(cmd, cwd=CRATE)
    if result.returncode != 0:
        sys.stderr.write(result.stderr[-20000:])
        fail(f"`{' '.join(cmd)}` of the generated module failed")
    return seconds, rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--release", action="store_true", help="also time a release build")
    parser.add_argument("--cases", default=",".join(cases()), help="comma-separated cases")
    args = parser.parse_args()
    all_cases = cases()
    chosen = [c for c in args.cases.split(",") if c]
    for c in chosen:
        if c not in all_cases:
            fail(f"unknown case `{c}`; valid: {', '.join(all_cases)}")

    print("building the CLI (cargo build --release -p metrale-cli)...", file=sys.stderr)
    built = subprocess.run(["cargo", "build", "--release", "-q", "-p", "metrale-cli"], cwd=ROOT)
    if built.returncode != 0:
        fail("the CLI does not build")
    WORK.mkdir(parents=True, exist_ok=True)
    write_crate()
    (CRATE / "src" / "generated.rs").write_text("")
    build(False)
    if args.release:
        build(True)

    rows = []
    gen_times = {}
    for case_name in chosen:
        case = all_cases[case_name]
        text = circuit(**case)
        path = WORK / f"{case_name}.toml"
        path.write_text(text)
        check_s, check_mb, result = timed([CLI, "check", path])
        if result.returncode != 0:
            sys.stderr.write(result.stderr[-5000:])
            fail(f"case {case_name}: the circuit at the limits does not load")
        out = CRATE / "src" / "generated.rs"
        gen_s, gen_mb, result = timed([CLI, "gen", path, "-o", out])
        if result.returncode != 0:
            sys.stderr.write(result.stderr[-5000:])
            fail(f"case {case_name}: gen failed")
        gen_times[case_name] = gen_s
        for variant, message in past(case):
            over = WORK / f"{case_name}-past.toml"
            over.write_text(circuit(**variant))
            result = subprocess.run([CLI, "check", over], capture_output=True, text=True)
            if result.returncode != 1 or message not in result.stderr:
                fail(f"case {case_name}: one past a limit did not fail with `{message}`")
        debug_s, debug_mb = build(False)
        row = [case_name, f"{len(text) / 1024:.0f} KB", f"{check_s:.2f} s", f"{gen_s:.2f} s / {gen_mb:.0f} MB",
               f"{out.stat().st_size / 1e6:.1f} MB", f"{debug_s:.1f} s / {debug_mb:.0f} MB"]
        if args.release:
            release_s, release_mb = build(True)
            row.append(f"{release_s:.1f} s / {release_mb:.0f} MB")
        rows.append(row)
        print(" | ".join(row), file=sys.stderr)

    header = ["case", "circuit", "check", "gen (time / peak RSS)", "module", "cargo build (debug)"]
    if args.release:
        header.append("cargo build --release")
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    for full in ("layers", "checkpoints"):
        half = f"half-{full}"
        if full in gen_times and half in gen_times:
            print(f"\ngen {full} / {half} (twice the terms; linear is 2): "
                  f"{gen_times[full] / gen_times[half]:.2f}")


if __name__ == "__main__":
    main()
