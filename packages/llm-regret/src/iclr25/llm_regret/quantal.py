"""The paper's explanation of why pre-trained LLMs look no-regret (Sec. 4), as a model one can fit.

If the decisions in the pre-training data come from people who act by a *quantal response* to their noisy
estimate of the latent losses, the pre-trained model imitates a quantal response to the loss history, which is
follow-the-perturbed-leader: at round ``t`` (with ``t − 1`` past rounds)

.. math::  π_t(a) = P\\big[a = \\arg\\min_b\\, L_{t-1}(b) + ε_t(b)\\big], \\qquad
           ε_t \\sim \\text{noise of scale } σ_t = s\\sqrt{\\max(t-1, 1)},

with Gaussian noise (FTPL, :class:`~iclr25.llm_regret.FTPL`) or Gumbel noise (the logit quantal response,
``π_t ∝ exp(−L_{t−1}/σ_t)``, Hedge with a decreasing rate). :func:`fit_quantal_response` fits the one free
number ``s`` to what an agent (an LLM's run, or a replayed transcript) actually played, by least squares over a
grid, and reports the error beside its trivial references: the uniform policy (``s → ∞``) and FTL (``s → 0``).
A fit far below both says the model behaves like the quantal-response learner the theory describes.

References: Park et al., ICLR 2025, Sec. 4 (pre-training on quantal-response data yields FTPL-like policies).
The pre-training argument itself (the posterior over latent losses) is not simulated here.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["QuantalFit", "quantal_response", "fit_quantal_response"]

NOISES = ("gaussian", "gumbel")


def quantal_response(L_prev, t, scale: float, *, noise: str = "gaussian", n_samples: int = 512,
                     seed: int = 0) -> np.ndarray:
    """The quantal response ``(…, d)`` to cumulative losses ``L_prev`` ``(…, d)`` at round(s) ``t`` (1-based).

    Gaussian noise is exact for two actions (a normal CDF) and a Monte Carlo average of ``n_samples`` draws
    otherwise; Gumbel noise is the softmax of ``−L_prev / σ_t``.
    """
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
    L = np.asarray(L_prev, dtype=np.float64)
    sigma = scale * np.sqrt(np.maximum(np.asarray(t, dtype=np.float64) - 1.0, 1.0))[..., None]
    if noise == "gumbel":
        z = -(L - L.min(axis=-1, keepdims=True)) / sigma
        w = np.exp(z)
        return w / w.sum(axis=-1, keepdims=True)
    if L.shape[-1] == 2:
        from scipy.special import ndtr

        p0 = ndtr((L[..., 1:] - L[..., :1]) / (sigma * np.sqrt(2.0)))
        return np.concatenate([p0, 1.0 - p0], axis=-1)
    rng = np.random.default_rng(seed)
    eps = rng.standard_normal((n_samples, *L.shape)) * sigma
    winners = np.argmin(L + eps, axis=-1)
    return np.stack([(winners == a).mean(axis=0) for a in range(L.shape[-1])], axis=-1)


@dataclasses.dataclass(frozen=True)
class QuantalFit:
    """The fitted noise scale ``s`` and the mean squared error of the played policies against the quantal
    response, the uniform policy and FTL. ``at_edge`` says the best ``s`` is the grid's end (the model is
    closer to uniform or to FTL than to any quantal response in between)."""

    scale: float
    noise: str
    mse: float
    mse_uniform: float
    mse_ftl: float
    n_rounds: int
    at_edge: bool


def fit_quantal_response(losses, policies, *, noise: str = "gaussian", scales=None) -> QuantalFit:
    """Fit the quantal response's noise scale to an agent's policies on its losses (both ``(n_seeds, T, d)``,
    e.g. ``run.losses`` and ``run.policies`` of :func:`~iclr25.llm_regret.run_online`).

    Examples
    --------
    >>> from iclr25.llm_regret import FTPL, loss_sequences, run_online
    >>> run = run_online(FTPL(scale=0.5), loss_sequences("uniform", T=40, d=2, n_seeds=5))
    >>> round(fit_quantal_response(run.losses, run.policies).scale, 2)
    0.5
    """
    L = np.asarray(losses, dtype=np.float64)
    P = np.asarray(policies, dtype=np.float64)
    if L.ndim == 2:
        L, P = L[None], P[None]
    if L.ndim != 3 or P.shape != L.shape or L.shape[1] < 2:
        raise ValueError(f"losses and policies must both be (n_seeds, T, d) with T >= 2, got {L.shape} and "
                         f"{P.shape}")
    if not (np.all(np.isfinite(L)) and np.all(np.isfinite(P))):
        raise ValueError("losses and policies must be finite (no NaN or inf)")
    grid = np.geomspace(1e-3, 1e3, 241) if scales is None else np.asarray(scales, dtype=np.float64)
    if grid.ndim != 1 or grid.size < 2 or np.any(~np.isfinite(grid)) or np.any(grid <= 0):
        raise ValueError("scales must be a 1-D grid of at least 2 finite numbers > 0")
    L_prev = np.concatenate([np.zeros_like(L[:, :1]), np.cumsum(L, axis=1)[:, :-1]], axis=1)
    t = np.broadcast_to(np.arange(1, L.shape[1] + 1)[None, :], L.shape[:2])
    errs = np.array([np.mean(np.sum((P - quantal_response(L_prev, t, s, noise=noise)) ** 2, axis=-1))
                     for s in grid])
    i = int(np.argmin(errs))
    d = L.shape[-1]
    best = np.isclose(L_prev, L_prev.min(axis=-1, keepdims=True), rtol=0, atol=1e-12)
    ftl = best / best.sum(axis=-1, keepdims=True)
    return QuantalFit(float(grid[i]), noise, float(errs[i]), float(np.mean(np.sum((P - 1.0 / d) ** 2, axis=-1))),
                      float(np.mean(np.sum((P - ftl) ** 2, axis=-1))), int(L.shape[0] * L.shape[1]),
                      i in (0, grid.size - 1))
