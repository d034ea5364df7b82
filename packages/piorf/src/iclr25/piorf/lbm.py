"""A D2Q9 BGK lattice-Boltzmann solver for channel flow past a cylinder (the training data generator).

The channel is ``nx x ny`` lattice cells with bounce-back walls at the top and bottom rows, a parabolic
velocity inlet (Zou-He) on the left, a zero-gradient outlet on the right and a bounce-back cylinder. With the
mean inflow speed :math:`\\bar U = \\tfrac{2}{3} u_{\\max}` and diameter :math:`D`, the Reynolds number
:math:`Re = \\bar U D / \\nu` sets the relaxation time :math:`\\tau = 3\\nu + 1/2`. Each step is

.. math::

    f_i(\\mathbf x + \\mathbf c_i, t+1) = f_i - \\frac{1}{\\tau}\\left(f_i - f_i^{eq}(\\rho, \\mathbf u)\\right),
    \\quad f_i^{eq} = w_i\\rho\\left(1 + 3\\,\\mathbf c_i\\cdot\\mathbf u + \\tfrac92(\\mathbf c_i\\cdot\\mathbf u)^2
    - \\tfrac32|\\mathbf u|^2\\right),

vectorised over the lattice in numpy; pressure is :math:`p = c_s^2 \\rho = \\rho/3`.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from iclr25.utils.progress import progress

__all__ = ["CylinderFlowSolution", "simulate_cylinder", "strouhal"]

_C = np.array([[0, 0], [1, 0], [0, 1], [-1, 0], [0, -1], [1, 1], [-1, 1], [-1, -1], [1, -1]])
_W = np.array([4 / 9] + [1 / 9] * 4 + [1 / 36] * 4)
_OPP = np.array([0, 3, 4, 1, 2, 7, 8, 5, 6])
_RIGHT = np.flatnonzero(_C[:, 0] == 1)   # populations entering from the inlet
_LEFT = np.flatnonzero(_C[:, 0] == -1)
_MID = np.flatnonzero(_C[:, 0] == 0)


@dataclasses.dataclass(frozen=True)
class CylinderFlowSolution:
    """Frames of a lattice-Boltzmann run, in lattice units.

    Attributes
    ----------
    velocity
        ``(T, ny, nx, 2)`` velocity at the cell centres ``(x + 0.5, y + 0.5)``.
    pressure
        ``(T, ny, nx)`` pressure deviation :math:`(\\rho - 1)/3`.
    solid
        ``(ny, nx)`` bool, cylinder and walls.
    center, radius, u_max, tau, reynolds, save_every
        The set-up.
    """

    velocity: np.ndarray
    pressure: np.ndarray
    solid: np.ndarray
    center: tuple[float, float]
    radius: float
    u_max: float
    tau: float
    reynolds: float
    save_every: int


def _equilibrium(rho: np.ndarray, u: np.ndarray) -> np.ndarray:
    cu = np.tensordot(_C, u, axes=(1, 0))  # (9, ny, nx)
    usq = u[0] ** 2 + u[1] ** 2
    return _W[:, None, None] * rho * (1.0 + 3.0 * cu + 4.5 * cu ** 2 - 1.5 * usq)


def simulate_cylinder(*, nx: int = 220, ny: int = 44, radius: float = 5.0, center: tuple[float, float] | None = None,
                      reynolds: float = 100.0, u_max: float = 0.1, n_frames: int = 100, save_every: int = 20,
                      spinup: int = 3000, show_progress: bool = False) -> CylinderFlowSolution:
    """Run the solver and keep ``n_frames`` frames, one every ``save_every`` steps after ``spinup`` steps.

    Parameters
    ----------
    nx, ny
        Lattice size (cells); walls occupy the first and last rows.
    radius, center
        Cylinder in lattice units; ``center`` defaults to ``(ny, ny/2)``. An off-centre cylinder triggers
        vortex shedding sooner.
    reynolds
        :math:`Re = \\bar U D / \\nu` with :math:`\\bar U = 2u_{\\max}/3`.
    u_max
        Peak inflow speed (lattice units; keep below ~0.15 for low Mach number).

    References
    ----------
    Krüger et al., *The Lattice Boltzmann Method* (2017), Ch. 3 (BGK), 5.3 (bounce-back), 5.3.4 (Zou-He).
    """
    for name, val in (("nx", nx), ("ny", ny), ("n_frames", n_frames), ("save_every", save_every)):
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 1:
            raise ValueError(f"{name} must be a positive integer, got {val!r}")
    if ny < 8 or nx < 2 * ny // 2:
        raise ValueError(f"ny must be >= 8 and nx >= ny, got nx={nx}, ny={ny}")
    if not (0 < reynolds <= 1000):
        raise ValueError(f"reynolds must be in (0, 1000], got {reynolds!r}")
    if not (0 < u_max <= 0.2):
        raise ValueError(f"u_max must be in (0, 0.2] (low Mach number), got {u_max!r}")
    cx, cy = (float(ny), ny / 2.0) if center is None else (float(center[0]), float(center[1]))
    if not (radius > 1 and radius + 1 < cy < ny - 1 - radius and radius < cx < nx - radius):
        raise ValueError(f"the cylinder (center {(cx, cy)}, radius {radius}) must lie inside the channel")
    nu = (2.0 / 3.0) * u_max * 2.0 * radius / reynolds
    tau = 3.0 * nu + 0.5
    if tau < 0.505:
        raise ValueError(f"reynolds {reynolds} with radius {radius} and u_max {u_max} gives tau={tau:.4f} < 0.505; "
                         "use a larger radius or u_max")
    omega = 1.0 / tau
    yy, xx = np.mgrid[0:ny, 0:nx] + 0.5
    solid = (xx - cx) ** 2 + (yy - cy) ** 2 <= radius ** 2
    solid[0, :] = solid[-1, :] = True
    # parabolic inflow between the wall planes y=1 and y=ny-1 (half-way bounce-back positions)
    s = (yy[:, 0] - 1.0) / (ny - 2.0)
    u_in = np.clip(4.0 * u_max * s * (1.0 - s), 0.0, None)
    u = np.zeros((2, ny, nx))
    u[0] = u_in[:, None] * ~solid
    rho = np.ones((ny, nx))
    f = _equilibrium(rho, u)
    vel = np.empty((n_frames, ny, nx, 2), dtype=np.float32)
    prs = np.empty((n_frames, ny, nx), dtype=np.float32)
    total = spinup + n_frames * save_every
    it = progress(range(total), total=total, desc="lattice Boltzmann", disable=None if show_progress else True)
    k = 0
    for step in it:
        f[_LEFT, :, -1] = f[_LEFT, :, -2]  # zero-gradient outflow
        rho = f.sum(axis=0)
        u = np.tensordot(_C.T.astype(np.float64), f, axes=(1, 0)) / rho
        # Zou-He velocity inlet: density from the known populations, unknown ones from non-equilibrium bounce-back
        u[0, :, 0], u[1, :, 0] = u_in, 0.0
        rho[:, 0] = (f[_MID, :, 0].sum(axis=0) + 2.0 * f[_LEFT, :, 0].sum(axis=0)) / (1.0 - u_in)
        feq = _equilibrium(rho, u)
        f[_RIGHT, :, 0] = feq[_RIGHT, :, 0] + f[_OPP[_RIGHT], :, 0] - feq[_OPP[_RIGHT], :, 0]
        fout = f - omega * (f - feq)
        fout[:, solid] = f[_OPP][:, solid]  # full-way bounce-back
        for i in range(9):
            f[i] = np.roll(np.roll(fout[i], _C[i, 0], axis=1), _C[i, 1], axis=0)
        if step >= spinup and (step - spinup) % save_every == 0:
            uu = np.where(solid, 0.0, u)
            vel[k] = np.moveaxis(uu, 0, -1)
            prs[k] = np.where(solid, 0.0, (rho - 1.0) / 3.0)
            k += 1
    if not np.all(np.isfinite(vel)):
        raise FloatingPointError(f"the lattice-Boltzmann run diverged (tau={tau:.4f}); lower reynolds or u_max")
    return CylinderFlowSolution(vel, prs, solid, (cx, cy), float(radius), float(u_max), float(tau),
                                float(reynolds), int(save_every))


def strouhal(signal: np.ndarray, dt: float, diameter: float, speed: float) -> float:
    """Strouhal number :math:`St = f D / \\bar U` of the dominant frequency of a (lift-like) signal."""
    x = np.asarray(signal, dtype=np.float64)
    x = x - x.mean()
    n_fft = 16 * len(x)  # zero padding refines the peak beyond the 1/(T dt) bin width
    spec = np.abs(np.fft.rfft(x * np.hanning(len(x)), n=n_fft))
    freqs = np.fft.rfftfreq(n_fft, d=dt)
    k = int(np.argmax(spec[1:])) + 1
    return float(freqs[k] * diameter / speed)
