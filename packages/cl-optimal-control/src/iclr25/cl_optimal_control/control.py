"""Optimal task-selection protocols: Pontryagin forward-backward sweep and a direct method, one ``solve``.

The control problem (section 3 of the paper): minimise ``J[u, eta] = sum_t w_t eps_t(alpha_f)`` (+ a running
cost) over piecewise-constant task mixes ``u(alpha)`` in the simplex and, optionally, learning-rate factors
``eta(alpha) in [0, eta_max / eta]`` on the control window, subject to the order-parameter ODEs
``dx/dalpha = f(x, u, eta)`` discretised by forward Euler.

**Pontryagin (indirect) method.** With the costate ``p`` obeying ``p_s = p_{s+1} + dt (df/dx)^T p_{s+1}``,
``p_S = dJ/dx(x_S)`` (the discrete adjoint; the Jacobian-vector products come from ``jax.vjp``, not from
hand-derived expressions), the Hamiltonian of interval ``i`` is

.. math::

    H_i(u, \\eta) = \\sum_{s \\in i} p_{s+1} \\cdot f(x_s, u, \\eta)
                 = \\sum_c u_c \\left[\\eta A_{ic} + \\eta^2 B_{ic}\\right],

linear in ``u`` (so the minimiser is a vertex: bang-bang, train one task at a time) and quadratic in ``eta``
(minimised in closed form on ``[0, eta_max]``). The sweep integrates forward, backward, sets the control to
the pointwise minimiser and relaxes it, ``u <- rho u + (1 - rho) u_new``; a step that does not lower ``J`` is
retried with ``rho <- (1 + rho) / 2``, so ``rho`` grows from ``rho_0 = 0.4`` towards 0.999 as it converges.
When it stalls, the extended method of successive approximations finishes: each interval minimises the augmented
Hamiltonian ``H_i(u) + |u - u_i|^2 / (2 s)`` (a projected step along ``-H``), accepted when ``J`` falls (Li, Chen,
Tai & E, JMLR 2018); on singular arcs the plain sweep flips between vertices and stops short of stationarity.

**Direct method.** ``u = softmax(z)``, ``eta = eta_max sigmoid(y)`` per interval; ``J`` is differentiated
through the jitted ``lax.scan`` of the ODE and minimised by optax Adam.

References: Mori, Sarao Mannelli & Mignacco, ICLR 2025 (arXiv 2409.18061), section 3 and appendix B
(Pontryagin's principle, forward-backward sweep); Pontryagin et al. (1962); Kirk, *Optimal Control Theory*
(1970), ch. 5 and 6.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from iclr25.utils.progress import progress

from .model import Problem, State
from .ode import Trajectory, _as_state, errors, integrate, on_device, resolve_device, task_drifts
from .schedule import Schedule, constant_mix, replay_at_end, sequential

__all__ = ["SolveResult", "solve", "heuristics", "evaluate", "METHODS"]

METHODS = ("pmp", "direct")


@dataclasses.dataclass(frozen=True)
class SolveResult:
    """The optimal protocol found by :func:`solve`.

    Attributes
    ----------
    schedule:
        The optimal task mix (and learning-rate factor) per interval.
    cost:
        ``J`` of ``schedule`` on the Euler-discretised ODE.
    trace:
        ``J`` after every accepted iteration (Pontryagin) or every optimiser step (direct).
    method:
        ``"pmp"`` or ``"direct"``.
    n_iter:
        Iterations run.
    converged:
        Whether the stopping rule was met before the iteration limit.
    stationarity:
        Share of intervals where the schedule minimises the Hamiltonian to 1 % of its spread (Pontryagin's
        condition, singular arcs included; computed for both methods).
    wall_time_s:
        Solve time (including JIT compilation of a first call).
    trajectory:
        The ODE trajectory under ``schedule``.
    """

    schedule: Schedule
    cost: float
    trace: np.ndarray
    method: str
    n_iter: int
    converged: bool
    stationarity: float
    wall_time_s: float
    trajectory: Trajectory


# --------------------------------------------------------------------------------------------- kernels
def _lin_quad(x: State, S: Any, noise: float, ratio: Any) -> tuple[State, State]:
    """Drifts per task split into the part linear in ``eta`` and the part quadratic in ``eta``."""
    dQ_lin, dQ_quad, dM, dV = task_drifts(x, S, noise)
    T = S.shape[0]
    eye = jnp.eye(T, dtype=dV.dtype)
    lin = State(Q=dQ_lin, M=dM, V=ratio * eye[:, :, None] * dV[:, None, :])
    quad = State(Q=dQ_quad, M=jnp.zeros_like(dM), V=jnp.zeros_like(lin.V))
    return lin, quad


def _tdot(p: State, d: State) -> Any:
    """``p . d_c`` for every task ``c`` (``d`` has a leading task axis)."""
    return sum(jnp.tensordot(d_i, p_i, axes=p_i.ndim) for p_i, d_i in zip(p, d, strict=True))


@functools.partial(jax.jit, static_argnames=("noise", "running", "n1"))
def _sweep(x0: State, S: Any, u_steps: Any, eta_steps: Any, ratio: Any, dt: Any, w: Any, noise: float,
           running: float, n1: int) -> tuple[Any, Any, Any]:
    """Forward pass, discrete adjoint backward pass and the Hamiltonian coefficients ``A, B`` per step."""

    def f(x: State, u: Any, eta: Any) -> State:
        lin, quad = _lin_quad(x, S, noise, ratio)
        return jax.tree_util.tree_map(
            lambda a, b: eta * jnp.tensordot(u, a, axes=1) + eta ** 2 * jnp.tensordot(u, b, axes=1), lin, quad)

    def fwd(x: State, ctrl: tuple[Any, Any]) -> tuple[State, tuple[State, Any]]:
        u, eta = ctrl
        x_new = jax.tree_util.tree_map(lambda a, b: a + dt * b, x, f(x, u, eta))
        return x_new, (x, errors(x_new, S))

    x_f, (xs, errs) = jax.lax.scan(fwd, x0, (u_steps, eta_steps))
    n_steps = u_steps.shape[0]
    n_ctrl = n_steps - n1

    def terminal(x: State) -> Any:
        return errors(x, S) @ w

    J = terminal(x_f)
    p_f = jax.grad(terminal)(x_f)
    if running:
        J = J + running * jnp.mean(errs[n1:] @ w)
    run_w = running / max(n_ctrl, 1)
    is_ctrl = (jnp.arange(n_steps) >= n1).astype(x_f.Q.dtype)

    def bwd(p_next: State, inp: tuple[State, Any, Any, Any]) -> tuple[State, tuple[Any, Any]]:
        x, u, eta, c = inp
        x_next = jax.tree_util.tree_map(lambda a, b: a + dt * b, x, f(x, u, eta))
        # running cost on eps(x_{s+1}) enters the costate of x_{s+1} before it is propagated
        p_next = jax.tree_util.tree_map(lambda a, b: a + c * run_w * b, p_next,
                                        jax.grad(terminal)(x_next)) if running else p_next
        _, vjp = jax.vjp(lambda xx: jax.tree_util.tree_map(lambda a, b: a + dt * b, xx, f(xx, u, eta)), x)
        p = vjp(p_next)[0]
        lin, quad = _lin_quad(x, S, noise, ratio)
        return p, (dt * _tdot(p_next, lin), dt * _tdot(p_next, quad))

    _, (A, B) = jax.lax.scan(bwd, p_f, (xs, u_steps, eta_steps, is_ctrl), reverse=True)
    return J, A, B


@functools.partial(jax.jit, static_argnames=("noise", "running", "n1"))
def _cost_of(x0: State, S: Any, u_steps: Any, eta_steps: Any, ratio: Any, dt: Any, w: Any, noise: float,
             running: float, n1: int) -> Any:
    from .ode import drift  # noqa: PLC0415

    def fwd(x: State, ctrl: tuple[Any, Any]) -> tuple[State, Any]:
        u, eta = ctrl
        x_new = jax.tree_util.tree_map(lambda a, b: a + dt * b, x, drift(x, u, eta, eta * ratio, S, noise))
        return x_new, errors(x_new, S)

    _, errs = jax.lax.scan(fwd, x0, (u_steps, eta_steps))
    J = errs[-1] @ w
    if running:
        J = J + running * jnp.mean(errs[n1:] @ w)
    return J


class _Setup:
    """Arrays shared by both solvers for one problem."""

    def __init__(self, problem: Problem, seed: int, x0: State | None) -> None:
        self.problem = problem
        self.x0 = _as_state(x0, problem, seed)
        self.S = jnp.asarray(problem.similarity, jnp.float32)
        self.w = jnp.asarray(problem.weights, jnp.float32)
        self.ratio = problem.head_lr / problem.eta
        self.n1, self.n2 = problem.n_first_steps, problem.n_control_steps
        self.n_int = problem.n_intervals
        self.idx = (np.arange(self.n2) * self.n_int) // self.n2
        self.starts = np.flatnonzero(np.diff(np.concatenate([[-1], self.idx])))
        T = problem.n_tasks
        self.u1 = np.tile(np.eye(T)[0], (self.n1, 1))
        self.kw = dict(noise=float(problem.noise), running=float(problem.running_cost), n1=self.n1)

    def steps(self, u: np.ndarray, eta_f: np.ndarray) -> tuple[Any, Any]:
        us = np.concatenate([self.u1, u[self.idx]], axis=0)
        es = self.problem.eta * np.concatenate([np.ones(self.n1), eta_f[self.idx]])
        return jnp.asarray(us, jnp.float32), jnp.asarray(es, jnp.float32)

    def cost(self, u: np.ndarray, eta_f: np.ndarray) -> float:
        us, es = self.steps(u, eta_f)
        return float(_cost_of(self.x0, self.S, us, es, self.ratio, self.problem.dt, self.w, **self.kw))

    def hamiltonian(self, u: np.ndarray, eta_f: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """``J`` and the per-interval coefficients ``A, B`` (``(n_intervals, T)``) of ``H = eta A + eta^2 B``."""
        us, es = self.steps(u, eta_f)
        J, A, B = _sweep(self.x0, self.S, us, es, self.ratio, self.problem.dt, self.w, **self.kw)
        A = np.add.reduceat(np.asarray(A, np.float64)[self.n1:], self.starts, axis=0)
        B = np.add.reduceat(np.asarray(B, np.float64)[self.n1:], self.starts, axis=0)
        return float(J), A, B

    def minimiser(self, A: np.ndarray, B: np.ndarray, eta_f: np.ndarray,
                  control_eta: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Pointwise minimiser of ``H`` over the simplex (a vertex) and, if controlled, over ``eta``."""
        eta0, T = self.problem.eta, A.shape[1]
        if control_eta:
            emax = self.problem.eta_max
            with np.errstate(divide="ignore", invalid="ignore"):
                e_star = np.where(B > 0, -A / (2 * B), np.where(A < 0, emax, 0.0))
            e_star = np.clip(np.nan_to_num(e_star), 0.0, emax)
            cand = np.stack([np.zeros_like(A), e_star, np.full_like(A, emax)], axis=-1)
            h = cand * A[..., None] + cand ** 2 * B[..., None]
            best = np.argmin(h, axis=-1)
            e_c = np.take_along_axis(cand, best[..., None], -1)[..., 0]
            H = np.take_along_axis(h, best[..., None], -1)[..., 0]
        else:
            e_c = np.broadcast_to((eta0 * eta_f)[:, None], A.shape)
            H = e_c * A + e_c ** 2 * B
        c = np.argmin(H, axis=1)
        u_new = np.eye(T)[c]
        eta_new = e_c[np.arange(len(c)), c] / eta0 if control_eta else eta_f.copy()
        return u_new, eta_new, H


