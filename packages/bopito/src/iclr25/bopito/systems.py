"""Molecular-dynamics stand-ins: the Prinz potential (1-D) and deeptime's triple-well (2-D), simulated by
overdamped Langevin dynamics with Euler-Maruyama, vectorised over walkers (:func:`.simulation.simulate`).

.. math::

    x_{k+1} = x_k - \\frac{h}{m\\gamma} \\nabla V(x_k) + \\sqrt{\\frac{2 k_B T h}{m\\gamma}}\\,\\xi_k,
    \\qquad \\xi_k \\sim \\mathcal N(0, I)

One saved frame is ``steps_per_frame`` integrator steps (Prinz defaults of ``deeptime.data.prinz_potential``:
``h = 1e-5``, 500 steps, so one frame is 5e-3 time units).

References: Prinz et al., J. Chem. Phys. 134, 174105 (2011); Viguera Diez et al., "Boltzmann priors for
Implicit Transfer Operators", ICLR 2025, Sec. 5.1 (Prinz potential).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.guards import check_real
from iclr25.utils.io import DataFileError, atomic_path, existing_file, read_array, read_npz

__all__ = ["Potential", "prinz", "triple_well_2d", "get_system", "SYSTEMS", "Trajectories", "load_points",
           "load_trajectories"]


@dataclasses.dataclass(frozen=True)
class Potential:
    """A potential energy ``V`` on ``R^dim`` with its gradient and a box that holds its Boltzmann mass.

    ``energy`` and ``gradient`` take arrays of shape ``(..., dim)``; ``energy`` returns ``(...)`` and
    ``gradient`` ``(..., dim)``. ``box`` is ``((lo, hi),) * dim``: the region the exact grid reference covers.
    """

    name: str
    dim: int
    energy: Callable[[np.ndarray], np.ndarray]
    gradient: Callable[[np.ndarray], np.ndarray]
    box: tuple[tuple[float, float], ...]
    h: float = 1e-5
    steps_per_frame: int = 500


def _prinz_energy(x: np.ndarray) -> np.ndarray:
    x = x[..., 0]
    return 4.0 * (x**8 + 0.8 * np.exp(-80.0 * x**2) + 0.2 * np.exp(-80.0 * (x - 0.5) ** 2)
                  + 0.5 * np.exp(-40.0 * (x + 0.5) ** 2))


def _prinz_gradient(x: np.ndarray) -> np.ndarray:
    y = x[..., 0]
    y2 = y * y
    y7 = y2 * y2
    y7 *= y2
    y7 *= y
    a = y - 0.5
    b = y + 0.5
    # dV/dx written with the fewest temporaries: this is the simulator's hot loop
    g = 32.0 * y7 - 512.0 * y * np.exp(-80.0 * y2) - 128.0 * a * np.exp(-80.0 * a * a) \
        - 160.0 * b * np.exp(-40.0 * b * b)
    return g[..., None]


def prinz() -> Potential:
    """The Prinz potential ``V(x) = 4(x^8 + 0.8 e^{-80x^2} + 0.2 e^{-80(x-0.5)^2} + 0.5 e^{-40(x+0.5)^2})``.

    Four wells; at kT = 1 and a frame of 5e-3 time units its slowest implied timescale is about 167 frames.

    References: Prinz et al. (2011), Eq. 23; BoPITO (ICLR 2025), Sec. 5.1.
    """
    return Potential("prinz", 1, _prinz_energy, _prinz_gradient, ((-1.2, 1.2),))


_TW_A = ((3.0, 0.0, 1.0 / 3.0), (-3.0, 0.0, 5.0 / 3.0), (-5.0, 1.0, 0.0), (-5.0, -1.0, 0.0))


def _tw_energy(x: np.ndarray) -> np.ndarray:
    px, py = x[..., 0], x[..., 1]
    v = 0.2 * px**4 + 0.2 * (py - 1.0 / 3.0) ** 4
    for a, cx, cy in _TW_A:
        v = v + a * np.exp(-(px - cx) ** 2 - (py - cy) ** 2)
    return v


def _tw_gradient(x: np.ndarray) -> np.ndarray:
    px, py = x[..., 0], x[..., 1]
    gx = 0.8 * px**3
    gy = 0.8 * (py - 1.0 / 3.0) ** 3
    for a, cx, cy in _TW_A:
        e = a * np.exp(-(px - cx) ** 2 - (py - cy) ** 2)
        gx = gx - 2.0 * (px - cx) * e
        gy = gy - 2.0 * (py - cy) * e
    return np.stack([gx, gy], axis=-1)


def triple_well_2d() -> Potential:
    """The 2-D triple-well potential of ``deeptime.data.triple_well_2d`` (Schütte & Fischer):

    ``V = 3 e^{-x^2-(y-1/3)^2} - 3 e^{-x^2-(y-5/3)^2} - 5 e^{-(x-1)^2-y^2} - 5 e^{-(x+1)^2-y^2}
    + 0.2 x^4 + 0.2 (y-1/3)^4``, integrated with h = 1e-5; here 1000 steps per frame (deeptime: 10,000).

    References: deeptime.data.triple_well_2d; Schütte & Fischer, "Metastability and Markov state models".
    """
    return Potential("triple-well-2d", 2, _tw_energy, _tw_gradient, ((-2.0, 2.0), (-1.5, 2.5)),
                     steps_per_frame=1000)


SYSTEMS: dict[str, Callable[[], Potential]] = {"prinz": prinz, "triple-well-2d": triple_well_2d}


def get_system(name: str | Potential) -> Potential:
    """A :class:`Potential` by name (``"prinz"`` or ``"triple-well-2d"``), or the one given."""
    if isinstance(name, Potential):
        return name
    if name not in SYSTEMS:
        raise ValueError(f"system must be one of {sorted(SYSTEMS)}, got {name!r}")
    return SYSTEMS[name]()


@dataclasses.dataclass(frozen=True)
class Trajectories:
    """Saved frames ``x`` of shape ``(n_traj, n_frames, dim)``; one frame is ``frame_dt`` time units."""

    x: np.ndarray
    frame_dt: float
    system: str
    params: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def n_traj(self) -> int:
        return int(self.x.shape[0])

    @property
    def n_frames(self) -> int:
        return int(self.x.shape[1])

    @property
    def dim(self) -> int:
        return int(self.x.shape[2])

    def subset(self, n_traj: int) -> Trajectories:
        """The first ``n_traj`` trajectories."""
        if isinstance(n_traj, bool) or not isinstance(n_traj, (int, np.integer)) or not 1 <= n_traj <= self.n_traj:
            raise ValueError(f"n_traj must be an integer in [1, {self.n_traj}], got {n_traj!r}")
        return dataclasses.replace(self, x=self.x[: int(n_traj)], params={**self.params, "n_traj": int(n_traj)})

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write ``x``, ``frame_dt``, ``system`` and the parameters (JSON) to an ``.npz`` atomically."""
        path = Path(path)
        if path.suffix != ".npz":
            raise ValueError(f"output path must end in .npz, got {str(path)!r}")
        with atomic_path(path) as tmp:
            np.savez(tmp, x=self.x, frame_dt=np.float64(self.frame_dt), system=np.array(self.system),
                     params=np.array(json.dumps(self.params)))
        return path


