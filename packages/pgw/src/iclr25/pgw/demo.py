"""``iclr25 pgw demo``: a shape with 10 % outliers matched by PGW and by GW, and a small retrieval run."""

from __future__ import annotations

import argparse
from pathlib import Path

from iclr25.utils.results import RunResult
from iclr25.utils.seeding import check_seed, seed_everything

from .experiments import outlier_matching, retrieval_run
from .figures import plot_matching, plot_matrices
from .retrieval import nearest_neighbour_accuracy

__all__ = ["demo"]

PACKAGE = "iclr25-pgw"


def demo(args: argparse.Namespace) -> int:
    """The ``demo`` command: outlier matching (the headline: plan mass on the outliers, PGW vs GW), then 1-NN
    retrieval on 12 shapes of data set II; writes ``results.json``, ``matching.png`` and ``distances.png``."""
    config = {"matching": {"shape": "house", "outliers": 0.1, "lam": "max C^2 / 20", "n_init": 3},
              "retrieval": {"data": "shapes_ii", "n_per_class": 2, "mass": "1/74 per point",
                            "lam": "max C^2 / 5", "score": "leave-one-out 1-NN"}}
    run = RunResult.start(PACKAGE, "demo", seed=args.seed, config=config)
    check_seed(args.seed, "--seed")
    seed_everything(args.seed)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    _matching(run, out, args.seed)
    _retrieval(run, out, args.seed)
    return run.publish(out)


def _matching(run: RunResult, out: Path, seed: int) -> None:
    m = outlier_matching(seed=seed)
    run.add("PGW distance (house vs copy + 10% outliers)", m.pgw.distance, peer=m.gw.distance, peer_name="GW")
    run.add("transported mass (the shape has mass 1)", m.pgw.mass, peer=m.gw.mass, peer_name="GW")
    # headline: PGW may leave the outliers untransported, GW (balanced) must move mass onto them
    head = run.add("share of plan mass on outliers", m.outlier_share(m.pgw.plan), peer=m.outlier_share(m.gw.plan),
                   peer_name="GW", higher_is_better=False, headline=True)
    if not head.holds:
        run.headline_note = ("PGW put as much plan mass on the outliers as GW at this seed: lam = max C^2 / 20 "
                             "did not make dropping them cheaper than matching them")
    plot_matching(m, out / "matching.png")
    run.add_figure(out / "matching.png", relative_to=out)


def _retrieval(run: RunResult, out: Path, seed: int) -> None:
    r = retrieval_run(("pgw", "gw"), n_per_class=2, seed=seed)
    acc = {k: nearest_neighbour_accuracy(D, r.data.labels) for k, D in r.distances.items()}
    run.add("1-NN retrieval accuracy, 12 shapes", acc["pgw"], peer=acc["gw"], peer_name="GW",
            higher_is_better=True)
    run.add("distance matrix time", r.seconds["pgw"], peer=r.seconds["gw"], peer_name="GW", unit="s",
            higher_is_better=False, timing=True)
    plot_matrices({"PGW": r.distances["pgw"], "GW": r.distances["gw"]}, out / "distances.png", r.data.labels)
    run.add_figure(out / "distances.png", relative_to=out)
