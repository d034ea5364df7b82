"""Command line of ``iclr25 pgw``: ``demo`` (:mod:`.demo`), ``repro`` (:mod:`.repro`), ``distance`` and
``pairwise``."""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils import cli as ucli
from iclr25.utils.device import add_device_argument
from iclr25.utils.io import POINT_FORMATS, atomic_write, read_points
from iclr25.utils.outputs import add_output
from iclr25.utils.parallel import add_backend_arguments
from iclr25.utils.seeding import check_seed

from .space import default_lam, mm_space

DESCRIPTION = "Partial Gromov-Wasserstein metric (Bai et al., ICLR 2025)"
DEMO_HELP = "a shape with 10%% outliers matched by PGW and GW, and a small retrieval run (about 10 s)"
REPRO_HELP = ("data set II retrieval (SVM) with PGW/GW/MPGW/UGW and per-pair timings against POT (a few "
              "minutes)")
QUICK_HELP = ("the retrieval step only, smoke-sized (PGW's distance matrix of 2 shapes per class and its 2-fold "
              "SVM accuracy; no peers, no timings): seconds, e.g. to check a --backend cluster")


#: kept here (not imported from .solver) so that ``--help`` stays light
METHODS = ("fw-v1", "fw-v2", "entropic")
METRICS = ("euclidean", "sqeuclidean", "cityblock", "chebyshev")


# -------------------------------------------------------------------------------------- user's own files
#: POT probes every array library it finds when it is imported (torch, jax, tensorflow, cupy: seconds each);
#: the command line hands it numpy arrays only, so ``main`` switches those probes off (a user's own setting
#: of these variables wins).
POT_BACKEND_SWITCHES = ("POT_BACKEND_DISABLE_PYTORCH", "POT_BACKEND_DISABLE_JAX", "POT_BACKEND_DISABLE_TENSORFLOW",
                        "POT_BACKEND_DISABLE_CUPY")


def _check_common(args: argparse.Namespace) -> None:
    """Every option of ``distance`` / ``pairwise``, checked before any file is read (messages name the flag)."""
    if args.lam is not None and not (math.isfinite(args.lam) and args.lam > 0):
        raise ValueError(f"--lam must be a finite number > 0, got {args.lam}")
    if args.mass is not None and not (math.isfinite(args.mass) and args.mass > 0):
        raise ValueError(f"--mass must be a finite number > 0, got {args.mass}")
    if args.n_init is not None and args.n_init < 1:
        raise ValueError(f"--n-init must be an integer >= 1, got {args.n_init}")
    if args.seed is not None:
        check_seed(args.seed, "--seed")
    if args.epsilon is not None and not (math.isfinite(args.epsilon) and args.epsilon > 0):
        raise ValueError(f"--epsilon must be a finite number > 0, got {args.epsilon}")
    # an option the chosen method does not use is an error, not silently ignored
    if args.method == "entropic":
        unused = [flag for flag, v in (("--n-init", args.n_init), ("--seed", args.seed),
                                       ("--n-jobs", getattr(args, "n_jobs", None)),
                                       ("--backend", getattr(args, "backend", None))) if v is not None]
        if unused:
            raise ValueError(f"{unused[0]} is not used by --method entropic (one deterministic start, vmapped "
                             f"batches in this process, on --device); leave it out or use --method fw-v1")
        from .entropic import resolve_device  # noqa: PLC0415 - an absent device is refused before any file is read

        resolve_device(args.device)
    else:
        if args.epsilon is not None:
            raise ValueError(f"--epsilon is only used by --method entropic, got --method {args.method}")
        if args.device not in ("auto", "cpu"):
            raise ValueError(f"--device {args.device}: --method {args.method} runs on the CPU (POT's network-simplex "
                             "oracle has no GPU version); use --method entropic on an accelerator, or --backend "
                             "for more CPU cores")
    if getattr(args, "backend", None) is not None and getattr(args, "n_jobs", None) is not None:
        raise ValueError("--n-jobs is for local processes without --backend; with --backend give --workers")
    if getattr(args, "address", None) is not None and getattr(args, "backend", None) in (None, "local"):
        raise ValueError("--address names a cluster: give it with --backend dask or ray")
    if getattr(args, "workers", None) is not None and args.workers < 1:
        raise ValueError(f"--workers must be a positive integer, got {args.workers}")


