"""The continual-learning teacher-student problem: tasks, similarity, student, learning rates, time horizon.

Tasks ``t = 1..T`` have single-unit erf teachers ``y_t = g(w*_t . x / sqrt(N)) + sigma * xi`` with overlaps
``S_tt' = w*_t . w*_t' / N``: ``S_tt = 1`` and ``S_tt' = gamma`` (the task similarity). The student is a
two-layer erf network whose first layer ``W`` (``K x N``) is shared and whose readout ``v^(t)`` (``K``) is
task-specific (multi-head): ``yhat_t = sum_k v^(t)_k g(w_k . x / sqrt(N))``. Online SGD on task ``c``:

.. math::

    w_k \\leftarrow w_k - \\frac{\\eta}{\\sqrt N} \\delta v^{(c)}_k g'(\\lambda_k) x, \\qquad
    v^{(c)} \\leftarrow v^{(c)} - \\frac{\\eta_v}{N} \\delta g(\\lambda), \\qquad \\delta = \\hat y_c - y_c.

Training time is ``alpha = steps / N``. The protocol trains task 1 alone on ``[0, alpha_1]`` and then, on the
control window ``[alpha_1, alpha_f]``, draws the task of every step from a mix ``u(alpha)`` in the simplex
(and may scale the learning rate by ``eta(alpha)``); the cost is the weighted final generalisation error
``J = sum_t w_t eps_t(alpha_f)`` plus an optional running cost.

References: Mori, Sarao Mannelli & Mignacco, "Optimal Protocols for Continual Learning via Statistical
Physics and Control Theory", ICLR 2025 (arXiv 2409.18061), section 2 (setting) and section 3 (control).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple

import numpy as np

__all__ = ["Problem", "State", "initial_state", "similarity_matrix"]


class State(NamedTuple):
    """Order parameters: ``Q = W W^T / N`` (K x K), ``M = W W*^T / N`` (K x T), heads ``V`` (T x K)."""

    Q: Any
    M: Any
    V: Any


def _finite(name: str, value: Any, *, low: float | None = None, high: float | None = None,
            strict_low: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    if low is not None and (v < low or (strict_low and v == low)):
        raise ValueError(f"{name} must be {'>' if strict_low else '>='} {low}, got {v}")
    if high is not None and v > high:
        raise ValueError(f"{name} must be <= {high}, got {v}")
    return v


def _positive_int(name: str, value: Any, low: int = 1, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be an integer in [{low}, {high if high is not None else 'inf'}], "
                         f"got {value}")
    return int(value)


def similarity_matrix(gamma: float, n_tasks: int = 2) -> np.ndarray:
    """``S = (1 - gamma) I + gamma 1 1^T``: unit-norm teachers with pairwise overlap ``gamma`` in [0, 1]."""
    g = _finite("gamma", gamma, low=0.0, high=1.0)
    T = _positive_int("n_tasks", n_tasks, 1, 8)
    return (1.0 - g) * np.eye(T) + g * np.ones((T, T))


@dataclasses.dataclass(frozen=True)
class Problem:
    """A continual-learning control problem on the exact online-SGD dynamics.

    Parameters
    ----------
    gamma:
        Teacher similarity ``S_12 = w*_1 . w*_2 / N`` in [0, 1] (for more tasks every pair has this overlap).
    n_hidden:
        Student width ``K`` (1 to 6; the I4 tensor grows as ``K^2 (K+T)^2``).
    n_tasks:
        Number of tasks ``T`` (2 to 6).
    eta, eta_v:
        Learning rates of the first layer and of the heads (``eta_v`` defaults to ``eta``).
    noise:
        Label-noise standard deviation ``sigma``.
    alpha_1, alpha_f:
        Task 1 alone on ``[0, alpha_1]``; controlled mix on ``[alpha_1, alpha_f]``.
    dt:
        Euler step of the ODEs (the control problem is solved on this discretisation).
    n_intervals:
        Piecewise-constant control intervals on the control window.
    eta_max:
        Upper bound of a controlled learning rate.
    cost_weights:
        ``w_t`` of ``J = sum_t w_t eps_t(alpha_f)``; default uniform ``1/T``.
    running_cost:
        Weight ``r`` of ``r / (alpha_f - alpha_1) * integral of sum_t w_t eps_t`` over the control window.
    init_q, init_head:
        Initial student: ``Q = init_q I``, ``M = 0``, heads ``~ N(0, init_head^2)`` (see :func:`initial_state`).
    """

    gamma: float = 0.5
    n_hidden: int = 2
    n_tasks: int = 2
    eta: float = 3.0
    eta_v: float | None = None
    noise: float = 0.0
    alpha_1: float = 4.0
    alpha_f: float = 20.0
    dt: float = 0.1
    n_intervals: int = 40
    eta_max: float = 3.0
    cost_weights: tuple[float, ...] | None = None
    running_cost: float = 0.0
    init_q: float = 0.05
    init_head: float = 1.0

    def __post_init__(self) -> None:
        _finite("gamma", self.gamma, low=0.0, high=1.0)
        _positive_int("n_hidden", self.n_hidden, 1, 6)
        _positive_int("n_tasks", self.n_tasks, 2, 6)
        _finite("eta", self.eta, low=0.0, strict_low=True)
        if self.eta_v is not None:
            _finite("eta_v", self.eta_v, low=0.0)
        _finite("noise", self.noise, low=0.0)
        a1 = _finite("alpha_1", self.alpha_1, low=0.0)
        af = _finite("alpha_f", self.alpha_f, low=0.0)
        if af <= a1:
            raise ValueError(f"alpha_f must be larger than alpha_1, got alpha_f={af} <= alpha_1={a1}")
        dt = _finite("dt", self.dt, low=0.0, strict_low=True)
        if dt > (af - a1) or dt > 1.0:
            raise ValueError(f"dt must be at most min(1, alpha_f - alpha_1) = {min(1.0, af - a1)}, got {dt}")
        _positive_int("n_intervals", self.n_intervals, 1, self.n_control_steps)
        _finite("eta_max", self.eta_max, low=0.0, strict_low=True)
        if self.cost_weights is not None:
            w = np.asarray(self.cost_weights, dtype=float)
            if w.shape != (self.n_tasks,) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
                raise ValueError(f"cost_weights must be {self.n_tasks} non-negative finite numbers with a "
                                 f"positive sum, got {self.cost_weights!r}")
            object.__setattr__(self, "cost_weights", tuple(float(x) for x in w))
        _finite("running_cost", self.running_cost, low=0.0)
        _finite("init_q", self.init_q, low=0.0, strict_low=True)
        _finite("init_head", self.init_head, low=0.0)

    # ----------------------------------------------------------------------------------------- derived
    @property
    def head_lr(self) -> float:
        return float(self.eta if self.eta_v is None else self.eta_v)

    @property
    def similarity(self) -> np.ndarray:
        return similarity_matrix(self.gamma, self.n_tasks)

    @property
    def weights(self) -> np.ndarray:
        if self.cost_weights is None:
            return np.full(self.n_tasks, 1.0 / self.n_tasks)
        return np.asarray(self.cost_weights, dtype=float)

    @property
    def n_first_steps(self) -> int:
        return int(round(self.alpha_1 / self.dt))

    @property
    def n_control_steps(self) -> int:
        return max(1, int(round((self.alpha_f - self.alpha_1) / self.dt)))

    def replace(self, **changes: Any) -> Problem:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Any) -> Problem:
        from iclr25.utils.io import dataclass_from_mapping  # noqa: PLC0415

        problem = dataclass_from_mapping(cls, d, what="problem")
        if problem.cost_weights is not None:
            problem = dataclasses.replace(problem, cost_weights=tuple(problem.cost_weights))
        return problem


def initial_state(problem: Problem, *, seed: int = 0) -> State:
    """The initial order parameters of a random student in the limit ``N -> infinity``.

    ``w_k ~ N(0, init_q I_N)`` gives ``Q = init_q I`` and ``M = 0``; the heads are drawn
    ``v^(t)_k ~ N(0, init_head^2)`` from ``seed`` (they break the symmetry between student units).
    """
    K, T = problem.n_hidden, problem.n_tasks
    rng = np.random.default_rng(seed)
    return State(Q=problem.init_q * np.eye(K), M=np.zeros((K, T)),
                 V=problem.init_head * rng.standard_normal((T, K)))
