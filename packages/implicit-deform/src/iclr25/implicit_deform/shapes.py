"""Procedural shapes and analytic, volume-preserving deformations with exact intermediate shapes.

Shapes are given by analytic signed distance functions (a rounded bar, a capsule, a torus); their surfaces are
meshed by marching cubes and every mesh vertex and surface sample is projected onto the exact surface, so
points and normals are exact. A deformation is the time-1 flow of a stationary velocity field; its time-t map
phi_t is known in closed form, so the ground-truth intermediate shape at any t is phi_t(source):

* ``twist``: phi_t(x) = R_z(t * angle * (z - z0) / length) x (the end z0 = -length/2 stays fixed, the other
  turns by ``angle``); v(x) = (angle / length) (z - z0) (-y, x, 0), div v = 0.
* ``rigid``: phi_t = exp(t xi) for a twist xi = (omega, u) of se(3); v(x) = omega x x + u, div v = 0.
* ``shear``: phi_t(x) = x + t s z e_x; v(x) = (s z, 0, 0), div v = 0.

References: Sang et al., ICLR 2025, Sec. 5 (deformation between pairs, intermediate shapes); the analytic
pairs stand in for FAUST/SMAL, which cannot be downloaded here (paper note, Sec. 5).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
from scipy.linalg import expm
from scipy.spatial import cKDTree

from iclr25.utils.seeding import check_seed

__all__ = ["Shape", "Deformation", "ShapePair", "rounded_bar", "capsule", "torus", "twist", "rigid", "shear",
           "make_pair", "SHAPES", "DEFORMATIONS"]


# ----------------------------------------------------------------------------------------------- shapes
@dataclasses.dataclass(frozen=True)
class Shape:
    """A closed surface given by an analytic signed distance function (negative inside).

    ``sdf(points) -> (n,)`` and ``bounds`` (lo, hi) of the surface; ``volume`` is exact.
    """

    name: str
    sdf: Callable[[np.ndarray], np.ndarray]
    bounds: tuple[tuple[float, float, float], tuple[float, float, float]]
    volume: float

    def gradient(self, points: np.ndarray, eps: float = 1e-5) -> np.ndarray:
        """Central-difference gradient of the SDF (unit length away from the medial axis)."""
        p = np.asarray(points, dtype=np.float64)
        g = np.stack([(self.sdf(p + eps * e) - self.sdf(p - eps * e)) / (2 * eps) for e in np.eye(3)], axis=-1)
        return g

    def project(self, points: np.ndarray, n_iter: int = 3) -> tuple[np.ndarray, np.ndarray]:
        """Closest-point projection onto the surface, x <- x - f(x) grad f(x); returns (points, unit normals)."""
        p = np.asarray(points, dtype=np.float64).copy()
        for _ in range(n_iter):
            g = self.gradient(p)
            g /= np.linalg.norm(g, axis=1, keepdims=True) + 1e-12
            p -= self.sdf(p)[:, None] * g
        g = self.gradient(p)
        return p, g / (np.linalg.norm(g, axis=1, keepdims=True) + 1e-12)

    def mesh(self, resolution: int = 96):
        """A watertight triangle mesh of the surface (marching cubes, vertices projected onto the surface)."""
        import trimesh  # noqa: PLC0415
        from skimage.measure import marching_cubes  # noqa: PLC0415

        lo = np.asarray(self.bounds[0]) - 0.1
        hi = np.asarray(self.bounds[1]) + 0.1
        axes = [np.linspace(lo[i], hi[i], resolution) for i in range(3)]
        grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
        values = self.sdf(grid).reshape(resolution, resolution, resolution)
        spacing = tuple((hi - lo) / (resolution - 1))
        verts, faces, _, _ = marching_cubes(values, level=0.0, spacing=spacing)
        verts, _ = self.project(verts + lo)
        return trimesh.Trimesh(verts, faces, process=True)


def _length(p: np.ndarray) -> np.ndarray:
    return np.linalg.norm(p, axis=-1)


def rounded_bar(size: tuple[float, float, float] = (0.6, 0.2, 1.6), radius: float = 0.06) -> Shape:
    """A box of full extents ``size`` with edges rounded by ``radius`` (exact SDF of a rounded box)."""
    b = np.asarray(size, dtype=np.float64) / 2 - radius
    if np.any(b <= 0):
        raise ValueError(f"radius must be below half of every extent of size={size}, got {radius}")

    def sdf(p: np.ndarray) -> np.ndarray:
        q = np.abs(np.asarray(p, dtype=np.float64)) - b
        return _length(np.maximum(q, 0.0)) + np.minimum(q.max(axis=-1), 0.0) - radius

    s = np.asarray(size)
    vol = (np.prod(2 * b) + 2 * radius * (4 * (b[0] * b[1] + b[1] * b[2] + b[0] * b[2]))
           + np.pi * radius**2 * 2 * (b.sum()) + 4 / 3 * np.pi * radius**3)
    return Shape("bar", sdf, (tuple(-s / 2), tuple(s / 2)), float(vol))


def capsule(length: float = 1.2, radius: float = 0.25) -> Shape:
    """A capsule along z: segment of ``length`` swept by a ball of ``radius``."""
    h = length / 2

    def sdf(p: np.ndarray) -> np.ndarray:
        p = np.asarray(p, dtype=np.float64)
        z = np.clip(p[:, 2], -h, h)
        return _length(p - np.stack([np.zeros_like(z), np.zeros_like(z), z], axis=-1)) - radius

    e = (radius, radius, h + radius)
    vol = np.pi * radius**2 * length + 4 / 3 * np.pi * radius**3
    return Shape("capsule", sdf, (tuple(-np.asarray(e)), e), float(vol))


def torus(major: float = 0.6, minor: float = 0.2) -> Shape:
    """A torus in the xy plane with ``major`` and ``minor`` radii."""

    def sdf(p: np.ndarray) -> np.ndarray:
        p = np.asarray(p, dtype=np.float64)
        q = np.stack([_length(p[:, :2]) - major, p[:, 2]], axis=-1)
        return _length(q) - minor

    e = (major + minor, major + minor, minor)
    return Shape("torus", sdf, (tuple(-np.asarray(e)), e), float(2 * np.pi**2 * major * minor**2))


SHAPES: dict[str, Callable[[], Shape]] = {"bar": rounded_bar, "capsule": capsule, "torus": torus}


# ------------------------------------------------------------------------------------------ deformations
@dataclasses.dataclass(frozen=True)
class Deformation:
    """The flow phi_t of a stationary velocity field: ``map(points, t)``, ``inverse(points, t)``, ``velocity``."""

    name: str
    map: Callable[[np.ndarray, float], np.ndarray]
    inverse: Callable[[np.ndarray, float], np.ndarray]
    velocity: Callable[[np.ndarray], np.ndarray]

    def jacobian(self, points: np.ndarray, t: float, eps: float = 1e-5) -> np.ndarray:
        """(n, 3, 3) Jacobian d phi_t / dx by central differences."""
        p = np.asarray(points, dtype=np.float64)
        cols = [(self.map(p + eps * e, t) - self.map(p - eps * e, t)) / (2 * eps) for e in np.eye(3)]
        return np.stack(cols, axis=-1)

    def map_normals(self, points: np.ndarray, normals: np.ndarray, t: float) -> np.ndarray:
        """Normals transported by the inverse transpose of the Jacobian, n' ∝ J^{-T} n."""
        J = self.jacobian(points, t)
        m = np.linalg.solve(np.transpose(J, (0, 2, 1)), normals[..., None])[..., 0]
        return m / (np.linalg.norm(m, axis=1, keepdims=True) + 1e-12)


