"""Side-by-side runs against POT on the same problems, shared by ``repro`` and ``benchmarks/``.

1. :func:`entropic_like_for_like`: our JAX entropic PGW (``jit(vmap)`` over a batch of pairs) against the
   *same* algorithm on the *same* problem written as a Python loop over POT calls
   (:func:`pot_loop_entropic_pgw`: Frank-Wolfe whose oracle is POT's log-domain Sinkhorn on the
   dummy-extended problem, at the same absolute epsilon, the same initial plan, line search, stopping rule
   and Sinkhorn limits). POT has no lambda-penalised (total-variation) partial GW: its entropic partial GW
   fixes the transported mass, its (F)UGW penalises the marginals by KL or L2, both different problems.
2. :func:`exact_vs_mpgw`: exact PGW against POT's mass-constrained partial GW (MPGW), with MPGW's mass set
   to ``min(|p|, |q|)`` (the paper's run-time setting) and to the mass PGW transports at that lambda (the
   same problem: a PGW optimum at lambda is an MPGW optimum at its own mass). The objectives are compared
   as ``MPGW cost + lam (|p|^2 + |q|^2 - 2 m^2)`` against PGW's objective.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np

from iclr25.utils.bench import Comparison, compare

from .entropic import (
    DEFAULT_EPSILON,
    DEFAULT_INNER,
    DEFAULT_MAX_ITER,
    DEFAULT_TOL,
    cost_scale,
    entropic_pgw_batch,
)
from .frank_wolfe import PGWProblem, default_init, gap_converged, import_pot, line_search
from .solver import pgw
from .space import default_lam, mm_space

__all__ = ["pot_loop_entropic_pgw", "EntropicAgreement", "entropic_like_for_like", "ExactRow", "exact_vs_mpgw"]

# POT's partial GW passes one ``numItermax`` to both its Frank-Wolfe loop and its EMD; the default (1e4)
# is too few network-simplex iterations from n = 300 on ("Error in the EMD resolution")
_POT_MAX_ITER = 1_000_000


def pot_loop_entropic_pgw(C1: np.ndarray, C2: np.ndarray, p: np.ndarray, q: np.ndarray, lam: float, *,
                          epsilon: float = DEFAULT_EPSILON, max_iter: int = DEFAULT_MAX_ITER,
                          tol: float = DEFAULT_TOL, inner_iter: int = DEFAULT_INNER) -> float:
    """Entropic PGW by the algorithm of :func:`iclr25.pgw.entropic_pgw_batch`, as a numpy/Python loop over
    POT's ``ot.bregman.sinkhorn_log`` (warm-started from the previous step's potentials): the peer of the
    like-for-like benchmark. Returns the distance (float64 throughout).

    References: paper Algorithm 1 with a Sinkhorn oracle (Cuturi 2013) on the extended problem of Sec. 4.2.
    """
    ot = import_pot()

    P = PGWProblem(C1, C2, p, q, lam)
    n, m = C1.shape[0], C2.shape[0]
    p_ext, q_ext = np.append(p, q.sum()), np.append(q, p.sum())
    reg = float(epsilon * cost_scale(C1[None], C2[None], p[None], q[None], np.array([lam]))[0])
    G = default_init(p, q)
    LG = P.L(G)
    K = np.zeros((n + 1, m + 1))
    warm = None
    for _ in range(max_iter):
        mass = G.sum()
        grad = 2.0 * (LG - 2.0 * lam * mass)
        K[:n, :m] = grad
        S, log = ot.bregman.sinkhorn_log(p_ext, q_ext, K, reg, numItermax=inner_iter,
                                         stopThr=1e-5 * p_ext.sum(), log=True, warn=False, warmstart=warm)
        warm = (log["log_u"], log["log_v"])
        delta = S[:n, :m] - G
        Ld = P.L(delta)
        dmass = delta.sum()
        a = float(np.sum(Ld * delta)) - 2.0 * lam * dmass**2
        b = float(np.sum(grad * delta))
        objective = float(np.sum(LG * G)) - 2.0 * lam * mass**2 + P.const
        if gap_converged(-b, objective, P.const, tol):
            break
        alpha = line_search(a, b)
        if alpha == 0.0:
            break
        G, LG = G + alpha * delta, LG + alpha * Ld
    transport, penalty = P.terms(G)
    return float(np.sqrt(max(0.0, transport + penalty)))


@dataclasses.dataclass(frozen=True)
class EntropicAgreement:
    """Times of both sides (alternating) and the relative distance differences pair by pair."""

    comparison: Comparison
    n_pairs: int
    n_points: tuple[int, int]
    epsilon: float
    rel_diff_median: float
    rel_diff_max: float


def entropic_like_for_like(*, n_pairs: int = 16, n_points: tuple[int, int] = (40, 50),
                           epsilon: float = DEFAULT_EPSILON, lam_fraction: float = 0.2, warmup: int = 1,
                           repeats: int = 3, seed: int = 0, device: Any = None) -> EntropicAgreement:
    """Entropic PGW of ``n_pairs`` pairs of uniform clouds in the unit square (n and m points, mass 1/m per
    point, lam = ``lam_fraction`` max C^2): one ``entropic_pgw_batch`` call (vmapped, JAX's default float32)
    against :func:`pot_loop_entropic_pgw` over the same pairs (float64), alternating, after ``warmup``
    untimed calls of each (the first JAX call compiles). Distances are compared pair by pair. The JAX side runs
    on ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``); its timing includes the copy of the inputs to the
    device and of the plans back, as a user's call would."""
    rng = np.random.default_rng(seed)
    n, m = n_points
    A = [mm_space(rng.uniform(size=(n, 2)), mass=1.0 / m) for _ in range(n_pairs)]
    B = [mm_space(rng.uniform(size=(m, 2)), mass=1.0 / m) for _ in range(n_pairs)]
    lam = default_lam(A + B, lam_fraction)
    C1s, C2s = np.stack([a.C for a in A]), np.stack([b.C for b in B])
    ps, qs = np.stack([a.p for a in A]), np.stack([b.p for b in B])
    out: dict[str, np.ndarray] = {}

    def ours() -> None:
        out["ours"] = entropic_pgw_batch(C1s, C2s, ps, qs, lam, epsilon=epsilon, device=device).distance

    def peer() -> None:
        out["peer"] = np.array([pot_loop_entropic_pgw(a.C, b.C, a.p, b.p, lam, epsilon=epsilon)
                                for a, b in zip(A, B)])

    c = compare(ours, peer, names=(f"JAX entropic PGW, {n_pairs} pairs vmapped",
                                   "same algorithm, Python loop over POT sinkhorn_log"),
                warmup=warmup, repeats=repeats)
    rel = np.abs(out["ours"] - out["peer"]) / np.maximum(out["peer"], 1e-300)
    return EntropicAgreement(c, n_pairs, (n, m), epsilon, float(np.median(rel)), float(rel.max()))