def _spaces_from_files(paths: list[Path], mass: float | None, metric: str):
    spaces = []
    for p in paths:
        X = read_points(p)
        try:
            spaces.append(mm_space(X, mass=mass, metric=metric))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{p}: {exc}") from exc
    return spaces


def _point_files(inputs: list[Path]) -> list[Path]:
    """One folder (every point-cloud file in it, sorted by name) or at least two files."""
    if len(inputs) == 1:
        folder = inputs[0]
        if not folder.exists():
            raise FileNotFoundError(f"{folder}: no such folder")
        if not folder.is_dir():
            raise ValueError(f"{folder}: not a folder; give a folder of point clouds or at least two files")
        paths = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in POINT_FORMATS)
        if len(paths) < 2:
            raise ValueError(f"{folder}: a folder with at least 2 point-cloud files ({', '.join(POINT_FORMATS)}) "
                             f"is needed, it has {len(paths)}")
        return paths
    return list(inputs)


def distance(args: argparse.Namespace) -> int:
    from .solver import pgw

    _check_common(args)  # --plan was checked by run_main before this (add_output)
    a, b = _spaces_from_files([args.A, args.B], args.mass, args.metric)
    lam = default_lam([a, b]) if args.lam is None else args.lam
    t0 = time.perf_counter()
    r = pgw(a.C, b.C, a.p, b.p, lam, method=args.method, n_init=args.n_init, seed=args.seed,
            epsilon=args.epsilon, device=args.device if args.method == "entropic" else None)
    if args.plan is not None:
        with atomic_write(args.plan, "wb") as f:
            np.save(f, np.asarray(r.plan))
    print(f"distance        {r.distance:.10g}\ntransport_cost  {r.transport_cost:.10g}\n"
          f"penalty         {r.penalty:.10g}\nmass            {r.mass:.10g} of {a.mass:.6g} / {b.mass:.6g}\n"
          f"lam             {lam:.10g}\nn_iter          {r.n_iter}\nconverged       {r.converged}\n"
          f"seconds         {time.perf_counter() - t0:.3f}" + (f"\nplan            {args.plan}" if args.plan else ""))
    return 0


def pairwise(args: argparse.Namespace) -> int:
    from .solver import check_n_jobs, pgw_pairwise

    _check_common(args)
    if args.n_jobs is not None:
        check_n_jobs(args.n_jobs, "--n-jobs")
    paths = _point_files(args.inputs)
    spaces = _spaces_from_files(paths, args.mass, args.metric)
    lam = default_lam(spaces) if args.lam is None else args.lam
    stats: dict[str, Any] = {}
    t0 = time.perf_counter()
    from iclr25.utils.parallel import cluster  # noqa: PLC0415

    with cluster(args.backend, address=args.address, workers=args.workers) as (engine, n_jobs):
        if args.backend is not None:
            print(f"--backend {args.backend}: {n_jobs if n_jobs > 0 else 'all the cluster'}'s worker(s)"
                  + (f" at {args.address}" if args.address else ""), flush=True)
        D = pgw_pairwise(spaces, lam, method=args.method, n_jobs=args.n_jobs if args.backend is None else n_jobs,
                         backend=engine, n_init=args.n_init, seed=args.seed, epsilon=args.epsilon, stats=stats,
                         device=args.device if args.method == "entropic" else None)
    secs = time.perf_counter() - t0
    names = names_file(args.out)
    with atomic_write(args.out, "wb") as f:
        np.save(f, D)
    with atomic_write(names) as f:
        f.write("".join((p.name if len(args.inputs) == 1 else str(p)) + "\n" for p in paths))
    how = ""
    if args.backend in ("dask", "ray"):
        how = f"; every pair on the {args.backend} workers"
    elif args.method != "entropic" and (args.n_jobs not in (None, 1) or args.backend == "local"):
        how = (f"; {stats['in_process']} of {stats['pairs']} pairs in this process"
               + (f", the rest on {stats['workers']} workers" if stats["workers"] > 1 else
                  " (too little work to pay for starting workers)"))
    print(f"wrote {args.out} ({len(paths)} x {len(paths)}, lam={lam:.6g}, {secs:.2f} s{how}) and {names} "
          f"(row order)")
    return 0


