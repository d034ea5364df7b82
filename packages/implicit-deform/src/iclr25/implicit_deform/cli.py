"""Command line of ``iclr25 implicit-deform``: ``demo``, ``repro``, ``fit SRC TGT [--corr C.npy]``."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iclr25.utils import cli as ucli
from iclr25.utils.device import add_device_argument
from iclr25.utils.guards import check_size
from iclr25.utils.outputs import add_output, check_output_path
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import check_seed

# JAX, trimesh and scikit-image are imported inside the commands, so that `--help` answers at once.

PACKAGE = "iclr25-implicit-deform"
PRESET_NAMES = ("test", "repro", "paper")
DESCRIPTION = """Implicit neural surface deformation with explicit velocity fields (Sang et al., ICLR 2025).

  demo                    twist a rectangular bar: the method vs the SDF blend and straight lines (< 60 s;
                          seed 0 loads the shipped fit, --train fits it again)
  repro                   reduced-scale reproduction: twisted bar + rigid pair, 3 seeds, baselines, ablations
  fit SRC TGT [--corr C]  fit your own pair; writes intermediate meshes and results.json

Shape files: meshes .ply/.obj/.off/.stl (vertices index the correspondences; surfaces are sampled with
normals) or point clouds .ply/.npy/.npz/.xyz/.txt/.csv ((n, 3) points, or (n, 6) points and normals).
Correspondences: .npy, a (k, 2) integer array of (source vertex, target vertex) pairs, or a 1-D array with one
target index per source vertex (-1 = none). Without --corr the fit is correspondence-free (Chamfer matching).
"""
DEMO_HELP = "twist a bar: the method vs the SDF blend and straight lines (< 60 s)"
REPRO_HELP = "the reduced-scale reproduction (at most 10 min)"
TRAIN_HELP = ("fit the model here (~20 s more) instead of loading the shipped seed-0 fit (other seeds "
              "always fit)")


def demo(args: argparse.Namespace) -> int:
    seed = check_seed(args.seed)
    run = RunResult.start(PACKAGE, "demo", seed=seed)
    from .demo import run_demo  # noqa: PLC0415 - keeps --help fast

    run = run_demo(args.out, seed=seed, train=args.train, run=run, device=args.device)
    print(run.to_markdown())
    return 0


def repro(args: argparse.Namespace) -> int:
    seed = check_seed(args.seed)
    run = RunResult.start(PACKAGE, "repro", seed=seed)
    from .repro import run_repro  # noqa: PLC0415 - keeps --help fast

    run = run_repro(args.out, seed=seed, quick=args.quick, run=run, device=args.device)
    print(run.to_markdown())
    if not args.quick:
        # the paper's claims decided over the repro rung's seeds (iclr25.implicit_deform.claims): claims.json
        # beside results.json, the file the README's claims table is generated from
        from iclr25.utils.device import device_scope  # noqa: PLC0415

        from .claims import REGISTRY  # noqa: PLC0415

        with device_scope(args.device):
            REGISTRY.run("repro", command="iclr25 implicit-deform repro").publish(args.out)
    return 0


def cmd_fit(args: argparse.Namespace) -> int:
    """Fit f(x, t) and v(x) to SRC -> TGT and write the meshes of f(., t) at --times (mesh_t<t>.<format>), the
    advected source vertices and results.json. Formats: see 'iclr25 implicit-deform --help'."""
    seed = check_seed(args.seed)
    run = RunResult.start(PACKAGE, "fit", seed=seed)
    times = sorted(set(ucli.number_list(args.times, "--times", lo=0.0, hi=1.0)))
    if args.resolution < 16 or args.resolution > 512:
        raise ValueError(f"--resolution must be an integer in [16, 512], got {args.resolution}")
    if args.n_points < 256:
        raise ValueError(f"--n-points must be >= 256, got {args.n_points}")
    # the names this run writes, now that --times and --format are known: a previous run's file of any of them
    # is kept unless --overwrite (run_main checked --out against the fixed names of FIT_FILES before this)
    check_output_path(args.out, flag="--out", kind="folder", overwrite=args.overwrite,
                      inputs=[p for p in (args.source, args.target, args.corr) if p is not None],
                      run_files=fit_files(times, args.format))
    import logging  # noqa: PLC0415

    from iclr25.utils.device import describe_device  # noqa: PLC0415

    logging.getLogger("trimesh").setLevel(logging.ERROR)
    from .data import load_pair  # noqa: PLC0415
    from .deform import DeformConfig, resolve_device  # noqa: PLC0415

    dev = resolve_device(args.device)  # an absent device fails here, before any work
    run.machine["device"] = describe_device(dev)

    overrides = {"integrator": args.integrator}
    if args.no_div:
        overrides["w_div"] = 0.0
    if args.iters_scale != 1.0:
        if not (math.isfinite(args.iters_scale) and args.iters_scale > 0):
            raise ValueError(f"--iters-scale must be a positive number, got {args.iters_scale}")
    config = DeformConfig.preset(args.preset, **overrides)
    if args.iters_scale != 1.0:
        c = config
        config = c.replace(velocity_iters=max(c.chunk, int(round(c.velocity_iters * args.iters_scale / c.chunk))
                                              * c.chunk),
                           sdf_iters=max(c.chunk, int(round(c.sdf_iters * args.iters_scale / c.chunk)) * c.chunk),
                           finetune_iters=int(round(c.finetune_iters * args.iters_scale / c.chunk)) * c.chunk)
    from iclr25.utils.device import on_accelerator  # noqa: PLC0415

    # --preset paper on a GPU is not judged by the CPU-time estimate (an absent GPU is refused later)
    gpu = on_accelerator(getattr(args, "device", None))
    check_size(f"--preset {args.preset} --iters-scale {args.iters_scale:g} ({config.total_iters} iterations)",
               seconds_needed=estimated_fit_seconds(config), force=args.force, on_accelerator=gpu)
    pair = load_pair(args.source, args.target, args.corr, n_points=args.n_points, seed=seed)
    for name, pts in (("SRC", pair.source_points), ("TGT", pair.target_points)):
        if len(pts) < config.knn + 1:
            raise ValueError(f"{args.source if name == 'SRC' else args.target}: {len(pts)} points; the sampler "
                             f"needs at least {config.knn + 1}")
    run.config.update({"source": str(args.source), "target": str(args.target),
                       "corr": None if args.corr is None else str(args.corr), "times": times,
                       "resolution": args.resolution, "preset": args.preset, "n_corr": int(len(pair.corr)),
                       **config.to_dict()})
    from .interpolation import run_fit  # noqa: PLC0415

    run = run_fit(pair, config, times, args.out, resolution=args.resolution, fmt=args.format, seed=seed, run=run,
                  device=dev)
    print(run.to_markdown())
    return 0


#: Files every ``fit`` writes at the top of --out, whatever its --times and --format (a previous run's marks).
FIT_FILES = ("results.json", "intermediate_shapes.png", "mesh_t0.ply", "mesh_t1.ply", "mesh_t0.obj", "mesh_t1.obj")


def fit_files(times: Sequence[float], fmt: str) -> tuple[str, ...]:
    """Every file ``fit`` writes at the top of --out for these ``times`` and mesh format ``fmt``."""
    ends = sorted(set([0.0, *times, 1.0]))
    return ("results.json", "intermediate_shapes.png", *(f"mesh_t{t:g}.{fmt}" for t in ends),
            *(f"advected_t{t:g}.ply" for t in times))


#: Seconds per training iteration of the "repro" preset on 2 CPU cores (1350 iterations in about 30 s).
_REPRO_SECONDS_PER_ITER = 0.022


def estimated_fit_seconds(config: Any) -> float:
    """A rough time for ``fit`` on this kind of machine (an order of magnitude, for the size guard): the repro
    preset's seconds per iteration scaled by batch size and network size (width^2 x depth of both networks)."""
    from .deform import DeformConfig  # noqa: PLC0415

    ref = DeformConfig.preset("repro")

    def work(c: Any) -> float:
        return c.batch * (c.sdf_width ** 2 * c.sdf_depth + c.n_steps * c.vel_width ** 2 * c.vel_depth)

    return _REPRO_SECONDS_PER_ITER * config.total_iters * work(config) / work(ref)


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub, d, r = ucli.method_commands("implicit-deform", DESCRIPTION, demo=demo, demo_help=DEMO_HELP, train=TRAIN_HELP,
                                             repro=repro, repro_help=REPRO_HELP, quick=True, jax_cache="ICLR25_IMPLICIT_DEFORM_JAX_CACHE")
    f = ucli.add_command(sub, "fit", cmd_fit, seed="random seed (default: 0)", force=True, help="fit your own source/target pair; writes meshes and results.json")
    f.add_argument("source", type=Path, help="source mesh or point cloud")
    f.add_argument("target", type=Path, help="target mesh or point cloud")
    f.add_argument("--corr", type=Path, default=None,
                   help="correspondences .npy ((k, 2) source/target vertex indices; default: none, Chamfer)")
    f.add_argument("--times", default="0.25,0.5,0.75", help="comma-separated times in [0, 1] (default: 0.25,0.5,0.75)")
    add_output(f, "--out", kind="folder", default="results/implicit-deform-fit", run_files=FIT_FILES,
               help="output folder: mesh_t<t>.<format>, advected_t<t>.ply, intermediate_shapes.png, results.json")
    f.add_argument("--preset", choices=PRESET_NAMES, default="repro", help="model/schedule preset: test (seconds), repro (about 30 s), paper (GPU-sized: days on 2 CPU cores, refused without --force) (default: repro)")
    f.add_argument("--iters-scale", type=float, default=1.0, help="multiply the preset's iterations (default: 1); a run estimated over a day is refused "
                        "unless --force")
    f.add_argument("--integrator", choices=("euler", "midpoint", "rk4"), default="rk4",
                   help="time integration of v (default: rk4; the paper uses euler)")
    f.add_argument("--no-div", action="store_true", help="switch the divergence term off (the reference's setting)")
    f.add_argument("--resolution", type=int, default=64, help="marching-cubes grid resolution (default: 64)")
    f.add_argument("--n-points", type=int, default=20000, help="surface samples per mesh (default: 20000)")
    f.add_argument("--format", choices=("ply", "obj"), default="ply", help="mesh format (default: ply)")
    for p in (d, r, f):  # where JAX fits and evaluates the networks
        add_device_argument(p)
    return ucli.run_main(parser, argv)
