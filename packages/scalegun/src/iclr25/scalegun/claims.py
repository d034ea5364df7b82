"""The paper's claims as the package checks them, decided over seeds (``iclr25.utils.claims``).

Each seed draws its own graph (a contextual SBM), its own request stream and its own noise. Rungs: ``"test"``
(the default test suite: 3,000-node CSBM, 100 edge + 20 node + 20 feature removals, 3 seeds) and ``"repro"``
(the same graphs with 200 + 50 + 50 removals, 5 seeds). The abstract's timing headline is decided at ``repro``
only (a 1M-edge power-law graph per seed, CPU seconds):

- ``unlearning-10x-faster-than-retraining`` (main): single-edge requests >= 10x faster than retraining, alive only
  within the certificate, without a retrain and at the retrained model's accuracy to a point.
- ``batch-5000-faster-than-retraining`` (main, declared fail): a 5,000-edge request faster than retraining at all;
  the README's ladder (1M-20M edges) and locality ablation name the cause.

Both are decided at the ``paper`` rung too (seeds 0-2; for a GPU node: ``iclr25 claims scalegun --rung paper
--estimate``): the user's ogbn-papers100M (``$ICLR25_SCALEGUN_PAPERS100M``) with the paper's settings for it, and
the certificate claims on a Cora-sized CSBM with the paper's 2,000 single-edge removals. The models compute on
``$ICLR25_DEVICE`` (``iclr25 claims scalegun --device``), else ``auto``; with an accelerator the speed claims time
wall seconds (CPU seconds on the CPU).

- ``true-residual-below-data-bound`` and ``data-bound-below-worst-case`` (paper Fig. 2): the true gradient
  residual <= the data-dependent bound <= the worst-case bound, for every request and class.
- ``certified-without-retraining``: the data-dependent bound stays inside the budget sigma*eps/c(delta) over the
  whole stream under the default r_max rule (the certificate holds without retraining).
- ``accuracy-matches-retraining``: after the stream, test accuracy is within a point of retraining from scratch
  on the edited graph.
- ``adversarial-edges-unlearned`` (paper Sec. 5.3, efficacy): unlearning injected inter-class edges restores the
  accuracy that the poisoned model lost.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from iclr25.utils.claims import Claim, ClaimRegistry, Measurement, RungCost, smoke_run
from iclr25.utils.device import default_device

__all__ = ["REGISTRY", "STREAM", "CERT_GRAPH", "PAPER_DATA_ENV", "certified_stream"]

#: The folder of the user's ogbn-papers100M, laid out as :func:`iclr25.scalegun.streaming.load_graph_files` reads
#: it (graph.npz, X.npy, y.npy, train.npy, test.npy), for the ``paper`` rung's speed claims.
PAPER_DATA_ENV = "ICLR25_SCALEGUN_PAPERS100M"

REGISTRY = ClaimRegistry(
    "iclr25-scalegun", seeds={"test": (0, 1, 2), "repro": (0, 1, 2, 3, 4), "paper": (0, 1, 2), "locality": (0, 1, 2)},
    calibration={"test": tuple(range(100, 110)), "repro": tuple(range(100, 105)), "locality": (100, 101)},
    costs={"paper": RungCost(
        gpu_hours=10, memory_gb=8,
        hardware="one GPU with >= 16 GB (float64) on a host with about 1 TB of RAM (the push state of 111M nodes "
                 "x 128 features x 5 levels in float64 is ~570 GB; the push runs on the host's CPU)",
        what="the abstract's headline on ogbn-papers100M (111M nodes, 1.6B edges, F = 128, 172 classes; 2 hops, "
             "lam 1e-8, sigma 5, r_max 5e-9, (eps, delta) = (1, 1e-4)): 20 single-edge requests and one "
             "5,000-random-edge request against one retraining from scratch; the certificate claims on a "
             "Cora-sized CSBM (2,708 nodes, 5,278 edges, 1,433 features, 7 classes) with the paper's 2,000 "
             "single-edge plus 50 node and 50 feature removals, audited. Estimated, not measured on a GPU: the "
             "paper reports 1.89 h per re-propagation and 1.91 h per retraining; a seed propagates the whole "
             "graph four times (ScaleGUN's fit, the retraining mode's fit and its one retraining, the accuracy "
             "reference), ~7.6 h, plus ~2 h for this numpy push being slower than the paper's C++; the GPU holds "
             "the float64 model (1.2M training rows x 128), mostly idle while the host pushes",
        data=f"ogbn-papers100M as a folder of graph.npz (CSR), X.npy, y.npy, train.npy, test.npy, named by "
             f"${PAPER_DATA_ENV} (memory-mapped; convert from OGB yourself: nothing is downloaded)")})

#: Requests per rung: single-edge, node and feature removals (the paper rung: the paper's 2,000 single-edge
#: removals on Cora, with 50 node and 50 feature removals as at the repro rung).
STREAM = {"test": (100, 20, 20), "repro": (200, 50, 50), "paper": (2000, 50, 50)}
#: The certificate claims' CSBM per rung: nodes, edges, features, classes (the paper rung: Cora's sizes).
CERT_GRAPH = {"test": (3000, 15000, 32, 4), "repro": (3000, 15000, 32, 4), "paper": (2708, 5278, 1433, 7)}


#: the rungs of the certificate claims (the ``locality`` rung decides its speed claim alone)
_CERT_RUNGS = ("test", "repro", "paper")


def _check_rung(rung: str) -> None:
    if rung not in STREAM:
        raise ValueError(f"rung must be one of {sorted(STREAM)}, got {rung!r}")


def certified_stream(seed: int, rung: str) -> tuple[Any, Any, list]:
    """``(graph, unlearner, records)``: the rung's CSBM (:data:`CERT_GRAPH`; seed ``seed``), fitted at
    (eps, delta) = (1, 1e-4), sigma = 0.1 with auditing, after the rung's stream of edge, node and feature
    removals; the model on ``$ICLR25_DEVICE`` (else ``auto``). In a smoke run (``iclr25 claims --smoke``) the
    stream is one request of each kind, on at most 64 features."""
    return _certified_stream(seed, rung, default_device(), smoke_run())


@functools.lru_cache(maxsize=4)
def _certified_stream(seed: int, rung: str, device: str, smoke: bool) -> tuple[Any, Any, list]:
    from . import datasets
    from .unlearner import CertifiedUnlearner

    _check_rung(rung)
    if rung == "paper" and not smoke:  # the rung's speed claims need the user's data: say so before hours of work
        _paper_data()
    n_edges, n_nodes, n_feats = (1, 1, 1) if smoke else STREAM[rung]
    n, m, F, C = CERT_GRAPH[rung]
    F = min(F, 64) if smoke else F  # a smoke run: Cora's graph with 64 features (F x F eigensolves: ~10 s at 1,433)
    g = datasets.csbm(n, m, F, C, seed=seed, homophily=0.6, signal=0.2)
    rng = np.random.default_rng(seed)
    edges = g.edges[rng.choice(g.n_edges, n_edges, replace=False)]
    picked = rng.choice(g.train_idx, n_nodes + n_feats, replace=False)
    u = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, epsilon=1.0, delta=1e-4, sigma=0.1, audit=True,
                           seed=seed, device=device).fit()
    recs = [u.unlearn_edges(e[None, :]) for e in edges]
    recs += [u.unlearn_nodes([a]) for a in picked[:n_nodes]]
    recs += [u.unlearn_features([a]) for a in picked[n_nodes:]]
    return g, u, recs


@REGISTRY.measures(
    Claim("true-residual-below-data-bound", rungs=_CERT_RUNGS, kind="main",
          statement="the data-dependent bound is sound: the true gradient residual never exceeds it (Fig. 2)",
          paper="Fig. 2: true residual <= data-dependent bound for edge, node and feature removal",
          metric="max over requests and classes of true residual / data-dependent bound",
          threshold=1.0, direction="lower", rule="every_seed", margin=0.0,
          note="soundness decided as the paper states it (ratio <= 1 at every request, class and seed), no margin; "
               "calibration seeds 100-109 give ratios 0.05-0.89, max_margin 0.22 (claims-calibration.json). "
               "The earlier margin 0.3 exceeded that max_margin and failed at fresh seeds (ratio 0.92)"),
    Claim("data-bound-below-worst-case", rungs=_CERT_RUNGS, kind="secondary",
          statement="the data-dependent bound is tighter than the worst-case bound (Fig. 2)",
          paper="Fig. 2: data-dependent bound <= worst-case bound",
          metric="log10 of max over requests of data-dependent bound / worst-case bound",
          threshold=0.0, direction="lower", rule="every_seed", margin=4.0,
          note="margin 4 orders (value < -4) below max_margin at calibration seeds 100-109 (claims-calibration.json)"),
    Claim("certified-without-retraining", rungs=_CERT_RUNGS, kind="secondary",
          statement="under the default r_max rule the certificate holds over the whole stream without retraining",
          paper="(eps, delta) = (1, 1e-4) certified unlearning with rare retraining",
          metric="max over requests of data-dependent bound / budget sigma*eps/c(delta)",
          threshold=1.0, direction="lower", rule="every_seed", margin=0.8,
          note="margin 0.8 (at most 20 % of the budget) below max_margin at calibration seeds 100-109 (claims-calibration.json)"),
    Claim("accuracy-matches-retraining", rungs=_CERT_RUNGS, kind="secondary",
          statement="after unlearning, test accuracy is comparable to retraining from scratch on the edited graph",
          paper="comparable test accuracy to retraining (Tables 2-4)",
          metric="|test accuracy after unlearning - retrained| (points of accuracy, fraction)",
          threshold=0.01, direction="lower", rule="every_seed", margin=0.0,
          note="the paper's 'comparable' read as within one point (paper notes, check 3); margin 0 "
               "below max_margin at calibration seeds 100-109 (claims-calibration.json)"),
)
def _certificate(seed: int, rung: str) -> dict[str, Measurement | float]:
    from .unlearner import CertifiedUnlearner

    g, u, recs = certified_stream(seed, rung)
    true = np.array([r.true_residual for r in recs])
    data = np.array([r.data_bound for r in recs])
    worst = np.array([r.worst_case_bound for r in recs])
    ref = CertifiedUnlearner(u.current_graph(), u.current_features(), g.y, u.active_train_idx(),
                             standardize=False, sigma=0.1, seed=seed + 1, device=u.device).fit()
    acc, acc_ref = u.score(g.test_idx), ref.score(g.test_idx)
    return {"true-residual-below-data-bound": float(np.max(true / data)),
            "data-bound-below-worst-case": float(np.log10(np.max(data.max(axis=1) / worst))),
            "certified-without-retraining": float(max(max(r.data_bound) / r.budget for r in recs)),
            "accuracy-matches-retraining": Measurement(abs(acc - acc_ref), extra={"accuracy": acc,
                                                                                 "retrained": acc_ref})}


@REGISTRY.measures(
    Claim("adversarial-edges-unlearned", rungs=_CERT_RUNGS, kind="secondary",
          statement="unlearning injected adversarial (inter-class) edges restores the accuracy they cost (Sec. 5.3)",
          paper="efficacy experiment: accuracy recovers after unlearning the adversarial edges",
          metric="test accuracy after unlearning the 10 % adversarial edges",
          baseline="the poisoned model (before unlearning)", direction="higher", rule="every_seed", margin=0.01,
          note="margin 0.01 (a point of accuracy) below max_margin at calibration seeds 100-109 (claims-calibration.json)"),
)
def _efficacy(seed: int, rung: str) -> dict[str, Measurement]:
    from . import datasets
    from .unlearner import CertifiedUnlearner

    _check_rung(rung)
    if rung == "paper" and not smoke_run():
        _paper_data()
    g = datasets.csbm(2000, 10000, 16, 4, seed=seed + 3, homophily=0.9, signal=0.12)
    bad = datasets.adversarial_edges(g, 0.1, seed=seed + 3)
    poisoned = datasets.with_edges(g, bad)
    dev = default_device()
    clean = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, sigma=0.1, seed=seed, device=dev).fit().score(g.test_idx)
    u = CertifiedUnlearner(poisoned.adj, poisoned.X, g.y, g.train_idx, sigma=0.1, seed=seed, device=dev).fit()
    acc_poisoned = u.score(g.test_idx)
    for batch in np.array_split(bad, 1 if smoke_run() else 10):
        u.unlearn_edges(batch)
    return {"adversarial-edges-unlearned": Measurement(u.score(g.test_idx), reference=acc_poisoned,
                                                       extra={"clean": clean})}


#: The speed claims' graph: a Chung-Lu power-law graph of about 1M edges (n = 100k, F = 64, 5 classes, 2 hops,
#: 10 % training nodes), the largest the README's repro table runs in seconds on 2 cores.
SPEED_GRAPH = {"n": 100_000, "m": 1_000_000, "features": 64, "classes": 5, "signal": 0.3}
#: single-edge requests timed per seed (their median), retrainings timed per seed (their median), the batch
SPEED_REQUESTS, SPEED_RETRAINS, SPEED_BATCH = 20, 2, 5000
#: the paper rung's unlearner on ogbn-papers100M (the paper's settings for it) and its retrainings per seed (1.91 h
#: each in the paper)
PAPER_UNLEARNER, PAPER_RETRAINS = {"lam": 1e-8, "sigma": 5.0, "r_max": 5e-9}, 1
#: a smoke run of the speed claims (``iclr25 claims --smoke``): a small power-law graph, 2 requests, 1 retraining,
#: a batch of 50 edges
SMOKE_GRAPH, SMOKE_SIZES = {"n": 2000, "m": 20_000, "features": 16, "classes": 5, "signal": 0.3}, (2, 1, 50)


def _paper_data() -> str:
    """The user's ogbn-papers100M folder for the paper rung, checked before any work (one line when missing)."""
    import os
    from pathlib import Path

    from .streaming import GRAPH_FILES

    folder = os.environ.get(PAPER_DATA_ENV, "").strip()
    if not folder:
        raise ValueError(f"rung 'paper' needs ogbn-papers100M: set ${PAPER_DATA_ENV} to a folder of "
                         f"{', '.join(GRAPH_FILES)} (see iclr25 claims scalegun --rung paper --estimate)")
    missing = [f for f in GRAPH_FILES if not (Path(folder) / f).is_file()]
    if missing:
        raise ValueError(f"${PAPER_DATA_ENV}={folder}: missing {', '.join(missing)} (rung 'paper' reads "
                         f"{', '.join(GRAPH_FILES)})")
    return folder


