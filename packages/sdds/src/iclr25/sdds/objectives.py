"""The three training objectives and the training loop.

* ``"diffuco"`` (rKL w/o RL, the DiffUCO baseline): minimise T KL(q || p) by backpropagating through the
  whole sampled trajectory. The per-step entropy and noise terms are taken in closed form given X_k
  (reparameterised), the energy and the downstream terms enter through a score-function (REINFORCE) term
  with a per-instance mean baseline. Memory grows linearly with the number of steps T.
* ``"rkl_rl"`` (SDDS rKL w/ RL): the reverse process is an MDP with reward
  r_k = T [log p(X_k | X_{k-1}) - log q_theta(X_{k-1} | X_k)] and terminal reward -E(X_0); trained with PPO
  (clip, GAE with gamma = 1 and lambda = TD_k^(-1/T), moving reward normalisation, a value head),
  minibatched over diffusion steps: memory independent of T.
* ``"fkl_nis"`` (SDDS fKL w/ MC): forward KL(p || q) with self-normalised importance weights
  w_i = softmax_i(log p(X^i_{0:T}) - log q(X^i_{0:T})) of trajectories sampled without gradients;
  loss = -sum_i w_i T mean_{k in minibatch} log q_theta(X^i_{k-1} | X^i_k); memory independent of T.

References: Sanokowski et al., ICLR 2025, Sec. 3.1 (Eq. 5-7, policy gradient), Sec. 3.2 (Eq. 8-9, SN-NIS
forward KL), App. A.3-A.5; DiffUCO (Sanokowski et al., ICML 2024), Eq. 6.
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

from .diffusion import (
    Sampler,
    SamplerConfig,
    Trajectories,
    bernoulli_log_prob,
    make_model,
    on_device,
    random_features,
    sample_trajectories,
    step_logits,
)
from .energy import Energy
from .noise import beta_schedule, log_forward

__all__ = ["TrainState", "make_train_step", "init_state", "train"]


class TrainState(eqx.Module):
    """Network, optimiser state and the PPO moving reward statistics (mean, variance)."""

    model: Any
    opt_state: Any
    reward_mean: jax.Array
    reward_var: jax.Array


def _optimizer(config: SamplerConfig) -> optax.GradientTransformation:
    return optax.chain(optax.clip_by_global_norm(config.grad_clip), optax.adam(config.learning_rate))


def init_state(config: SamplerConfig, energy: Energy, key: jax.Array) -> TrainState:
    model = make_model(config, energy, key)
    opt = _optimizer(config)
    return TrainState(model, opt.init(eqx.filter(model, eqx.is_inexact_array)), jnp.zeros(()), jnp.ones(()))


def _apply(state: TrainState, grads: Any, opt: optax.GradientTransformation) -> TrainState:
    params = eqx.filter(state.model, eqx.is_inexact_array)
    updates, opt_state = opt.update(grads, state.opt_state, params)
    return dataclasses.replace(state, model=eqx.apply_updates(state.model, updates), opt_state=opt_state)


def _group_mean(values: jax.Array, n_groups: int) -> jax.Array:
    """Mean over the samples of each instance, broadcast back: values (..., G * M) -> (..., G * M)."""
    shape = values.shape
    v = values.reshape(*shape[:-1], n_groups, -1)
    return jnp.broadcast_to(v.mean(-1, keepdims=True), v.shape).reshape(shape)


def _batch_index(config: SamplerConfig, energy: Energy, key: jax.Array) -> jax.Array:
    g = jax.random.choice(key, energy.n_instances, (config.instances_per_batch,),
                          replace=energy.n_instances < config.instances_per_batch)
    return jnp.repeat(g, config.n_samples)


def _epoch_metrics(loss, e0, log_q, log_fwd, log_prior, temperature, n_groups: int) -> dict[str, jax.Array]:
    r"""The metrics every objective reports per epoch, with the same meaning for all three.

    * ``loss``: mean of the loss the optimiser minimised this epoch (PPO's clipped loss, the fKL surrogate,
      DiffUCO's surrogate); comparable only within one objective.
    * ``free_energy``: the variational free energy of the batch, mean of
      :math:`E(X_0) + T[\log q(X_{0:T}) - \log p_{fwd}(X_{1:T}|X_0)] = T\,\mathrm{KL}(q\|p) - T \log Z`
      (an upper bound on :math:`-T \log Z`), from the sampled trajectories; comparable across objectives.
    * ``energy``: mean :math:`E(X_0)`.
    * ``ess``: ESS / M of the self-normalised weights :math:`w \propto p(X_{0:T}) / q(X_{0:T})` of the batch,
      per instance (NaN at temperature 0).
    """
    lq = jnp.sum(log_q, 0) + log_prior
    lf = jnp.sum(log_fwd, 0)
    free = e0 + temperature * (lq - lf)
    lw = (-e0 / jnp.where(temperature > 0, temperature, 1.0) + lf - lq).reshape(n_groups, -1)
    w = jax.nn.softmax(lw, axis=-1)
    ess = jnp.mean(1.0 / jnp.sum(w**2, -1)) / lw.shape[-1]
    return {"loss": loss, "free_energy": jnp.mean(free), "energy": jnp.mean(e0),
            "ess": jnp.where(temperature > 0, ess, jnp.nan)}


METRICS = ("temperature", "loss", "free_energy", "energy", "ess")


# ----------------------------------------------------------------------------------------------- diffuco
def _diffuco_loss(model, energy: Energy, config: SamplerConfig, betas, index, key, temperature):
    n_steps = config.n_steps
    graphs = energy.graphs.take(index)
    mask = graphs.node_mask
    B, N = mask.shape
    k0, k1 = jax.random.split(key)
    x_T = jax.random.bernoulli(k0, 0.5, (B, N)).astype(jnp.float32) * mask

    def body(x, inp):
        j, skey = inp
        k = n_steps - j
        rkey, skey2 = jax.random.split(skey)
        logits, _ = step_logits(model, x, k, n_steps, random_features(model, rkey, B, N), graphs)
        p = jax.nn.sigmoid(logits)
        x_new = jax.lax.stop_gradient(jax.random.bernoulli(skey2, p).astype(jnp.float32) * mask)
        beta = betas[k - 1]
        # E_{x' ~ q(.|x)} [log q(x'|x) - log p(x | x')] per bit, in closed form (reparameterised part)
        neg_ent = p * jax.nn.log_sigmoid(logits) + (1 - p) * jax.nn.log_sigmoid(-logits)
        lp1 = jnp.where(x == 1, jnp.log1p(-beta), jnp.log(beta))  # log p(x_k,i | x_{k-1,i} = 1)
        lp0 = jnp.where(x == 0, jnp.log1p(-beta), jnp.log(beta))
        f = temperature * jnp.sum(mask * (neg_ent - (p * lp1 + (1 - p) * lp0)), -1)
        lq = bernoulli_log_prob(x_new, logits, mask)
        lf = log_forward(x_new, x, beta, mask)
        return x_new, (f, lq, lf)

    x0, (f, lq, lf) = jax.lax.scan(body, x_T, (jnp.arange(n_steps), jax.random.split(k1, n_steps)))
    e0 = energy.batch_energy(x0, index)
    f_sg = jax.lax.stop_gradient(f)
    # cost-to-go after the action of step j: the closed-form terms of later steps plus the energy
    later = jnp.cumsum(f_sg[::-1], axis=0)[::-1] - f_sg
    togo = later + e0[None, :]
    adv = togo - _group_mean(togo, config.instances_per_batch)
    surrogate = jnp.sum(f, axis=0) + jnp.sum(adv * lq, axis=0)
    loss = jnp.mean(surrogate)
    log_prior = -jnp.log(2.0) * jnp.sum(mask, axis=-1)
    return loss, (e0, jax.lax.stop_gradient(lq), lf, log_prior)


def _diffuco_step(config: SamplerConfig, energy: Energy) -> Callable:
    opt = _optimizer(config)
    betas = jnp.asarray(beta_schedule(config.n_steps, config.schedule), jnp.float32)

    def step(state: TrainState, key: jax.Array, temperature: jax.Array):
        kb, ks = jax.random.split(key)
        index = _batch_index(config, energy, kb)
        (loss, (e0, lq, lf, log_prior)), grads = eqx.filter_value_and_grad(_diffuco_loss, has_aux=True)(
            state.model, energy, config, betas, index, ks, temperature)
        metrics = _epoch_metrics(loss, e0, lq, lf, log_prior, temperature, config.instances_per_batch)
        return _apply(state, grads, opt), metrics

    return step


# ------------------------------------------------------------------------------ collected-trajectory steps
def _step_chunks(config: SamplerConfig, key: jax.Array) -> jax.Array:
    """A random partition of the T steps into chunks of ``step_minibatch`` (T mod size steps left out)."""
    size = min(config.step_minibatch, config.n_steps)
    n_chunks = config.n_steps // size
    return jax.random.permutation(key, config.n_steps)[: n_chunks * size].reshape(n_chunks, size)


def _chunk_log_q(model, tr: Trajectories, graphs, steps: jax.Array, n_steps: int):
    """log q_theta(X_{k-1} | X_k) (S, B) and values (S, B) recomputed for the steps j in ``steps`` (S,)."""
    mask = graphs.node_mask
    B, N = mask.shape

    def one(j):
        k = n_steps - j
        rkey, _ = jax.random.split(tr.step_keys[j])
        x = tr.states[j].astype(jnp.float32)
        x_new = tr.states[j + 1].astype(jnp.float32)
        logits, value = step_logits(model, x, k, n_steps, random_features(model, rkey, B, N), graphs)
        return bernoulli_log_prob(x_new, logits, mask), value

    return jax.vmap(one)(steps)


def _sample_batch(config: SamplerConfig, energy: Energy, state: TrainState, betas: jax.Array, key: jax.Array):
    """One epoch's batch for the trajectory-based objectives: instance index, their graphs, trajectories of the
    current model, the energy of the final states and the key left for the updates."""
    kb, ks, kp = jax.random.split(key, 3)
    index = _batch_index(config, energy, kb)
    graphs = energy.graphs.take(index)
    tr = sample_trajectories(state.model, energy, betas, index, ks)
    e0 = energy.batch_energy(tr.states[-1].astype(jnp.float32), index)
    return index, graphs, tr, e0, kp


def _fkl_step(config: SamplerConfig, energy: Energy) -> Callable:
    opt = _optimizer(config)
    betas = jnp.asarray(beta_schedule(config.n_steps, config.schedule), jnp.float32)
    G = config.instances_per_batch

    def step(state: TrainState, key: jax.Array, temperature: jax.Array):
        index, graphs, tr, e0, kp = _sample_batch(config, energy, state, betas, key)
        log_w = -e0 / temperature + jnp.sum(tr.log_fwd, 0) - jnp.sum(tr.log_q, 0) - tr.log_prior
        lw = log_w.reshape(G, -1)
        w = jax.nn.softmax(lw, axis=-1).reshape(-1)  # self-normalised per instance

        def loss_fn(model, steps):
            lq, _ = _chunk_log_q(model, tr, graphs, steps, config.n_steps)
            return -jnp.sum(w * config.n_steps * jnp.mean(lq, axis=0)) / G

        def update(st, steps):
            loss, grads = eqx.filter_value_and_grad(loss_fn)(st.model, steps)
            return _apply(st, grads, opt), loss

        state, losses = _scan_updates(update, state, _step_chunks(config, kp))
        return state, _epoch_metrics(jnp.mean(losses), e0, tr.log_q, tr.log_fwd, tr.log_prior, temperature, G)

    return step


def _scan_updates(update, state: TrainState, chunks: jax.Array):
    """Gradient updates over step chunks with ``lax.scan`` (the model is carried as a pytree)."""
    params, static = eqx.partition(state, eqx.is_array)

    def body(p, steps):
        st, loss = update(eqx.combine(p, static), steps)
        return eqx.partition(st, eqx.is_array)[0], loss

    params, losses = jax.lax.scan(body, params, chunks)
    return eqx.combine(params, static), losses


def _ppo_step(config: SamplerConfig, energy: Energy) -> Callable:
    opt = _optimizer(config)
    betas = jnp.asarray(beta_schedule(config.n_steps, config.schedule), jnp.float32)
    n_steps = config.n_steps
    lam = float(np.exp(-np.log(config.td_k) / n_steps))
    c1, clip, ema = config.value_weight, config.ppo_clip, config.reward_ema

    def step(state: TrainState, key: jax.Array, temperature: jax.Array):
        index, graphs, tr, e0, kp = _sample_batch(config, energy, state, betas, key)
        # r_j: noise reward + entropy reward of the action of generative step j; -E(X_0) at the end
        rewards = temperature * (tr.log_fwd - tr.log_q)
        rewards = rewards.at[-1].add(-e0)
        mean = ema * state.reward_mean + (1 - ema) * jnp.mean(rewards)
        var = ema * state.reward_var + (1 - ema) * jnp.var(rewards)
        r = (rewards - mean) / jnp.sqrt(var + 1e-8)
        values = tr.values
        next_values = jnp.concatenate([values[1:], jnp.zeros_like(values[:1])])
        deltas = r + next_values - values

        def gae(carry, d):
            a = d + lam * carry
            return a, a

        _, adv = jax.lax.scan(gae, jnp.zeros_like(deltas[0]), deltas, reverse=True)
        returns = adv + values
        adv_n = (adv - adv.mean()) / (adv.std() + 1e-8)

        def loss_fn(model, steps):
            lq, v = _chunk_log_q(model, tr, graphs, steps, n_steps)
            ratio = jnp.exp(lq - tr.log_q[steps])
            a = adv_n[steps]
            actor = -jnp.mean(jnp.minimum(ratio * a, jnp.clip(ratio, 1 - clip, 1 + clip) * a))
            critic = jnp.mean((v - returns[steps]) ** 2)
            return (1 - c1) * actor + c1 * critic

        def update(st, steps):
            loss, grads = eqx.filter_value_and_grad(loss_fn)(st.model, steps)
            return _apply(st, grads, opt), loss

        keys = jax.random.split(kp, config.ppo_epochs)
        chunks = jnp.concatenate([_step_chunks(config, kk) for kk in keys])
        state, losses = _scan_updates(update, state, chunks)
        state = dataclasses.replace(state, reward_mean=mean, reward_var=var)
        metrics = _epoch_metrics(jnp.mean(losses), e0, tr.log_q, tr.log_fwd, tr.log_prior, temperature,
                                 config.instances_per_batch)
        return state, metrics

    return step


def make_train_step(config: SamplerConfig, energy: Energy) -> Callable:
    """One training epoch ``step(state, key, temperature) -> (state, metrics)`` of ``config.objective``.

    Jit it with ``eqx.filter_jit``; its compiled ``memory_analysis()`` is what the memory claim measures.
    """
    builders = {"diffuco": _diffuco_step, "rkl_rl": _ppo_step, "fkl_nis": _fkl_step}
    return builders[config.objective](config, energy)


def train(config: SamplerConfig, energy: Energy, key: jax.Array | None = None, *, seed: int = 0,
          show_progress: bool = True, callback: Callable[[int, dict[str, float]], None] | None = None,
          device: Any = None) -> Sampler:
    """Train a diffusion sampler for ``energy`` with ``config.objective``; returns the :class:`Sampler`.

    Parameters
    ----------
    config : SamplerConfig
    energy : Energy
        Any energy of :mod:`iclr25.sdds.energy` (one instance, or a data set of graphs).
    key : jax.Array, optional
        PRNG key; ``jax.random.key(seed)`` when omitted.
    seed : int, keyword-only
        Used only when ``key`` is None.
    device : str or jax.Device, keyword-only
        Where the network trains (:func:`~iclr25.sdds.diffusion.on_device`; ``None``: ``$ICLR25_DEVICE`` or
        ``auto``, a GPU with a CUDA jaxlib). The importance weights and the history are float64 numpy on the host.

    References: Sanokowski et al., ICLR 2025, Algorithm 1 (rKL w/ RL) and Algorithm 2 (fKL w/ MC) of App. A.
    """
    if not isinstance(config, SamplerConfig):
        raise TypeError(f"config must be a SamplerConfig, got {type(config).__name__}")
    if not isinstance(energy, Energy):
        raise TypeError(f"energy must be an iclr25.sdds Energy, got {type(energy).__name__}")
    if energy.n_nodes < 1:
        raise ValueError("energy has no variables")
    with on_device(device):
        key = jax.random.key(seed) if key is None else key
        k_init, k_train = jax.random.split(key)
        state = init_state(config, energy, k_init)
        step = eqx.filter_jit(make_train_step(config, energy))
        hist: dict[str, list[float]] = {name: [] for name in METRICS}
        keys = jax.random.split(k_train, config.n_epochs)
        it = range(config.n_epochs)
        if show_progress:
            it = progress(it, total=config.n_epochs, desc=f"train {config.objective}")
        for epoch in it:
            temp = config.temperature_at(epoch)
            state, metrics = step(state, keys[epoch], jnp.asarray(temp, jnp.float32))
            m = {k: float(v) for k, v in metrics.items()}
            hist["temperature"].append(temp)
            for name in METRICS[1:]:
                hist[name].append(m[name])
            if callback is not None:
                callback(epoch, m)
        return Sampler(state.model, config, energy, {k: np.asarray(v) for k, v in hist.items()})
