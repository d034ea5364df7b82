"""Finite-N online SGD in the multi-head erf teacher-student model, running any schedule as a sampler.

Every step draws a fresh input ``x ~ N(0, I_N)``, a task ``c`` from the schedule's mix at the current
``alpha = step / N`` (task 1 alone before ``alpha_1``), and applies

.. math::

    w_k \\leftarrow w_k - \\frac{\\eta}{\\sqrt N} \\delta v^{(c)}_k g'(\\lambda_k) x, \\qquad
    v^{(c)} \\leftarrow v^{(c)} - \\frac{\\eta_v}{N} \\delta g(\\lambda),

with ``delta = yhat_c - y_c`` and ``y_c = g(nu_c) + sigma xi``, for all seeds at once (arrays carry a leading
seed axis; only the time loop is in Python, inputs are drawn in blocks). The teachers are built with *exact*
overlaps ``S`` and the initial student with exactly ``Q = init_q I``, ``M = 0`` and the problem's initial heads,
so the simulation starts from the same order parameters as the ODE. Generalisation errors are computed
exactly from the order parameters of the current weights (no test set).

Optional EWC (elastic weight consolidation, Kirkpatrick et al. 2017) on the control window: a diagonal Fisher
``F`` of task 1 is estimated at ``alpha_1`` and every step adds ``-(eta / N) lambda F (W - W_1)`` to ``W``.

References: Mori, Sarao Mannelli & Mignacco, ICLR 2025 (arXiv 2409.18061), section 2 (online SGD, the
validation of the ODEs by simulations); Kirkpatrick et al., PNAS 114, 3521 (2017) for EWC.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from scipy.special import erf

from iclr25.utils.progress import progress

from .model import Problem, State, initial_state
from .schedule import Schedule

__all__ = ["SimulationResult", "simulate", "teachers_and_student"]

_SQ2PI = math.sqrt(2.0 / math.pi)


def _g(z: np.ndarray) -> np.ndarray:
    return erf(z * (1.0 / math.sqrt(2.0)))


def _gp(z: np.ndarray) -> np.ndarray:
    return _SQ2PI * np.exp(-0.5 * z * z)


@dataclasses.dataclass(frozen=True)
class SimulationResult:
    """Errors of finite-N online SGD.

    Attributes
    ----------
    alpha:
        ``(n_records,)`` training times at which the errors were recorded.
    errors:
        ``(n_seeds, n_records, T)`` generalisation error of every task for every seed.
    n:
        Input dimension ``N``.
    """

    alpha: np.ndarray
    errors: np.ndarray
    n: int

    @property
    def mean(self) -> np.ndarray:
        """``(n_records, T)`` errors averaged over seeds."""
        return self.errors.mean(axis=0)

    @property
    def final_cost(self) -> np.ndarray:
        """``(n_seeds,)`` mean final error over tasks (uniform weights)."""
        return self.errors[:, -1, :].mean(axis=1)


def _check_int(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be in [{low}, {high}], got {value}")
    return int(value)


def teachers_and_student(problem: Problem, n: int, n_seeds: int, rng: np.random.Generator, *,
                         x0: State | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Teachers ``(S, T, N)`` with overlaps exactly ``problem.similarity`` and students ``W (S, K, N)``,
    heads ``V (S, T, K)`` with exactly ``Q = init_q I``, ``M = 0`` and the heads of ``x0``."""
    K, T = problem.n_hidden, problem.n_tasks
    if n < K + T + 1:
        raise ValueError(f"n must be at least n_hidden + n_tasks + 1 = {K + T + 1}, got {n}")
    x0 = initial_state(problem) if x0 is None else x0
    Z = rng.standard_normal((n_seeds, n, T + K))
    B = np.linalg.qr(Z)[0].transpose(0, 2, 1) * math.sqrt(n)      # (S, T+K, N) orthogonal, norm^2 = N
    Lc = np.linalg.cholesky(problem.similarity + 1e-12 * np.eye(T))
    teachers = np.einsum("ts,zsn->ztn", Lc, B[:, :T])
    W = math.sqrt(problem.init_q) * B[:, T:]
    V = np.broadcast_to(np.asarray(x0.V, dtype=np.float64), (n_seeds, T, K)).copy()
    return teachers, W, V


