"""The paper's claims as the package checks them, decided over seeds (``iclr25.utils.claims``).

Each seed draws its own graph (a contextual SBM), its own request stream and its own noise. Rungs: ``"test"``
(the default test suite: 3,000-node CSBM, 100 edge + 20 node + 20 feature removals, 3 seeds) and ``"repro"``
(the same graphs with 200 + 50 + 50 removals, 5 seeds). The abstract's timing headline is decided at ``repro``
only (a 1M-edge power-law graph per seed, CPU seconds):

- ``unlearning-10x-faster-than-retraining`` (main): single-edge requests >= 10x faster than retraining, alive only
  within the certificate, without a retrain and at the retrained model's accuracy to a point.
- ``batch-5000-faster-than-retraining`` (main, declared fail): a 5,000-edge request faster than retraining at all;
  the README's ladder (1M-20M edges) and locality ablation name the cause.

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

from iclr25.utils.claims import Claim, ClaimRegistry, Measurement

__all__ = ["REGISTRY", "STREAM", "certified_stream"]

REGISTRY = ClaimRegistry("iclr25-scalegun", seeds={"test": (0, 1, 2), "repro": (0, 1, 2, 3, 4)},
                         calibration={"test": tuple(range(100, 110)), "repro": tuple(range(100, 105))})

#: Requests per rung: single-edge, node and feature removals.
STREAM = {"test": (100, 20, 20), "repro": (200, 50, 50)}


def _check_rung(rung: str) -> None:
    if rung not in STREAM:
        raise ValueError(f"rung must be one of {sorted(STREAM)}, got {rung!r}")


@functools.lru_cache(maxsize=4)
def certified_stream(seed: int, rung: str) -> tuple[Any, Any, list]:
    """``(graph, unlearner, records)``: a 3,000-node CSBM (seed ``seed``), fitted at (eps, delta) = (1, 1e-4),
    sigma = 0.1 with auditing, after the rung's stream of edge, node and feature removals."""
    from . import datasets
    from .unlearner import CertifiedUnlearner

    _check_rung(rung)
    n_edges, n_nodes, n_feats = STREAM[rung]
    g = datasets.csbm(3000, 15000, 32, 4, seed=seed, homophily=0.6, signal=0.2)
    rng = np.random.default_rng(seed)
    edges = g.edges[rng.choice(g.n_edges, n_edges, replace=False)]
    picked = rng.choice(g.train_idx, n_nodes + n_feats, replace=False)
    u = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, epsilon=1.0, delta=1e-4, sigma=0.1, audit=True,
                           seed=seed).fit()
    recs = [u.unlearn_edges(e[None, :]) for e in edges]
    recs += [u.unlearn_nodes([a]) for a in picked[:n_nodes]]
    recs += [u.unlearn_features([a]) for a in picked[n_nodes:]]
    return g, u, recs


