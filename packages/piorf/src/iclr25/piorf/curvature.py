"""Ollivier-Ricci curvature on exact optimal transport (POT ``ot.emd``) and balanced Forman curvature.

Ollivier-Ricci curvature of an edge ``x ~ y`` with the lazy uniform measures of GraphRicciCurvature's
default (``alpha``, ``base=1``, ``exp_power=2``, unit edge weights)

.. math::

    m_x = \\alpha\\,\\delta_x + \\frac{1-\\alpha}{d_x} \\sum_{u \\sim x} \\delta_u, \\qquad
    \\kappa(x, y) = 1 - \\frac{W_1(m_x, m_y)}{d(x, y)},

where :math:`W_1` is the exact transport cost with hop distances. Both supports are 1-hop balls around the
two ends of an edge, so every distance in the cost matrix is 0, 1, 2 (a common neighbour) or 3; the package
builds all cost matrices of a graph at once from sorted edge keys and solves one small exact transport
problem per edge. The node curvature is the mean over incident edges (GraphRicciCurvature's node
``ricciCurvature``), which PIORF sorts to find bottleneck nodes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .graph import as_edge_index, edge_keys, undirected_edges
from .rewiring import bottleneck_nodes

__all__ = ["Curvature", "ollivier_ricci", "balanced_forman"]


@dataclasses.dataclass(frozen=True)
class Curvature:
    """Edge and node curvature of an undirected graph.

    Attributes
    ----------
    edges
        ``(m, 2)`` undirected edges ``i < j``, sorted.
    edge
        ``(m,)`` curvature of each edge.
    node
        ``(n_nodes,)`` mean curvature of the edges at each node (0 for an isolated node).
    alpha
        The laziness of the measures (``nan`` for balanced Forman curvature).
    """

    edges: np.ndarray
    edge: np.ndarray
    node: np.ndarray
    alpha: float

    @property
    def n_nodes(self) -> int:
        return len(self.node)

    def bottleneck(self, ratio: float = 0.03) -> np.ndarray:
        """The ``floor(ratio * n_nodes)`` nodes of lowest curvature, most negative first (stable order)."""
        return bottleneck_nodes(self.node, ratio)


def _closed_csr(ei: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR of closed neighbourhoods: row ``u`` is ``[u, neighbours of u...]``; also the degrees."""
    deg = np.bincount(ei[0], minlength=n)
    indptr = np.concatenate([[0], np.cumsum(deg + 1)])
    indices = np.empty(indptr[-1], dtype=np.int64)
    indices[indptr[:-1]] = np.arange(n)
    # ei is sorted by source, so the neighbours of u are a contiguous run
    slot = np.arange(ei.shape[1]) - np.repeat(np.cumsum(deg) - deg, deg) + 1
    indices[indptr[ei[0]] + slot] = ei[1]
    return indptr, indices, deg


