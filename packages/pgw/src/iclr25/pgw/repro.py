"""``iclr25 pgw repro``: the reduced-scale reproduction — shape retrieval on data set II (SVM on PGW, GW, MPGW
and UGW distance matrices), per-pair timings of exact PGW against POT's MPGW, and the entropic solver vmapped
in JAX against the same solver as a POT loop.

References: paper Sec. 5 (shape retrieval, data set II; Table 1 wall-clock comparison).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from iclr25.utils.guards import check_size
from iclr25.utils.io import save_npz
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import check_seed, seed_everything

from .benchmarking import entropic_like_for_like, exact_vs_mpgw
from .experiments import retrieval_run
from .figures import plot_matrices
from .retrieval import svm_accuracy
from .solver import check_n_jobs

__all__ = ["repro", "METHODS"]

PACKAGE = "iclr25-pgw"
#: the methods of the retrieval experiment, PGW first (the others are its peers)
METHODS = ("pgw", "gw", "mpgw", "ugw")
#: folds of the SVM cross-validation (stratified: every fold holds a shape of every class)
SVM_FOLDS = 10


#: ``repro --quick``: the retrieval step only, smoke-sized (PGW's distance matrix of 2 shapes per class and its 2-fold
#: SVM accuracy; no peers, no timings), e.g. to check a cluster (``--backend dask --address ...``) before the real run
QUICK = {"n_per_class": 2, "methods": ("pgw",), "folds": 2}


def repro(args: argparse.Namespace) -> int:
    """The ``repro`` command: options checked (and sized) before any work, then retrieval, per-pair timings and
    the entropic comparison; writes ``results.json``, ``distances.npz`` and ``distances.png`` to ``--out``.

    The exact distance matrices run on ``--n-jobs`` local processes, or with ``--backend {local,dask,ray}`` on
    ``--workers`` of that engine (a Dask or Ray cluster at ``--address``, or one started here); the JAX entropic
    comparison runs on ``--device``. Every value but the timings is the same whatever the backend."""
    from iclr25.utils.device import describe_device  # noqa: PLC0415
    from iclr25.utils.parallel import cluster  # noqa: PLC0415

    from .entropic import resolve_device  # noqa: PLC0415

    _check_options(args)
    quick = bool(getattr(args, "quick", False))
    n_per_class = QUICK["n_per_class"] if quick else args.n_per_class
    sizes = [] if quick else list(args.sizes)
    folds = QUICK["folds"] if quick else SVM_FOLDS
    methods = QUICK["methods"] if quick else METHODS
    n_jobs_local = -1 if args.n_jobs is None else args.n_jobs
    config = {"n_per_class": n_per_class, "n_jobs": n_jobs_local, "mass": "1/74 per point",
              "lam": "max C^2 / 5", "svm": f"exp(-10 D / max D), stratified {folds}-fold", "methods": methods,
              "speed_sizes": sizes}
    if args.backend is not None:
        config["backend"] = {"backend": args.backend, "address": args.address, "workers": args.workers}
    if quick:
        config["quick"] = True
    run = RunResult.start(PACKAGE, "repro", seed=args.seed, config=config)
    dev = resolve_device(args.device)
    run.machine["device"] = describe_device(dev)
    seed_everything(args.seed)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    with cluster(args.backend, address=args.address, workers=args.workers) as (engine, n_jobs):
        _retrieval(run, out, n_per_class=n_per_class, n_jobs=n_jobs_local if args.backend is None else n_jobs,
                   seed=args.seed, backend=engine, methods=methods, folds=folds)
    if not quick:
        _pair_timings(run, sizes, seed=args.seed)
        _entropic(run, seed=args.seed, device=dev)
    return run.publish(out)


def _check_options(args: argparse.Namespace) -> None:
    """Every option, and a rough size estimate that refuses what cannot finish (``--force`` overrides)."""
    check_seed(args.seed, "--seed")
    if args.n_jobs is not None:
        check_n_jobs(args.n_jobs, "--n-jobs")
        if args.backend is not None:
            raise ValueError("--n-jobs is for local processes without --backend; with --backend give --workers")
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers must be a positive integer, got {args.workers}")
    if args.address is not None and args.backend in (None, "local"):
        raise ValueError("--address names a cluster: give it with --backend dask or ray")
    from .entropic import resolve_device  # noqa: PLC0415 - an absent --device is refused before any work

    resolve_device(args.device)
    if args.n_per_class < SVM_FOLDS:
        raise ValueError(f"--n-per-class must be an integer >= {SVM_FOLDS} (the {SVM_FOLDS}-fold SVM needs a shape of "
                         f"every class in each fold), got {args.n_per_class}")
    if any(n < 10 for n in args.sizes):
        raise ValueError(f"--sizes must be point counts >= 10, got {args.sizes}")
    # rough estimates, enough to refuse what cannot finish: data set II has 6 classes of <= 123 points; the four
    # distance matrices took about 40 s each at 20 shapes per class (120 shapes) and grow with the pair count;
    # a timing pair of n points holds a few n x n float64 matrices
    k = 6 * args.n_per_class
    check_size(f"--n-per-class {args.n_per_class}", bytes_needed=k * 123 * 2 * 8.0 + 4 * 8.0 * k * k,
               seconds_needed=4 * 40.0 * (k / 120) ** 2, force=args.force)
    check_size(f"--sizes {max(args.sizes)}", bytes_needed=6 * 8.0 * max(args.sizes) ** 2, force=args.force)


def _retrieval(run: RunResult, out: Path, *, n_per_class: int, n_jobs: int, seed: int, backend: str | None = None,
               methods: tuple[str, ...] = METHODS, folds: int = SVM_FOLDS) -> None:
    """Distance matrices of every method (saved), SVM accuracy of PGW against each peer, their times, a figure."""

    def done(name: str, secs: float) -> None:
        print(f"{name}: distance matrix in {secs:.1f} s", flush=True)

    r = retrieval_run(methods, n_per_class=n_per_class, n_jobs=n_jobs, seed=seed, on_done=done, backend=backend)
    k = len(r.data)
    save_npz(out / "distances.npz", labels=r.data.labels, **r.distances)
    acc = {m: svm_accuracy(D, r.data.labels, n_splits=folds, seed=seed) for m, D in r.distances.items()}
    if len(methods) == 1:  # --quick: PGW alone
        run.add(f"SVM accuracy, data set II ({k} shapes): PGW", acc["pgw"], higher_is_better=True)
    for m in methods[1:]:
        run.add(f"SVM accuracy, data set II ({k} shapes): PGW vs {m.upper()}", acc["pgw"], peer=acc[m],
                peer_name=m.upper(), higher_is_better=True)
    for m in methods[1:]:
        run.add(f"distance matrix time: PGW vs {m.upper()}", r.seconds["pgw"], peer=r.seconds[m],
                peer_name=m.upper(), unit="s", higher_is_better=False, timing=True)
    plot_matrices({m.upper(): D for m, D in r.distances.items()}, out / "distances.png", r.data.labels)
    run.add_figure(out / "distances.png", relative_to=out)


def _pair_timings(run: RunResult, sizes: list[int], *, seed: int) -> None:
    """Exact PGW against POT's MPGW per pair of ``n`` points, at MPGW's full mass and at PGW's own mass."""
    # one warm-up call and the median of 3: a single cold call at n = 100 (~10 ms) mostly times first-call costs
    for row in exact_vs_mpgw(sizes, seed=seed, warmup=1, repeats=3):
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


def _entropic(run: RunResult, *, seed: int, device: Any = None) -> None:
    """Entropic PGW on a batch of pairs: JAX vmap on ``device`` against the same solver looped through POT."""
    e = entropic_like_for_like(seed=seed, device=device)
    run.add(f"entropic PGW, {e.n_pairs} pairs {e.n_points}: JAX vmap vs the same solver as a POT loop",
            e.comparison.ours.median, peer=e.comparison.peer.median, peer_name="POT sinkhorn_log loop", unit="s",
            higher_is_better=False, timing=True)
    run.add("entropic PGW: max relative distance difference JAX (float32) vs POT loop (float64)", e.rel_diff_max,
            higher_is_better=False)
