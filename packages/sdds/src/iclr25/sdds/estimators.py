"""Unbiased estimation with an approximate sampler: SN-NIS estimates and neural MCMC.

Any *proposal* works: an object with ``sample(n_samples, *, key, seed, index, epsilon) -> Samples`` that
returns states X_0 with ``log_q`` (log-probability of everything sampled) and ``log_aux`` (log-density of the
auxiliary variables under the extended target; the forward noise path for a diffusion sampler, 0 otherwise).
The importance weight of sample i is log w_i = -beta E(X_0^i) + log_aux_i - log_q_i, and Z = E_q[w].

References: Sanokowski et al., ICLR 2025, Sec. 4 (Eq. 10-12: SN-NIS of the partition function, free energy,
internal energy, entropy; neural MCMC with the diffusion sampler as an independent proposal), App. A.6.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

import jax
import numpy as np

from .diffusion import Samples, _finite, _positive_int, on_device
from .energy import Energy

__all__ = ["Proposal", "UniformProposal", "Estimate", "MCMCResult", "MIN_ESS_FRACTION", "estimate", "neural_mcmc",
           "importance_log_weights", "add_warnings"]


class Proposal(Protocol):
    """What :func:`estimate` and :func:`neural_mcmc` need from a sampler."""

    def sample(self, n_samples: int, *, key: Any = None, seed: int = 0, index: int = 0,
               epsilon: float = 0.0) -> Samples: ...


@dataclasses.dataclass(frozen=True)
class UniformProposal:
    """The uniform distribution over {0,1}^N (log q = -N ln 2): the estimators' sanity check."""

    n_nodes: int

    def __post_init__(self) -> None:
        _positive_int(self.n_nodes, "n_nodes")

    def sample(self, n_samples: int, *, key: Any = None, seed: int = 0, index: int = 0,
               epsilon: float = 0.0) -> Samples:
        del index, epsilon  # the uniform distribution already covers every state
        n_samples = _positive_int(n_samples, "n_samples")
        key = jax.random.key(seed) if key is None else key
        x = np.asarray(jax.random.bernoulli(key, 0.5, (n_samples, self.n_nodes)), dtype=np.int8)
        log_q = np.full(n_samples, -self.n_nodes * np.log(2.0))
        return Samples(x, log_q, np.zeros(n_samples))


#: Below this effective-sample-size fraction ESS / M, :meth:`Estimate.warnings` flags the estimates.
MIN_ESS_FRACTION = 0.1


@dataclasses.dataclass(frozen=True)
class Estimate:
    """SN-NIS estimates per spin (free energy, internal energy, entropy) and of log Z, with bootstrap SEs.

    ``ess`` is the effective sample size (sum w)^2 / sum w^2 and ``ess_fraction`` = ess / n_samples.
    ``variational_free_energy`` is the biased bound F_q = -E_q[log w] / (beta N) >= F that a sampler without
    importance weights would report.
    """

    log_z: float
    free_energy: float
    internal_energy: float
    entropy: float
    log_z_se: float
    free_energy_se: float
    internal_energy_se: float
    entropy_se: float
    ess: float
    ess_fraction: float
    variational_free_energy: float
    beta: float
    n_samples: int

    def warnings(self, min_ess_fraction: float = MIN_ESS_FRACTION) -> list[str]:
        """Why these estimates should not be trusted, if anything: an ESS fraction below ``min_ess_fraction``
        (few samples carry the weight, so the estimates and their bootstrap SEs are unreliable), or an
        entropy per variable outside its possible range ``[0, ln 2]``."""
        if not (isinstance(min_ess_fraction, (int, float)) and 0 <= min_ess_fraction <= 1):
            raise ValueError(f"min_ess_fraction must be a number in [0, 1], got {min_ess_fraction!r}")
        out = []
        if self.ess_fraction < min_ess_fraction:
            out.append(f"ESS fraction {self.ess_fraction:.3g} is below {min_ess_fraction:g} "
                       f"(ESS {self.ess:.1f} of {self.n_samples} samples): the SN-NIS estimates and their "
                       "standard errors are unreliable; train the sampler longer or draw more samples")
        if not -1e-9 <= self.entropy <= np.log(2.0) + 1e-9:
            out.append(f"entropy per variable {self.entropy:.4g} is outside its possible range [0, ln 2]: "
                       "the importance weights do not cover the distribution")
        return out


