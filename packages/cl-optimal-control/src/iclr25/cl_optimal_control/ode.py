"""Exact order-parameter ODEs of online SGD in the multi-head erf teacher-student model (JAX).

With the fields of the student (``lambda_k``, ``k < K``) and of all teachers (``nu_t``) jointly Gaussian with
covariance ``C = [[Q, M], [M^T, S]]``, training on task ``c`` with error ``delta = sum_d omega_d g(x_d)``,
``omega = (v^(c), -e_c)``, moves the order parameters as (``dalpha = 1/N`` per step)

.. math::

    \\frac{dM_{kn}}{d\\alpha} = -\\eta v_k \\sum_d \\omega_d I_3(k, n, d), \\qquad
    \\frac{dv^{(c)}_k}{d\\alpha} = -\\eta_v \\sum_d \\omega_d I_2(k, d),

    \\frac{dQ_{kl}}{d\\alpha} = -\\eta \\sum_d \\omega_d [v_k I_3(k,l,d) + v_l I_3(l,k,d)]
        + \\eta^2 v_k v_l \\Big[\\sum_{de} \\omega_d \\omega_e I_4(k,l,d,e) + \\sigma^2 J_2(k,l)\\Big],

for every teacher ``n`` (the cross-task terms are the forgetting channel) and with the other heads frozen. A
task mix ``u`` averages the drifts: ``f(x, u) = sum_c u_c f_c(x)``, linear in ``u`` (so the Hamiltonian is
too). The generalisation error of task ``t`` is ``eps_t = 1/2 omega_t^T I_2 omega_t``.

The integrator is forward Euler (the discretisation on which the control problem is solved, as in the
reference PMP code) or classical RK4, both as one ``lax.scan`` under ``jit``; ``integrate_gammas`` vmaps a
whole trajectory over task similarities.

References: Saad & Solla (1995); Lee, Goldt & Saxe, ICML 2021 (multi-head continual learning ODEs);
Mori, Sarao Mannelli & Mignacco, ICLR 2025 (arXiv 2409.18061), section 2 and appendix A.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .integrals import erf_i2, erf_i3, erf_i4, erf_j2
from .model import Problem, State, initial_state, similarity_matrix
from .schedule import Schedule

__all__ = ["Trajectory", "drift", "task_drifts", "errors", "integrate", "integrate_gammas", "step_controls",
           "solve_ivp_reference", "on_device", "resolve_device"]


def on_device(device: Any = None) -> Any:
    """``with on_device(device):`` runs the JAX code inside on ``device``: a spec (``"auto"``, ``"cpu"``,
    ``"cuda"``, ``"cuda:N"``; ``None``: ``$ICLR25_DEVICE``, else ``auto``, the GPU when a CUDA jaxlib sees one) or
    a ``jax.Device``. An absent device is a one-line ValueError naming ``--device``. The ODEs run in float32 on
    every device (the state is a dozen numbers; results come back as float64 numpy arrays)."""
    return jax.default_device(resolve_device(device))


def resolve_device(device: Any = None) -> Any:
    """The ``jax.Device`` of a ``device`` argument (:func:`on_device`); a ``jax.Device`` is returned as it is."""
    from iclr25.utils.device import jax_device  # noqa: PLC0415

    return jax_device(device)


def _cov(state: State, S: Any) -> Any:
    top = jnp.concatenate([state.Q, state.M], axis=1)
    bottom = jnp.concatenate([state.M.T, S], axis=1)
    return jnp.concatenate([top, bottom], axis=0)


def _omegas(V: Any, T: int) -> Any:
    """``omega_t = (v^(t), -e_t)`` for every task: shape ``(T, K + T)``."""
    return jnp.concatenate([V, -jnp.eye(T, dtype=V.dtype)], axis=1)


def errors(state: State, S: Any) -> Any:
    """Generalisation error of every task, ``eps_t = 1/2 omega_t^T I2 omega_t``: shape ``(T,)``."""
    T = S.shape[0]
    I2 = erf_i2(_cov(state, S))
    om = _omegas(state.V, T)
    return 0.5 * jnp.einsum("td,de,te->t", om, I2, om)


def task_drifts(state: State, S: Any, noise: float = 0.0) -> tuple[Any, Any, Any, Any]:
    """Per-task drifts at unit learning rates: ``(dQ_lin, dQ_quad, dM, dV)`` of shapes ``(T,K,K)``,
    ``(T,K,K)``, ``(T,K,T)`` and ``(T,K)`` (the row of ``V`` that training task ``c`` moves)."""
    K = state.Q.shape[0]
    T = S.shape[0]
    C = _cov(state, S)
    I2 = erf_i2(C)
    I3 = erf_i3(C, K)                     # (K, D, D)
    I4 = erf_i4(C, K)                     # (K, K, D, D)
    om = _omegas(state.V, T)              # (T, D)
    A = jnp.einsum("kbd,td->tkb", I3, om)  # (T, K, D): sum_d omega_d I3(k, b, d)
    v = state.V                            # (T, K): v of the trained task
    dM = -v[:, :, None] * A[:, :, K:]
    AQ = v[:, :, None] * A[:, :, :K]
    dQ_lin = -(AQ + jnp.swapaxes(AQ, 1, 2))
    quad = jnp.einsum("klde,td,te->tkl", I4, om, om)
    if noise:
        quad = quad + noise ** 2 * erf_j2(C, K)[None]
    dQ_quad = v[:, :, None] * v[:, None, :] * quad
    dV = -jnp.einsum("kd,td->tk", I2[:K], om)
    return dQ_lin, dQ_quad, dM, dV


def drift(state: State, u: Any, eta: Any, eta_v: Any, S: Any, noise: float = 0.0) -> State:
    """``d state / d alpha`` under the task mix ``u`` (``(T,)``) and learning rates ``eta``, ``eta_v``."""
    dQ_lin, dQ_quad, dM, dV = task_drifts(state, S, noise)
    dQ = eta * jnp.einsum("t,tkl->kl", u, dQ_lin) + eta ** 2 * jnp.einsum("t,tkl->kl", u, dQ_quad)
    return State(Q=dQ, M=eta * jnp.einsum("t,tkn->kn", u, dM), V=eta_v * u[:, None] * dV)


def _axpy(a: Any, x: State, y: State) -> State:
    return jax.tree_util.tree_map(lambda xi, yi: yi + a * xi, x, y)


@functools.partial(jax.jit, static_argnames=("method", "noise"))
def _rollout(x0: State, S: Any, u_steps: Any, eta_steps: Any, eta_v_ratio: Any, dt: Any,
             noise: float = 0.0, method: str = "euler") -> tuple[State, Any]:
    """Integrate from ``x0`` with per-step controls; returns the final state and errors at every step
    (including the initial one): shape ``(n_steps + 1, T)``."""

    def f(x: State, u: Any, eta: Any) -> State:
        return drift(x, u, eta, eta * eta_v_ratio, S, noise)

    def step(x: State, ctrl: tuple[Any, Any]) -> tuple[State, Any]:
        u, eta = ctrl
        if method == "euler":
            x_new = _axpy(dt, f(x, u, eta), x)
        else:
            k1 = f(x, u, eta)
            k2 = f(_axpy(dt / 2, k1, x), u, eta)
            k3 = f(_axpy(dt / 2, k2, x), u, eta)
            k4 = f(_axpy(dt, k3, x), u, eta)
            incr = jax.tree_util.tree_map(lambda a, b, c, d: (a + 2 * b + 2 * c + d) / 6, k1, k2, k3, k4)
            x_new = _axpy(dt, incr, x)
        return x_new, errors(x_new, S)

    x_f, errs = jax.lax.scan(step, x0, (u_steps, eta_steps))
    return x_f, jnp.concatenate([errors(x0, S)[None], errs], axis=0)


def step_controls(problem: Problem, schedule: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """Per-ODE-step task mix ``(n_steps, T)`` and learning rate ``(n_steps,)`` over ``[0, alpha_f]``:
    task 1 at rate ``eta`` for the first phase, then the schedule's intervals."""
    schedule.check(problem)
    T = problem.n_tasks
    n1, n2 = problem.n_first_steps, problem.n_control_steps
    idx = (np.arange(n2) * schedule.n_intervals) // n2
    u = np.concatenate([np.tile(np.eye(T)[0], (n1, 1)), schedule.u[idx]], axis=0)
    eta = problem.eta * np.concatenate([np.ones(n1), schedule.eta_factor[idx]])
    return u, eta


