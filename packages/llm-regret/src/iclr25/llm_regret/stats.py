"""Statistics for "is this regret sublinear?": the paper's trend test and log-log regression, with a stride
option and bootstrap intervals; swap and dynamic regret.

Trend test (paper Sec. 3.1): with ``f_t = Regret_t / t`` and ``S = #{t : f_{t+s} < f_t}`` over ``n`` steps of
stride ``s``, under H0 (each step falls with probability at most ½, independently) the p-value is
``P[Binomial(n, ½) >= S] = 2^{-n} Σ_{k=S}^{n} C(n, k)``. Regression: ``log Regret_t = β₀ log t + β₁`` over the
rounds with ``Regret_t > 0``; ``β₀ < 1`` indicates sublinear regret.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["TrendTest", "Slope", "RegretStats", "Verdict", "trend_test", "regret_slope", "regret_statistics",
           "no_regret_verdict", "swap_regret", "dynamic_regret"]


@dataclasses.dataclass(frozen=True)
class TrendTest:
    """``p_value`` of H0 "no decreasing trend of Regret_t/t"; ``n_decreasing`` of ``n_steps`` steps fell."""

    p_value: float
    n_decreasing: int
    n_steps: int
    stride: int


@dataclasses.dataclass(frozen=True)
class Slope:
    """``beta`` = β̂₀ of ``log Regret_t = β₀ log t + β₁``; ``low``/``high`` a bootstrap interval over seeds."""

    beta: float
    low: float
    high: float
    n_points: int


@dataclasses.dataclass(frozen=True)
class RegretStats:
    """The paper's table row for one agent and family: final Regret/T, trend-test p-value, β̂₀ with interval."""

    regret_over_T: float
    trend: TrendTest
    slope: Slope


def _curve(curve) -> np.ndarray:
    c = np.asarray(curve, dtype=np.float64)
    if c.ndim != 1 or c.size < 3 or not np.all(np.isfinite(c)):
        raise ValueError(f"curve must be a finite 1-D regret curve of at least 3 rounds, got shape {c.shape}")
    return c


def trend_test(curve, *, stride: int = 1) -> TrendTest:
    """The sign test on ``Regret_t/t`` (paper Sec. 3.1), comparing rounds ``stride`` apart.

    A stride of 2 or more gives the test power on curves that oscillate every round.
    """
    from scipy.stats import binom

    c = _curve(curve)
    if isinstance(stride, bool) or not isinstance(stride, (int, np.integer)) or stride < 1 or stride >= c.size:
        raise ValueError(f"stride must be an integer in [1, {c.size - 1}], got {stride!r}")
    f = c / np.arange(1, c.size + 1)
    f = f[::stride]
    n = f.size - 1
    s = int(np.sum(f[1:] < f[:-1]))
    return TrendTest(float(binom.sf(s - 1, n, 0.5)), s, n, int(stride))


def _slope(curve: np.ndarray) -> tuple[float, int]:
    t = np.arange(1, curve.size + 1)
    keep = curve > 1e-12
    if keep.sum() < 3:
        return float("nan"), int(keep.sum())
    beta = np.polyfit(np.log(t[keep]), np.log(curve[keep]), 1)[0]
    return float(beta), int(keep.sum())


def regret_slope(curves, *, n_boot: int = 200, seed: int = 0, level: float = 0.95) -> Slope:
    """β̂₀ of the seed-averaged regret curve; a bootstrap interval from resampling the seeds.

    ``curves`` is ``(n_seeds, T)`` (or one curve ``(T,)``, then the interval is the point itself).
    """
    C = np.asarray(curves, dtype=np.float64)
    if C.ndim == 1:
        C = C[None]
    if C.ndim != 2:
        raise ValueError(f"curves must be (n_seeds, T), got shape {C.shape}")
    beta, n = _slope(_curve(C.mean(axis=0)))
    if C.shape[0] == 1 or n_boot == 0:
        return Slope(beta, beta, beta, n)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, C.shape[0], size=(n_boot, C.shape[0]))
    boots = np.array([_slope(C[i].mean(axis=0))[0] for i in idx])
    boots = boots[np.isfinite(boots)]
    if boots.size == 0:
        return Slope(beta, float("nan"), float("nan"), n)
    a = (1 - level) / 2
    return Slope(beta, float(np.quantile(boots, a)), float(np.quantile(boots, 1 - a)), n)