def _check_energy(energy: Any) -> Energy:
    if not isinstance(energy, Energy):
        raise TypeError(f"energy must be an iclr25.sdds Energy, got {type(energy).__name__}")
    return energy


def _check_beta(beta: Any) -> float:
    return _finite(beta, "beta (inverse temperature)", low=0.0)


def _check_proposal(sampler: Any) -> None:
    if not callable(getattr(sampler, "sample", None)):
        raise TypeError(f"sampler must have a sample(n_samples, *, key, ...) method, got {type(sampler).__name__}")


def _draw(sampler: Any, samples: Any, n: int, key: Any, seed: int, index: int, epsilon: float,
          n_name: str) -> Samples:
    """``n`` fresh draws of ``sampler``, or the pre-drawn ``samples`` after checking that there are ``n``."""
    if samples is None:
        key = jax.random.key(seed) if key is None else key
        return sampler.sample(n, key=key, index=index, epsilon=epsilon)
    if not all(hasattr(samples, a) for a in ("x", "log_q", "log_aux")):
        raise TypeError(f"samples must be a Samples (x, log_q, log_aux), got {type(samples).__name__}")
    if len(samples.log_q) != n:
        raise ValueError(f"samples holds {len(samples.log_q)} draws, but {n_name} asks for {n}")
    return samples


