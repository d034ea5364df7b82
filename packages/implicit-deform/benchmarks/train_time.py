"""Training wall time per pair and per iteration: the method (velocity, SDF and fine-tune stages) against the
LipMLP space-time SDF baseline at equal width and depth, on the twisted bar, measured in one run.

    python benchmarks/train_time.py --out results/implicit-deform-bench [--preset repro]

The two sides alternate (``iclr25.utils.bench.compare``) after one warm-up fit each, which is left out. The
per-pair times are the medians over ``--repeats`` fits and include everything (pools, compile cache warm); the
per-iteration times are the medians, over the same fits, of each stage's time divided by its iteration count
(0.6 took them from one extra fit: issue 65).
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
    t_start = time.perf_counter()
    cfg = DeformConfig.preset(args.preset)
    pair = make_pair("bar", "twist", n_points=20000, mesh_resolution=64)
    sdf0, sdf1 = pair.sdf_function(0.0), pair.sdf_function(1.0)

    per_iter: dict[str, list[float]] = {"velocity": [], "sdf": [], "lip": []}  # one entry per call, warm-up first

    def ours():
        res = fit(pair, config=cfg, show_progress=False)
        per_iter["velocity"].append(res.timings["velocity_s"] / cfg.velocity_iters)
        per_iter["sdf"].append(res.timings["sdf_s"] / cfg.sdf_iters)
        return res

    def lip():
        res = fit_lipmlp(pair.source_points, pair.target_points, sdf0, sdf1, width=cfg.sdf_width,
                         depth=cfg.sdf_depth, iters=args.lip_iters, show_progress=False)
        per_iter["lip"].append(res.train_s / args.lip_iters)
        return res

    warmup = 1
    per_pair = bench.compare(ours, lip, names=(f"ours per pair ({cfg.total_iters} it)",
                                               f"LipMLP per pair ({args.lip_iters} it)"), warmup=warmup,
                             repeats=args.repeats)
    rows = [per_pair,
            bench.Measurement("ours velocity stage per iteration", tuple(per_iter["velocity"][warmup:])),
            bench.Measurement("ours SDF stage per iteration", tuple(per_iter["sdf"][warmup:])),
            bench.Measurement("LipMLP per iteration", tuple(per_iter["lip"][warmup:]))]
    print(bench.format_table(rows))
    args.out.mkdir(parents=True, exist_ok=True)
    bench.to_run_result("iclr25-implicit-deform", rows, t0=t_start,
                        config={"preset": args.preset, "lip_iters": args.lip_iters, "repeats": args.repeats,
                                "jnp": str(jnp.zeros(1).dtype)}).save(
        args.out / "train_time.json")


if __name__ == "__main__":
    main()