def regret_statistics(curves, *, stride: int = 1, n_boot: int = 200, seed: int = 0) -> RegretStats:
    """Regret/T, the trend test and β̂₀ of the seed-averaged curve of ``curves`` ``(n_seeds, T)``."""
    C = np.atleast_2d(np.asarray(curves, dtype=np.float64))
    mean = C.mean(axis=0)
    return RegretStats(float(mean[-1] / mean.size), trend_test(mean, stride=stride),
                       regret_slope(C, n_boot=n_boot, seed=seed))


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Whether a run shows no-regret behaviour: ``no_regret`` is True, False, or None (undecided), ``label``
    the word a table prints and ``reason`` one line on why."""

    no_regret: bool | None
    label: str
    reason: str


def no_regret_verdict(stats: RegretStats, *, parse_failure_rate: float | None = None,
                      max_parse_failure_rate: float = 0.10, alpha: float = 0.05) -> Verdict:
    """The paper's decision (Sec. 3.1): "no-regret" when the trend test rejects at ``alpha`` and β̂₀ < 1.

    A run of an LLM whose answers could not be read in more than ``max_parse_failure_rate`` of the rounds is
    **undecided**, whatever the statistics say: those rounds were played by the fallback (uniform), and uniform
    play is itself no-regret on some sequences (the alternating one), so a model that never answers would pass.

    Examples
    --------
    >>> from iclr25.llm_regret import Uniform, loss_sequences, run_online
    >>> st = regret_statistics(run_online(Uniform(), loss_sequences("alternating", T=50)).regret)
    >>> no_regret_verdict(st).label, no_regret_verdict(st, parse_failure_rate=1.0).label
    ('no-regret', 'undecided')
    """
    if not (0.0 <= max_parse_failure_rate <= 1.0):
        raise ValueError(f"max_parse_failure_rate must be in [0, 1], got {max_parse_failure_rate!r}")
    if parse_failure_rate is not None:
        if not (np.isfinite(parse_failure_rate) and 0.0 <= parse_failure_rate <= 1.0):
            raise ValueError(f"parse_failure_rate must be in [0, 1], got {parse_failure_rate!r}")
        if parse_failure_rate > max_parse_failure_rate:
            return Verdict(None, "undecided", f"the model did not answer: {parse_failure_rate:.0%} of the rounds "
                           f"could not be parsed (more than {max_parse_failure_rate:.0%}) and were played as "
                           "uniform")
    p, beta = stats.trend.p_value, stats.slope.beta
    if not np.isfinite(beta):
        return Verdict(None, "undecided", "the regret is never positive: no slope to fit")
    if p < alpha and beta < 1.0:
        return Verdict(True, "no-regret", f"trend p = {p:.2g} < {alpha:g} and slope {beta:.2f} < 1")
    return Verdict(False, "not shown no-regret", f"trend p = {p:.2g}, slope {beta:.2f} (needs p < {alpha:g} and "
                   "slope < 1)")


def swap_regret(losses, policies) -> np.ndarray:
    """Swap regret per seed: ``Σ_a max_b Σ_t π_t(a)(ℓ_t(a) − ℓ_t(b))`` (inputs ``(n_seeds, T, d)``)."""
    L, P = np.asarray(losses, float), np.asarray(policies, float)
    gain = np.einsum("sta,stb->sab", P, L)  # Σ_t π_t(a) ℓ_t(b)
    own = np.einsum("saa->sa", gain)
    return np.sum(own - gain.min(axis=2), axis=1)


def dynamic_regret(losses, policies) -> np.ndarray:
    """Dynamic regret per seed: ``Σ_t ⟨ℓ_t, π_t⟩ − Σ_t min_a ℓ_t(a)``."""
    L, P = np.asarray(losses, float), np.asarray(policies, float)
    return np.einsum("std,std->s", L, P) - L.min(axis=2).sum(axis=1)
