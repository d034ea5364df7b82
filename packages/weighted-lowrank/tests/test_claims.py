"""The paper's claims at small scale (seeded, with margins). Each test could fail; see README "Results"."""

import numpy as np
import pytest

from iclr25.weighted_lowrank import experiments, planted, weighted_low_rank, weighted_regression


def _one_row(d=400, k=12, seed=0):
    rng = np.random.default_rng(seed)
    F = np.linalg.qr(rng.normal(size=(d, k)))[0] * np.sqrt(d)
    w = rng.uniform(0.5, 1.5, size=(1, d))
    m = F @ rng.normal(size=k) + 0.3 * rng.normal(size=d)  # noisy: the optimal residual is far from 0
    return m[None, :], w, F


def _residual(x, m, w, F):
    return float(np.linalg.norm(w[0] * (F @ x - m[0])))


def test_claim1_exact_solver_equals_lstsq_to_1e_10():
    m, w, F = _one_row()
    x_ls = np.linalg.lstsq(w[0][:, None] * F, w[0] * m[0], rcond=None)[0]
    x = weighted_regression(m, w, F, solver="exact").X[0]
    assert np.max(np.abs(x - x_ls)) <= 1e-10 * max(1.0, np.max(np.abs(x_ls)))


@pytest.mark.parametrize("sketch", ["countsketch", "srht", "gaussian"])
def test_claim1_sketched_residual_within_1e_6_of_optimal_after_refinement(sketch):
    m, w, F = _one_row()
    x_ls = np.linalg.lstsq(w[0][:, None] * F, w[0] * m[0], rcond=None)[0]
    opt = _residual(x_ls, m, w, F)
    refined = weighted_regression(m, w, F, solver="sketch", sketch=sketch, seed=1)
    assert refined.steps > 0
    assert _residual(refined.X[0], m, w, F) <= (1 + 1e-6) * opt
    # the refinement is what gets there: sketch-and-solve alone (0 steps) is measurably worse
    alone = weighted_regression(m, w, F, solver="sketch", sketch=sketch, refine_steps=0, seed=1)
    assert _residual(alone.X[0], m, w, F) > (1 + 1e-6) * opt


@pytest.mark.parametrize("solver", ["exact", "sketch"])
def test_claim2_noiseless_error_falls_geometrically_4_orders_in_15_rounds(solver):
    prob = planted(300, 260, 6, noise=0.0, seed=0)
    errs = weighted_low_rank(prob.M, prob.W, 6, solver=solver, n_iter=15, truth=prob.truth).recovery_errors
    assert errs[-1] <= 1e-4 * errs[0]
    # geometric: over the first rounds (before the float64 floor) every round shrinks the error by >= 2x
    head = errs[errs > 1e-12]
    assert len(head) >= 3
    assert np.all(head[1:] <= 0.5 * head[:-1])


@pytest.mark.parametrize("weights", ["dense", "mask"])
def test_claim3_sketch_error_within_5_percent_of_exact(weights):
    prob = planted(400, 400, 8, weights=weights, noise=1e-3, p=0.3, seed=0)
    exact = weighted_low_rank(prob.M, prob.W, 8, solver="exact", truth=prob.truth).recovery_errors[-1]
    sketch = weighted_low_rank(prob.M, prob.W, 8, solver="sketch", truth=prob.truth).recovery_errors[-1]
    assert sketch <= 1.05 * exact
    assert exact < 0.01  # both actually recover the truth (noise floor ~2e-3)


def test_claim4_final_error_moves_by_at_most_a_constant_times_the_tolerance():
    res = experiments.robustness(300, 6, tols=(1e-2, 1e-4, 1e-8), refine="gd", seed=0)
    gaps = {tol: abs(r["error"] - res["exact"]) for tol, r in res["tol"].items()}
    for tol, gap in gaps.items():
        assert gap <= 1.0 * tol, (tol, gap)
    # the tolerance is really the binding stopping rule: tighter tolerances take more steps
    steps = [res["tol"][t]["steps"] for t in (1e-2, 1e-4, 1e-8)]
    assert steps[0] < steps[1] < steps[2]
