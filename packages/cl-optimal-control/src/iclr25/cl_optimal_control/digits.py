"""Real-data transfer: two binary tasks on scikit-learn's digits, the theory-derived protocol in online SGD.

Task A labels digits {0, 1, 2, 3, 4} as +1 and the rest -1. Task B keeps ``shared`` of A's positive classes
and swaps the others for negative classes (``shared = 5``: the same task; ``shared = 0``: the opposite one), the
knob of task similarity. The similarity the theory needs is estimated from teachers fitted per task: ridge
probes ``w_A, w_B`` on the standardised training inputs, ``gamma = cos(w_A, w_B)`` (clipped to [0, 1]).

The student is the multi-head erf network of the theory, trained by online SGD (sampling training images with
replacement, ``alpha = steps / 64``) under a protocol: sequential, a constant mix, or the optimal schedule
that :func:`iclr25.cl_optimal_control.solve` finds on the ODEs at the estimated gamma. The score is the test
classification error (sign of the output) averaged over the two tasks, over seeds.

References: Mori, Sarao Mannelli & Mignacco, ICLR 2025 (arXiv 2409.18061), section 5 (real data); the data are
``sklearn.datasets.load_digits`` (UCI optical digits, 1797 images of 8 x 8), shipped with scikit-learn.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from scipy.special import erf

from .model import Problem
from .schedule import Schedule

__all__ = ["DigitsTasks", "DigitsResult", "digits_tasks", "tasks_from_arrays", "train_digits", "run_digits",
           "compare_protocols"]


@dataclasses.dataclass(frozen=True)
class DigitsTasks:
    """Standardised digits split into train/test, with ±1 labels for the two tasks and the estimated gamma."""

    X_train: np.ndarray
    X_test: np.ndarray
    y_train: np.ndarray     # (2, n_train)
    y_test: np.ndarray      # (2, n_test)
    gamma_raw: float
    gamma: float
    shared: int | None      # digits: positive classes in common; None for a user's data


def digits_tasks(shared: int = 3, *, test_size: float = 0.3, ridge: float = 10.0, seed: int = 0) -> DigitsTasks:
    """Build the two digits tasks with ``shared`` (0-5) positive classes in common and estimate gamma."""
    if isinstance(shared, bool) or not isinstance(shared, (int, np.integer)) or not 0 <= shared <= 5:
        raise ValueError(f"shared must be an integer in [0, 5], got {shared!r}")
    if not 0.05 <= float(test_size) <= 0.9:
        raise ValueError(f"test_size must be in [0.05, 0.9], got {test_size}")
    from sklearn.datasets import load_digits  # noqa: PLC0415

    X, digit = load_digits(return_X_y=True)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(digit))
    n_test = int(round(test_size * len(digit)))
    te, tr = perm[:n_test], perm[n_test:]
    pos_a = np.arange(5)
    pos_b = np.concatenate([pos_a[:shared], np.arange(5, 10)[: 5 - shared]])
    y = np.stack([np.where(np.isin(digit, pos_a), 1.0, -1.0), np.where(np.isin(digit, pos_b), 1.0, -1.0)])
    return tasks_from_arrays(X, y, tr, te, ridge=ridge, shared=int(shared))


def tasks_from_arrays(X: np.ndarray, y: np.ndarray, tr: np.ndarray, te: np.ndarray, *, ridge: float = 10.0,
                      shared: int | None = None) -> DigitsTasks:
    """Two tasks from features ``X`` (n, d) and ±1 labels ``y`` (2, n): standardised with the training rows'
    statistics, gamma measured as the cosine of the two tasks' ridge probes (the digits construction)."""
    mu, sd = X[tr].mean(0), X[tr].std(0)
    sd[sd == 0] = 1.0
    Xs = (X - mu) / sd
    A = Xs[tr]
    G = A.T @ A + ridge * np.eye(A.shape[1])
    w = np.linalg.solve(G, A.T @ y[:, tr].T).T        # (2, 64) ridge probes
    g_raw = float(w[0] @ w[1] / (np.linalg.norm(w[0]) * np.linalg.norm(w[1])))
    return DigitsTasks(X_train=Xs[tr], X_test=Xs[te], y_train=y[:, tr], y_test=y[:, te], gamma_raw=g_raw,
                       gamma=float(np.clip(g_raw, 0.0, 1.0)), shared=shared)


def _g(z: np.ndarray) -> np.ndarray:
    return erf(z / math.sqrt(2.0))


