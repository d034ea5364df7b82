"""The paper's procedural 2-D shape data set II, regenerated from its description.

Six classes in three nested pairs, each pair drawn together so that the smaller shape is a subset of the
larger one: rectangle ⊂ house, arrow ⊂ double arrow, semicircle ⊂ circle. Every pair gets random
anisotropic dilations in U(0.5, 1.5) (the roof height and the arrow head width get their own) and a
random rotation, so shapes of a class differ by non-isometric deformations.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from iclr25.utils.seeding import check_seed

from .space import as_real_array

__all__ = ["ShapeDataset", "shapes_ii", "add_outliers", "rotation", "CLASS_NAMES"]

CLASS_NAMES = ("rectangle", "house", "arrow", "double arrow", "semicircle", "circle")


@dataclasses.dataclass(frozen=True)
class ShapeDataset:
    """Point clouds with integer labels; ``class_names[labels[i]]`` names shape ``i``."""

    points: tuple[np.ndarray, ...]
    labels: np.ndarray
    class_names: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.points)


def _house_template(k: int = 8, half: float = 0.25) -> tuple[np.ndarray, np.ndarray]:
    """A k x k grid square and an equilateral roof on its top edge, filled on a barycentric grid."""
    g = np.linspace(-half, half, k)
    square = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
    left, right = np.array([-half, half]), np.array([half, half])
    apex = np.array([0.0, half + np.sqrt(3) / 2 * 2 * half])
    i, j = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
    keep = (i + j) < k  # strictly inside the barycentric simplex side of the base edge
    t1, t2 = i[keep] / k, j[keep] / k
    roof = t1[:, None] * left + t2[:, None] * right + (1 - t1 - t2)[:, None] * apex
    return square, roof


def _inside_polygon(points: np.ndarray, poly: np.ndarray) -> np.ndarray:
    """Even-odd rule, vectorised over points and edges."""
    x, y = points[:, :1], points[:, 1:]
    x0, y0 = poly[:, 0], poly[:, 1]
    x1, y1 = np.roll(x0, -1), np.roll(y0, -1)
    crosses = (y0 > y) != (y1 > y)
    with np.errstate(divide="ignore", invalid="ignore"):
        x_at = x0 + (y - y0) * (x1 - x0) / (y1 - y0)
    return np.sum(crosses & (x < x_at), axis=1) % 2 == 1


def _arrow_template(k: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """An arrow polygon (shaft and head) filled on a k x k grid; returns (shaft points, head points)."""
    poly = np.array([[0, -0.1], [0, 0.1], [0.2, 0.1], [0.2, 0.3], [0.4, 0], [0.2, -0.3], [0.2, -0.1]])
    gx, gy = np.linspace(-0.1, 0.5, k), np.linspace(-0.5, 0.5, k)
    grid = np.stack(np.meshgrid(gx, gy), -1).reshape(-1, 2)
    pts = grid[_inside_polygon(grid, poly)]
    pts = np.vstack([pts, [[0.4, 0.0]]])  # the tip, which the grid misses
    shaft = pts[:, 0] <= 0.2 + 1e-9
    return pts[shaft], pts[~shaft]


def _disc_template(radius: float = 0.3, rings: int = 5, per_ring: int = 25) -> np.ndarray:
    """Concentric rings, points per ring proportional to the radius, symmetric about the y axis."""
    pts = [np.zeros((1, 2))]
    for r in np.linspace(0, radius, rings)[1:]:
        k = int(per_ring * r / radius)
        t = np.linspace(-np.pi / 2, np.pi / 2, k, endpoint=False)
        half = np.stack([r * np.cos(t), r * np.sin(t)], 1)  # right half, from the bottom (x = 0)
        top = np.array([[0.0, r]])
        mirror = half[half[:, 0] > 1e-9] * np.array([-1.0, 1.0])
        pts += [half, top, mirror]
    return np.vstack(pts)


def rotation(theta: float) -> np.ndarray:
    """The 2-D rotation matrix by the angle ``theta`` (radians), applied as ``X @ rotation(theta)``."""
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s], [s, c]])


def shapes_ii(n_per_class: int = 20, seed: int = 0) -> ShapeDataset:
    """Data set II of the paper: 6 classes of procedural 2-D shapes, ``n_per_class`` each.

    Classes (label order): rectangle, house, arrow, double arrow, semicircle, circle. Sizes: rectangle
    64, house 100, arrow 41, double arrow 82, semicircle 66, circle 123 points.

    Parameters
    ----------
    n_per_class : int
        Shapes per class (the paper uses 20, i.e. 120 shapes).
    seed : int
        Seed of the random dilations and rotations.

    Returns
    -------
    ShapeDataset

    References: paper Sec. 5 (shape retrieval, data set II) and its data-generation notebook.

    Examples
    --------
    >>> d = shapes_ii(2)
    >>> len(d), sorted(set(d.labels.tolist()))
    (12, [0, 1, 2, 3, 4, 5])
    """
    if isinstance(n_per_class, bool) or not isinstance(n_per_class, (int, np.integer)):
        raise TypeError(f"n_per_class must be an integer >= 1, got {type(n_per_class).__name__}")
    if n_per_class < 1:
        raise ValueError(f"n_per_class must be an integer >= 1, got {n_per_class}")
    rng = np.random.default_rng(check_seed(seed))
    square, roof = _house_template()
    shaft, head = _arrow_template()
    disc = _disc_template()
    out: dict[int, list[np.ndarray]] = {c: [] for c in range(6)}
    for _ in range(int(n_per_class)):
        # rectangle / house: width, height, then roof height dilated from the roof base
        w, h, t = rng.uniform(0.5, 1.5, 3)
        sq, rf = square * [w, h], roof * [w, h]
        base = rf[:, 1].min()
        rf = np.column_stack([rf[:, 0], base + (rf[:, 1] - base) * t])
        R = rotation(rng.uniform(0, 2 * np.pi))
        offset = np.vstack([sq, rf]).min(0)
        out[0].append((sq - offset) @ R)
        out[1].append(np.vstack([sq, rf]) @ R - offset @ R)
        # arrow / double arrow: width, height, head spread; the two copies one grid step apart
        w, h, t = rng.uniform(0.5, 1.5), rng.uniform(0.5, 1.5), rng.uniform(1.0, 1.5)
        arrow = np.vstack([shaft * [w, h], head * [w, h * t]])
        step = 0.6 / 15 * w
        arrow = arrow - [arrow[:, 0].min() - step / 2, 0.0]
        double = np.vstack([arrow, arrow * [-1.0, 1.0]])
        R = rotation(rng.uniform(0, 2 * np.pi))
        out[2].append(arrow @ R)
        out[3].append(double @ R)
        # semicircle / circle: an ellipse and its right half
        w, h = rng.uniform(0.5, 1.5, 2)
        ell = disc * [w, h]
        R = rotation(rng.uniform(0, 2 * np.pi))
        out[4].append(ell[ell[:, 0] >= -1e-12] @ R)
        out[5].append(ell @ R)
    points = tuple(x for c in range(6) for x in out[c])
    labels = np.repeat(np.arange(6), int(n_per_class))
    return ShapeDataset(points, labels, CLASS_NAMES)


def add_outliers(X: np.ndarray, fraction: float = 0.1, *, seed: int = 0) -> np.ndarray:
    """``X`` followed by ``round(fraction * n)`` outliers drawn uniformly from the square of twice the
    side of X's bounding box (same centre).

    References: paper Sec. 5 (shape matching with outliers).
    """
    X = as_real_array(X, "X")
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be an (n, d) array with n >= 1, got shape {X.shape}")
    if not 0 <= fraction <= 1:
        raise ValueError(f"fraction must be in [0, 1], got {fraction}")
    rng = np.random.default_rng(check_seed(seed))
    lo, hi = X.min(0), X.max(0)
    centre, half = (lo + hi) / 2, (hi - lo).max()
    k = int(round(fraction * X.shape[0]))
    return np.vstack([X, rng.uniform(centre - half, centre + half, size=(k, X.shape[1]))])
