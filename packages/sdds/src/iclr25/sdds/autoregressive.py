"""Autoregressive baseline (VAN-style): a masked MLP (MADE) trained by REINFORCE on the reverse KL.

q(x) = prod_i Bernoulli(x_i; sigmoid(f_i(x_{<i}))), exact log-likelihood, sampled one variable at a time
(N network passes under ``lax.scan``). It exposes the same ``sample`` method as the diffusion sampler, so the
same SN-NIS and neural-MCMC estimators apply (with no auxiliary variables: log_aux = 0).

References: Sanokowski et al., ICLR 2025, Sec. 5.2 (autoregressive baselines); Wu, Wang & Zhang, PRL 122,
080602 (2019) (variational autoregressive networks); Germain et al., ICML 2015 (MADE masks).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from iclr25.utils.progress import progress

from .diffusion import Samples, _finite, _positive_int, on_device
from .energy import Energy

__all__ = ["MADE", "AutoregressiveSampler", "train_autoregressive"]


class MADE(eqx.Module):
    """Masked MLP with one hidden layer and a direct (strictly lower-triangular) connection."""

    w1: jax.Array
    b1: jax.Array
    w2: jax.Array
    b2: jax.Array
    wd: jax.Array
    m1: jax.Array = eqx.field(static=False)
    m2: jax.Array = eqx.field(static=False)
    md: jax.Array = eqx.field(static=False)

    def __init__(self, n: int, hidden: int, *, key: jax.Array):
        k1, k2 = jax.random.split(key)
        deg_in = np.arange(1, n + 1)
        deg_h = (np.arange(hidden) % max(n - 1, 1)) + 1
        self.m1 = jnp.asarray((deg_h[None, :] >= deg_in[:, None]).astype(np.float32))  # (n, H)
        self.m2 = jnp.asarray((deg_in[None, :] > deg_h[:, None]).astype(np.float32))   # (H, n)
        self.md = jnp.asarray(np.tril(np.ones((n, n), np.float32), -1).T)             # x_j -> i for j < i
        self.w1 = jax.random.normal(k1, (n, hidden)) / np.sqrt(n)
        self.b1 = jnp.zeros(hidden)
        self.w2 = jax.random.normal(k2, (hidden, n)) * 0.01
        self.b2 = jnp.zeros(n)
        self.wd = jnp.zeros((n, n))

    def __call__(self, x: jax.Array) -> jax.Array:
        s = 2.0 * x - 1.0
        h = jnp.tanh(s @ (self.w1 * jax.lax.stop_gradient(self.m1)) + self.b1)
        return (h @ (self.w2 * jax.lax.stop_gradient(self.m2)) + self.b2
                + s @ (self.wd * jax.lax.stop_gradient(self.md)))


def _log_prob(model: MADE, x: jax.Array) -> jax.Array:
    logits = model(x)
    return jnp.sum(x * jax.nn.log_sigmoid(logits) + (1 - x) * jax.nn.log_sigmoid(-logits), -1)


def _sample(model: MADE, key: jax.Array, batch: int, n: int) -> jax.Array:
    def body(x, inp):
        i, k = inp
        p = jax.nn.sigmoid(model(x)[:, i])
        return x.at[:, i].set(jax.random.bernoulli(k, p).astype(jnp.float32)), None

    x, _ = jax.lax.scan(body, jnp.zeros((batch, n)), (jnp.arange(n), jax.random.split(key, n)))
    return x


@eqx.filter_jit
def _sample_with_log_prob(model, key, batch, n):
    model = jax.lax.stop_gradient(model)
    x = _sample(model, key, batch, n)
    return x, _log_prob(model, x)


@dataclasses.dataclass(frozen=True)
class AutoregressiveSampler:
    """A trained autoregressive sampler; ``sample`` matches :class:`~iclr25.sdds.Sampler.sample`."""

    model: Any
    energy: Energy
    history: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)

    def sample(self, n_samples: int, *, key: Any = None, seed: int = 0, index: int = 0,
               epsilon: float = 0.0, chunk: int = 4096, device: Any = None) -> Samples:
        del index, epsilon  # one instance; the sigmoid output already has full support
        n_samples = _positive_int(n_samples, "n_samples")
        with on_device(device):  # the draws are made there; the samples come back as numpy
            key = jax.random.key(seed) if key is None else key
            size = chunk if n_samples >= chunk else min(chunk, max(256, 1 << (n_samples - 1).bit_length()))
            xs, lqs = [], []
            for k in jax.random.split(key, -(-n_samples // size)):
                x, lq = _sample_with_log_prob(self.model, k, size, self.energy.n_nodes)
                xs.append(np.asarray(x, np.int8))
                lqs.append(np.asarray(lq, np.float64))
        return Samples(np.concatenate(xs)[:n_samples], np.concatenate(lqs)[:n_samples], np.zeros(n_samples))


def train_autoregressive(energy: Energy, *, temperature: float, n_epochs: int = 300, n_samples: int = 256,
                         hidden: int = 64, learning_rate: float = 1e-3, temperature_start: float | None = None,
                         key: Any = None, seed: int = 0, show_progress: bool = True,
                         callback: Callable[[int, float], None] | None = None, device: Any = None
                         ) -> AutoregressiveSampler:
    r"""Train the masked-MLP sampler by REINFORCE on the reverse KL (the VAN objective).

    .. math:: \nabla_\theta\, T\,\mathrm{KL}(q \| p) = \mathbb{E}_q[(T \ln q(x) + E(x) - b)\, \nabla_\theta \ln q(x)]

    with b the batch mean; the temperature is annealed linearly from ``temperature_start`` over 3/4 of the
    epochs. ``callback(epoch, free_energy)`` is called after every epoch with the batch's variational free energy
    mean(T ln q + E). It trains on ``device`` (:func:`~iclr25.sdds.diffusion.on_device`). References: Wu, Wang &
    Zhang, PRL 2019, Eq. 4; Sanokowski et al., ICLR 2025, Sec. 5.2.
    """
    if not isinstance(energy, Energy):
        raise TypeError(f"energy must be an iclr25.sdds Energy, got {type(energy).__name__}")
    t_end = _finite(temperature, "temperature", low=0.0)
    t0 = t_end if temperature_start is None else _finite(temperature_start, "temperature_start", low=0.0)
    n_epochs = _positive_int(n_epochs, "n_epochs")
    n_samples = _positive_int(n_samples, "n_samples")
    with on_device(device):
        key = jax.random.key(seed) if key is None else key
        k_init, k_train = jax.random.split(key)
        n = energy.n_nodes
        model = MADE(n, _positive_int(hidden, "hidden"), key=k_init)
        opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(_finite(learning_rate, "learning_rate", low=0.0)))
        opt_state = opt.init(eqx.filter(model, eqx.is_inexact_array))
        index = jnp.zeros((n_samples,), jnp.int32)

        @eqx.filter_jit
        def step(model, opt_state, k, temp):
            x = _sample(jax.lax.stop_gradient(model), k, n_samples, n)
            e = energy.batch_energy(x, index)

            def loss_fn(m):
                lq = _log_prob(m, x)
                f = jax.lax.stop_gradient(temp * lq + e)
                return jnp.mean((f - f.mean()) * lq), jnp.mean(f)

            (_, free), grads = eqx.filter_value_and_grad(loss_fn, has_aux=True)(model)
            updates, opt_state = opt.update(grads, opt_state, eqx.filter(model, eqx.is_inexact_array))
            return eqx.apply_updates(model, updates), opt_state, free

        hist = []
        it = range(n_epochs)
        if show_progress:
            it = progress(it, total=n_epochs, desc="train autoregressive")
        for epoch, k in zip(it, jax.random.split(k_train, n_epochs), strict=True):
            frac = min(1.0, epoch / max(1, (3 * n_epochs) // 4))
            temp = t0 + (t_end - t0) * frac
            model, opt_state, free = step(model, opt_state, k, jnp.asarray(temp, jnp.float32))
            hist.append(float(free))
            if callback is not None:
                callback(epoch, hist[-1])
        # "free_energy" as in the diffusion sampler's history (the REINFORCE surrogate itself is not recorded)
        return AutoregressiveSampler(model, energy, {"free_energy": np.asarray(hist)})
