"""The paper's claims that this package checks, decided over seeds (the registry of :mod:`iclr25.utils.claims`).

A seed here draws the student's initial readout heads (``initial_state(problem, seed=...)``, they break the
symmetry between the hidden units) and, for the finite-N checks, the SGD runs. Rungs: ``"test"`` (seeds 0-2, the
default test suite; the optimal protocol is the Pontryagin sweep's), ``"repro"`` (seeds 0-4, same problems; the
optimal protocol is the lower-cost of the Pontryagin and the direct solutions), ``"agreement"`` (seeds 0-19:
the two solvers compared, ``pmp-matches-direct`` alone; side report ``docs/agreement/claims.json``) and
``"paper"`` (seeds 0-4: the paper's discretisation and solver budgets, Euler dt 0.05, 160 control intervals,
up to 10,000 sweeps and 2,000 Adam steps; ``iclr25 claims cl-optimal-control --rung paper --estimate``). JAX
computes on ``$ICLR25_DEVICE`` (``iclr25 claims cl-optimal-control --device``), else ``auto``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from iclr25.utils.claims import Claim, ClaimRegistry, Measurement, RungCost, smoke_run
from iclr25.utils.device import default_device

__all__ = ["REGISTRY", "default_solutions", "solver_pair"]

# rung "agreement": the solver-agreement sanity claim alone at 20 seeds (two solves per seed, ~12 s CPU each)
REGISTRY = ClaimRegistry(
    "iclr25-cl-optimal-control",
    seeds={"test": (0, 1, 2), "repro": (0, 1, 2, 3, 4), "agreement": tuple(range(20)), "paper": (0, 1, 2, 3, 4)},
    costs={"paper": RungCost(
        gpu_hours=0, cpu_hours=0.1, memory_gb=1,
        hardware="one CPU core (a GPU does not help: the ODE state is a dozen numbers and each Euler step is a "
                 "kernel launch; `--device cuda` runs it there all the same)",
        what="the default problem (gamma = 0.5, K = 2, window 16) at the paper's discretisation and solver budgets "
             "(paper note: Euler dt 0.05, 160 control intervals, Pontryagin sweep up to 10,000 iterations, "
             "direct method 2,000 Adam steps), the optimal protocol the cheaper of the two against the tuned "
             "heuristics. Estimated, not measured: the repro rung's two solves take about 12 s per seed at dt "
             "0.1 and 40 intervals; twice the steps and the iteration limits give at most about 6 min per seed",
        data="nothing to provide: the control problem is the model's own (no data set)")})
RUNGS = ("test", "repro")  # the rungs of the claims not decided at the paper rung (pmp-matches-direct: its own)
PAPER_RUNGS = ("test", "repro", "paper")
#: the paper rung's problem and solver budgets (paper note, section 2: Euler dt 0.05, 50-200 intervals, up to
#: 10^4 sweep iterations)
PAPER_PROBLEM = {"dt": 0.05, "n_intervals": 160}
PAPER_ITERS = {"pmp": 10_000, "direct": 2_000}


def default_solutions(seed: int, direct: bool = False, *, scale: str = "default") -> dict[str, Any]:
    """The default problem (gamma = 0.5, task 1 on [0, 4], controlled window [4, 20]) solved at ``seed``: the
    heuristics, the Pontryagin solution and, with ``direct``, the direct method's (``"best"`` is the one of lower
    cost: the optimal protocol as well as these two local solvers find it). ``scale="paper"``: the paper rung's
    discretisation and budgets. Computed on ``$ICLR25_DEVICE`` (else ``auto``), cached per device. Inside
    ``iclr25 claims --smoke`` the same code runs one iteration of each solver and a 2-point heuristic grid on the
    default discretisation (the programs the test suite has compiled already)."""
    return _solutions(seed, direct, scale, default_device(), smoke_run())


@lru_cache(maxsize=8)
def _solutions(seed: int, direct: bool, scale: str, device: str, smoke: bool) -> dict[str, Any]:
    from .control import heuristics, solve
    from .model import Problem

    p = Problem(**PAPER_PROBLEM) if scale == "paper" else Problem()
    iters = PAPER_ITERS if scale == "paper" else {"pmp": None, "direct": None}
    if smoke:
        p, iters = p.replace(dt=Problem.dt, n_intervals=Problem.n_intervals), {"pmp": 1, "direct": 1}
    kw = {"seed": seed, "show_progress": False, "device": device}
    out = {"problem": p, "heuristics": heuristics(p, seed=seed, device=device, grid=2 if smoke else 21),
           "pmp": solve(p, "pmp", max_iter=iters["pmp"], **kw)}
    out["best"] = out["pmp"]
    if direct:
        out["direct"] = solve(p, "direct", max_iter=iters["direct"], **kw)
        out["best"] = min(out["pmp"], out["direct"], key=lambda r: r.cost)
    return out


LADDER_HEADS = "README.md#seed-dependence-the-students-initial-heads"
LADDER_PHASES = "README.md#the-phases-of-the-optimal-protocol-across-budgets"
LADDER_WINDOW = "README.md#where-the-09-claim-stands"


@REGISTRY.measures(
    Claim("optimal-beats-heuristics", kind="main",
          statement="the optimal task-selection protocol reaches a lower final error than tuned heuristic schedules",
          paper="optimal protocols beat sequential / constant-mix / replay-at-end schedules",
          metric="J_optimal (PMP) / J_best heuristic, gamma = 0.5, window 16", threshold=1.0, margin=0.02,
          direction="lower", rule="mean_ci", rungs=PAPER_RUNGS, expect="fails", ladder=LADDER_PHASES,
          note="margin 0.02 (at least 2 % better) as before 0.5.0. The gain is positive at every seed measured "
               "(seeds 0-4 and 100-109: 1.4-37 %) but too variable over the initial heads to be decided at 3 or "
               "5 seeds: calibration seeds 100-109 give max_margin -0.087 (every seed, 3 seeds; seeds 100 and 108 "
               "gain 1.4 % and 1.7 %) and -0.29 (mean interval, 3 seeds), -0.09 at 5 seeds; a mean interval would "
               "clear 0.02 from about 20 seeds. Decided by the mean interval, it does not hold at 3 or 5 seeds"),
    Claim("optimal-beats-heuristics-by-10pct", kind="secondary",
          statement="the optimal protocol costs at most 0.9x the best tuned heuristic",
          paper="(paper note check 2: J_opt <= 0.9 x best heuristic)",
          metric="J_optimal (PMP) / J_best heuristic, gamma = 0.5, window 16", threshold=0.9, direction="lower",
          rule="every_seed", rungs=PAPER_RUNGS, expect="fails", ladder=LADDER_PHASES,
          note="holds at seeds 0, 2, 4 (0.85, 0.82, 0.63), not at 1 and 3 (0.97, 0.94); 4 of calibration seeds "
               "100-109 at or below 0.9: with large initial heads the tuned constant mix is near-optimal; the "
               "window ladder (README) shows the gap growing with the window at most seeds"),
    Claim("focus-on-new-task", kind="main",
          statement="the optimal protocol first focuses on the new task alone",
          paper="a focus phase on the new task", metric="mean replay share u_1 over the first fifth of the window",
          threshold=0.1, direction="lower", rule="every_seed", rungs=PAPER_RUNGS, expect="fails", ladder=LADDER_PHASES,
          note="calibration seeds 100-109: 0.38, 0.09, 0.66, 0.20, 0.62, 0.24, 0.00, 0.89, 0.54, 0.62 (2 of 10 "
               "below 0.1); the phases ladder (window 8-32, task-1 budget 4-16) and the initial-heads ablation "
               "are in the README"),
    Claim("replay-after-focus", kind="secondary",
          statement="after the first phase the optimal protocol interleaves replay of the old task",
          paper="a revision phase on the old task", metric="mean replay share u_1 after the first fifth of the window",
          threshold=0.2, direction="higher", rule="every_seed", rungs=PAPER_RUNGS,
          note="threshold 0.2 (interleaved replay, a singular arc), margin 0 <= max_margin 0.13 from calibration "
               "seeds 100-109 (values 0.35-0.54)"),
    Claim("final-revision", kind="main",
          statement="the optimal protocol ends with a revision phase on the old task",
          paper="revision of the old task at the end", metric="mean replay share u_1 over the last tenth of the window",
          threshold=0.5, direction="higher", rule="every_seed", rungs=PAPER_RUNGS, expect="fails", ladder=LADDER_PHASES,
          note="until 0.5.0 the metric was the last control interval alone (threshold 0.5): a single interval of a "
               "singular arc, decided by cost differences below 0.3 %, it was 1 at 6 and 0-0.1 at 4 of the "
               "calibration seeds 100-109 (4 misses in 8 unseen seeds, issue 58). A revision phase is read over "
               "the last tenth (4 intervals): 0.16-0.46 at seeds 0-4, the optimum interleaves to the end; the "
               "window ladder in the README shows a revision block at window 8 only"),
)
def _optimal(seed: int, rung: str) -> dict[str, Measurement | float]:
    # test rung: the Pontryagin sweep; repro and paper rungs: the lower-cost of the sweep and the direct method
    d = default_solutions(seed, direct=rung in ("repro", "paper"), scale="paper" if rung == "paper" else "default")
    heur, opt = d["heuristics"], d["best"]
    best = min(J for _, J in heur.values())
    u_old = opt.schedule.u[:, 0]
    n10 = len(u_old) // 10
    return {
        "optimal-beats-heuristics": opt.cost / best,
        "optimal-beats-heuristics-by-10pct": opt.cost / best,
        "focus-on-new-task": float(u_old[: len(u_old) // 5].mean()),
        "replay-after-focus": float(u_old[len(u_old) // 5:].mean()),
        "final-revision": float(u_old[-n10:].mean()),
    }


def solver_pair(seed: int) -> tuple[Any, Any]:
    """The Pontryagin and the direct solutions of the default problem at ``seed`` (the same calls as
    :func:`default_solutions`, without the heuristics), on ``$ICLR25_DEVICE`` (else ``auto``)."""
    return _pair(seed, default_device())


@lru_cache(maxsize=4)
def _pair(seed: int, device: str) -> tuple[Any, Any]:
    from .control import solve
    from .model import Problem

    p = Problem()
    kw = {"seed": seed, "show_progress": False, "device": device}
    return solve(p, "pmp", **kw), solve(p, "direct", **kw)


@REGISTRY.measures(
    Claim("pmp-matches-direct", kind="sanity",
          statement="the indirect (Pontryagin) and direct solutions of the control problem reach the same cost",
          paper="(paper note check 2: |J_PMP - J_direct| / J < 1 %)",
          metric="|J_PMP - J_direct| / min(J_PMP, J_direct), gamma = 0.5, window 16", threshold=0.01,
          direction="lower", rule="every_seed", rungs=("agreement",), expect="fails",
          ladder="docs/pmp_agreement.md",
          note="threshold 1 % (paper note). Until 0.5.0 decided at the repro rung, where seeds 0-4 pass (0.56, 0.20, "
               "0.01, 0.0003, 0.26 %), but calibration seeds 100-109 give 0.81, 0.36, 1.12, 3.01, 0.17, 1.14, 0.09, "
               "1.50, 0.01, 0.41 % (max_margin -0.020 at 5 seeds): a real mismatch, not noise, so it is decided at "
               "its own rung (20 seeds). In the misses at seeds 102, 103 and 107 the Pontryagin solution is the "
               "costlier one, short of Pontryagin's condition (stationarity 0.3, 0.0, 0.33). Ladder and ablation "
               "(docs/pmp_agreement.md): 2,000 Adam steps move the direct method by < 0.3 %; the Pontryagin solver "
               "stops early at its 1,000-iteration limit (seed 102) or by the extended method's small-step stop "
               "(seed 103, 158 iterations), and continued it closes those gaps (to +0.02 % and -0.79 %); at seeds "
               "105 and 107 it ends at another local solution (no step along -H lowers J; 1.07 %, 1.32 % above)"),
)
def _solvers(seed: int, rung: str) -> dict[str, float]:
    pmp, direct = solver_pair(seed)
    jp, jd = pmp.cost, direct.cost
    return {"pmp-matches-direct": abs(jp - jd) / min(jp, jd)}


@REGISTRY.measures(
    Claim("ode-matches-sgd", kind="secondary",
          statement="the order-parameter ODEs predict the learning curves of finite-N online SGD",
          paper="ODE curves match SGD simulations", metric="max |mean SGD - ODE| / peak error, N = 1000, 5 runs",
          threshold=0.1, direction="lower", rule="every_seed", rungs=RUNGS,
          note="constant mix 0.3 on [2, 4], the SGD students start from the ODE's heads; threshold 10 % (paper "
               "note check 1), margin 0 <= max_margin 0.056 from calibration seeds 100-109 (0.8-3.5 % of the peak)"),
)
def _ode_vs_sgd(seed: int, rung: str) -> dict[str, float]:
    import numpy as np

    from .model import Problem, initial_state
    from .ode import integrate
    from .schedule import constant_mix
    from .sgd import simulate

    p = Problem(alpha_1=2.0, alpha_f=4.0, dt=0.01, n_intervals=20)
    sched = constant_mix(p, 0.3)
    traj = integrate(p, sched, method="rk4", seed=seed)
    sim = simulate(p, sched, n=1000, n_seeds=5, seed=1000 + seed, show_progress=False,
                   x0=initial_state(p, seed=seed))  # the same initial heads as the ODE
    ode = np.stack([np.interp(sim.alpha, traj.alpha, traj.errors[:, t]) for t in range(p.n_tasks)], 1)
    return {"ode-matches-sgd": float(np.abs(sim.mean - ode).max() / traj.errors.max())}


@REGISTRY.measures(
    Claim("forgetting-non-monotonic", kind="secondary",
          statement="under sequential training forgetting is largest at intermediate task similarity "
                    "(Maslow's hammer)",
          paper="non-monotonic forgetting vs similarity (Lee et al. 2021)",
          metric="max forgetting over interior gamma minus max over gamma in {0, 1}, window 4",
          threshold=0.0, margin=5e-4, direction="higher", rule="every_seed", rungs=RUNGS, expect="fails",
          ladder=LADDER_HEADS,
          note="gamma grid 0, 0.1, ..., 1; seeds 0-4: +3.5e-3, +2.0e-3, -1.1e-2, -5.8e-4, +4.7e-2: the maximum is "
               "inside (0, 1) at seeds 0, 1, 4 only; margin 5e-4"),
)
def _forgetting(seed: int, rung: str) -> dict[str, float]:
    import numpy as np

    from .model import Problem
    from .ode import integrate_gammas
    from .schedule import sequential

    p = Problem(alpha_1=4.0, alpha_f=8.0, n_intervals=10)
    gammas = np.linspace(0.0, 1.0, 11)
    E = integrate_gammas(p, sequential(p), gammas, seed=seed)
    f = E[:, -1, 0] - E[:, p.n_first_steps, 0]
    return {"forgetting-non-monotonic": float(f[1:-1].max() - max(f[0], f[-1]))}
