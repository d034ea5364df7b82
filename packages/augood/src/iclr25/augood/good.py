"""The GOOD curve: model performance on CCPart test sets of decreasing train–test similarity.

:math:`P(\\lambda)` is the test metric of a model trained on the training part of the CCPart partition at
threshold :math:`\\lambda`; every test item then has similarity below :math:`\\lambda` to every training item.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from iclr25.utils.progress import progress
from iclr25.utils.seeding import check_seed

from .metrics import METRICS, batch_metric, higher_is_better
from .partition import _check_sizes, ccpart_sweep, check_similarity, check_thresholds, random_partition

__all__ = ["GOODCurve", "good_curve"]


@dataclasses.dataclass(frozen=True, eq=False)
class GOODCurve:
    """Performance of one model at each threshold, over repeated seeds, with bootstrap intervals.

    Attributes
    ----------
    name : str
        Model name.
    metric : str
        Metric name (``"callable"`` for a user function).
    higher_is_better : bool
    thresholds : numpy.ndarray, shape (K,)
    performance : numpy.ndarray, shape (S, K)
        Per seed and threshold; NaN where the partition was not viable.
    test_fraction : numpy.ndarray, shape (S, K)
        Achieved test fraction of each partition.
    viable : numpy.ndarray of bool, shape (K,)
        Thresholds whose partition was viable for every seed.
    mean : numpy.ndarray, shape (K,)
        Mean performance over seeds (NaN where not viable).
    ci_low, ci_high : numpy.ndarray, shape (K,)
        Percentile bootstrap interval of ``mean`` (test sets resampled with replacement).
    bootstrap : numpy.ndarray, shape (B, K)
        The bootstrap replicates of ``mean``, reused by :func:`~iclr25.augood.au_good` for its interval.
    random_performance : numpy.ndarray, shape (S,)
        Performance on a random (in-distribution) partition of the same sizes, per seed.
    seeds : tuple of int
    """

    name: str
    metric: str
    higher_is_better: bool
    thresholds: np.ndarray
    performance: np.ndarray
    test_fraction: np.ndarray
    viable: np.ndarray
    mean: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    bootstrap: np.ndarray
    random_performance: np.ndarray
    seeds: tuple[int, ...]

    @property
    def viable_thresholds(self) -> np.ndarray:
        return self.thresholds[self.viable]

    def monotonicity(self) -> float:
        """Spearman ρ between λ and the mean performance over the viable thresholds.

        The paper's first criterion for a good similarity function: P(λ) should rise with λ.
        """
        from scipy.stats import spearmanr

        if self.viable.sum() < 2:
            return float("nan")
        return float(spearmanr(self.thresholds[self.viable], self.mean[self.viable])[0])

    def seed_monotonicity(self) -> np.ndarray:
        """Spearman ρ(λ, P(λ)) of each seed's curve over the viable thresholds."""
        from scipy.stats import spearmanr

        v = self.viable
        if v.sum() < 2:
            return np.full(len(self.seeds), np.nan)
        return np.array([spearmanr(self.thresholds[v], p[v])[0] for p in self.performance])

    def dynamic_range(self) -> float:
        """Width of the viable threshold range, max − min (the paper's second criterion)."""
        t = self.viable_thresholds
        return float(t.max() - t.min()) if t.size else float("nan")


def check_bootstrap(n_bootstrap: Any, confidence: Any) -> tuple[int, float]:
    """Validate a bootstrap replicate count (>= 0) and an interval level in (0, 1)."""
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)) or n_bootstrap < 0:
        raise ValueError(f"n_bootstrap must be a non-negative integer, got {n_bootstrap!r}")
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return int(n_bootstrap), float(confidence)