@dataclasses.dataclass(frozen=True)
class Trajectory:
    """Errors along an ODE trajectory.

    Attributes
    ----------
    alpha:
        ``(n_steps + 1,)`` training times.
    errors:
        ``(n_steps + 1, T)`` generalisation error of every task.
    final_state:
        Order parameters at ``alpha_f``.
    cost:
        ``sum_t w_t eps_t(alpha_f)`` plus the running cost.
    alpha_1:
        End of the task-1 phase.
    """

    alpha: np.ndarray
    errors: np.ndarray
    final_state: State
    cost: float

    alpha_1: float = 0.0

    @property
    def forgetting(self) -> float:
        """``eps_1(alpha_f) - eps_1(alpha_1)``: how much task 1 got worse on the control window."""
        i1 = int(np.argmin(np.abs(self.alpha - self.alpha_1)))
        return float(self.errors[-1, 0] - self.errors[i1, 0])


def _cost(problem: Problem, errs: Any) -> Any:
    w = jnp.asarray(problem.weights, dtype=errs.dtype)
    J = errs[-1] @ w
    if problem.running_cost:
        n1 = problem.n_first_steps
        J = J + problem.running_cost * jnp.mean(errs[n1 + 1:] @ w)
    return J


def _as_state(x0: State | None, problem: Problem, seed: int) -> State:
    x0 = initial_state(problem, seed=seed) if x0 is None else x0
    K, T = problem.n_hidden, problem.n_tasks
    shapes = {"Q": (K, K), "M": (K, T), "V": (T, K)}
    out = {}
    for name, shape in shapes.items():
        arr = jnp.asarray(getattr(x0, name), dtype=jnp.float32)
        if arr.shape != shape:
            raise ValueError(f"initial state {name} must have shape {shape}, got {arr.shape}")
        if not bool(jnp.all(jnp.isfinite(arr))):
            raise ValueError(f"initial state {name} must be finite")
        out[name] = arr
    return State(**out)