def _errors(W: np.ndarray, V: np.ndarray, teachers: np.ndarray, n: int) -> np.ndarray:
    """Exact generalisation errors ``(S, T)`` of the current students."""
    T = teachers.shape[1]
    A = np.concatenate([W, teachers], axis=1)
    C = A @ A.transpose(0, 2, 1) / n                                  # (S, D, D)
    d1 = 1.0 + np.diagonal(C, axis1=1, axis2=2)
    I2 = (2 / np.pi) * np.arcsin(np.clip(C / np.sqrt(d1[:, :, None] * d1[:, None, :]), -1, 1))
    om = np.concatenate([V, np.broadcast_to(-np.eye(T), (V.shape[0], T, T))], axis=2)
    return 0.5 * np.einsum("std,sde,ste->st", om, I2, om)


def simulate(problem: Problem, schedule: Schedule, *, n: int = 2000, n_seeds: int = 10, seed: int = 0,
             record_every: float = 0.1, ewc: float = 0.0, x0: State | None = None,
             block: int = 128, show_progress: bool = True) -> SimulationResult:
    """Run online SGD at input dimension ``n`` under ``schedule`` for ``n_seeds`` independent seeds (float64
    numpy on the CPU: it takes no ``device``; the ODEs, the solvers and the heuristics do).

    Parameters
    ----------
    problem, schedule:
        The model, learning rates and horizon; the task mix on the control window.
    n, n_seeds:
        Input dimension ``N`` (>= 8) and number of independent runs (vectorised).
    record_every:
        Record the errors every this much ``alpha`` (a multiple of ``1/N`` is used).
    ewc:
        EWC strength ``lambda`` (0 turns it off) applied on the control window.
    x0:
        Initial order parameters whose heads the students take (default :func:`initial_state`).
    """
    n = _check_int("n", n, 8, 10 ** 6)
    n_seeds = _check_int("n_seeds", n_seeds, 1, 10 ** 4)
    if not (isinstance(record_every, (int, float)) and math.isfinite(record_every) and record_every > 0):
        raise ValueError(f"record_every must be a positive number, got {record_every!r}")
    if not (isinstance(ewc, (int, float)) and math.isfinite(ewc) and ewc >= 0):
        raise ValueError(f"ewc must be a non-negative number, got {ewc!r}")
    schedule.check(problem)
    rng = np.random.default_rng(seed)
    teachers, W, V = teachers_and_student(problem, n, n_seeds, rng, x0=x0)
    plan = _step_plan(problem, schedule, n, record_every)
    alphas, errs = [0.0], [_errors(W, V, teachers, n)]
    anchor = None
    bar = progress(total=plan.n_total, desc=f"SGD N={n}", disable=None if show_progress else True)
    Wf = W.astype(np.float32)
    Tf = teachers.astype(np.float32)
    for start in range(0, plan.n_total, block):
        stop = min(plan.n_total, start + block)
        anchor = _sgd_block(problem, plan, rng, start, stop, Wf, V, Tf, teachers, ewc, anchor, alphas, errs)
        bar.update(stop - start)
    bar.close()
    E = np.stack(errs, axis=1)
    if not np.all(np.isfinite(E)):
        raise ValueError("SGD diverged (non-finite errors): lower eta")
    return SimulationResult(alpha=np.asarray(alphas), errors=E, n=n)


@dataclasses.dataclass(frozen=True)
class _StepPlan:
    """Per-step quantities of one :func:`simulate` run, fixed before the first step."""

    n: int
    n1: int                 # steps before the control window (task 1 alone)
    n_total: int
    rec: int                # record the errors every ``rec`` steps
    interval: np.ndarray    # (n_total,) control interval of each step
    in_first: np.ndarray    # (n_total,) step lies before alpha_1
    eta_steps: np.ndarray   # (n_total,) learning rate of each step
    cum: np.ndarray         # (n_intervals, T) cumulative task mix of each interval