# --------------------------------------------------------------------------------------------- solvers
def _stationarity(setup: _Setup, u: np.ndarray, eta_f: np.ndarray, control_eta: bool) -> float:
    """Share of intervals where ``u`` minimises the Hamiltonian: ``H(u) - min_c H_c <= 1 %`` of the largest
    spread ``max_c H_c - min_c H_c`` over the window (singular arcs, where ``H`` is flat in ``u``, count)."""
    _, A, B = setup.hamiltonian(u, eta_f)
    _, _, H = setup.minimiser(A, B, eta_f, control_eta)
    e = (setup.problem.eta * eta_f)[:, None]
    gap = np.sum(u * (e * A + e ** 2 * B), axis=1) - H.min(axis=1)
    spread = float(np.max(H.max(axis=1) - H.min(axis=1)))
    return float(np.mean(gap <= 0.01 * spread + 1e-12))


def _pmp(setup: _Setup, u: np.ndarray, eta_f: np.ndarray, control_eta: bool, max_iter: int, tol: float,
         rho0: float, show_progress: bool) -> tuple[np.ndarray, np.ndarray, list[float], int, bool]:
    J, A, B = setup.hamiltonian(u, eta_f)
    trace = [J]
    rho = rho0
    converged = False
    it = 0
    bar = progress(total=max_iter, desc="PMP sweep", disable=None if show_progress else True)
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        u_new, eta_new, _ = setup.minimiser(A, B, eta_f, control_eta)
        u_try = rho * u + (1 - rho) * u_new
        eta_try = rho * eta_f + (1 - rho) * eta_new
        J_try, A_try, B_try = setup.hamiltonian(u_try, eta_try)
        bar.update(1)
        if J_try < J:
            rel = (J - J_try) / max(abs(J), 1e-12)
            u, eta_f, J, A, B = u_try, eta_try, J_try, A_try, B_try
            trace.append(J)
            rho = max(rho0, 1 - (1 - rho) * 2.0)       # a successful step allows a bolder next one
            if rel < tol and np.max(np.abs(u_new - u)) < 1e-3:
                converged = True
                break
        else:
            rho = (1 + rho) / 2
        if rho > 1 - 1e-6:   # no damping left that lowers J: stationary to the step's resolution
            converged = True
            break
    # the relaxed sweep moves every interval towards its vertex at once; on a singular arc (H_1 ~ H_2) those
    # vertices flip from sweep to sweep and the sweep stalls short of stationarity (seed 4 of the default
    # problem: 30 % of intervals minimise H). Finish with the extended method of successive approximations,
    # which minimises the augmented Hamiltonian H_i(u) + |u - u_i|^2 / (2 s) per interval (a step along -H
    # projected onto the simplex), with the same accept-if-J-falls rule.
    sig, small = 1.0, 0
    while it < max_iter:
        it += 1
        e = (setup.problem.eta * eta_f)[:, None]
        H = e * A + e ** 2 * B
        spread = float(np.max(H.max(axis=1) - H.min(axis=1)))
        if spread <= 0:
            break
        u_try = _project_simplex(u - (sig / spread) * H)
        J_try, A_try, B_try = setup.hamiltonian(u_try, eta_f)
        bar.update(1)
        if J_try < J:
            rel, du = (J - J_try) / max(abs(J), 1e-12), float(np.max(np.abs(u_try - u)))
            u, J, A, B = u_try, J_try, A_try, B_try
            trace.append(J)
            sig = min(1.5 * sig, 1e3)
            small = small + 1 if (rel < tol or du < 1e-4) else 0
            if small >= 5:
                converged = True
                break
        else:
            sig *= 0.5
            if sig < 1e-8:   # no step along -H lowers J: stationary to float32 resolution
                converged = True
                break
    bar.close()
    return u, eta_f, trace, it, converged


