#!/usr/bin/env python3
"""Measures what metrale costs a build script user, against a build script everyone accepts.

Side by side, in one run, the clean debug build time of two scratch crates, each its own
workspace under target/build-time/ with its own CARGO_TARGET_DIR (no build output shared;
the registry is), built in turn, a, b, a, b, ... (--runs N each; the best of each is
reported, as the least disturbed by whatever else the machine does):

  (a) user: a crate whose build.rs runs `metrale_codegen::Builder` on this repository's
      circuits/llama.toml and whose lib.rs includes the output; it depends on
      `metrale-circuit` (default-features = false, as a lean engine does) and, as a
      build-dependency, on `metrale-codegen`, both by path;
  (b) toml: a crate whose build.rs reads a TOML file into a realistic struct with `serde`
      derive and `toml`, and writes constants its lib.rs includes.

Each scratch crate has its own Cargo.lock, resolved before any timing (offline first, from
the registry cache this workspace already filled); its version requirements are the
workspace's (toml "1.2", serde "1"), so it builds the versions the workspace builds. The
timed build is `cargo build --frozen` (no resolution, no network) after removing the crate's
target folder; RUSTC_WRAPPER is cleared so no compiler cache hides work. Jobs: the
CARGO_BUILD_JOBS of the environment, or --jobs.

With --timings, one more clean build of each runs with `cargo build --timings`, and the
slowest compilation units of each are listed from its report (--top N, 8 unless given).

--manifest TEXT appends TOML to both scratch manifests, to measure an option a user could set
without changing this workspace (e.g. a `[profile.dev.build-override]` table).

Usage: python3 scripts/build_time.py [--runs N] [--jobs N] [--timings] [--top N]
                                     [--manifest TOML]
Prints both best times, every run, the ratio a/b, and the resolved versions of the crates
that matter. Exits 1 when a build fails.
"""

import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORK = ROOT / "target" / "build-time"
CIRCUIT = ROOT / "circuits" / "llama.toml"

# The crates whose resolved versions the report names (from each scratch crate's Cargo.lock).
WATCHED = ["metrale-codegen", "syn", "prettyplease", "quote", "proc-macro2", "toml", "serde",
           "serde_derive", "winnow"]


def fail(message: str) -> None:
    print(f"build_time.py: {message}", file=sys.stderr)
    sys.exit(1)


def toml_string(text: str) -> str:
    """`text` as a TOML basic string (a JSON string is one: the same quotes and escapes)."""
    return json.dumps(text)


def user_crate(path: pathlib.Path, extra: str) -> None:
    """Crate (a): metrale's build.rs path, as the README tells a user to set it up."""
    write(path / "Cargo.toml", f"""[package]
name = "build-time-user"
version = "0.0.0"
edition = "2024"
publish = false

# Its own workspace: nothing of the metrale workspace (lock, profiles, target) applies.
[workspace]

[dependencies]
metrale-circuit = {{ path = {toml_string(str(ROOT / "metrale-circuit"))}, \
default-features = false }}

[build-dependencies]
metrale-codegen = {{ path = {toml_string(str(ROOT / "metrale-codegen"))} }}
""" + extra)
    write(path / "build.rs", f"""fn main() {{
    if let Err(error) = metrale_codegen::Builder::new()
        .circuit({json.dumps(str(CIRCUIT))})
        .compile()
    {{
        eprintln!("{{error}}");
        std::process::exit(1);
    }}
}}
""")
    write(path / "src" / "lib.rs", """//! The generated plans of Llama 3.1.
include!(concat!(env!("OUT_DIR"), "/llama.rs"));
""")


# Crate (b)'s input: a serving config of the size a build script typically reads.
CONFIG_TOML = """name = "fleet"
version = 3
description = "the models this engine serves, and how"
features = ["paged_kv", "prefix_cache", "speculative"]

[server]
host = "0.0.0.0"
port = 8080
workers = 16
tls = false

[limits]
max_sequences = 256
max_context = 131072
kv_blocks = 2048

[[model]]
id = "llama-3.1-8b"
layers = 32
hidden = 4096
kv_heads = 8
head_dim = 128
dtype = "bf16"
tags = ["dense", "gqa"]

[[model]]
id = "llama-3.1-70b"
layers = 80
hidden = 8192
kv_heads = 8
head_dim = 128
dtype = "fp8"
tags = ["dense", "gqa"]

[[model]]
id = "qwen3.5-27b"
layers = 64
hidden = 5120
kv_heads = 4
head_dim = 256
dtype = "bf16"

[[model]]
id = "tiny"
layers = 2
hidden = 64
kv_heads = 1
head_dim = 16
dtype = "f32"
draft = { layers = 1, dtype = "f32" }
"""