def _rot_z(angle: np.ndarray) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    z, o = np.zeros_like(angle), np.ones_like(angle)
    return np.stack([np.stack([c, -s, z], -1), np.stack([s, c, z], -1), np.stack([z, z, o], -1)], -2)


def twist(angle: float = np.pi / 2, length: float = 1.6) -> Deformation:
    """Twist about z: the cross-section at height z turns by t * angle * (z + length/2) / length, so the bottom
    end stays and the top end turns by ``angle``."""
    k = angle / length
    z0 = -length / 2

    def fmap(p: np.ndarray, t: float) -> np.ndarray:
        p = np.asarray(p, dtype=np.float64)
        return np.einsum("nij,nj->ni", _rot_z(t * k * (p[:, 2] - z0)), p)

    def inv(p: np.ndarray, t: float) -> np.ndarray:
        return fmap(p, -t)

    def vel(p: np.ndarray) -> np.ndarray:
        p = np.asarray(p, dtype=np.float64)
        return k * (p[:, 2:3] - z0) * np.stack([-p[:, 1], p[:, 0], np.zeros(len(p))], axis=-1)

    return Deformation("twist", fmap, inv, vel)


def rigid(omega: tuple[float, float, float] = (0.0, np.pi / 2, 0.0),
          u: tuple[float, float, float] = (0.3, 0.0, 0.2)) -> Deformation:
    """Rigid motion phi_t = exp(t xi), xi = (omega, u): rotation rate ``omega`` and translation rate ``u``."""
    w = np.asarray(omega, dtype=np.float64)
    uu = np.asarray(u, dtype=np.float64)
    xi = np.zeros((4, 4))
    xi[:3, :3] = [[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]]
    xi[:3, 3] = uu

    def fmap(p: np.ndarray, t: float) -> np.ndarray:
        g = expm(t * xi)
        return np.asarray(p, dtype=np.float64) @ g[:3, :3].T + g[:3, 3]

    def inv(p: np.ndarray, t: float) -> np.ndarray:
        return fmap(p, -t)

    def vel(p: np.ndarray) -> np.ndarray:
        return np.cross(w, np.asarray(p, dtype=np.float64)) + uu

    return Deformation("rigid", fmap, inv, vel)