def _project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection of each row of ``v`` onto the probability simplex (Held, Wolfe & Crowder 1974)."""
    n = v.shape[1]
    srt = -np.sort(-v, axis=1)
    css = np.cumsum(srt, axis=1) - 1.0
    k = np.arange(1, n + 1)
    last = n - 1 - np.argmax((srt - css / k > 0)[:, ::-1], axis=1)
    theta = css[np.arange(len(v)), last] / (last + 1)
    return np.maximum(v - theta[:, None], 0.0)


def _direct(setup: _Setup, u: np.ndarray, eta_f: np.ndarray, control_eta: bool, max_iter: int,
            tol: float, learning_rate: float, show_progress: bool) -> tuple[np.ndarray, np.ndarray, list[float],
                                                                             int, bool]:
    import optax  # noqa: PLC0415

    p = setup.problem
    emax_f = p.eta_max / p.eta
    z0 = jnp.log(jnp.clip(jnp.asarray(u, jnp.float32), 1e-3, 1.0))
    e = np.clip(eta_f / emax_f, 1e-3, 1 - 1e-3)
    y0 = jnp.asarray(np.log(e / (1 - e)), jnp.float32)
    us1 = jnp.asarray(setup.u1, jnp.float32)
    idx = jnp.asarray(setup.idx)

    def objective(params: tuple[Any, Any]) -> Any:
        z, y = params
        uu = jax.nn.softmax(z, axis=1)
        ef = emax_f * jax.nn.sigmoid(y) if control_eta else jnp.asarray(eta_f, jnp.float32)
        us = jnp.concatenate([us1, uu[idx]], axis=0)
        es = p.eta * jnp.concatenate([jnp.ones(setup.n1, jnp.float32), ef[idx]])
        return _cost_of(setup.x0, setup.S, us, es, setup.ratio, p.dt, setup.w, **setup.kw)

    opt = optax.adam(learning_rate)
    params = (z0, y0)
    state = opt.init(params)

    @jax.jit
    def update(params: Any, state: Any) -> tuple[Any, Any, Any]:
        J, g = jax.value_and_grad(objective)(params)
        upd, state = opt.update(g, state, params)
        return optax.apply_updates(params, upd), state, J

    trace: list[float] = []
    best = (np.inf, params)
    converged = False
    it = 0
    bar = progress(total=max_iter, desc="direct (Adam)", disable=None if show_progress else True)
    for it in range(1, max_iter + 1):  # noqa: B007
        params, state, J = update(params, state)
        J = float(J)
        trace.append(J)
        if J < best[0]:
            best = (J, params)
        bar.update(1)
        if it > 50 and abs(trace[-50] - J) < tol * abs(J):
            converged = True
            break
    bar.close()
    z, y = best[1]
    u_opt = np.asarray(jax.nn.softmax(z, axis=1), np.float64)
    eta_opt = np.asarray(emax_f * jax.nn.sigmoid(y), np.float64) if control_eta else eta_f
    return u_opt, eta_opt, trace, it, converged


def solve(problem: Problem, method: str = "pmp", *, control_eta: bool = False, init: Schedule | None = None,
          max_iter: int | None = None, tol: float = 1e-7, rho0: float = 0.4, learning_rate: float = 0.3,
          x0: State | None = None, seed: int = 0, show_progress: bool = True, device: Any = None) -> SolveResult:
    """Find the task-selection protocol (and learning-rate schedule) that minimises the final error.

    Parameters
    ----------
    problem:
        The control problem (its ``n_intervals`` controls on ``[alpha_1, alpha_f]``).
    method:
        ``"pmp"`` (Pontryagin forward-backward sweep with damping) or ``"direct"`` (gradient through the
        jitted ODE, optax Adam).
    control_eta:
        Also optimise the learning rate in ``[0, eta_max]`` per interval.
    init:
        Starting schedule (default: a constant 50/50 mix at rate ``eta``).
    max_iter:
        Iteration limit (default 1000 for PMP, 500 for the direct method).
    tol:
        Relative change of ``J`` under which a solver stops.
    rho0:
        Initial damping of the sweep.
    learning_rate:
        Adam step size of the direct method.
    x0, seed:
        Initial order parameters (default :func:`iclr25.cl_optimal_control.initial_state` with ``seed``).
    device:
        Where JAX computes: ``"auto"`` (the GPU when a CUDA jaxlib sees one), ``"cpu"``, ``"cuda"``, ``"cuda:N"``
        or a ``jax.Device``; ``None``: ``$ICLR25_DEVICE``, else ``auto``. float32 on every device; the result
        holds numpy arrays (on the CPU).

    Examples
    --------
    >>> from iclr25.cl_optimal_control import Problem, solve
    >>> res = solve(Problem(gamma=0.5, n_intervals=10, alpha_1=1.0, alpha_f=2.0, dt=0.05), "pmp",
    ...             show_progress=False)
    >>> res.cost > 0 and res.schedule.u.shape == (10, 2)
    True
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a Problem, got {type(problem).__name__}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not (isinstance(rho0, (int, float)) and 0.0 <= rho0 < 1.0):
        raise ValueError(f"rho0 must be in [0, 1), got {rho0!r}")
    if not (isinstance(tol, (int, float)) and tol > 0):
        raise ValueError(f"tol must be positive, got {tol!r}")
    if max_iter is not None and (isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1):
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    t0 = time.perf_counter()
    dev = resolve_device(device)
    with on_device(dev):
        return _solve(problem, method, control_eta, init, max_iter, tol, rho0, learning_rate, x0, seed,
                      show_progress, dev, t0)


