"""Performance metrics, each evaluated on a batch of bootstrap resamples at once (rows of 2-D arrays)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["METRICS", "batch_metric", "higher_is_better"]


def _pearson_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    den = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (a * b).sum(axis=1) / np.where(den > 0, den, 1.0), np.nan)


def _spearman(y: np.ndarray, p: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return _pearson_rows(rankdata(y, axis=1), rankdata(p, axis=1))


def _r2(y: np.ndarray, p: np.ndarray) -> np.ndarray:
    ss_res = ((y - p) ** 2).sum(axis=1)
    ss_tot = ((y - y.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ss_tot > 0, 1.0 - ss_res / np.where(ss_tot > 0, ss_tot, 1.0), np.nan)


def _mae(y: np.ndarray, p: np.ndarray) -> np.ndarray:
    return np.abs(y - p).mean(axis=1)


def _rmse(y: np.ndarray, p: np.ndarray) -> np.ndarray:
    return np.sqrt(((y - p) ** 2).mean(axis=1))


def _accuracy(y: np.ndarray, p: np.ndarray) -> np.ndarray:
    return (y == p).mean(axis=1)


def _mcc(y: np.ndarray, p: np.ndarray) -> np.ndarray:
    y = y.astype(bool)
    p = p > 0.5 if p.dtype.kind == "f" else p.astype(bool)
    tp = (y & p).sum(axis=1).astype(np.float64)
    tn = (~y & ~p).sum(axis=1).astype(np.float64)
    fp = (~y & p).sum(axis=1).astype(np.float64)
    fn = (y & ~p).sum(axis=1).astype(np.float64)
    den = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (tp * tn - fp * fn) / np.where(den > 0, den, 1.0), 0.0)


def _auroc(y: np.ndarray, p: np.ndarray) -> np.ndarray:
    # Mann–Whitney form: AUC = (sum of positive ranks - n_pos(n_pos+1)/2) / (n_pos n_neg)
    from scipy.stats import rankdata

    y = y.astype(bool)
    ranks = rankdata(p, axis=1)
    n_pos = y.sum(axis=1).astype(np.float64)
    n_neg = y.shape[1] - n_pos
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = ((ranks * y).sum(axis=1) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
    return np.where((n_pos > 0) & (n_neg > 0), auc, np.nan)


#: name → (batched function of (y_true, y_pred) rows, higher is better)
METRICS: dict[str, tuple[Callable[[np.ndarray, np.ndarray], np.ndarray], bool]] = {
    "spearman": (_spearman, True),
    "pearson": (_pearson_rows, True),
    "r2": (_r2, True),
    "mae": (_mae, False),
    "rmse": (_rmse, False),
    "accuracy": (_accuracy, True),
    "mcc": (_mcc, True),
    "auroc": (_auroc, True),
}


def higher_is_better(metric: str | Callable[..., float]) -> bool:
    """Whether a larger value of ``metric`` means a better model (callables are assumed to be scores)."""
    if callable(metric):
        return True
    return METRICS[metric][1]


def batch_metric(metric: str | Callable[[np.ndarray, np.ndarray], float], y_true: np.ndarray,
                 y_pred: np.ndarray) -> np.ndarray:
    """``metric`` on each row pair of 2-D ``y_true``/``y_pred`` (a callable is applied row by row).

    Examples
    --------
    >>> import numpy as np
    >>> batch_metric("spearman", np.array([[1., 2., 3.]]), np.array([[1., 3., 2.]])).round(2)
    array([0.5])
    """
    y_true = np.atleast_2d(y_true)
    y_pred = np.atleast_2d(y_pred)
    if callable(metric):
        return np.array([float(metric(a, b)) for a, b in zip(y_true, y_pred, strict=True)])
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {sorted(METRICS)} or a callable, got {metric!r}")
    return METRICS[metric][0](y_true, y_pred)
