"""A scikit-learn style estimator around :func:`~iclr25.weighted_lowrank.weighted_low_rank`."""

from __future__ import annotations

from typing import Any

import numpy as np

from .altmin import WLRAResult, weighted_low_rank

__all__ = ["WeightedLowRank"]


class WeightedLowRank:
    """Weighted low-rank approximation ``M ≈ X Y^T`` under weights ``W`` by robust alternating minimisation.

    ``__init__`` only stores the options (those of :func:`~iclr25.weighted_lowrank.weighted_low_rank`);
    :meth:`fit` validates, learns and returns ``self``. With ``warm_start=True`` a second ``fit`` starts from
    the previous column factor.

    Attributes
    ----------
    X_ : ndarray, shape (n, k)
        Orthonormal row factor.
    Y_ : ndarray, shape (d, k)
        Column factor; the estimate is ``X_ @ Y_.T``.
    history_ : tuple of RoundInfo
    n_iter_ : int
    result_ : WLRAResult

    Examples
    --------
    >>> from iclr25.weighted_lowrank import planted
    >>> prob = planted(80, 60, 2, noise=0.0, seed=0)
    >>> est = WeightedLowRank(2, n_iter=6).fit(prob.M, prob.W)
    >>> bool(prob.recovery_error(est.reconstruct()) < 1e-6)
    True

    References: Song, Ye, Yin, Zhang (ICLR 2025), Algorithm 1.
    """

    def __init__(self, k: int, *, solver: str = "sketch", n_iter: int = 15, tol: float = 1e-6,
                 sketch: str = "countsketch", sketch_size: int | None = None, refine: str = "cg",
                 refine_steps: int = 30, init: str = "svd", clip: bool = True, mu: float | None = None,
                 reg: float = 0.0, warm_start: bool = False, seed: int = 0) -> None:
        self.k = k
        self.solver = solver
        self.n_iter = n_iter
        self.tol = tol
        self.sketch = sketch
        self.sketch_size = sketch_size
        self.refine = refine
        self.refine_steps = refine_steps
        self.init = init
        self.clip = clip
        self.mu = mu
        self.reg = reg
        self.warm_start = warm_start
        self.seed = seed

    def get_params(self) -> dict[str, Any]:
        """The constructor options (scikit-learn convention)."""
        return {name: getattr(self, name) for name in (
            "k", "solver", "n_iter", "tol", "sketch", "sketch_size", "refine", "refine_steps", "init", "clip",
            "mu", "reg", "warm_start", "seed")}

    def fit(self, M: Any, W: Any = None, *, truth: Any = None, callback: Any = None) -> WeightedLowRank:
        """Fit ``M ≈ X Y^T`` under weights ``W`` (None: all ones); ``truth`` adds recovery errors to the history."""
        init: Any = self.init
        if self.warm_start and hasattr(self, "result_"):
            init = self.result_.Y
        res: WLRAResult = weighted_low_rank(
            M, W, self.k, solver=self.solver, n_iter=self.n_iter, tol=self.tol, sketch=self.sketch,
            sketch_size=self.sketch_size, refine=self.refine, refine_steps=self.refine_steps, init=init,
            clip=self.clip, mu=self.mu, reg=self.reg, truth=truth, seed=self.seed, callback=callback)
        self.result_ = res
        self.X_ = res.X
        self.Y_ = res.Y
        self.history_ = res.history
        self.n_iter_ = res.n_iter
        return self

    def reconstruct(self) -> np.ndarray:
        """The fitted rank-``k`` estimate ``X_ @ Y_.T``."""
        if not hasattr(self, "result_"):
            raise ValueError("this WeightedLowRank is not fitted yet: call fit(M, W) first")
        return self.result_.reconstruct()
