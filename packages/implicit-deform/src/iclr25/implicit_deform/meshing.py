"""Marching cubes of implicit functions, mesh export (.ply/.obj) and a turntable PNG strip of meshes.

References: Lorensen & Cline (1987) marching cubes via ``skimage.measure.marching_cubes``; the grid is the
padded bounding box, as in the reference's evaluation (a closed, bounded grid gives watertight meshes).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from iclr25.utils.io import atomic_path

__all__ = ["marching_cubes_sdf", "marching_cubes_grid", "grid_points", "export_mesh", "turntable_strip"]


def grid_points(lo: Sequence[float], hi: Sequence[float], resolution: int) -> np.ndarray:
    """The (resolution^3, 3) points of a regular grid over the box [lo, hi], in 'ij' order."""
    axes = [np.linspace(lo[i], hi[i], resolution) for i in range(3)]
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)


def marching_cubes_sdf(field: Callable[[np.ndarray], np.ndarray], lo: Sequence[float], hi: Sequence[float],
                       resolution: int = 64, *, chunk: int = 65536):
    """The zero level set of ``field`` (points (n, 3) -> values (n,), negative inside) as a trimesh.Trimesh.

    An empty level set gives an empty mesh (no vertices), not an error.
    """
    if isinstance(resolution, bool) or not isinstance(resolution, (int, np.integer)) or resolution < 8:
        raise ValueError(f"resolution must be an integer >= 8, got {resolution!r}")
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    pts = grid_points(lo, hi, resolution)
    vals = np.empty(len(pts))
    for s in range(0, len(pts), chunk):
        block = pts[s:s + chunk]
        if len(block) < chunk:  # pad, so one compiled program serves every block
            padded = np.concatenate([block, np.zeros((chunk - len(block), 3))])
            vals[s:] = np.asarray(field(padded))[:len(block)]
        else:
            vals[s:s + chunk] = np.asarray(field(block))
    return marching_cubes_grid(vals.reshape(resolution, resolution, resolution), lo, hi)


def marching_cubes_grid(values: np.ndarray, lo: Sequence[float], hi: Sequence[float]):
    """The zero level set of grid ``values`` (r, r, r) sampled on the box [lo, hi] (closed at the boundary)."""
    import trimesh  # noqa: PLC0415
    from skimage.measure import marching_cubes  # noqa: PLC0415

    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    vol = np.array(values, dtype=np.float64)
    resolution = vol.shape[0]
    # close the surface at the grid boundary: the outer layer is outside
    vol[[0, -1], :, :] = np.maximum(vol[[0, -1], :, :], 1e-3)
    vol[:, [0, -1], :] = np.maximum(vol[:, [0, -1], :], 1e-3)
    vol[:, :, [0, -1]] = np.maximum(vol[:, :, [0, -1]], 1e-3)
    if not (vol.min() < 0 < vol.max()):
        return trimesh.Trimesh(np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64), process=False)
    spacing = tuple((hi - lo) / (resolution - 1))
    verts, faces, _, _ = marching_cubes(vol, level=0.0, spacing=spacing)
    return trimesh.Trimesh(verts + lo, faces, process=True)


def export_mesh(mesh, path: str | os.PathLike[str]) -> Path:
    """Write ``mesh`` as .ply (binary) or .obj, atomically."""
    p = Path(path)
    fmt = p.suffix.lower().lstrip(".")
    if fmt not in ("ply", "obj"):
        raise ValueError(f"mesh path must end in .ply or .obj, got {str(p)!r}")
    data = mesh.export(file_type=fmt)
    with atomic_path(p) as tmp:
        Path(tmp).write_bytes(data if isinstance(data, bytes) else data.encode())
    return p


def _draw(ax, mesh, elev: float, azim: float, color: str, lim: tuple[np.ndarray, np.ndarray],
          max_faces: int = 20000) -> None:
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection  # noqa: PLC0415

    ax.set_axis_off()
    if len(mesh.faces):
        faces = np.asarray(mesh.faces)
        if len(faces) > max_faces:  # keep the figure light: a uniform subset of faces reads the same
            faces = faces[np.linspace(0, len(faces) - 1, max_faces).astype(int)]
        tri = np.asarray(mesh.vertices)[faces]
        n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        n /= np.linalg.norm(n, axis=1, keepdims=True) + 1e-12
        light = np.array([0.4, -0.5, 0.75])
        shade = 0.35 + 0.65 * np.clip(n @ (light / np.linalg.norm(light)), 0, 1)
        import matplotlib.colors as mcolors  # noqa: PLC0415

        base = np.array(mcolors.to_rgb(color))
        ax.add_collection3d(Poly3DCollection(tri, facecolors=shade[:, None] * base, edgecolor="none"))
    c, h = (lim[0] + lim[1]) / 2, (lim[1] - lim[0]).max() / 2
    ax.set_xlim(c[0] - h, c[0] + h)
    ax.set_ylim(c[1] - h, c[1] + h)
    ax.set_zlim(c[2] - h, c[2] + h)
    ax.view_init(elev=elev, azim=azim)


def turntable_strip(rows: dict[str, Sequence], times: Sequence[float], path: str | os.PathLike[str], *,
                    elev: float = 20.0, azim: float = 35.0, max_faces: int = 20000) -> Path:
    """A PNG grid: one row per entry of ``rows`` (name -> meshes, one per time), one column per time."""
    from iclr25.utils.plotting import savefig, subplots  # noqa: PLC0415

    names = list(rows)
    allv = [np.asarray(m.vertices) for r in rows.values() for m in r if len(m.vertices)]
    allv = np.concatenate(allv) if allv else np.zeros((1, 3))
    lim = (allv.min(axis=0), allv.max(axis=0))
    fig, axes = subplots(len(names), len(times), size=(2.0, 2.0), subplot_kw={"projection": "3d"}, squeeze=False)
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:gray"]
    for i, name in enumerate(names):
        for j, t in enumerate(times):
            ax = axes[i][j]
            _draw(ax, rows[name][j], elev, azim, colors[i % len(colors)], lim, max_faces)
            if i == 0:
                ax.set_title(f"t = {t:g}", fontsize=9)
            if j == 0:
                ax.text2D(-0.05, 0.5, name, transform=ax.transAxes, rotation=90, va="center", ha="right",
                          fontsize=9)
    fig.subplots_adjust(wspace=0.0, hspace=0.0)
    return savefig(fig, path)
