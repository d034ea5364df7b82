"""Statistical comparison of models from their GOOD curves.

The paper's test is a one-sided paired Wilcoxon signed-rank test for every ordered pair of models, paired
over the curve's thresholds. Added here: Holm's correction over all those tests, and the Friedman test with
Nemenyi's post-hoc critical difference over the same blocks (thresholds).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from .good import GOODCurve

__all__ = ["ModelComparison", "compare_models", "holm"]


@dataclasses.dataclass(frozen=True, eq=False)
class ModelComparison:
    """Pairwise and omnibus tests between models.

    Attributes
    ----------
    names : tuple of str
    p_values : numpy.ndarray, shape (M, M)
        ``p_values[i, j]``: one-sided Wilcoxon p-value for "model i performs better than model j"
        (1 on the diagonal).
    p_holm : numpy.ndarray, shape (M, M)
        The same, Holm-adjusted over all M(M−1) ordered pairs.
    mean_ranks : numpy.ndarray, shape (M,)
        Mean rank of each model over the thresholds (1 = best).
    friedman_statistic, friedman_p : float
        Friedman χ² test that all models rank alike (NaN for fewer than 3 models).
    critical_difference : float
        Nemenyi critical difference of mean ranks at level ``alpha``.
    nemenyi_p : numpy.ndarray, shape (M, M)
        Two-sided Nemenyi p-values of the mean-rank differences.
    n_blocks : int
        Thresholds paired over.
    alpha : float
    """

    names: tuple[str, ...]
    p_values: np.ndarray
    p_holm: np.ndarray
    mean_ranks: np.ndarray
    friedman_statistic: float
    friedman_p: float
    critical_difference: float
    nemenyi_p: np.ndarray
    n_blocks: int
    alpha: float

    @property
    def ranking(self) -> tuple[str, ...]:
        """Model names from best to worst mean rank."""
        return tuple(self.names[i] for i in np.argsort(self.mean_ranks, kind="stable"))


def holm(p: np.ndarray) -> np.ndarray:
    """Holm–Bonferroni step-down adjustment of a 1-D array of p-values.

    .. math:: \\tilde p_{(i)} = \\max_{j \\le i} \\min\\{1, (m - j + 1)\\, p_{(j)}\\}

    Examples
    --------
    >>> holm(np.array([0.01, 0.04, 0.03])).round(2).tolist()
    [0.03, 0.06, 0.06]
    """
    if np.iscomplexobj(p):  # never cast to its real part
        raise TypeError("p must hold real p-values, got complex numbers")
    p = np.asarray(p, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj
    return out


def _values(curves: Mapping[str, Any]) -> tuple[tuple[str, ...], np.ndarray, bool]:
    if not isinstance(curves, Mapping):
        raise TypeError(f"curves must be a mapping of model name to GOODCurve or values, got "
                        f"{type(curves).__name__}")
    if len(curves) < 2:
        raise ValueError(f"curves must hold at least two models, got {len(curves)}")
    names = tuple(str(k) for k in curves)
    items = list(curves.values())
    if all(isinstance(c, GOODCurve) for c in items):
        t0 = items[0].thresholds
        if any(c.thresholds.shape != t0.shape or not np.allclose(c.thresholds, t0) for c in items):
            raise ValueError("all curves must share the same thresholds")
        hib = {c.higher_is_better for c in items}
        if len(hib) != 1:
            raise ValueError("all curves must use metrics of the same direction")
        common = np.logical_and.reduce([np.isfinite(c.mean) for c in items])
        vals = np.stack([c.mean[common] for c in items])
        return names, vals, hib.pop()
    if any(isinstance(c, GOODCurve) for c in items):
        raise TypeError("curves must be all GOODCurves or all arrays of values, not a mix")
    if any(np.iscomplexobj(c) for c in items):  # never cast to its real part
        raise TypeError("every model's values must be real numbers, got complex numbers")
    try:
        vals = np.stack([np.asarray(c, dtype=np.float64) for c in items])
    except ValueError as exc:
        raise ValueError(f"every model must have the same number of values ({exc})") from exc
    if vals.ndim != 2:
        raise ValueError(f"each model's values must be 1-D, got shape {vals.shape[1:]}")
    if not np.all(np.isfinite(vals)):
        raise ValueError("model values must be finite (no NaN or inf)")
    return names, vals, True


def compare_models(curves: Mapping[str, GOODCurve | Any], *, alpha: float = 0.05) -> ModelComparison:
    """Compare models paired over the thresholds of their GOOD curves.

    For models :math:`i \\ne j` with curve values :math:`a, b` at the thresholds viable for all models,
    ``p_values[i, j]`` is the p-value of the one-sided Wilcoxon signed-rank test of
    :math:`H_1: \\mathrm{median}(a - b) > 0` (``< 0`` when lower is better, e.g. MAE). Holm adjusts these
    M(M−1) p-values. Friedman's test ranks the models within each threshold; Nemenyi's critical difference
    is :math:`q_\\alpha/\\sqrt{2}\\,\\sqrt{M(M+1)/(6N)}` for N thresholds.

    Parameters
    ----------
    curves : mapping of str to GOODCurve or 1-D array
        Arrays are taken as "higher is better" values paired position by position.
    alpha : float
        Level of the Nemenyi critical difference.

    Returns
    -------
    ModelComparison

    References
    ----------
    Paper Sec. 3.6 (statistical comparison of models with one-sided Wilcoxon tests over the GOOD curve).

    Examples
    --------
    >>> c = compare_models({"a": [.9, .8, .7, .6, .5, .4], "b": [.5, .4, .3, .2, .1, .0]})
    >>> round(float(c.p_values[0, 1]), 4), round(float(c.p_values[1, 0]), 4)
    (0.0156, 1.0)
    """
    from scipy.stats import friedmanchisquare, rankdata, studentized_range, wilcoxon  # slow import, lazily

    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    names, vals, hib = _values(curves)
    M, N = vals.shape
    if N < 2:
        raise ValueError(f"models must share at least two (viable) thresholds to compare, got {N}")
    alt = "greater" if hib else "less"
    p = np.ones((M, M))
    for i in range(M):
        for j in range(M):
            if i == j:
                continue
            d = vals[i] - vals[j]
            if not np.any(d != 0):
                continue  # identical curves: no evidence either way, p = 1
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                p[i, j] = wilcoxon(vals[i], vals[j], alternative=alt).pvalue
    off = ~np.eye(M, dtype=bool)
    p_holm = np.ones((M, M))
    p_holm[off] = holm(p[off])
    ranks = rankdata(-vals if hib else vals, axis=0)  # rank 1 = best model at that threshold
    mean_ranks = ranks.mean(axis=1)
    if M >= 3:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            fr = friedmanchisquare(*vals)
        f_stat, f_p = float(fr.statistic), float(fr.pvalue)
    else:
        f_stat = f_p = float("nan")
    se = np.sqrt(M * (M + 1) / (6.0 * N))
    q = float(studentized_range.ppf(1 - float(alpha), M, np.inf))
    cd = q / np.sqrt(2.0) * se
    z = np.abs(mean_ranks[:, None] - mean_ranks[None, :]) / se
    nemenyi = np.clip(studentized_range.sf(z * np.sqrt(2.0), M, np.inf), 0.0, 1.0)
    np.fill_diagonal(nemenyi, 1.0)
    return ModelComparison(names=names, p_values=p, p_holm=p_holm, mean_ranks=mean_ranks,
                           friedman_statistic=f_stat, friedman_p=f_p, critical_difference=float(cd),
                           nemenyi_p=nemenyi, n_blocks=int(N), alpha=float(alpha))
