"""Task-selection schedules: a piecewise-constant task mix ``u(alpha)`` (and learning-rate factor) on the
control window, the heuristic protocols of the continual-learning literature, and JSON files.

A schedule has ``n`` intervals of equal length on ``[alpha_1, alpha_f]``; on interval ``i`` every SGD step
draws task ``c`` with probability ``u[i, c]`` (rows in the simplex) and uses learning rate
``eta * eta_factor[i]`` (heads ``eta_v * eta_factor[i]``). Before ``alpha_1`` task 1 is trained alone.

Heuristics (names as in Avalanche / the CL literature):

- ``sequential``: only the new task (fine-tuning, no replay);
- ``constant_mix(r)``: a fixed replay fraction ``r`` of old tasks (uniform experience replay);
- ``replay_at_end(f)``: the new task, then a block of replay of the old tasks on the last fraction ``f``.

References: Mori, Sarao Mannelli & Mignacco, ICLR 2025 (arXiv 2409.18061), section 3 (task-selection
control) and section 4 (comparison with heuristic protocols).
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.io import DataFileError, atomic_write, read_json

from .model import Problem

__all__ = ["Schedule", "sequential", "constant_mix", "replay_at_end", "load_schedule", "save_schedule"]


def _check_mix(u: Any, n_tasks: int | None = None) -> np.ndarray:
    try:
        arr = np.asarray(u, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"schedule u must be a numeric (n_intervals, n_tasks) array: {exc}") from exc
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 2:
        raise ValueError(f"schedule u must have shape (n_intervals >= 1, n_tasks >= 2), got {arr.shape}")
    if n_tasks is not None and arr.shape[1] != n_tasks:
        raise ValueError(f"schedule u has {arr.shape[1]} tasks, the problem has {n_tasks}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("schedule u must be finite (no NaN or inf)")
    if np.any(arr < -1e-9) or np.any(np.abs(arr.sum(axis=1) - 1.0) > 1e-6):
        bad = int(np.flatnonzero((arr < -1e-9).any(axis=1) | (np.abs(arr.sum(axis=1) - 1) > 1e-6))[0])
        raise ValueError(f"schedule u must lie in the simplex (rows >= 0 summing to 1); row {bad} is "
                         f"{arr[bad].tolist()}")
    return np.clip(arr, 0.0, 1.0) / np.clip(arr, 0.0, 1.0).sum(axis=1, keepdims=True)


@dataclasses.dataclass(frozen=True)
class Schedule:
    """A task-selection protocol on the control window.

    Attributes
    ----------
    u:
        ``(n_intervals, n_tasks)`` task probabilities, rows in the simplex.
    eta_factor:
        ``(n_intervals,)`` learning-rate multipliers (>= 0); ones when the rate is not controlled.
    name:
        A label for tables and files.
    """

    u: np.ndarray
    eta_factor: np.ndarray | None = None
    name: str = "schedule"

    def __post_init__(self) -> None:
        u = _check_mix(self.u)
        object.__setattr__(self, "u", u)
        if self.eta_factor is None:
            eta = np.ones(u.shape[0])
        else:
            try:
                eta = np.asarray(self.eta_factor, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"schedule eta_factor must be numeric: {exc}") from exc
            if eta.shape != (u.shape[0],):
                raise ValueError(f"schedule eta_factor must have shape ({u.shape[0]},), got {eta.shape}")
            if not np.all(np.isfinite(eta)) or np.any(eta < 0):
                raise ValueError("schedule eta_factor must be finite and non-negative (learning rates >= 0)")
        object.__setattr__(self, "eta_factor", eta)

    @property
    def n_intervals(self) -> int:
        return int(self.u.shape[0])

    @property
    def n_tasks(self) -> int:
        return int(self.u.shape[1])

    def replay_fraction(self) -> float:
        """Mean share of steps spent on old tasks (all but the last) in the control window."""
        return float(self.u[:, :-1].sum(axis=1).mean())

    def check(self, problem: Problem) -> Schedule:
        if self.n_tasks != problem.n_tasks:
            raise ValueError(f"schedule has {self.n_tasks} tasks, the problem has {problem.n_tasks}")
        if self.n_intervals > problem.n_control_steps:
            raise ValueError(f"schedule has {self.n_intervals} intervals, more than the "
                             f"{problem.n_control_steps} ODE steps of the control window")
        if float(np.max(self.eta_factor)) * problem.eta > problem.eta_max * (1 + 1e-9):
            raise ValueError(f"schedule learning rate eta*eta_factor reaches "
                             f"{float(np.max(self.eta_factor)) * problem.eta:.4g} > eta_max={problem.eta_max}")
        return self

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "u": self.u.tolist(), "eta_factor": self.eta_factor.tolist()}

    @classmethod
    def from_dict(cls, d: Any, *, source: str = "schedule") -> Schedule:
        if not isinstance(d, dict) or "u" not in d:
            raise ValueError(f"{source}: expected a JSON object with a 'u' field (n_intervals x n_tasks)")
        try:
            return cls(u=d["u"], eta_factor=d.get("eta_factor"), name=str(d.get("name", "schedule")))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{source}: {exc}") from exc


def _one_hot(n: int, T: int, task: int) -> np.ndarray:
    u = np.zeros((n, T))
    u[:, task] = 1.0
    return u


def sequential(problem: Problem, n_intervals: int | None = None) -> Schedule:
    """Train only the last (new) task on the control window: no replay."""
    n = n_intervals or problem.n_intervals
    return Schedule(_one_hot(n, problem.n_tasks, problem.n_tasks - 1), name="sequential")


def constant_mix(problem: Problem, replay: float, n_intervals: int | None = None) -> Schedule:
    """A constant replay fraction ``replay`` spread uniformly over the old tasks; the rest on the new task."""
    if not 0.0 <= float(replay) <= 1.0:
        raise ValueError(f"replay fraction must be in [0, 1], got {replay}")
    n, T = n_intervals or problem.n_intervals, problem.n_tasks
    u = np.zeros((n, T))
    u[:, :-1] = float(replay) / (T - 1)
    u[:, -1] = 1.0 - float(replay)
    return Schedule(u, name=f"constant mix {float(replay):.2f}")


def replay_at_end(problem: Problem, fraction: float, n_intervals: int | None = None) -> Schedule:
    """The new task, then replay of the old tasks (uniformly) on the last ``fraction`` of the window."""
    if not 0.0 <= float(fraction) <= 1.0:
        raise ValueError(f"replay block fraction must be in [0, 1], got {fraction}")
    n, T = n_intervals or problem.n_intervals, problem.n_tasks
    n_block = int(round(float(fraction) * n))
    u = _one_hot(n, T, T - 1)
    if n_block:
        u[n - n_block:, :] = 0.0
        u[n - n_block:, :-1] = 1.0 / (T - 1)
    return Schedule(u, name=f"replay at end {float(fraction):.2f}")


def save_schedule(path: str | os.PathLike[str], schedule: Schedule, problem: Problem | None = None,
                  **extra: Any) -> Path:
    """Write ``{"schedule": ..., "problem": ...}`` as JSON, atomically."""
    doc: dict[str, Any] = {"schedule": schedule.to_dict()}
    if problem is not None:
        doc["problem"] = problem.to_dict()
    doc.update(extra)
    p = Path(path)
    with atomic_write(p) as f:
        f.write(json.dumps(doc, indent=1, allow_nan=False) + "\n")
    return p


def load_schedule(path: str | os.PathLike[str]) -> tuple[Schedule, Problem | None]:
    """Read a file written by :func:`save_schedule` (or ``{"u": [[...], ...]}``); errors name the file."""
    doc = read_json(path, what="schedule file")
    if isinstance(doc, dict) and "schedule" in doc:
        sched = Schedule.from_dict(doc["schedule"], source=str(path))
        prob = None
        if doc.get("problem") is not None:
            try:
                prob = Problem.from_dict(doc["problem"])
            except (TypeError, ValueError) as exc:
                raise DataFileError(path, f"bad 'problem': {exc}") from exc
        return sched, prob
    if isinstance(doc, dict) and "u" in doc:
        return Schedule.from_dict(doc, source=str(path)), None
    raise DataFileError(path, "expected a JSON object with 'schedule' (or 'u')")