def names_file(out: Path) -> Path:
    """The sidecar ``pairwise`` writes beside ``--out D.npy``: ``D.names.txt``, the row order."""
    return out.with_suffix(".names.txt")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lam", type=float, default=None,
                   help="penalty lambda > 0 (default: the paper's rule, max squared distance / 5)")
    p.add_argument("--method", choices=METHODS, default="fw-v1",
                   help="fw-v1 / fw-v2 (exact Frank-Wolfe) or entropic (JAX); default fw-v1")
    p.add_argument("--mass", type=float, default=None,
                   help="mass per point > 0 (default 1, so clouds of different sizes are unbalanced)")
    p.add_argument("--metric", choices=METRICS, default="euclidean",
                   help="ground distance of the points (default euclidean)")
    p.add_argument("--n-init", type=int, default=None,
                   help="fw-v1/fw-v2 only: Frank-Wolfe starts, the best is kept (default 1)")
    p.add_argument("--seed", type=int, default=None, help="fw-v1/fw-v2 only: seed of the random starts (default 0)")
    p.add_argument("--epsilon", type=float, default=None,
                   help="entropic only: regularisation relative to the cost scale (default 1e-3)")
    # the JAX entropic solver runs there; the exact methods run on the CPU (auto and cpu are accepted)
    add_device_argument(p)


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub, _, rp = ucli.method_commands("pgw", DESCRIPTION, demo="iclr25.pgw.demo:demo", demo_help=DEMO_HELP,
                                              repro="iclr25.pgw.repro:repro", repro_help=REPRO_HELP,
                                              demo_files=("matching.png", "distances.png"),
                                              repro_files=("distances.npz", "distances.png", "claims.json"),
                                              quick=QUICK_HELP)
    rp.add_argument("--n-per-class", type=int, default=20, help="shapes per class (paper: 20)")
    rp.add_argument("--n-jobs", type=int, default=None, help="local worker processes for the distance matrices "
                                                             "(default -1: all cores); with --backend use --workers")
    add_backend_arguments(rp)
    add_device_argument(rp)
    rp.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 500],
                    help="point counts of the per-pair timing (default 100 300 500)")
    ucli.add_force_argument(rp)
    for key in POT_BACKEND_SWITCHES:
        os.environ.setdefault(key, "1")
    fmt = ", ".join(POINT_FORMATS)
    d = ucli.add_command(sub, "distance", distance, help="PGW distance between two point clouds",
                         description=f"PGW distance between two point clouds A and B ({fmt}; one point per "
                                     f"row). Prints distance, transport cost, penalty and transported mass.")
    d.add_argument("A", type=Path, help="first point cloud")
    d.add_argument("B", type=Path, help="second point cloud")
    add_output(d, "--plan", kind="file", suffixes=(".npy",), default=None,
               help="also save the transport plan (n_A, n_B) to this .npy file")
    _common(d)
    pw = ucli.add_command(sub, "pairwise", pairwise, help="PGW distance matrix of all point clouds in a folder (or of files)",
                          description=f"PGW distance matrix of every point cloud ({fmt}) in DIR, in sorted "
                                      f"file-name order, or of the files given, in that order; writes OUT.npy "
                                      f"and OUT.names.txt (the row order). With --n-jobs, worker processes "
                                      f"start only when the work pays for their start-up.")
    pw.add_argument("inputs", type=Path, nargs="+", metavar="DIR | FILE",
                    help="a folder of point-cloud files, or at least two point-cloud files")
    add_output(pw, "--out", kind="file", required=True, suffixes=(".npy",), sidecars=lambda out: [names_file(out)],
               help="the distance matrix, as a .npy file; the row order goes to OUT.names.txt beside it (checked "
                    "the same way); neither may be an input or sit inside an input folder")
    pw.add_argument("--n-jobs", type=int, default=None,
                    help="fw-v1/fw-v2 only: worker processes (default 1; -1: all cores)")
    add_backend_arguments(pw)  # fw-v1/fw-v2 only: the pairs on local processes, a Dask or a Ray cluster
    _common(pw)
    return ucli.run_main(parser, argv)
