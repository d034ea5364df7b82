"""The two networks of the method and the Lipschitz MLP baseline (equinox modules).

* :class:`ImplicitNet` f(x, t): R^3 x [0, 1] -> R, a space-time signed distance function. MLP with
  softplus(beta) activations, a skip connection at the middle layer whose concatenated input is scaled by
  1/sqrt(2), and the geometric (sphere) initialisation of Atzmon & Lipman (SAL) so that f(x, t) ~ |x| - r at
  initialisation for every t.
* :class:`VelocityNet` v(x) (or v(x, t)): R^3 -> R^3, an MLP with a *smooth* activation (SiLU by default),
  so that its Laplacian is not identically zero (the reference's ReLU net makes the Laplacian term a no-op).
* :class:`LipMLP`: the Lipschitz-regularised MLP of Liu et al. (2022): each layer's weight rows are scaled to
  an l1 norm of at most softplus(c_i); the regulariser is prod_i softplus(c_i).

References: Sang et al., ICLR 2025, Sec. 4 (Implicit-Net, Velocity-Net); Atzmon & Lipman, SAL (CVPR 2020),
geometric initialisation; Liu et al., "Learning Smooth Neural Functions via Lipschitz Regularization"
(SIGGRAPH 2022), Eq. 8-10.
"""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp

__all__ = ["ImplicitNet", "VelocityNet", "LipMLP", "softplus_beta"]


def softplus_beta(x: jax.Array, beta: float) -> jax.Array:
    """softplus_beta(x) = log(1 + exp(beta x)) / beta, a smooth ReLU for large beta."""
    return jax.nn.softplus(beta * x) / beta


def _normal(key: jax.Array, shape: tuple[int, ...], mean: float, std: float) -> jax.Array:
    return mean + std * jax.random.normal(key, shape, dtype=jnp.float32)


class ImplicitNet(eqx.Module):
    """Space-time SDF f(x, t) with geometric initialisation (f ~ |x| - init_radius at start).

    Parameters: ``width``, ``depth`` (hidden layers), ``beta`` of the softplus, ``init_radius``; the skip
    connection joins the input to the output of hidden layer ``depth // 2``.
    """

    weights: list[jax.Array]
    biases: list[jax.Array]
    skip_at: int = eqx.field(static=True)
    beta: float = eqx.field(static=True)

    def __init__(self, width: int = 128, depth: int = 4, *, beta: float = 100.0, init_radius: float = 0.5,
                 key: jax.Array):
        d_in = 4
        self.skip_at = depth // 2 if depth >= 2 else -1
        self.beta = float(beta)
        dims_out = [width] * depth + [1]
        keys = jax.random.split(key, depth + 1)
        weights, biases = [], []
        d_prev = d_in
        for i, d_out in enumerate(dims_out):
            if i == self.skip_at:
                d_prev = d_prev + d_in
            last = i == depth
            if last:
                w = _normal(keys[i], (d_out, d_prev), math.sqrt(math.pi) / math.sqrt(d_prev), 1e-4)
                b = jnp.full((d_out,), -init_radius, dtype=jnp.float32)
            else:
                w = _normal(keys[i], (d_out, d_prev), 0.0, math.sqrt(2.0) / math.sqrt(d_out))
                b = jnp.zeros((d_out,), dtype=jnp.float32)
            # the time input starts with zero weight, so that the initial f is the same sphere at every t
            if i == 0:
                w = w.at[:, 3].set(0.0)
            if i == self.skip_at:
                w = w.at[:, -1].set(0.0)
            weights.append(w)
            biases.append(b)
            d_prev = d_out
        self.weights = weights
        self.biases = biases

    def __call__(self, x: jax.Array, t: jax.Array) -> jax.Array:
        """f(x, t) for one point x (3,) and a scalar time t."""
        inp = jnp.concatenate([x, jnp.reshape(t, (1,))])
        h = inp
        n = len(self.weights)
        for i in range(n):
            if i == self.skip_at:
                h = jnp.concatenate([h, inp]) / math.sqrt(2.0)
            h = self.weights[i] @ h + self.biases[i]
            if i < n - 1:
                h = softplus_beta(h, self.beta)
        return h[0]


