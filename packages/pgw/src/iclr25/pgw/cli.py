"""Command line of ``iclr25 pgw``: ``demo``, ``repro``, ``distance`` and ``pairwise``."""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.cli import add_force_argument, add_run_command, method_parser, run_main
from iclr25.utils.guards import check_size
from iclr25.utils.io import POINT_FORMATS, atomic_write, read_points, save_npz
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import seed_everything

from .space import default_lam, mm_space

#: kept here (not imported from .solver) so that ``--help`` stays light
METHODS = ("fw-v1", "fw-v2", "entropic")
METRICS = ("euclidean", "sqeuclidean", "cityblock", "chebyshev")

PACKAGE = "iclr25-pgw"


# ---------------------------------------------------------------------------------------------- figures
def _plot_matching(m: Any, path: Path) -> None:
    from matplotlib.collections import LineCollection

    from iclr25.utils.plotting import savefig, subplots

    fig, axes = subplots(1, 2, size=(5.0, 4.2))
    shift = np.array([m.X[:, 0].max() - m.Y[:, 0].min() + 0.5, 0.0])
    Y = m.Y + shift
    n_clean = m.Y.shape[0] - m.n_outliers
    for ax, plan, title in ((axes[0], m.pgw.plan, f"PGW (lam={m.lam:.3g})"), (axes[1], m.gw.plan, "GW")):
        ax.scatter(m.X[:, 0], m.X[:, 1], s=8, c="tab:blue", label="shape", zorder=3)
        ax.scatter(Y[:n_clean, 0], Y[:n_clean, 1], s=8, c="tab:green", label="moved copy", zorder=3)
        ax.scatter(Y[n_clean:, 0], Y[n_clean:, 1], s=14, c="tab:red", marker="x", label="outliers", zorder=3)
        # the strongest link of each source point keeps the picture readable
        j = np.argmax(plan, axis=1)
        keep = plan[np.arange(len(j)), j] > 1e-6 * plan.max()
        segs = np.stack([m.X[keep], Y[j[keep]]], axis=1)
        ax.add_collection(LineCollection(segs, colors="0.4", alpha=0.5, linewidths=0.6))
        ax.set_title(f"{title}: mass {plan.sum():.2f}, on outliers {m.outlier_share(plan):.1%}")
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
    axes[0].legend(loc="lower left", fontsize=8)
    savefig(fig, path)


def _plot_matrices(D: dict[str, np.ndarray], path: Path, labels: np.ndarray | None = None) -> None:
    """One heat map per method: rows and columns are shape indices (integer ticks), each with its own
    colour bar; a constrained layout keeps every colour bar clear of the next panel."""
    from matplotlib.ticker import MaxNLocator

    from iclr25.utils.plotting import savefig, subplots

    fig, axes = subplots(1, len(D), size=(3.9, 3.3), layout="constrained")
    for ax, (name, M) in zip(np.atleast_1d(axes), D.items()):
        im = ax.imshow(M, cmap="viridis", interpolation="nearest")
        ax.set_title(f"{name} distance matrix", fontsize=9)
        ax.set_xlabel("shape index")
        ax.set_ylabel("shape index")
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(MaxNLocator(integer=True, nbins=6))
        ax.grid(False)
        if labels is not None:  # class boundaries, so the block structure reads at a glance
            cuts = np.flatnonzero(np.diff(labels)) + 0.5
            for c in cuts:
                ax.axhline(c, color="w", lw=0.6, alpha=0.7)
                ax.axvline(c, color="w", lw=0.6, alpha=0.7)
        cb = fig.colorbar(im, ax=ax, shrink=0.85)
        cb.set_label(f"{name} distance", fontsize=8)
        cb.ax.tick_params(labelsize=7)
    savefig(fig, path)


