"""MIS ladder: rkl_rl over training epochs, PPO passes per collected batch and GNN aggregation, beside
min-degree greedy and the no-model decode (CE decoding of all-zeros). The numbers behind the default
``SamplerConfig.ppo_epochs`` and ``aggregation`` (README, "MIS ladder").

    python benchmarks/mis_ladder.py --out results/sdds-mis-ladder [--runs 300:1:sum 300:4:sum ...]

Each run is EPOCHS:PPO_PASSES:AGGREGATION; every run trains on the same graphs and samples per epoch
(4 graphs x 8 samples), so runs with equal EPOCHS are at equal samples.
"""

from __future__ import annotations

import json
import time

from iclr25.sdds.objectives import train
from iclr25.sdds.repro import mis_config, mis_evaluate, mis_problem
from iclr25.utils.bench import benchmark_parser
from iclr25.utils.io import atomic_write
from iclr25.utils.seeding import jax_key

DEFAULT_RUNS = ("100:4:sum", "200:4:sum", "300:4:sum", "300:1:sum", "300:2:sum", "300:8:sum", "300:4:mean")


def main() -> None:
    p = benchmark_parser(__doc__, out="results/sdds-mis-ladder", raw=True)
    p.add_argument("--runs", nargs="+", default=list(DEFAULT_RUNS))
    p.add_argument("--n-train", type=int, default=100)
    p.add_argument("--n-test", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    runs = []
    for r in args.runs:
        try:
            ep, ppo, agg = r.split(":")
            runs.append((int(ep), int(ppo), agg))
        except ValueError:
            p.error(f"--runs: expected EPOCHS:PPO_PASSES:AGGREGATION such as 300:4:sum, got {r!r}")
    e_train, e_test, opt, greedy, plain = mis_problem(args.n_train, args.n_test, (50, 100), seed=args.seed)
    rows = [{"method": "min-degree greedy", "mean": float((greedy / opt).mean())},
            {"method": "no model (CE of all-zeros)", "mean": float((plain / opt).mean())}]
    print(rows, flush=True)
    for ep, ppo, agg in runs:
        cfg = mis_config("rkl_rl", 8, ep, ppo_epochs=ppo, aggregation=agg)
        t0 = time.perf_counter()
        sampler = train(cfg, e_train, jax_key(args.seed), show_progress=False)
        t = time.perf_counter() - t0
        mean, best = mis_evaluate(sampler, e_test, opt, seed=args.seed)
        rows.append({"method": f"rkl_rl T=8 {agg}", "epochs": ep, "ppo_epochs": ppo, "mean": mean, "best_of_8": best,
                     "train_s": t})
        print(rows[-1], flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out / "mis_ladder.json") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
