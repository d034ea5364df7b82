"""Reverse-process networks q_theta(X_{t-1} | X_t) = prod_i Bernoulli(sigmoid(logit_i)).

Both networks take the current state X_t, a sinusoidal embedding of the step index and (GNN only) random node
features redrawn at every step, and return per-node logits and a scalar value (the PPO critic).

* :class:`LatticeCNN`: residual convolutions with circular padding, for periodic lattices.
* :class:`GNN`: encode-process-decode message passing with ``jax.ops.segment_sum`` aggregation.

References: Sanokowski et al., ICLR 2025, App. A.2 (architectures: GNN with random node features, U-Net/CNN
for the Ising lattice, time embedding, value head for PPO).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .graphs import PaddedGraphs

__all__ = ["AGGREGATIONS", "LatticeCNN", "GNN", "time_embedding"]

N_TIME = 8


def time_embedding(step: jax.Array, n_steps: int, dim: int = N_TIME) -> jax.Array:
    """Sinusoidal embedding of the relative step ``step / n_steps`` (independent of ``n_steps`` in size)."""
    frac = step / n_steps
    freqs = jnp.pi * 2.0 ** jnp.arange(dim // 2)
    return jnp.concatenate([jnp.sin(freqs * frac), jnp.cos(freqs * frac)])


def _symmetrise(core, x: jax.Array, step: jax.Array, n_steps: int, symmetric: bool):
    """Logits and value from the spins s = 2x - 1; with ``symmetric`` the logits are made odd in s,
    logit(s) = (f(s) - f(-s)) / 2, and the value even, so that q(1 - x' | 1 - x) = q(x' | x) exactly (the
    global spin-flip symmetry of zero-field Ising models). Costs two network passes.
    """
    s = 2.0 * x - 1.0
    if not symmetric:
        return core(s, step, n_steps)
    logits, value = jax.vmap(lambda z: core(z, step, n_steps))(jnp.stack([s, -s]))
    return 0.5 * (logits[0] - logits[1]), 0.5 * (value[0] + value[1])


class PeriodicConv(eqx.Module):
    """3 x 3 convolution with periodic boundaries on (L*L, C) inputs (sites in row-major order).

    One gather of the nine neighbours of every site and one dense matmul (im2col): XLA compiles and runs this
    much faster on the CPU than a general convolution with few channels.
    """

    weight: jax.Array  # (9 * C_in, C_out)
    bias: jax.Array
    neighbours: tuple = eqx.field(static=True)  # (L*L, 9) site indices, as a hashable nested tuple

    def __init__(self, L: int, c_in: int, c_out: int, *, key: jax.Array):
        lim = 1.0 / np.sqrt(9.0 * c_in)
        self.weight = jax.random.uniform(key, (9 * c_in, c_out), minval=-lim, maxval=lim)
        self.bias = jnp.zeros((c_out,))
        r, c = np.divmod(np.arange(L * L), L)
        nb = np.stack([((r + dy) % L) * L + (c + dx) % L for dy in (-1, 0, 1) for dx in (-1, 0, 1)], axis=1)
        self.neighbours = tuple(map(tuple, nb.tolist()))

    def __call__(self, h: jax.Array) -> jax.Array:
        cols = h[np.asarray(self.neighbours)]  # (L*L, 9, C)
        return cols.reshape(h.shape[0], -1) @ self.weight + self.bias


class LatticeCNN(eqx.Module):
    """Residual CNN with circular (periodic) padding on an L x L lattice."""

    L: int = eqx.field(static=True)
    inp: PeriodicConv
    blocks: list
    norms: list
    out: eqx.nn.Linear
    value: eqx.nn.Linear

    symmetric: bool = eqx.field(static=True)

    def __init__(self, L: int, *, hidden: int = 32, n_layers: int = 3, symmetric: bool = False, key: jax.Array):
        keys = jax.random.split(key, n_layers + 3)
        self.L = L
        self.symmetric = symmetric
        self.inp = PeriodicConv(L, 1 + N_TIME, hidden, key=keys[0])
        self.blocks = [PeriodicConv(L, hidden, hidden, key=keys[1 + i]) for i in range(n_layers)]
        self.norms = [eqx.nn.LayerNorm(hidden) for _ in range(n_layers)]
        self.out = eqx.nn.Linear(hidden, 1, key=keys[-2])
        self.value = eqx.nn.Linear(hidden, "scalar", key=keys[-1])

    def __call__(self, x: jax.Array, step: jax.Array, n_steps: int, rand: jax.Array,
                 graph: PaddedGraphs) -> tuple[jax.Array, jax.Array]:
        del rand, graph  # the lattice geometry is implicit in the convolutions
        return _symmetrise(self._core, x, step, n_steps, self.symmetric)

    def _core(self, s: jax.Array, step: jax.Array, n_steps: int) -> tuple[jax.Array, jax.Array]:
        # The input convolution of [spin, time embedding] per site, computed in two parts: the time embedding
        # is the same at every site, so (periodic padding) its convolution is one vector, temb @ sum_o W_o.
        # Same weights and result as self.inp on the concatenated input, at about a third of the FLOPs.
        w = self.inp.weight.reshape(9, 1 + N_TIME, -1)
        h = s[np.asarray(self.inp.neighbours)] @ w[:, 0, :] + time_embedding(step, n_steps) @ w[:, 1:, :].sum(0)
        h = jax.nn.silu(h + self.inp.bias)
        for conv, norm in zip(self.blocks, self.norms, strict=True):
            h = h + jax.nn.silu(_per_site(norm, conv(h)))
        logits = (h @ self.out.weight.T + self.out.bias)[:, 0]
        return logits, self.value(jnp.mean(h, axis=0))


def _per_site(norm: eqx.nn.LayerNorm, h: jax.Array) -> jax.Array:
    mean = h.mean(-1, keepdims=True)
    var = h.var(-1, keepdims=True)
    return (h - mean) * jax.lax.rsqrt(var + norm.eps) * norm.weight + norm.bias


AGGREGATIONS = ("sum", "mean")


class GNN(eqx.Module):
    r"""Encode-process-decode GNN with ``jax.ops.segment_sum`` message passing.

    Layer l: :math:`m_i = \sum_{j \in N(i)} w_{ij} W_l h_j` (``aggregation="sum"``, the reference's
    ``segment_sum``), or that sum divided by the degree d_i (``"mean"``), in which case the encoder also gets
    :math:`\log(1 + d_i)` as a node feature, so the degree is still seen; then
    :math:`h_i \leftarrow \mathrm{LayerNorm}(h_i + \mathrm{MLP}([h_i, m_i]))`. A plain mean without the degree
    feature (what 0.2 did) hides each node's degree, the signal min-degree greedy MIS relies on.

    References: Sanokowski et al., ICLR 2025, App. A.2 (encode-process-decode GNN, random node features).
    """

    n_random: int = eqx.field(static=True)
    symmetric: bool = eqx.field(static=True)
    aggregation: str = eqx.field(static=True)
    enc: eqx.nn.Linear
    msg: list
    upd: list
    norms: list
    dec: eqx.nn.MLP
    value: eqx.nn.MLP

    def __init__(self, *, hidden: int = 64, n_layers: int = 3, n_random: int = 3, symmetric: bool = False,
                 aggregation: str = "sum", key: jax.Array):
        if aggregation not in AGGREGATIONS:
            raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {aggregation!r}")
        keys = jax.random.split(key, 2 * n_layers + 3)
        self.n_random = n_random
        self.symmetric = symmetric
        self.aggregation = aggregation
        n_deg = 1 if aggregation == "mean" else 0
        self.enc = eqx.nn.Linear(1 + n_random + N_TIME + n_deg, hidden, key=keys[0])
        self.msg = [eqx.nn.Linear(hidden, hidden, key=keys[1 + i]) for i in range(n_layers)]
        self.upd = [eqx.nn.MLP(2 * hidden, hidden, hidden, 1, activation=jax.nn.silu, key=keys[1 + n_layers + i])
                    for i in range(n_layers)]
        self.norms = [eqx.nn.LayerNorm(hidden) for _ in range(n_layers)]
        self.dec = eqx.nn.MLP(hidden, "scalar", hidden, 1, activation=jax.nn.silu, key=keys[-2])
        self.value = eqx.nn.MLP(hidden, "scalar", hidden, 1, activation=jax.nn.silu, key=keys[-1])

    def __call__(self, x: jax.Array, step: jax.Array, n_steps: int, rand: jax.Array,
                 graph: PaddedGraphs) -> tuple[jax.Array, jax.Array]:
        return _symmetrise(lambda s, k, t: self._core(s, k, t, rand, graph), x, step, n_steps, self.symmetric)

    def _core(self, s: jax.Array, step: jax.Array, n_steps: int, rand: jax.Array,
              graph: PaddedGraphs) -> tuple[jax.Array, jax.Array]:
        n = s.shape[0]
        s = s[:, None]
        temb = jnp.broadcast_to(time_embedding(step, n_steps), (n, N_TIME))
        snd, rcv, w = graph.senders, graph.receivers, graph.edge_weight
        feats = [s, rand, temb]
        if self.aggregation == "mean":
            deg = (jax.ops.segment_sum(jnp.abs(w), rcv, num_segments=n)
                   + jax.ops.segment_sum(jnp.abs(w), snd, num_segments=n))
            scale = (1.0 / jnp.maximum(deg, 1.0))[:, None]
            feats.append(jnp.log1p(deg)[:, None])
        else:
            scale = 1.0
        h = jax.vmap(self.enc)(jnp.concatenate(feats, axis=1))
        mask = graph.node_mask[:, None]
        for lin, upd, norm in zip(self.msg, self.upd, self.norms, strict=True):
            m = jax.vmap(lin)(h)
            agg = (jax.ops.segment_sum(w[:, None] * m[snd], rcv, num_segments=n)
                   + jax.ops.segment_sum(w[:, None] * m[rcv], snd, num_segments=n)) * scale
            h = jax.vmap(norm)(h + jax.vmap(upd)(jnp.concatenate([h, agg], axis=1))) * mask
        logits = jax.vmap(self.dec)(h)
        pooled = jnp.sum(h, axis=0) / jnp.maximum(jnp.sum(mask), 1.0)
        return logits, self.value(pooled)
