#!/usr/bin/env python3
"""Prints the ratios BENCHMARKS.md states, from the estimates criterion wrote in one run of
`cargo bench -p metrale-tests --bench plan` (target/criterion/<group>/<id>/new/estimates.json).

Exits 1 when an estimate is missing; prints each target and whether the run met it."""

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CRITERION = ROOT / "target" / "criterion"


def mean_ns(bench_id: str) -> float:
    path = CRITERION.joinpath(*bench_id.split("/"), "new", "estimates.json")
    try:
        estimates = json.loads(path.read_text())
        # Criterion reports the slope of its linear sampling where it has one, else the mean.
        return (estimates.get("slope") or estimates["mean"])["point_estimate"]
    except (OSError, KeyError, ValueError) as error:
        sys.exit(f"no estimate for {bench_id} ({path}): {error}; run the bench first")


def human(ns: float) -> str:
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.2f} {unit}"
    return f"{ns:.0f} ns"


def main() -> None:
    generated = mean_ns("plan/generated")
    dynamic = mean_ns("plan/dynamic")
    dynamic_load = mean_ns("plan/dynamic_load")
    rank = mean_ns("plan/generated_rank")
    copy = mean_ns("plan/copy")
    store = mean_ns("plan/store")
    print(f"plan/generated     {human(generated)}")
    print(f"plan/generated_rank {human(rank)}   (for_rank, tp 4 x pp 2; "
          f"{rank / generated:.2f}x plan/generated)")
    print(f"plan/copy          {human(copy)}   (the plan's 21 KB copied, nothing computed)")
    print(f"plan/store         {human(store)}   (as many regions stored from one value)")
    print(f"plan/dynamic       {human(dynamic)}")
    print(f"plan/dynamic_load  {human(dynamic_load)}")
    print(f"generated / copy   {generated / copy:.1f}, generated / store {generated / store:.1f}")
    print(f"the budget 50x leaves: {dynamic / 50 / store:.1f}x plan/store; "
          f"1000x leaves: {dynamic_load / 1000 / store:.1f}x plan/store")
    rows = [
        ("dynamic / generated", dynamic / generated, ">= 50", dynamic / generated >= 50),
        ("dynamic_load / generated", dynamic_load / generated, ">= 1000",
         dynamic_load / generated >= 1000),
    ]
    circuits = sorted(p.name for p in (CRITERION / "codegen").iterdir()
                      if p.is_dir() and p.name not in ("synthetic", "report"))
    for circuit in circuits:
        ns = mean_ns(f"codegen/{circuit}")
        print(f"codegen/{circuit:<10} {human(ns)}")
        rows.append((f"codegen/{circuit} (ms)", ns / 1e6, "< 50", ns / 1e6 < 50))
    synthetic = {n: mean_ns(f"codegen/synthetic/{n}") for n in (128, 256, 512, 1024)}
    for n, ns in synthetic.items():
        print(f"codegen/synthetic/{n:<5} {human(ns)}")
    growth = synthetic[1024] / synthetic[128]
    rows.append(("codegen 1024 / 128 layers", growth, "<= 10", growth <= 10))
    print()
    for name, value, target, met in rows:
        print(f"{name:<28} {value:10.1f}   target {target:<8} {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
