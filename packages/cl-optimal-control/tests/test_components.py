"""Components: closed-form integrals against quadrature, the JAX drift against the numpy one, the vmapped
gamma sweep against single runs, schedule files, EWC, and the casadi scalar drift."""

import numpy as np
import pytest
from scipy.special import erf

from iclr25.cl_optimal_control import (
    Problem,
    constant_mix,
    integrate,
    integrate_gammas,
    load_schedule,
    replay_at_end,
    save_schedule,
    simulate,
)
from iclr25.cl_optimal_control.integrals import erf_i2, erf_i3, erf_i4, erf_j2, gauss_hermite_expectation
from iclr25.cl_optimal_control.model import initial_state


def g(z):
    return erf(z / np.sqrt(2))


def gp(z):
    return np.sqrt(2 / np.pi) * np.exp(-z ** 2 / 2)


def test_closed_forms_match_gauss_hermite():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((4, 4))
    C = A @ A.T / 4 + 0.3 * np.eye(4)
    I2, I3, I4, J2 = erf_i2(C, xp=np), erf_i3(C, 4, xp=np), erf_i4(C, 4, xp=np), erf_j2(C, 4, xp=np)
    sub = lambda *ix: C[np.ix_(ix, ix)]  # noqa: E731
    assert I2[0, 1] == pytest.approx(gauss_hermite_expectation(lambda a, b: g(a) * g(b), sub(0, 1)), abs=1e-8)
    assert I3[0, 1, 2] == pytest.approx(
        gauss_hermite_expectation(lambda a, b, c: gp(a) * b * g(c), sub(0, 1, 2)), abs=1e-8)
    assert I4[0, 1, 2, 3] == pytest.approx(
        gauss_hermite_expectation(lambda a, b, c, d: gp(a) * gp(b) * g(c) * g(d), C, n_nodes=16), abs=2e-5)
    assert J2[0, 1] == pytest.approx(gauss_hermite_expectation(lambda a, b: gp(a) * gp(b), sub(0, 1)), abs=1e-8)


def test_jax_drift_matches_numpy_drift():
    import jax.numpy as jnp

    from iclr25.cl_optimal_control.model import State
    from iclr25.cl_optimal_control.ode import _numpy_drift, drift

    p = Problem(n_hidden=3, noise=0.2)
    rng = np.random.default_rng(1)
    W = rng.standard_normal((3, 50)) * 0.5
    x = State(Q=W @ W.T / 50, M=0.1 * rng.standard_normal((3, 2)), V=rng.standard_normal((2, 3)))
    u = np.array([0.3, 0.7])
    ref = _numpy_drift(x, u, 1.3, 0.9, p.similarity, 0.2)
    got = drift(State(*(jnp.asarray(a, jnp.float32) for a in x)), jnp.asarray(u, jnp.float32), 1.3, 0.9,
                jnp.asarray(p.similarity, jnp.float32), 0.2)
    for a, b in zip(ref, got, strict=True):
        np.testing.assert_allclose(np.asarray(b), a, rtol=2e-4, atol=2e-5)


def test_vmapped_gammas_match_single_runs():
    p = Problem(alpha_1=1.0, alpha_f=2.0, n_intervals=5)
    sched = constant_mix(p, 0.2)
    E = integrate_gammas(p, sched, [0.2, 0.8])
    for i, gm in enumerate([0.2, 0.8]):
        np.testing.assert_allclose(E[i], integrate(p.replace(gamma=gm), sched).errors, rtol=1e-5, atol=1e-6)


def test_schedule_file_round_trip(tmp_path):
    p = Problem(gamma=0.3)
    s = replay_at_end(p, 0.25)
    path = save_schedule(tmp_path / "s.json", s, p, cost=0.1)
    s2, p2 = load_schedule(path)
    np.testing.assert_array_equal(s2.u, s.u)
    assert p2 == p


def test_sgd_starts_at_the_ode_initial_state_and_ewc_reduces_forgetting():
    p = Problem(alpha_1=4.0, alpha_f=8.0, n_intervals=5, gamma=0.5)
    sched = constant_mix(p, 0.0)
    base = simulate(p, sched, n=200, n_seeds=3, seed=0, show_progress=False)
    x0 = initial_state(p)
    np.testing.assert_allclose(base.errors[:, 0], np.broadcast_to(integrate(p, sched, x0=x0).errors[0], (3, 2)),
                               rtol=1e-4)
    ewc = simulate(p, sched, n=200, n_seeds=3, seed=0, ewc=50.0, show_progress=False)
    i1 = np.argmin(np.abs(base.alpha - 4.0))
    forget = lambda r: (r.errors[:, -1, 0] - r.errors[:, i1, 0]).mean()  # noqa: E731
    assert forget(base) > 0.01                   # sequential training forgets task 1
    assert forget(ewc) < 0.5 * forget(base)


def test_casadi_scalar_drift_matches_numpy_drift():
    import casadi

    from iclr25.cl_optimal_control.casadi_peer import scalar_drift
    from iclr25.cl_optimal_control.model import State
    from iclr25.cl_optimal_control.ode import _numpy_drift

    p = Problem(gamma=0.4, noise=0.1)
    rng = np.random.default_rng(3)
    W = rng.standard_normal((2, 40)) * 0.6
    x = State(Q=W @ W.T / 40, M=0.2 * rng.standard_normal((2, 2)), V=rng.standard_normal((2, 2)))
    flat = np.concatenate([a.ravel() for a in x])
    X = casadi.SX.sym("x", flat.size)
    f = casadi.Function("f", [X], [casadi.vertcat(*scalar_drift([X[i] for i in range(flat.size)], [0.3, 0.7],
                                                                1.2, 0.8, p.similarity, 0.1, 2,
                                                                casadi.asin, casadi.sqrt))])
    got = np.asarray(f(flat)).ravel()
    ref = _numpy_drift(x, np.array([0.3, 0.7]), 1.2, 0.8, p.similarity, 0.1)
    np.testing.assert_allclose(got, np.concatenate([a.ravel() for a in ref]), rtol=1e-10, atol=1e-12)
