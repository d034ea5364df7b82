"""The ladder behind the sketched solver's defaults: sketch size s and tolerance ε₀ of one half-step.

    python benchmarks/defaults_ladder.py [--n 4000] [--k 128] [--sizes 2 4 8] [--tols 1e-4 1e-6 1e-8] [--out DIR]

For each ``s = c·k`` and ``tol`` one sketched half-step (dense W, factor near the truth, BLAS on one thread) is
timed, with its CG steps and its distance to the exact solution ``‖X - X_exact‖_F / ‖X_exact‖_F``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
from halfstep_table import problem  # noqa: E402

from iclr25.weighted_lowrank.regression import SolverConfig, solve_exact, solve_sketch  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--k", type=int, default=128)
    ap.add_argument("--sizes", type=int, nargs="+", default=[2, 4, 8])
    ap.add_argument("--tols", type=float, nargs="+", default=[1e-4, 1e-6, 1e-8])
    ap.add_argument("--weights", choices=["dense", "sparse"], default="dense")
    ap.add_argument("--out", type=Path, default=None, help="also write the table to DIR/defaults_ladder.md")
    args = ap.parse_args()
    lines: list[str] = []

    def emit(line: str) -> None:
        lines.append(line)
        print(line, flush=True)

    A, F = problem(args.n, args.k, args.weights, 0.05)
    with threadpool_limits(1, user_api="blas"):
        ref = solve_exact(A, F).X
        emit(f"| s | tol | sketch s | steps | ‖X − X_exact‖ / ‖X_exact‖ |  (n=d={args.n}, k={args.k}, {args.weights})")
        emit("|---|---|---|---|---|")
        for c in args.sizes:
            for tol in args.tols:
                cfg = SolverConfig("sketch", sketch_size=c * args.k, tol=tol)
                t0 = time.perf_counter()
                res = solve_sketch(A, F, cfg, np.random.default_rng(1))
                sec = time.perf_counter() - t0
                dev = np.linalg.norm(res.X - ref) / np.linalg.norm(ref)
                emit(f"| {c}k | {tol:g} | {sec:.2f} | {res.steps} | {dev:.1e} |")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "defaults_ladder.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
