#!/usr/bin/env python3
"""Compares every zoo plan of this checkout with another commit's, byte for byte.

Builds the CLI of REV in a scratch worktree (target/plans-against/<rev>, its own target
directory) and of this checkout, then runs `metrale-codegen plan <circuit> --checkpoint <name>
--json` with each built-in inputs file (the default counts, and the serving profile) under both
binaries for every checkpoint of every circuit in `circuits/` that REV also has, each binary
reading its own checkout's files (a circuit rewritten in a newer schema must plan the same
bytes), and prints each plan that differs. A change that must not move a plan (a new schema key,
a second layout policy, a pattern now derived by rule) shows here as "0 differ". Fields REV does
not print (a term's `shape`, added since) are left out of the comparison: what both print must
be equal, and an error must be the same error.

Exit 0 when every plan is byte-identical, 1 when one differs or a build fails.

    python3 scripts/plans_against.py adf72e8
"""

import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
INPUTS = [[], ["--inputs", "metrale-codegen/cli/inputs/serving.toml"]]


def build(checkout: pathlib.Path, target: pathlib.Path) -> pathlib.Path:
    """The CLI binary built (debug) in `checkout` with target directory `target`."""
    subprocess.run(
        ["cargo", "build", "-q", "-p", "metrale-cli", "--target-dir", str(target)],
        cwd=checkout, check=True,
    )
    return target / "debug" / "metrale-codegen"


def checkpoints(circuit: pathlib.Path) -> list[str]:
    """The checkpoint names a circuit declares, in file order."""
    return re.findall(r"^\[checkpoint\.([a-z0-9_]+)\]", circuit.read_text(), re.M)


def plan(binary: pathlib.Path, checkout: pathlib.Path, circuit: str, checkpoint: str,
         inputs: list[str]) -> bytes:
    """What `plan --json` prints in `checkout` (stdout and stderr: an error must match too)."""
    done = subprocess.run(
        [str(binary), "plan", circuit, "--checkpoint", checkpoint, "--json", *inputs],
        cwd=checkout, capture_output=True,
    )
    return done.stdout + done.stderr


def common(was: bytes, now: bytes) -> bool:
    """Whether two outputs agree on what both print: as JSON, every key of the older output,
    recursively (lists element by element); otherwise (an error) byte for byte."""
    try:
        old, new = json.loads(was), json.loads(now)
    except ValueError:
        return was == now

    def within(a, b) -> bool:
        if isinstance(a, dict):
            return isinstance(b, dict) and all(k in b and within(v, b[k]) for k, v in a.items())
        if isinstance(a, list):
            return isinstance(b, list) and len(a) == len(b) and all(map(within, a, b))
        return a == b

    return within(old, new)


def main() -> int:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rev = sys.argv[1]
    scratch = ROOT / "target" / "plans-against" / rev
    if not scratch.exists():
        subprocess.run(["git", "worktree", "add", "--detach", str(scratch), rev],
                       cwd=ROOT, check=True, capture_output=True)
    try:
        before = build(scratch, ROOT / "target" / "plans-against" / f"{rev}-target")
        now = build(ROOT, ROOT / "target")
    except subprocess.CalledProcessError as error:
        print(f"build failed: {error}", file=sys.stderr)
        return 1
    compared = differ = 0
    for circuit in sorted((ROOT / "circuits").glob("*.toml")):
        if not (scratch / "circuits" / circuit.name).exists():
            continue
        name = f"circuits/{circuit.name}"
        # The checkpoints both checkouts have (a checkpoint added since is not compared).
        old = set(checkpoints(scratch / "circuits" / circuit.name))
        for checkpoint in (c for c in checkpoints(circuit) if c in old):
            for inputs in INPUTS:
                compared += 1
                was = plan(before, scratch, name, checkpoint, inputs)
                if not common(was, plan(now, ROOT, name, checkpoint, inputs)):
                    differ += 1
                    print(f"differs: {name} {checkpoint} {' '.join(inputs) or '(default inputs)'}")
    print(f"{compared} plans compared against {rev}, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