def _solve(problem: Problem, method: str, control_eta: bool, init: Schedule | None, max_iter: int | None,
           tol: float, rho0: float, learning_rate: float, x0: State | None, seed: int, show_progress: bool,
           dev: Any, t0: float) -> SolveResult:
    setup = _Setup(problem, seed, x0)
    if init is None:
        init = constant_mix(problem, 0.5)
    init = init.check(problem)
    if init.n_intervals != problem.n_intervals:
        raise ValueError(f"init has {init.n_intervals} intervals, the problem has {problem.n_intervals}")
    u, eta_f = init.u.copy(), init.eta_factor.copy()
    if method == "pmp":
        u, eta_f, trace, it, conv = _pmp(setup, u, eta_f, control_eta, max_iter or 1000, tol, rho0,
                                          show_progress)
    else:
        u, eta_f, trace, it, conv = _direct(setup, u, eta_f, control_eta, max_iter or 500, tol,
                                             learning_rate, show_progress)
    name = f"optimal ({method}{', eta' if control_eta else ''})"
    sched = Schedule(u=u / u.sum(axis=1, keepdims=True), eta_factor=np.minimum(eta_f, problem.eta_max / problem.eta),
                     name=name)
    traj = integrate(problem, sched, x0=setup.x0, device=dev)
    stat = _stationarity(setup, sched.u, sched.eta_factor, control_eta)
    return SolveResult(schedule=sched, cost=traj.cost, trace=np.asarray(trace), method=method, n_iter=it,
                       converged=conv, stationarity=stat, wall_time_s=time.perf_counter() - t0, trajectory=traj)


