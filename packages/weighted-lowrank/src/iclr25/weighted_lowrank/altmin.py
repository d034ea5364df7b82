"""Robust alternating minimisation for weighted low-rank approximation (LLR16 with approximate updates).

.. math::  \\min_{X \\in R^{n×k}, Y \\in R^{d×k}} \\|W ∘ (M - X Y^T)\\|_F^2 + λ(\\|X\\|_F^2 + \\|Y\\|_F^2)

Algorithm (LLR16 Algorithm 1, every regression solved by :mod:`.regression`):

1. ``Y_0`` = top-``k`` right singular vectors of ``W ∘ M`` (randomised SVD), clipped and orthonormalised
   (or a random orthonormal ``Y_0``, or a user's warm start).
2. For ``t = 1..T``: ``X̃ = argmin_X ‖W ∘ (M - X Y^T)‖``, ``X = QR(clip(X̃))``;
   ``Ỹ = argmin_Y ‖W ∘ (M - X Y^T)‖``, ``Y = QR(clip(Ỹ))``.
3. Output ``X`` (orthonormal) and ``Ỹ``: the estimate is ``X Ỹ^T``.

``clip`` zeroes the rows of the orthonormalised factor whose norm exceeds ``2 μ sqrt(k / rows)`` (they would
break incoherence) and re-orthonormalises. The paper's robust analysis (Section 4, Appendix D-E) shows that
solving each regression only to accuracy ``ε₀`` keeps the geometric contraction
``dist(Y_{t+1}, V) <= dist(Y_t, V) / 2 + O(noise + ε₀)``, which is what makes the sketched solver safe.

References: Song, Ye, Yin, Zhang (ICLR 2025), Algorithm 1 and Theorem 1.2; Li, Liang, Risteski (ICML 2016),
Algorithm 1 (ALT) and the SVD initialisation with clipping.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from iclr25.utils.progress import progress
from iclr25.utils.seeding import check_seed

from .regression import blas_threads_for, check_factor, check_solver_options, solve_rows
from .weights import DEFAULT_BATCH_BYTES, WeightedMatrix, as_weighted_matrix

__all__ = ["RoundInfo", "WLRAResult", "weighted_low_rank", "default_incoherence", "INITS"]

INITS = ("svd", "random")


@dataclasses.dataclass(frozen=True)
class RoundInfo:
    """What one round of alternating minimisation did.

    Attributes
    ----------
    round : int
        1-based round number.
    objective : float
        ``‖W ∘ (M - X Ỹ^T)‖_F^2 + λ(‖X‖_F^2 + ‖Ỹ‖_F^2)`` after the round.
    relative_residual : float
        ``‖W ∘ (M - X Ỹ^T)‖_F / ‖W ∘ M‖_F``.
    recovery_error : float or None
        ``‖M* - X Ỹ^T‖_F / ‖M*‖_F`` when the truth was given.
    seconds : float
        Wall time of the round's two half-steps (QR and clipping included, the diagnostics above not).
    solver_steps : int
        Refinement steps of the round (most over the two half-steps; 0 for the exact solver).
    rel_gradient : float
        Largest final relative preconditioned gradient of the round's regressions (0 for exact).
    clipped : int
        Rows zeroed by clipping in this round.
    """

    round: int
    objective: float
    relative_residual: float
    recovery_error: float | None
    seconds: float
    solver_steps: int
    rel_gradient: float
    clipped: int


@dataclasses.dataclass(frozen=True)
class WLRAResult:
    """Factors ``X`` (``n × k``, orthonormal columns) and ``Y`` (``d × k``) with ``M ≈ X Y^T`` under ``W``."""

    X: np.ndarray
    Y: np.ndarray
    history: tuple[RoundInfo, ...]
    n_iter: int
    solver: str

    def reconstruct(self) -> np.ndarray:
        """The rank-``k`` estimate ``X Y^T`` (``n × d``)."""
        return self.X @ self.Y.T

    @property
    def objectives(self) -> np.ndarray:
        return np.array([h.objective for h in self.history])

    @property
    def recovery_errors(self) -> np.ndarray:
        """Recovery error per round (NaN where the truth was not given)."""
        return np.array([np.nan if h.recovery_error is None else h.recovery_error for h in self.history])

    @property
    def round_seconds(self) -> np.ndarray:
        return np.array([h.seconds for h in self.history])


def default_incoherence(rows: int, k: int) -> float:
    """``μ`` of a uniformly random ``k``-dimensional subspace of ``R^rows`` with high probability.

    The largest row norm of a random orthonormal ``rows × k`` basis is about
    ``sqrt((k + 2 sqrt(k ln r) + 2 ln r) / r)``; dividing by ``sqrt(k / r)`` gives this ``μ``. Clipping at
    ``2 μ sqrt(k / r)`` then removes only genuinely spiky rows.
    """
    lr = math.log(max(rows, 2))
    return math.sqrt(1.0 + 2.0 * math.sqrt(lr / k) + 2.0 * lr / k)


def _orth(A: np.ndarray) -> np.ndarray:
    return np.linalg.qr(A)[0]


def _orth_clip(A: np.ndarray, clip: bool, mu: float | None) -> tuple[np.ndarray, int]:
    """``QR(clip(A))``: orthonormalise, zero the rows above ``2 μ sqrt(k/r)``, orthonormalise again."""
    Q = _orth(A)
    if not clip:
        return Q, 0
    r, k = Q.shape
    m = default_incoherence(r, k) if mu is None else mu
    norms = np.linalg.norm(Q, axis=1)
    spiky = norms > 2.0 * m * math.sqrt(k / r)
    n_clipped = int(np.count_nonzero(spiky))
    if n_clipped:
        Q = Q.copy()
        Q[spiky] = 0.0
        Q = _orth(Q)
    return Q, n_clipped


def _randomized_right_vectors(A: np.ndarray | sp.csr_array, k: int, rng: np.random.Generator,
                              oversample: int = 10, power: int = 2) -> np.ndarray:
    """Top-``k`` right singular vectors of ``A`` by a randomised range finder with power iterations."""
    n, d = A.shape
    ell = min(d, n, k + oversample)
    Q = _orth(np.asarray(A @ rng.standard_normal((d, ell))))
    for _ in range(power):
        Q = _orth(np.asarray(A.T @ Q))
        Q = _orth(np.asarray(A @ Q))
    B = np.asarray(A.T @ Q).T  # ell x d = Q^T A
    _, _, vt = np.linalg.svd(B, full_matrices=False)
    return vt[:k].T


def _check_k(k: Any, n: int, d: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be a positive integer, got {type(k).__name__}")
    if k < 1 or k > min(n, d):
        raise ValueError(f"k must satisfy 1 <= k <= min(n, d) = {min(n, d)}, got {k}")
    return int(k)


def weighted_low_rank(M: Any, W: Any, k: int, *, solver: str = "sketch", n_iter: int = 15, tol: float = 1e-6,
                      sketch: str = "countsketch", sketch_size: int | None = None, refine: str = "cg",
                      refine_steps: int = 30, init: str | np.ndarray = "svd", clip: bool = True,
                      mu: float | None = None, reg: float = 0.0, truth: Any = None,
                      max_batch_bytes: int = DEFAULT_BATCH_BYTES, seed: int = 0,
                      callback: Callable[[RoundInfo], bool | None] | None = None,
                      show_progress: bool | None = None) -> WLRAResult:
    """Weighted low-rank approximation by robust alternating minimisation.

    .. math::  \\min_{X, Y} \\|W ∘ (M - X Y^T)\\|_F^2 + λ(\\|X\\|_F^2 + \\|Y\\|_F^2)

    Each round solves the row regressions for ``X`` given ``Y`` and the column regressions for ``Y`` given
    ``X`` (whitened by QR and clipped in between), with the exact batched solver (LLR16) or the paper's
    sketch-and-precondition solver, which costs ``O(‖W‖_0 k)`` per refinement step instead of
    ``O(‖W‖_0 k^2)``.

    Parameters
    ----------
    M : array_like or scipy.sparse matrix, shape (n, d)
        Data; NaN allowed where ``W == 0``.
    W : array_like or scipy.sparse matrix, shape (n, d), or None
        Non-negative weights (None: all ones; sparse: kept as CSR, e.g. a 0/1 completion mask).
    k : int
        Target rank, ``1 <= k <= min(n, d)``.
    solver : {"sketch", "exact", "pcg"}
        Row-regression solver (see :func:`~iclr25.weighted_lowrank.weighted_regression`).
    n_iter : int
        Rounds ``T`` (each = one X half-step and one Y half-step).
    tol : float
        Solver tolerance ``ε₀`` of the iterative solvers (relative preconditioned gradient norm).
    sketch : {"countsketch", "srht", "gaussian"}
        Subspace embedding of the ``"sketch"`` solver.
    sketch_size : int, optional
        Sketch rows ``s`` (default ``8k``, at most the row length).
    refine : {"cg", "gd"}
        Refinement iteration on the preconditioned system.
    refine_steps : int
        Most refinement steps per half-step.
    init : {"svd", "random"} or array of shape (d, k)
        SVD initialisation of ``W ∘ M`` (LLR16), a random orthonormal start, or a warm start ``Y_0``.
    clip : bool
        Clip rows of the whitened factors above ``2 μ sqrt(k / rows)``.
    mu : float, optional
        Incoherence ``μ`` used by clipping (default :func:`default_incoherence`).
    reg : float
        Ridge parameter ``λ >= 0``.
    truth : array_like, shape (n, d), optional
        Ground truth ``M*`` for the per-round recovery error.
    max_batch_bytes : int
        Memory cap of the temporaries of one block of rows.
    seed : int
        Seed of the initialisation and the sketches.
    callback : callable, optional
        Called with each :class:`RoundInfo`; returning True stops early.
    show_progress : bool, optional
        Draw a progress bar (default: on a terminal only).

    Returns
    -------
    WLRAResult

    Examples
    --------
    >>> from iclr25.weighted_lowrank import planted
    >>> prob = planted(120, 100, 3, noise=0.0, seed=0)
    >>> res = weighted_low_rank(prob.M, prob.W, 3, n_iter=8, truth=prob.truth)
    >>> bool(res.history[-1].recovery_error < 1e-6)
    True

    References: Song, Ye, Yin, Zhang (ICLR 2025), Algorithm 1 / Theorem 1.2; LLR16 Algorithm 1.
    """
    rng = np.random.default_rng(check_seed(seed))  # the seed is checked first, then the options in turn
    cfg = check_solver_options(solver=solver, sketch=sketch, sketch_size=sketch_size, refine=refine,
                               refine_steps=refine_steps, tol=tol, reg=reg)
    _check_round_options(n_iter, clip, mu, callback)
    A, k, truth_arr = _weighted_problem(M, W, k, truth, max_batch_bytes)
    with threadpool_limits(blas_threads_for(*A.shape, k), user_api="blas"):
        Y = _initial_factor(A, k, init, clip, mu, rng)
        return _alternate(A, Y, k, cfg, n_iter=int(n_iter), clip=bool(clip), mu=mu, truth=truth_arr, rng=rng,
                          callback=callback, show_progress=show_progress)


def _check_round_options(n_iter: Any, clip: Any, mu: Any, callback: Any) -> None:
    """Check the options of :func:`weighted_low_rank` that shape its rounds (``n_iter``, ``clip``, ``mu``,
    ``callback``); raises the TypeError or ValueError that names the first bad one."""
    if isinstance(n_iter, bool) or not isinstance(n_iter, (int, np.integer)):
        raise TypeError(f"n_iter must be a positive integer, got {type(n_iter).__name__}")
    if n_iter < 1:
        raise ValueError(f"n_iter must be >= 1, got {n_iter}")
    if not isinstance(clip, (bool, np.bool_)):
        raise TypeError(f"clip must be True or False, got {type(clip).__name__}")
    if mu is not None and (isinstance(mu, bool) or not isinstance(mu, (int, float, np.floating))
                           or not np.isfinite(mu) or mu <= 0):
        raise ValueError(f"mu must be a positive finite number or None, got {mu!r}")
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable or None, got {type(callback).__name__}")


def _weighted_problem(M: Any, W: Any, k: Any, truth: Any,
                      max_batch_bytes: int) -> tuple[WeightedMatrix, int, np.ndarray | None]:
    """The checked problem of :func:`weighted_low_rank`: the weighted matrix ``W ∘ M``, the rank ``k`` checked
    against its shape ``(n, d)``, and ``truth`` as an ``(n, d)`` array (None when not given)."""
    A = as_weighted_matrix(M, W, max_batch_bytes=max_batch_bytes)
    n, d = A.shape
    k = _check_k(k, n, d)
    truth_arr = None
    if truth is not None:
        truth_arr = check_factor(truth, "truth", n)
        if truth_arr.shape != (n, d):
            raise ValueError(f"truth must have the shape of M {(n, d)}, got {truth_arr.shape}")
    return A, k, truth_arr


def _initial_factor(A: WeightedMatrix, k: int, init: Any, clip: bool, mu: float | None,
                    rng: np.random.Generator) -> np.ndarray:
    d = A.shape[1]
    if isinstance(init, str):
        if init == "svd":
            return _orth_clip(_randomized_right_vectors(A.wm, k, rng), clip, mu)[0]
        if init == "random":
            return _orth(rng.standard_normal((d, k)))
        raise ValueError(f"init must be one of {INITS} or an array of shape ({d}, {k}), got {init!r}")
    Y0 = check_factor(init, "init", d)
    if Y0.shape[1] != k:
        raise ValueError(f"init must have shape ({d}, {k}) (a warm-start factor Y_0), got {Y0.shape}")
    return _orth(Y0)


def _alternate(A: WeightedMatrix, Y: np.ndarray, k: int, cfg: Any, *, n_iter: int, clip: bool,
               mu: float | None, truth: np.ndarray | None, rng: np.random.Generator,
               callback: Callable[[RoundInfo], bool | None] | None, show_progress: bool | None) -> WLRAResult:
    history: list[RoundInfo] = []
    norm_wm = math.sqrt(max(A.weighted_norm_sq(), np.finfo(float).tiny))
    norm_truth = float(np.linalg.norm(truth)) if truth is not None else 1.0
    X = np.zeros((A.shape[0], k))
    Yt = Y
    bar = progress(range(1, n_iter + 1), total=n_iter, desc=f"altmin ({cfg.solver})",
                   disable=None if show_progress is None else not show_progress)
    for t in bar:
        t0 = time.perf_counter()
        rx = solve_rows(A, Y, cfg, rng)
        X, cx = _orth_clip(rx.X, clip, mu)
        ry = solve_rows(A.T, X, cfg, rng)
        Yt = ry.X
        Y, cy = _orth_clip(Yt, clip, mu)  # the next round's whitened factor
        seconds = time.perf_counter() - t0
        res_sq = A.residual_sq(X, Yt)
        obj = res_sq + cfg.reg * (float(np.sum(X * X)) + float(np.sum(Yt * Yt)))
        err = None
        if truth is not None:
            err = float(np.linalg.norm(truth - X @ Yt.T) / max(norm_truth, np.finfo(float).tiny))
        info = RoundInfo(round=t, objective=obj, relative_residual=math.sqrt(res_sq) / norm_wm,
                         recovery_error=err, seconds=seconds, solver_steps=max(rx.steps, ry.steps),
                         rel_gradient=max(rx.rel_gradient, ry.rel_gradient), clipped=cx + cy)
        history.append(info)
        bar.set_postfix(residual=f"{info.relative_residual:.3e}")
        if callback is not None and callback(info):
            break
    return WLRAResult(X=X, Y=Yt, history=tuple(history), n_iter=len(history), solver=cfg.solver)