def importance_log_weights(samples: Samples, energy: Energy, beta: float, *, index: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """log w = -beta E(x) + log_aux - log_q of each sample, and the energies E(x)."""
    x = np.asarray(samples.x)
    if x.ndim != 2 or x.shape[1] != energy.n_nodes:
        raise ValueError(f"samples.x must have shape (M, {energy.n_nodes}), got {x.shape}")
    e = energy(x, index)
    lw = -beta * e + np.asarray(samples.log_aux, np.float64) - np.asarray(samples.log_q, np.float64)
    if not np.all(np.isfinite(lw)):
        raise ValueError("importance weights are not finite: the proposal's log-probabilities contain NaN/inf")
    return lw, e


def _stats(lw: np.ndarray, e: np.ndarray, beta: float, n: int) -> np.ndarray:
    """(log Z, F, U, S) for each row of lw / e (..., M)."""
    m = lw.max(axis=-1, keepdims=True)
    w = np.exp(lw - m)
    sw = w.sum(-1)
    log_z = m[..., 0] + np.log(sw) - np.log(lw.shape[-1])
    F = -log_z / (beta * n)
    U = (w * e).sum(-1) / sw / n
    return np.stack([log_z, F, U, beta * (U - F)], axis=-1)


def estimate(sampler: Any, energy: Energy, beta: float, n_samples: int, key: Any = None, *, seed: int = 0,
             index: int = 0, epsilon: float = 0.0, n_bootstrap: int = 200,
             samples: Samples | None = None, device: Any = None) -> Estimate:
    r"""Self-normalised neural importance sampling (SN-NIS) estimates with bootstrap standard errors.

    .. math::
        \ln \hat Z = \operatorname{logsumexp}_i \ln w_i - \ln M,\quad
        F = -\frac{\ln \hat Z}{\beta N},\quad U = \frac{1}{N} \sum_i \bar w_i E(X^i_0),\quad S = \beta (U - F),
        \quad \mathrm{ESS} = \frac{(\sum_i w_i)^2}{\sum_i w_i^2}

    with :math:`\bar w_i = w_i / \sum_j w_j`. Standard errors are the standard deviation over
    ``n_bootstrap`` resamples of the M samples.

    Parameters
    ----------
    sampler : Proposal
        A trained :class:`~iclr25.sdds.Sampler`, :class:`UniformProposal`, the autoregressive baseline, or any
        object with the same ``sample`` method.
    energy : Energy
    beta : float
        Inverse temperature of the target p(x) ~ exp(-beta E(x)).
    n_samples : int
        Number of samples M.
    key : jax.Array, optional
        PRNG key of the samples (``jax.random.key(seed)`` when omitted); the bootstrap uses ``seed``.
    epsilon : float
        Uniform mixture weight of the sampler's last step (support coverage), passed to ``sampler.sample``.
    samples : Samples, optional
        ``n_samples`` draws of ``sampler`` made beforehand (for instance shared with :func:`neural_mcmc`, which
        builds its chains from the same kind of independent draws); ``sampler`` is then not called.
    device : str or jax.Device, optional
        Where the draws are made (:func:`~iclr25.sdds.diffusion.on_device`); the weights and statistics are
        float64 numpy on the host.

    References: Sanokowski et al., ICLR 2025, Sec. 4, Eq. 10-12.
    """
    _check_proposal(sampler)
    energy = _check_energy(energy)
    b = _check_beta(beta)
    n_samples = _positive_int(n_samples, "n_samples")
    if n_samples < 2:
        raise ValueError(f"n_samples must be >= 2, got {n_samples}")
    n_bootstrap = _positive_int(n_bootstrap, "n_bootstrap")
    with on_device(device):
        samples = _draw(sampler, samples, n_samples, key, seed, index, epsilon, "n_samples")
    lw, e = importance_log_weights(samples, energy, b, index=index)
    n = int(np.asarray(energy.graphs.node_mask[index]).sum())
    point = _stats(lw, e, b, n)
    rng = np.random.default_rng(seed)
    boots = []
    for start in range(0, n_bootstrap, 25):  # bounded memory: 25 resamples of M at a time
        idx = rng.integers(0, n_samples, (min(25, n_bootstrap - start), n_samples))
        boots.append(_stats(lw[idx], e[idx], b, n))
    se = np.concatenate(boots).std(axis=0, ddof=1) if n_bootstrap > 1 else np.full(4, np.nan)
    w = np.exp(lw - lw.max())
    ess = float(w.sum() ** 2 / np.sum(w**2))
    return Estimate(float(point[0]), float(point[1]), float(point[2]), float(point[3]), float(se[0]),
                    float(se[1]), float(se[2]), float(se[3]), ess, ess / n_samples,
                    float(-lw.mean() / (b * n)), b, n_samples)


def add_warnings(run: Any, est: Estimate, min_ess_fraction: float = MIN_ESS_FRACTION) -> list[str]:
    """Put :meth:`Estimate.warnings` where a reader of a :class:`~iclr25.utils.results.RunResult` sees them: one
    row each in the metrics table (``WARNING: ...``, no value) and the run's ``notes``, both saved in
    ``results.json``. Returns the warnings (empty when the estimate looks sound)."""
    warnings = est.warnings(min_ess_fraction)
    for w in warnings:
        run.add(f"WARNING: {w}", None)
    if warnings:
        run.notes = " ".join(f"WARNING: {w}." for w in warnings)
    return warnings


def check_chains(n_chains: Any, n_steps: Any, burn_in: Any, *, steps_name: str) -> tuple[int, int]:
    """Validate the chain arguments shared by :func:`neural_mcmc` and :func:`~iclr25.sdds.metropolis`."""
    n_chains = _positive_int(n_chains, "n_chains")
    n_steps = _positive_int(n_steps, steps_name)
    if n_chains < 2:
        raise ValueError(f"n_chains must be >= 2 for a standard error, got {n_chains}")
    if isinstance(burn_in, bool) or not isinstance(burn_in, (int, np.integer)) or not 0 <= burn_in < n_steps:
        raise ValueError(f"burn_in must be an integer in [0, {steps_name}={n_steps}), got {burn_in!r}")
    return n_chains, n_steps


def chain_energy(trace: np.ndarray, n: int) -> tuple[float, float]:
    """Mean energy per spin of a (kept steps, chains) energy trace and its standard error, which treats the
    chain means as independent."""
    kept = trace / n
    return float(kept.mean()), float(kept.mean(0).std(ddof=1) / np.sqrt(kept.shape[1]))


@dataclasses.dataclass(frozen=True)
class MCMCResult:
    """Neural MCMC: internal energy per spin with its standard error, and acceptance statistics.

    ``energies`` (n_steps, n_chains) is the energy trace after burn-in; ``states`` the final chain states.
    """

    internal_energy: float
    internal_energy_se: float
    acceptance_rate: float
    energies: np.ndarray
    states: np.ndarray
    n_chains: int
    n_steps: int


def neural_mcmc(sampler: Any, energy: Energy, beta: float, *, n_chains: int = 64, n_steps: int = 100,
                burn_in: int = 10, key: Any = None, seed: int = 0, index: int = 0,
                epsilon: float = 0.0, samples: Samples | None = None, device: Any = None) -> MCMCResult:
    r"""Independent Metropolis-Hastings with fresh sampler draws (whole trajectories) as proposals.

    A chain at (X, w) moves to a proposal (X', w') with probability :math:`\min(1, w'/w)`, where
    :math:`w = \tilde p(X_{0:T}) / q(X_{0:T})`; the chains target exp(-beta E) exactly. U is the mean energy
    per spin after ``burn_in`` steps; its standard error treats the ``n_chains`` chain means as independent.
    The proposals are ``n_chains * (n_steps + 1)`` independent draws of ``sampler``, or ``samples`` when given
    (for instance the draws of an :func:`estimate`; the two estimates are then correlated, each stays valid).
    The draws are made on ``device`` (:func:`~iclr25.sdds.diffusion.on_device`), the chains run in numpy.

    References: Sanokowski et al., ICLR 2025, Sec. 4 (Neural MCMC), App. A.6.
    """
    _check_proposal(sampler)
    energy = _check_energy(energy)
    b = _check_beta(beta)
    n_chains, n_steps = check_chains(n_chains, n_steps, burn_in, steps_name="n_steps")
    with on_device(device):
        samples = _draw(sampler, samples, n_chains * (n_steps + 1), key, seed, index, epsilon,
                        "n_chains * (n_steps + 1)")
    lw, e = importance_log_weights(samples, energy, b, index=index)
    lw = lw.reshape(n_steps + 1, n_chains)
    e = e.reshape(n_steps + 1, n_chains)
    x = np.asarray(samples.x).reshape(n_steps + 1, n_chains, -1)
    rng = np.random.default_rng(seed)
    log_u = np.log(rng.random((n_steps, n_chains)))
    cur_lw, cur_e, cur_x = lw[0].copy(), e[0].copy(), x[0].copy()
    trace = np.empty((n_steps, n_chains))
    n_acc = 0
    for t in range(n_steps):
        acc = log_u[t] < lw[t + 1] - cur_lw
        n_acc += int(acc.sum())
        cur_lw = np.where(acc, lw[t + 1], cur_lw)
        cur_e = np.where(acc, e[t + 1], cur_e)
        cur_x = np.where(acc[:, None], x[t + 1], cur_x)
        trace[t] = cur_e
    n = int(np.asarray(energy.graphs.node_mask[index]).sum())
    u, u_se = chain_energy(trace[burn_in:], n)
    return MCMCResult(u, u_se, n_acc / (n_steps * n_chains), trace[burn_in:], cur_x, n_chains, n_steps)