def evaluate(problem: Problem, schedule: Schedule, *, x0: State | None = None, seed: int = 0,
             device: Any = None) -> float:
    """``J`` of ``schedule`` on the ODE (computed on ``device``, as in :func:`solve`)."""
    return integrate(problem, schedule, x0=x0, seed=seed, device=device).cost


def heuristics(problem: Problem, *, grid: int = 21, x0: State | None = None, seed: int = 0, device: Any = None
               ) -> dict[str, tuple[Schedule, float]]:
    """The heuristic protocols and their ODE costs: sequential, the best constant mix and the best replay
    block at the end (each best over a grid of ``grid`` fractions in [0, 1]), computed on ``device`` (as in
    :func:`solve`).

    Returns ``{"sequential": (schedule, J), "best constant mix": ..., "best replay at end": ...}``.
    """
    with on_device(device):
        return _heuristics(problem, grid, x0, seed)


def _heuristics(problem: Problem, grid: int, x0: State | None, seed: int) -> dict[str, tuple[Schedule, float]]:
    setup = _Setup(problem, seed, x0)
    fr = np.linspace(0.0, 1.0, grid)
    out: dict[str, tuple[Schedule, float]] = {}
    seq = sequential(problem)
    out["sequential"] = (seq, setup.cost(seq.u, seq.eta_factor))
    for key, make in (("best constant mix", constant_mix), ("best replay at end", replay_at_end)):
        best: tuple[Schedule, float] | None = None
        for f in fr:
            s = make(problem, float(f))
            J = setup.cost(s.u, s.eta_factor)
            if best is None or J < best[1]:
                best = (s, J)
        assert best is not None
        out[key] = best
    return out
