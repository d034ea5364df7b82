"""One evaluation protocol for the demo, ``repro`` and ``fit``: meshes of every method at the requested times,
scored against the exact intermediate shapes (built-in pairs) or against the input clouds (a user's pair).

References: Sang et al., ICLR 2025, Sec. 5 (CD/HD of intermediate shapes against ground truth).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from .metrics import ShapeMetrics, compare_meshes, eikonal_deviation, sample_mesh

__all__ = ["MethodScores", "score_meshes", "eikonal_near_surface", "gt_meshes"]


@dataclasses.dataclass(frozen=True)
class MethodScores:
    """Metrics of one method's meshes at each time (``times[i]`` -> ``metrics[i]``)."""

    name: str
    times: tuple[float, ...]
    metrics: tuple[ShapeMetrics, ...]

    def mean(self, field: str) -> float:
        return float(np.mean([getattr(m, field) for m in self.metrics]))

    def at(self, t: float) -> ShapeMetrics:
        return self.metrics[self.times.index(t)]


def score_meshes(name: str, meshes: Sequence, pair, times: Sequence[float], *, n: int = 20000,
                 seed: int = 0) -> MethodScores:
    """Score ``meshes`` (one per time) against the exact intermediate shapes of a built-in ``pair``.

    The reference volume is the exact source volume (every built-in deformation preserves volume).
    """
    vol = pair.shape.volume
    out = [compare_meshes(m, pair.gt_mesh(t), vol, n=n, seed=seed) for t, m in zip(times, meshes, strict=True)]
    return MethodScores(name, tuple(float(t) for t in times), tuple(out))


def gt_meshes(pair, times: Sequence[float]) -> list:
    return [pair.gt_mesh(t) for t in times]


def eikonal_near_surface(result, pair, t: float, *, n: int = 4000, sigma: float = 0.05, seed: int = 0) -> float:
    """mean | |grad f(x, t)| - 1 | at exact surface points of the shape at ``t`` moved by N(0, sigma^2)."""
    rng = np.random.default_rng(seed)
    if pair.has_ground_truth:
        p, _ = pair.gt_points(t, n, seed=seed + 3)
    else:  # a user's pair: the advected source cloud stands in for the surface at t
        src = pair.source_points[rng.integers(0, len(pair.source_points), n)]
        p = result.advect(src, t)
    x = p + sigma * rng.standard_normal(p.shape)
    return eikonal_deviation(result.sdf_gradient(x, t))


def mesh_points(mesh, n: int = 20000, seed: int = 0) -> np.ndarray:
    return sample_mesh(mesh, n, seed=seed)[0]