def _speed_graph(seed: int, rung: str) -> tuple[Any, dict[str, Any], tuple[int, int, int]]:
    """The speed claims' graph, the unlearner's settings and (single requests, retrainings, batch) at ``rung``;
    the paper rung reads the user's ogbn-papers100M folder (``$ICLR25_SCALEGUN_PAPERS100M``)."""
    from . import datasets
    from .streaming import load_graph_files

    s, sizes, extra = SPEED_GRAPH, (SPEED_REQUESTS, SPEED_RETRAINS, SPEED_BATCH), {"sigma": 0.1}
    if smoke_run():
        s, sizes = SMOKE_GRAPH, SMOKE_SIZES
    elif rung == "paper":
        return (load_graph_files(_paper_data(), mmap=True), PAPER_UNLEARNER,
                (SPEED_REQUESTS, PAPER_RETRAINS, SPEED_BATCH))
    g = datasets.powerlaw(s["n"], s["m"], s["features"], s["classes"], seed=seed, signal=s["signal"])
    return g, extra, sizes


def _cpu_timed(fn: Any, *args: Any, device: Any = None) -> tuple[Any, float]:
    """``fn(*args)`` and its CPU seconds; with the model on an accelerator, wall seconds instead (its work is not
    the process's CPU time; every request ends by copying its bounds to the host, so the GPU is done by then)."""
    import time

    wall = device is not None and device.type != "cpu"
    clock = time.perf_counter if wall else time.process_time
    t0 = clock()
    out = fn(*args)
    return out, clock() - t0