def load_trajectories(path: str | os.PathLike[str]) -> Trajectories:
    """Read trajectories from ``.npz`` (key ``x``, as written by :meth:`Trajectories.save`, optional
    ``frame_dt``) or ``.npy``; the array is ``(n_traj, n_frames)`` or ``(n_traj, n_frames, dim)``.

    Raises ``FileNotFoundError`` or ``ValueError`` naming ``path`` for missing, empty, corrupt or non-finite
    files.
    """
    p, suffix = existing_file(path, (".npz", ".npy"), "trajectory")
    frame_dt, system, params = 1.0, "custom", {}
    if suffix == ".npy":
        x = read_array(p, what="trajectory")
    else:
        z = read_npz(p, required=("x",), what="trajectory")
        x = z["x"]
        try:
            if "frame_dt" in z:
                frame_dt = float(z["frame_dt"])
            if "system" in z:
                system = str(z["system"])
            if "params" in z:
                params = json.loads(str(z["params"]))
        except (TypeError, ValueError) as exc:
            raise DataFileError(p, f"frame_dt, system or params is not readable ({exc})") from exc
    x = np.asarray(x)
    if x.dtype.kind not in "fiu":
        raise ValueError(f"{p}: trajectories must be numeric, got dtype {x.dtype}")
    if x.ndim == 2:
        x = x[..., None]
    if x.ndim != 3 or x.shape[0] < 1 or x.shape[1] < 2 or x.shape[2] < 1:
        raise ValueError(f"{p}: trajectories must have shape (n_traj, n_frames[, dim]) with n_frames >= 2, "
                         f"got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{p}: trajectories contain NaN or inf")
    check_real(x, f"{p}: the trajectories")  # entries whose squares overflow (1e200) are refused too
    if not (math.isfinite(frame_dt) and frame_dt > 0):
        raise ValueError(f"{p}: frame_dt must be positive, got {frame_dt}")
    return Trajectories(x.astype(np.float64), frame_dt, system, params)


def load_points(path: str | os.PathLike[str], dim: int) -> np.ndarray:
    """Starting points from ``.npy`` (an array ``(n,)`` or ``(n, dim)``) or ``.npz`` (key ``x``; any shape
    whose last axis is ``dim``, flattened to ``(n, dim)``); errors name ``path``."""
    p, suffix = existing_file(path, (".npy", ".npz"), "starting-point")
    x = read_array(p, what="starting-point") if suffix == ".npy" else read_npz(p, required=("x",),
                                                                              what="starting-point")["x"]
    x = np.asarray(x)
    if x.dtype.kind not in "fiu" or x.size == 0:
        raise ValueError(f"{p}: starting points must be a non-empty numeric array")
    if dim == 1 and (x.ndim == 1 or x.shape[-1] != 1):
        x = x.reshape(-1, 1)
    if x.shape[-1] != dim:
        raise ValueError(f"{p}: starting points must have {dim} coordinate(s) on the last axis, got {x.shape}")
    x = x.reshape(-1, dim).astype(np.float64)
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{p}: starting points contain NaN or inf")
    check_real(x, f"{p}: the starting points")
    return x