# ------------------------------------------------------------------------------------------------- demo
def demo(args: argparse.Namespace) -> int:
    from .experiments import outlier_matching, retrieval_run
    from .retrieval import nearest_neighbour_accuracy

    config = {"matching": {"shape": "house", "outliers": 0.1, "lam": "max C^2 / 20", "n_init": 3},
              "retrieval": {"data": "shapes_ii", "n_per_class": 2, "mass": "1/74 per point",
                            "lam": "max C^2 / 5", "score": "leave-one-out 1-NN"}}
    run = RunResult.start(PACKAGE, "demo", seed=args.seed, config=config)
    _check_seed(args.seed)
    seed_everything(args.seed)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    m = outlier_matching(seed=args.seed)
    run.add("PGW distance (house vs copy + 10% outliers)", m.pgw.distance, peer=m.gw.distance, peer_name="GW")
    run.add("transported mass (the shape has mass 1)", m.pgw.mass, peer=m.gw.mass, peer_name="GW")
    # headline: PGW may leave the outliers untransported, GW (balanced) must move mass onto them
    head = run.add("share of plan mass on outliers", m.outlier_share(m.pgw.plan), peer=m.outlier_share(m.gw.plan),
                   peer_name="GW", higher_is_better=False, headline=True)
    if not head.holds:
        run.headline_note = ("PGW put as much plan mass on the outliers as GW at this seed: lam = max C^2 / 20 "
                             "did not make dropping them cheaper than matching them")
    _plot_matching(m, out / "matching.png")
    run.add_figure(out / "matching.png", relative_to=out)

    r = retrieval_run(("pgw", "gw"), n_per_class=2, seed=args.seed)
    acc = {k: nearest_neighbour_accuracy(D, r.data.labels) for k, D in r.distances.items()}
    run.add("1-NN retrieval accuracy, 12 shapes", acc["pgw"], peer=acc["gw"], peer_name="GW",
            higher_is_better=True)
    run.add("distance matrix time", r.seconds["pgw"], peer=r.seconds["gw"], peer_name="GW", unit="s",
            higher_is_better=False, timing=True)
    _plot_matrices({"PGW": r.distances["pgw"], "GW": r.distances["gw"]}, out / "distances.png", r.data.labels)
    run.add_figure(out / "distances.png", relative_to=out)
    run.finish().save(out / "results.json")
    print(run.to_markdown())
    return 0


# ------------------------------------------------------------------------------------------------ repro
def repro(args: argparse.Namespace) -> int:
    from .benchmarking import entropic_like_for_like, exact_vs_mpgw
    from .experiments import retrieval_run
    from .retrieval import svm_accuracy

    _check_seed(args.seed)
    _check_n_jobs(args.n_jobs)
    if args.n_per_class < 2:
        raise ValueError(f"--n-per-class must be an integer >= 2 (the SVM folds need two shapes per class), "
                         f"got {args.n_per_class}")
    if any(n < 10 for n in args.sizes):
        raise ValueError(f"--sizes must be point counts >= 10, got {args.sizes}")
    # rough estimates, enough to refuse what cannot finish: data set II has 6 classes of <= 123 points; the four
    # distance matrices took about 40 s each at 20 shapes per class (120 shapes) and grow with the pair count;
    # a timing pair of n points holds a few n x n float64 matrices
    k = 6 * args.n_per_class
    check_size(f"--n-per-class {args.n_per_class}", bytes_needed=k * 123 * 2 * 8.0 + 4 * 8.0 * k * k,
               seconds_needed=4 * 40.0 * (k / 120) ** 2, force=args.force)
    check_size(f"--sizes {max(args.sizes)}", bytes_needed=6 * 8.0 * max(args.sizes) ** 2, force=args.force)
    methods = ("pgw", "gw", "mpgw", "ugw")
    config = {"n_per_class": args.n_per_class, "n_jobs": args.n_jobs, "mass": "1/74 per point",
              "lam": "max C^2 / 5", "svm": "exp(-10 D / max D), stratified 10-fold", "methods": methods,
              "speed_sizes": list(args.sizes)}
    run = RunResult.start(PACKAGE, "repro", seed=args.seed, config=config)
    seed_everything(args.seed)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    def done(name: str, secs: float) -> None:
        print(f"{name}: distance matrix in {secs:.1f} s", flush=True)

    r = retrieval_run(methods, n_per_class=args.n_per_class, n_jobs=args.n_jobs, seed=args.seed,
                      on_done=done)
    k = len(r.data)
    save_npz(out / "distances.npz", labels=r.data.labels, **r.distances)
    acc = {m: svm_accuracy(D, r.data.labels, seed=args.seed) for m, D in r.distances.items()}
    for m in methods[1:]:
        run.add(f"SVM accuracy, data set II ({k} shapes): PGW vs {m.upper()}", acc["pgw"], peer=acc[m],
                peer_name=m.upper(), higher_is_better=True)
    for m in methods[1:]:
        run.add(f"distance matrix time: PGW vs {m.upper()}", r.seconds["pgw"], peer=r.seconds[m],
                peer_name=m.upper(), unit="s", higher_is_better=False, timing=True)
    _plot_matrices({m.upper(): D for m, D in r.distances.items()}, out / "distances.png", r.data.labels)
    run.add_figure(out / "distances.png", relative_to=out)

    # one warm-up call and the median of 3: a single cold call at n = 100 (~10 ms) mostly times first-call costs
    for row in exact_vs_mpgw(args.sizes, seed=args.seed, warmup=1, repeats=3):
        n = row.n
        run.add(f"time per pair, n={n}: exact PGW vs POT MPGW at m = min(|p|,|q|)", row.at_min_mass.ours.median,
                peer=row.at_min_mass.peer.median, peer_name="POT MPGW", unit="s", higher_is_better=False,
                timing=True)
        run.add(f"time per pair, n={n}: exact PGW vs POT MPGW at PGW's mass {row.pgw_mass:.4g}",
                row.at_pgw_mass.ours.median, peer=row.at_pgw_mass.peer.median, peer_name="POT MPGW",
                unit="s", higher_is_better=False, timing=True)
        run.add(f"objective at equal mass, n={n}: PGW vs MPGW + penalty", row.pgw_objective,
                peer=row.mpgw_objective_at_pgw_mass, peer_name="POT MPGW", higher_is_better=False)
        print(f"n={n}: PGW {row.at_min_mass.ours.median:.3f} s, MPGW {row.at_min_mass.peer.median:.3f} s",
              flush=True)
    e = entropic_like_for_like(seed=args.seed)
    run.add(f"entropic PGW, {e.n_pairs} pairs {e.n_points}: JAX vmap vs the same solver as a POT loop",
            e.comparison.ours.median, peer=e.comparison.peer.median, peer_name="POT sinkhorn_log loop", unit="s",
            higher_is_better=False, timing=True)
    run.add("entropic PGW: max relative distance difference JAX (float32) vs POT loop (float64)", e.rel_diff_max,
            higher_is_better=False)
    run.finish().save(out / "results.json")
    print(run.to_markdown())
    return 0


