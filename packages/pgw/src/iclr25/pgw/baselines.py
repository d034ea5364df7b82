"""Baselines behind one signature ``f(C1, C2, p, q, **options) -> BaselineResult``: GW, mass-constrained
partial GW (MPGW) and unbalanced GW (UGW), all from POT.

Every ``distance`` is the square root of the method's square-loss cost, so it sits on the same scale as
:func:`iclr25.pgw.pgw`'s distance.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .frank_wolfe import import_pot, tensor_product
from .space import as_int, as_masses, as_matrix, as_positive, as_real_array

__all__ = ["BaselineResult", "gw", "mpgw", "ugw", "BASELINES"]


@dataclasses.dataclass(frozen=True)
class BaselineResult:
    """The result of a baseline: ``distance = sqrt(max(0, cost))``, its plan and transported mass."""

    distance: float
    cost: float
    plan: np.ndarray
    mass: float
    method: str


def _inputs(C1: Any, C2: Any, p: Any, q: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    C1, C2 = as_matrix(C1, "C1"), as_matrix(C2, "C2")
    return C1, C2, as_masses(p, C1.shape[0], "p"), as_masses(q, C2.shape[0], "q")


def _initial_plan(G0: Any, n: int, m: int) -> np.ndarray | None:
    """``G0`` of a baseline: ``None``, or a real, finite, non-negative (n, m) array (complex is a TypeError)."""
    if G0 is None:
        return None
    G = as_real_array(G0, "G0")
    if G.shape != (n, m):
        raise ValueError(f"G0 must have shape {(n, m)} (len(p), len(q)), got {G.shape}")
    if not np.all(np.isfinite(G)) or G.min() < 0:
        raise ValueError("G0 must be finite and non-negative")
    return G


def _gw_cost(C1: np.ndarray, C2: np.ndarray, G: np.ndarray) -> float:
    return float(np.sum(tensor_product(C1, C2, G) * G))


def _make(cost: float, G: np.ndarray, method: str) -> BaselineResult:
    G = np.asarray(G, dtype=np.float64)
    G.setflags(write=False)
    return BaselineResult(math.sqrt(max(0.0, cost)), float(cost), G, float(G.sum()), method)


def gw(C1: Any, C2: Any, p: Any, q: Any, *, G0: Any = None, max_iter: int = 10_000,
       tol: float = 1e-9) -> BaselineResult:
    """Gromov-Wasserstein (POT ``gromov_wasserstein``, conditional gradient with exact line search).

    The masses are normalised to probability vectors first (GW needs equal masses), as the paper does
    for its GW baseline.

    .. math:: \\mathrm{GW} = \\min_{\\gamma\\in\\Gamma(p/|p|, q/|q|)} \\sum (C_1[i,i'] - C_2[j,j'])^2
              \\gamma_{ij}\\gamma_{i'j'}

    References: Mémoli (2011); paper Sec. 2 (GW) and Sec. 5 (baselines).
    """
    C1, C2, p, q = _inputs(C1, C2, p, q)
    max_iter, tol = as_int(max_iter, "max_iter", 1), as_positive(tol, "tol")
    a, b = p / p.sum(), q / q.sum()
    G0 = _initial_plan(G0, p.size, q.size)
    if G0 is not None and not (np.allclose(G0.sum(1), a, atol=1e-8) and np.allclose(G0.sum(0), b, atol=1e-8)):
        raise ValueError("G0 must be a coupling of p/|p| and q/|q| (its row and column sums)")
    ot = import_pot()

    G = ot.gromov.gromov_wasserstein(C1, C2, a, b, "square_loss", G0=G0, max_iter=max_iter, tol_rel=tol,
                                     tol_abs=tol)
    return _make(_gw_cost(C1, C2, G), G, "gw")


def mpgw(C1: Any, C2: Any, p: Any, q: Any, *, mass: float | None = None, G0: Any = None,
         max_iter: int = 1_000_000, tol: float = 1e-9) -> BaselineResult:
    """Mass-constrained partial GW (POT ``partial_gromov_wasserstein``; Chapel et al. 2020).

    .. math:: \\mathrm{MPGW} = \\min_{\\gamma\\in\\Gamma_\\le(p,q),\\ |\\gamma| = m}
              \\sum (C_1[i,i'] - C_2[j,j'])^2 \\gamma_{ij}\\gamma_{i'j'}

    ``mass`` defaults to :math:`\\min(|p|, |q|)` as in the paper's experiments. POT uses ``max_iter``
    both for its Frank-Wolfe loop and as the network-simplex iteration limit, hence the large default
    (POT's own 1e4 fails from about 300 points).

    References: paper Sec. 2 (MPGW) and Sec. 5.
    """
    C1, C2, p, q = _inputs(C1, C2, p, q)
    max_iter, tol = as_int(max_iter, "max_iter", 1), as_positive(tol, "tol")
    m = min(p.sum(), q.sum()) if mass is None else as_positive(mass, "mass")
    if m > min(p.sum(), q.sum()) * (1 + 1e-12):
        raise ValueError(f"mass must be at most min(|p|, |q|) = {min(p.sum(), q.sum()):.6g}, got {m}")
    m = min(m, min(p.sum(), q.sum()))
    G0 = _initial_plan(G0, p.size, q.size)
    ot = import_pot()

    G = ot.gromov.partial_gromov_wasserstein(C1, C2, p, q, m=m, G0=G0, numItermax=max_iter, tol=tol,
                                             warn=False)
    return _make(_gw_cost(C1, C2, G), G, "mpgw")


def ugw(C1: Any, C2: Any, p: Any, q: Any, *, rho: float = 1.0, epsilon: float = 1e-1,
        max_iter: int = 100, tol: float = 1e-7) -> BaselineResult:
    """Unbalanced GW (Séjourné et al. 2021) through POT's ``fused_unbalanced_gromov_wasserstein``
    (KL marginal penalties of weight ``rho``, entropic regularisation ``epsilon``, no feature term).

    ``distance`` is the square root of the UGW cost that POT returns (transport term plus the
    marginal penalties); UGW is a discrepancy, not a metric.

    References: paper Sec. 2 (UGW) and Sec. 5 (eps = 0.1, rho = 1 in the shape experiments).
    """
    C1, C2, p, q = _inputs(C1, C2, p, q)
    rho, epsilon = as_positive(rho, "rho"), as_positive(epsilon, "epsilon")
    max_iter, tol = as_int(max_iter, "max_iter", 1), as_positive(tol, "tol")
    ot = import_pot()

    G, _, log = ot.gromov.fused_unbalanced_gromov_wasserstein(
        C1, C2, p, q, reg_marginals=rho, epsilon=epsilon, divergence="kl", unbalanced_solver="sinkhorn",
        max_iter=max_iter, tol=tol, log=True)
    cost = float(log["fugw_cost"])
    return _make(cost, G, "ugw")


#: The baselines by name, all callable as ``f(C1, C2, p, q, **options)``.
BASELINES = {"gw": gw, "mpgw": mpgw, "ugw": ugw}
