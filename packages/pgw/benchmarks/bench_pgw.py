"""Side-by-side timings against POT (never part of the default test run).

    python benchmarks/bench_pgw.py --out results/pgw-bench [--sizes 100 300 500] [--repeats 3]

1. Exact PGW (fw-v1 and fw-v2) against POT's mass-constrained partial GW per pair, n and m = n + 10
   uniform points in the unit square, mass 1/m per point, lam = max C^2 / 5 (the paper's run-time setup).
2. The JAX entropic ``pgw_pairwise`` (compiled once) against a loop of POT's entropic partial GW over the
   same pairs with the same absolute regularisation.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import ot

from iclr25.pgw import default_lam, mm_space, pgw, pgw_pairwise
from iclr25.pgw.entropic import _cost_scale
from iclr25.utils.bench import Comparison, Measurement, compare, format_table, to_run_result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("results/pgw-bench"))
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 500])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    rows: list[Comparison | Measurement] = []
    for n in args.sizes:
        a = mm_space(rng.uniform(size=(n, 2)), mass=1.0 / (n + 10))
        b = mm_space(rng.uniform(size=(n + 10, 2)), mass=1.0 / (n + 10))
        lam = default_lam([a, b])
        m = min(a.mass, b.mass)
        for method in ("fw-v1", "fw-v2"):
            rows.append(compare(lambda a=a, b=b, lam=lam, method=method: pgw(a.C, b.C, a.p, b.p, lam, method=method),
                                lambda a=a, b=b, m=m: ot.gromov.partial_gromov_wasserstein(a.C, b.C, a.p, b.p, m=m,
                                                                            numItermax=1_000_000),
                                names=(f"PGW {method} n={n}", f"POT MPGW n={n}"), warmup=1, repeats=args.repeats))
    spaces = [mm_space(rng.uniform(size=(30, 2)), mass=1 / 30) for _ in range(4)]
    lam = default_lam(spaces)
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]

    def pot_loop() -> None:
        for i, j in pairs:
            a, b = spaces[i], spaces[j]
            reg = float(1e-3 * _cost_scale(a.C[None], b.C[None], a.p[None], b.p[None], np.array([lam]))[0])
            ot.gromov.entropic_partial_gromov_wasserstein2(a.C, b.C, a.p, b.p, reg=reg, m=min(a.mass, b.mass))

    pgw_pairwise(spaces, lam, method="entropic")  # compile
    t0 = time.perf_counter()
    rows.append(compare(lambda: pgw_pairwise(spaces, lam, method="entropic"), pot_loop,
                        names=("JAX entropic pgw_pairwise, 6 pairs", "POT entropic partial GW loop"),
                        warmup=0, repeats=1))
    print(format_table(rows))
    args.out.mkdir(parents=True, exist_ok=True)
    run = to_run_result("iclr25-pgw", rows, command="bench", config=vars(args) | {"out": str(args.out)},
                        seed=args.seed)
    run.save(args.out / "bench.json")
    print(f"wrote {args.out / 'bench.json'} in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