def train_digits(tasks: DigitsTasks, problem: Problem, schedule: Schedule, *, n_seeds: int = 10, seed: int = 0,
                 time_scale: float = 1.0) -> np.ndarray:
    """Online SGD of the multi-head erf network on the digits tasks; returns the final test error of each
    task for each seed, ``(n_seeds, 2)``. ``time_scale`` stretches the protocol: ``alpha * N * time_scale``
    steps."""
    schedule.check(problem)
    rng = np.random.default_rng(seed)
    N = tasks.X_train.shape[1]
    K = problem.n_hidden
    S = n_seeds
    n1 = int(round(problem.alpha_1 * N * time_scale))
    n_total = int(round(problem.alpha_f * N * time_scale))
    W = math.sqrt(problem.init_q) * rng.standard_normal((S, K, N))
    from .model import initial_state  # noqa: PLC0415

    V = np.broadcast_to(np.asarray(initial_state(problem).V, dtype=float), (S, 2, K)).copy()
    sq = math.sqrt(N)
    ratio = problem.head_lr / problem.eta
    ar = np.arange(S)
    cum = np.cumsum(schedule.u, axis=1)
    steps = np.arange(n_total)
    interval = np.clip(((steps - n1) * schedule.n_intervals) // max(1, n_total - n1), 0, schedule.n_intervals - 1)
    r = rng.random((n_total, S))
    pick = rng.integers(0, tasks.X_train.shape[0], size=(n_total, S))
    for mu in range(n_total):
        if mu < n1:
            c = np.zeros(S, dtype=np.intp)
            eta = problem.eta
        else:
            c = np.minimum((r[mu][:, None] > cum[interval[mu]][None, :]).sum(axis=1), 1)
            eta = problem.eta * schedule.eta_factor[interval[mu]]
        x = tasks.X_train[pick[mu]]                                # (S, N)
        y = tasks.y_train[c, pick[mu]]
        lam = np.einsum("skn,sn->sk", W, x) / sq
        v = V[ar, c]
        glam = _g(lam)
        delta = (v * glam).sum(1) - y
        gp = math.sqrt(2 / math.pi) * np.exp(-lam ** 2 / 2)
        W -= (eta / sq) * (delta[:, None] * v * gp)[:, :, None] * x[:, None, :]
        V[ar, c] = v - (eta * ratio / N) * delta[:, None] * glam
    lam = np.einsum("skn,mn->smk", W, tasks.X_test) / sq
    out = np.einsum("stk,smk->stm", V, _g(lam))                     # (S, 2, n_test)
    return (np.sign(out) != tasks.y_test[None]).mean(axis=2)


@dataclasses.dataclass(frozen=True)
class DigitsResult:
    """Mean test error (over tasks and seeds) of each protocol on digits, with the theory schedule used."""

    gamma_raw: float
    gamma: float
    errors: dict[str, float]
    errors_std: dict[str, float]
    theory_schedule: Schedule
    best_mix: float


def run_digits(shared: int = 3, *, problem: Problem | None = None, n_seeds: int = 10, seed: int = 0,
               grid: int = 11, time_scale: float = 1.0, device: Any = None) -> DigitsResult:
    """The digits transfer: estimate gamma, solve the ODE control problem at that gamma (on ``device``, as in
    :func:`~iclr25.cl_optimal_control.solve`), and compare the theory schedule with sequential training and
    constant mixes (a grid) in online SGD on the real data (numpy, on the CPU)."""
    return compare_protocols(digits_tasks(shared, seed=seed), problem=problem, n_seeds=n_seeds, seed=seed,
                             grid=grid, time_scale=time_scale, device=device)


def compare_protocols(tasks: DigitsTasks, *, problem: Problem | None = None, n_seeds: int = 10, seed: int = 0,
                      grid: int = 11, time_scale: float = 1.0, device: Any = None) -> DigitsResult:
    """Solve the control problem at the tasks' measured gamma, then compare the theory schedule with sequential
    training and constant mixes in online SGD on the tasks' data (as :func:`run_digits` does on digits)."""
    from .control import solve  # noqa: PLC0415
    from .schedule import constant_mix, sequential  # noqa: PLC0415

    problem = (problem or Problem()).replace(gamma=tasks.gamma)
    res = solve(problem, "pmp", seed=seed, show_progress=False, device=device)
    errs: dict[str, Any] = {}
    errs["sequential"] = train_digits(tasks, problem, sequential(problem), n_seeds=n_seeds, seed=seed,
                                      time_scale=time_scale).mean(axis=1)
    errs["theory (optimal on the ODE)"] = train_digits(tasks, problem, res.schedule, n_seeds=n_seeds, seed=seed,
                                                       time_scale=time_scale).mean(axis=1)
    best = (np.inf, 0.0, None)
    for f in np.linspace(0, 1, grid):
        e = train_digits(tasks, problem, constant_mix(problem, float(f)), n_seeds=n_seeds, seed=seed,
                         time_scale=time_scale).mean(axis=1)
        if e.mean() < best[0]:
            best = (float(e.mean()), float(f), e)
    errs["best constant mix"] = best[2]
    return DigitsResult(gamma_raw=tasks.gamma_raw, gamma=tasks.gamma,
                        errors={k: float(v.mean()) for k, v in errs.items()},
                        errors_std={k: float(v.std()) for k, v in errs.items()},
                        theory_schedule=res.schedule, best_mix=best[1])
