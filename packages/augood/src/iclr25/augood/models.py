"""The case study's models on fingerprints: random forest, ridge regression and Tanimoto k-nearest
neighbours (scikit-learn API: ``fit``/``predict``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["MODELS", "TanimotoKNNRegressor", "model_factory"]

#: Model names understood by :func:`model_factory`.
MODELS = ("rf", "ridge", "knn")


class TanimotoKNNRegressor:
    """k-nearest-neighbour regression with Tanimoto similarity on binary fingerprints.

    The prediction is the mean label of the ``k`` most similar training items (equal similarities are
    broken deterministically by ``np.argpartition``).
    Similarities come from the same sparse × dense kernel as
    :func:`~iclr25.augood.similarity_matrix`, which is much faster than scikit-learn's generic Jaccard
    distance on dense boolean arrays.
    """

    def __init__(self, n_neighbors: int = 5) -> None:
        self.n_neighbors = n_neighbors

    def fit(self, X: Any, y: Any) -> TanimotoKNNRegressor:
        from .similarity import _binary_matrix

        if isinstance(self.n_neighbors, bool) or not isinstance(self.n_neighbors, (int, np.integer)) \
                or self.n_neighbors < 1:
            raise ValueError(f"n_neighbors must be a positive integer, got {self.n_neighbors!r}")
        self.X_ = _binary_matrix(X if sp.issparse(X) else np.asarray(X), "X")
        self.y_ = np.asarray(y, dtype=np.float64)
        if self.y_.shape != (self.X_.shape[0],):
            raise ValueError(f"y must have one value per row of X ({self.X_.shape[0]}), got {self.y_.shape}")
        return self

    def predict(self, X: Any) -> np.ndarray:
        from .allpairs import row_blocks
        from .similarity import _binary_matrix

        q = _binary_matrix(X if sp.issparse(X) else np.asarray(X), "X")
        k = min(int(self.n_neighbors), self.X_.shape[0])
        out = np.empty(q.shape[0])
        for start, block in row_blocks(q, self.X_, "tanimoto"):
            nn = np.argpartition(-block, k - 1, axis=1)[:, :k]
            out[start:start + block.shape[0]] = self.y_[nn].mean(axis=1)
        return out


def model_factory(name: str, *, seed: int = 0, n_trees: int = 200) -> Callable[[], Any]:
    """A zero-argument constructor of a fresh model, as :func:`~iclr25.augood.good_curve` expects.

    ``rf``: random forest (``n_trees`` trees, √d features per split); ``ridge``: ridge regression
    (α = 1); ``knn``: Tanimoto 5-NN.
    """
    if name == "rf":
        from sklearn.ensemble import RandomForestRegressor

        return lambda: RandomForestRegressor(n_estimators=n_trees, max_features="sqrt", n_jobs=1,
                                             random_state=seed)
    if name == "ridge":
        from sklearn.linear_model import Ridge

        return lambda: Ridge(alpha=1.0)
    if name == "knn":
        return lambda: TanimotoKNNRegressor(5)
    raise ValueError(f"model must be one of {MODELS}, got {name!r}")
