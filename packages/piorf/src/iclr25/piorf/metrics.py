"""Rollout metrics at horizons within one shedding period, and the two trivial predictors beside them.

For a predictor (a trained :class:`~iclr25.piorf.Simulator`, :class:`HoldFirstFrame` or :class:`TimeMean`),
the horizon-:math:`h` error of a test set is the rollout velocity RMSE averaged over steps :math:`1..h`, over
``starts`` start frames spread over each trajectory and over the trajectories,

.. math::

    \\mathrm{RMSE}@h = \\operatorname{mean}_{\\text{traj}, t_0} \\frac1h \\sum_{t=1}^{h}
    \\sqrt{\\operatorname{mean}_i \\|\\hat v_{t_0+t, i} - v_{t_0+t, i}\\|^2},

and the one-step error is the mean over every ``stride``-th ground-truth frame of the error of one step from
it. A horizon longer than the shedding period lets a model that drifts out of phase score worse than the
time-mean field, which says nothing about the model (issue 28): keep the horizons at most one period
(:func:`shedding_period`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

import numpy as np

from .datasets import FlowDataset, Trajectory
from .lbm import strouhal
from .mesh import NodeType
from .training import Rollout, _check_rollout

__all__ = ["HoldFirstFrame", "TimeMean", "RolloutErrors", "rollout_errors", "shedding_period", "start_frames",
           "PairedTest", "paired_test"]


class Predictor(Protocol):
    def rollout(self, traj: Trajectory, n_steps: int | None = None, *, start: int = 0) -> Rollout: ...

    def one_step_rmse(self, traj: Trajectory, *, stride: int = 1) -> float: ...


def _fluid(traj: Trajectory) -> np.ndarray:
    return (traj.node_type == NodeType.NORMAL) | (traj.node_type == NodeType.OUTFLOW)


class HoldFirstFrame:
    """The trivial predictor :math:`\\hat v_{t_0+t} = v_{t_0}` (persistence)."""

    def rollout(self, traj: Trajectory, n_steps: int | None = None, *, start: int = 0) -> Rollout:
        T = _check_rollout(traj, n_steps, start)
        vel = np.repeat(traj.velocity[start:start + 1], T + 1, axis=0)
        prs = np.repeat(traj.pressure[start:start + 1], T + 1, axis=0)
        return Rollout.against(traj, start, vel, prs)

    def one_step_rmse(self, traj: Trajectory, *, stride: int = 1) -> float:
        d = traj.velocity[1:] - traj.velocity[:-1]
        return float(np.mean(np.sqrt(np.mean(np.sum(d[::stride] ** 2, axis=2), axis=1))))


class TimeMean:
    """The trivial predictor :math:`\\hat v_t = \\bar v` (the test trajectory's own time-mean field on the fluid
    nodes, an oracle: it knows the whole trajectory; boundary nodes held at the start frame)."""

    def _field(self, traj: Trajectory, start: int) -> tuple[np.ndarray, np.ndarray]:
        fluid = _fluid(traj)
        v = traj.velocity[start].copy()
        v[fluid] = traj.velocity.mean(axis=0)[fluid]
        return v, traj.pressure.mean(axis=0)

    def rollout(self, traj: Trajectory, n_steps: int | None = None, *, start: int = 0) -> Rollout:
        T = _check_rollout(traj, n_steps, start)
        v, p = self._field(traj, start)
        return Rollout.against(traj, start, np.repeat(v[None], T + 1, axis=0), np.repeat(p[None], T + 1, axis=0))

    def one_step_rmse(self, traj: Trajectory, *, stride: int = 1) -> float:
        errs = [np.sqrt(np.mean(np.sum((self._field(traj, t)[0] - traj.velocity[t + 1]) ** 2, axis=1)))
                for t in range(0, traj.n_steps - 1, stride)]
        return float(np.mean(errs))


@dataclasses.dataclass(frozen=True)
class RolloutErrors:
    """``one_step`` RMSE and ``rollout[h]`` = RMSE@h (velocity, units of the reference speed; see module)."""

    one_step: float
    rollout: dict[int, float]
    starts: tuple[int, ...]

    def as_dict(self, scale: float = 1.0) -> dict[str, float]:
        return {"rmse_1step": scale * self.one_step, **{f"rmse_{h}": scale * v for h, v in self.rollout.items()}}


def start_frames(n_frames: int, horizon: int, starts: int) -> tuple[int, ...]:
    """``starts`` start frames evenly spread over ``[0, n_frames - 1 - horizon]``."""
    last = n_frames - 1 - horizon
    if last < 0:
        raise ValueError(f"horizon {horizon} does not fit a trajectory of {n_frames} frames")
    return tuple(int(s) for s in np.unique(np.linspace(0, last, starts).round().astype(int)))


def rollout_errors(predictor: Predictor, dataset: FlowDataset, horizons: Any = (5, 10, 16), *, starts: int = 4,
                   stride: int = 4) -> RolloutErrors:
    """One-step RMSE and RMSE@h for every ``h`` in ``horizons`` (one rollout of ``max(horizons)`` steps per start).

    ``horizons`` must fit every trajectory (the largest at most its frame count minus one): the metrics are
    named after them, so no rollout is ever shortened silently.
    """
    if not isinstance(dataset, FlowDataset) or not len(dataset):
        raise TypeError(f"dataset must be a non-empty FlowDataset, got {type(dataset).__name__}")
    shortest = min(t.n_steps for t in dataset.trajectories)
    hz = np.atleast_1d(np.asarray(horizons))
    if hz.ndim != 1 or hz.size == 0 or hz.dtype.kind not in "iu" or np.any(hz < 1) or hz.max() >= shortest:
        raise ValueError(f"horizons must be integers in [1, {shortest - 1}] (the shortest trajectory has "
                         f"{shortest} frames), got {horizons!r}")
    hs = sorted(set(hz.tolist()))
    for name, val in (("starts", starts), ("stride", stride)):
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 1:
            raise ValueError(f"{name} must be a positive integer, got {val!r}")
    H = hs[-1]
    one, curves, used = [], [], set()
    for traj in dataset.trajectories:
        one.append(predictor.one_step_rmse(traj, stride=stride))
        for s in start_frames(traj.n_steps, H, starts):
            used.add(s)
            curves.append(predictor.rollout(traj, H, start=s).rmse_velocity)
    c = np.array(curves)
    return RolloutErrors(float(np.mean(one)), {h: float(np.mean(c[:, :h])) for h in hs}, tuple(sorted(used)))


def shedding_period(traj: Trajectory, *, downstream: float = 4.0) -> float:
    """Vortex-shedding period in frames: the dominant period of the cross-stream velocity at the mesh node
    nearest ``downstream`` diameters behind the cylinder (positions are in diameters), from
    :func:`~iclr25.piorf.strouhal`'s zero-padded FFT."""
    wall = traj.node_type == NodeType.WALL
    y = traj.pos[:, 1]
    cyl = wall & (y > y.min() + 1e-6) & (y < y.max() - 1e-6)
    if not np.any(cyl) or traj.n_steps < 4:
        raise ValueError("shedding_period needs a cylinder (interior wall nodes) and at least 4 frames")
    centre = traj.pos[cyl].mean(axis=0)
    probe = int(np.argmin(np.sum((traj.pos - centre - np.array([downstream, 0.0])) ** 2, axis=1)))
    # strouhal() with unit time step, diameter and speed is the dominant frequency in 1/frames
    return float(1.0 / strouhal(traj.velocity[:, probe, 1], 1.0, 1.0, 1.0))


