"""The paper's claims at small scale, from the claims registry (iclr25.cl_optimal_control.claims: seeds 0-2,
a stated rule per claim): the ODE matches finite-N SGD; the optimal protocol beats the tuned heuristics by 10 %;
focus on the new task, then replay, then a final revision; forgetting is
non-monotonic in the task similarity. Plus two checks that are not the paper's claims: the ODE-SGD gap shrinks
with N (per-run gap at N = 250 more than twice that at N = 2000), and the JAX integrator against solve_ivp.
"""

from pathlib import Path

import numpy as np

from iclr25.cl_optimal_control import Problem, constant_mix, integrate, simulate
from iclr25.cl_optimal_control.claims import REGISTRY, default_solutions
from iclr25.cl_optimal_control.ode import solve_ivp_reference


def _ode_on(sim_alpha, traj):
    return np.stack([np.interp(sim_alpha, traj.alpha, traj.errors[:, t]) for t in range(traj.errors.shape[1])], 1)


def test_sgd_gap_shrinks_with_n():
    p = Problem(alpha_1=1.0, alpha_f=2.0, dt=0.01, n_intervals=10)
    sched = constant_mix(p, 0.3)
    traj = integrate(p, sched, method="rk4")
    gaps = {}
    for n in (250, 2000):
        sim = simulate(p, sched, n=n, n_seeds=10, seed=2, show_progress=False)
        dev = sim.errors - _ode_on(sim.alpha, traj)[None]
        gaps[n] = float(np.sqrt(np.mean(dev ** 2)))       # per-run RMS gap over seeds, times, tasks
    assert gaps[250] > 2.0 * gaps[2000], gaps


def test_integrator_matches_solve_ivp():
    p = Problem(alpha_1=2.0, alpha_f=4.0, dt=0.01, n_intervals=8)
    sched = constant_mix(p, 0.4)
    _, ref = solve_ivp_reference(p, sched)
    errs = integrate(p, sched, method="rk4").errors
    assert np.max(np.abs(errs - ref)) / np.max(np.abs(ref)) < 1e-3
    # forward Euler (the control discretisation) is first order: below 1e-3 from dt = 0.005
    q = p.replace(dt=0.005)
    _, ref = solve_ivp_reference(q, sched)
    rel = np.max(np.abs(integrate(q, sched).errors - ref)) / np.max(np.abs(ref))
    assert rel < 1e-3, rel


# the paper's claims, decided over seeds 0-2 at the "test" rung (iclr25.cl_optimal_control.claims)
test_claim = REGISTRY.pytest_test("test")

# the committed claims.json (written by the repro rung) and claims-calibration.json agree with the registry
test_committed_claims = REGISTRY.pytest_committed_test(Path(__file__).parents[1])


def test_solvers_improve_on_their_start_and_on_sequential_training():
    for seed in REGISTRY.rung_seeds("test"):
        # cached: the same solutions the claims are decided from (the same call, so the same lru_cache key)
        d = default_solutions(seed, direct=False)
        pmp, heur = d["pmp"], d["heuristics"]
        assert pmp.trace[-1] <= pmp.trace[0]
        assert pmp.cost <= 0.5 * heur["sequential"][1], (seed, pmp.cost, heur["sequential"][1])
