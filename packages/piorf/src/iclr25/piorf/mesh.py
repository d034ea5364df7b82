"""An unstructured triangle mesh of the channel, graded towards the cylinder, with MeshGraphNets node types.

Points are laid on rings around the cylinder whose spacing grows linearly with the distance from its surface,
from ``h_min`` to ``h_max``, then on a jittered hexagonal background lattice of spacing ``h_max`` and on the
channel boundary; :class:`scipy.spatial.Delaunay` triangulates them and the triangles inside the cylinder are
dropped.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .graph import mesh_edges

__all__ = ["NodeType", "TriangleMesh", "channel_mesh"]


class NodeType:
    """MeshGraphNets node types (the one-hot has ``SIZE`` entries)."""

    NORMAL = 0
    INFLOW = 4
    OUTFLOW = 5
    WALL = 6
    SIZE = 9


@dataclasses.dataclass(frozen=True)
class TriangleMesh:
    """A 2-D triangle mesh: ``pos`` (N, 2), ``cells`` (F, 3), symmetric ``edge_index`` (2, E), ``node_type`` (N,)."""

    pos: np.ndarray
    cells: np.ndarray
    edge_index: np.ndarray
    node_type: np.ndarray

    @property
    def n_nodes(self) -> int:
        return len(self.pos)


def _size(r: np.ndarray, radius: float, h_min: float, h_max: float, grade: float) -> np.ndarray:
    return h_min + (h_max - h_min) * np.clip((r - radius) / (grade * radius), 0.0, 1.0)


def channel_mesh(length: float, height: float, center: tuple[float, float], radius: float, *,
                 h_min: float = 1.0, h_max: float = 5.0, grade: float = 3.0, seed: int = 0) -> TriangleMesh:
    """Triangulate the channel ``[0, length] x [0, height]`` minus a disc, graded towards the disc.

    Parameters
    ----------
    length, height
        Channel size.
    center, radius
        The cylinder.
    h_min, h_max
        Edge length at the cylinder surface and far from it.
    grade
        The size reaches ``h_max`` at ``grade * radius`` from the surface.
    seed
        Seed of the background jitter.
    """
    if not (0 < h_min <= h_max):
        raise ValueError(f"h_min and h_max must satisfy 0 < h_min <= h_max, got {h_min}, {h_max}")
    cx, cy = center
    if not (radius > 0 and radius + h_min < cy < height - radius - h_min and radius < cx < length - radius):
        raise ValueError(f"the cylinder (center {center}, radius {radius}) must lie inside the channel")
    rng = np.random.default_rng(seed)
    sizes = (radius, h_min, h_max, grade)
    pts, kind, r_rings = _cylinder_rings(length, height, center, sizes)
    bg = _background_lattice(length, height, center, h_max, r_rings, rng)
    pts.append(bg)
    kind.append(np.full(len(bg), NodeType.NORMAL))
    for p, k in _channel_boundary(length, height, center, sizes):
        pts.append(p)
        kind.append(k)
    return _triangulate(np.concatenate(pts), np.concatenate(kind).astype(np.int64), center, radius, h_min)


def _cylinder_rings(length: float, height: float, center: tuple[float, float], sizes: tuple[float, float, float, float]
                    ) -> tuple[list[np.ndarray], list[np.ndarray], float]:
    """Concentric node rings around the cylinder (``sizes`` = radius, h_min, h_max, grade), spaced by the local
    edge length and staggered by half a node from ring to ring; ring 0 is the wall, the others keep the nodes
    half an edge away from the channel walls. Returns the rings, their node types and the radius past the
    last ring."""
    radius, h_min, h_max, grade = sizes
    cx, cy = center
    pts, kind = [], []
    r, k = float(radius), 0
    r_stop = radius * (1.0 + grade) + h_max
    while r < r_stop:
        h = float(_size(np.array(r), radius, h_min, h_max, grade))
        n = max(int(round(2 * np.pi * r / h)), 6)
        theta = 2 * np.pi * (np.arange(n) + 0.5 * (k % 2)) / n
        ring = np.stack([cx + r * np.cos(theta), cy + r * np.sin(theta)], axis=1)
        if k > 0:
            local = _size(np.full(n, r), radius, h_min, h_max, grade)
            inside = ((ring[:, 1] > 0.5 * local) & (ring[:, 1] < height - 0.5 * local)
                      & (ring[:, 0] > 0.5 * local) & (ring[:, 0] < length - 0.5 * local))
            ring = ring[inside]
        pts.append(ring)
        kind.append(np.full(len(ring), NodeType.WALL if k == 0 else NodeType.NORMAL))
        r += h * np.sqrt(3) / 2
        k += 1
    return pts, kind, r


def _background_lattice(length: float, height: float, center: tuple[float, float], h_max: float, r_rings: float,
                        rng: np.random.Generator) -> np.ndarray:
    """A hexagonal lattice of spacing ``h_max`` with uniform jitter (±0.15 h_max), outside the rings
    (``r_rings`` + 0.3 h_max from the centre) and half an edge away from the top and bottom walls."""
    cx, cy = center
    dy = h_max * np.sqrt(3) / 2
    ys = np.arange(dy, height - 0.5 * dy, dy)
    bg = []
    for row, y in enumerate(ys):
        xs = np.arange(h_max * (0.5 + 0.5 * (row % 2)), length - 0.4 * h_max, h_max)
        bg.append(np.stack([xs, np.full_like(xs, y)], axis=1))
    bg = np.concatenate(bg) + rng.uniform(-0.15, 0.15, size=(sum(len(b) for b in bg), 2)) * h_max
    dist = np.hypot(bg[:, 0] - cx, bg[:, 1] - cy)
    bg = bg[dist > r_rings + 0.3 * h_max]
    return bg[(bg[:, 1] > 0.5 * h_max) & (bg[:, 1] < height - 0.5 * h_max)]


def _channel_boundary(length: float, height: float, center: tuple[float, float],
                      sizes: tuple[float, float, float, float]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The channel boundary as (points, node types) pieces: the bottom and top walls, finer next to the
    cylinder (spacing from the edge-size field at the wall point), then the inflow and outflow sides."""
    radius, h_min, h_max, grade = sizes
    cx, cy = center
    wall_x = [0.0]
    while wall_x[-1] < length:
        h = float(_size(np.array(np.hypot(wall_x[-1] - cx, min(cy, height - cy))), radius, h_min, h_max, grade))
        wall_x.append(wall_x[-1] + h)
    wall_x = np.array(wall_x[:-1] + [length]) if length - wall_x[-2] > 0.5 * h_max else np.array(wall_x[:-2] + [length])
    pieces = [(np.stack([wall_x, np.full_like(wall_x, y)], axis=1), np.full(len(wall_x), NodeType.WALL))
              for y in (0.0, height)]
    n_side = max(int(round(height / h_max)), 2)
    side_y = np.linspace(0.0, height, n_side + 1)[1:-1]
    for x, t in ((0.0, NodeType.INFLOW), (length, NodeType.OUTFLOW)):
        pieces.append((np.stack([np.full_like(side_y, x), side_y], axis=1), np.full(len(side_y), t)))
    return pieces


def _triangulate(pos: np.ndarray, node_type: np.ndarray, center: tuple[float, float], radius: float,
                 h_min: float) -> TriangleMesh:
    """Delaunay triangulation of the nodes without the triangles inside the cylinder (centroid within
    ``radius``) and the slivers (area below 1e-6 h_min²); nodes no triangle uses are dropped and renumbered."""
    from scipy.spatial import Delaunay

    cx, cy = center
    tri = Delaunay(pos)
    cells = tri.simplices
    cen = pos[cells].mean(axis=1)
    a, b, c = pos[cells[:, 0]], pos[cells[:, 1]], pos[cells[:, 2]]
    area = 0.5 * np.abs((b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0]))
    keep = (np.hypot(cen[:, 0] - cx, cen[:, 1] - cy) > radius) & (area > 1e-6 * h_min ** 2)
    cells = cells[keep]
    used = np.zeros(len(pos), dtype=bool)
    used[cells.ravel()] = True
    remap = np.cumsum(used) - 1
    pos, node_type, cells = pos[used], node_type[used], remap[cells]
    return TriangleMesh(pos.astype(np.float64), cells.astype(np.int64), mesh_edges(cells, len(pos)), node_type)
