"""The rewiring baselines of the paper: SDRF, FoSR, BORF and DIGL, each ``f(edge_index, *, seed=0, ...)``.

All take a symmetric ``(2, E)`` ``edge_index`` and return the same :class:`~iclr25.piorf.Rewiring` as
:func:`~iclr25.piorf.rewire`; unlike PIORF they look at topology only, so they run once per mesh. Defaults are
those of the PIORF reference preprocessing: SDRF 10 loops, tau 1, no removal; FoSR 20 iterations; BORF 10
batches adding 4 and removing 2 edges with alpha=0 curvature; DIGL personalised PageRank alpha 0.1,
threshold 0.04.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from iclr25.utils.seeding import check_seed

from .curvature import _bfc_edge, _orc_edges, adjacency_sets
from .graph import as_edge_index, edge_keys, undirected_edges
from .rewiring import Rewiring, from_edge_sets

__all__ = ["sdrf", "fosr", "borf", "digl", "BASELINES"]


def _positive_int(value: Any, name: str, *, allow_zero: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < (0 if allow_zero else 1):
        raise ValueError(f"{name} must be an integer >= {0 if allow_zero else 1}, got {value!r}")
    return int(value)


def sdrf(edge_index: Any, *, loops: int = 10, tau: float = 1.0, remove: bool = False, removal_bound: float = 0.5,
         seed: int = 0) -> Rewiring:
    """Stochastic discrete Ricci flow with balanced Forman curvature.

    Each loop takes the edge :math:`(i,j)` of lowest curvature, scores every candidate :math:`(k,l)`,
    :math:`k\\in B_1(i), l\\in B_1(j)`, by the gain :math:`x_{kl} = \\mathrm{Ric}'(i,j) - \\mathrm{Ric}(i,j)` after
    adding it, and adds one drawn with probability :math:`\\mathrm{softmax}(\\tau x)`; with ``remove`` the edge
    of highest curvature is then removed if it exceeds ``removal_bound``.

    References
    ----------
    Topping et al., ICLR 2022, Alg. 1.
    """
    seed = check_seed(seed)
    loops = _positive_int(loops, "loops")
    if not np.isfinite(tau) or tau <= 0:
        raise ValueError(f"tau must be a positive number, got {tau!r}")
    ei, n = as_edge_index(edge_index)
    rng = np.random.default_rng(seed)
    adj = adjacency_sets(ei, n)
    pairs = {tuple(p) for p in undirected_edges(ei).tolist()}
    added: list[tuple[int, int]] = []
    for _ in range(loops):
        edges = sorted(pairs)
        ric = np.array([_bfc_edge(adj, i, j) for i, j in edges])
        i, j = edges[int(np.argmin(ric))]
        base = float(ric.min())
        cands, gains = [], []
        for k in adj[i] | {i}:
            for m in adj[j] | {j}:
                if k == m or m in adj[k]:
                    continue
                adj[k].add(m)
                adj[m].add(k)
                gains.append(_bfc_edge(adj, i, j) - base)
                adj[k].discard(m)
                adj[m].discard(k)
                cands.append((min(k, m), max(k, m)))
        if cands:
            g = tau * np.array(gains)
            p = np.exp(g - g.max())
            k, m = cands[int(rng.choice(len(cands), p=p / p.sum()))]
            adj[k].add(m)
            adj[m].add(k)
            pairs.add((k, m))
            added.append((k, m))
        if remove:
            edges = sorted(pairs)
            ric = np.array([_bfc_edge(adj, a, b) for a, b in edges])
            top = int(np.argmax(ric))
            if ric[top] > removal_bound:
                a, b = edges[top]
                adj[a].discard(b)
                adj[b].discard(a)
                pairs.discard((a, b))
    final = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)
    return from_edge_sets(ei, final, n, "sdrf", np.array(added, dtype=np.int64).reshape(-1, 2))


def fosr(edge_index: Any, *, iterations: int = 20, power_iterations: int = 50, seed: int = 0) -> Rewiring:
    """First-order spectral rewiring: add the edges that raise the spectral gap most to first order.

    With :math:`x` the eigenvector of :math:`D^{-1/2}AD^{-1/2}` of its second-largest eigenvalue (kept by
    power iteration orthogonal to :math:`D^{1/2}\\mathbf 1`), each iteration adds the non-edge minimising
    :math:`x_u x_v / \\sqrt{d_u d_v}`, updates the degrees and takes one more power step.

    References
    ----------
    Karhadkar, Banerjee, Montúfar, "FoSR: First-order spectral rewiring for addressing oversquashing in GNNs",
    ICLR 2023, Alg. 1.
    """
    seed = check_seed(seed)
    iterations = _positive_int(iterations, "iterations")
    power_iterations = _positive_int(power_iterations, "power_iterations")
    ei, n = as_edge_index(edge_index)
    A = np.zeros((n, n))
    A[ei[0], ei[1]] = 1.0
    deg = A.sum(axis=1)
    if np.any(deg == 0):
        raise ValueError("edge_index must have no isolated nodes for FoSR")
    x = np.random.default_rng(seed).uniform(-1.0, 1.0, n)

    def power_step(x: np.ndarray) -> np.ndarray:
        sq = np.sqrt(deg)
        x = x - (x @ sq) * sq / deg.sum()  # remove the top eigenvector D^{1/2} 1
        y = x + (A @ (x / sq)) / sq  # (I + D^{-1/2} A D^{-1/2}) x keeps the spectrum positive
        return y / np.linalg.norm(y)

    for _ in range(power_iterations):
        x = power_step(x)
    added = []
    for _ in range(iterations):
        y = x / np.sqrt(deg)
        score = np.outer(y, y)
        score[A > 0] = np.inf
        np.fill_diagonal(score, np.inf)
        u, v = np.unravel_index(int(np.argmin(score)), score.shape)
        if not np.isfinite(score[u, v]):
            break
        A[u, v] = A[v, u] = 1.0
        deg[u] += 1
        deg[v] += 1
        added.append((min(u, v), max(u, v)))
        x = power_step(x)
    final = np.concatenate([undirected_edges(ei), np.array(added, dtype=np.int64).reshape(-1, 2)])
    return from_edge_sets(ei, final, n, "fosr", np.array(added, dtype=np.int64).reshape(-1, 2))


def borf(edge_index: Any, *, iterations: int = 10, n_add: int = 4, n_remove: int = 2, alpha: float = 0.0,
         seed: int = 0) -> Rewiring:
    """Batch Ollivier-Ricci flow: per iteration, recompute curvature; at each of the ``n_add`` most negative
    edges add the pair that carries the most mass in its optimal transport plan; remove the ``n_remove`` most
    positive edges.

    References
    ----------
    Nguyen et al., "Revisiting over-smoothing and over-squashing using Ollivier-Ricci curvature", ICML 2023,
    Alg. 1 (BORF).
    """
    check_seed(seed)
    iterations = _positive_int(iterations, "iterations")
    n_add = _positive_int(n_add, "n_add", allow_zero=True)
    n_remove = _positive_int(n_remove, "n_remove", allow_zero=True)
    if not 0 <= alpha < 1:
        raise ValueError(f"alpha must be in [0, 1), got {alpha!r}")
    ei0, n = as_edge_index(edge_index)
    ei = ei0
    added: list[tuple[int, int]] = []
    for _ in range(iterations):
        pairs = undirected_edges(ei)
        kappa, _ = _orc_edges(ei, n, pairs, alpha)
        order = np.argsort(kappa, kind="stable")
        worst = order[:n_add]
        _, plans = _orc_edges(ei, n, pairs[worst], alpha, plans_for=np.arange(len(worst)))
        keys = set(edge_keys(pairs[:, 0], pairs[:, 1], n).tolist())
        new = []
        for e in range(len(worst)):
            sx, sy, plan = plans[e]
            flat = np.argsort(-plan, axis=None, kind="stable")
            for f in flat:
                u, v = int(sx[f // plan.shape[1]]), int(sy[f % plan.shape[1]])
                if plan.flat[f] <= 0:
                    break
                a, b = min(u, v), max(u, v)
                if a != b and a * n + b not in keys:
                    keys.add(a * n + b)
                    new.append((a, b))
                    break
        drop = order[::-1][:n_remove] if n_remove else np.zeros(0, dtype=np.int64)
        keep = np.ones(len(pairs), dtype=bool)
        keep[drop] = False
        final = np.concatenate([pairs[keep], np.array(new, dtype=np.int64).reshape(-1, 2)])
        added += new
        ei = as_edge_index(np.concatenate([final.T, final.T[::-1]], axis=1), n)[0]
    return from_edge_sets(ei0, undirected_edges(ei), n, "borf", np.array(added, dtype=np.int64).reshape(-1, 2))


def digl(edge_index: Any, *, alpha: float = 0.1, eps: float = 0.04, seed: int = 0) -> Rewiring:
    """Graph diffusion (DIGL): personalised-PageRank diffusion, then threshold sparsification.

    .. math::

        S = \\alpha\\,\\big(I - (1-\\alpha)\\,\\tilde D^{-1/2}\\tilde A\\tilde D^{-1/2}\\big)^{-1}, \\quad
        \\tilde A = A + I, \\qquad E' = \\{(i, j): i \\ne j,\\ S_{ij} \\ge \\varepsilon\\}

    (dense; meant for meshes of a few thousand nodes).

    References
    ----------
    Gasteiger, Weißenberger, Günnemann, "Diffusion improves graph learning", NeurIPS 2019, Sec. 3-4.
    """
    check_seed(seed)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if not eps > 0:
        raise ValueError(f"eps must be positive, got {eps!r}")
    ei, n = as_edge_index(edge_index)
    A = np.eye(n)
    A[ei[0], ei[1]] = 1.0
    d = 1.0 / np.sqrt(A.sum(axis=1))
    T = d[:, None] * A * d[None, :]
    S = alpha * np.linalg.inv(np.eye(n) - (1.0 - alpha) * T)
    S = 0.5 * (S + S.T)
    i, j = np.nonzero(np.triu(S >= eps, k=1))
    return from_edge_sets(ei, np.stack([i, j], axis=1), n, "digl")


#: Every baseline by name, each ``f(edge_index, *, seed=0, **options) -> Rewiring``.
BASELINES: dict[str, Callable[..., Rewiring]] = {"sdrf": sdrf, "fosr": fosr, "borf": borf, "digl": digl}
