"""The paper's claims as the package checks them, decided over seeds (``iclr25.utils.claims``).

The paper (Song et al., ICLR 2025) proves that alternating minimisation with a sketched, high-accuracy
regression solver keeps LLR16's recovery guarantee at a lower cost per round. Its Appendix K numbers are not
recorded, so the claims are the properties the proof rests on, checked on planted problems; each seed draws its
own problem, weights, noise and sketches. Rungs ``"test"`` (3 seeds) and ``"repro"`` (5 seeds) run the same
sizes. The abstract's headline, ``per-iteration-cost-linear-in-k`` (main): one half-step's CPU time in ``k`` grows
at least 0.5 slower (log-log slope) with the sketched solver than with the exact one, at equal solutions.

- ``exact-solver-equals-lstsq``: the exact row solver is ``lstsq`` to 1e-10 (relative).
- ``sketched-regression-high-accuracy``: sketch + refinement reaches a residual within 1e-6 of the optimum
  (CountSketch, SRHT and Gaussian sketches).
- ``refinement-beats-sketch-and-solve``: the refinement is what gets there: sketch-and-solve alone is further
  from the optimum.
- ``geometric-convergence``: noiseless, the recovery error falls at least 4 orders in 15 rounds.
- ``sketch-matches-exact``: with noise, the sketched alternating minimisation ends within 5 % of the exact
  solver's recovery error (dense weights and a 30 % mask); ``sketched-altmin-recovers``: and that error is at
  the noise floor, so the comparison means something.
- ``robust-to-solver-tolerance``: the final error moves by at most the solver tolerance (the robust analysis).
"""

from __future__ import annotations

import math

import numpy as np

from iclr25.utils.claims import Claim, ClaimRegistry, Measurement

__all__ = ["REGISTRY"]

REGISTRY = ClaimRegistry("iclr25-weighted-lowrank", seeds={"test": (0, 1, 2), "repro": (0, 1, 2, 3, 4)})
RUNGS = ("test", "repro")
SKETCHES = ("countsketch", "srht", "gaussian")


def _check_rung(rung: str) -> None:
    if rung not in RUNGS:
        raise ValueError(f"rung must be one of {RUNGS}, got {rung!r}")


def _one_row(seed: int, d: int = 400, k: int = 12):
    """One noisy weighted regression row: the optimal residual is far from 0."""
    rng = np.random.default_rng(seed)
    F = np.linalg.qr(rng.normal(size=(d, k)))[0] * np.sqrt(d)
    w = rng.uniform(0.5, 1.5, size=(1, d))
    m = F @ rng.normal(size=k) + 0.3 * rng.normal(size=d)
    return m[None, :], w, F


def _residual(x, m, w, F) -> float:
    return float(np.linalg.norm(w[0] * (F @ x - m[0])))


@REGISTRY.measures(
    Claim("exact-solver-equals-lstsq", kind="sanity",
          statement="the exact row solver (normal equations through the Gram basis) equals least squares",
          metric="log10 of max |x - x_lstsq| / max(1, max |x_lstsq|)", threshold=-10.0, direction="lower",
          rule="every_seed", margin=2.0,
          note="margin 2 (value < -12) below max_margin at calibration seeds 100-109 (claims-calibration.json)"),
    Claim("sketched-regression-high-accuracy", kind="secondary",
          statement="sketch-and-precondition with refinement solves each row regression to high accuracy",
          paper="(1 + eps) relative residual with log(1/eps) refinement steps",
          metric="log10 of the worst relative excess residual over CountSketch, SRHT and Gaussian sketches",
          threshold=-6.0, direction="lower", rule="every_seed", margin=2.0,
          note="margin 2 (value < -8) below max_margin at calibration seeds 100-109 (claims-calibration.json)"),
    Claim("refinement-beats-sketch-and-solve", kind="secondary",
          statement="the refinement steps are what reach that accuracy",
          metric="log10 of the worst relative excess residual, sketch + refinement",
          baseline="sketch-and-solve alone (0 refinement steps)", direction="lower", rule="every_seed",
          margin=4.0, note="margin 4 orders below max_margin at calibration seeds 100-109 (claims-calibration.json)"),
)
def _regression(seed: int, rung: str) -> dict[str, Measurement | float]:
    _check_rung(rung)
    from .regression import weighted_regression

    m, w, F = _one_row(seed)
    x_ls = np.linalg.lstsq(w[0][:, None] * F, w[0] * m[0], rcond=None)[0]
    opt = _residual(x_ls, m, w, F)
    x = weighted_regression(m, w, F, solver="exact").X[0]
    exact_err = np.max(np.abs(x - x_ls)) / max(1.0, float(np.max(np.abs(x_ls))))
    refined, alone = [], []
    for sketch in SKETCHES:
        r = weighted_regression(m, w, F, solver="sketch", sketch=sketch, seed=seed + 1).X[0]
        a = weighted_regression(m, w, F, solver="sketch", sketch=sketch, refine_steps=0, seed=seed + 1).X[0]
        refined.append(_residual(r, m, w, F) / opt - 1.0)
        alone.append(_residual(a, m, w, F) / opt - 1.0)
    lg = lambda v: math.log10(max(v, 1e-17))  # noqa: E731 - float64's floor
    return {"exact-solver-equals-lstsq": lg(exact_err),
            "sketched-regression-high-accuracy": lg(max(refined)),
            "refinement-beats-sketch-and-solve": Measurement(lg(max(refined)), reference=lg(min(alone)))}


