"""The discrete diffusion sampler: configuration, reverse-process trajectories and the trained sampler.

Generative process (steps k = T..1): X_T ~ uniform, X_{k-1} ~ q_theta(. | X_k) = prod_i Bernoulli(p_i).
A trajectory carries the joint log-probabilities needed by every objective and estimator:

* log q(X_{0:T}) = -N ln 2 + sum_k log q_theta(X_{k-1} | X_k)
* log p_fwd(X_{1:T} | X_0) = sum_k log p(X_k | X_{k-1})   (Bernoulli noise; the k = T term is -N ln 2)

so that the importance weight of the extended target p(X_{0:T}) = p_B(X_0) p_fwd(X_{1:T}|X_0) is
log w = -beta E(X_0) + log p_fwd - log q.

References: Sanokowski et al., ICLR 2025, Sec. 2 (joint distributions), Sec. 4 (unbiased sampling).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .energy import Energy
from .graphs import PaddedGraphs
from .models import AGGREGATIONS, GNN, LatticeCNN
from .noise import SCHEDULES, beta_schedule, log_forward

__all__ = ["SamplerConfig", "Samples", "Sampler", "OBJECTIVES", "make_model", "sample_trajectories", "on_device",
           "resolve_device"]

#: the device of the innermost :func:`on_device` (so that a ``device=None`` inside it keeps that device)
_ACTIVE_DEVICE: contextvars.ContextVar[Any] = contextvars.ContextVar("iclr25_sdds_device", default=None)


def resolve_device(device: Any = None) -> Any:
    """The JAX device of a ``device=`` argument: a JAX device as given, else
    :func:`iclr25.utils.device.jax_device` (``None``: ``$ICLR25_DEVICE`` or ``auto``, JAX's default device: a GPU
    with a CUDA jaxlib, else the CPU; ``"cuda"`` without a GPU is a one-line ``ValueError`` naming ``--device``)."""
    from iclr25.utils.device import jax_device  # noqa: PLC0415

    return jax_device(device)


@contextlib.contextmanager
def on_device(device: Any = None) -> Iterator[Any]:
    """``with on_device(device) as dev:`` JAX computes on :func:`resolve_device` ``(device)`` (``jax.default_device``):
    parameters, noise keys and draws made inside live there. ``device=None`` inside another ``on_device`` keeps
    the outer device. Every training, sampling and estimating entry point of the package runs in one; numpy
    results come back to the host."""
    if device is None and _ACTIVE_DEVICE.get() is not None:
        yield _ACTIVE_DEVICE.get()
        return
    dev = resolve_device(device)
    token = _ACTIVE_DEVICE.set(dev)
    try:
        with jax.default_device(dev):
            yield dev
    finally:
        _ACTIVE_DEVICE.reset(token)

OBJECTIVES = ("diffuco", "rkl_rl", "fkl_nis")
#: T_c = 2 / ln(1 + sqrt 2): the critical temperature of the square-lattice Ising model.
T_CRITICAL = 2.0 / math.log1p(math.sqrt(2.0))


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _finite(value: Any, name: str, *, low: float | None = None, strict: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value}")
    if low is not None and (v <= low if strict else v < low):
        raise ValueError(f"{name} must be {'>' if strict else '>='} {low}, got {value}")
    return v


@dataclasses.dataclass(frozen=True)
class SamplerConfig:
    """Hyper-parameters of a diffusion sampler and its training (one switch selects the objective).

    Parameters
    ----------
    objective : {"diffuco", "rkl_rl", "fkl_nis"}
        ``"diffuco"``: reverse KL with backpropagation through the whole trajectory (memory O(T));
        ``"rkl_rl"``: reverse KL as PPO over diffusion steps; ``"fkl_nis"``: forward KL with SN-NIS weights.
        The last two are minibatched over ``step_minibatch`` steps (memory independent of T).
    n_steps : int
        Number of diffusion steps T.
    schedule : {"exp", "diffuco"}
        Noise schedule (:func:`iclr25.sdds.noise.beta_schedule`).
    model : {"auto", "cnn", "gnn"}
        ``"auto"`` is the lattice CNN for lattice energies and the GNN otherwise.
    hidden, n_layers, n_random_features
        Network width, depth and (GNN) number of random node features redrawn at every step.
    aggregation : {"sum", "mean"}
        GNN message aggregation: ``"sum"`` (the reference's ``segment_sum``, default) or ``"mean"`` (divided by
        the degree, with log(1 + degree) added to the node features). The lattice CNN ignores it.
    n_samples : int
        Trajectories per instance per epoch (the M of SN-NIS).
    instances_per_batch : int
        Instances (graphs) per epoch; each gets ``n_samples`` trajectories.
    n_epochs, learning_rate, grad_clip
        Optimisation (Adam with global-norm clipping).
    temperature, temperature_start, n_equil, n_anneal, anneal
        Target temperature T (p_B ~ exp(-E/T)); annealed from ``temperature_start`` (default: no annealing)
        after ``n_equil`` epochs over ``n_anneal`` epochs (default: 3/4 of the epochs), "linear" or "exp".
    step_minibatch : int
        Diffusion steps per gradient update for ``rkl_rl`` and ``fkl_nis``.
    ppo_epochs : int
        PPO passes over each collected batch of trajectories: every pass visits the T steps in random chunks of
        ``step_minibatch``, so one batch gets ``ppo_epochs * (T // step_minibatch)`` gradient updates. The
        default 1 is what the MIS ladder of the README supports: with summed GNN messages, 300 epochs of 1 or 2
        passes decode to 0.943 / 0.944 of the optimum (equal samples), and at equal wall time 1 pass x 300
        epochs (0.943) beats 4 passes x 100 epochs (0.930).
    ppo_clip, value_weight, td_k, reward_ema
        PPO: clip range, critic weight c1 in (1-c1) actor + c1 critic, GAE lambda = TD_k^(-1/T) (gamma = 1),
        and the decay of the moving reward mean/std.
    symmetric : bool
        Make the network equivariant to the global flip x -> 1 - x (odd logits), so that q is exactly
        symmetric; for zero-field Ising models this stops the sampler from collapsing onto one of the two
        magnetised modes. Not in the paper; two network passes per step.

    References: Sanokowski et al., ICLR 2025, Sec. 3 (objectives), App. A.3-A.5 (hyper-parameters).
    """

    objective: str = "fkl_nis"
    n_steps: int = 12
    schedule: str = "exp"
    model: str = "auto"
    hidden: int = 32
    n_layers: int = 3
    n_random_features: int = 3
    aggregation: str = "sum"
    n_samples: int = 64
    instances_per_batch: int = 1
    n_epochs: int = 200
    learning_rate: float = 1e-3
    grad_clip: float = 1.0
    temperature: float = T_CRITICAL
    temperature_start: float | None = None
    n_equil: int = 0
    n_anneal: int | None = None
    anneal: str = "linear"
    step_minibatch: int = 4
    ppo_clip: float = 0.2
    value_weight: float = 0.65
    td_k: float = 3.0
    ppo_epochs: int = 1
    reward_ema: float = 0.9
    symmetric: bool = False

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {self.objective!r}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        if self.model not in ("auto", "cnn", "gnn"):
            raise ValueError(f"model must be 'auto', 'cnn' or 'gnn', got {self.model!r}")
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {self.aggregation!r}")
        if self.anneal not in ("linear", "exp"):
            raise ValueError(f"anneal must be 'linear' or 'exp', got {self.anneal!r}")
        for name in ("n_steps", "hidden", "n_layers", "n_samples", "instances_per_batch", "n_epochs",
                     "step_minibatch", "ppo_epochs"):
            _positive_int(getattr(self, name), name)
        if isinstance(self.n_random_features, bool) or not isinstance(self.n_random_features, int) \
                or self.n_random_features < 0:
            raise ValueError(f"n_random_features must be an integer >= 0, got {self.n_random_features!r}")
        if not isinstance(self.symmetric, bool):
            raise TypeError(f"symmetric must be a bool, got {type(self.symmetric).__name__}")
        if self.n_samples < 2:
            raise ValueError(f"n_samples must be >= 2 (baselines and weights need several samples), got {self.n_samples}")
        _finite(self.learning_rate, "learning_rate", low=0.0)
        _finite(self.grad_clip, "grad_clip", low=0.0)
        _finite(self.temperature, "temperature", low=0.0, strict=False)
        if self.objective == "fkl_nis" and self.temperature <= 0:
            raise ValueError("temperature must be > 0 for fkl_nis (the target exp(-E/T) needs T > 0)")
        if self.temperature_start is not None:
            _finite(self.temperature_start, "temperature_start", low=0.0)
        if self.n_anneal is not None and (not isinstance(self.n_anneal, int) or self.n_anneal < 0):
            raise ValueError(f"n_anneal must be an integer >= 0 or None, got {self.n_anneal!r}")
        if not isinstance(self.n_equil, int) or self.n_equil < 0:
            raise ValueError(f"n_equil must be an integer >= 0, got {self.n_equil!r}")
        _finite(self.ppo_clip, "ppo_clip", low=0.0)
        if not 0.0 <= _finite(self.value_weight, "value_weight") <= 1.0:
            raise ValueError(f"value_weight must be in [0, 1], got {self.value_weight}")
        _finite(self.td_k, "td_k", low=1.0, strict=False)
        if not 0.0 <= _finite(self.reward_ema, "reward_ema") < 1.0:
            raise ValueError(f"reward_ema must be in [0, 1), got {self.reward_ema}")

    def temperature_at(self, epoch: int) -> float:
        """The annealed temperature of ``epoch`` (0-based)."""
        if self.temperature_start is None:
            return float(self.temperature)
        n_anneal = self.n_anneal if self.n_anneal is not None else max(1, (3 * self.n_epochs) // 4)
        frac = min(1.0, max(0.0, (epoch - self.n_equil) / max(n_anneal, 1)))
        t0, t1 = float(self.temperature_start), float(self.temperature)
        if self.anneal == "exp" and t1 > 0:
            return t0 * (t1 / t0) ** frac
        return t0 + (t1 - t0) * frac

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SamplerConfig:
        from iclr25.utils.io import dataclass_from_mapping  # noqa: PLC0415

        return dataclass_from_mapping(cls, d, what="SamplerConfig")


def make_model(config: SamplerConfig, energy: Energy, key: jax.Array) -> eqx.Module:
    """The reverse-process network for ``energy``: lattice CNN or GNN, as ``config.model`` says."""
    kind = config.model
    if kind == "auto":
        kind = "cnn" if energy.lattice_shape is not None else "gnn"
    if kind == "cnn":
        if energy.lattice_shape is None:
            raise ValueError("model='cnn' needs a lattice energy (IsingEnergy); use model='gnn' for graphs")
        return LatticeCNN(energy.lattice_shape[0], hidden=config.hidden, n_layers=config.n_layers,
                          symmetric=config.symmetric, key=key)
    return GNN(hidden=config.hidden, n_layers=config.n_layers, n_random=config.n_random_features,
               symmetric=config.symmetric, aggregation=config.aggregation, key=key)


def _n_random(model: eqx.Module) -> int:
    return getattr(model, "n_random", 0)


def random_features(model: eqx.Module, key: jax.Array, batch: int, n_nodes: int) -> jax.Array:
    """Random node features (batch, N, r) of one step, reproducible from that step's key."""
    return jax.random.uniform(key, (batch, n_nodes, _n_random(model)))


def step_logits(model: eqx.Module, x: jax.Array, k: jax.Array, n_steps: int, rand: jax.Array,
                graphs: PaddedGraphs) -> tuple[jax.Array, jax.Array]:
    """Logits (B, N) of q_theta(X_{k-1} | X_k = x) and values (B,), for a batch of states and graphs."""
    return jax.vmap(lambda xi, ri, gi: model(xi, k, n_steps, ri, gi))(x, rand, graphs)


def bernoulli_log_prob(x: jax.Array, logits: jax.Array, mask: jax.Array) -> jax.Array:
    """sum_i mask_i log Bernoulli(x_i; sigmoid(logit_i)), stable for large logits."""
    per = x * jax.nn.log_sigmoid(logits) + (1.0 - x) * jax.nn.log_sigmoid(-logits)
    return jnp.sum(mask * per, axis=-1)


class Trajectories(eqx.Module):
    """A batch of B generated trajectories, in generative order (index j = 0 is X_T, j = T is X_0)."""

    states: jax.Array       # (T+1, B, N) int8
    log_q: jax.Array        # (T, B)   log q_theta(X_{k-1} | X_k), k = T - j
    log_fwd: jax.Array      # (T, B)   log p(X_k | X_{k-1})
    values: jax.Array       # (T, B)   critic V(X_k, k)
    step_keys: jax.Array    # (T,) keys of the random node features
    log_prior: jax.Array    # (B,)     log q(X_T) = -N ln 2


def sample_trajectories(model: eqx.Module, energy: Energy, betas: jax.Array, index: jax.Array, key: jax.Array,
                        *, epsilon: float = 0.0) -> Trajectories:
    """Run the reverse process for a batch of instances ``index`` (B,) under ``lax.scan`` (no gradients kept).

    ``epsilon`` > 0 mixes the last step's Bernoulli probabilities with the uniform distribution,
    p' = (1 - eps) p + eps / 2, so that every X_0 has positive probability (support coverage for SN-NIS).
    References: Sanokowski et al., ICLR 2025, Sec. 4 (epsilon-uniform mixture, App. A.6).
    """
    n_steps = betas.shape[0]
    graphs = energy.graphs.take(index)
    mask = graphs.node_mask
    B, N = mask.shape
    k0, k1 = jax.random.split(key)
    x_T = jax.random.bernoulli(k0, 0.5, (B, N)).astype(jnp.float32) * mask
    step_keys = jax.random.split(k1, n_steps)

    def body(x, inp):
        j, skey = inp
        k = n_steps - j  # the model maps X_k to X_{k-1}
        rkey, skey2 = jax.random.split(skey)
        rand = random_features(model, rkey, B, N)
        logits, value = step_logits(model, x, k, n_steps, rand, graphs)
        probs = jax.nn.sigmoid(logits)
        last = (k == 1) & (epsilon > 0)
        probs = jnp.where(last, (1.0 - epsilon) * probs + 0.5 * epsilon, probs)
        x_new = jax.random.bernoulli(skey2, probs).astype(jnp.float32) * mask
        lq = jnp.where(last, jnp.sum(mask * (x_new * jnp.log(probs) + (1 - x_new) * jnp.log1p(-probs)), -1),
                       bernoulli_log_prob(x_new, logits, mask))
        lf = log_forward(x_new, x, betas[k - 1], mask)
        return x_new, (x_new.astype(jnp.int8), lq, lf, value)

    params, static = eqx.partition(model, eqx.is_array)
    model = eqx.combine(jax.lax.stop_gradient(params), static)
    _, (xs, lq, lf, vals) = jax.lax.scan(body, x_T, (jnp.arange(n_steps), step_keys))
    states = jnp.concatenate([x_T.astype(jnp.int8)[None], xs])
    log_prior = -jnp.log(2.0) * jnp.sum(mask, axis=-1)
    return Trajectories(states, lq, lf, vals, step_keys, log_prior)


@dataclasses.dataclass(frozen=True)
class Samples:
    """Samples X_0 of a proposal with the log-densities an importance-sampling estimator needs.

    ``log_q`` is the log-probability of everything that was sampled (for a diffusion sampler the whole
    trajectory), ``log_aux`` the log-density of the auxiliary variables under the extended target (the
    forward noise log p_fwd(X_{1:T} | X_0); 0 for a proposal over X_0 alone).
    """

    x: np.ndarray        # (M, N) int8
    log_q: np.ndarray    # (M,) float64
    log_aux: np.ndarray  # (M,) float64


@dataclasses.dataclass(frozen=True)
class Sampler:
    """A trained diffusion sampler: the network, its configuration and its training history.

    ``history`` holds per-epoch arrays with one meaning for every objective: ``temperature``, ``loss`` (the
    loss the optimiser minimised: PPO's clipped loss, the fKL or DiffUCO surrogate), ``free_energy`` (the
    batch's variational free energy E + T (log q - log p_fwd), an upper bound on -T log Z), ``energy`` (mean
    E(X_0)) and ``ess`` (ESS / M of the batch's importance weights; NaN at temperature 0).
    """

    model: Any
    config: SamplerConfig
    energy: Energy
    history: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)

    @property
    def n_nodes(self) -> int:
        return self.energy.n_nodes

    def sample(self, n_samples: int, *, key: jax.Array | None = None, seed: int = 0, index: int = 0,
               epsilon: float = 0.0, chunk: int = 4096, device: Any = None) -> Samples:
        """Draw ``n_samples`` trajectories on instance ``index`` on ``device`` (:func:`on_device`); returns X_0 and
        the joint log-densities as numpy arrays."""
        n_samples = _positive_int(n_samples, "n_samples")
        eps = _finite(epsilon, "epsilon", low=0.0, strict=False)
        if eps > 1:
            raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < self.energy.n_instances:
            raise ValueError(f"index must be an integer in [0, {self.energy.n_instances}), got {index!r}")
        with on_device(device):
            key = jax.random.key(seed) if key is None else key
            betas = jnp.asarray(beta_schedule(self.config.n_steps, self.config.schedule), jnp.float32)
            chunk = _positive_int(chunk, "chunk")
            # a power-of-two batch (at least 256) keeps the number of compiled shapes small
            size = chunk if n_samples >= chunk else min(chunk, max(256, 1 << (n_samples - 1).bit_length()))
            xs, lqs, lfs = [], [], []
            for ckey in jax.random.split(key, -(-n_samples // size)):
                tr = _sample_chunk(self.model, self.energy, betas, jnp.full((size,), index, jnp.int32), ckey, eps)
                xs.append(np.asarray(tr.states[-1]))
                # sum the per-step terms in float64: they are O(N) each and cancel to O(1) in the weights
                lqs.append(np.asarray(tr.log_q, np.float64).sum(0) + np.asarray(tr.log_prior, np.float64))
                lfs.append(np.asarray(tr.log_fwd, np.float64).sum(0))
            return Samples(np.concatenate(xs)[:n_samples], np.concatenate(lqs)[:n_samples],
                           np.concatenate(lfs)[:n_samples])


@eqx.filter_jit
def _sample_chunk(model, energy, betas, index, key, epsilon):
    return sample_trajectories(model, energy, betas, index, key, epsilon=epsilon)