@REGISTRY.measures(
    Claim("true-residual-below-data-bound", kind="main",
          statement="the data-dependent bound is sound: the true gradient residual never exceeds it (Fig. 2)",
          paper="Fig. 2: true residual <= data-dependent bound for edge, node and feature removal",
          metric="max over requests and classes of true residual / data-dependent bound",
          threshold=1.0, direction="lower", rule="every_seed", margin=0.0,
          note="soundness decided as the paper states it (ratio <= 1 at every request, class and seed), no margin; "
               "calibration seeds 100-109 give ratios 0.05-0.89, max_margin 0.22 (claims-calibration.json). "
               "The earlier margin 0.3 exceeded that max_margin and failed at fresh seeds (ratio 0.92)"),
    Claim("data-bound-below-worst-case", kind="secondary",
          statement="the data-dependent bound is tighter than the worst-case bound (Fig. 2)",
          paper="Fig. 2: data-dependent bound <= worst-case bound",
          metric="log10 of max over requests of data-dependent bound / worst-case bound",
          threshold=0.0, direction="lower", rule="every_seed", margin=4.0,
          note="margin 4 orders (value < -4) below max_margin at calibration seeds 100-109 (claims-calibration.json)"),
    Claim("certified-without-retraining", kind="secondary",
          statement="under the default r_max rule the certificate holds over the whole stream without retraining",
          paper="(eps, delta) = (1, 1e-4) certified unlearning with rare retraining",
          metric="max over requests of data-dependent bound / budget sigma*eps/c(delta)",
          threshold=1.0, direction="lower", rule="every_seed", margin=0.8,
          note="margin 0.8 (at most 20 % of the budget) below max_margin at calibration seeds 100-109 (claims-calibration.json)"),
    Claim("accuracy-matches-retraining", kind="secondary",
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
                             standardize=False, sigma=0.1, seed=seed + 1).fit()
    acc, acc_ref = u.score(g.test_idx), ref.score(g.test_idx)
    return {"true-residual-below-data-bound": float(np.max(true / data)),
            "data-bound-below-worst-case": float(np.log10(np.max(data.max(axis=1) / worst))),
            "certified-without-retraining": float(max(max(r.data_bound) / r.budget for r in recs)),
            "accuracy-matches-retraining": Measurement(abs(acc - acc_ref), extra={"accuracy": acc,
                                                                                 "retrained": acc_ref})}


@REGISTRY.measures(
    Claim("adversarial-edges-unlearned", kind="secondary",
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
    g = datasets.csbm(2000, 10000, 16, 4, seed=seed + 3, homophily=0.9, signal=0.12)
    bad = datasets.adversarial_edges(g, 0.1, seed=seed + 3)
    poisoned = datasets.with_edges(g, bad)
    clean = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, sigma=0.1, seed=seed).fit().score(g.test_idx)
    u = CertifiedUnlearner(poisoned.adj, poisoned.X, g.y, g.train_idx, sigma=0.1, seed=seed).fit()
    acc_poisoned = u.score(g.test_idx)
    for batch in np.array_split(bad, 10):
        u.unlearn_edges(batch)
    return {"adversarial-edges-unlearned": Measurement(u.score(g.test_idx), reference=acc_poisoned,
                                                       extra={"clean": clean})}


#: The speed claims' graph: a Chung-Lu power-law graph of about 1M edges (n = 100k, F = 64, 5 classes, 2 hops,
#: 10 % training nodes), the largest the README's repro table runs in seconds on 2 cores.
SPEED_GRAPH = {"n": 100_000, "m": 1_000_000, "features": 64, "classes": 5, "signal": 0.3}
#: single-edge requests timed per seed (their median), retrainings timed per seed (their median), the batch
SPEED_REQUESTS, SPEED_RETRAINS, SPEED_BATCH = 20, 2, 5000


def _cpu_timed(fn: Any, *args: Any) -> tuple[Any, float]:
    import time

    t0 = time.process_time()
    out = fn(*args)
    return out, time.process_time() - t0


@REGISTRY.measures(
    Claim("unlearning-10x-faster-than-retraining", kind="main", rungs=("repro",),
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
    Claim("batch-5000-faster-than-retraining", kind="main", rungs=("repro",), expect="fails",
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
    from . import datasets
    from .unlearner import CertifiedUnlearner

    _check_rung(rung)
    s = SPEED_GRAPH
    g = datasets.powerlaw(s["n"], s["m"], s["features"], s["classes"], seed=seed, signal=s["signal"])
    kw = dict(epsilon=1.0, delta=1e-4, sigma=0.1, seed=seed)
    order = np.random.default_rng(seed).permutation(g.n_edges)
    single = g.edges[order[:SPEED_REQUESTS]]
    batch = g.edges[order[SPEED_REQUESTS:SPEED_REQUESTS + SPEED_BATCH]]
    sg = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, **kw).fit()
    recs, t_single = [], []
    for e in single:
        rec, t = _cpu_timed(sg.unlearn_edges, e[None, :])
        recs.append(rec)
        t_single.append(t)
    rt = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, mode="retrain", **kw).fit()
    t_retrain = [_cpu_timed(rt.unlearn_edges, e[None, :])[1] for e in single[:SPEED_RETRAINS]]
    # accuracy of retraining from scratch on the same edited graph (exact embeddings, fresh noise)
    ref = CertifiedUnlearner(sg.current_graph(), sg.current_features(), g.y, g.train_idx, standardize=False,
                             mode="retrain", **{**kw, "seed": seed + 1}).fit()
    acc, acc_ref = sg.score(g.test_idx), ref.score(g.test_idx)
    certified = sg.ledger.n_retrains == 0 and max(r.budget_used for r in recs) <= 1.0
    rec_b, t_batch = _cpu_timed(sg.unlearn_edges, batch)
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