def _step_plan(problem: Problem, schedule: Schedule, n: int, record_every: float) -> _StepPlan:
    """Step of :func:`simulate`: per-step task probabilities (as cumulative mixes) and learning rates."""
    n1 = int(round(problem.alpha_1 * n))
    n_total = int(round(problem.alpha_f * n))
    rec = max(1, int(round(record_every * n)))
    steps = np.arange(n_total)
    interval = np.clip(((steps - n1) * schedule.n_intervals) // max(1, n_total - n1), 0, schedule.n_intervals - 1)
    in_first = steps < n1
    eta_steps = problem.eta * np.where(in_first, 1.0, schedule.eta_factor[interval])
    cum = np.cumsum(schedule.u, axis=1)
    return _StepPlan(n=n, n1=n1, n_total=n_total, rec=rec, interval=interval, in_first=in_first,
                     eta_steps=eta_steps, cum=cum)


def _sgd_block(problem: Problem, plan: _StepPlan, rng: np.random.Generator, start: int, stop: int,
               Wf: np.ndarray, V: np.ndarray, Tf: np.ndarray, teachers: np.ndarray, ewc: float,
               anchor: tuple[np.ndarray, np.ndarray] | None, alphas: list[float], errs: list[np.ndarray]
               ) -> tuple[np.ndarray, np.ndarray] | None:
    """Step of :func:`simulate`: SGD steps ``start .. stop - 1`` for all seeds, on inputs drawn as one block.

    Updates the students ``Wf`` and heads ``V`` in place and appends the records to ``alphas`` and ``errs``;
    returns the EWC anchor ``(W_1, F)`` (set at ``alpha_1`` when ``ewc > 0``, else passed through).
    """
    n, T = plan.n, problem.n_tasks
    n_seeds = V.shape[0]
    sq = math.sqrt(n)
    ratio = problem.head_lr / problem.eta
    seeds_idx = np.arange(n_seeds)
    X = rng.standard_normal((stop - start, n_seeds, n), dtype=np.float32)
    r = rng.random((stop - start, n_seeds))
    noise = problem.noise * rng.standard_normal((stop - start, n_seeds)) if problem.noise else None
    # all projections of the block's inputs on the (fixed) teachers at once
    nu_block = np.matmul(Tf[None], X[:, :, :, None])[..., 0] / sq          # (B, S, T)
    for j, mu in enumerate(range(start, stop)):
        if mu == plan.n1 and ewc > 0:
            anchor = (Wf.copy(), _fisher(Wf, V, rng, n).astype(np.float32))
        if plan.in_first[mu]:
            c = np.zeros(n_seeds, dtype=np.intp)
        else:
            c = np.minimum((r[j][:, None] > plan.cum[plan.interval[mu]][None, :]).sum(axis=1), T - 1)
        x = X[j]
        lam = np.matmul(Wf, x[:, :, None])[:, :, 0].astype(np.float64) / sq
        v = V[seeds_idx, c]
        glam = _g(lam)
        y = _g(nu_block[j][seeds_idx, c].astype(np.float64))
        if noise is not None:
            y = y + noise[j]
        delta = (v * glam).sum(axis=1) - y
        eta = plan.eta_steps[mu]
        coef = ((-eta / sq) * (delta[:, None] * v * _gp(lam))).astype(np.float32)
        Wf += np.matmul(coef[:, :, None], x[:, None, :])
        if anchor is not None:
            W_anchor, F = anchor
            Wf -= np.float32(eta * ewc / n) * F * (Wf - W_anchor)
        V[seeds_idx, c] = v - (eta * ratio / n) * delta[:, None] * glam
        if (mu + 1) % plan.rec == 0 or mu + 1 == plan.n_total:
            alphas.append((mu + 1) / n)
            errs.append(_errors(Wf.astype(np.float64), V, teachers, n))
    return anchor


def _fisher(W: np.ndarray, V: np.ndarray, rng: np.random.Generator, n: int, n_samples: int = 256) -> np.ndarray:
    """Diagonal Fisher of task 1's output w.r.t. ``W`` (scaled by ``N``): ``E[(v_k g'(lambda_k) x_i)^2]``."""
    S, K, N = W.shape
    F = np.zeros_like(W)
    for _ in range(n_samples // 32):
        X = rng.standard_normal((32, S, N))
        lam = np.einsum("skn,bsn->bsk", W, X) / math.sqrt(n)
        a = V[:, 0][None] * _gp(lam)                                 # (B, S, K)
        F += np.einsum("bsk,bsn->skn", a ** 2, X ** 2)
    return F / (32 * (n_samples // 32))