@dataclasses.dataclass(frozen=True)
class PairedTest:
    """A paired comparison over seeds of a baseline's errors ``a`` and a method's errors ``b`` (lower is better).

    ``improvement`` is :math:`100 (\\bar a - \\bar b) / \\bar a` in percent, ``improvement_std`` the standard
    deviation over seeds of the per-seed improvement, ``t``/``p_t`` the paired t-test and ``p_sign`` the
    two-sided exact sign test (``wins`` of ``n`` seeds with ``b < a``).
    """

    improvement: float
    improvement_std: float
    t: float
    p_t: float
    wins: int
    n: int
    p_sign: float


def paired_test(a: Any, b: Any) -> PairedTest:
    """Paired t-test and sign test of per-seed errors ``b`` against ``a`` (same seeds, same order)."""
    from scipy.stats import binomtest, ttest_rel

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size < 2:
        raise ValueError(f"a and b must be 1-D with the same length >= 2 (one value per seed), got {a.shape}, "
                         f"{b.shape}")
    per_seed = 100.0 * (a - b) / a
    t, p = ttest_rel(a, b)
    wins = int(np.sum(b < a))
    return PairedTest(float(100.0 * (a.mean() - b.mean()) / a.mean()), float(per_seed.std(ddof=1)), float(t),
                      float(p), wins, int(a.size), float(binomtest(wins, int(a.size), 0.5).pvalue))
