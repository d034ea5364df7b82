"""Profile ONE half-step (all n row regressions) of the sketched and the exact solver, BLAS on one thread.

    python benchmarks/profile_halfstep.py [--n 4000] [--k 128] [--solvers sketch exact] [--top 12] [--out DIR]

Prints the wall time of each solver's half-step and, for each, the functions with the largest own time
(cProfile ``tottime``): the numbers the README's "before / after" hot-spot table comes from.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from iclr25.weighted_lowrank import planted
from iclr25.weighted_lowrank.regression import SolverConfig, solve_rows
from iclr25.weighted_lowrank.weights import as_weighted_matrix


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--k", type=int, default=128)
    ap.add_argument("--solvers", nargs="+", default=["sketch", "exact"])
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None, help="also write the report to DIR/profile_halfstep.txt")
    args = ap.parse_args()
    report = io.StringIO()
    prob = planted(args.n, args.n, args.k, noise=1e-3, seed=0)
    A = as_weighted_matrix(prob.M, prob.W)
    rng = np.random.default_rng(1)
    Y = np.linalg.qr(prob.V + 1e-3 * rng.standard_normal(prob.V.shape))[0]
    for solver in args.solvers:
        cfg = SolverConfig(solver)
        prof = cProfile.Profile()
        with threadpool_limits(args.threads, user_api="blas"):
            t0 = time.perf_counter()
            prof.enable()
            res = solve_rows(A, Y, cfg, np.random.default_rng(2))
            prof.disable()
            wall = time.perf_counter() - t0
        head = (f"\n== {solver}: n=d={args.n}, k={args.k}, {args.threads} BLAS thread(s): one half-step {wall:.2f} s, "
                f"steps {res.steps}")
        stats = io.StringIO()
        pstats.Stats(prof, stream=stats).sort_stats("tottime").print_stats(args.top)
        print(head + "\n" + stats.getvalue(), flush=True)
        report.write(head + "\n" + stats.getvalue())
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "profile_halfstep.txt").write_text(report.getvalue())


if __name__ == "__main__":
    main()