@REGISTRY.measures(
    Claim("geometric-convergence", kind="secondary",
          statement="noiseless, the recovery error of alternating minimisation with the sketched solver falls "
                    "geometrically",
          paper="linear convergence to the planted factors (same guarantee as LLR16)",
          metric="log10(final / first recovery error), 15 rounds, sketch solver, 300 x 260, k = 6",
          threshold=-4.0, direction="lower", rule="every_seed", margin=4.0,
          note="margin 4 (value < -8) below max_margin at calibration seeds 100-109 (claims-calibration.json)"),
)
def _convergence(seed: int, rung: str) -> dict[str, float]:
    _check_rung(rung)
    from .altmin import weighted_low_rank
    from .datasets import planted

    prob = planted(300, 260, 6, noise=0.0, seed=seed)
    errs = weighted_low_rank(prob.M, prob.W, 6, solver="sketch", n_iter=15, truth=prob.truth,
                             seed=seed).recovery_errors
    return {"geometric-convergence": math.log10(max(errs[-1], 1e-300) / errs[0])}


@REGISTRY.measures(
    Claim("sketch-matches-exact", kind="main",
          statement="with noise, the sketched solver ends at the exact solver's recovery error",
          paper="the same recovery guarantee as exact alternating minimisation (LLR16)",
          metric="final recovery error, sketch / exact (worst of dense weights and a 30 % mask), 400 x 400, k = 8",
          threshold=1.05, direction="lower", rule="every_seed", margin=0.04,
          note="margin 0.04 (ratio < 1.01) below max_margin at calibration seeds 100-109 (claims-calibration.json)"),
    Claim("sketched-altmin-recovers", kind="sanity",
          statement="with noise 1e-3, alternating minimisation with the sketched solver recovers the planted "
                    "matrix to the noise floor",
          paper="recovery to the noise level (LLR16's guarantee, kept by the sketched solver)",
          metric="final relative recovery error, sketch solver (worst of dense weights and a 30 % mask)",
          threshold=0.01, direction="lower", rule="every_seed", margin=0.005,
          note="margin 0.005 (error < 0.005; noise floor ~2e-3) below max_margin at calibration seeds 100-109 (claims-calibration.json)"),
)
def _sketch_vs_exact(seed: int, rung: str) -> dict[str, float]:
    _check_rung(rung)
    from .altmin import weighted_low_rank
    from .datasets import planted

    ratios, sketches = [], []
    for weights in ("dense", "mask"):
        prob = planted(400, 400, 8, weights=weights, noise=1e-3, p=0.3, seed=seed)
        exact = weighted_low_rank(prob.M, prob.W, 8, solver="exact", truth=prob.truth, seed=seed).recovery_errors[-1]
        sketch = weighted_low_rank(prob.M, prob.W, 8, solver="sketch", truth=prob.truth,
                                   seed=seed).recovery_errors[-1]
        ratios.append(sketch / exact)
        sketches.append(sketch)
    return {"sketch-matches-exact": max(ratios), "sketched-altmin-recovers": max(sketches)}