def integrate(problem: Problem, schedule: Schedule, *, x0: State | None = None, method: str = "euler",
              seed: int = 0, device: Any = None) -> Trajectory:
    """Integrate the ODEs over ``[0, alpha_f]``: task 1 alone, then ``schedule`` on the control window.

    ``x0`` defaults to :func:`initial_state` with ``seed``; ``method`` is ``"euler"`` or ``"rk4"``; ``device``
    where JAX computes (:func:`on_device`; the results are numpy arrays on the CPU).
    """
    if method not in ("euler", "rk4"):
        raise ValueError(f"method must be 'euler' or 'rk4', got {method!r}")
    with on_device(device):
        return _integrate(problem, schedule, x0, method, seed)


def _integrate(problem: Problem, schedule: Schedule, x0: State | None, method: str, seed: int) -> Trajectory:
    x0 = _as_state(x0, problem, seed)
    u, eta = step_controls(problem, schedule)
    S = jnp.asarray(problem.similarity, dtype=jnp.float32)
    x_f, errs = _rollout(x0, S, jnp.asarray(u, jnp.float32), jnp.asarray(eta, jnp.float32),
                         problem.head_lr / problem.eta, problem.dt, noise=float(problem.noise), method=method)
    alpha = problem.dt * np.arange(errs.shape[0])
    errs_np = np.asarray(errs, dtype=np.float64)
    if not np.all(np.isfinite(errs_np)):
        raise ValueError("the ODE diverged (non-finite errors): lower eta, eta_max or dt")
    return Trajectory(alpha=alpha, errors=errs_np, final_state=State(*(np.asarray(a) for a in x_f)),
                      cost=float(_cost(problem, errs)), alpha_1=problem.n_first_steps * problem.dt)


def integrate_gammas(problem: Problem, schedule: Schedule, gammas: Any, *, seed: int = 0,
                     method: str = "euler", device: Any = None) -> np.ndarray:
    """Errors ``(n_gamma, n_steps + 1, T)`` of the same protocol for many similarities, in one vmapped call on
    ``device`` (:func:`on_device`)."""
    g = np.asarray(gammas, dtype=np.float64).ravel()
    if g.size == 0 or not np.all(np.isfinite(g)) or np.any(g < 0) or np.any(g > 1):
        raise ValueError(f"gammas must be a non-empty list of numbers in [0, 1], got {gammas!r}")
    with on_device(device):
        return _integrate_gammas(problem, schedule, g, seed, method)


def _integrate_gammas(problem: Problem, schedule: Schedule, g: np.ndarray, seed: int, method: str) -> np.ndarray:
    x0 = _as_state(None, problem, seed)
    u, eta = step_controls(problem, schedule)
    S = jnp.asarray(np.stack([similarity_matrix(x, problem.n_tasks) for x in g]), dtype=jnp.float32)
    fn = jax.vmap(lambda s: _rollout(x0, s, jnp.asarray(u, jnp.float32), jnp.asarray(eta, jnp.float32),
                                     problem.head_lr / problem.eta, problem.dt, noise=float(problem.noise),
                                     method=method)[1])
    return np.asarray(fn(S), dtype=np.float64)


