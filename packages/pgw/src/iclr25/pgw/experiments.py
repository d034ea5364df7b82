"""The paper's experiments at reduced scale, shared by ``demo``, ``repro`` and the claim tests: shape
matching with outliers, shape retrieval on data set II, and per-pair timings against POT."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.spatial.distance import cdist

from .barycenter import pgw_barycenter
from .baselines import BASELINES, BaselineResult
from .datasets import ShapeDataset, add_outliers, rotation, shapes_ii
from .frank_wolfe import import_pot, single_threaded_blas
from .solver import PGWResult, pairwise_matrix, pgw, pgw_pairwise
from .space import MMSpace, default_lam, mm_space

__all__ = ["OutlierMatching", "outlier_matching", "distance_matrix", "RetrievalRun", "retrieval_run",
           "BarycenterInterpolation", "barycenter_interpolation", "POINT_MASS"]

#: Mass per point in the paper's retrieval experiment on data set II (alpha = 1/74).
POINT_MASS = 1 / 74


@dataclasses.dataclass(frozen=True)
class OutlierMatching:
    """A shape X, its rotated and shifted copy Y followed by ``n_outliers`` uniform outliers, and the PGW
    and GW plans between them."""

    X: np.ndarray
    Y: np.ndarray
    n_outliers: int
    lam: float
    pgw: PGWResult
    gw: BaselineResult

    def outlier_share(self, plan: np.ndarray) -> float:
        """Share of a plan's mass that lands on the outlier columns of Y."""
        return float(plan[:, self.Y.shape[0] - self.n_outliers:].sum() / max(plan.sum(), 1e-300))


def outlier_matching(*, shape: int = 1, fraction: float = 0.1, lam_fraction: float = 0.05,
                     n_init: int = 3, seed: int = 0) -> OutlierMatching:
    """Match a data set II shape (index ``shape`` of ``shapes_ii(1, seed)``) against a rigidly moved copy
    with ``fraction`` outliers, by PGW (``lam = lam_fraction * max C^2``) and by GW.

    Both spaces carry mass 1/n per point (n = size of the clean shape), so Y has more total mass.

    References: paper Sec. 5 (shape matching: PGW leaves outliers unmatched, GW cannot).
    """
    X = shapes_ii(1, seed=seed).points[shape]
    n = X.shape[0]
    rng = np.random.default_rng(seed + 1)
    R = rotation(rng.uniform(0, 2 * np.pi))
    Y = add_outliers(X, fraction, seed=seed) @ R + rng.normal(size=2)
    a, b = mm_space(X, mass=1.0 / n), mm_space(Y, mass=1.0 / n)
    lam = default_lam([a, b], lam_fraction)
    res = pgw(a.C, b.C, a.p, b.p, lam, n_init=n_init, seed=seed)
    g = BASELINES["gw"](a.C, b.C, a.p, b.p)
    return OutlierMatching(X, Y, Y.shape[0] - n, lam, res, g)


def distance_matrix(method: str, spaces: list[MMSpace], lam: float, *, n_jobs: int = 1, backend: str | None = None,
                    device: Any = None) -> np.ndarray:
    """All-pairs distances by ``method`` in {"pgw", "pgw-entropic", "gw", "mpgw", "ugw"}: the exact ones pair by
    pair on ``n_jobs`` workers of ``backend`` (:func:`iclr25.utils.parallel.parallel_map`: ``None``/"loky" local
    processes, "dask", "ray"), the entropic one vmapped on ``device`` (JAX; ``None``: ``$ICLR25_DEVICE`` or
    ``auto``)."""
    if method == "pgw":
        return pgw_pairwise(spaces, lam, n_jobs=n_jobs, backend=backend)
    if method == "pgw-entropic":
        return pgw_pairwise(spaces, lam, method="entropic", device=device)
    if method not in BASELINES:
        raise ValueError(f"method must be pgw, pgw-entropic or one of {sorted(BASELINES)}, got {method!r}")
    return pairwise_matrix(BASELINES[method], spaces, n_jobs=n_jobs, backend=backend, desc=f"{method} pairs")


@dataclasses.dataclass(frozen=True)
class RetrievalRun:
    """Distance matrices of data set II by several methods, with their wall times (seconds)."""

    data: ShapeDataset
    lam: float
    distances: dict[str, np.ndarray]
    seconds: dict[str, float]


