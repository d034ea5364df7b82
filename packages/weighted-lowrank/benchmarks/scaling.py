"""Time of one half-step (all n row regressions) against k at n = d: sketch-and-precondition vs exact LLR16.

    python benchmarks/scaling.py --out results/bench-scaling [--n 4000] [--ks 16 32 64 128]

The two solvers are timed alternately (``iclr25.utils.bench.compare``) on the same weights and factor, with
the flop model of ``iclr25.weighted_lowrank.costmodel`` printed beside the times.
"""

from __future__ import annotations

import numpy as np

from iclr25.utils.bench import benchmark_parser, compare, format_table, to_run_result
from iclr25.weighted_lowrank import planted
from iclr25.weighted_lowrank.costmodel import half_step_flops
from iclr25.weighted_lowrank.experiments import loglog_slope
from iclr25.weighted_lowrank.regression import SolverConfig, solve_rows
from iclr25.weighted_lowrank.weights import as_weighted_matrix


def main() -> None:
    ap = benchmark_parser(__doc__, out="results/bench-scaling", raw=True)
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--ks", type=int, nargs="+", default=[16, 32, 64, 128])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tol", type=float, default=1e-6)
    args = ap.parse_args()
    rows, lines, t_exact, t_sketch = [], [], [], []
    for k in args.ks:
        prob = planted(args.n, args.n, k, noise=1e-3, seed=0)
        A = as_weighted_matrix(prob.M, prob.W)
        rng = np.random.default_rng(1)
        # a factor one round away from the truth, as in the middle of a run
        Y = np.linalg.qr(prob.V + 1e-3 * rng.standard_normal(prob.V.shape))[0]
        sk = SolverConfig("sketch", tol=args.tol)
        ex = SolverConfig("exact")
        steps = solve_rows(A, Y, sk, rng).steps
        c = compare(lambda A=A, Y=Y, sk=sk, rng=rng: solve_rows(A, Y, sk, rng),
                    lambda A=A, Y=Y, ex=ex, rng=rng: solve_rows(A, Y, ex, rng),
                    names=(f"sketch k={k}", f"exact k={k}"), warmup=0, repeats=args.repeats)
        rows.append(c)
        t_sketch.append(c.ours.median)
        t_exact.append(c.peer.median)
        fe = half_step_flops(args.n, args.n, k, solver="exact") / 1e9
        fs = half_step_flops(args.n, args.n, k, solver="sketch", steps=steps) / 1e9
        lines.append(f"| {k} | {c.ours.median:.3f} | {c.peer.median:.3f} | {c.speedup:.2f}× | {fs:.1f} | {fe:.1f} | "
                     f"{fe / fs:.2f}× | {steps} |")
    print(format_table(rows))
    print(f"| k (n=d={args.n}) | sketch s | exact s | speed-up | GFLOP sketch | GFLOP exact | flop ratio | steps |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(lines))
    if len(args.ks) > 1:
        print(f"\nlog-log slope in k: sketch {loglog_slope(args.ks, t_sketch):.2f}, "
              f"exact {loglog_slope(args.ks, t_exact):.2f}")
    run = to_run_result("iclr25-weighted-lowrank", rows, command="bench-scaling",
                        config={"n": args.n, "ks": args.ks, "tol": args.tol})
    run.save(args.out / "results.json")


if __name__ == "__main__":
    main()
