"""Cost benchmarks: (1) our vectorised Euler-Maruyama against deeptime's C++ Prinz integrator for the same
walkers and frames; (2) sampling cost per lag: one BoPITO diffusion pass (independent of N) against N frames of
MD for the same number of walkers.

    python benchmarks/cost.py --out results/bopito-bench
"""

from __future__ import annotations

import numpy as np
import torch

from iclr25.bopito import ModelConfig, ScoreModel, sample, simulate
from iclr25.utils.bench import benchmark_parser, compare, format_table, measure, to_run_result


def main() -> None:
    ap = benchmark_parser(__doc__, out="results/bopito-bench", raw=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--walkers", type=int, default=1000)
    args = ap.parse_args()
    torch.set_num_threads(1)
    from deeptime.data import prinz_potential

    peer = prinz_potential()
    x0 = np.zeros((args.walkers, 1))
    frames = 20
    rows = [compare(lambda: simulate("prinz", args.walkers, frames, x0=0.0, desc=None),
                    lambda: peer.trajectory(x0, frames, seed=1, n_jobs=1),
                    names=(f"Euler-Maruyama, {args.walkers} walkers x {frames} frames", "deeptime prinz (C++)"),
                    warmup=1, repeats=args.repeats)]
    prior = ScoreModel(ModelConfig(kind="bg"))
    bop = ScoreModel(ModelConfig(kind="bopito", max_lag=1000, lambda_hat=0.994), prior=prior)
    for lag in (100, 1000):
        rows.append(measure(lambda lag=lag: sample(bop, np.zeros(args.walkers), lag, steps=50),
                            name=f"BoPITO DDIM-50, {args.walkers} samples at lag {lag}", repeats=args.repeats))
        rows.append(measure(lambda lag=lag: simulate("prinz", args.walkers, lag, x0=0.0, desc=None),
                            name=f"MD, {args.walkers} walkers x {lag} frames", warmup=0, repeats=1))
    print(format_table(rows))
    run = to_run_result("iclr25-bopito", rows, command="bench cost", config={"walkers": args.walkers})
    args.out.mkdir(parents=True, exist_ok=True)
    run.save(args.out / "cost.json")


if __name__ == "__main__":
    main()