_ACTIVATIONS = {"silu": jax.nn.silu, "softplus": jax.nn.softplus, "tanh": jnp.tanh, "relu": jax.nn.relu}


class VelocityNet(eqx.Module):
    """Velocity field v(x) (stationary, as in the paper) or v(x, t) (``time_dependent=True``).

    ``activation`` is ``"silu"`` (default), ``"softplus"``, ``"tanh"`` or ``"relu"`` (the reference's choice,
    whose Hessian vanishes almost everywhere). The last layer starts at 1e-2 of its default scale, so v ~ 0.
    """

    mlp: eqx.nn.MLP
    time_dependent: bool = eqx.field(static=True)

    def __init__(self, width: int = 128, depth: int = 4, *, activation: str = "silu",
                 time_dependent: bool = False, key: jax.Array):
        if activation not in _ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(_ACTIVATIONS)}, got {activation!r}")
        self.time_dependent = bool(time_dependent)
        mlp = eqx.nn.MLP(4 if time_dependent else 3, 3, width, depth, activation=_ACTIVATIONS[activation],
                         key=key)
        last = mlp.layers[-1]
        mlp = eqx.tree_at(lambda m: (m.layers[-1].weight, m.layers[-1].bias), mlp,
                          (last.weight * 1e-2, last.bias * 0.0))
        self.mlp = mlp

    def __call__(self, x: jax.Array, t: jax.Array) -> jax.Array:
        """v(x, t) for one point x (3,); t is ignored by a stationary field."""
        if self.time_dependent:
            return self.mlp(jnp.concatenate([x, jnp.reshape(t, (1,))]))
        return self.mlp(x)


class LipMLP(eqx.Module):
    """Lipschitz MLP f(x, t) (Liu et al. 2022): W_i <- W_i * min(1, softplus(c_i) / rowsum|W_i|).

    ``lipschitz_bound()`` is prod_i softplus(c_i), the regulariser of the paper.
    """

    weights: list[jax.Array]
    biases: list[jax.Array]
    cs: list[jax.Array]

    def __init__(self, width: int = 128, depth: int = 4, *, key: jax.Array):
        dims = [4] + [width] * depth + [1]
        keys = jax.random.split(key, len(dims) - 1)
        self.weights, self.biases, self.cs = [], [], []
        for i in range(len(dims) - 1):
            bound = 1.0 / math.sqrt(dims[i])
            w = jax.random.uniform(keys[i], (dims[i + 1], dims[i]), minval=-bound, maxval=bound)
            self.weights.append(w)
            self.biases.append(jnp.zeros((dims[i + 1],), dtype=jnp.float32))
            # c_i starts at the layer's l_inf norm (max row l1 norm), as in the paper's initialisation
            c0 = jnp.max(jnp.sum(jnp.abs(w), axis=1))
            self.cs.append(jnp.log(jnp.expm1(c0)))

    def _normalised(self, i: int) -> jax.Array:
        w = self.weights[i]
        scale = jnp.minimum(1.0, jax.nn.softplus(self.cs[i]) / (jnp.sum(jnp.abs(w), axis=1) + 1e-12))
        return w * scale[:, None]

    def __call__(self, x: jax.Array, t: jax.Array) -> jax.Array:
        h = jnp.concatenate([x, jnp.reshape(t, (1,))])
        n = len(self.weights)
        for i in range(n):
            h = self._normalised(i) @ h + self.biases[i]
            if i < n - 1:
                h = jnp.tanh(h)
        return h[0]

    def lipschitz_bound(self) -> jax.Array:
        return jnp.prod(jnp.stack([jax.nn.softplus(c) for c in self.cs]))
