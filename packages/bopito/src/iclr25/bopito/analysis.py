"""Evaluation and spectral estimation: correlation functions and their error, λ̂ from data (TICA via
deeptime), maximum-likelihood Markov state models (deeptime), implied timescales and VAMP-2 scores of data
or model-generated chains, and the λ_int fit of the interpolation protocol.

Normalised cross-correlation of an observable (here the coordinate) between ``x_0`` drawn from equilibrium
and ``x_N`` (the reference's metric):

.. math::

    C(N) = \\frac{E[(x_0 - μ_0)(x_N - μ_N)]}{\\operatorname{Var}(x_0)},\\qquad
    \\text{error}(N) = |C_{\\text{ref}}(N) - C_{\\text{model}}(N)|.

References: BoPITO (ICLR 2025), Sec. 5.1 (correlation-function error), Sec. 4.3 (λ_int tuned on unbiased
correlation data); Pérez-Hernández et al., J. Chem. Phys. 139 (2013) (TICA); Wu & Noé, J. Nonlinear Sci.
30 (2020) (VAMP); Prinz et al. (2011) (MLE MSMs); Hoffmann et al., Mach. Learn.: Sci. Technol. 3 (2022)
(deeptime).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .models import ScoreModel, check_lambda

__all__ = ["cross_correlation", "ACFResult", "evaluate_acf", "estimate_lambda", "discretize", "MSMResult",
           "fit_msm", "chain_timescales", "vamp2_score", "InterpolationFit", "fit_lambda_int",
           "fit_interpolation"]


def _finite(a: Any, name: str, *, min_ndim: int = 1) -> np.ndarray:
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim < min_ndim or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty array with at least {min_ndim} dimension(s), got shape "
                         f"{arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def cross_correlation(x0: Any, xN: Any) -> np.ndarray:
    """``C`` of the module docstring along the last axis of ``x0``/``xN`` (same shape ``(..., B)``)."""
    a, b = _finite(x0, "x0"), _finite(xN, "xN")
    if a.shape != b.shape:
        raise ValueError(f"x0 and xN must have the same shape, got {a.shape} and {b.shape}")
    if a.shape[-1] < 2:
        raise ValueError("x0 must hold at least 2 samples along its last axis")
    da = a - a.mean(-1, keepdims=True)
    db = b - b.mean(-1, keepdims=True)
    return (da * db).mean(-1) / (da * da).mean(-1)


@dataclasses.dataclass(frozen=True)
class ACFResult:
    """Model correlation ``C`` ``(K, L)`` at ``lags`` ``(L,)`` beside the reference ``c_ref`` ``(L,)``."""

    lags: np.ndarray
    c_model: np.ndarray
    c_ref: np.ndarray

    @property
    def error(self) -> np.ndarray:
        """``|C_ref - C_model|``, ``(K, L)``."""
        return np.abs(self.c_model - self.c_ref[None])

    @property
    def mean_error(self) -> np.ndarray:
        """Mean absolute error over the lags, one per ensemble member ``(K,)``."""
        return self.error.mean(axis=1)


def evaluate_acf(model: ScoreModel, x0: Any, lags: Sequence[float], c_ref: Any, *, steps: int | None = None,
                 seed: int = 0, chunk: int = 8192, device: Any = None) -> ACFResult:
    """Sample ``x_N ~ p_θ(· | x_0, N)`` for every lag in one batched pass and compare ``C(N)`` with ``c_ref``.

    ``x0`` holds equilibrium starting points (``(B,)`` or ``(B, 1)``; for ``dim > 1`` the first coordinate is
    the observable). The samples are drawn on ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``,
    :func:`~iclr25.bopito.sampling.sample`); the correlations are computed on the CPU.
    """
    from .sampling import sample  # noqa: PLC0415

    lags_a = _finite(lags, "lags")
    if np.any(lags_a < 0):
        raise ValueError(f"lags must be non-negative, got {lags_a.tolist()}")
    c_ref = _finite(c_ref, "c_ref")
    if c_ref.shape != lags_a.shape:
        raise ValueError(f"c_ref must have one value per lag ({lags_a.size}), got shape {c_ref.shape}")
    x0a = _finite(x0, "x0").reshape(-1, model.config.dim)
    B, L = x0a.shape[0], lags_a.size
    cond = np.tile(x0a, (L, 1))
    lag_col = np.repeat(lags_a, B)
    xs = sample(model, cond, lag_col, steps=steps, seed=seed, chunk=chunk, device=device)  # (K, L*B, dim)
    xN = xs[..., 0].reshape(model.n_models, L, B)
    c = cross_correlation(np.broadcast_to(x0a[:, 0], xN.shape), xN)
    return ACFResult(lags_a, c, c_ref)


def _bins_for(x: np.ndarray, n_bins: int, box: Sequence[tuple[float, float]] | None) -> list[np.ndarray]:
    dim = x.shape[-1]
    if box is None:
        flat = x.reshape(-1, dim)
        box = [(float(flat[:, d].min()), float(flat[:, d].max()) + 1e-9) for d in range(dim)]
    if len(box) != dim:
        raise ValueError(f"box must hold one (lo, hi) pair per dimension ({dim}), got {len(box)}")
    return [np.linspace(lo, hi, n_bins + 1) for lo, hi in box]


def discretize(trajs: Any, n_bins: int = 40, *, box: Sequence[tuple[float, float]] | None = None
               ) -> tuple[list[np.ndarray], np.ndarray]:
    """Regular-grid discretisation of trajectories ``(n_traj, n_frames[, dim])`` into ``n_bins`` per axis.

    Returns the discrete trajectories (a list of int arrays, deeptime's format) and the cell centres
    ``(n_bins**dim, dim)``.
    """
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 2:
        raise ValueError(f"n_bins must be an integer >= 2, got {n_bins!r}")
    x = _finite(trajs, "trajs", min_ndim=2)
    if x.ndim == 2:
        x = x[..., None]
    edges = _bins_for(x, int(n_bins), box)
    idx = [np.clip(np.searchsorted(e, x[..., d]) - 1, 0, n_bins - 1) for d, e in enumerate(edges)]
    flat = np.ravel_multi_index(idx, (n_bins,) * x.shape[-1])
    centres = np.stack([m.ravel() for m in np.meshgrid(*[0.5 * (e[1:] + e[:-1]) for e in edges],
                                                        indexing="ij")], axis=-1)
    return [np.ascontiguousarray(d, dtype=np.int32) for d in flat], centres


def estimate_lambda(trajs: Any, *, lagtime: int = 10, n_bins: int = 40,
                    box: Sequence[tuple[float, float]] | None = None) -> float:
    """λ̂: the slowest transfer-operator eigenvalue per frame, ``λ̂ = λ_2(τ)^{1/τ}``, with ``λ_2(τ)`` the
    leading TICA eigenvalue (deeptime, reversible estimate) on indicator features of a regular grid.

    References: BoPITO (ICLR 2025), Sec. 4.1 (λ̂ near the slowest eigenvalue); Pérez-Hernández et al. (2013).
    """
    from deeptime.decomposition import TICA  # noqa: PLC0415

    if isinstance(lagtime, bool) or not isinstance(lagtime, (int, np.integer)) or lagtime < 1:
        raise ValueError(f"lagtime must be an integer >= 1, got {lagtime!r}")
    dtrajs, centres = discretize(trajs, n_bins, box=box)
    if min(len(d) for d in dtrajs) <= lagtime:
        raise ValueError(f"trajectories must be longer than lagtime={lagtime} frames")
    n_states = centres.shape[0]
    feats = [np.eye(n_states, dtype=np.float64)[d] for d in dtrajs]
    model = TICA(lagtime=int(lagtime), dim=1).fit(feats).fetch_model()
    lam_tau = float(model.singular_values[0])
    if not 0.0 < lam_tau < 1.0:
        raise ValueError(f"the estimated slowest eigenvalue at lag {lagtime} is {lam_tau:.4g}, outside (0, 1): "
                         "the trajectories are too short or too few to estimate lambda_hat; pass it explicitly")
    return check_lambda(lam_tau ** (1.0 / lagtime), "lambda_hat (estimated)")


@dataclasses.dataclass(frozen=True)
class MSMResult:
    """A maximum-likelihood MSM (deeptime) at ``lagtime`` frames on regular-grid states.

    ``transition_matrix`` and ``stationary`` are over the largest connected set; ``centres`` its states'
    coordinates; ``timescales`` are in frames.
    """

    lagtime: int
    transition_matrix: np.ndarray
    stationary: np.ndarray
    centres: np.ndarray
    timescales: np.ndarray

    def correlation(self, lags: Sequence[int]) -> np.ndarray:
        """``C(N)`` predicted by ``T^{N/τ}`` for the first coordinate (``N`` must be a multiple of τ)."""
        lags_a = np.asarray(lags, dtype=np.int64)
        if np.any(lags_a % self.lagtime) or np.any(lags_a < 0):
            raise ValueError(f"lags must be non-negative multiples of the MSM lagtime {self.lagtime}, got "
                             f"{lags_a.tolist()}")
        f = self.centres[:, 0] - self.stationary @ self.centres[:, 0]
        var = self.stationary @ (f * f)
        out = []
        for n in lags_a // self.lagtime:
            g = np.linalg.matrix_power(self.transition_matrix, int(n)) @ f
            out.append(self.stationary @ (f * g) / var)
        return np.array(out)


def fit_msm(trajs: Any, lagtime: int, *, n_bins: int = 40, box: Sequence[tuple[float, float]] | None = None,
            n_timescales: int = 3) -> MSMResult:
    """Fit deeptime's ``MaximumLikelihoodMSM`` (reversible) on a regular-grid discretisation of ``trajs``."""
    from deeptime.markov import TransitionCountEstimator  # noqa: PLC0415
    from deeptime.markov.msm import MaximumLikelihoodMSM  # noqa: PLC0415

    if isinstance(lagtime, bool) or not isinstance(lagtime, (int, np.integer)) or lagtime < 1:
        raise ValueError(f"lagtime must be an integer >= 1, got {lagtime!r}")
    dtrajs, centres = discretize(trajs, n_bins, box=box)
    if min(len(d) for d in dtrajs) <= lagtime:
        raise ValueError(f"trajectories must be longer than lagtime={lagtime} steps")
    counts = TransitionCountEstimator(lagtime=int(lagtime), count_mode="sliding").fit(dtrajs).fetch_model()
    counts = counts.submodel_largest()
    msm = MaximumLikelihoodMSM(reversible=True).fit(counts).fetch_model()
    symbols = msm.count_model.state_symbols
    k = min(n_timescales, msm.n_states - 1)
    ts = np.asarray(msm.timescales(k)) if k >= 1 else np.array([])
    return MSMResult(int(lagtime), np.asarray(msm.transition_matrix), np.asarray(msm.stationary_distribution),
                     centres[symbols], ts)


def chain_timescales(chains: Any, chain_lag: float, *, n_bins: int = 40,
                     box: Sequence[tuple[float, float]] | None = None, n_timescales: int = 3) -> np.ndarray:
    """Implied timescales in frames of chains saved every ``chain_lag`` frames (``(n, L[, dim])``), from an
    MSM at one chain step: ``t_k = -chain_lag / ln λ_k``."""
    msm = fit_msm(chains, 1, n_bins=n_bins, box=box, n_timescales=n_timescales)
    return msm.timescales * float(chain_lag)


def vamp2_score(trajs: Any, lagtime: int = 1, *, n_bins: int = 20,
                box: Sequence[tuple[float, float]] | None = None, dim: int = 4) -> float:
    """VAMP-2 score (deeptime ``VAMP``, ``dim`` leading singular values) of indicator features of a regular
    grid, at ``lagtime`` steps: ``Σ_k σ_k^2`` including the constant singular value 1."""
    from deeptime.decomposition import VAMP  # noqa: PLC0415

    dtrajs, centres = discretize(trajs, n_bins, box=box)
    if min(len(d) for d in dtrajs) <= lagtime:
        raise ValueError(f"trajectories must be longer than lagtime={lagtime} steps")
    eye = np.eye(centres.shape[0], dtype=np.float64)
    model = VAMP(lagtime=int(lagtime), dim=dim).fit([eye[d] for d in dtrajs]).fetch_model()
    return float(model.score(r=2))


@dataclasses.dataclass(frozen=True)
class InterpolationFit:
    """λ_int fitted to correlation data: the value, the objective there, and every (λ, objective) tried."""

    lambda_int: float
    objective: float
    trials: tuple[tuple[float, float], ...]


def fit_lambda_int(objective_of: Callable[[float], float], *, lo: float = 0.9, hi: float = 0.99999,
                   n_iter: int = 14) -> InterpolationFit:
    """Minimise ``objective_of(λ)`` over ``λ ∈ [lo, hi]`` by golden-section search in ``log(-log λ)``
    (the natural scale of ``λ^N``).

    :func:`fit_interpolation` builds the objective of the paper's protocol from correlation values.
    """
    lo, hi = check_lambda(lo, "lo"), check_lambda(hi, "hi")
    if not lo < hi:
        raise ValueError(f"lo must be below hi, got lo={lo}, hi={hi}")
    to_u = lambda lam: math.log(-math.log(lam))  # noqa: E731
    from_u = lambda u: math.exp(-math.exp(u))  # noqa: E731
    a, b = to_u(hi), to_u(lo)
    g = (math.sqrt(5) - 1) / 2
    trials: list[tuple[float, float]] = []

    def f(u: float) -> float:
        v = float(objective_of(from_u(u)))
        trials.append((from_u(u), v))
        return v

    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(int(n_iter)):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    best = min(trials, key=lambda t: t[1])
    return InterpolationFit(best[0], best[1], tuple(trials))


def fit_interpolation(model: ScoreModel, x0: Any, lags: Sequence[float], c_target: Any, *, steps: int | None = 50,
                      seed: int = 0, lo: float = 0.95, hi: float = 0.99999, n_iter: int = 10,
                      device: Any = None) -> InterpolationFit:
    """Fit ``λ_int`` of a one-member BoPITO model so that its ``C(N)`` matches supplied unbiased correlation
    values ``c_target`` at ``lags`` (all above ``N_max``): minimise the mean ``|C_model(N) - C_target(N)|``
    with the same starts ``x0`` (equilibrium samples) and the same noise at every trial.

    Samples on ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``).

    References: BoPITO (ICLR 2025), Sec. 4.3 (BoPITO interpolators tuned on correlation data).
    """
    if model.config.kind != "bopito" or model.n_models != 1:
        raise ValueError("fit_interpolation needs a one-member BoPITO model (use model.member(k))")
    lags_a = _finite(lags, "lags")
    if np.any(lags_a <= model.config.max_lag):
        raise ValueError(f"lags must all exceed the model's max_lag ({model.config.max_lag}) for λ_int to matter, "
                         f"got {lags_a.tolist()}")
    c_target = _finite(c_target, "c_target")

    def objective(lam: float) -> float:
        r = evaluate_acf(model.with_lambda(lambda_int=lam), x0, lags_a, c_target, steps=steps, seed=seed,
                         device=device)
        return float(r.mean_error[0])

    return fit_lambda_int(objective, lo=lo, hi=hi, n_iter=n_iter)
