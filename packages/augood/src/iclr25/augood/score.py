"""AU-GOOD: the GOOD curve averaged under the deployment distribution of train–deployment similarity."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import scipy.sparse as sp

from iclr25.utils.seeding import check_seed

from .good import GOODCurve, check_bootstrap
from .partition import check_thresholds

__all__ = ["AUGOOD", "UNMATCHED", "au_good", "deployment_weights"]

#: What happens to deployment items outside the thresholds' bins (no stored similarity, or above the last
#: threshold): put them in the lowest/highest bin, or drop them as the reference implementation does.
UNMATCHED = ("lowest_bin", "drop")


@dataclasses.dataclass(frozen=True, eq=False)
class AUGOOD:
    """The AU-GOOD value with the weights that produced it.

    Attributes
    ----------
    value : float
        :math:`\\sum_k w_k P(\\lambda_k)`.
    weights : numpy.ndarray, shape (K,)
        Deployment mass of each viable threshold's bin (sums to 1).
    thresholds, performance : numpy.ndarray, shape (K,)
        The viable thresholds and the curve values at them.
    dropped_mass : float
        Fraction of deployment items outside the bins: with ``unmatched="drop"`` they were discarded; with
        ``"lowest_bin"`` they were counted in the lowest (no similarity stored) or highest (above the last
        threshold) bin. 0 for the uniform prior.
    n_targets, n_unmatched, n_above : int
        Deployment items, those with no similarity stored, and those above the last threshold.
    unmatched : str
    ci_low, ci_high : float
        Percentile bootstrap interval (curve replicates × resampled deployment set), NaN when not computed.
    """

    value: float
    weights: np.ndarray
    thresholds: np.ndarray
    performance: np.ndarray
    dropped_mass: float
    n_targets: int
    n_unmatched: int
    n_above: int
    unmatched: str
    ci_low: float = float("nan")
    ci_high: float = float("nan")


def _curve_values(curve: Any, thresholds: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    if isinstance(curve, GOODCurve):
        t = curve.thresholds
        if thresholds is not None:
            given = check_thresholds(thresholds)
            if given.shape != t.shape or not np.allclose(given, t, rtol=0, atol=1e-12):
                raise ValueError("thresholds must equal the curve's thresholds (or be omitted)")
        return t, np.asarray(curve.mean, dtype=np.float64), curve.bootstrap
    if thresholds is None:
        raise ValueError("thresholds are required when curve is an array of performance values")
    t = check_thresholds(thresholds)
    if np.iscomplexobj(curve):  # never cast to its real part
        raise TypeError("curve must hold real performance values, got complex numbers")
    try:
        p = np.asarray(curve, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"curve must be a GOODCurve or a 1-D array of performance values ({exc})") from exc
    if p.ndim != 1 or p.shape != t.shape:
        raise ValueError(f"curve must have one value per threshold ({t.size}), got shape {p.shape}")
    if np.any(np.isinf(p)):
        raise ValueError("curve must not contain inf (NaN marks a non-viable threshold)")
    return t, p, None


def _deployment_max(deployment_similarity: Any) -> np.ndarray:
    """Per deployment item, its highest similarity to the training data (NaN: none stored)."""
    if np.iscomplexobj(deployment_similarity.data if sp.issparse(deployment_similarity)
                       else np.asarray(deployment_similarity)):  # never cast to its real part
        raise TypeError("deployment_similarity must hold real similarities, got complex numbers")
    if sp.issparse(deployment_similarity):
        m = sp.csr_matrix(deployment_similarity)
        if m.shape[0] == 0:
            raise ValueError("deployment_similarity must have at least one deployment item (row)")
        if m.data.size and not np.all(np.isfinite(m.data)):
            raise ValueError("deployment_similarity must be finite (no NaN or inf)")
        has = np.diff(m.indptr) > 0
        s = np.full(m.shape[0], np.nan)
        if has.any():
            # row-wise max over stored entries only: an absent entry is "below min_threshold", not 0
            s[has] = np.maximum.reduceat(m.data, m.indptr[:-1][has]).astype(np.float64)
        return s
    try:
        s = np.asarray(deployment_similarity, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError("deployment_similarity must be a 1-D array of maximum similarities or a "
                        f"(deployment × training) similarity matrix ({exc})") from exc
    if s.ndim == 2:
        if not np.all(np.isfinite(s)):
            raise ValueError("deployment_similarity must be finite (no NaN or inf)")
        s = s.max(axis=1) if s.shape[1] else np.full(s.shape[0], np.nan)
    if s.ndim != 1:
        raise ValueError(f"deployment_similarity must be 1-D or 2-D, got shape {s.shape}")
    if s.size == 0:
        raise ValueError("deployment_similarity must not be empty; expected at least one deployment item")
    if np.any(np.isinf(s)):
        raise ValueError("deployment_similarity must not contain inf (NaN marks an unmatched item)")
    return s


def deployment_weights(max_sim: np.ndarray, thresholds: np.ndarray, *, unmatched: str = "lowest_bin"
                       ) -> tuple[np.ndarray, int, int]:
    """Histogram of deployment similarities over threshold bins, normalised to weights.

    Bin 1 is :math:`s \\le \\lambda_1`, bin :math:`k` is :math:`\\lambda_{k-1} < s \\le \\lambda_k`. Returns
    ``(weights, n_unmatched, n_above)``.
    """
    if unmatched not in UNMATCHED:
        raise ValueError(f"unmatched must be one of {UNMATCHED}, got {unmatched!r}")
    finite = np.isfinite(max_sim)
    n_unmatched = int((~finite).sum())
    s = max_sim[finite]
    above = s > thresholds[-1]
    n_above = int(above.sum())
    # searchsorted(side="left") gives the first k with s <= λ_k, i.e. the right-closed bins above
    counts = np.bincount(np.searchsorted(thresholds, s[~above], side="left"),
                         minlength=thresholds.size).astype(np.float64)
    if unmatched == "lowest_bin":
        counts[0] += n_unmatched
        counts[-1] += n_above
    total = counts.sum()
    if total == 0:
        raise ValueError("no deployment item falls inside the threshold bins, so AU-GOOD is undefined with "
                         "unmatched='drop'; use unmatched='lowest_bin'")
    return counts / total, n_unmatched, n_above


def au_good(curve: GOODCurve | Any, deployment_similarity: Any = None, thresholds: Any = None, *,
            unmatched: str = "lowest_bin", n_bootstrap: int = 0, confidence: float = 0.95,
            seed: int = 0) -> AUGOOD:
    """Area under the GOOD curve, weighted by the deployment distribution.

    .. math::

        \\mathrm{AU\\text{-}GOOD} = \\int P(\\lambda)\\, p_T(\\lambda)\\, d\\lambda
        \\approx \\sum_{k=1}^{K} w_k P(\\lambda_k), \\qquad
        w_k = \\frac{\\#\\{j : \\lambda_{k-1} < s_j \\le \\lambda_k\\}}{\\sum_k \\#\\{\\cdot\\}},

    with :math:`s_j = \\max_i \\mathrm{sim}(t_j, x_i)` the similarity of deployment item :math:`t_j` to its
    nearest training item. Only viable thresholds (finite :math:`P`) form bins. Without a deployment set
    the weights are the uniform prior :math:`w_k = 1/K`.

    ``unmatched="lowest_bin"`` (default) counts items with no stored similarity (below the similarity
    matrix's ``min_threshold``) in bin 1 and items above :math:`\\lambda_K` in bin :math:`K`;
    ``unmatched="drop"`` discards both, as the reference implementation does. With :math:`m_\\ell` and
    :math:`m_h` the fractions of such items,
    ``AU_lowest = (1 − m_ℓ − m_h)·AU_drop + m_ℓ·P(λ_1) + m_h·P(λ_K)``.

    Parameters
    ----------
    curve : GOODCurve or array-like
        A GOOD curve, or performance values at ``thresholds`` (NaN marks non-viable ones).
    deployment_similarity : 1-D array, 2-D array or sparse matrix, optional
        Either each deployment item's maximum similarity to the training data (NaN: unmatched), or a
        deployment × training similarity matrix (e.g. ``similarity_matrix(deploy, train,
        min_threshold=...)``); rows with no stored entry are unmatched.
    thresholds : array-like, optional
        Required with an array ``curve``; must match a GOODCurve's thresholds.
    unmatched : {"lowest_bin", "drop"}
    n_bootstrap : int
        Bootstrap replicates for the interval: the curve's own replicates (when it has them) combined
        with resampling the deployment set.
    confidence : float
    seed : int

    Returns
    -------
    AUGOOD

    References
    ----------
    Paper Sec. 3.2, Eq. for AU-GOOD (discrete form of the integral of the GOOD curve under :math:`p_T`).

    Examples
    --------
    >>> r = au_good([0.2, 0.5, 0.8], [0.1, 0.5, 0.95, 0.3], thresholds=[0.4, 0.6, 0.8])
    >>> round(r.value, 4), r.weights.tolist(), r.dropped_mass
    (0.425, [0.5, 0.25, 0.25], 0.25)
    """
    t, p, boot = _curve_values(curve, thresholds)
    if unmatched not in UNMATCHED:
        raise ValueError(f"unmatched must be one of {UNMATCHED}, got {unmatched!r}")
    seed = check_seed(seed)
    B, confidence = check_bootstrap(n_bootstrap, confidence)
    viable = np.isfinite(p)
    if not viable.any():
        raise ValueError("curve has no viable threshold (all performance values are NaN)")
    t_v, p_v = t[viable], p[viable]
    w, s, n_t, n_un, n_ab, dropped = _deployment_bins(deployment_similarity, t_v, unmatched)
    value = float(np.dot(w, p_v))
    lo = hi = float("nan")
    if B:
        lo, hi = _bootstrap_interval(boot, viable, p_v, w, s, t_v, unmatched, B, confidence, seed)
    return AUGOOD(value=value, weights=w, thresholds=t_v, performance=p_v, dropped_mass=float(dropped),
                  n_targets=n_t, n_unmatched=n_un, n_above=n_ab, unmatched=unmatched, ci_low=lo, ci_high=hi)


def _deployment_bins(deployment_similarity: Any, t_v: np.ndarray, unmatched: str
                     ) -> tuple[np.ndarray, np.ndarray | None, int, int, int, float]:
    """Step of :func:`au_good`: the weights over the viable thresholds' bins and the deployment counts.

    Returns ``(weights, max_sim, n_targets, n_unmatched, n_above, dropped_mass)``; without a deployment set
    the weights are the uniform prior and ``max_sim`` is None.
    """
    if deployment_similarity is None:
        return np.full(t_v.size, 1.0 / t_v.size), None, 0, 0, 0, 0.0
    s = _deployment_max(deployment_similarity)
    if np.nanmin(s, initial=0.0) < 0 or np.nanmax(s, initial=0.0) > 1:
        raise ValueError("deployment_similarity must lie in [0, 1]")
    w, n_un, n_ab = deployment_weights(s, t_v, unmatched=unmatched)
    n_t = int(s.size)
    return w, s, n_t, n_un, n_ab, (n_un + n_ab) / n_t


def _bootstrap_interval(boot: np.ndarray | None, viable: np.ndarray, p_v: np.ndarray, w: np.ndarray,
                        s: np.ndarray | None, t_v: np.ndarray, unmatched: str, B: int, confidence: float,
                        seed: int) -> tuple[float, float]:
    """Step of :func:`au_good`: the percentile interval over ``B`` replicates, each pairing a curve replicate
    (drawn from the curve's own bootstrap when it has one) with a resampled deployment set."""
    rng = np.random.default_rng(seed)
    if boot is not None and boot.shape[0]:
        curves = boot[rng.integers(0, boot.shape[0], size=B)][:, viable]
    else:
        curves = np.broadcast_to(p_v, (B, p_v.size))
    if s is None:
        ws = np.broadcast_to(w, (B, w.size))
    else:
        ws = np.stack([deployment_weights(s[rng.integers(0, s.size, size=s.size)], t_v,
                                          unmatched=unmatched)[0] for _ in range(B)])
    vals = np.einsum("bk,bk->b", ws, curves)
    alpha = (1.0 - confidence) / 2
    lo, hi = (float(v) for v in np.nanquantile(vals, [alpha, 1 - alpha]))
    return lo, hi