def _transport_problems(ei: np.ndarray, n: int, edges: np.ndarray):
    """Masses and cost matrices (flattened, concatenated) of every edge's transport problem."""
    indptr, indices, deg = _closed_csr(ei, n)
    keys1 = edge_keys(ei[0], ei[1], n)  # sorted: ei comes sorted from as_edge_index
    # pairs at distance <= 2: u, v with a common neighbour w (two-step walks u - w - v)
    starts, counts = indptr[ei[1]] + 1, deg[ei[1]]
    # for each directed edge (u -> w), every neighbour v of w
    rep = np.repeat(np.arange(ei.shape[1]), counts)
    offs = np.arange(rep.size) - np.repeat(np.cumsum(counts) - counts, counts)
    keys2 = np.unique(edge_keys(ei[0][rep], indices[starts[rep] + offs], n))
    x, y = edges[:, 0], edges[:, 1]
    ax, ay = deg[x] + 1, deg[y] + 1
    sizes = ax * ay
    off = np.concatenate([[0], np.cumsum(sizes)])
    e_of = np.repeat(np.arange(len(edges)), sizes)
    k = np.arange(off[-1]) - off[e_of]
    u = indices[indptr[x[e_of]] + k // ay[e_of]]
    v = indices[indptr[y[e_of]] + k % ay[e_of]]
    key = edge_keys(u, v, n)
    cost = np.full(key.size, 3.0)
    pos2 = np.minimum(np.searchsorted(keys2, key), keys2.size - 1)
    cost[keys2[pos2] == key] = 2.0
    pos1 = np.minimum(np.searchsorted(keys1, key), max(keys1.size - 1, 0))
    if keys1.size:
        cost[keys1[pos1] == key] = 1.0
    cost[u == v] = 0.0
    return indptr, indices, deg, ax, ay, off, cost


def _orc_edges(ei: np.ndarray, n: int, edges: np.ndarray, alpha: float, *, plans_for: np.ndarray | None = None
               ) -> tuple[np.ndarray, dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """Curvature of ``edges`` (each with ``d(x, y) = 1``); optionally the transport plans of some of them."""
    import ot

    indptr, indices, deg, ax, ay, off, cost = _transport_problems(ei, n, edges)
    kappa = np.empty(len(edges))
    want = set() if plans_for is None else {int(e) for e in plans_for}
    plans: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    # per-degree mass vectors are shared by every edge with that degree
    masses: dict[int, np.ndarray] = {}
    for d in np.unique(deg):
        m = np.full(d + 1, (1.0 - alpha) / d if d else 0.0)
        m[0] = alpha if d else 1.0
        masses[int(d)] = m
    solved: dict[tuple[int, int, bytes], float] = {}
    for e in range(len(edges)):
        mx, my = masses[int(ax[e]) - 1], masses[int(ay[e]) - 1]
        M = cost[off[e]:off[e + 1]].reshape(ax[e], ay[e])
        if e in want:
            plan = ot.emd(mx, my, M, check_marginals=False)
            sx = indices[indptr[edges[e, 0]]:indptr[edges[e, 0] + 1]]
            sy = indices[indptr[edges[e, 1]]:indptr[edges[e, 1] + 1]]
            plans[e] = (sx, sy, plan)
            kappa[e] = 1.0 - float(np.sum(plan * M))
            continue
        # Meshes repeat the same local problem many times. Permuting the neighbours of x (rows 1:) or of y
        # (columns 1:) leaves W1 unchanged, as they carry equal mass, so a sorted copy is an exact cache key.
        rows = M[1:]
        rows = rows[np.lexsort(rows.T[::-1])]
        Ms = np.vstack([M[:1], rows])
        cols = Ms[:, 1:]
        Ms = np.hstack([Ms[:, :1], cols[:, np.lexsort(cols[::-1])]])
        key = (int(ax[e]), int(ay[e]), Ms.astype(np.int8).tobytes())
        w = solved.get(key)
        if w is None:
            w = solved[key] = float(np.sum(ot.emd(mx, my, M, check_marginals=False) * M))
        kappa[e] = 1.0 - w
    return kappa, plans


def _node_mean(edges: np.ndarray, edge_value: np.ndarray, n: int) -> np.ndarray:
    total = np.bincount(edges[:, 0], edge_value, minlength=n) + np.bincount(edges[:, 1], edge_value, minlength=n)
    deg = np.bincount(edges.ravel(), minlength=n)
    return np.divide(total, deg, out=np.zeros(n), where=deg > 0)


def ollivier_ricci(graph: Any, *, alpha: float = 0.5, n_nodes: int | None = None) -> Curvature:
    """Ollivier-Ricci curvature of every edge and node of an unweighted graph.

    .. math::

        \\kappa(x, y) = 1 - W_1(m_x, m_y), \\quad
        m_x = \\alpha\\,\\delta_x + \\tfrac{1-\\alpha}{d_x}\\textstyle\\sum_{u\\sim x}\\delta_u,
        \\quad \\gamma_x = \\tfrac{1}{d_x}\\textstyle\\sum_{y\\sim x} \\kappa(x, y)

    with exact transport (``ot.emd``) under hop distances, the same quantity as GraphRicciCurvature's
    ``OllivierRicci(G, alpha=alpha, base=1, exp_power=2)`` on unit weights.

    Parameters
    ----------
    graph
        Symmetric ``(2, E)`` integer ``edge_index`` or an undirected :class:`networkx.Graph`.
    alpha
        Mass the measure keeps at the node, in ``[0, 1)``; PIORF uses 0.5, BORF 0.
    n_nodes
        Number of nodes, for graphs with isolated nodes of highest id.

    Returns
    -------
    Curvature
        ``edges`` (``i < j``), ``edge`` curvature, ``node`` mean curvature.

    References
    ----------
    Yu et al., PIORF, ICLR 2025, Sec. 3 (Eq. 1-2: Ollivier-Ricci curvature, node curvature); Ollivier (2009).

    Examples
    --------
    >>> import networkx as nx
    >>> round(float(ollivier_ricci(nx.cycle_graph(6)).edge[0]), 6)
    0.0
    """
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)) or not 0 <= alpha < 1:
        raise ValueError(f"alpha must be a number in [0, 1), got {alpha!r}")
    ei, n = as_edge_index(graph, n_nodes, name="graph")
    edges = undirected_edges(ei)
    if len(edges) == 0:
        return Curvature(edges, np.zeros(0), np.zeros(n), float(alpha))
    kappa, _ = _orc_edges(ei, n, edges, float(alpha))
    return Curvature(edges, kappa, _node_mean(edges, kappa, n), float(alpha))