TOML_BUILD_RS = """use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    name: String,
    version: u32,
    description: Option<String>,
    #[serde(default)]
    features: Vec<String>,
    server: Server,
    limits: BTreeMap<String, u64>,
    #[serde(rename = "model")]
    models: Vec<Model>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Server {
    host: String,
    port: u16,
    workers: Option<u32>,
    #[serde(default)]
    tls: bool,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Dtype {
    F32,
    Bf16,
    Fp8,
}

impl Dtype {
    fn bytes(self) -> u64 {
        match self {
            Dtype::F32 => 4,
            Dtype::Bf16 => 2,
            Dtype::Fp8 => 1,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Model {
    id: String,
    layers: u32,
    hidden: u64,
    kv_heads: u64,
    head_dim: u64,
    dtype: Dtype,
    #[serde(default)]
    tags: Vec<String>,
    draft: Option<Draft>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Draft {
    layers: u32,
    dtype: Dtype,
}

fn main() {
    println!("cargo::rerun-if-changed=config.toml");
    let text = std::fs::read_to_string("config.toml").expect("config.toml");
    let config: Config = toml::from_str(&text).unwrap_or_else(|e| panic!("config.toml: {e}"));
    let mut out = String::new();
    let _ = writeln!(out, "pub const NAME: &str = {:?};", config.name);
    let _ = writeln!(out, "pub const VERSION: u32 = {};", config.version);
    let _ = writeln!(out, "pub const DESCRIPTION: &str = {:?};", config.description.unwrap_or_default());
    let _ = writeln!(out, "pub const FEATURES: &[&str] = &{:?};", config.features);
    let _ = writeln!(out, "pub const ADDRESS: &str = \\"{}:{}\\";", config.server.host, config.server.port);
    let _ = writeln!(out, "pub const WORKERS: u32 = {};", config.server.workers.unwrap_or(1));
    let _ = writeln!(out, "pub const TLS: bool = {};", config.server.tls);
    for (key, value) in &config.limits {
        let _ = writeln!(out, "pub const {}: u64 = {value};", key.to_uppercase());
    }
    let _ = writeln!(out, "/// (id, layers, hidden, KV bytes per token, tags, draft KV bytes per token)");
    let _ = writeln!(out, "pub const MODELS: &[(&str, u32, u64, u64, &[&str], u64)] = &[");
    for m in &config.models {
        let kv = |layers: u32, dtype: Dtype| 2 * u64::from(layers) * m.kv_heads * m.head_dim * dtype.bytes();
        let draft = m.draft.as_ref().map_or(0, |d| kv(d.layers, d.dtype));
        let _ = writeln!(
            out,
            "    ({:?}, {}, {}, {}, &{:?}, {draft}),",
            m.id, m.layers, m.hidden, kv(m.layers, m.dtype), m.tags
        );
    }
    let _ = writeln!(out, "];");
    let path = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("config.rs");
    std::fs::write(path, out).expect("write config.rs");
}
"""


def toml_crate(path: pathlib.Path, extra: str) -> None:
    """Crate (b): a build script that parses TOML with serde derive, the common case."""
    write(path / "Cargo.toml", """[package]
name = "build-time-toml"
version = "0.0.0"
edition = "2024"
publish = false

# Its own workspace: nothing of the metrale workspace (lock, profiles, target) applies.
[workspace]

[build-dependencies]
# The workspace's requirements: toml "1.2", and serde "1" (its derive as a user writes it).
serde = { version = "1", features = ["derive"] }
toml = "1.2"
""" + extra)
    write(path / "config.toml", CONFIG_TOML)
    write(path / "build.rs", TOML_BUILD_RS)
    write(path / "src" / "lib.rs", """//! The constants of config.toml.
include!(concat!(env!("OUT_DIR"), "/config.rs"));
""")


