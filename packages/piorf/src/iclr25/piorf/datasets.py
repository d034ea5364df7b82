"""Built-in data: lattice-Boltzmann cylinder flow interpolated onto graded triangle meshes, cached on disk.

Each trajectory has its own Reynolds number in ``reynolds`` and its own cylinder height, hence its own mesh,
as in MeshGraphNets' CylinderFlow. With ``vary="speed"`` (the default since 0.3) the Reynolds number is set by
the inflow speed at a fixed viscosity, as in CylinderFlow, so a model can read it from the inflow velocity;
``vary="viscosity"`` (0.2's data) keeps the inflow speed and changes the viscosity, which no node feature shows.
Positions are in cylinder diameters, velocity in units of the reference peak inflow speed :data:`U_REF` (the
peak inflow speed at Re 120 for ``"speed"``, every run's for ``"viscosity"``) and pressure in units of
:math:`\\rho u_{\\mathrm{ref}}^2`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path

import numpy as np

from iclr25.utils.guards import check_real
from iclr25.utils.io import DataFileError, read_npz, save_npz
from iclr25.utils.progress import progress
from iclr25.utils.seeding import check_seed

from .graph import as_edge_index, mesh_edges
from .lbm import simulate_cylinder
from .mesh import NodeType, TriangleMesh, channel_mesh

__all__ = ["Trajectory", "FlowDataset", "cylinder_flow", "cache_dir", "load_trajectory", "save_trajectory",
           "U_REF", "RE_REF", "VARY"]

_FORMAT = 1
#: Peak inflow speed (lattice units) at the reference Reynolds number :data:`RE_REF`; velocities are divided by it.
U_REF = 0.1
RE_REF = 120.0
#: The largest velocity or pressure a file may hold: they are float32, whose squares overflow above about 1.8e19.
FLOAT32_MAX_ABS = 1e18
VARY = ("speed", "viscosity")


@dataclasses.dataclass(frozen=True)
class Trajectory:
    """One simulated flow on one mesh.

    Attributes
    ----------
    pos
        ``(N, 2)`` node positions (cylinder diameters).
    cells
        ``(F, 3)`` triangles.
    edge_index
        ``(2, E)`` symmetric mesh edges.
    node_type
        ``(N,)`` :class:`~iclr25.piorf.mesh.NodeType` codes.
    velocity
        ``(T, N, 2)`` velocity frames.
    pressure
        ``(T, N)`` pressure frames.
    reynolds
        Reynolds number of the run (NaN when the data do not say: MeshGraphNets' files).
    density
        ``(T, N)`` density frames (MeshGraphNets' Airfoil) or ``None``; kept, not modelled.
    """

    pos: np.ndarray
    cells: np.ndarray
    edge_index: np.ndarray
    node_type: np.ndarray
    velocity: np.ndarray
    pressure: np.ndarray
    reynolds: float
    density: np.ndarray | None = None

    @property
    def n_nodes(self) -> int:
        return len(self.pos)

    @property
    def n_steps(self) -> int:
        return len(self.velocity)

    @property
    def mesh(self) -> TriangleMesh:
        return TriangleMesh(self.pos, self.cells, self.edge_index, self.node_type)


@dataclasses.dataclass(frozen=True)
class FlowDataset:
    """A tuple of :class:`Trajectory` with the settings that made them."""

    trajectories: tuple[Trajectory, ...]
    config: dict

    def __len__(self) -> int:
        return len(self.trajectories)

    def __getitem__(self, k: int) -> Trajectory:
        return self.trajectories[k]

    def split(self, n_train: int) -> tuple[FlowDataset, FlowDataset]:
        """The first ``n_train`` trajectories and the rest."""
        if not 0 < n_train < len(self):
            raise ValueError(f"n_train must be in [1, {len(self) - 1}], got {n_train}")
        return (FlowDataset(self.trajectories[:n_train], self.config),
                FlowDataset(self.trajectories[n_train:], self.config))


def cache_dir() -> Path:
    """``$ICLR25_PIORF_CACHE``, else ``$XDG_CACHE_HOME/iclr25-piorf``, else ``~/.cache/iclr25-piorf``."""
    env = os.environ.get("ICLR25_PIORF_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "iclr25-piorf"


def save_trajectory(path: str | os.PathLike[str], traj: Trajectory) -> Path:
    """Write a trajectory as ``.npz`` atomically (a failed write leaves no file)."""
    extra = {} if traj.density is None else {"density": traj.density}
    return save_npz(path, format=np.array(_FORMAT), pos=traj.pos, cells=traj.cells, edge_index=traj.edge_index,
                    node_type=traj.node_type, velocity=traj.velocity, pressure=traj.pressure,
                    reynolds=np.array(traj.reynolds), **extra)


def load_trajectory(path: str | os.PathLike[str]) -> Trajectory:
    """Read a trajectory (or a bare mesh: ``pos`` + ``cells`` or ``edge_index``) from ``.npz``.

    A mesh file without flow gets one frame of zero velocity and pressure.

    Raises
    ------
    FileNotFoundError, DataFileError
        Missing, unreadable or inconsistent file.
    """
    p = Path(path)
    d = read_npz(p, what="mesh or trajectory")
    if "pos" not in d or ("cells" not in d and "edge_index" not in d):
        raise DataFileError(p, f"needs arrays 'pos' and 'cells' or 'edge_index', has {sorted(d)}")
    for name in ("pos", "cells", "edge_index", "node_type", "velocity", "pressure", "reynolds", "density"):
        if name in d and d[name].dtype.kind not in "fiub":
            raise DataFileError(p, f"'{name}' must be a numeric array, got dtype {d[name].dtype}")
    for name, limit in (("pos", 1e150), ("velocity", FLOAT32_MAX_ABS), ("pressure", FLOAT32_MAX_ABS),
                        ("density", FLOAT32_MAX_ABS)):
        if name in d and d[name].dtype.kind == "f":
            try:  # velocity and pressure are float32: larger entries overflow there
                check_real(d[name], f"'{name}'", max_abs=limit)
            except ValueError as exc:
                raise DataFileError(p, str(exc)) from None
    pos = np.asarray(d["pos"], dtype=np.float64)
    if pos.ndim != 2 or pos.shape[0] == 0 or not np.all(np.isfinite(pos)):
        raise DataFileError(p, f"'pos' must be a finite (N, dim) array, got shape {pos.shape}")
    n = len(pos)
    cells = np.asarray(d.get("cells", np.zeros((0, 3), dtype=np.int64)))
    try:
        if "edge_index" in d:
            ei = as_edge_index(d["edge_index"], n)[0]
        else:
            ei = mesh_edges(cells, n)
    except (TypeError, ValueError) as exc:
        raise DataFileError(p, str(exc)) from exc
    node_type = np.asarray(d.get("node_type", np.zeros(n, dtype=np.int64))).astype(np.int64)
    vel = np.asarray(d.get("velocity", np.zeros((1, n, pos.shape[1]), dtype=np.float32)), dtype=np.float32)
    prs = np.asarray(d.get("pressure", np.zeros((len(vel), n), dtype=np.float32)), dtype=np.float32)
    if vel.ndim == 2:
        vel = vel[None]
    if prs.ndim == 1:
        prs = prs[None]
    if node_type.shape != (n,) or vel.shape[1:2] != (n,) or prs.shape[:2] != vel.shape[:2]:
        raise DataFileError(p, f"inconsistent shapes: pos {pos.shape}, node_type {node_type.shape}, velocity "
                               f"{vel.shape}, pressure {prs.shape}")
    if not (np.all(np.isfinite(vel)) and np.all(np.isfinite(prs))):
        raise DataFileError(p, "velocity and pressure must be finite")
    reynolds = np.asarray(d.get("reynolds", np.nan), dtype=np.float64)
    if reynolds.size != 1:
        raise DataFileError(p, f"'reynolds' must be one number, got shape {reynolds.shape}")
    den = None
    if "density" in d:
        den = np.asarray(d["density"], dtype=np.float32)
        if den.shape != prs.shape or not np.all(np.isfinite(den)):
            raise DataFileError(p, f"'density' must be finite with pressure's shape {prs.shape}, got {den.shape}")
    return Trajectory(pos, cells.astype(np.int64), ei, node_type, vel, prs, float(reynolds.reshape(())), den)


def _interpolate(sol, mesh: TriangleMesh, scale: float, u_ref: float) -> tuple[np.ndarray, np.ndarray]:
    """LBM cell-centre fields at the mesh nodes (mesh in lattice units divided by ``scale``)."""
    from scipy.interpolate import RegularGridInterpolator
    from scipy.ndimage import distance_transform_edt

    ny, nx = sol.solid.shape
    xs, ys = np.arange(nx) + 0.5, np.arange(ny) + 0.5
    pts = mesh.pos * scale + np.array([0.0, 1.0])  # mesh y=0 is the lower wall plane y=1
    pts = np.clip(pts, [xs[0], ys[0]], [xs[-1], ys[-1]])
    # pressure inside solids is undefined: take the nearest fluid cell's value
    _, (iy, ix) = distance_transform_edt(sol.solid, return_indices=True)
    T = len(sol.velocity)
    vel = np.empty((T, mesh.n_nodes, 2), dtype=np.float32)
    prs = np.empty((T, mesh.n_nodes), dtype=np.float32)
    for t in range(T):
        for c in range(2):
            f = RegularGridInterpolator((ys, xs), sol.velocity[t, :, :, c], bounds_error=False, fill_value=None)
            vel[t, :, c] = f(pts[:, ::-1])
        pf = sol.pressure[t][iy, ix]
        prs[t] = RegularGridInterpolator((ys, xs), pf, bounds_error=False, fill_value=None)(pts[:, ::-1])
    wall = mesh.node_type == NodeType.WALL
    vel[:, wall] = 0.0
    inflow = mesh.node_type == NodeType.INFLOW
    s = mesh.pos[inflow, 1] * scale / (ny - 2.0)
    vel[:, inflow, 0] = 4.0 * sol.u_max * s * (1.0 - s)
    vel[:, inflow, 1] = 0.0
    return vel / u_ref, prs / u_ref ** 2


def _one_trajectory(seed: int, k: int, steps: int, re_range: tuple[float, float], lattice: tuple[int, int],
                    radius: float, save_every: int, spinup: int, mesh_size: tuple[float, float], vary: str
                    ) -> Trajectory:
    rng = np.random.default_rng([seed, k])
    nx, ny = lattice
    re = float(rng.uniform(*re_range))
    cy = 1.0 + (ny - 2) * float(rng.uniform(0.42, 0.58))
    cx = 2.0 * ny / 2.0 * float(rng.uniform(0.9, 1.1))
    # "speed": nu = (2/3) U_REF D / RE_REF for every run, Re = (2/3) u_max D / nu  =>  u_max = U_REF Re / RE_REF
    u_max = U_REF * re / RE_REF if vary == "speed" else U_REF
    sol = simulate_cylinder(nx=nx, ny=ny, radius=radius, center=(cx, cy), reynolds=re, u_max=u_max, n_frames=steps,
                            save_every=save_every, spinup=spinup)
    scale = 2.0 * radius
    mesh = channel_mesh(nx / scale, (ny - 2) / scale, (cx / scale, (cy - 1.0) / scale), radius / scale,
                        h_min=mesh_size[0] / scale, h_max=mesh_size[1] / scale, seed=int(rng.integers(2**31)))
    vel, prs = _interpolate(sol, mesh, scale, U_REF)
    return Trajectory(mesh.pos.astype(np.float32), mesh.cells, mesh.edge_index, mesh.node_type, vel, prs, re)


def cylinder_flow(n_trajectories: int = 10, steps: int = 100, *, reynolds: tuple[float, float] = (80.0, 160.0),
                  seed: int = 0, lattice: tuple[int, int] = (220, 44), radius: float = 5.0, save_every: int = 25,
                  spinup: int = 3000, mesh_size: tuple[float, float] = (1.2, 4.5), vary: str = "speed",
                  cache: bool = True, show_progress: bool = False) -> FlowDataset:
    """Cylinder-flow trajectories (lattice Boltzmann, D2Q9 BGK) on graded triangle meshes.

    Trajectory ``k`` depends only on ``(seed, k)`` and the settings, so asking for more trajectories reuses
    the cached ones. The cache (:func:`cache_dir`) holds one atomically written ``.npz`` per trajectory.

    Parameters
    ----------
    n_trajectories
        Number of trajectories.
    steps
        Frames per trajectory, one every ``save_every`` lattice steps after ``spinup`` steps.
    reynolds
        Range the Reynolds number of each trajectory is drawn from (uniformly).
    seed
        Seed of the Reynolds numbers, cylinder positions and meshes.
    lattice
        ``(nx, ny)`` lattice size; the cylinder has ``radius`` lattice units.
    mesh_size
        Mesh edge length at the cylinder and far away, in lattice units.
    vary
        ``"speed"``: the Reynolds number is set by the inflow speed (fixed viscosity; visible to a model);
        ``"viscosity"``: by the viscosity at a fixed inflow speed (the 0.2 data; hidden from a model).
    cache
        Read and write the disk cache.

    Examples
    --------
    >>> ds = cylinder_flow(1, 4, spinup=200, lattice=(110, 24), radius=3.0, mesh_size=(1.0, 3.0))  # doctest: +SKIP
    """
    seed = check_seed(seed)
    if isinstance(n_trajectories, bool) or not isinstance(n_trajectories, (int, np.integer)) or n_trajectories < 1:
        raise ValueError(f"n_trajectories must be a positive integer, got {n_trajectories!r}")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 2:
        raise ValueError(f"steps must be an integer >= 2, got {steps!r}")
    lo, hi = (float(reynolds[0]), float(reynolds[1])) if np.ndim(reynolds) == 1 and len(reynolds) == 2 else (-1, -1)
    if not 0 < lo <= hi:
        raise ValueError(f"reynolds must be a range (low, high) with 0 < low <= high, got {reynolds!r}")
    if vary not in VARY:
        raise ValueError(f"vary must be one of {VARY}, got {vary!r}")
    if vary == "speed" and hi > 2.0 * RE_REF:
        raise ValueError(f"reynolds must be at most {2.0 * RE_REF:g} with vary='speed' (the peak inflow speed "
                         f"{U_REF} * Re / {RE_REF:g} must stay <= 0.2 lattice units, low Mach), got {reynolds!r}")
    config = {"steps": int(steps), "reynolds": [lo, hi], "seed": seed, "lattice": list(lattice),
              "radius": float(radius), "save_every": int(save_every), "spinup": int(spinup),
              "mesh_size": list(mesh_size), "format": _FORMAT}
    if vary != "viscosity":  # 0.2's cache names stay valid for its data
        config["vary"] = vary
    tag = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]
    trajs = []
    for k in progress(range(n_trajectories), total=n_trajectories, desc="cylinder flow",
                      disable=None if show_progress else True):
        path = cache_dir() / f"cylinder-{tag}-{k}.npz"
        traj = None
        if cache and path.is_file():
            try:
                traj = load_trajectory(path)
            except (DataFileError, OSError):
                traj = None  # a corrupt cache entry is regenerated
        if traj is None:
            traj = _one_trajectory(seed, k, int(steps), (lo, hi), tuple(lattice), float(radius), int(save_every),
                                   int(spinup), tuple(mesh_size), vary)
            if cache:
                try:
                    save_trajectory(path, traj)
                except OSError:
                    pass  # a read-only cache folder only costs speed
        trajs.append(traj)
    return FlowDataset(tuple(trajs), {**config, "n_trajectories": int(n_trajectories)})
