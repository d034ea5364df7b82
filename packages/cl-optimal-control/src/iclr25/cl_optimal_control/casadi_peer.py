"""The peer: the same direct optimal-control problem written in CasADi and solved by IPOPT.

As in the authors' sibling code for the direct method (CasADi, multiple shooting, ``nlpsol('ipopt')``): the
Euler-discretised ODEs are built as a CasADi SX function from scalar closed-form integrals written out term by
term (an implementation independent of the vectorised JAX one), the state at every control-interval boundary
is a decision variable with a continuity constraint, the task mix of each interval is bounded in [0, 1] (two
tasks: ``u_old``, ``u_new = 1 - u_old``), and the cost is the weighted final error. Task 1's phase is
integrated first (numerically, with the same Euler steps) and fixes the initial state of the window.

Needs the ``casadi`` extra: ``pip install "iclr25-cl-optimal-control[casadi]"``.

References: Andersson et al., "CasADi", Math. Prog. Comp. 11 (2019); Wächter & Biegler, "IPOPT", Math. Prog.
106 (2006); Mori, Sarao Mannelli & Mignacco, ICLR 2025 (arXiv 2409.18061), section 3.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import numpy as np

from .model import Problem, State, initial_state
from .schedule import Schedule

__all__ = ["CasadiResult", "scalar_drift", "solve_casadi"]


def _casadi() -> Any:
    try:
        import casadi  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - the extra is installed in the tests
        raise ImportError("the CasADi peer needs the casadi extra: pip install "
                          "'iclr25-cl-optimal-control[casadi]'") from exc
    return casadi


def scalar_drift(x: list[Any], u: list[Any], eta: Any, eta_v: Any, S: np.ndarray, noise: float, K: int,
                 asin: Any, sqrt: Any) -> list[Any]:
    """The order-parameter drift written with scalar operations only (CasADi SX, floats, ...).

    ``x`` is ``[Q (K*K, row-major), M (K*T), V (T*K)]`` flattened; ``u`` the task mix. Same equations as
    :func:`iclr25.cl_optimal_control.ode.drift`, term by term.
    """
    T = S.shape[0]
    D = K + T
    Q = [[x[k * K + l] for l in range(K)] for k in range(K)]
    M = [[x[K * K + k * T + n] for n in range(T)] for k in range(K)]
    V = [[x[K * K + K * T + t * K + k] for k in range(K)] for t in range(T)]
    C = [[None] * D for _ in range(D)]
    for a in range(D):
        for b in range(D):
            if a < K and b < K:
                C[a][b] = Q[a][b]
            elif a < K:
                C[a][b] = M[a][b - K]
            elif b < K:
                C[a][b] = M[b][a - K]
            else:
                C[a][b] = float(S[a - K, b - K])

    def i2(a: int, b: int) -> Any:
        return (2 / math.pi) * asin(C[a][b] / sqrt((1 + C[a][a]) * (1 + C[b][b])))

    def i3(a: int, b: int, c: int) -> Any:
        lam3 = (1 + C[a][a]) * (1 + C[c][c]) - C[a][c] ** 2
        return (2 / math.pi) * (C[b][c] * (1 + C[a][a]) - C[a][b] * C[a][c]) / ((1 + C[a][a]) * sqrt(lam3))

    def i4(a: int, b: int, c: int, d: int) -> Any:
        c11, c22, c33, c44 = 1 + C[a][a], 1 + C[b][b], 1 + C[c][c], 1 + C[d][d]
        c12, c13, c14, c23, c24, c34 = C[a][b], C[a][c], C[a][d], C[b][c], C[b][d], C[c][d]
        lam4 = c11 * c22 - c12 ** 2
        lam0 = lam4 * c34 - c23 * c24 * c11 - c13 * c14 * c22 + c12 * c13 * c24 + c12 * c14 * c23
        lam1 = lam4 * c33 - c23 ** 2 * c11 - c13 ** 2 * c22 + 2 * c12 * c13 * c23
        lam2 = lam4 * c44 - c24 ** 2 * c11 - c14 ** 2 * c22 + 2 * c12 * c14 * c24
        return (4 / math.pi ** 2) * asin(lam0 / sqrt(lam1 * lam2)) / sqrt(lam4)

    dQ = [[0.0] * K for _ in range(K)]
    dM = [[0.0] * T for _ in range(K)]
    dV = [[0.0] * K for _ in range(T)]
    for c in range(T):
        om = list(V[c]) + [(-1.0 if t == c else 0.0) for t in range(T)]
        nz = [d for d in range(D) if not (d >= K and d - K != c)]
        A = [[sum(om[d] * i3(k, b, d) for d in nz) for b in range(D)] for k in range(K)]
        for k in range(K):
            for n in range(T):
                dM[k][n] = dM[k][n] + u[c] * (-eta * V[c][k] * A[k][K + n])
            for l in range(K):
                lin = -eta * (V[c][k] * A[k][l] + V[c][l] * A[l][k])
                quad = sum(om[d] * om[e] * i4(k, l, d, e) for d in nz for e in nz)
                if noise:
                    quad = quad + noise ** 2 * (2 / math.pi) / sqrt((1 + C[k][k]) * (1 + C[l][l]) - C[k][l] ** 2)
                dQ[k][l] = dQ[k][l] + u[c] * (lin + eta ** 2 * V[c][k] * V[c][l] * quad)
            dV[c][k] = u[c] * (-eta_v * sum(om[d] * i2(k, d) for d in nz))
    return ([dQ[k][l] for k in range(K) for l in range(K)] + [dM[k][n] for k in range(K) for n in range(T)]
            + [dV[t][k] for t in range(T) for k in range(K)])


def _errors_scalar(x: list[Any], S: np.ndarray, K: int, asin: Any, sqrt: Any) -> list[Any]:
    T = S.shape[0]
    Q = [[x[k * K + l] for l in range(K)] for k in range(K)]
    M = [[x[K * K + k * T + n] for n in range(T)] for k in range(K)]
    V = [[x[K * K + K * T + t * K + k] for k in range(K)] for t in range(T)]

    def i2(caa: Any, cbb: Any, cab: Any) -> Any:
        return (2 / math.pi) * asin(cab / sqrt((1 + caa) * (1 + cbb)))

    out = []
    for t in range(T):
        e = i2(1.0, 1.0, 1.0)
        for i in range(K):
            e = e - 2 * V[t][i] * i2(Q[i][i], 1.0, M[i][t])
            for j in range(K):
                e = e + V[t][i] * V[t][j] * i2(Q[i][i], Q[j][j], Q[i][j])
        out.append(0.5 * e)
    return out


@dataclasses.dataclass(frozen=True)
class CasadiResult:
    """IPOPT's solution of the direct problem: schedule, cost, solver status and wall time (build + solve)."""

    schedule: Schedule
    cost: float
    status: str
    build_time_s: float
    solve_time_s: float


