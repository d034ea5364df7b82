"""Shape retrieval from a distance matrix: the paper's SVM on a precomputed kernel, and a 1-NN check."""

from __future__ import annotations

from typing import Any

import numpy as np

from iclr25.utils.seeding import check_seed

from .space import as_real_array

__all__ = ["svm_accuracy", "nearest_neighbour_accuracy", "distance_kernel"]


def _check_D(D: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    D = as_real_array(D, "D")
    y = np.asarray(labels)
    if D.ndim != 2 or D.shape[0] != D.shape[1] or D.shape[0] < 2:
        raise ValueError(f"D must be a square (k, k) distance matrix with k >= 2, got shape {D.shape}")
    if not np.all(np.isfinite(D)) or D.min() < 0:
        raise ValueError("D must be finite and non-negative")
    if y.shape != (D.shape[0],):
        raise ValueError(f"labels must have one entry per row of D ({D.shape[0]}), got shape {y.shape}")
    return D, y


def distance_kernel(D: Any, gamma: float = 10.0) -> np.ndarray:
    """The paper's kernel :math:`K = \\exp(-\\gamma D / \\max D)`.

    References: paper Sec. 5 (shape retrieval), following Beier et al. (2022).
    """
    D = as_real_array(D, "D")
    return np.exp(-gamma * D / max(float(D.max()), np.finfo(float).tiny))


def svm_accuracy(D: Any, labels: Any, *, gamma: float = 10.0, n_splits: int = 10, seed: int = 0) -> float:
    """Mean accuracy of an SVM on the precomputed kernel :math:`\\exp(-\\gamma D/\\max D)` in stratified
    ``n_splits``-fold cross-validation (folds shuffled with ``seed``).

    Needs scikit-learn (``pip install 'iclr25-pgw[repro]'``).

    References: paper Sec. 5 and Table (shape retrieval accuracies).
    """
    D, y = _check_D(D, labels)
    seed = check_seed(seed)
    try:
        from sklearn.model_selection import StratifiedKFold
        from sklearn.svm import SVC
    except ImportError as exc:
        raise ImportError("svm_accuracy needs scikit-learn: pip install 'iclr25-pgw[repro]'") from exc
    K = distance_kernel(D, gamma)
    accs = []
    for train, test in StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed).split(D, y):
        clf = SVC(kernel="precomputed").fit(K[np.ix_(train, train)], y[train])
        accs.append(clf.score(K[np.ix_(test, train)], y[test]))
    return float(np.mean(accs))


def nearest_neighbour_accuracy(D: Any, labels: Any) -> float:
    """Leave-one-out 1-nearest-neighbour accuracy: the share of shapes whose closest other shape has the
    same label."""
    D, y = _check_D(D, labels)
    D = D + np.diag(np.full(len(y), np.inf))
    return float(np.mean(y[np.argmin(D, axis=1)] == y))