def write(path: pathlib.Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def cargo_env(target: pathlib.Path) -> dict:
    env = dict(os.environ)
    env["CARGO_TARGET_DIR"] = str(target)
    for wrapper in ("RUSTC_WRAPPER", "CARGO_BUILD_RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER",
                    "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER"):
        env.pop(wrapper, None)
    return env


def resolve(crate: pathlib.Path, target: pathlib.Path) -> dict:
    """Writes the crate's Cargo.lock (offline first) and fetches what it names; returns the
    resolved versions of the watched crates."""
    env = cargo_env(target)
    lock = ["cargo", "generate-lockfile", "--quiet", "--manifest-path", str(crate / "Cargo.toml")]
    if subprocess.run(lock + ["--offline"], env=env, stderr=subprocess.DEVNULL).returncode != 0:
        print(f"  {crate.name}: offline resolution failed, resolving online", file=sys.stderr)
        if subprocess.run(lock, env=env).returncode != 0:
            fail(f"cannot resolve {crate}")
    fetch = ["cargo", "fetch", "--quiet", "--locked", "--manifest-path", str(crate / "Cargo.toml")]
    if subprocess.run(fetch, env=env).returncode != 0:
        fail(f"cannot fetch the dependencies of {crate}")
    text = (crate / "Cargo.lock").read_text()
    versions = {}
    package = r'\[\[package\]\]\nname = "([^"]+)"\nversion = "([^"]+)"'
    for name, version in re.findall(package, text):
        if name in WATCHED:
            versions.setdefault(name, []).append(version)
    return versions


def build(crate: pathlib.Path, target: pathlib.Path, jobs, extra=()) -> float:
    """One clean debug build of `crate`: its target folder removed, then timed."""
    shutil.rmtree(target, ignore_errors=True)
    command = ["cargo", "build", "--frozen", "--quiet", "--manifest-path",
               str(crate / "Cargo.toml"), *extra]
    if jobs:
        command += ["--jobs", str(jobs)]
    start = time.perf_counter()
    done = subprocess.run(command, env=cargo_env(target), cwd=crate)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        fail(f"cargo build of {crate} failed")
    return elapsed


def timings(crate: pathlib.Path, target: pathlib.Path, jobs, top: int) -> None:
    """One more clean build of `crate` with --timings; prints its slowest units."""
    build(crate, target, jobs, ["--timings"])
    reports = sorted((target / "cargo-timings").glob("cargo-timing-*.html"))
    if not reports:
        fail("cargo build --timings wrote no report")
    html = reports[-1].read_text()
    found = re.search(r"const UNIT_DATA = (\[.*?\]);\n", html, re.S)
    if not found:
        fail(f"no unit data in {reports[-1]}")
    units = json.loads(found.group(1))
    total = sum(u["duration"] for u in units)
    print(f"\n--timings of ({crate.name}): {len(units)} units, {total:.1f} s of compilation "
          f"in all; the {top} slowest (report: {reports[-1].relative_to(ROOT)}):")
    for unit in sorted(units, key=lambda u: u["duration"], reverse=True)[:top]:
        what = unit.get("target", "").strip()
        features = ",".join(unit.get("features") or [])
        sections = unit.get("sections") or []
        split = ", ".join(f"{name} {span['end'] - span['start']:.2f} s" for name, span in sections)
        print(f"  {unit['duration']:6.2f} s  {unit['name']} {unit['version']}"
              f"{' ' + what if what else ''} [{features}]" + (f" ({split})" if split else ""))


def others_compiling() -> int:
    """How many rustc processes run now (none of ours: nothing of this script runs yet)."""
    try:
        out = subprocess.run(["pgrep", "-c", "rustc"], capture_output=True, text=True)
    except FileNotFoundError:
        return 0
    return int(out.stdout.strip() or 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="clean builds of each crate (3)")
    parser.add_argument("--jobs", type=int,
                        help="cargo's --jobs (else CARGO_BUILD_JOBS, else cargo's default)")
    parser.add_argument("--timings", action="store_true",
                        help="also list the slowest units of each build")
    parser.add_argument("--top", type=int, default=8, help="units listed by --timings (8)")
    parser.add_argument("--manifest", default="", help="TOML appended to both manifests")
    args = parser.parse_args()
    if args.runs < 1 or (args.jobs is not None and args.jobs < 1) or args.top < 1:
        fail("--runs, --jobs and --top take positive numbers")

    busy = others_compiling()
    if busy:
        print(f"warning: {busy} rustc process(es) already running: the times will be slower "
              "than on an idle machine", file=sys.stderr)

    crates = {"a": WORK / "user", "b": WORK / "toml"}
    targets = {key: WORK / f"{crate.name}-target" for key, crate in crates.items()}
    extra = f"\n{args.manifest}\n" if args.manifest else ""
    if extra:
        print(f"appended to both manifests:\n{args.manifest}\n")
    user_crate(crates["a"], extra)
    toml_crate(crates["b"], extra)
    versions = {key: resolve(crate, targets[key]) for key, crate in crates.items()}

    jobs = args.jobs or os.environ.get("CARGO_BUILD_JOBS") or "cargo's default"
    print(f"clean debug builds, {args.runs} of each in turn, jobs: {jobs}")
    times = {"a": [], "b": []}
    for run in range(args.runs):
        for key in ("a", "b"):
            elapsed = build(crates[key], targets[key], args.jobs)
            times[key].append(elapsed)
            print(f"  run {run + 1}: ({key}) {crates[key].name:<5} {elapsed:6.2f} s", flush=True)

    labels = {
        "a": "(a) user: build.rs runs metrale_codegen::Builder on circuits/llama.toml",
        "b": "(b) toml: build.rs parses a TOML file with serde derive + toml",
    }
    print()
    for key in ("a", "b"):
        runs = ", ".join(f"{t:.2f}" for t in times[key])
        print(f"{labels[key]}\n    best {min(times[key]):.2f} s  (runs: {runs})")
        pinned = ", ".join(f"{n} {'/'.join(v)}" for n, v in sorted(versions[key].items()))
        print(f"    locked (every feature's crates, built or not): {pinned}")
    ratio = min(times["a"]) / min(times["b"])
    print(f"\nratio a/b: {ratio:.2f}x  (issue 29's target: at most 1.00x)")
    if args.timings:
        for key in ("a", "b"):
            timings(crates[key], targets[key], args.jobs, args.top)


if __name__ == "__main__":
    main()