@dataclasses.dataclass(frozen=True)
class ExactRow:
    """One size and lambda: PGW and MPGW (at min mass and at PGW's mass) timings and objectives."""

    n: int
    lam_fraction: float
    pgw_mass: float
    min_mass: float
    at_min_mass: Comparison
    at_pgw_mass: Comparison
    pgw_objective: float
    mpgw_objective_at_pgw_mass: float


def exact_vs_mpgw(sizes: list[int] | tuple[int, ...] = (100, 300, 500), *,
                  lam_fractions: tuple[float, ...] = (0.2,), method: str = "fw-v1", seed: int = 0,
                  warmup: int = 1, repeats: int = 3) -> list[ExactRow]:
    """Seconds per pair of exact PGW and of POT MPGW, timed alternately with
    :func:`iclr25.utils.bench.compare`, MPGW at ``m = min(|p|,|q|)`` and at ``m = |gamma_PGW|``.

    Inputs as in the paper's run-time experiment: n and m = n + 10 uniform points (here in the unit
    square), mass 1/m per point, lam = ``lam_fraction`` max C^2 (paper 1/5).
    """
    ot = import_pot()

    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        m = n + 10
        a = mm_space(rng.uniform(size=(n, 2)), mass=1.0 / m)
        b = mm_space(rng.uniform(size=(m, 2)), mass=1.0 / m)
        for frac in lam_fractions:
            lam = default_lam([a, b], frac)
            ref = pgw(a.C, b.C, a.p, b.p, lam, method=method)
            min_mass = min(a.mass, b.mass)
            mass = min(ref.mass, min_mass)

            def ours(a=a, b=b, lam=lam):
                return pgw(a.C, b.C, a.p, b.p, lam, method=method)

            def mpgw_at(mass, a=a, b=b):
                return ot.gromov.partial_gromov_wasserstein(a.C, b.C, a.p, b.p, m=mass, numItermax=_POT_MAX_ITER)

            names = (f"PGW {method} n={n}", f"POT MPGW n={n}")
            full = compare(ours, functools.partial(mpgw_at, min_mass), names=names, warmup=warmup, repeats=repeats)
            same = compare(ours, functools.partial(mpgw_at, mass), names=names, warmup=warmup, repeats=repeats)
            G = np.asarray(mpgw_at(mass))
            P = PGWProblem(a.C, b.C, a.p, b.p, lam)
            rows.append(ExactRow(n, frac, ref.mass, min_mass, full, same, ref.objective, sum(P.terms(G))))
    return rows