@REGISTRY.measures(
    Claim("unlearning-10x-faster-than-retraining", kind="main", rungs=("repro", "paper"),
          statement="certified unlearning of a request is an order of magnitude faster than retraining, at the "
                    "same accuracy and within the (1, 1e-4) certificate",
          paper="abstract: 5,000 random edges unlearned in 20 s vs 1.91 h retraining on ogbn-papers100M "
                "(1.6B edges; 344x); reduced scale: single-edge requests on a 1M-edge power-law graph, >= 10x "
                "(the scale-down the paper notes fix before any run)",
          metric="log10(retraining CPU s / ScaleGUN CPU s per request), medians of 2 retrainings and 20 "
                 "single-edge requests; alive only if no retrain was triggered, the budget held and the accuracy "
                 "is within 1 point of retraining",
          threshold=1.0, direction="higher", rule="every_seed", margin=0.0,
          note="threshold 10x fixed in advance (paper notes, reduced-scale check 5); margin 0 below max_margin at "
               "calibration seeds 100-104 of the repro rung (claims-calibration-repro.json: max_margin 0.048)"),
    Claim("batch-5000-faster-than-retraining", kind="main", rungs=("repro", "paper"), expect="fails",
          ladder="README.md#the-5000-edge-batch-ladder",
          statement="a 5,000-random-edge request is unlearned faster than retraining (the abstract's headline, "
                    "read at its weakest: any speed-up)",
          paper="abstract: 20 s vs 1.91 h (344x) on 1.6B edges",
          metric="log10(retraining CPU s / ScaleGUN CPU s) for one 5,000-edge request on the 1M-edge graph",
          threshold=0.0, direction="higher", rule="every_seed", margin=0.0,
          note="fails at 1M edges: 5,000 edges' two-hop neighbourhoods cover most of a 100k-node graph (README "
               "ladder: 0.5x at 1M, 1.2x at 20M edges; ablation N2/n)"),
)
def _speed(seed: int, rung: str) -> dict[str, Measurement]:
    from .model import model_device
    from .unlearner import CertifiedUnlearner

    _check_rung(rung)
    dev = model_device(default_device())
    g, settings, (n_single, n_retrains, n_batch) = _speed_graph(seed, rung)
    kw = dict(epsilon=1.0, delta=1e-4, **settings, seed=seed, device=dev)
    order = np.random.default_rng(seed).permutation(g.n_edges)
    single = g.edges[order[:n_single]]
    batch = g.edges[order[n_single:n_single + n_batch]]
    sg = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, **kw).fit()
    recs, t_single = [], []
    for e in single:
        rec, t = _cpu_timed(sg.unlearn_edges, e[None, :], device=dev)
        recs.append(rec)
        t_single.append(t)
    rt = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, mode="retrain", **kw).fit()
    t_retrain = [_cpu_timed(rt.unlearn_edges, e[None, :], device=dev)[1] for e in single[:n_retrains]]
    # accuracy of retraining from scratch on the same edited graph (exact embeddings, fresh noise)
    ref = CertifiedUnlearner(sg.current_graph(), sg.current_features(), g.y, g.train_idx, standardize=False,
                             mode="retrain", **{**kw, "seed": seed + 1}).fit()
    acc, acc_ref = sg.score(g.test_idx), ref.score(g.test_idx)
    certified = sg.ledger.n_retrains == 0 and max(r.budget_used for r in recs) <= 1.0
    rec_b, t_batch = _cpu_timed(sg.unlearn_edges, batch, device=dev)
    retrain = float(np.median(t_retrain))
    one = float(np.median(t_single))
    extra = {"scalegun_cpu_s": one, "retrain_cpu_s": retrain, "accuracy": acc, "retrained_accuracy": acc_ref,
             "max_budget_used": float(max(r.budget_used for r in recs)), "retrains": sg.ledger.n_retrains}
    alive = bool(certified and abs(acc - acc_ref) <= 0.01)
    return {"unlearning-10x-faster-than-retraining": Measurement(float(np.log10(retrain / one)), extra=extra,
                                                                 alive=alive),
            "batch-5000-faster-than-retraining": Measurement(
                float(np.log10(retrain / t_batch)), alive=bool(alive and rec_b.budget_used <= 1.0),
                extra={"batch_cpu_s": t_batch, "retrain_cpu_s": retrain, "budget_used": rec_b.budget_used,
                       "retrained_in_request": bool(rec_b.retrained)})}