def retrieval_run(methods: tuple[str, ...] = ("pgw", "gw"), *, n_per_class: int = 20, n_jobs: int = 1,
                  seed: int = 0, on_done: Callable[[str, float], Any] | None = None, backend: str | None = None,
                  device: Any = None) -> RetrievalRun:
    """Data set II with mass 1/74 per point, lam = max C^2 / 5 (the paper's settings), and the distance
    matrix of each method (``n_jobs``, ``backend``, ``device``: see :func:`distance_matrix`).

    References: paper Sec. 5 (shape retrieval, data set II).
    """
    data = shapes_ii(n_per_class, seed=seed)
    spaces = [mm_space(X, mass=POINT_MASS) for X in data.points]
    lam = default_lam(spaces, 0.2)
    D: dict[str, np.ndarray] = {}
    secs: dict[str, float] = {}
    for m in methods:
        t0 = time.perf_counter()
        D[m] = distance_matrix(m, spaces, lam, n_jobs=n_jobs, backend=backend, device=device)
        secs[m] = time.perf_counter() - t0
        if on_done is not None:
            on_done(m, secs[m])
    return RetrievalRun(data, lam, D, secs)


@dataclasses.dataclass(frozen=True)
class BarycenterInterpolation:
    """The midpoint (t) of a house and a circle of data set II, each with uniform outliers, by the PGW
    barycenter and by POT's GW barycenter; each judged by its Frechet objective against the *clean* shapes,
    :math:`J(C) = \\sum_s w_s \\mathrm{GW}^2((C, 1/N), (C_s, 1/n_s))` (best of 3 GW starts)."""

    pgw_error: float
    gw_error: float
    pgw_mass: tuple[float, ...]
    pgw_iter: int

    @property
    def ratio(self) -> float:
        """``pgw_error / gw_error``: below 1 when the PGW barycenter is nearer the clean interpolation."""
        return self.pgw_error / self.gw_error


def _clean_objective(C: np.ndarray, clean: list[MMSpace], w: np.ndarray, rng: np.random.Generator) -> float:
    ot = import_pot()
    N = C.shape[0]
    p = np.full(N, 1.0 / N)
    total = 0.0
    for ws, s in zip(w, clean):
        q = np.full(s.C.shape[0], 1.0 / s.C.shape[0])
        best = ot.gromov.gromov_wasserstein2(C, s.C, p, q, "square_loss")
        for _ in range(2):  # FW is local: two more starts from random couplings
            G0 = ot.sinkhorn(p, q, rng.uniform(size=(N, q.size)), 0.1)
            best = min(best, ot.gromov.gromov_wasserstein2(C, s.C, p, q, "square_loss", G0=G0))
        total += ws * float(best)
    return total


def barycenter_interpolation(*, seed: int = 0, fraction: float = 0.2, lam_fraction: float = 0.05,
                             n_points: int = 40, t: float = 0.5, max_iter: int = 20) -> BarycenterInterpolation:
    """Shape interpolation with outliers: the barycenter with weights (1 - t, t) of a house and a circle of
    ``shapes_ii(1, seed)``, each followed by ``fraction`` uniform outliers (the house also rotated), with
    mass 1/n per point of the clean shape (so each noisy input carries ``1 + fraction``) and a barycenter of
    ``n_points`` points of total mass 1.

    PGW barycenter (``lam = lam_fraction * max C^2``) and GW barycenter (POT ``gromov_barycenters``, the
    inputs normalised to probability vectors) start from the same random C and run ``max_iter`` block
    coordinate descent iterations; single-threaded BLAS.

    References: paper Sec. 4.3 (PGW barycenter) and Sec. 5 (shape interpolation with noise, against GW).
    """
    d = shapes_ii(1, seed=seed)
    house, circle = d.points[1], d.points[5]
    rng = np.random.default_rng(seed + 7)
    clean = [mm_space(house, mass=1.0 / len(house)), mm_space(circle, mass=1.0 / len(circle))]
    noisy = [mm_space(add_outliers(house, fraction, seed=seed) @ rotation(rng.uniform(0, 2 * np.pi)),
                      mass=1.0 / len(house)),
             mm_space(add_outliers(circle, fraction, seed=seed + 1000), mass=1.0 / len(circle))]
    w = np.array([1.0 - t, t])
    lam = default_lam(noisy, lam_fraction)
    ot = import_pot()
    with single_threaded_blas():
        r = pgw_barycenter([s.C for s in noisy], [s.p for s in noisy], lam, weights=w, n_points=n_points,
                           mass=1.0 / n_points, max_iter=max_iter, seed=seed)
        # the same initial C as pgw_barycenter's (its seed's Gaussian points, rescaled)
        X0 = np.random.default_rng(seed).normal(size=(n_points, 2))
        C0 = cdist(X0, X0)
        C0 *= np.mean([s.C.max() for s in noisy]) / C0.max()
        Cg = ot.gromov.gromov_barycenters(n_points, [s.C for s in noisy], [s.p / s.p.sum() for s in noisy],
                                          np.full(n_points, 1.0 / n_points), w, "square_loss", max_iter=max_iter,
                                          tol=1e-7, init_C=C0)
        judge = np.random.default_rng(seed + 99)
        e_pgw = _clean_objective(np.asarray(r.C), clean, w, judge)
        e_gw = _clean_objective(np.asarray(Cg), clean, w, judge)
    return BarycenterInterpolation(e_pgw, e_gw, tuple(float(G.sum()) for G in r.plans), r.n_iter)