def shear(s: float = 0.5) -> Deformation:
    """Shear x += t s z (volume preserving)."""

    def fmap(p: np.ndarray, t: float) -> np.ndarray:
        q = np.array(p, dtype=np.float64)
        q[:, 0] += t * s * q[:, 2]
        return q

    def inv(p: np.ndarray, t: float) -> np.ndarray:
        return fmap(p, -t)

    def vel(p: np.ndarray) -> np.ndarray:
        p = np.asarray(p, dtype=np.float64)
        return np.stack([s * p[:, 2], np.zeros(len(p)), np.zeros(len(p))], axis=-1)

    return Deformation("shear", fmap, inv, vel)


DEFORMATIONS: dict[str, Callable[[], Deformation]] = {"twist": twist, "rigid": rigid, "shear": shear}


# ------------------------------------------------------------------------------------------------ pairs
@dataclasses.dataclass(frozen=True)
class ShapePair:
    """A source and target point cloud with normals, sparse correspondences and (for built-in pairs) the
    exact intermediate shapes.

    ``corr`` is a (k, 2) array of indices into ``source_vertices`` and ``target_vertices``. ``shape`` and
    ``deformation`` are ``None`` for a user's own pair.
    """

    source_points: np.ndarray
    source_normals: np.ndarray | None
    target_points: np.ndarray
    target_normals: np.ndarray | None
    source_vertices: np.ndarray
    target_vertices: np.ndarray
    corr: np.ndarray
    source_faces: np.ndarray | None = None
    target_faces: np.ndarray | None = None
    shape: Shape | None = None
    deformation: Deformation | None = None
    name: str = "pair"

    @property
    def corr_source(self) -> np.ndarray:
        return self.source_vertices[self.corr[:, 0]]

    @property
    def corr_target(self) -> np.ndarray:
        return self.target_vertices[self.corr[:, 1]]

    @property
    def has_ground_truth(self) -> bool:
        return self.shape is not None and self.deformation is not None

    def _need_gt(self) -> None:
        if not self.has_ground_truth:
            raise ValueError(f"pair {self.name!r} has no analytic ground truth (a user's own pair)")

    def gt_mesh(self, t: float):
        """The exact intermediate shape phi_t(source) as a mesh (source connectivity)."""
        import trimesh  # noqa: PLC0415

        self._need_gt()
        return trimesh.Trimesh(self.deformation.map(self.source_vertices, t), self.source_faces, process=False)

    def gt_points(self, t: float, n: int = 20000, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """``n`` exact surface points of the intermediate shape with unit normals."""
        self._need_gt()
        rng = np.random.default_rng(seed)
        p, nrm = _surface_samples(self.shape, self.source_vertices, self.source_faces, n, rng)
        return self.deformation.map(p, t), self.deformation.map_normals(p, nrm, t)

    def gt_inside(self, points: np.ndarray, t: float) -> np.ndarray:
        """True where ``points`` lie inside the intermediate shape (pull back by phi_t^{-1})."""
        self._need_gt()
        return self.shape.sdf(self.deformation.inverse(np.asarray(points, dtype=np.float64), t)) < 0

    def sdf_function(self, t: float, *, n_surface: int = 100_000) -> Callable[[np.ndarray], np.ndarray]:
        """``points -> gt_sdf(points, t)`` with the dense surface samples and their KD-tree built once."""
        self._need_gt()
        p, _ = _surface_samples(self.shape, self.source_vertices, self.source_faces, n_surface,
                                np.random.default_rng(12345))
        tree = cKDTree(self.deformation.map(p, t))

        def sdf(points: np.ndarray) -> np.ndarray:
            x = np.asarray(points, dtype=np.float64)
            d, _ = tree.query(x, workers=1)
            return np.where(self.gt_inside(x, t), -d, d)

        return sdf

    def gt_sdf(self, points: np.ndarray, t: float, *, n_surface: int = 100_000) -> np.ndarray:
        """Signed distance to the intermediate shape: distance to dense exact surface samples, sign by pull-back.

        Exact up to the sample spacing (about 5e-3 for the default bar); used by the SDF-blend and LipMLP
        baselines as their best possible input.
        """
        return self.sdf_function(t, n_surface=n_surface)(points)


def _surface_samples(shape: Shape, verts: np.ndarray, faces: np.ndarray, n: int,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Area-uniform samples on the mesh, projected onto the exact surface (points, normals)."""
    tri = verts[faces]
    area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
    idx = rng.choice(len(faces), size=n, p=area / area.sum())
    r1, r2 = rng.random(n), rng.random(n)
    s = np.sqrt(r1)
    w = np.stack([1 - s, s * (1 - r2), s * r2], axis=1)
    p = np.einsum("nk,nkd->nd", w, tri[idx])
    return shape.project(p)


def make_pair(shape: str = "bar", deformation: str = "twist", *, n_points: int = 20000,
              corr_fraction: float = 0.05, mesh_resolution: int = 64, seed: int = 0) -> ShapePair:
    """A built-in source/target pair with exact intermediate ground truth.

    The source and target clouds are independent area-uniform samples (``n_points`` each) with exact normals;
    ``corr_fraction`` of the source mesh vertices get their exact image as a sparse correspondence (the paper's
    sparse-correspondence setting; 5 % by default).

    Examples
    --------
    >>> pair = make_pair("bar", "twist", n_points=2000, mesh_resolution=32)
    >>> pair.source_points.shape, pair.corr.shape[1]
    ((2000, 3), 2)
    """
    seed = check_seed(seed)
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {sorted(SHAPES)}, got {shape!r}")
    if deformation not in DEFORMATIONS:
        raise ValueError(f"deformation must be one of {sorted(DEFORMATIONS)}, got {deformation!r}")
    if isinstance(n_points, bool) or not isinstance(n_points, (int, np.integer)) or n_points < 64:
        raise ValueError(f"n_points must be an integer >= 64, got {n_points!r}")
    if not (0.0 < float(corr_fraction) <= 1.0):
        raise ValueError(f"corr_fraction must be in (0, 1], got {corr_fraction!r}")
    shp = SHAPES[shape]()
    deform = DEFORMATIONS[deformation]() if not (shape != "bar" and deformation == "twist") else \
        twist(length=2 * shp.bounds[1][2])
    mesh = shp.mesh(mesh_resolution)
    verts, faces = np.asarray(mesh.vertices), np.asarray(mesh.faces)
    rng = np.random.default_rng(seed)
    ps, ns = _surface_samples(shp, verts, faces, n_points, rng)
    pt0, nt0 = _surface_samples(shp, verts, faces, n_points, rng)
    pt, nt = deform.map(pt0, 1.0), deform.map_normals(pt0, nt0, 1.0)
    k = max(3, int(round(corr_fraction * len(verts))))
    idx = np.sort(rng.choice(len(verts), size=min(k, len(verts)), replace=False))
    return ShapePair(ps, ns, pt, nt, verts, deform.map(verts, 1.0), np.stack([idx, idx], axis=1),
                     faces, faces, shp, deform, name=f"{shape}-{deformation}")