#: The ``locality`` rung: the 5,000-edge batch on citation-like graphs (:func:`iclr25.scalegun.citation.citation_files`,
#: fitted to ogbn-arxiv's statistics) of about this many edges, F = 16 features, 5 classes, the mapped CSR path, the
#: graph's generation outside the timed part. 0.6.0 decided it at 25M edges (9 GiB then); 217 B/edge of peak growth
#: at 25M (``docs/locality/claims.json``) predicts ~104M edges in 24 GiB less 2 GB kept free, so the rung is the
#: issue's 100M edges, run alone on the machine. A smoke run: 50,000 edges and a 500-edge batch.
LOCALITY_EDGES, LOCALITY_FEATURES, LOCALITY_SMOKE = 100_000_000, 16, (50_000, 500)


@REGISTRY.measures(
    Claim("batch-5000-faster-than-retraining-citation", kind="main", rungs=("locality",), expect="fails",
          ladder="EVIDENCE.md#the-5000-edge-batch-on-citation-like-graphs",
          statement="a 5,000-random-edge request is unlearned faster than retraining on a citation-like graph "
                    "(ogbn-arxiv's degree, clustering and locality) at the largest size the mapped path fits",
          paper="abstract: 5,000 random edges in 20 s vs 1.91 h retraining (344x) on ogbn-papers100M",
          metric="log10(retraining CPU s / ScaleGUN CPU s) for one 5,000-edge request on a 100M-edge citation-like "
                 "graph (median of 2 retrainings); alive only if the request neither retrained nor exceeded the budget",
          threshold=0.0, direction="higher", rule="every_seed", margin=0.0,
          note="threshold 0 (any speed-up) as batch-5000-faster-than-retraining; no margin to calibrate for a "
               "timing beyond that. Direction checked first at calibration seed 100 (0.1M and 4.8M edges: "
               "retraining / batch 0.27 and 0.61, the batch's two-hop ball 100 % and 99 % of the nodes), so the "
               "rule was written as a declared fail before the ladder (seeds 100-101, 1M-10M edges) and seeds 0-2"),
)
def _locality(seed: int, rung: str) -> dict[str, Measurement]:
    import tempfile

    from .citation import citation_files, locality_cell

    if rung != "locality":
        raise ValueError(f"rung must be 'locality' for this claim, got {rung!r}")
    m, batch = (LOCALITY_SMOKE if smoke_run() else (LOCALITY_EDGES, SPEED_BATCH))
    n = int(round(2 * m / 13.77))
    with tempfile.TemporaryDirectory(prefix="scalegun-citation-") as d:
        citation_files(d, n, LOCALITY_FEATURES, 5, seed=seed)
        c = locality_cell(d, seed, batch=batch, retrains=2, device=default_device())
    alive = bool(not c["retrained_in_request"] and c["budget_used"] <= 1.0)
    extra = {k: c[k] for k in ("edges", "nodes", "batch_s", "retrain_s", "N1_frac", "N2_frac", "rows_changed_fraction",
                               "budget_used", "rss_growth_bytes_per_edge", "peak_rss_bytes", "fit_s")}
    return {"batch-5000-faster-than-retraining-citation": Measurement(float(np.log10(c["retrain_s"] / c["batch_s"])),
                                                                      extra=extra, alive=alive)}
