"""Timings side by side with POT, shared by ``repro`` and ``benchmarks/``: exact PGW against POT's
mass-constrained partial GW per pair, and the JAX entropic ``pgw_pairwise`` against a loop of POT's
entropic partial GW on the same inputs."""

from __future__ import annotations

import time

import numpy as np
import ot

from iclr25.utils.bench import compare

from .entropic import _cost_scale
from .solver import pgw, pgw_pairwise
from .space import default_lam, mm_space

__all__ = ["exact_vs_mpgw", "entropic_vs_pot"]

# POT's partial GW passes one ``numItermax`` to both its Frank-Wolfe loop and its EMD; the default (1e4)
# is too few network-simplex iterations from n = 300 on ("Error in the EMD resolution")
_POT_MAX_ITER = 1_000_000


def exact_vs_mpgw(sizes: list[int] | tuple[int, ...] = (100, 300, 500), *, seed: int = 0,
                  repeats: int = 1) -> list[tuple[int, float, float]]:
    """Seconds per pair of exact PGW (fw-v1) and POT MPGW (mass = min(|p|, |q|)), timed alternately.

    Inputs as in the paper's run-time experiment: n and m = n + 10 uniform points (here in the unit
    square), mass 1/m per point, lam = max C^2 / 5. Returns ``[(n, pgw_seconds, mpgw_seconds), ...]``.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        m = n + 10
        a = mm_space(rng.uniform(size=(n, 2)), mass=1.0 / m)
        b = mm_space(rng.uniform(size=(m, 2)), mass=1.0 / m)
        lam = default_lam([a, b])
        mass = min(a.mass, b.mass)
        c = compare(lambda a=a, b=b, lam=lam: pgw(a.C, b.C, a.p, b.p, lam),
                    lambda a=a, b=b, mass=mass: ot.gromov.partial_gromov_wasserstein(
                        a.C, b.C, a.p, b.p, m=mass, numItermax=_POT_MAX_ITER),
                    names=(f"PGW n={n}", f"MPGW n={n}"), warmup=0, repeats=repeats)
        rows.append((n, c.ours.median, c.peer.median))
    return rows


def entropic_vs_pot(*, n_spaces: int = 4, n_points: int = 30, epsilon: float = 1e-3,
                    seed: int = 0) -> tuple[float, float, int]:
    """Seconds of the JAX entropic ``pgw_pairwise`` (after one compiling call) and of a loop of POT's
    ``entropic_partial_gromov_wasserstein2`` over the same pairs with the same absolute regularisation.

    Returns ``(ours_seconds, pot_seconds, n_pairs)``.
    """
    rng = np.random.default_rng(seed)
    spaces = [mm_space(rng.uniform(size=(n_points, 2)), mass=1.0 / n_points) for _ in range(n_spaces)]
    lam = default_lam(spaces)
    pgw_pairwise(spaces, lam, method="entropic", epsilon=epsilon)  # compile
    t0 = time.perf_counter()
    pgw_pairwise(spaces, lam, method="entropic", epsilon=epsilon)
    ours = time.perf_counter() - t0
    pairs = [(i, j) for i in range(n_spaces) for j in range(i + 1, n_spaces)]
    t0 = time.perf_counter()
    for i, j in pairs:
        a, b = spaces[i], spaces[j]
        reg = float(epsilon * _cost_scale(a.C[None], b.C[None], a.p[None], b.p[None], np.array([lam]))[0])
        ot.gromov.entropic_partial_gromov_wasserstein2(a.C, b.C, a.p, b.p, reg=reg, m=min(a.mass, b.mass))
    return ours, time.perf_counter() - t0, len(pairs)
