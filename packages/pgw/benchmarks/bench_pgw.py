"""Side-by-side timings against POT (never part of the default test run).

    python benchmarks/bench_pgw.py --out results/pgw-bench [--sizes 100 300 500] [--repeats 3]

1. Exact PGW (fw-v1 and fw-v2) against POT's mass-constrained partial GW per pair, n and m = n + 10
   uniform points in the unit square, mass 1/m per point, lam = max C^2 / 5 (the paper's run-time setup).
2. The JAX entropic ``pgw_pairwise`` (compiled once) against a loop of POT's entropic partial GW over the
   same pairs with the same absolute regularisation.

Both come from :mod:`iclr25.pgw.benchmarking`, which ``iclr25 pgw repro`` uses too.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from iclr25.pgw.benchmarking import entropic_vs_pot, exact_vs_mpgw
from iclr25.utils.bench import Comparison, Measurement, format_table, to_run_result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("results/pgw-bench"))
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 500])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows: list[Comparison | Measurement] = list(
        exact_vs_mpgw(args.sizes, methods=("fw-v1", "fw-v2"), seed=args.seed, warmup=1, repeats=args.repeats))
    rows.append(entropic_vs_pot(seed=args.seed)[0])
    print(format_table(rows))
    args.out.mkdir(parents=True, exist_ok=True)
    run = to_run_result("iclr25-pgw", rows, command="bench", config=vars(args) | {"out": str(args.out)},
                        seed=args.seed)
    run.save(args.out / "bench.json")
    print(f"wrote {args.out / 'bench.json'} in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