def _check_xy(X: Any, y: Any, n: int) -> tuple[Any, np.ndarray]:
    if np.iscomplexobj(X.data if sp.issparse(X) else np.asarray(X)):  # never cast to its real part
        raise TypeError("X must be a real feature matrix, got complex values")
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        if X.data.size and not np.all(np.isfinite(X.data)):
            raise ValueError("X must be finite (no NaN or inf)")
    else:
        X = np.asarray(X)
        if X.dtype == object or not (np.issubdtype(X.dtype, np.number) or X.dtype == bool):
            raise TypeError(f"X must be a numeric feature matrix, got dtype {X.dtype}")
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D feature matrix (items × features), got shape {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("X must be finite (no NaN or inf)")
    if X.shape[0] != n:
        raise ValueError(f"X must have one row per item of sim ({n}), got {X.shape[0]}")
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"y must be a 1-D array with one entry per item ({n}), got shape {y.shape}")
    if y.dtype.kind not in "biuf":
        raise TypeError(f"y must be numeric, got dtype {y.dtype}")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y must be finite (no NaN or inf)")
    return X, y


def _fit_predict(make_model: Callable[[], Any], X: Any, y: np.ndarray, train: np.ndarray,
                 test: np.ndarray) -> np.ndarray:
    model = make_model()
    if not (hasattr(model, "fit") and hasattr(model, "predict")):
        raise TypeError(f"make_model() must return an estimator with fit and predict, got {type(model).__name__}")
    model.fit(X[train], y[train])
    return np.asarray(model.predict(X[test]))


def good_curve(make_model: Callable[[], Any], X: Any, y: Any, sim: Any, thresholds: Sequence[float], *,
               metric: str | Callable[[np.ndarray, np.ndarray], float] = "spearman",
               seeds: Sequence[int] = (0,), test_size: float = 0.2, valid_size: float = 0.1,
               n_bootstrap: int = 200, confidence: float = 0.95, name: str | None = None,
               tie_break: str = "random", tie_rule: str = ">=", min_test_fraction: float = 0.9,
               show_progress: bool = True) -> GOODCurve:
    """GOOD curve: train on CCPart(λ) training data and score on its test set, for each λ and seed.

    .. math::

        P(\\lambda) = \\frac{1}{S}\\sum_{s=1}^{S} m\\big(y_{\\mathrm{test}_s(\\lambda)},\\
        f_{s,\\lambda}(X_{\\mathrm{test}_s(\\lambda)})\\big),

    where :math:`f_{s,\\lambda}` is ``make_model()`` fitted on :math:`\\mathrm{train}_s(\\lambda)` of
    :func:`~iclr25.augood.ccpart` with tie seed ``s``. Validation items are held out of training (the
    paper reserves them for model selection). Non-viable thresholds are not fitted and give NaN.

    Parameters
    ----------
    make_model : callable
        Returns a fresh unfitted estimator with ``fit(X, y)`` and ``predict(X)`` (e.g. scikit-learn).
    X : array or sparse matrix, shape (n, d)
    y : array, shape (n,)
    sim : square similarity matrix, shape (n, n)
        Stored at least down to ``min(thresholds)`` (``similarity_matrix(..., thresholds=thresholds)``).
    thresholds : increasing sequence of λ in [0, 1]
    metric : str or callable
        One of :data:`~iclr25.augood.metrics.METRICS` (default Spearman ρ) or ``f(y_true, y_pred)``.
    seeds : sequence of int
        Tie-breaking seeds of CCPart (and of the random baseline and the bootstrap).
    n_bootstrap : int
        Bootstrap resamples of each test set for the interval (0 disables it).
    confidence : float
        Level of the percentile interval.
    tie_break, tie_rule, min_test_fraction :
        As in :func:`~iclr25.augood.ccpart`.

    Returns
    -------
    GOODCurve

    References
    ----------
    Paper Sec. 3.4 (GOOD curve) and Sec. 3.5 (monotonicity and dynamic range).
    """
    sim = check_similarity(sim)
    n = sim.shape[0]
    X, y = _check_xy(X, y, n)
    thresholds = check_thresholds(thresholds)
    test_size, valid_size = _check_sizes(test_size, valid_size)
    if not callable(make_model):
        raise TypeError(f"make_model must be a callable returning an estimator, got {type(make_model).__name__}")
    if not callable(metric) and metric not in METRICS:
        raise ValueError(f"metric must be one of {sorted(METRICS)} or a callable, got {metric!r}")
    if isinstance(seeds, (int, np.integer)):
        seeds = (int(seeds),)
    seeds = tuple(check_seed(s, "seeds") for s in seeds)
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    B, confidence = check_bootstrap(n_bootstrap, confidence)
    steps = progress(total=len(seeds) * (thresholds.size + 1), desc=f"GOOD curve {name or ''}".strip()) \
        if show_progress else None
    runs = [_seed_run(make_model, X, y, sim, thresholds, seed, metric, B, steps,
                      dict(test_size=test_size, valid_size=valid_size, seed=seed, tie_break=tie_break,
                           tie_rule=tie_rule, min_test_fraction=min_test_fraction)) for seed in seeds]
    if steps is not None:
        steps.close()
    perf, frac, viable_sk, boot, rand = (np.stack([r[i] for r in runs]) for i in range(5))
    viable = viable_sk.all(axis=0)
    mean, lo, hi, boot_mean = _summary(perf, boot, viable, confidence)
    return GOODCurve(
        name=name or getattr(make_model, "__name__", "model"),
        metric=metric if isinstance(metric, str) else "callable",
        higher_is_better=higher_is_better(metric),
        thresholds=thresholds, performance=perf, test_fraction=frac, viable=viable, mean=mean,
        ci_low=lo, ci_high=hi, bootstrap=boot_mean, random_performance=rand, seeds=seeds,
    )


