"""Baselines: SDF linear blend, straight-line correspondence interpolation, and the Lipschitz MLP.

* SDF blend: f_t(x) = (1 - t) f_0(x) + t f_1(x) of the source and target SDFs, meshed by marching cubes.
* Straight-line interpolation: x_t = (1 - t) x_0 + t x_1 of corresponding vertices (source connectivity);
  for a 90 degree twist it shrinks the cross-section at the far end by cos(45 deg) per axis at t = 0.5.
* LipMLP (Liu et al. 2022): a space-time SDF f(x, t) with Lipschitz-normalised layers, fitted to SDF samples
  of the source at t = 0 and the target at t = 1 with loss mean (f - s)^2 + alpha prod_i softplus(c_i); the
  intermediate shapes are its level sets at 0 < t < 1.

References: Liu et al., "Learning Smooth Neural Functions via Lipschitz Regularization", SIGGRAPH 2022,
Eq. 8-10 and Sec. 5.1 (shape interpolation); Sang et al., ICLR 2025, Sec. 5 (baselines).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from scipy.spatial import cKDTree

from iclr25.utils.progress import progress
from iclr25.utils.seeding import check_seed

from .deform import normalisation
from .meshing import grid_points, marching_cubes_grid
from .networks import LipMLP

__all__ = ["sdf_blend_mesh", "sdf_blend_meshes", "straight_line_mesh", "cloud_sdf", "LipMLPResult", "fit_lipmlp"]


def cloud_sdf(points: np.ndarray, normals: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Signed distance from an oriented point cloud: |x - p| signed by (x - p) . n_p of the nearest p."""
    d, i = cKDTree(points).query(np.asarray(query, dtype=np.float64), workers=1)
    s = np.sign(np.sum((query - points[i]) * normals[i], axis=1))
    return np.where(s < 0, -d, d)


def sdf_blend_meshes(sdf0: Callable[[np.ndarray], np.ndarray], sdf1: Callable[[np.ndarray], np.ndarray],
                     times: Sequence[float], lo: Sequence[float], hi: Sequence[float], resolution: int = 64):
    """Meshes of (1 - t) sdf0 + t sdf1 at each of ``times`` (both SDFs evaluated once on the grid)."""
    pts = grid_points(lo, hi, resolution)
    f0, f1 = np.asarray(sdf0(pts)), np.asarray(sdf1(pts))
    return [marching_cubes_grid(((1 - t) * f0 + t * f1).reshape((resolution,) * 3), lo, hi) for t in times]


def sdf_blend_mesh(sdf0, sdf1, t: float, lo, hi, resolution: int = 64):
    """The mesh of the SDF blend (1 - t) sdf0 + t sdf1 at one time ``t``."""
    return sdf_blend_meshes(sdf0, sdf1, [t], lo, hi, resolution)[0]


def straight_line_mesh(source_vertices: np.ndarray, target_vertices: np.ndarray, faces: np.ndarray, t: float):
    """The mesh with vertices (1 - t) x_0 + t x_1 and the source faces (dense correspondences)."""
    import trimesh  # noqa: PLC0415

    v0, v1 = np.asarray(source_vertices, dtype=np.float64), np.asarray(target_vertices, dtype=np.float64)
    if v0.shape != v1.shape:
        raise ValueError(f"source_vertices and target_vertices must match in shape, got {v0.shape} and {v1.shape}")
    return trimesh.Trimesh((1 - t) * v0 + t * v1, faces, process=False)


@dataclasses.dataclass(frozen=True)
class LipMLPResult:
    """A fitted LipMLP space-time SDF (normalised coordinates inside, like DeformResult)."""

    net: LipMLP
    center: np.ndarray
    scale: float
    history: np.ndarray
    train_s: float

    def sdf(self, points: np.ndarray, t: float) -> np.ndarray:
        y = jnp.asarray((np.asarray(points) - self.center) * self.scale, dtype=jnp.float32)
        return np.asarray(_eval(self.net, y, jnp.full((len(y),), t, dtype=jnp.float32))) / self.scale

    def mesh(self, t: float, *, resolution: int = 64):
        from .meshing import marching_cubes_sdf  # noqa: PLC0415

        def field(y):
            return np.asarray(_eval(self.net, jnp.asarray(y, dtype=jnp.float32),
                                    jnp.full((len(y),), t, dtype=jnp.float32)))

        m = marching_cubes_sdf(field, (-1.0,) * 3, (1.0,) * 3, resolution)
        m.vertices = np.asarray(m.vertices) / self.scale + self.center
        return m


@eqx.filter_jit
def _eval(net, y, t):
    return jax.vmap(net)(y, t)


