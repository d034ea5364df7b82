"""Sampling throughput: the diffusion sampler (T network passes) against the autoregressive baseline
(N network passes), both drawing the same number of samples with log-probabilities, measured in one run.

    python benchmarks/sampling_throughput.py --out results/sdds-bench [--L 8] [--n-samples 4096]
"""

from __future__ import annotations

import jax

from iclr25.sdds import IsingEnergy, Sampler, SamplerConfig
from iclr25.sdds.autoregressive import MADE, AutoregressiveSampler
from iclr25.sdds.diffusion import make_model
from iclr25.utils import bench
from iclr25.utils.bench import benchmark_parser


def main() -> None:
    p = benchmark_parser(__doc__, out="results/sdds-bench", raw=True)
    p.add_argument("--L", type=int, default=8)
    p.add_argument("--n-samples", type=int, default=4096)
    p.add_argument("--n-steps", type=int, default=16)
    args = p.parse_args()
    energy = IsingEnergy(args.L)
    cfg = SamplerConfig(n_steps=args.n_steps, hidden=16, n_layers=1)
    diffusion = Sampler(make_model(cfg, energy, jax.random.key(0)), cfg, energy)
    ar = AutoregressiveSampler(MADE(energy.n_nodes, 64, key=jax.random.key(0)), energy)
    n = args.n_samples
    cmp = bench.compare(lambda: diffusion.sample(n, key=jax.random.key(1)),
                        lambda: ar.sample(n, key=jax.random.key(1)),
                        names=(f"diffusion T={args.n_steps}", "autoregressive MADE"), warmup=1, repeats=3)
    print(bench.format_table([cmp]))
    print(f"diffusion samples/s: {n / cmp.ours.median:.0f}; autoregressive samples/s: {n / cmp.peer.median:.0f}")
    args.out.mkdir(parents=True, exist_ok=True)
    bench.to_run_result("iclr25-sdds", [cmp], config=vars(args) | {"out": str(args.out)}).save(
        args.out / "sampling_throughput.json")


if __name__ == "__main__":
    main()