def solve_ivp_reference(problem: Problem, schedule: Schedule, *, x0: State | None = None, seed: int = 0,
                        rtol: float = 1e-10, atol: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """The same trajectory by ``scipy.integrate.solve_ivp`` (DOP853, float64, numpy drift): ``(alpha, errors)``
    at the ODE grid points. The accuracy reference of the JAX integrator."""
    from scipy.integrate import solve_ivp  # noqa: PLC0415

    from .integrals import erf_i2 as i2  # noqa: PLC0415

    x0 = initial_state(problem, seed=seed) if x0 is None else x0
    K, T = problem.n_hidden, problem.n_tasks
    S = problem.similarity
    u_steps, eta_steps = step_controls(problem, schedule)
    sizes = [K * K, K * T, T * K]

    def unpack(y: np.ndarray) -> State:
        q, m, v = np.split(y, np.cumsum(sizes)[:-1])
        return State(q.reshape(K, K), m.reshape(K, T), v.reshape(T, K))

    def rhs_numpy(y: np.ndarray, u: np.ndarray, eta: float) -> np.ndarray:
        x = unpack(y)
        d = _numpy_drift(x, u, eta, eta * problem.head_lr / problem.eta, S, problem.noise)
        return np.concatenate([d.Q.ravel(), d.M.ravel(), d.V.ravel()])

    def err_np(y: np.ndarray) -> np.ndarray:
        x = unpack(y)
        C = np.block([[x.Q, x.M], [x.M.T, S]])
        om = np.concatenate([x.V, -np.eye(T)], axis=1)
        return 0.5 * np.einsum("td,de,te->t", om, i2(C, xp=np), om)

    y = np.concatenate([np.asarray(a, dtype=np.float64).ravel() for a in x0])
    out = [err_np(y)]
    dt = problem.dt
    # the controls are constant on runs of steps: integrate each run in one solve_ivp call
    change = np.flatnonzero(np.any(np.diff(u_steps, axis=0) != 0, axis=1) | (np.diff(eta_steps) != 0)) + 1
    bounds = np.concatenate([[0], change, [len(eta_steps)]])
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        u, eta = u_steps[a], float(eta_steps[a])
        t_eval = dt * np.arange(a + 1, b + 1)
        sol = solve_ivp(lambda _t, yy, u=u, eta=eta: rhs_numpy(yy, u, eta), (dt * a, dt * b), y,
                        method="DOP853", t_eval=t_eval, rtol=rtol, atol=atol)
        out.extend(err_np(sol.y[:, j]) for j in range(sol.y.shape[1]))
        y = sol.y[:, -1]
    return dt * np.arange(len(out)), np.asarray(out)


def _numpy_drift(x: State, u: np.ndarray, eta: float, eta_v: float, S: np.ndarray, noise: float) -> State:
    """The drift of :func:`drift` in float64 numpy (used by the reference integrator and the simulator)."""
    K, T = x.Q.shape[0], S.shape[0]
    C = np.block([[x.Q, x.M], [x.M.T, S]])
    I2, I3, I4 = erf_i2(C, xp=np), erf_i3(C, K, xp=np), erf_i4(C, K, xp=np)
    om = np.concatenate([x.V, -np.eye(T)], axis=1)
    A = np.einsum("kbd,td->tkb", I3, om)
    v = x.V
    dM = -v[:, :, None] * A[:, :, K:]
    AQ = v[:, :, None] * A[:, :, :K]
    dQ_lin = -(AQ + np.swapaxes(AQ, 1, 2))
    quad = np.einsum("klde,td,te->tkl", I4, om, om)
    if noise:
        quad = quad + noise ** 2 * erf_j2(C, K, xp=np)[None]
    dQ_quad = v[:, :, None] * v[:, None, :] * quad
    dV = -np.einsum("kd,td->tk", I2[:K], om)
    return State(Q=eta * np.einsum("t,tkl->kl", u, dQ_lin) + eta ** 2 * np.einsum("t,tkl->kl", u, dQ_quad),
                 M=eta * np.einsum("t,tkn->kn", u, dM), V=eta_v * u[:, None] * dV)