def _samples(points: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
    near = points[rng.integers(0, len(points), n)] + rng.normal(scale=0.02, size=(n, 3))
    mid = points[rng.integers(0, len(points), n // 2)] + rng.normal(scale=0.1, size=(n // 2, 3))
    return np.concatenate([near, mid])


@eqx.filter_jit
def _lip_chunk(params, static, opt_state, key, data, alpha, n, lr):
    opt = optax.adam(lr)

    def loss_fn(p, k):
        net = eqx.combine(p, static)
        i = jax.random.randint(k, (data["batch"].shape[0],), 0, data["x"].shape[0])
        pred = jax.vmap(net)(data["x"][i], data["t"][i])
        return jnp.mean((pred - data["s"][i]) ** 2) + alpha * net.lipschitz_bound()

    def body(carry, _):
        p, st, k = carry
        k, sub = jax.random.split(k)
        loss, g = jax.value_and_grad(loss_fn)(p, sub)
        upd, st = opt.update(g, st, p)
        return (optax.apply_updates(p, upd), st, k), loss

    (params, opt_state, key), hist = jax.lax.scan(body, (params, opt_state, key), jnp.arange(n))
    return params, opt_state, key, hist


def fit_lipmlp(source_points: np.ndarray, target_points: np.ndarray,
               sdf0: Callable[[np.ndarray], np.ndarray], sdf1: Callable[[np.ndarray], np.ndarray], *,
               width: int = 64, depth: int = 4, iters: int = 1500, batch: int = 1024, lr: float = 1e-3,
               alpha: float = 1e-10, n_samples: int = 30000, chunk: int = 100, seed: int = 0,
               show_progress: bool = True, device: Any = None) -> LipMLPResult:
    """Fit the LipMLP space-time SDF to ``sdf0`` samples at t = 0 and ``sdf1`` samples at t = 1, on ``device``
    (as in :func:`~iclr25.implicit_deform.fit`; float32).

    Samples: points near each surface (noise 0.02 and 0.1) and uniform in the padded box, ``n_samples`` per
    time. ``alpha`` weights the Lipschitz bound prod_i softplus(c_i) (default 1e-10, the weight used by the
    re-implementation in Sang et al.'s reference code).
    """
    from .deform import on_device  # noqa: PLC0415

    with on_device(device):
        return _fit_lipmlp(source_points, target_points, sdf0, sdf1, width=width, depth=depth, iters=iters,
                           batch=batch, lr=lr, alpha=alpha, n_samples=n_samples, chunk=chunk, seed=seed,
                           show_progress=show_progress)


def _fit_lipmlp(source_points: np.ndarray, target_points: np.ndarray,
                sdf0: Callable[[np.ndarray], np.ndarray], sdf1: Callable[[np.ndarray], np.ndarray], *,
                width: int, depth: int, iters: int, batch: int, lr: float, alpha: float, n_samples: int,
                chunk: int, seed: int, show_progress: bool) -> LipMLPResult:
    seed = check_seed(seed)
    if iters < 1 or batch < 1:
        raise ValueError(f"iters and batch must be >= 1, got {iters} and {batch}")
    center, scale = normalisation(source_points, target_points)
    rng = np.random.default_rng(seed)
    xs, ts, ss = [], [], []
    for t, pts, f in ((0.0, source_points, sdf0), (1.0, target_points, sdf1)):
        x = _samples(np.asarray(pts), rng, n_samples // 2)
        u = rng.uniform(-1.0, 1.0, size=(n_samples // 4, 3)) / scale + center
        x = np.concatenate([x, u])
        xs.append((x - center) * scale)
        ts.append(np.full(len(x), t))
        ss.append(np.asarray(f(x)) * scale)
    data = {"x": jnp.asarray(np.concatenate(xs), dtype=jnp.float32),
            "t": jnp.asarray(np.concatenate(ts), dtype=jnp.float32),
            "s": jnp.asarray(np.concatenate(ss), dtype=jnp.float32), "batch": jnp.zeros((batch,))}
    net = LipMLP(width, depth, key=jax.random.key(seed))
    params, static = eqx.partition(net, eqx.is_inexact_array)
    opt_state = optax.adam(lr).init(params)
    key = jax.random.key(seed + 1)
    hist = []
    t0 = time.perf_counter()
    with progress(total=iters, desc="LipMLP", disable=None if show_progress else True) as bar:
        done = 0
        while done < iters:
            n = min(chunk, iters - done)
            params, opt_state, key, h = _lip_chunk(params, static, opt_state, key, data, jnp.float32(alpha), n, lr)
            hist.append(np.asarray(h))
            done += n
            bar.update(n)
    return LipMLPResult(eqx.combine(params, static), center, float(scale), np.concatenate(hist),
                        time.perf_counter() - t0)
