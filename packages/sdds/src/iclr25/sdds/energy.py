"""Energy functions on binary variables X in {0,1}^N (Ising, QUBO, MIS, MaxCut, MDS, MaxClique).

Every energy here is *multilinear* in X (no variable appears squared), so it is also the exact expectation
of the energy under independent Bernoulli variables with means X, and the change of energy when one bit is
set, ``E(x | x_i=1) - E(x | x_i=0)``, is what conditional-expectation decoding (:mod:`iclr25.sdds.decoding`)
compares. The pairwise energies also give that change from the neighbours of i alone
(``flip_delta``), which makes decoding O(|E|) instead of O(N |E|). Graphs: :mod:`iclr25.sdds.graphs`.

References: Sanokowski et al., ICLR 2025, Sec. 2 and App. C (energy functions).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .graphs import PaddedGraphs, lattice_edges, random_graphs

__all__ = [
    "Energy", "IsingModelEnergy", "IsingEnergy", "QUBOEnergy", "MISEnergy", "MaxCutEnergy", "MDSEnergy",
    "MaxCliqueEnergy", "from_bqm",
    # re-exported from .graphs (0.2 had them here)
    "PaddedGraphs", "lattice_edges", "random_graphs",
]


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

    def _flip_delta(self, x: jax.Array, i: jax.Array, nbr: jax.Array, w: jax.Array,
                    graph: PaddedGraphs) -> jax.Array:
        """E(x | x_i = 1) - E(x | x_i = 0) for one state ``x`` (N,) of ``graph``; ``nbr``/``w`` (D,) are the
        neighbours of i and their edge weights (:func:`iclr25.sdds.graphs.neighbour_table`, 0-padded).

        This fallback evaluates the energy twice (O(|E|)); pairwise energies override it with an O(D) sum.
        """
        del nbr, w
        return self._energy(x.at[i].set(1.0), graph) - self._energy(x.at[i].set(0.0), graph)

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

    def _flip_delta(self, x, i, nbr, w, graph):
        # s_i goes -1 -> +1: dE = -2 (sum_j J_ij s_j + h_i)
        return -2.0 * (jnp.sum(w * _spins(x[nbr])) + graph.node_mask[i] * self.fields[0, i])

    @classmethod
    def from_couplings(cls, n_nodes: int, edges: Any, couplings: Any, fields: Any | None = None) -> IsingModelEnergy:
        """An Ising model on ``n_nodes`` spins with couplings J on ``edges`` (m, 2) and optional fields h."""
        graphs = PaddedGraphs.from_edge_lists([(n_nodes, np.asarray(edges))], weights=[couplings])
        h = np.zeros(n_nodes, np.float32) if fields is None else np.asarray(fields, dtype=np.float64)
        if h.shape != (n_nodes,) or not np.all(np.isfinite(h)):
            raise ValueError(f"fields must be {n_nodes} finite numbers, got shape {h.shape}")
        return cls(graphs, jnp.asarray(h[None, :], jnp.float32))


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

    def _flip_delta(self, x, i, nbr, w, graph):
        del graph
        return jnp.sum(w * x[nbr]) + self.linear[0, i]

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

    def _flip_delta(self, x, i, nbr, w, graph):
        return -self.A * graph.node_mask[i] + self.B * jnp.sum(w * x[nbr])

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

    def _flip_delta(self, x, i, nbr, w, graph):
        del i, graph
        return 2.0 * jnp.sum(w * _spins(x[nbr]))

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


def __getattr__(name: str) -> Any:
    # decode_ce lived here until 0.2. Serving it from here made energy and decoding import each other (decoding
    # needs Energy), so since 0.5.3 the old path names the new one instead of importing it.
    if name == "decode_ce":
        raise AttributeError("iclr25.sdds.energy.decode_ce moved to iclr25.sdds.decoding in 0.3.0 (also exported as "
                             "iclr25.sdds.decode_ce): import it from there")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
