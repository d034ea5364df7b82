"""Energy functions on binary variables X in {0,1}^N and conditional-expectation decoding.

Every energy here is *multilinear* in X (no variable appears squared), so it is also the exact expectation
of the energy under independent Bernoulli variables with means X, and the change of energy when one bit is
set is ``E(x | x_i=1) - E(x | x_i=0)``. That is what makes conditional-expectation (CE) decoding exact.

Graphs are stored padded, so a data set of graphs of different sizes has fixed array shapes under ``jit``:
``senders``/``receivers`` (G, E) index the nodes of each edge (each undirected edge once), ``edge_weight``
(G, E) is 0 on padding edges and ``node_mask`` (G, N) is 0 on padding nodes.

References: Sanokowski et al., ICLR 2025, Sec. 2 and App. C (energy functions); DiffUCO (ICML 2024) for the
conditional-expectation decoding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "PaddedGraphs", "Energy", "IsingModelEnergy", "IsingEnergy", "QUBOEnergy", "MISEnergy", "MaxCutEnergy",
    "MDSEnergy", "MaxCliqueEnergy", "lattice_edges", "random_graphs", "decode_ce", "from_bqm",
]


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


def _check_states(x: Any, n_nodes: int, name: str = "x") -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must be a numeric array of 0/1 states, got dtype {arr.dtype}")
    if arr.ndim == 0 or arr.shape[-1] != n_nodes:
        raise ValueError(f"{name} must have shape (..., {n_nodes}), got {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty; expected at least one state of {n_nodes} binary variables")
    if not np.all(np.isfinite(arr.astype(np.float64))):
        raise ValueError(f"{name} must be finite 0/1 values, found NaN or inf")
    if not np.all((arr == 0) | (arr == 1)):
        raise ValueError(f"{name} must be binary (0/1 values); got values outside {{0, 1}}")
    return arr.astype(np.float32)


class Energy(eqx.Module):
    """Base class: an energy E(X) on binary X in {0,1}^N for each of G graphs (instances).

    Subclasses implement ``_energy(x, graph)`` for one state of one graph, multilinear in ``x``.
    """

    graphs: PaddedGraphs

    @property
    def n_nodes(self) -> int:
        return self.graphs.n_nodes

    @property
    def n_instances(self) -> int:
        return self.graphs.n_graphs

    @property
    def lattice_shape(self) -> tuple[int, int] | None:
        """(L, L) for lattice energies (so that a CNN can be used), else None."""
        return None

    @property
    def kind(self) -> str:
        return type(self).__name__

    def _energy(self, x: jax.Array, graph: PaddedGraphs) -> jax.Array:
        raise NotImplementedError

    def energy_of(self, x: jax.Array, index: jax.Array) -> jax.Array:
        """E of one state ``x`` (N,) on instance ``index``; traceable (no input checks)."""
        return self._energy(x, self.graphs.take(index))

    def batch_energy(self, x: jax.Array, index: jax.Array) -> jax.Array:
        """E of states ``x`` (B, N) on instances ``index`` (B,); traceable (no input checks)."""
        return jax.vmap(self.energy_of)(x, index)

    def __call__(self, x: Any, index: int = 0) -> np.ndarray:
        """Energies of binary states ``x`` of shape (..., N) on instance ``index``; validates its input."""
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < self.n_instances:
            raise ValueError(f"index must be an integer in [0, {self.n_instances}), got {index!r}")
        arr = _check_states(x, self.n_nodes)
        flat = arr.reshape(-1, self.n_nodes)
        idx = jnp.full((flat.shape[0],), index, jnp.int32)
        out = np.asarray(_batch_energy(self, jnp.asarray(flat), idx), dtype=np.float64)
        return out.reshape(arr.shape[:-1])


@eqx.filter_jit
def _batch_energy(energy: Energy, x: jax.Array, index: jax.Array) -> jax.Array:
    return energy.batch_energy(x, index)


def _spins(x: jax.Array) -> jax.Array:
    return 2.0 * x - 1.0


class IsingModelEnergy(Energy):
    r"""Ising model :math:`E(s) = -\sum_{(ij)} J_{ij} s_i s_j - \sum_i h_i s_i`, with :math:`s = 2x - 1`.

    ``couplings`` are the edge weights J of ``graphs``; ``fields`` (G, N) the fields h.
    References: Sanokowski et al., ICLR 2025, Sec. 5.2 (Ising model).
    """

    fields: jax.Array

    def _energy(self, x, graph):
        s = _spins(x)
        pair = jnp.sum(graph.edge_weight * s[graph.senders] * s[graph.receivers])
        # the constructors build one instance, so the fields are row 0
        return -pair - jnp.sum(graph.node_mask * self.fields[0] * s)

    @classmethod
    def from_couplings(cls, n_nodes: int, edges: Any, couplings: Any, fields: Any | None = None) -> IsingModelEnergy:
        """An Ising model on ``n_nodes`` spins with couplings J on ``edges`` (m, 2) and optional fields h."""
        graphs = PaddedGraphs.from_edge_lists([(n_nodes, np.asarray(edges))], weights=[couplings])
        h = np.zeros(n_nodes, np.float32) if fields is None else np.asarray(fields, dtype=np.float64)
        if h.shape != (n_nodes,) or not np.all(np.isfinite(h)):
            raise ValueError(f"fields must be {n_nodes} finite numbers, got shape {h.shape}")
        return cls(graphs, jnp.asarray(h[None, :], jnp.float32))


def lattice_edges(L: int) -> np.ndarray:
    """Edges (2 L^2, 2) of the periodic L x L square lattice; node i = row * L + column."""
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or L < 3:
        raise ValueError(f"L (lattice size) must be an integer >= 3, got {L!r}")
    idx = np.arange(L * L).reshape(L, L)
    right = np.stack([idx.ravel(), np.roll(idx, -1, axis=1).ravel()], axis=1)
    down = np.stack([idx.ravel(), np.roll(idx, -1, axis=0).ravel()], axis=1)
    return np.concatenate([right, down])


class IsingEnergy(IsingModelEnergy):
    r"""Ising model on the periodic L x L lattice: ferromagnetic (J = 1) or an Edwards-Anderson spin glass.

    .. math:: E(s) = -\sum_{\langle ij \rangle} J_{ij} s_i s_j, \quad s_i \in \{-1, +1\}

    With ``spin_glass=True`` the couplings are i.i.d. standard normal (drawn with ``seed``).
    References: Sanokowski et al., ICLR 2025, Sec. 5.2 (Ising model on a periodic lattice).

    Examples
    --------
    >>> import numpy as np
    >>> e = IsingEnergy(3)
    >>> float(e(np.ones(9)))
    -18.0
    """

    L: int = eqx.field(static=True)
    spin_glass: bool = eqx.field(static=True)
    seed: int = eqx.field(static=True)

    def __init__(self, L: int, *, spin_glass: bool = False, seed: int = 0):
        edges = lattice_edges(L)
        if spin_glass:
            J = np.random.default_rng(seed).standard_normal(len(edges))
        else:
            J = np.ones(len(edges))
        self.graphs = PaddedGraphs.from_edge_lists([(L * L, edges)], weights=[J])
        self.fields = jnp.zeros((1, L * L), jnp.float32)
        self.L, self.spin_glass, self.seed = int(L), bool(spin_glass), int(seed)

    @property
    def lattice_shape(self) -> tuple[int, int]:
        return (self.L, self.L)


class QUBOEnergy(Energy):
    r"""QUBO :math:`E(x) = \sum_{(ij)} Q_{ij} x_i x_j + \sum_i c_i x_i + c_0` on binary x.

    References: Sanokowski et al., ICLR 2025, Sec. 2 (any energy on binary variables).
    """

    linear: jax.Array      # (1, N)
    offset: float = eqx.field(static=True)

    def _energy(self, x, graph):
        quad = jnp.sum(graph.edge_weight * x[graph.senders] * x[graph.receivers])
        return quad + jnp.sum(self.linear[0] * x) + self.offset

    @classmethod
    def from_arrays(cls, n_nodes: int, edges: Any, quadratic: Any, linear: Any, offset: float = 0.0) -> QUBOEnergy:
        graphs = PaddedGraphs.from_edge_lists([(n_nodes, np.asarray(edges))], weights=[quadratic])
        c = np.asarray(linear, dtype=np.float64)
        if c.shape != (n_nodes,) or not np.all(np.isfinite(c)):
            raise ValueError(f"linear must be {n_nodes} finite numbers, got shape {c.shape}")
        return cls(graphs, jnp.asarray(c[None, :], jnp.float32), float(offset))


def from_bqm(bqm: Any) -> QUBOEnergy:
    """A :class:`QUBOEnergy` from a ``dimod.BinaryQuadraticModel`` (SPIN models are converted to BINARY).

    Variables are ordered as ``list(bqm.variables)``. Needs the optional extra ``iclr25-sdds[dimod]``.
    """
    try:
        import dimod  # noqa: PLC0415 - optional extra
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError("from_bqm needs the [dimod] extra: pip install './packages/sdds[dimod]' from a "
                          "clone") from exc
    if not isinstance(bqm, dimod.BinaryQuadraticModel):
        raise TypeError(f"bqm must be a dimod.BinaryQuadraticModel, got {type(bqm).__name__}")
    b = bqm.change_vartype(dimod.BINARY, inplace=False)
    order = list(b.variables)
    if not order:
        raise ValueError("bqm has no variables")
    pos = {v: i for i, v in enumerate(order)}
    lin = np.array([b.get_linear(v) for v in order], dtype=np.float64)
    quad = [(pos[u], pos[v], w) for (u, v), w in b.quadratic.items()]
    edges = np.array([(u, v) for u, v, _ in quad], dtype=np.int64).reshape(-1, 2)
    weights = np.array([w for _, _, w in quad], dtype=np.float64)
    return QUBOEnergy.from_arrays(len(order), edges, weights, lin, float(b.offset))


class MISEnergy(Energy):
    r"""Maximum independent set: :math:`E(x) = -A \sum_i x_i + B \sum_{(ij) \in \mathcal{E}} x_i x_j`.

    With B > A every local minimum is an independent set; -E of a feasible x is its size.
    References: Sanokowski et al., ICLR 2025, App. C (MIS energy, A = 1, B = 1.2).
    """

    A: float = eqx.field(static=True, default=1.0)
    B: float = eqx.field(static=True, default=1.2)

    def _energy(self, x, graph):
        pen = jnp.sum(graph.edge_weight * x[graph.senders] * x[graph.receivers])
        return -self.A * jnp.sum(graph.node_mask * x) + self.B * pen

    @classmethod
    def from_graphs(cls, graphs: Sequence[tuple[int, Any]], *, A: float = 1.0, B: float = 1.2,
                    n_nodes: int | None = None) -> MISEnergy:
        """MIS energies for a list of ``(n_nodes, edges)`` graphs (padded to the largest)."""
        if not (np.isfinite(A) and np.isfinite(B) and A > 0 and B > A):
            raise ValueError(f"A and B must be finite with 0 < A < B (so minima are feasible), got A={A}, B={B}")
        return cls(PaddedGraphs.from_edge_lists(graphs, n_nodes=n_nodes), float(A), float(B))

    def set_size(self, x: Any) -> np.ndarray:
        """Number of selected nodes of states ``x`` (..., N)."""
        return np.asarray(x).sum(axis=-1)


class MaxCliqueEnergy(MISEnergy):
    """Maximum clique as MIS on the complement graph. References: Sanokowski et al., ICLR 2025, App. C."""

    @classmethod
    def from_graphs(cls, graphs: Sequence[tuple[int, Any]], *, A: float = 1.0, B: float = 1.2,
                    n_nodes: int | None = None) -> MaxCliqueEnergy:
        comp = []
        for n, edges in graphs:
            adj = np.zeros((n, n), bool)
            e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
            adj[e[:, 0], e[:, 1]] = adj[e[:, 1], e[:, 0]] = True
            iu = np.triu_indices(n, 1)
            keep = ~adj[iu]
            comp.append((n, np.stack([iu[0][keep], iu[1][keep]], axis=1)))
        if not (np.isfinite(A) and np.isfinite(B) and A > 0 and B > A):
            raise ValueError(f"A and B must be finite with 0 < A < B, got A={A}, B={B}")
        return cls(PaddedGraphs.from_edge_lists(comp, n_nodes=n_nodes), float(A), float(B))


class MaxCutEnergy(Energy):
    r"""MaxCut as an internal energy :math:`E(s) = \sum_{(ij)} w_{ij} s_i s_j`; cut = (sum w - E) / 2.

    References: Sanokowski et al., ICLR 2025, App. C (MaxCut energy).
    """

    def _energy(self, x, graph):
        s = _spins(x)
        return jnp.sum(graph.edge_weight * s[graph.senders] * s[graph.receivers])

    @classmethod
    def from_graphs(cls, graphs: Sequence[tuple[int, Any]], *, n_nodes: int | None = None) -> MaxCutEnergy:
        return cls(PaddedGraphs.from_edge_lists(graphs, n_nodes=n_nodes))


class MDSEnergy(Energy):
    r"""Minimum dominating set :math:`E(x) = \sum_i x_i + B \sum_i \prod_{j \in N(i) \cup \{i\}} (1 - x_j)`.

    References: Sanokowski et al., ICLR 2025, App. C (MDS energy).
    """

    B: float = eqx.field(static=True, default=1.1)

    def _energy(self, x, graph):
        n = x.shape[0]
        free = 1.0 - x
        # product over both directions of each undirected edge; padding edges (weight 0) contribute 1
        pad = graph.edge_weight > 0
        to_r = jnp.where(pad, free[graph.senders], 1.0)
        to_s = jnp.where(pad, free[graph.receivers], 1.0)
        prod = (jax.ops.segment_prod(to_r, graph.receivers, num_segments=n)
                * jax.ops.segment_prod(to_s, graph.senders, num_segments=n) * free)
        return jnp.sum(graph.node_mask * x) + self.B * jnp.sum(graph.node_mask * prod)

    @classmethod
    def from_graphs(cls, graphs: Sequence[tuple[int, Any]], *, B: float = 1.1,
                    n_nodes: int | None = None) -> MDSEnergy:
        if not (np.isfinite(B) and B > 1):
            raise ValueError(f"B must be a finite number > 1 (so minima dominate), got {B}")
        return cls(PaddedGraphs.from_edge_lists(graphs, n_nodes=n_nodes), float(B))


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


def _ce_single(energy: Energy, x: jax.Array, index: jax.Array) -> jax.Array:
    graph = energy.graphs.take(index)

    def step(x, i):
        e1 = energy._energy(x.at[i].set(1.0), graph)
        e0 = energy._energy(x.at[i].set(0.0), graph)
        # padding nodes stay 0
        xi = jnp.where((e1 < e0) & (graph.node_mask[i] > 0), 1.0, 0.0)
        return x.at[i].set(xi), None

    x, _ = jax.lax.scan(step, x, jnp.arange(x.shape[0]))
    return x


@eqx.filter_jit
def _decode_ce(energy: Energy, probs: jax.Array, index: jax.Array) -> jax.Array:
    return jax.vmap(lambda p, i: _ce_single(energy, p, i))(probs, index)


def decode_ce(energy: Energy, probs: Any, index: Any = 0) -> np.ndarray:
    r"""Conditional-expectation decoding: fix the bits in node order, each to the value of lower expected energy.

    For bit i, with bits < i already fixed and bits > i still at their probabilities,
    :math:`x_i = \arg\min_{v \in \{0,1\}} \mathbb{E}[E(X) | X_{<i}, X_i = v]`; for a multilinear energy that
    expectation is E evaluated at the probabilities. For MIS (B > A) the result is a maximal independent set.

    Parameters
    ----------
    energy : Energy
    probs : array (B, N) or (N,)
        Bernoulli probabilities (or binary samples) in [0, 1].
    index : int or array (B,)
        Instance of each row.

    References: Sanokowski et al. (DiffUCO), ICML 2024, Sec. 3.4; used for CO results in ICLR 2025, Sec. 5.1.
    """
    p = np.asarray(probs, dtype=np.float64)
    single = p.ndim == 1
    p = np.atleast_2d(p)
    if p.shape[-1] != energy.n_nodes or p.ndim != 2 or p.shape[0] == 0:
        raise ValueError(f"probs must have shape (B, {energy.n_nodes}) or ({energy.n_nodes},), got {np.shape(probs)}")
    if not np.all(np.isfinite(p)) or p.min() < 0 or p.max() > 1:
        raise ValueError("probs must be finite probabilities in [0, 1]")
    idx = np.broadcast_to(np.asarray(index, dtype=np.int32), (p.shape[0],))
    out = np.asarray(_decode_ce(energy, jnp.asarray(p, jnp.float32), jnp.asarray(idx)))
    return out[0] if single else out