def solve_casadi(problem: Problem, *, x0: State | None = None, seed: int = 0, max_iter: int = 500,
                 init: float = 0.5) -> CasadiResult:
    """Solve ``min_u J`` (two tasks, fixed learning rate) by multiple shooting + IPOPT."""
    ca = _casadi()
    if problem.n_tasks != 2:
        raise ValueError(f"the CasADi peer handles two tasks, the problem has {problem.n_tasks}")
    t0 = time.perf_counter()
    K, T = problem.n_hidden, problem.n_tasks
    S = problem.similarity
    x0 = initial_state(problem, seed=seed) if x0 is None else x0
    nx = K * K + 2 * K * T
    X = ca.SX.sym("x", nx)
    U = ca.SX.sym("u")
    eta, eta_v, dt = problem.eta, problem.head_lr, problem.dt
    f = ca.vertcat(*scalar_drift([X[i] for i in range(nx)], [U, 1 - U], eta, eta_v, S, problem.noise, K,
                                 ca.asin, ca.sqrt))
    step = ca.Function("step", [X, U], [X + dt * f])
    # task 1 alone on [0, alpha_1]
    x = np.concatenate([np.asarray(a, float).ravel() for a in x0])
    for _ in range(problem.n_first_steps):
        x = np.asarray(step(x, 1.0)).ravel()
    n2, n_int = problem.n_control_steps, problem.n_intervals
    idx = (np.arange(n2) * n_int) // n2
    counts = np.bincount(idx, minlength=n_int)
    folds = {int(c): step.fold(int(c)) for c in set(counts.tolist())}
    w = problem.weights
    Xs = [ca.MX.sym(f"X{i}", nx) for i in range(n_int + 1)]
    Us = [ca.MX.sym(f"U{i}") for i in range(n_int)]
    g = [Xs[0] - x]
    for i in range(n_int):
        g.append(Xs[i + 1] - folds[int(counts[i])](Xs[i], Us[i]))
    errs = _errors_scalar([Xs[-1][j] for j in range(nx)], S, K, ca.asin, ca.sqrt)
    J = sum(float(w[t]) * errs[t] for t in range(T))
    if problem.running_cost:
        raise ValueError("the CasADi peer solves the terminal-cost problem only (running_cost = 0)")
    z = ca.vertcat(*Xs, *Us)
    nlp = {"x": z, "f": J, "g": ca.vertcat(*g)}
    opts = {"ipopt.print_level": 0, "print_time": 0, "ipopt.max_iter": max_iter, "ipopt.tol": 1e-10}
    solver = ca.nlpsol("solver", "ipopt", nlp, opts)
    # a feasible start: roll the dynamics forward under the initial control
    xs = [x]
    for i in range(n_int):
        xs.append(np.asarray(folds[int(counts[i])](xs[-1], init)).ravel())
    z0 = np.concatenate(xs + [np.full(n_int, init)])
    lbx = np.concatenate([np.full(nx * (n_int + 1), -np.inf), np.zeros(n_int)])
    ubx = np.concatenate([np.full(nx * (n_int + 1), np.inf), np.ones(n_int)])
    t1 = time.perf_counter()
    sol = solver(x0=z0, lbx=lbx, ubx=ubx, lbg=0, ubg=0)
    t2 = time.perf_counter()
    u_old = np.clip(np.asarray(sol["x"]).ravel()[-n_int:], 0.0, 1.0)
    sched = Schedule(u=np.stack([u_old, 1 - u_old], axis=1), name="optimal (casadi/ipopt)")
    return CasadiResult(schedule=sched, cost=float(sol["f"]), status=str(solver.stats()["return_status"]),
                        build_time_s=t1 - t0, solve_time_s=t2 - t1)
