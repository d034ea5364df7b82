"""Simulation of the built-in systems: overdamped Langevin dynamics by Euler-Maruyama, all walkers at once,
started from exact Boltzmann samples (:mod:`.reference`) or from given points.

References: BoPITO (ICLR 2025), Sec. 5.1 and App. (Prinz data: Euler-Maruyama, h = 1e-5, 500 steps/frame).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from iclr25.utils.progress import progress
from iclr25.utils.seeding import check_seed

from .reference import exact_reference
from .systems import Potential, Trajectories, get_system

__all__ = ["simulate"]


def _positive_int(v: Any, name: str, minimum: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {v!r}")
    return int(v)


def _positive_float(v: Any, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)) or not (
            math.isfinite(float(v)) and float(v) > 0):
        raise ValueError(f"{name} must be a positive finite number, got {v!r}")
    return float(v)


def simulate(system: str | Potential, n_traj: int, n_frames: int, *, x0: Any = "boltzmann",
             h: float | None = None, steps_per_frame: int | None = None, kT: float = 1.0, friction: float = 1.0,
             burn_in: int = 0, seed: int = 0, desc: str | None = "simulate") -> Trajectories:
    """Overdamped Langevin trajectories by Euler-Maruyama, all walkers advanced together.

    Parameters
    ----------
    system: ``"prinz"``, ``"triple-well-2d"`` or a :class:`Potential`.
    n_traj, n_frames: number of walkers and of saved frames per walker (after ``burn_in`` frames).
    x0: ``"boltzmann"`` (exact equilibrium samples from the grid reference, the default: no burn-in needed),
        a number / point (every walker starts there) or an array ``(n_traj, dim)``.
    h, steps_per_frame: integrator step and steps per saved frame (defaults of the system: 1e-5 and 500).
    kT, friction: temperature and ``m * gamma``.

    Returns
    -------
    :class:`Trajectories` with ``x`` of shape ``(n_traj, n_frames, dim)`` and ``frame_dt = h * steps_per_frame``.

    References: BoPITO (ICLR 2025), Sec. 5.1 and App. (Prinz data: Euler-Maruyama, h = 1e-5, 500 steps/frame).
    """
    pot = get_system(system)
    n_traj = _positive_int(n_traj, "n_traj")
    n_frames = _positive_int(n_frames, "n_frames")
    burn_in = _positive_int(burn_in, "burn_in", 0)
    h = _positive_float(pot.h if h is None else h, "h")
    steps = _positive_int(pot.steps_per_frame if steps_per_frame is None else steps_per_frame, "steps_per_frame")
    kT = _positive_float(kT, "kT")
    friction = _positive_float(friction, "friction")
    seed = check_seed(seed)
    rng = np.random.default_rng(seed)
    if isinstance(x0, str):
        if x0 != "boltzmann":
            raise ValueError(f"x0 must be 'boltzmann', a point or an array (n_traj, dim), got {x0!r}")
        start = exact_reference(pot, kT=kT, frame_dt=h * steps).sample_boltzmann(n_traj, seed=seed + 1)
    else:
        arr = np.asarray(x0, dtype=np.float64)
        if arr.ndim <= 1 and arr.size == pot.dim:
            start = np.broadcast_to(arr.reshape(1, pot.dim), (n_traj, pot.dim)).copy()
        elif arr.shape == (n_traj, pot.dim):
            start = arr.copy()
        else:
            raise ValueError(f"x0 must be a point of dimension {pot.dim} or an array of shape ({n_traj}, "
                             f"{pot.dim}), got shape {arr.shape}")
        if not np.all(np.isfinite(start)):
            raise ValueError("x0 must be finite (no NaN or inf)")
    x = start
    out = np.empty((n_traj, n_frames, pot.dim))
    drift = h / friction
    noise = math.sqrt(2.0 * kT * h / friction)
    for frame in progress(range(burn_in + n_frames), desc=desc, total=burn_in + n_frames):
        xi = rng.standard_normal((steps, n_traj, pot.dim))
        xi *= noise
        for k in range(steps):
            x = x - drift * pot.gradient(x) + xi[k]
        if frame >= burn_in:
            out[:, frame - burn_in] = x
    if not np.all(np.isfinite(out)):
        raise ValueError(f"the simulation diverged: lower h (got {h})")
    params = {"system": pot.name, "n_traj": n_traj, "n_frames": n_frames, "h": h, "steps_per_frame": steps,
              "kT": kT, "friction": friction, "burn_in": burn_in, "seed": seed,
              "x0": x0 if isinstance(x0, str) else np.asarray(x0).tolist() if np.asarray(x0).size <= 4
              else "array"}
    return Trajectories(out, h * steps, pot.name, params)
