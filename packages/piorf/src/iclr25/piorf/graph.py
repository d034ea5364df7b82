"""Graphs as ``edge_index`` arrays: validation, conversions and the edge set of a triangle mesh.

Every function of the package takes a graph as a ``(2, E)`` integer array of directed edges, in the
MeshGraphNets / PyTorch Geometric convention: an undirected mesh edge ``{i, j}`` is stored as both ``(i, j)``
and ``(j, i)``. :func:`as_edge_index` also accepts a :class:`networkx.Graph` (nodes taken in ``G.nodes``
order).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_edge_index", "mesh_edges", "undirected_edges", "symmetrize", "edge_keys"]


def edge_keys(i: np.ndarray, j: np.ndarray, n_nodes: int) -> np.ndarray:
    """One int64 key ``i * n + j`` per directed edge, for sorted-array membership tests."""
    return np.asarray(i, dtype=np.int64) * np.int64(n_nodes) + np.asarray(j, dtype=np.int64)


def _from_networkx(graph: Any) -> tuple[np.ndarray, int]:
    index = {node: k for k, node in enumerate(graph.nodes)}
    if graph.is_directed():
        raise ValueError("graph must be an undirected networkx graph, got a directed one")
    pairs = np.array([(index[u], index[v]) for u, v in graph.edges], dtype=np.int64).reshape(-1, 2)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    return np.concatenate([pairs, pairs[:, ::-1]]).T.copy(), len(index)


def as_edge_index(graph: Any, n_nodes: int | None = None, *, name: str = "edge_index",
                  require_symmetric: bool = True) -> tuple[np.ndarray, int]:
    """Validate a graph and return ``(edge_index, n_nodes)``: int64 ``(2, E)``, sorted, without duplicates.

    Parameters
    ----------
    graph
        A ``(2, E)`` integer array (or nested list) of directed edges, or a :class:`networkx.Graph`.
    n_nodes
        Number of nodes; defaults to ``max id + 1`` (a networkx graph brings its own).
    name
        The argument name used in error messages.
    require_symmetric
        Refuse an ``edge_index`` that holds ``(i, j)`` without ``(j, i)``.

    Raises
    ------
    TypeError
        Not an integer array.
    ValueError
        Wrong shape, ids out of ``[0, n_nodes)``, self-loops, or (with ``require_symmetric``) a missing reverse edge.
    """
    if hasattr(graph, "nodes") and hasattr(graph, "edges") and hasattr(graph, "is_directed"):
        edge_index, n_graph = _from_networkx(graph)
        if n_nodes is not None and n_nodes != n_graph:
            raise ValueError(f"n_nodes must equal the networkx graph's {n_graph} nodes, got {n_nodes}")
        n_nodes = n_graph
    else:
        if isinstance(graph, (str, bytes)) or graph is None:
            raise TypeError(f"{name} must be a (2, E) integer array or a networkx graph, got {type(graph).__name__}")
        edge_index = np.asarray(graph)
        if edge_index.dtype == object:
            raise TypeError(f"{name} must be a (2, E) integer array, got a ragged or object array")
        if edge_index.size == 0 and edge_index.ndim <= 2:
            edge_index = edge_index.reshape(2, 0).astype(np.int64)
        if edge_index.ndim != 2 or edge_index.shape[0] != 2:
            raise ValueError(f"{name} must have shape (2, E), got {edge_index.shape}")
        if not (np.issubdtype(edge_index.dtype, np.integer) or edge_index.size == 0):
            raise TypeError(f"{name} must hold integers, got dtype {edge_index.dtype}")
        edge_index = edge_index.astype(np.int64)
    if n_nodes is None:
        if edge_index.size == 0:
            raise ValueError(f"{name} is empty; pass n_nodes to give the number of nodes")
        n_nodes = int(edge_index.max()) + 1
    if isinstance(n_nodes, bool) or not isinstance(n_nodes, (int, np.integer)) or n_nodes < 1:
        raise ValueError(f"n_nodes must be a positive integer, got {n_nodes!r}")
    n_nodes = int(n_nodes)
    if edge_index.size and (edge_index.min() < 0 or edge_index.max() >= n_nodes):
        raise ValueError(f"{name} must hold node ids in [0, {n_nodes}), got range "
                         f"[{edge_index.min()}, {edge_index.max()}]")
    if np.any(edge_index[0] == edge_index[1]):
        k = int(np.flatnonzero(edge_index[0] == edge_index[1])[0])
        raise ValueError(f"{name} must not contain self-loops, got ({edge_index[0, k]}, {edge_index[1, k]})")
    keys = np.unique(edge_keys(edge_index[0], edge_index[1], n_nodes))
    if require_symmetric:
        rev = edge_keys(keys % n_nodes, keys // n_nodes, n_nodes)
        missing = ~np.isin(rev, keys)
        if np.any(missing):
            k = keys[np.flatnonzero(missing)[0]]
            raise ValueError(f"{name} must be symmetric (each (i, j) with its (j, i)); ({k // n_nodes}, "
                             f"{k % n_nodes}) has no reverse edge. Use iclr25.piorf.symmetrize to add them")
    return np.stack([keys // n_nodes, keys % n_nodes]), n_nodes


def symmetrize(edge_index: Any) -> np.ndarray:
    """Add every missing reverse edge and drop duplicates and self-loops: ``(2, E)`` int64, sorted."""
    ei = np.asarray(edge_index)
    if ei.ndim != 2 or ei.shape[0] != 2:
        raise ValueError(f"edge_index must have shape (2, E), got {ei.shape}")
    ei = np.concatenate([ei, ei[::-1]], axis=1)
    ei = ei[:, ei[0] != ei[1]]
    return as_edge_index(ei)[0]


def undirected_edges(edge_index: np.ndarray) -> np.ndarray:
    """The ``(m, 2)`` undirected edges ``i < j`` of a symmetric ``edge_index``."""
    keep = edge_index[0] < edge_index[1]
    return np.stack([edge_index[0, keep], edge_index[1, keep]], axis=1)


def mesh_edges(cells: Any, n_nodes: int | None = None) -> np.ndarray:
    """The symmetric ``(2, E)`` edge set of a triangle mesh, as MeshGraphNets builds it from its cells.

    Parameters
    ----------
    cells
        ``(F, 3)`` integer node ids of the triangles.
    n_nodes
        Number of nodes (default ``max id + 1``).
    """
    cells = np.asarray(cells)
    if cells.ndim != 2 or cells.shape[1] != 3 or cells.shape[0] == 0:
        raise ValueError(f"cells must have shape (F, 3) with F > 0, got {cells.shape}")
    if not np.issubdtype(cells.dtype, np.integer):
        raise TypeError(f"cells must hold integers, got dtype {cells.dtype}")
    pairs = np.concatenate([cells[:, [0, 1]], cells[:, [1, 2]], cells[:, [2, 0]]]).T
    return as_edge_index(np.concatenate([pairs, pairs[::-1]], axis=1), n_nodes)[0]
