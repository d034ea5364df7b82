"""Graphs: the padded graph batch every energy and network uses, the periodic lattice, random graph generators.

Graphs are stored padded, so a data set of graphs of different sizes has fixed array shapes under ``jit``:
``senders``/``receivers`` (G, E) index the nodes of each edge (each undirected edge once), ``edge_weight``
(G, E) is 0 on padding edges and ``node_mask`` (G, N) is 0 on padding nodes.

References: Sanokowski et al., ICLR 2025, Sec. 5 (periodic Ising lattices, graph data sets for CO).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["PaddedGraphs", "NeighbourTable", "neighbour_table", "lattice_edges", "random_graphs"]


class PaddedGraphs(eqx.Module):
    """A stack of G graphs padded to N nodes and E undirected edges (each stored once)."""

    senders: jax.Array      # (G, E) int32
    receivers: jax.Array    # (G, E) int32
    edge_weight: jax.Array  # (G, E) float32, 0 on padding edges
    node_mask: jax.Array    # (G, N) float32, 0 on padding nodes

    @property
    def n_graphs(self) -> int:
        return int(self.node_mask.shape[0])

    @property
    def n_nodes(self) -> int:
        return int(self.node_mask.shape[1])

    def take(self, index: Any) -> PaddedGraphs:
        """The graphs at ``index`` (an int or an integer array), as a pytree slice."""
        return jax.tree_util.tree_map(lambda a: a[index], self)

    @classmethod
    def from_edge_lists(cls, graphs: Sequence[tuple[int, Any]], *, weights: Sequence[Any] | None = None,
                        n_nodes: int | None = None) -> PaddedGraphs:
        """Pad a list of ``(n_nodes, edges (m, 2))`` pairs (optionally with per-edge weights)."""
        if len(graphs) == 0:
            raise ValueError("graphs must be a non-empty list of (n_nodes, edges) pairs, got an empty list")
        sizes, edge_arrays = [], []
        for k, item in enumerate(graphs):
            if not (isinstance(item, tuple) and len(item) == 2):
                raise TypeError(f"graphs[{k}] must be a (n_nodes, edges) pair, got {type(item).__name__}")
            n, edges = item
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
                raise ValueError(f"graphs[{k}]: n_nodes must be a positive integer, got {n!r}")
            e = np.asarray(edges)
            if e.size == 0:
                e = np.zeros((0, 2), dtype=np.int64)
            if e.ndim != 2 or e.shape[1] != 2:
                raise ValueError(f"graphs[{k}]: edges must have shape (m, 2), got {e.shape}")
            if not np.issubdtype(e.dtype, np.integer):
                raise TypeError(f"graphs[{k}]: edges must be integers, got dtype {e.dtype}")
            if e.size and (e.min() < 0 or e.max() >= n):
                raise ValueError(f"graphs[{k}]: edges must be node ids in [0, {n}), got [{e.min()}, {e.max()}]")
            if e.size and np.any(e[:, 0] == e[:, 1]):
                raise ValueError(f"graphs[{k}]: edges must not contain self-loops")
            sizes.append(int(n))
            edge_arrays.append(e.astype(np.int64))
        n_max = max(sizes) if n_nodes is None else int(n_nodes)
        if n_max < max(sizes):
            raise ValueError(f"n_nodes={n_max} is smaller than the largest graph ({max(sizes)} nodes)")
        e_max = max(1, max(len(e) for e in edge_arrays))
        G = len(graphs)
        snd = np.zeros((G, e_max), np.int32)
        rcv = np.zeros((G, e_max), np.int32)
        w = np.zeros((G, e_max), np.float32)
        mask = np.zeros((G, n_max), np.float32)
        for k, (n, e) in enumerate(zip(sizes, edge_arrays, strict=True)):
            m = len(e)
            snd[k, :m], rcv[k, :m] = e[:, 0], e[:, 1]
            if weights is None:
                w[k, :m] = 1.0
            else:
                wk = np.asarray(weights[k], dtype=np.float64)
                if wk.shape != (m,) or not np.all(np.isfinite(wk)):
                    raise ValueError(f"weights[{k}] must be {m} finite numbers, got shape {wk.shape}")
                w[k, :m] = wk
            mask[k, :n] = 1.0
        return cls(jnp.asarray(snd), jnp.asarray(rcv), jnp.asarray(w), jnp.asarray(mask))


class NeighbourTable(eqx.Module):
    """Padded adjacency lists: ``index`` (G, N, D) neighbour ids and ``weight`` (G, N, D) edge weights (0 on
    padding), D the largest degree. Row i lists every edge at node i once, so a scan over the nodes that
    reads one row per node touches O(N D) entries in total instead of O(N |E|)."""

    index: jax.Array   # (G, N, D) int32
    weight: jax.Array  # (G, N, D) float32


def neighbour_table(graphs: PaddedGraphs) -> NeighbourTable:
    """The :class:`NeighbourTable` of ``graphs`` (built on the host in O(G |E|))."""
    snd = np.asarray(graphs.senders)
    rcv = np.asarray(graphs.receivers)
    w = np.asarray(graphs.edge_weight)
    G, N = graphs.n_graphs, graphs.n_nodes
    real = w != 0
    deg = np.zeros((G, N), np.int64)
    for g in range(G):
        np.add.at(deg[g], snd[g][real[g]], 1)
        np.add.at(deg[g], rcv[g][real[g]], 1)
    D = max(1, int(deg.max()))
    idx = np.zeros((G, N, D), np.int32)
    wt = np.zeros((G, N, D), np.float32)
    for g in range(G):
        a = np.concatenate([snd[g][real[g]], rcv[g][real[g]]])  # the node whose row gets the entry
        b = np.concatenate([rcv[g][real[g]], snd[g][real[g]]])  # its neighbour
        ww = np.concatenate([w[g][real[g]], w[g][real[g]]])
        order = np.argsort(a, kind="stable")
        a, b, ww = a[order], b[order], ww[order]
        start = np.concatenate([[0], np.cumsum(np.bincount(a, minlength=N))[:-1]])
        slot = np.arange(len(a)) - start[a]
        idx[g, a, slot] = b
        wt[g, a, slot] = ww
    return NeighbourTable(jnp.asarray(idx), jnp.asarray(wt))


def lattice_edges(L: int) -> np.ndarray:
    """Edges (2 L^2, 2) of the periodic L x L square lattice; node i = row * L + column."""
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or L < 3:
        raise ValueError(f"L (lattice size) must be an integer >= 3, got {L!r}")
    idx = np.arange(L * L).reshape(L, L)
    right = np.stack([idx.ravel(), np.roll(idx, -1, axis=1).ravel()], axis=1)
    down = np.stack([idx.ravel(), np.roll(idx, -1, axis=0).ravel()], axis=1)
    return np.concatenate([right, down])



def random_graphs(n_graphs: int, n_min: int, n_max: int, *, p: float | None = None, mean_degree: float = 6.0,
                  seed: int = 0) -> list[tuple[int, np.ndarray]]:
    """Erdos-Renyi graphs with a uniform number of nodes in [n_min, n_max] as ``(n, edges)`` pairs.

    The edge probability is ``p`` or ``mean_degree / (n - 1)``.
    """
    if n_graphs < 1 or n_min < 2 or n_max < n_min:
        raise ValueError(f"need n_graphs >= 1 and 2 <= n_min <= n_max, got {n_graphs}, {n_min}, {n_max}")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_graphs):
        n = int(rng.integers(n_min, n_max + 1))
        prob = p if p is not None else min(1.0, mean_degree / (n - 1))
        iu = np.triu_indices(n, 1)
        keep = rng.random(len(iu[0])) < prob
        out.append((n, np.stack([iu[0][keep], iu[1][keep]], axis=1)))
    return out


