"""Timings side by side with POT, shared by ``repro`` and ``benchmarks/``: exact PGW against POT's
mass-constrained partial GW per pair, and the JAX entropic ``pgw_pairwise`` against a loop of POT's
entropic partial GW on the same inputs."""

from __future__ import annotations

import numpy as np
import ot

from iclr25.utils.bench import Comparison, compare

from .entropic import _cost_scale
from .solver import pgw, pgw_pairwise
from .space import default_lam, mm_space

__all__ = ["exact_vs_mpgw", "entropic_vs_pot"]

# POT's partial GW passes one ``numItermax`` to both its Frank-Wolfe loop and its EMD; the default (1e4)
# is too few network-simplex iterations from n = 300 on ("Error in the EMD resolution")
_POT_MAX_ITER = 1_000_000


def exact_vs_mpgw(sizes: list[int] | tuple[int, ...] = (100, 300, 500), *,
                  methods: tuple[str, ...] = ("fw-v1",), seed: int = 0, warmup: int = 0,
                  repeats: int = 1) -> list[Comparison]:
    """Seconds per pair of exact PGW (each of ``methods``) and POT MPGW (mass = min(|p|, |q|)), timed
    alternately with :func:`iclr25.utils.bench.compare`.

    Inputs as in the paper's run-time experiment: n and m = n + 10 uniform points (here in the unit
    square), mass 1/m per point, lam = max C^2 / 5. Returns one comparison per size and method, sizes
    outermost, named ``"PGW <method> n=<n>"`` and ``"POT MPGW n=<n>"``.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        m = n + 10
        a = mm_space(rng.uniform(size=(n, 2)), mass=1.0 / m)
        b = mm_space(rng.uniform(size=(m, 2)), mass=1.0 / m)
        lam = default_lam([a, b])
        mass = min(a.mass, b.mass)
        for method in methods:
            rows.append(compare(
                lambda a=a, b=b, lam=lam, method=method: pgw(a.C, b.C, a.p, b.p, lam, method=method),
                lambda a=a, b=b, mass=mass: ot.gromov.partial_gromov_wasserstein(
                    a.C, b.C, a.p, b.p, m=mass, numItermax=_POT_MAX_ITER),
                names=(f"PGW {method} n={n}", f"POT MPGW n={n}"), warmup=warmup, repeats=repeats))
    return rows


def entropic_vs_pot(*, n_spaces: int = 4, n_points: int = 30, epsilon: float = 1e-3,
                    seed: int = 0) -> tuple[Comparison, int]:
    """The JAX entropic ``pgw_pairwise`` (after one compiling call) against a loop of POT's
    ``entropic_partial_gromov_wasserstein2`` over the same pairs with the same absolute regularisation,
    each timed once.

    Returns ``(comparison, n_pairs)``.
    """
    rng = np.random.default_rng(seed)
    spaces = [mm_space(rng.uniform(size=(n_points, 2)), mass=1.0 / n_points) for _ in range(n_spaces)]
    lam = default_lam(spaces)
    pairs = [(i, j) for i in range(n_spaces) for j in range(i + 1, n_spaces)]

    def ours() -> None:
        pgw_pairwise(spaces, lam, method="entropic", epsilon=epsilon)

    def pot_loop() -> None:
        for i, j in pairs:
            a, b = spaces[i], spaces[j]
            reg = float(epsilon * _cost_scale(a.C[None], b.C[None], a.p[None], b.p[None], np.array([lam]))[0])
            ot.gromov.entropic_partial_gromov_wasserstein2(a.C, b.C, a.p, b.p, reg=reg, m=min(a.mass, b.mass))

    ours()  # compile
    c = compare(ours, pot_loop, names=(f"JAX entropic pgw_pairwise, {len(pairs)} pairs",
                                       "POT entropic partial GW loop"), warmup=0, repeats=1)
    return c, len(pairs)
