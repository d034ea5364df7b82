"""PGW barycenters of mm-spaces by block coordinate descent (plans, then the barycenter's distances)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from scipy.spatial.distance import cdist

from iclr25.utils.progress import progress
from iclr25.utils.seeding import check_seed

from .frank_wolfe import PartialOracle, PGWProblem, default_init, frank_wolfe, single_threaded_blas
from .space import as_int, as_lam, as_masses, as_matrix, as_positive, as_real_array, point_masses

__all__ = ["BarycenterResult", "pgw_barycenter"]


@dataclasses.dataclass(frozen=True)
class BarycenterResult:
    """A PGW barycenter: distances ``C`` (N, N) and masses ``p`` (N,), one plan per input space, and the
    objective :math:`\\sum_s w_s \\mathrm{PGW}_{\\lambda_s}(C, C_s)` after each iteration."""

    C: np.ndarray
    p: np.ndarray
    plans: tuple[np.ndarray, ...]
    objective: np.ndarray
    n_iter: int
    converged: bool


def _update_C(C: np.ndarray, Cs: list[np.ndarray], plans: list[np.ndarray], w: np.ndarray) -> np.ndarray:
    """The square-loss minimiser of the barycenter's distances for fixed plans, with a zero-mass guard.

    .. math:: C = \\frac{\\sum_s w_s \\gamma_s C_s \\gamma_s^T}{\\sum_s w_s (\\gamma_s 1)(\\gamma_s 1)^T}

    Entries whose denominator is 0 belong to points that receive no mass; they do not enter the
    objective, so they keep their previous value instead of becoming 0/0.
    """
    num = sum(ws * (G @ Cs_ @ G.T) for ws, G, Cs_ in zip(w, plans, Cs))
    den = sum(ws * np.outer(G.sum(1), G.sum(1)) for ws, G in zip(w, plans))
    scale = max(float(np.max(den)), np.finfo(float).tiny)
    ok = den > 1e-14 * scale
    out = C.copy()
    out[ok] = num[ok] / den[ok]
    return 0.5 * (out + out.T)


def pgw_barycenter(Cs: Any, ps: Any, lams: Any, *, weights: Any = None, n_points: int = 30,
                   mass: Any = None, max_iter: int = 20, tol: float = 1e-7, fw_max_iter: int = 200,
                   seed: int = 0) -> BarycenterResult:
    """A PGW barycenter of the mm-spaces :math:`(C_s, p_s)` with its own masses ``p``.

    .. math::

        \\min_{C} \\sum_s w_s \\mathrm{PGW}_{\\lambda_s}\\big((C, p), (C_s, p_s)\\big)

    by block coordinate descent: for fixed C, each plan :math:`\\gamma_s` by Frank-Wolfe (Algorithm 1,
    warm-started from the previous plan, so the objective cannot increase); for fixed plans, the closed-form
    update of :func:`_update_C`, guarded for points that receive no mass.

    Parameters
    ----------
    Cs : sequence of (n_s, n_s) distance matrices
    ps : sequence of (n_s,) masses
    lams : float or sequence of floats
        :math:`\\lambda_s` per input (a scalar is shared).
    weights : sequence of floats, optional
        :math:`w_s \\ge 0`, default uniform, normalised to sum to 1.
    n_points : int
        Barycenter size N.
    mass : float or (N,) array, optional
        Barycenter masses p; a scalar is the mass per point. Default: the mean total input mass spread
        uniformly over the N points.
    max_iter : int
        Block coordinate descent iterations.
    tol : float
        Stop when the relative decrease of the objective is below ``tol``.
    fw_max_iter : int
        Frank-Wolfe iterations per plan update.
    seed : int
        Seed of the initial C: distances of N standard Gaussian points in 2-D, rescaled to the mean
        largest input distance.

    Returns
    -------
    BarycenterResult

    References: paper Sec. 4.3 (PGW barycenter) and its Algorithm (barycenter BCD).
    """
    if isinstance(Cs, np.ndarray) and Cs.ndim == 2:
        raise TypeError("Cs must be a sequence of distance matrices, got a single matrix")
    if not hasattr(Cs, "__len__") or len(Cs) == 0:
        raise ValueError("Cs must be a non-empty sequence of distance matrices")
    S = len(Cs)
    Cs = [as_matrix(C, f"Cs[{s}]") for s, C in enumerate(Cs)]
    if not hasattr(ps, "__len__") or len(ps) != S:
        raise ValueError(f"ps must hold one mass vector per space ({S}), got {len(ps) if hasattr(ps, '__len__') else ps!r}")
    ps = [as_masses(p, C.shape[0], f"ps[{s}]") for s, (p, C) in enumerate(zip(ps, Cs))]
    lam_arr = np.atleast_1d(as_real_array(lams, "lams"))
    if lam_arr.size == 1:
        lam_arr = np.full(S, lam_arr[0])
    if lam_arr.shape != (S,):
        raise ValueError(f"lams must be a number or hold one value per space ({S}), got shape {lam_arr.shape}")
    lam_list = [as_lam(v, f"lams[{s}]") for s, v in enumerate(lam_arr)]
    w = np.full(S, 1.0 / S) if weights is None else as_masses(weights, S, "weights")
    w = w / w.sum()
    N = as_int(n_points, "n_points", 1)
    max_iter, fw_max_iter = as_int(max_iter, "max_iter", 1), as_int(fw_max_iter, "fw_max_iter", 1)
    tol = as_positive(tol, "tol")
    rng = np.random.default_rng(check_seed(seed))
    p = np.full(N, np.mean([x.sum() for x in ps]) / N) if mass is None else point_masses(mass, N)

    X = rng.normal(size=(N, 2))
    C = cdist(X, X)
    C *= np.mean([c.max() for c in Cs]) / max(C.max(), np.finfo(float).tiny)
    with single_threaded_blas():
        return _bcd(C, Cs, ps, p, lam_list, w, max_iter, fw_max_iter, tol)


def _bcd(C, Cs, ps, p, lam_list, w, max_iter, fw_max_iter, tol) -> BarycenterResult:
    def problems(C: np.ndarray) -> list[PGWProblem]:
        return [PGWProblem(C, Cs_, p, ps_, lam) for Cs_, ps_, lam in zip(Cs, ps, lam_list)]

    oracles = [PartialOracle(p, ps_) for ps_ in ps]

    plans = [default_init(p, ps_) for ps_ in ps]
    history: list[float] = []
    converged = False
    P_list = problems(C)
    for _ in progress(range(1, max_iter + 1), desc="PGW barycenter", total=max_iter):
        plans = [frank_wolfe(P, G, lmo, max_iter=fw_max_iter).plan for P, G, lmo in zip(P_list, plans, oracles)]
        C = _update_C(C, Cs, plans, w)
        P_list = problems(C)  # the objective of this iteration and the plans of the next use the new C
        obj = float(sum(ws * sum(P.terms(G)) for ws, P, G in zip(w, P_list, plans)))
        history.append(obj)
        if len(history) > 1 and history[-2] - obj <= tol * max(abs(history[-2]), np.finfo(float).tiny):
            converged = True
            break
    C.setflags(write=False)
    return BarycenterResult(C, p, tuple(plans), np.asarray(history), len(history), converged)
