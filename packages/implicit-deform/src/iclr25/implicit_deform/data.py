"""A user's own shapes: meshes (.ply/.obj/.off/.stl) or point clouds (.ply/.npy/.npz/.xyz/.txt/.csv) and
optional correspondences (.npy, (k, 2) integer index pairs).

A mesh gives its vertices (the index space of correspondences) and area-uniform surface samples with face
normals. A point cloud gives its points; an (n, 6) array is read as points and normals. Every error names the
file and what was expected.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.io import DataFileError, existing_file, read_points

__all__ = ["MESH_FORMATS", "CLOUD_FORMATS", "LoadedShape", "load_shape", "load_correspondences", "load_pair"]

MESH_FORMATS = (".ply", ".obj", ".off", ".stl")
CLOUD_FORMATS = (".npy", ".npz", ".xyz", ".txt", ".csv")

import dataclasses  # noqa: E402


@dataclasses.dataclass(frozen=True)
class LoadedShape:
    """Vertices (the correspondence index space), surface samples with normals (``None`` for a bare cloud)
    and faces (``None`` for a point cloud)."""

    vertices: np.ndarray
    points: np.ndarray
    normals: np.ndarray | None
    faces: np.ndarray | None


def load_shape(path: str | os.PathLike[str], *, n_points: int = 20000, seed: int = 0) -> LoadedShape:
    """Read a mesh or point cloud; a mesh is sampled at ``n_points`` area-uniform points with normals."""
    p, suffix = existing_file(Path(path), MESH_FORMATS + CLOUD_FORMATS, "shape")
    if suffix in CLOUD_FORMATS:
        X = read_points(p)
        if X.shape[1] not in (3, 6):
            raise DataFileError(p, f"expected (n, 3) points or (n, 6) points and normals, got shape {X.shape}")
        normals = X[:, 3:6] if X.shape[1] == 6 else None
        if normals is not None and np.any(np.linalg.norm(normals, axis=1) < 1e-12):
            raise DataFileError(p, "normals (columns 4-6) contain zero-length vectors")
        return LoadedShape(X[:, :3], X[:, :3], normals, None)
    import trimesh  # noqa: PLC0415

    try:
        obj = trimesh.load(p, file_type=suffix.lstrip("."), process=False, force=None)
    except Exception as exc:  # noqa: BLE001 - trimesh raises many kinds of errors on corrupt files
        raise DataFileError(p, f"cannot be read as a {suffix} mesh or point cloud ({type(exc).__name__})") from None
    if isinstance(obj, trimesh.Scene):
        geoms = list(obj.geometry.values())
        obj = trimesh.util.concatenate(geoms) if geoms else None
    verts = np.asarray(getattr(obj, "vertices", np.zeros((0, 3))), dtype=np.float64) if obj is not None else \
        np.zeros((0, 3))
    if verts.ndim != 2 or verts.shape[0] == 0 or verts.shape[1] != 3:
        raise DataFileError(p, "holds no vertices")
    if not np.all(np.isfinite(verts)):
        raise DataFileError(p, "vertex coordinates contain NaN or inf")
    faces = np.asarray(getattr(obj, "faces", np.zeros((0, 3))), dtype=np.int64)
    if faces.ndim != 2 or len(faces) == 0:
        return LoadedShape(verts, verts, None, None)
    from .metrics import sample_mesh  # noqa: PLC0415

    mesh = trimesh.Trimesh(verts, faces, process=False)
    if not np.sum(mesh.area_faces) > 0:
        raise DataFileError(p, "the mesh has zero surface area")
    pts, nrm = sample_mesh(mesh, n_points, seed=seed)
    return LoadedShape(verts, pts, nrm, faces)


def load_correspondences(path: str | os.PathLike[str], n_source: int, n_target: int) -> np.ndarray:
    """A (k, 2) integer array of (source vertex, target vertex) index pairs from a ``.npy`` file.

    A 1-D array of length ``n_source`` is read as "source vertex i -> target vertex c[i]" (negative = none).
    """
    p = Path(path)
    if p.suffix.lower() != ".npy":
        raise DataFileError(p, f"correspondences must be a .npy file, got {p.suffix or '(no suffix)'!r}")
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file")
    if p.stat().st_size == 0:
        raise DataFileError(p, "file is empty")
    with open(p, "rb") as f:
        if not f.read(6).startswith(b"\x93NUMPY"):
            raise DataFileError(p, "not a NumPy .npy file (write it with numpy.save)")
    try:
        c = np.load(p, allow_pickle=False)
    except ValueError as exc:
        raise DataFileError(p, f"cannot be read ({exc})") from None
    if not np.issubdtype(c.dtype, np.integer):
        raise DataFileError(p, f"correspondences must be integer indices, got dtype {c.dtype}")
    if c.ndim == 1:
        if len(c) != n_source:
            raise DataFileError(p, f"a 1-D correspondence array must have one entry per source vertex "
                                   f"({n_source}), got {len(c)}")
        idx = np.nonzero(c >= 0)[0]
        c = np.stack([idx, c[idx]], axis=1)
    if c.ndim != 2 or c.shape[1] != 2 or len(c) == 0:
        raise DataFileError(p, f"expected a (k, 2) array of (source, target) vertex indices, got shape {c.shape}")
    if c[:, 0].min() < 0 or c[:, 0].max() >= n_source:
        raise DataFileError(p, f"source indices must lie in [0, {n_source}), got range "
                               f"[{c[:, 0].min()}, {c[:, 0].max()}]")
    if c[:, 1].min() < 0 or c[:, 1].max() >= n_target:
        raise DataFileError(p, f"target indices must lie in [0, {n_target}), got range "
                               f"[{c[:, 1].min()}, {c[:, 1].max()}]")
    return c.astype(np.int64)


def load_pair(source: str | os.PathLike[str], target: str | os.PathLike[str], corr: Any = None, *,
              n_points: int = 20000, seed: int = 0):
    """A :class:`~iclr25.implicit_deform.shapes.ShapePair` from a user's files (no ground truth).

    Without ``corr`` the pair has no correspondences and :func:`fit` runs correspondence-free (Chamfer).
    """
    from .shapes import ShapePair  # noqa: PLC0415

    s = load_shape(source, n_points=n_points, seed=seed)
    t = load_shape(target, n_points=n_points, seed=seed + 1)
    c = (load_correspondences(corr, len(s.vertices), len(t.vertices)) if corr is not None
         else np.zeros((0, 2), dtype=np.int64))
    return ShapePair(s.points, s.normals, t.points, t.normals, s.vertices, t.vertices, c, s.faces, t.faces,
                     name=f"{Path(source).stem}-{Path(target).stem}")
