#!/usr/bin/env python3
"""Times this checkout's plan bench against another commit's, side by side in one run.

Builds `cargo bench -p metrale-tests --bench plan` twice: here, and in a scratch worktree of
REV (target/bench-against/<rev>, its own target directory, so nothing is shared but the
registry). Then runs the two bench binaries in turn, ROUNDS times, each on the same filter
(default `plan/generated`, which also matches `plan/generated_rank`), and prints every id's
mean per round and the ratio now / before, so a drift of the machine between rounds shows
as a spread rather than as a change.

Exit 0 whatever the ratios (a report); 1 when a build or a run fails.

    python3 scripts/bench_against.py e5324e7 [--filter plan/generated] [--rounds 3]
"""

import argparse
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def bench_binary(checkout: pathlib.Path, target: pathlib.Path) -> str:
    """The path of the plan bench's executable, built in release in `checkout`."""
    out = subprocess.run(
        ["cargo", "bench", "-p", "metrale-tests", "--bench", "plan", "--no-run",
         "--message-format=json", "--target-dir", str(target)],
        cwd=checkout, check=True, capture_output=True, text=True,
    ).stdout
    for line in out.splitlines():
        message = json.loads(line)
        if message.get("reason") == "compiler-artifact" and message["target"]["name"] == "plan" \
                and message.get("executable"):
            return message["executable"]
    sys.exit(f"no plan bench executable built in {checkout}")


def run(binary: str, filter_: str) -> dict:
    """Each bench id the filter matches and its mean time in ns, as criterion prints it."""
    out = subprocess.run(
        [binary, "--bench", filter_, "--noplot", "--warm-up-time", "1",
         "--measurement-time", "3"],
        check=True, capture_output=True, text=True,
    ).stdout
    scale = {"ps": 1e-3, "ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}
    times = {}
    for bench_id, middle, unit in re.findall(
            r"^(\S+)\s+time:\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]", out, re.MULTILINE):
        times[bench_id] = float(middle) * scale[unit]
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", help="the commit to compare with")
    parser.add_argument("--filter", default="plan/generated")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    rev = subprocess.run(["git", "rev-parse", "--short", args.rev], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()
    scratch = ROOT / "target" / "bench-against" / rev
    if not scratch.exists():
        subprocess.run(["git", "worktree", "add", "--detach", str(scratch), rev], cwd=ROOT,
                       check=True, capture_output=True)
    before = bench_binary(scratch, scratch / "target")
    now = bench_binary(ROOT, ROOT / "target")

    rows = []
    for round_ in range(1, args.rounds + 1):
        then_times = run(before, args.filter)
        now_times = run(now, args.filter)
        for bench_id in sorted(now_times):
            if bench_id in then_times:
                rows.append((round_, bench_id, then_times[bench_id], now_times[bench_id]))
    print(f"| round | id | {rev} (ns) | now (ns) | now / {rev} |")
    print("| --- | --- | --- | --- | --- |")
    for round_, bench_id, then, now_ns in rows:
        print(f"| {round_} | {bench_id} | {then:.0f} | {now_ns:.0f} | {now_ns / then:.2f} |")


if __name__ == "__main__":
    main()