def _seed_run(make_model: Callable[[], Any], X: Any, y: np.ndarray, sim: sp.csr_matrix, thresholds: np.ndarray,
              seed: int, metric: Any, B: int, steps: Any, part_args: dict[str, Any]):
    """One tie seed: (performance (K,), test fraction (K,), viable (K,), bootstrap (B, K), random-split score)."""
    K = thresholds.size
    perf, frac = np.full(K, np.nan), np.zeros(K)
    viable = np.zeros(K, dtype=bool)
    boot = np.full((B, K), np.nan)
    rng = np.random.default_rng([seed, 1])
    for k, part in enumerate(ccpart_sweep(sim, thresholds, **part_args)):
        frac[k], viable[k] = part.test_fraction, part.viable
        if part.viable:
            pred = _fit_predict(make_model, X, y, part.train, part.test)
            yt = y[part.test]
            perf[k] = batch_metric(metric, yt[None, :], pred[None, :])[0]
            if B:
                idx = rng.integers(0, yt.size, size=(B, yt.size))
                boot[:, k] = batch_metric(metric, yt[idx], pred[idx])
        if steps is not None:
            steps.update(1)
    rp = random_partition(y.size, test_size=part_args["test_size"], valid_size=part_args["valid_size"], seed=seed)
    pred = _fit_predict(make_model, X, y, rp.train, rp.test)
    rand = batch_metric(metric, y[rp.test][None, :], pred[None, :])[0]
    if steps is not None:
        steps.update(1)
    return perf, frac, viable, boot, np.float64(rand)


def _summary(perf: np.ndarray, boot: np.ndarray, viable: np.ndarray, confidence: float):
    """Mean over seeds and the percentile interval of the bootstrap mean, at the thresholds viable for all seeds."""
    K = perf.shape[1]
    B = boot.shape[1]
    mean = np.full(K, np.nan)
    mean[viable] = perf[:, viable].mean(axis=0)
    boot_mean = np.full((B, K), np.nan)
    lo, hi = np.full(K, np.nan), np.full(K, np.nan)
    if B and viable.any():
        boot_mean[:, viable] = boot[:, :, viable].mean(axis=0)
        alpha = (1.0 - confidence) / 2
        lo[viable] = np.nanquantile(boot_mean[:, viable], alpha, axis=0)
        hi[viable] = np.nanquantile(boot_mean[:, viable], 1 - alpha, axis=0)
    return mean, lo, hi, boot_mean