# -------------------------------------------------------------------------------------- user's own files
#: POT probes every array library it finds when it is imported (torch, jax, tensorflow, cupy: seconds each);
#: the command line hands it numpy arrays only, so ``main`` switches those probes off (a user's own setting
#: of these variables wins).
POT_BACKEND_SWITCHES = ("POT_BACKEND_DISABLE_PYTORCH", "POT_BACKEND_DISABLE_JAX", "POT_BACKEND_DISABLE_TENSORFLOW",
                        "POT_BACKEND_DISABLE_CUPY")


def _check_seed(seed: int) -> None:
    if seed < 0:
        raise ValueError(f"--seed must be a non-negative integer, got {seed}")


def _check_n_jobs(n_jobs: int) -> None:
    if n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"--n-jobs must be a positive integer or -1 (all cores), got {n_jobs}")


def _check_common(args: argparse.Namespace) -> None:
    """Every option of ``distance`` / ``pairwise``, checked before any file is read (messages name the flag)."""
    if args.lam is not None and not (math.isfinite(args.lam) and args.lam > 0):
        raise ValueError(f"--lam must be a finite number > 0, got {args.lam}")
    if args.mass is not None and not (math.isfinite(args.mass) and args.mass > 0):
        raise ValueError(f"--mass must be a finite number > 0, got {args.mass}")
    if args.n_init is not None and args.n_init < 1:
        raise ValueError(f"--n-init must be an integer >= 1, got {args.n_init}")
    if args.seed is not None:
        _check_seed(args.seed)
    if args.epsilon is not None and not (math.isfinite(args.epsilon) and args.epsilon > 0):
        raise ValueError(f"--epsilon must be a finite number > 0, got {args.epsilon}")
    # an option the chosen method does not use is an error, not silently ignored
    if args.method == "entropic":
        unused = [flag for flag, v in (("--n-init", args.n_init), ("--seed", args.seed),
                                       ("--n-jobs", getattr(args, "n_jobs", None))) if v is not None]
        if unused:
            raise ValueError(f"{unused[0]} is not used by --method entropic (one deterministic start, vmapped "
                             f"batches in this process); leave it out or use --method fw-v1")
    elif args.epsilon is not None:
        raise ValueError(f"--epsilon is only used by --method entropic, got --method {args.method}")


def _check_npy_out(path: Path, flag: str) -> None:
    if path.suffix.lower() != ".npy":
        raise ValueError(f"{flag} must name a .npy file, got {str(path)!r}")
    if path.is_dir():
        raise ValueError(f"{flag} {str(path)!r} is a folder; name a .npy file")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"{flag} {str(path)!r}: no such folder {str(path.parent)!r}")


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

    _check_common(args)
    if args.plan is not None:
        _check_npy_out(args.plan, "--plan")
    a, b = _spaces_from_files([args.A, args.B], args.mass, args.metric)
    lam = default_lam([a, b]) if args.lam is None else args.lam
    t0 = time.perf_counter()
    r = pgw(a.C, b.C, a.p, b.p, lam, method=args.method, n_init=args.n_init, seed=args.seed,
            epsilon=args.epsilon)
    if args.plan is not None:
        with atomic_write(args.plan, "wb") as f:
            np.save(f, np.asarray(r.plan))
    print(f"distance        {r.distance:.10g}\ntransport_cost  {r.transport_cost:.10g}\n"
          f"penalty         {r.penalty:.10g}\nmass            {r.mass:.10g} of {a.mass:.6g} / {b.mass:.6g}\n"
          f"lam             {lam:.10g}\nn_iter          {r.n_iter}\nconverged       {r.converged}\n"
          f"seconds         {time.perf_counter() - t0:.3f}" + (f"\nplan            {args.plan}" if args.plan else ""))
    return 0


