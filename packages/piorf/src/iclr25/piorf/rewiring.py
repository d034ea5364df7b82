"""PIORF: physics-informed rewiring of a mesh graph at bottleneck nodes of lowest Ollivier-Ricci curvature.

Given the node curvature :math:`\\gamma` of the mesh (:func:`~iclr25.piorf.ollivier_ricci`), the bottleneck
set :math:`S` holds the :math:`\\lfloor rN \\rfloor` nodes of lowest :math:`\\gamma` (``ratio`` :math:`r`,
0.03 in the paper). Every :math:`s\\in S` is joined in both directions to one partner chosen from the current
velocity field :math:`v`:

``partner="feature-difference"`` (default; the reference code's rule)
    :math:`f_i = w^\\top v_i` with a fixed random projection :math:`w` (the code's untrained
    ``snt.Linear(1)``: its output only feeds an argmax, so it never receives a gradient) and
    :math:`r(s) = \\arg\\max_j |f_j - f_s|`. With a scalar :math:`f` the partner is always the node of largest
    or of smallest :math:`f`, so all of :math:`S` meets at (at most) two hub nodes.
``partner="speed"`` (the paper's text and Fig. 1: "the highest velocity node")
    :math:`r(s) = \\arg\\max_{j \\ne s} \\|v_j\\|`.

Added edges that already exist, self-loops and duplicates are dropped, so at most :math:`|S|` undirected
edges are added; the mesh edges are kept.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from iclr25.utils.seeding import check_seed

from .graph import as_edge_index, edge_keys, undirected_edges

__all__ = ["Rewiring", "rewire", "bottleneck_nodes", "default_projection", "PARTNER_RULES"]

PARTNER_RULES = ("feature-difference", "speed")


@dataclasses.dataclass(frozen=True)
class Rewiring:
    """A rewired graph.

    Attributes
    ----------
    edge_index
        ``(2, E')`` symmetric edges: the kept input edges first (input order), then the added ones.
    long_range
        ``(E',)`` bool, True for edges that were not in the input graph.
    added
        ``(k, 2)`` added undirected edges (for PIORF: ``(bottleneck node, partner)``).
    removed
        ``(r, 2)`` removed undirected edges ``i < j``.
    bottleneck
        Node ids PIORF rewired at (lowest curvature first); empty for methods without such a set.
    method
        Name of the rewiring method.
    """

    edge_index: np.ndarray
    long_range: np.ndarray
    added: np.ndarray
    removed: np.ndarray
    bottleneck: np.ndarray
    method: str

    @property
    def n_added(self) -> int:
        return len(self.added)

    @property
    def mesh_edge_index(self) -> np.ndarray:
        """The kept input edges, ``(2, E_mesh)``."""
        return self.edge_index[:, ~self.long_range]


def _check_ratio(ratio: Any) -> float:
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float, np.floating)) or not 0 < ratio < 1:
        raise ValueError(f"ratio must be a number in (0, 1), got {ratio!r}")
    return float(ratio)


def bottleneck_nodes(node_curvature: Any, ratio: float = 0.03) -> np.ndarray:
    """The :math:`\\lfloor r N\\rfloor` nodes of lowest curvature, most negative first (stable for ties)."""
    ratio = _check_ratio(ratio)
    gamma = np.asarray(node_curvature)
    if gamma.ndim != 1 or gamma.size == 0:
        raise ValueError(f"node_curvature must be a non-empty 1-D array, got shape {gamma.shape}")
    if not np.issubdtype(gamma.dtype, np.number) or np.issubdtype(gamma.dtype, np.complexfloating):
        raise TypeError(f"node_curvature must be real numbers, got dtype {gamma.dtype}")
    if not np.all(np.isfinite(gamma)):
        raise ValueError("node_curvature must be finite (no NaN or inf)")
    return np.argsort(gamma, kind="stable")[: int(np.floor(ratio * gamma.size))]


def default_projection(dim: int, *, seed: int = 0) -> np.ndarray:
    """The fixed random projection of the feature-difference rule: ``N(0, 1/dim)`` entries, from ``seed``."""
    return np.random.default_rng(check_seed(seed)).normal(0.0, 1.0 / np.sqrt(dim), size=dim)


def partners(bottleneck: np.ndarray, velocity: np.ndarray, partner: str, projection: np.ndarray | None
             ) -> np.ndarray:
    """The partner of every bottleneck node (vectorised; the rules of the module docstring)."""
    if partner == "feature-difference":
        f = velocity @ projection
        hi, lo = int(np.argmax(f)), int(np.argmin(f))
        fs = f[bottleneck]
        d_hi, d_lo = np.abs(f[hi] - fs), np.abs(f[lo] - fs)
        # argmax_j |f_j - f_s| is attained at the max or the min of f; ties go to the smaller index
        pick_hi = (d_hi > d_lo) | ((d_hi == d_lo) & (hi <= lo))
        return np.where(pick_hi, hi, lo)
    speed = np.sqrt(np.sum(velocity.astype(np.float64) ** 2, axis=1))
    order = np.argsort(-speed, kind="stable")
    first, second = order[0], order[1] if len(order) > 1 else order[0]
    return np.where(bottleneck == first, second, first)


def _combine(ei: np.ndarray, n: int, new_pairs: np.ndarray, mesh_keys: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Append undirected ``new_pairs`` to ``ei`` without self-loops, duplicates or existing edges."""
    a, b = new_pairs[:, 0], new_pairs[:, 1]
    ok = a != b
    a, b = a[ok], b[ok]
    k = edge_keys(np.minimum(a, b), np.maximum(a, b), n)
    _, first = np.unique(k, return_index=True)
    first = np.sort(first)
    a, b, k = a[first], b[first], k[first]
    pos = np.minimum(np.searchsorted(mesh_keys, k), max(mesh_keys.size - 1, 0))
    fresh = ~(mesh_keys[pos] == k) if mesh_keys.size else np.ones(len(k), dtype=bool)
    a, b = a[fresh], b[fresh]
    added = np.stack([a, b], axis=1)
    new = np.concatenate([np.stack([a, b]), np.stack([b, a])], axis=1)
    out = np.concatenate([ei, new], axis=1)
    mask = np.concatenate([np.zeros(ei.shape[1], dtype=bool), np.ones(new.shape[1], dtype=bool)])
    return out, mask, added


def rewire(edge_index: Any, node_curvature: Any, velocity: Any, *, ratio: float = 0.03,
           partner: str = "feature-difference", projection: Any = None, seed: int = 0) -> Rewiring:
    """Rewire a mesh graph with PIORF: join each bottleneck node to a partner chosen from the velocity field.

    .. math::

        S = \\operatorname{argsort}(\\gamma)_{1..\\lfloor rN\\rfloor}, \\qquad
        E' = E \\cup \\{(s, r(s)), (r(s), s) : s \\in S\\}, \\qquad
        r(s) = \\arg\\max_j |w^\\top v_j - w^\\top v_s| \\ \\text{or}\\ \\arg\\max_{j\\ne s}\\|v_j\\|.

    Parameters
    ----------
    edge_index
        Symmetric ``(2, E)`` mesh edges (2-D or 3-D meshes alike).
    node_curvature
        ``(N,)`` node curvature, e.g. ``ollivier_ricci(edge_index).node``.
    velocity
        ``(N, d)`` current velocity (any ``d >= 1``).
    ratio
        Fraction of nodes rewired, in ``(0, 1)``; the paper uses 0.03.
    partner
        ``"feature-difference"`` (default, the reference code) or ``"speed"`` (the paper's text).
    projection
        ``(d,)`` projection ``w`` of the feature-difference rule; default :func:`default_projection` of ``seed``.
    seed
        Seed of the default projection.

    Returns
    -------
    Rewiring
        The rewired edges with a mask of the long-range ones.

    References
    ----------
    Yu et al., PIORF, ICLR 2025, Sec. 4 and Alg. 1; reference code ``CylinderFlowPIORF._build_graph``.

    Examples
    --------
    >>> import networkx as nx, numpy as np
    >>> from iclr25.piorf import ollivier_ricci, as_edge_index
    >>> ei, n = as_edge_index(nx.grid_2d_graph(10, 10))
    >>> rw = rewire(ei, ollivier_ricci(ei).node, np.random.default_rng(0).normal(size=(n, 2)), ratio=0.05)
    >>> rw.n_added <= 5, bool(rw.long_range.sum() == 2 * rw.n_added)
    (True, True)
    """
    seed = check_seed(seed)
    if partner not in PARTNER_RULES:
        raise ValueError(f"partner must be one of {PARTNER_RULES}, got {partner!r}")
    gamma = np.asarray(node_curvature)
    if gamma.ndim != 1:
        raise ValueError(f"node_curvature must be a 1-D array of one value per node, got shape {gamma.shape}")
    ei, n = as_edge_index(edge_index, gamma.size if gamma.size else None)
    S = bottleneck_nodes(gamma, ratio)
    v = np.asarray(velocity)
    if v.dtype == object or not (np.issubdtype(v.dtype, np.number) and not np.issubdtype(v.dtype, np.complexfloating)):
        raise TypeError(f"velocity must be a real array, got dtype {v.dtype}")
    if v.ndim == 1:
        v = v[:, None]
    if v.ndim != 2 or v.shape[0] != n or v.shape[1] < 1:
        raise ValueError(f"velocity must have shape ({n}, d), one row per node, got {np.shape(velocity)}")
    if not np.all(np.isfinite(v)):
        raise ValueError("velocity must be finite (no NaN or inf)")
    w = None
    if partner == "feature-difference":
        w = default_projection(v.shape[1], seed=seed) if projection is None else np.asarray(projection, float)
        if w.shape != (v.shape[1],) or not np.all(np.isfinite(w)):
            raise ValueError(f"projection must be a finite vector of shape ({v.shape[1]},), got {w.shape}")
    keys = edge_keys(ei[0], ei[1], n)
    r = partners(S, v, partner, w)
    out, mask, added = _combine(ei, n, np.stack([S, r], axis=1), keys)
    return Rewiring(out, mask, added, np.zeros((0, 2), dtype=np.int64), S, f"piorf/{partner}")


def from_edge_sets(original: np.ndarray, final_pairs: np.ndarray, n: int, method: str,
                   added_order: np.ndarray | None = None) -> Rewiring:
    """A :class:`Rewiring` from the input ``edge_index`` and the final undirected pairs (static baselines)."""
    orig_pairs = undirected_edges(original)
    ko = edge_keys(orig_pairs[:, 0], orig_pairs[:, 1], n)
    fp = np.sort(final_pairs, axis=1)
    kf = np.unique(edge_keys(fp[:, 0], fp[:, 1], n))
    removed_k = np.setdiff1d(ko, kf)
    added_k = np.setdiff1d(kf, ko)
    if added_order is not None:
        ao = np.sort(added_order, axis=1)
        ak = edge_keys(ao[:, 0], ao[:, 1], n)
        added_k = ak[np.isin(ak, added_k)]
    dk_u = edge_keys(np.minimum(original[0], original[1]), np.maximum(original[0], original[1]), n)
    keep = ~np.isin(dk_u, removed_k)
    kept = original[:, keep]
    a, b = added_k // n, added_k % n
    new = np.concatenate([np.stack([a, b]), np.stack([b, a])], axis=1)
    ei = np.concatenate([kept, new], axis=1)
    mask = np.concatenate([np.zeros(kept.shape[1], dtype=bool), np.ones(new.shape[1], dtype=bool)])
    return Rewiring(ei, mask, np.stack([a, b], axis=1), np.stack([removed_k // n, removed_k % n], axis=1),
                    np.zeros(0, dtype=np.int64), method)
