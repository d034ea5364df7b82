"""Training wall time per pair and per iteration: the method (velocity, SDF and fine-tune stages) against the
LipMLP space-time SDF baseline at equal width and depth, on the twisted bar, measured in one run.

    python benchmarks/train_time.py --out results/implicit-deform-bench [--preset repro]

Per-iteration times are the medians of repeated calls of one compiled chunk of iterations (warm), so compile
time is left out; the per-pair wall time includes everything (pools, compile cache warm).
"""

from __future__ import annotations

import time

import jax.numpy as jnp

from iclr25.implicit_deform import DeformConfig, fit, make_pair
from iclr25.implicit_deform.baselines import fit_lipmlp
from iclr25.utils import bench
from iclr25.utils.bench import benchmark_parser


def main() -> None:
    p = benchmark_parser(__doc__, out="results/implicit-deform-bench", raw=True)
    p.add_argument("--preset", default="repro")
    p.add_argument("--lip-iters", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    cfg = DeformConfig.preset(args.preset)
    pair = make_pair("bar", "twist", n_points=20000, mesh_resolution=64)
    sdf0, sdf1 = pair.sdf_function(0.0), pair.sdf_function(1.0)

    def ours():
        return fit(pair, config=cfg, show_progress=False)

    def lip():
        return fit_lipmlp(pair.source_points, pair.target_points, sdf0, sdf1, width=cfg.sdf_width,
                          depth=cfg.sdf_depth, iters=args.lip_iters, show_progress=False)

    per_pair = bench.compare(ours, lip, names=(f"ours per pair ({cfg.total_iters} it)",
                                               f"LipMLP per pair ({args.lip_iters} it)"), warmup=1,
                             repeats=args.repeats)
    # per-iteration: time the stages of one more fit (warm) and divide by their iteration counts
    t0 = time.perf_counter()
    res = fit(pair, config=cfg, show_progress=False)
    wall = time.perf_counter() - t0
    lres = lip()
    rows = [per_pair,
            bench.Measurement("ours velocity stage per iteration", (res.timings["velocity_s"] / cfg.velocity_iters,)),
            bench.Measurement("ours SDF stage per iteration", (res.timings["sdf_s"] / cfg.sdf_iters,)),
            bench.Measurement("LipMLP per iteration", (lres.train_s / args.lip_iters,)),
            bench.Measurement("ours whole fit (one more run)", (wall,))]
    print(bench.format_table(rows))
    args.out.mkdir(parents=True, exist_ok=True)
    bench.to_run_result("iclr25-implicit-deform", rows, config={"preset": args.preset, "lip_iters": args.lip_iters,
                                                                "jnp": str(jnp.zeros(1).dtype)}).save(
        args.out / "train_time.json")


if __name__ == "__main__":
    main()
