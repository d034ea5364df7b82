"""Training time per pair and per iteration: the method (velocity, SDF and fine-tune stages) against the LipMLP
space-time SDF baseline at equal width and depth, on the twisted bar, measured in one run, with the Chamfer
distance each reaches.

    python benchmarks/train_time.py --out benchmarks [--preset repro] [--lip-iters 1000] [--repeats 3]
        [--ladder 3000 10000]

The two sides alternate (``iclr25.utils.bench.compare``) after one warm-up fit each, which is left out. The
per-pair times are the medians over ``--repeats`` fits and include everything a fit does (pools; the compiled
programs are warm); the per-iteration times are the medians, over the same fits, of each stage's time divided by
its iteration count. After the timed fits, the last fit of each side is meshed at t = 0.5 (64^3) and its Chamfer
distance to the exact intermediate shape (5,000 points each) is recorded: at the repro budgets LipMLP underfits,
so the ``--ladder`` fits LipMLP once more at each larger budget (timed, one fit each) to show the time it needs to
approach our Chamfer distance.

Writes ``OUT/train_time.json`` (``iclr25.utils.bench.speed_record`` + ``write_record``: machine, BLAS kernel, load,
date, command); the README's speed block is generated from it by ``make speed-tables``.
"""

from __future__ import annotations

import os
import statistics
import sys

import jax.numpy as jnp

from iclr25.implicit_deform import DeformConfig, chamfer, fit, make_pair
from iclr25.implicit_deform.baselines import fit_lipmlp
from iclr25.implicit_deform.metrics import sample_mesh
from iclr25.utils import bench
from iclr25.utils.bench import benchmark_parser, speed_record, speed_table, write_record

T_EVAL, RES, N_EVAL = 0.5, 64, 5000


def main() -> None:
    p = benchmark_parser(__doc__, out="results/implicit-deform-bench", raw=True)
    p.add_argument("--preset", default="repro")
    p.add_argument("--lip-iters", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--ladder", type=int, nargs="*", default=[3000, 10000],
                   help="larger LipMLP budgets, one timed fit each (default 3000 10000)")
    args = p.parse_args()
    load_start = os.getloadavg()[0]
    cfg = DeformConfig.preset(args.preset)
    pair = make_pair("bar", "twist", n_points=20000, mesh_resolution=64)
    sdf0, sdf1 = pair.sdf_function(0.0), pair.sdf_function(1.0)
    gt, _ = pair.gt_points(T_EVAL, N_EVAL)

    per_iter: dict[str, list[float]] = {"velocity": [], "sdf": [], "lip": []}  # one entry per call, warm-up first
    last: dict[str, object] = {}

    def ours():
        res = fit(pair, config=cfg, show_progress=False)
        per_iter["velocity"].append(res.timings["velocity_s"] / cfg.velocity_iters)
        per_iter["sdf"].append(res.timings["sdf_s"] / cfg.sdf_iters)
        last["ours"] = res
        return res

    def lip_fit(iters: int):
        return fit_lipmlp(pair.source_points, pair.target_points, sdf0, sdf1, width=cfg.sdf_width,
                          depth=cfg.sdf_depth, iters=iters, show_progress=False)

    def lip():
        res = lip_fit(args.lip_iters)
        per_iter["lip"].append(res.train_s / args.lip_iters)
        last["lip"] = res
        return res

    def cd(res) -> float | None:
        """Chamfer at T_EVAL to the exact shape; None (strict JSON) when the fit has no zero level set there."""
        pts = sample_mesh(res.mesh(T_EVAL, resolution=RES), N_EVAL)[0]
        return chamfer(pts, gt) if len(pts) else None

    def fmt(x: float | None) -> str:
        return "no surface" if x is None else f"{x:.4f}"

    warmup = 1
    cmp = bench.compare(ours, lip, names=("ours", "LipMLP"), warmup=warmup, repeats=args.repeats)
    med = {k: statistics.median(v[warmup:]) for k, v in per_iter.items()}
    cd_ours, cd_lip = cd(last["ours"]), cd(last["lip"])
    ladder = [{"iters": args.lip_iters, "train_s": med["lip"] * args.lip_iters, "chamfer": cd_lip}]
    for iters in args.ladder:
        res = lip_fit(iters)
        ladder.append({"iters": iters, "train_s": res.train_s, "chamfer": cd(res)})
    reached = [r for r in ladder if cd_ours is not None and r["chamfer"] is not None and r["chamfer"] <= cd_ours]
    rows = [
        {"case": f"one pair ({cfg.total_iters} / {args.lip_iters} iterations; Chamfer at t = {T_EVAL}: "
                 f"{fmt(cd_ours)} / {fmt(cd_lip)})",
         "ours": f"ours ({args.preset})", "ours_s": cmp.ours.median, "peer": "LipMLP", "peer_s": cmp.peer.median,
         "ours_times": list(cmp.ours.times), "peer_times": list(cmp.peer.times),
         "chamfer_ours": cd_ours, "chamfer_peer": cd_lip},
        {"case": "one SDF-stage iteration", "ours": "ours, SDF stage", "ours_s": med["sdf"],
         "peer": "LipMLP", "peer_s": med["lip"]},
    ]
    lad_txt = "; ".join(f"{r['iters']}: {r['train_s']:.3g} s, {fmt(r['chamfer'])}" for r in ladder)
    note = (f"Wall time; {args.preset} preset, {cfg.sdf_width} x {cfg.sdf_depth} networks; Chamfer of the {RES}^3 mesh. "
            f"LipMLP ladder (iterations: train time, Chamfer): {lad_txt}; "
            + (f"it reaches ours at {reached[0]['iters']}." if reached else
               f"it does not reach ours by {ladder[-1]['iters']}."))
    record = speed_record(rows, command="python benchmarks/train_time.py " + " ".join(sys.argv[1:]),
                          repeats=args.repeats, note=note)
    record["config"] = {"preset": args.preset, "lip_iters": args.lip_iters, "jnp": str(jnp.zeros(1).dtype),
                        "xla_flags": os.environ.get("XLA_FLAGS", ""), "omp": os.environ.get("OMP_NUM_THREADS")}
    record["per_iteration_times"] = {k: v[warmup:] for k, v in per_iter.items()}  # the velocity stage's too
    record["per_iteration_medians"] = med
    record["lipmlp_ladder"] = ladder
    path = write_record(args.out / "train_time.json", record, load_start=load_start)
    print(speed_table({**record, "load_start": load_start, "load_end": os.getloadavg()[0], "date": "now"}))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