def pairwise(args: argparse.Namespace) -> int:
    from .solver import pgw_pairwise

    _check_common(args)
    if args.n_jobs is not None:
        _check_n_jobs(args.n_jobs)
    _check_npy_out(args.out, "--out")
    paths = _point_files(args.inputs)
    spaces = _spaces_from_files(paths, args.mass, args.metric)
    lam = default_lam(spaces) if args.lam is None else args.lam
    stats: dict[str, Any] = {}
    t0 = time.perf_counter()
    D = pgw_pairwise(spaces, lam, method=args.method, n_jobs=args.n_jobs, n_init=args.n_init, seed=args.seed,
                     epsilon=args.epsilon, stats=stats)
    secs = time.perf_counter() - t0
    names = args.out.with_suffix(".names.txt")
    with atomic_write(args.out, "wb") as f:
        np.save(f, D)
    with atomic_write(names) as f:
        f.write("".join((p.name if len(args.inputs) == 1 else str(p)) + "\n" for p in paths))
    how = ""
    if args.method != "entropic" and args.n_jobs not in (None, 1):
        how = (f"; {stats['in_process']} of {stats['pairs']} pairs in this process"
               + (f", the rest on {stats['workers']} workers" if stats["workers"] > 1 else
                  " (too little work to pay for starting workers)"))
    print(f"wrote {args.out} ({len(paths)} x {len(paths)}, lam={lam:.6g}, {secs:.2f} s{how}) and {names} "
          f"(row order)")
    return 0


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


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub = method_parser("pgw", "Partial Gromov-Wasserstein metric (Bai et al., ICLR 2025)")
    add_run_command(sub, "demo", demo, default_out="results/pgw",
                    help="a shape with 10%% outliers matched by PGW and GW, and a small retrieval run "
                         "(about 10 s)")
    rp = add_run_command(sub, "repro", repro, default_out="results/pgw-repro",
                         help="data set II retrieval (SVM) with PGW/GW/MPGW/UGW and per-pair timings "
                              "against POT (a few minutes)")
    rp.add_argument("--n-per-class", type=int, default=20, help="shapes per class (paper: 20)")
    rp.add_argument("--n-jobs", type=int, default=-1, help="worker processes for distance matrices "
                                                           "(default -1: all cores)")
    rp.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 500],
                    help="point counts of the per-pair timing (default 100 300 500)")
    add_force_argument(rp)
    for key in POT_BACKEND_SWITCHES:
        os.environ.setdefault(key, "1")
    fmt = ", ".join(POINT_FORMATS)
    d = sub.add_parser("distance", help="PGW distance between two point clouds",
                       description=f"PGW distance between two point clouds A and B ({fmt}; one point per "
                                   f"row). Prints distance, transport cost, penalty and transported mass.")
    d.add_argument("A", type=Path, help="first point cloud")
    d.add_argument("B", type=Path, help="second point cloud")
    d.add_argument("--plan", type=Path, default=None, help="also save the plan (n_A, n_B) as .npy")
    _common(d)
    d.set_defaults(func=distance)
    pw = sub.add_parser("pairwise", help="PGW distance matrix of all point clouds in a folder (or of files)",
                        description=f"PGW distance matrix of every point cloud ({fmt}) in DIR, in sorted "
                                    f"file-name order, or of the files given, in that order; writes OUT.npy "
                                    f"and OUT.names.txt (the row order). With --n-jobs, worker processes "
                                    f"start only when the work pays for their start-up.")
    pw.add_argument("inputs", type=Path, nargs="+", metavar="DIR | FILE",
                    help="a folder of point-cloud files, or at least two point-cloud files")
    pw.add_argument("--out", type=Path, required=True, help="output .npy file")
    pw.add_argument("--n-jobs", type=int, default=None,
                    help="fw-v1/fw-v2 only: worker processes (default 1; -1: all cores)")
    _common(pw)
    pw.set_defaults(func=pairwise)
    return run_main(parser, argv)
