"""The paper's claims as the package checks them, decided over seeds (``iclr25.utils.claims``).

Each seed draws its own graph (a contextual SBM), its own request stream and its own noise. Rungs: ``"test"``
(the default test suite: 3,000-node CSBM, 100 edge + 20 node + 20 feature removals, 3 seeds) and ``"repro"``
(the same graphs with 200 + 50 + 50 removals, 5 seeds). Timing claims (update and total speed-ups) are machine
dependent and live in ``repro`` and the benchmarks, not here.

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

REGISTRY = ClaimRegistry("iclr25-scalegun", seeds={"test": (0, 1, 2), "repro": (0, 1, 2, 3, 4)})

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
    Claim("true-residual-below-data-bound",
          statement="the data-dependent bound is sound: the true gradient residual never exceeds it (Fig. 2)",
          paper="Fig. 2: true residual <= data-dependent bound for edge, node and feature removal",
          metric="max over requests and classes of true residual / data-dependent bound",
          threshold=1.0, direction="lower", rule="every_seed", margin=0.3,
          note="seeds 0-4 measured 0.10-0.32 at the test rung; margin 0.3 (ratio < 0.7), over twice the largest"),
    Claim("data-bound-below-worst-case",
          statement="the data-dependent bound is tighter than the worst-case bound (Fig. 2)",
          paper="Fig. 2: data-dependent bound <= worst-case bound",
          metric="log10 of max over requests of data-dependent bound / worst-case bound",
          threshold=0.0, direction="lower", rule="every_seed", margin=4.0,
          note="seeds 0-4 measured -8.75 to -8.62; margin 4 orders (value < -4), under half the measured gap"),
    Claim("certified-without-retraining",
          statement="under the default r_max rule the certificate holds over the whole stream without retraining",
          paper="(eps, delta) = (1, 1e-4) certified unlearning with rare retraining",
          metric="max over requests of data-dependent bound / budget sigma*eps/c(delta)",
          threshold=1.0, direction="lower", rule="every_seed", margin=0.8,
          note="seeds 0-4 used 2.2-3.1 % of the budget; margin 0.8 (at most 20 %), over 6x the largest"),
    Claim("accuracy-matches-retraining",
          statement="after unlearning, test accuracy is comparable to retraining from scratch on the edited graph",
          paper="comparable test accuracy to retraining (Tables 2-4)",
          metric="|test accuracy after unlearning - retrained| (points of accuracy, fraction)",
          threshold=0.01, direction="lower", rule="every_seed", margin=0.0,
          note="seeds 0-4 measured 0.0007-0.0067 (1-10 of 1,500 test nodes); the bound is the paper's "
               "'comparable' read as within one point, 1.5x the largest measured gap"),
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
    Claim("adversarial-edges-unlearned",
          statement="unlearning injected adversarial (inter-class) edges restores the accuracy they cost (Sec. 5.3)",
          paper="efficacy experiment: accuracy recovers after unlearning the adversarial edges",
          metric="test accuracy after unlearning the 10 % adversarial edges",
          baseline="the poisoned model (before unlearning)", direction="higher", rule="every_seed", margin=0.01,
          note="seeds 0-4: +0.028 to +0.060 (and equal to the clean model at every seed); margin 0.01, a "
               "third of the smallest gain"),
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