def _bfc_edge(adj: list[set[int]], i: int, j: int) -> float:
    """Balanced Forman curvature of one edge from adjacency sets (Topping et al. 2022, Def. 1)."""
    ni, nj = adj[i], adj[j]
    di, dj = len(ni), len(nj)
    if min(di, dj) <= 1:
        return 0.0
    tri = len(ni & nj)
    dmax, dmin = max(di, dj), min(di, dj)
    value = 2.0 / di + 2.0 / dj - 2.0 + 2.0 * tri / dmax + tri / dmin
    # 4-cycles i - k - w - j without diagonals, counted at the k's next to i and at the w's next to j
    sq, gamma = 0, 0
    for a, b, na, nb in ((i, j, ni, nj), (j, i, nj, ni)):
        for k in na:
            if k == b or k in nb:
                continue
            c = sum(1 for w in adj[k] if w != a and w in nb and w not in na)
            if c:
                sq += 1
                gamma = max(gamma, c)
    if sq:
        value += sq / (gamma * dmax)
    return value


def balanced_forman(graph: Any, *, n_nodes: int | None = None) -> Curvature:
    """Balanced Forman curvature (the curvature SDRF rewires with).

    .. math::

        \\mathrm{Ric}(i,j) = \\frac{2}{d_i} + \\frac{2}{d_j} - 2 + 2\\frac{|\\sharp_\\Delta|}{\\max(d_i,d_j)}
        + \\frac{|\\sharp_\\Delta|}{\\min(d_i,d_j)}
        + \\frac{|\\sharp^i_\\square| + |\\sharp^j_\\square|}{\\gamma_{\\max}\\max(d_i,d_j)},

    and 0 when ``min(d_i, d_j) = 1``.

    References
    ----------
    Topping et al., "Understanding over-squashing and bottlenecks on graphs via curvature", ICLR 2022, Def. 1.
    """
    ei, n = as_edge_index(graph, n_nodes, name="graph")
    edges = undirected_edges(ei)
    adj = adjacency_sets(ei, n)
    value = np.array([_bfc_edge(adj, int(i), int(j)) for i, j in edges], dtype=np.float64)
    return Curvature(edges, value, _node_mean(edges, value, n), float("nan"))


def adjacency_sets(ei: np.ndarray, n: int) -> list[set[int]]:
    """Neighbour sets of a symmetric ``edge_index`` (used by the edge-at-a-time rewiring baselines)."""
    adj: list[set[int]] = [set() for _ in range(n)]
    for a, b in ei.T.tolist():
        adj[a].add(b)
    return adj
