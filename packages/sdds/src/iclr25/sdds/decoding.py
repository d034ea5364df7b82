"""Conditional-expectation (CE) decoding of Bernoulli probabilities into states, in O(|E|) per state.

References: Sanokowski et al. (DiffUCO), ICML 2024, Sec. 3.4; used for the CO results of Sanokowski et al.,
ICLR 2025, Sec. 5.1.
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .energy import Energy
from .graphs import NeighbourTable, neighbour_table

__all__ = ["decode_ce", "decode_no_model"]


def _ce_single(energy: Energy, x: jax.Array, index: jax.Array, table: NeighbourTable) -> jax.Array:
    graph = energy.graphs.take(index)
    nbr, wt = table.index[index], table.weight[index]

    def step(x, i):
        delta = energy._flip_delta(x, i, nbr[i], wt[i], graph)
        xi = jnp.where((delta < 0) & (graph.node_mask[i] > 0), 1.0, 0.0)  # padding nodes stay 0
        return x.at[i].set(xi), None

    x, _ = jax.lax.scan(step, x, jnp.arange(x.shape[0]))
    return x


@eqx.filter_jit
def _decode_ce(energy: Energy, probs: jax.Array, index: jax.Array, table: NeighbourTable) -> jax.Array:
    return jax.vmap(lambda p, i: _ce_single(energy, p, i, table))(probs, index)


def decode_ce(energy: Energy, probs: Any, index: Any = 0) -> np.ndarray:
    r"""Conditional-expectation decoding: fix the bits in node order, each to the value of lower expected energy.

    For bit i, with bits < i already fixed and bits > i still at their probabilities,
    :math:`x_i = \arg\min_{v \in \{0,1\}} \mathbb{E}[E(X) | X_{<i}, X_i = v]`; for a multilinear energy that
    expectation is E evaluated at the probabilities, and the choice is the sign of
    :math:`\Delta_i = E(x | x_i = 1) - E(x | x_i = 0)`. For the pairwise energies (Ising, QUBO, MIS, MaxCut,
    MaxClique) :math:`\Delta_i` is a sum over the neighbours of i, so one decode costs O(N D) (D the largest
    degree, ~ O(|E|)); MDS evaluates the energy twice per bit (O(N |E|)). For MIS (B > A) the result is a
    maximal independent set.

    Parameters
    ----------
    energy : Energy
    probs : array (B, N) or (N,)
        Bernoulli probabilities (or binary samples) in [0, 1].
    index : int or array (B,)
        Instance of each row.

    References: Sanokowski et al. (DiffUCO), ICML 2024, Sec. 3.4; used for CO results in ICLR 2025, Sec. 5.1.
    """
    if not isinstance(energy, Energy):
        raise TypeError(f"energy must be an iclr25.sdds Energy, got {type(energy).__name__}")
    p = np.asarray(probs, dtype=np.float64)
    single = p.ndim == 1
    p = np.atleast_2d(p)
    if p.shape[-1] != energy.n_nodes or p.ndim != 2 or p.shape[0] == 0:
        raise ValueError(f"probs must have shape (B, {energy.n_nodes}) or ({energy.n_nodes},), got {np.shape(probs)}")
    if not np.all(np.isfinite(p)) or p.min() < 0 or p.max() > 1:
        raise ValueError("probs must be finite probabilities in [0, 1]")
    idx = np.broadcast_to(np.asarray(index, dtype=np.int32), (p.shape[0],))
    if idx.min() < 0 or idx.max() >= energy.n_instances:
        raise ValueError(f"index must be instance numbers in [0, {energy.n_instances}), got {index!r}")
    table = neighbour_table(energy.graphs)
    out = np.asarray(_decode_ce(energy, jnp.asarray(p, jnp.float32), jnp.asarray(idx), table))
    return out[0] if single else out


def decode_no_model(energy: Energy, index: Any = 0) -> np.ndarray:
    """CE decoding of the all-zeros vector: what the decoder gives with no model at all (for MIS, the greedy
    independent set in node order). The floor a trained sampler must beat."""
    idx = np.atleast_1d(np.asarray(index, dtype=np.int32))
    out = decode_ce(energy, np.zeros((len(idx), energy.n_nodes)), idx)
    return out[0] if np.ndim(index) == 0 else out
