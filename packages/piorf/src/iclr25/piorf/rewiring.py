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
``partner="gradient"`` (the paper's abstract: "high-velocity-gradient nodes")
    :math:`r(s) = \\arg\\max_{j \\ne s} g_j` with the mesh velocity gradient
    :math:`g_j = \\operatorname{mean}_{k \\in N(j)} \\|v_k - v_j\\| / \\|x_k - x_j\\|` (:func:`velocity_gradient`).

``top_k > 1`` spreads the partners: the :math:`i`-th bottleneck node (lowest curvature first) takes the
:math:`(i \\bmod k)`-th best partner of its rule instead of the best, so the edges meet at :math:`k` nodes per
rule side instead of one or two hubs (``top_k=1`` is the paper's rule).

Added edges that already exist, self-loops and duplicates are dropped, so at most :math:`|S|` undirected
edges are added; the mesh edges are kept. :class:`Rewirer` holds the per-mesh part (the bottleneck set, the
sorted mesh edges) and rewires one velocity field per call; :func:`rewire` is a one-shot call of it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from iclr25.utils.seeding import check_seed

from .graph import as_edge_index, edge_keys, undirected_edges

__all__ = ["Rewiring", "Rewirer", "rewire", "bottleneck_nodes", "default_projection", "velocity_gradient",
           "PARTNER_RULES"]

PARTNER_RULES = ("feature-difference", "speed", "gradient")


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


def velocity_gradient(edge_index: np.ndarray, velocity: np.ndarray, pos: np.ndarray | None = None) -> np.ndarray:
    """Mesh velocity-gradient magnitude :math:`g_i = \\operatorname{mean}_{j\\in N(i)} \\|v_j - v_i\\| /
    \\|x_j - x_i\\|` (edge lengths 1 without ``pos``), vectorised over the ``(2, E)`` symmetric edges."""
    src, dst = edge_index[0], edge_index[1]
    v = np.asarray(velocity, dtype=np.float64)
    dv = np.sqrt(np.sum((v[src] - v[dst]) ** 2, axis=1))
    if pos is not None:
        dv = dv / np.maximum(np.sqrt(np.sum((pos[src] - pos[dst]) ** 2, axis=1)), 1e-12)
    n = len(v)
    return np.bincount(dst, dv, minlength=n) / np.maximum(np.bincount(dst, minlength=n), 1)


def _pick_spread(order: np.ndarray, bottleneck: np.ndarray, k: int) -> np.ndarray:
    """Row ``i`` of ``order`` (candidates best first): its ``(i mod k)``-th entry that is not ``bottleneck[i]``."""
    ok = order != bottleneck[:, None]
    rank = np.cumsum(ok, axis=1) - 1
    want = (np.arange(len(bottleneck)) % k)[:, None]
    return order[np.arange(len(bottleneck)), np.argmax(ok & (rank == want), axis=1)]


class Rewirer:
    """PIORF for one mesh: the bottleneck set is fixed, the partners are re-chosen from each velocity field.

    ``Rewirer(edge_index, node_curvature, ...)(velocity)`` equals ``rewire(edge_index, node_curvature,
    velocity, ...)``; the training loop and the mechanism task build one per mesh and call it every step.
    Parameters as in :func:`rewire`.
    """

    def __init__(self, edge_index: Any, node_curvature: Any, *, ratio: float = 0.03,
                 partner: str = "feature-difference", top_k: int = 1, projection: Any = None, pos: Any = None,
                 dim: int = 2, seed: int = 0) -> None:
        seed = check_seed(seed)
        if partner not in PARTNER_RULES:
            raise ValueError(f"partner must be one of {PARTNER_RULES}, got {partner!r}")
        gamma = np.asarray(node_curvature)
        if gamma.ndim != 1:
            raise ValueError(f"node_curvature must be a 1-D array of one value per node, got shape {gamma.shape}")
        self.edge_index, self.n_nodes = as_edge_index(edge_index, gamma.size if gamma.size else None)
        self.bottleneck = bottleneck_nodes(gamma, ratio)
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or not 1 <= top_k < self.n_nodes:
            raise ValueError(f"top_k must be an integer in [1, {self.n_nodes - 1}], got {top_k!r}")
        self.partner, self.top_k = partner, int(top_k)
        self.pos = None
        if pos is not None:
            self.pos = np.asarray(pos, dtype=np.float64)
            if self.pos.ndim != 2 or len(self.pos) != self.n_nodes or not np.all(np.isfinite(self.pos)):
                raise ValueError(f"pos must be a finite ({self.n_nodes}, dim) array, got shape {np.shape(pos)}")
        self.projection = None
        if partner == "feature-difference":
            w = default_projection(dim, seed=seed) if projection is None else np.asarray(projection, float)
            if w.ndim != 1 or not np.all(np.isfinite(w)):
                raise ValueError(f"projection must be a finite vector of shape (d,), got {w.shape}")
            self.projection = w
        # sorted: the membership test of the added edges is a searchsorted
        self._keys = np.sort(edge_keys(self.edge_index[0], self.edge_index[1], self.n_nodes))

    def _velocity(self, velocity: Any) -> np.ndarray:
        v = np.asarray(velocity)
        if v.dtype == object or not (np.issubdtype(v.dtype, np.number)
                                     and not np.issubdtype(v.dtype, np.complexfloating)):
            raise TypeError(f"velocity must be a real array, got dtype {v.dtype}")
        if v.ndim == 1:
            v = v[:, None]
        if v.ndim != 2 or v.shape[0] != self.n_nodes or v.shape[1] < 1:
            raise ValueError(f"velocity must have shape ({self.n_nodes}, d), one row per node, got "
                             f"{np.shape(velocity)}")
        if not np.all(np.isfinite(v)):
            raise ValueError("velocity must be finite (no NaN or inf)")
        if self.projection is not None and self.projection.shape != (v.shape[1],):
            raise ValueError(f"projection must be a finite vector of shape ({v.shape[1]},), got "
                             f"{self.projection.shape}")
        return v

    def partners(self, velocity: Any) -> np.ndarray:
        """The partner of every bottleneck node for this velocity field (vectorised)."""
        v = self._velocity(velocity)
        S, k = self.bottleneck, self.top_k
        if self.partner == "feature-difference":
            f = v @ self.projection
            by_f = np.argsort(f, kind="stable")
            # argmax_j |f_j - f_s| (and the next k-1) lie among the k smallest and the k largest f
            cand = np.unique(np.concatenate([by_f[:k + 1], by_f[-(k + 1):]]))
            d = np.abs(f[cand][None, :] - f[S][:, None])
            order = cand[np.argsort(-d, axis=1, kind="stable")]  # ties: the smaller node id
            return _pick_spread(order, S, k)
        if self.partner == "speed":
            score = np.sqrt(np.sum(v.astype(np.float64) ** 2, axis=1))
        else:
            score = velocity_gradient(self.edge_index, v, self.pos)
        top = np.argsort(-score, kind="stable")[:k + 1]
        return _pick_spread(np.broadcast_to(top, (len(S), len(top))), S, k)

    def __call__(self, velocity: Any) -> Rewiring:
        """Rewire for ``velocity`` ``(N, d)``: the mesh edges plus ``(s, r(s))`` and ``(r(s), s)``."""
        S, n = self.bottleneck, self.n_nodes
        if len(S) == 0:
            self._velocity(velocity)
            a = b = np.zeros(0, dtype=np.int64)
        else:
            a, b = S, self.partners(velocity)
            ok = a != b
            a, b = a[ok], b[ok]
            key = edge_keys(np.minimum(a, b), np.maximum(a, b), n)
            _, first = np.unique(key, return_index=True)
            first = np.sort(first)
            a, b, key = a[first], b[first], key[first]
            keys = self._keys
            pos = np.minimum(np.searchsorted(keys, key), max(keys.size - 1, 0))
            fresh = ~(keys[pos] == key) if keys.size else np.ones(len(key), dtype=bool)
            a, b = a[fresh], b[fresh]
        ei = self.edge_index
        out = np.concatenate([ei, np.stack([a, b]), np.stack([b, a])], axis=1)
        mask = np.concatenate([np.zeros(ei.shape[1], dtype=bool), np.ones(2 * len(a), dtype=bool)])
        suffix = "" if self.top_k == 1 else f"/top{self.top_k}"
        return Rewiring(out, mask, np.stack([a, b], axis=1), np.zeros((0, 2), dtype=np.int64), S,
                        f"piorf/{self.partner}{suffix}")


def rewire(edge_index: Any, node_curvature: Any, velocity: Any, *, ratio: float = 0.03,
           partner: str = "feature-difference", top_k: int = 1, projection: Any = None, pos: Any = None,
           seed: int = 0) -> Rewiring:
    """Rewire a mesh graph with PIORF: join each bottleneck node to a partner chosen from the velocity field.

    .. math::

        S = \\operatorname{argsort}(\\gamma)_{1..\\lfloor rN\\rfloor}, \\qquad
        E' = E \\cup \\{(s, r(s)), (r(s), s) : s \\in S\\}, \\qquad
        r(s) = \\arg\\max_j |w^\\top v_j - w^\\top v_s| \\ \\text{or}\\ \\arg\\max_{j\\ne s}\\|v_j\\|
        \\ \\text{or}\\ \\arg\\max_{j\\ne s} g_j.

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
        ``"feature-difference"`` (default, the reference code), ``"speed"`` (the paper's text) or
        ``"gradient"`` (the abstract's velocity-gradient nodes).
    top_k
        Spread the partners over the ``top_k`` best candidates (round robin); 1 is the paper's rule.
    projection
        ``(d,)`` projection ``w`` of the feature-difference rule; default :func:`default_projection` of ``seed``.
    pos
        ``(N, dim)`` node positions for the gradient rule (hop lengths 1 without them).
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
    v = np.asarray(velocity)
    dim = v.shape[1] if v.ndim == 2 and v.shape[1] > 0 else 1
    return Rewirer(edge_index, node_curvature, ratio=ratio, partner=partner, top_k=top_k, projection=projection,
                   pos=pos, dim=dim, seed=seed)(velocity)


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