@REGISTRY.measures(
    Claim("robust-to-solver-tolerance", kind="secondary",
          statement="an approximate regression solver moves the final error by at most a constant times its "
                    "tolerance (the robust analysis)",
          paper="robust alternating minimisation: error O(eps_0) from solver tolerance eps_0",
          metric="max over tol in {1e-2, 1e-4, 1e-8} of |error(tol) - error(exact)| / tol (gradient-descent "
                 "refinement, 300 x 300, k = 6)",
          threshold=1.0, direction="lower", rule="every_seed", margin=0.3,
          note="margin 0.3 (value < 0.7) below max_margin at calibration seeds 100-109 (claims-calibration.json)"),
)
def _robustness(seed: int, rung: str) -> dict[str, float]:
    _check_rung(rung)
    from .experiments import robustness

    res = robustness(300, 6, tols=(1e-2, 1e-4, 1e-8), refine="gd", seed=seed)
    return {"robust-to-solver-tolerance": max(abs(r["error"] - res["exact"]) / tol
                                              for tol, r in res["tol"].items())}


#: The cost claim's half-step: ``COST_ROWS`` regressions of length ``COST_COLS`` (dense ``U(0.5, 1.5)`` weights,
#: ``‖W‖_0 = 2.4M``), so that the ``‖W‖_0`` terms dominate the sketch's ``rows · s · k^2`` Gram at every ``k``.
COST_ROWS, COST_COLS, COST_KS, COST_REPEATS = 150, 16000, (32, 64, 128), 2


@REGISTRY.measures(
    Claim("per-iteration-cost-linear-in-k", kind="main",
          statement="the sketched solver's cost per alternating half-step grows like ||W||_0 k, the exact "
                    "(LLR16) solver's like ||W||_0 k^2",
          paper="abstract: runtime ||W||_0 k^2 (LLR16) improved to ||W||_0 k",
          metric="log-log slope in k of exact CPU s minus that of sketch CPU s, one half-step (150 x 16,000 dense "
                 "weights, k = 32, 64, 128, 1 BLAS thread, min of 2 runs); alive only if the two solutions agree "
                 "to 1e-4 (equal error)",
          threshold=0.5, direction="higher", rule="every_seed", margin=0.0,
          note="threshold 0.5 fixed in advance (paper notes: sketched slope <= exact slope - 0.5; theory 1); "
               "margin 0 below max_margin at calibration seeds 100-109 (claims-calibration.json)"),
)
def _cost(seed: int, rung: str) -> dict[str, Measurement]:
    _check_rung(rung)
    import time

    from threadpoolctl import threadpool_limits

    from .experiments import loglog_slope
    from .regression import weighted_regression

    rng = np.random.default_rng(seed)
    W = rng.uniform(0.5, 1.5, size=(COST_ROWS, COST_COLS))
    cpu: dict[str, list[float]] = {"exact": [], "sketch": []}
    agree = 0.0
    with threadpool_limits(1):
        for k in COST_KS:
            F = np.linalg.qr(rng.normal(size=(COST_COLS, k)))[0] * np.sqrt(COST_COLS)
            M = rng.normal(size=(COST_ROWS, k)) @ F.T + 0.1 * rng.normal(size=(COST_ROWS, COST_COLS))
            X = {}
            for solver in cpu:
                best = math.inf
                for _ in range(COST_REPEATS):
                    t0 = time.process_time()
                    X[solver] = weighted_regression(M, W, F, solver=solver, seed=seed).X
                    best = min(best, time.process_time() - t0)
                cpu[solver].append(best)
            agree = max(agree, float(np.linalg.norm(X["sketch"] - X["exact"]) / np.linalg.norm(X["exact"])))
    slopes = {s: loglog_slope(COST_KS, t) for s, t in cpu.items()}
    extra = {**{f"{s}_cpu_s_k{k}": t for s, ts in cpu.items() for k, t in zip(COST_KS, ts, strict=True)},
             "slope_exact": slopes["exact"],
             "slope_sketch": slopes["sketch"], "speedup_at_max_k": cpu["exact"][-1] / cpu["sketch"][-1],
             "max_relative_difference": agree}
    return {"per-iteration-cost-linear-in-k": Measurement(slopes["exact"] - slopes["sketch"], extra=extra,
                                                           alive=agree <= 1e-4)}
