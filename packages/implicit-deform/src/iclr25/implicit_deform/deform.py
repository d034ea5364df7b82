"""Fitting a time-varying implicit surface and an explicit velocity field to a pair of point clouds.

The staged schedule of the paper (Adam, learning rate halved every ``lr_halve_every`` iterations of the whole
run, floor ``lr_floor``; updates with non-finite gradients are skipped):

1. **Velocity** (v only): correspondence matching |x_T - y|^2 of the advected sparse correspondences (or the
   Chamfer distance to the target without correspondences), smoothness |dt (v - alpha Lap v)|^2 and divergence
   (dt div v)^2 at trajectory points.
2. **SDF** (f only, v frozen): MLSE residual^2 at surface and off-surface trajectory points, Eikonal on both,
   |f| and normal alignment on the source at t=0 and the target at t=1, |f| at the intermediate advected
   surface points, the area regulariser exp(-100 |f|) on uniform space-time samples.
3. **Fine-tune** (f only): the same loss with weight ``w_finetune`` on |f| at the advected points.

Because v is frozen in stages 2-3, the trajectories of a pool of surface and off-surface points, and v and
J_v = dv/dx along them, are computed once; stage 2-3 iterations then cost only the passes through f. Every
stage runs ``chunk`` iterations per call of one jitted ``lax.scan``.

References: Sang et al., ICLR 2025, Sec. 4 (Eq. 10-14, the total loss), Sec. 5.1 and App. B (training
schedule: velocity first, then the implicit field with v frozen, then fine-tuning), the reference's
configuration for the loss weights.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from scipy.spatial import cKDTree

from iclr25.utils.progress import progress
from iclr25.utils.seeding import check_seed

from . import losses as L
from .integrate import INTEGRATORS, integrate
from .networks import ImplicitNet, VelocityNet

__all__ = ["DeformConfig", "DeformResult", "PRESETS", "fit", "normalisation"]


@dataclasses.dataclass(frozen=True)
class DeformConfig:
    """Every hyperparameter of :func:`fit`; defaults are the CPU-sized ``"repro"`` preset.

    ``levelset`` is ``"mlse"`` (modified level-set equation, residual with ``r_sign * r_coef * f n^T J n``) or
    ``"olse"`` (the ordinary one, the paper's ablation). ``w_div = 0`` is the reference's released setting.
    """

    sdf_width: int = 64
    sdf_depth: int = 4
    beta: float = 100.0
    init_radius: float = 0.4
    vel_width: int = 64
    vel_depth: int = 4
    vel_activation: str = "silu"
    time_dependent: bool = False
    n_steps: int = 5
    integrator: str = "rk4"
    levelset: str = "mlse"
    r_sign: float = -1.0
    r_coef: float = 1.0
    w_levelset: float = 100.0
    w_eikonal: float = 10.0
    w_eikonal_off: float = 10.0
    w_surface: float = 100.0
    w_normal: float = 100.0
    w_onsurf: float = 100.0
    w_area: float = 30.0
    area_beta: float = 100.0
    w_match: float = 200.0
    w_smooth: float = 20.0
    smooth_alpha: float = 0.01
    w_div: float = 10.0
    w_finetune: float = 3000.0
    correspondence_free: bool = False
    velocity_iters: int = 300
    sdf_iters: int = 900
    finetune_iters: int = 150
    lr: float = 1e-3
    lr_halve_every: int = 450
    lr_floor: float = 5e-6
    batch: int = 256
    n_reg: int = 64
    pool: int = 10000
    knn: int = 50
    chunk: int = 50

    def __post_init__(self) -> None:
        ints = ("sdf_width", "sdf_depth", "vel_width", "vel_depth", "n_steps", "batch", "n_reg", "pool", "knn",
                "chunk", "lr_halve_every")
        for name in ints:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        for name in ("velocity_iters", "sdf_iters", "finetune_iters"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
        if self.integrator not in INTEGRATORS:
            raise ValueError(f"integrator must be one of {INTEGRATORS}, got {self.integrator!r}")
        if self.levelset not in ("mlse", "olse"):
            raise ValueError(f"levelset must be 'mlse' or 'olse', got {self.levelset!r}")
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.type in ("float",) and (not isinstance(value, (int, float)) or not math.isfinite(value)):
                raise ValueError(f"{f.name} must be a finite number, got {value!r}")
            if f.name.startswith("w_") and value < 0:
                raise ValueError(f"{f.name} must be >= 0, got {value!r}")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr!r}")

    @property
    def total_iters(self) -> int:
        return self.velocity_iters + self.sdf_iters + self.finetune_iters

    def replace(self, **changes: Any) -> DeformConfig:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DeformConfig:
        from iclr25.utils.io import dataclass_from_mapping  # noqa: PLC0415

        return dataclass_from_mapping(cls, d, what="DeformConfig")

    @classmethod
    def preset(cls, name: str, **changes: Any) -> DeformConfig:
        """A named preset (``"test"``, ``"repro"``, ``"paper"``) with optional overrides."""
        if name not in PRESETS:
            raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {name!r}")
        return dataclasses.replace(PRESETS[name], **changes)


PRESETS: dict[str, DeformConfig] = {
    # seconds on 2 CPU cores: the tests, the demo and the quickstart (they share its compiled programs)
    "test": DeformConfig(sdf_width=48, sdf_depth=3, vel_width=32, vel_depth=3, velocity_iters=300,
                         sdf_iters=600, finetune_iters=100, lr_halve_every=400, batch=128, n_reg=32, pool=4000,
                         chunk=50),
    "repro": DeformConfig(),
    # the reference's scale (GPU-sized): 8x256 nets, T = 10, 15k iterations, batch 4k
    "paper": DeformConfig(sdf_width=256, sdf_depth=8, vel_width=256, vel_depth=8, n_steps=10, velocity_iters=4000,
                          sdf_iters=8000, finetune_iters=3000, lr_halve_every=2000, batch=4096, n_reg=256,
                          init_radius=0.5, chunk=100),
}


def _lr(config: DeformConfig) -> optax.Schedule:
    return optax.exponential_decay(config.lr, config.lr_halve_every, 0.5, staircase=True, end_value=config.lr_floor)


def _optimizer(config: DeformConfig, offset: int | jax.Array) -> optax.GradientTransformation:
    sched = _lr(config)
    return optax.apply_if_finite(optax.adam(lambda i: sched(i + offset)), max_consecutive_errors=1_000_000)


def normalisation(*clouds: np.ndarray, extent: float = 0.8) -> tuple[np.ndarray, float]:
    """(center, scale) mapping the union bounding box of ``clouds`` into [-extent, extent]^3: y = (x - c) s."""
    allp = np.concatenate([np.asarray(c, dtype=np.float64) for c in clouds], axis=0)
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    center = (lo + hi) / 2
    half = float(np.max(hi - lo) / 2)
    if not half > 0:
        raise ValueError("the point clouds span no volume (all points coincide)")
    return center, extent / half


# ----------------------------------------------------------------------------------------------- stage 1
_DYNAMIC = ("w_levelset", "w_eikonal", "w_eikonal_off", "w_surface", "w_normal", "w_onsurf", "w_area", "area_beta",
            "w_match", "w_smooth", "smooth_alpha", "w_div", "w_finetune", "r_sign", "r_coef")


def _split_config(config: DeformConfig) -> tuple[DeformConfig, dict[str, jax.Array]]:
    """The config without its loss weights (a static jit argument) and the weights as arrays (traced), so that
    ablations that change only weights reuse one compiled program."""
    w = {name: jnp.float32(getattr(config, name)) for name in _DYNAMIC}
    if config.levelset == "olse":
        w["r_coef"] = jnp.float32(0.0)
    static = config.replace(levelset="mlse", velocity_iters=0, sdf_iters=0, finetune_iters=0,
                            **{name: 0.0 for name in _DYNAMIC})
    return static, w


def _velocity_loss(vel_params, vel_static, data, key, w, config: DeformConfig):
    v = eqx.combine(vel_params, vel_static)
    T = config.n_steps
    dt = 1.0 / T
    k1, k2, k3, k4 = jax.random.split(key, 4)
    terms = {}
    if config.correspondence_free:
        i_s = jax.random.randint(k1, (config.batch,), 0, data["src"].shape[0])
        i_t = jax.random.randint(k2, (config.batch,), 0, data["tgt"].shape[0])
        traj = integrate(v, data["src"][i_s], T, method=config.integrator)
        terms["match"] = L.chamfer_loss(traj[-1], data["tgt"][i_t])
    else:
        n_c = min(config.batch, data["corr_src"].shape[0])
        i_c = jax.random.randint(k1, (n_c,), 0, data["corr_src"].shape[0])
        traj = integrate(v, data["corr_src"][i_c], T, method=config.integrator)
        terms["match"] = L.matching(traj[-1], data["corr_tgt"][i_c])
    i_r = jax.random.randint(k3, (config.n_reg,), 0, data["src"].shape[0])
    u = jax.random.uniform(k4, (max(1, config.n_reg // 2), 3), minval=data["lo"], maxval=data["hi"])
    reg_traj = integrate(v, jnp.concatenate([data["src"][i_r], u]), T, method=config.integrator)[:-1]
    x = jax.lax.stop_gradient(reg_traj.reshape(-1, 3))
    t = jnp.repeat(jnp.arange(T, dtype=jnp.float32) * dt, reg_traj.shape[1])
    vel, div, lap = L.divergence_and_laplacian(v, x, t)
    terms["smooth"] = jnp.mean(jnp.sum((dt * (vel - w["smooth_alpha"] * lap)) ** 2, axis=-1))
    terms["div"] = jnp.mean((dt * div) ** 2)
    total = w["w_match"] * terms["match"] + w["w_smooth"] * terms["smooth"] + w["w_div"] * terms["div"]
    return total, terms


@eqx.filter_jit
def _velocity_chunk(vel_params, vel_static, opt_state, key, data, w, n, config: DeformConfig,
                    stage_offset: jax.Array):
    opt = _optimizer(config, stage_offset)

    def body(carry, i):
        params, state, k = carry
        k, sub = jax.random.split(k)
        (loss, terms), grads = jax.value_and_grad(_velocity_loss, has_aux=True)(params, vel_static, data, sub,
                                                                               w, config)
        updates, state = opt.update(grads, state, params)
        params = optax.apply_updates(params, updates)
        return (params, state, k), {"loss": loss, **terms}

    (vel_params, opt_state, key), hist = jax.lax.scan(body, (vel_params, opt_state, key), jnp.arange(n))
    return vel_params, opt_state, key, hist


# ---------------------------------------------------------------------------------------------- stage 2-3
def _sdf_batch(data, key, config: DeformConfig) -> dict[str, Any]:
    """One SDF-stage batch: ``x``, ``t`` (points on the source trajectories, on the other trajectories, on the
    target, uniform in space-time, in that order), the trajectories' velocities ``vel`` and Jacobians ``jac``, the
    source / target indices ``i_s`` / ``i_t`` and the counts ``n_s`` / ``n_o`` of source / other trajectory points."""
    T = config.n_steps
    B = config.batch
    k1, k2, k3, k4, k5 = jax.random.split(key, 5)
    i_s = jax.random.randint(k1, (B,), 0, data["S_x"].shape[1])
    i_o = jax.random.randint(k2, (B + B // 4,), 0, data["O_x"].shape[1])
    i_t = jax.random.randint(k3, (B,), 0, data["tgt"].shape[0])
    n_u = max(1, B // 4)
    u = jax.random.uniform(k4, (n_u, 3), minval=data["lo"], maxval=data["hi"])
    t_u = jax.random.uniform(k5, (n_u,))
    tk = jnp.arange(T + 1, dtype=jnp.float32) / T
    sx, ox = data["S_x"][:, i_s], data["O_x"][:, i_o]
    x = jnp.concatenate([sx.reshape(-1, 3), ox.reshape(-1, 3), data["tgt"][i_t], u])
    t = jnp.concatenate([jnp.repeat(tk, B), jnp.repeat(tk, ox.shape[1]), jnp.ones(B), t_u])
    vel = jnp.concatenate([data["S_v"][:, i_s].reshape(-1, 3), data["O_v"][:, i_o].reshape(-1, 3)])
    jac = jnp.concatenate([data["S_j"][:, i_s].reshape(-1, 3, 3), data["O_j"][:, i_o].reshape(-1, 3, 3)])
    return {"x": x, "t": t, "vel": vel, "jac": jac, "i_s": i_s, "i_t": i_t,
            "n_s": sx.shape[0] * sx.shape[1], "n_o": ox.shape[0] * ox.shape[1]}


def _sdf_loss(sdf_params, sdf_static, data, key, w, w_onsurf, config: DeformConfig):
    f = eqx.combine(sdf_params, sdf_static)
    T = config.n_steps
    B = config.batch
    b = _sdf_batch(data, key, config)
    i_s, i_t, n_s, n_o, vel, jac = b["i_s"], b["i_t"], b["n_s"], b["n_o"], b["vel"], b["jac"]
    val, gx, gt = L.sdf_and_gradients(f, b["x"], b["t"])
    n_traj = n_s + n_o
    r = L.levelset_residual(val[:n_traj], gx[:n_traj], gt[:n_traj], vel, jac, sign=w["r_sign"], coef=w["r_coef"])
    vs = val[:n_s].reshape(T + 1, B)
    g_s = gx[:n_s].reshape(T + 1, B, 3)
    v_t, g_t = val[n_traj:n_traj + B], gx[n_traj:n_traj + B]
    terms = {
        "levelset": jnp.mean(r**2),
        "eikonal": L.eikonal(gx[:n_s]),
        "eikonal_off": L.eikonal(jnp.concatenate([gx[n_s:n_traj], gx[n_traj + B:]])),
        "surface": 0.5 * (jnp.mean(jnp.abs(vs[0])) + jnp.mean(jnp.abs(v_t))),
        "normal": 0.5 * (data["has_src_n"] * L.normal_alignment(g_s[0], data["src_n"][i_s])
                         + data["has_tgt_n"] * L.normal_alignment(g_t, data["tgt_n"][i_t])),
        "onsurf": jnp.mean(jnp.abs(vs[1:T])) if T > 1 else jnp.zeros(()),
        "area": L.area_regulariser(val[n_traj + B:], w["area_beta"]),
    }
    total = (w["w_levelset"] * terms["levelset"] + w["w_eikonal"] * terms["eikonal"]
             + w["w_eikonal_off"] * terms["eikonal_off"] + w["w_surface"] * terms["surface"]
             + w["w_normal"] * terms["normal"] + w_onsurf * terms["onsurf"] + w["w_area"] * terms["area"])
    return total, terms


@eqx.filter_jit
def _sdf_chunk(sdf_params, sdf_static, opt_state, key, data, w, w_onsurf, n, config: DeformConfig,
               stage_offset: jax.Array):
    opt = _optimizer(config, stage_offset)

    def body(carry, i):
        params, state, k = carry
        k, sub = jax.random.split(k)
        (loss, terms), grads = jax.value_and_grad(_sdf_loss, has_aux=True)(params, sdf_static, data, sub,
                                                                          w, w_onsurf, config)
        updates, state = opt.update(grads, state, params)
        params = optax.apply_updates(params, updates)
        return (params, state, k), {"loss": loss, **terms}

    (sdf_params, opt_state, key), hist = jax.lax.scan(body, (sdf_params, opt_state, key), jnp.arange(n))
    return sdf_params, opt_state, key, hist


@eqx.filter_jit
def _trajectory_pool(v, x0, config: DeformConfig):
    """Trajectories (T+1, n, 3) of x0 under v, with v and dv/dx along them."""
    T = config.n_steps
    traj = integrate(v, x0, T, method=config.integrator)
    tk = jnp.arange(T + 1, dtype=jnp.float32) / T
    t = jnp.broadcast_to(tk[:, None], traj.shape[:2])
    vel = jax.vmap(jax.vmap(v))(traj, t)
    jac = jax.vmap(jax.vmap(jax.jacfwd(v, argnums=0)))(traj, t)
    return traj, vel, jac


def _run_stage(chunk_fn, params, static, opt_state, key, data, n_iters, offset, config, desc, show, extra=()):
    hist: dict[str, list[np.ndarray]] = {}
    done = 0
    # the stage's first iteration in the learning-rate schedule, traced: one compiled program per stage serves
    # every schedule (the velocity-only claim fits, --iters-scale, the fine-tune stage)
    offset = jnp.int32(offset)
    bar = progress(total=n_iters, desc=desc, disable=None if show else True)
    with bar:
        while done < n_iters:
            n = min(config.chunk, n_iters - done)
            params, opt_state, key, h = chunk_fn(params, static, opt_state, key, data, *extra, n, config, offset)
            for k, v in h.items():
                hist.setdefault(k, []).append(np.asarray(v))
            done += n
            bar.update(n)
            bar.set_postfix(loss=f"{float(h['loss'][-1]):.4g}")
    return params, opt_state, key, {k: np.concatenate(v) for k, v in hist.items()}


# ----------------------------------------------------------------------------------------------- device
def resolve_device(device: Any = None) -> Any:
    """The ``jax.Device`` of a ``device`` argument: ``"auto"`` (the GPU when a CUDA jaxlib sees one, else the
    CPU), ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or a ``jax.Device``; ``None``: ``$ICLR25_DEVICE``, else ``auto``. An
    absent device is a one-line ValueError naming ``--device``."""
    from iclr25.utils.device import jax_device  # noqa: PLC0415

    return jax_device(device)


def on_device(device: Any = None) -> Any:
    """``with on_device(device):`` runs the JAX code inside on ``device`` (:func:`resolve_device`)."""
    return jax.default_device(resolve_device(device))


# ----------------------------------------------------------------------------------------------- result
@dataclasses.dataclass(frozen=True)
class DeformResult:
    """A fitted space-time SDF f(x, t) and velocity field v, in the user's coordinates.

    Internally the networks work in normalised coordinates y = (x - center) * scale; :meth:`sdf`,
    :meth:`velocity`, :meth:`advect` and :meth:`mesh` take and return the user's coordinates.
    ``history`` holds the per-iteration loss terms of each stage, ``timings`` the seconds per stage, ``device``
    the ``jax.Device`` it was fitted on (its methods evaluate the networks there and return numpy arrays on the
    CPU; ``None``, a loaded checkpoint: JAX's current default device).
    """

    sdf_net: ImplicitNet
    velocity_net: VelocityNet
    config: DeformConfig
    center: np.ndarray
    scale: float
    history: dict[str, dict[str, np.ndarray]]
    timings: dict[str, float]
    device: Any = None

    def _on(self) -> Any:
        return contextlib.nullcontext() if self.device is None else jax.default_device(self.device)

    def _y(self, x: np.ndarray) -> jax.Array:
        return jnp.asarray((np.asarray(x, dtype=np.float64) - self.center) * self.scale, dtype=jnp.float32)

    def sdf(self, points: np.ndarray, t: float | np.ndarray) -> np.ndarray:
        """f(x, t) at ``points`` (n, 3), in the user's length unit."""
        with self._on():
            y = self._y(points)
            tt = jnp.broadcast_to(jnp.asarray(t, dtype=jnp.float32), (y.shape[0],))
            return np.asarray(_eval_sdf(self.sdf_net, y, tt), dtype=np.float64) / self.scale

    def sdf_gradient(self, points: np.ndarray, t: float | np.ndarray) -> np.ndarray:
        """grad_x f(x, t) (n, 3) (unit length for an exact SDF; the scale cancels)."""
        with self._on():
            y = self._y(points)
            tt = jnp.broadcast_to(jnp.asarray(t, dtype=jnp.float32), (y.shape[0],))
            return np.asarray(_eval_grad(self.sdf_net, y, tt), dtype=np.float64)

    def velocity(self, points: np.ndarray, t: float = 0.0) -> np.ndarray:
        """v(x, t) (n, 3) in the user's units per unit time."""
        with self._on():
            y = self._y(points)
            tt = jnp.full((y.shape[0],), t, dtype=jnp.float32)
            return np.asarray(jax.vmap(self.velocity_net)(y, tt), dtype=np.float64) / self.scale

    def advect(self, points: np.ndarray, t: float = 1.0, n_steps: int | None = None) -> np.ndarray:
        """Points moved along v from time 0 to ``t`` (default: the training step size 1/T)."""
        if not 0.0 <= float(t) <= 1.0:
            raise ValueError(f"t must be in [0, 1], got {t!r}")
        if float(t) == 0.0:
            return np.asarray(points, dtype=np.float64).copy()
        steps = n_steps or max(1, int(round(float(t) * self.config.n_steps)))
        with self._on():
            y = self._y(points)
            traj = _eval_integrate(self.velocity_net, y, float(t), steps, self.config.integrator)
            return np.asarray(traj, dtype=np.float64) / self.scale + self.center

    def mesh(self, t: float, *, resolution: int = 64):
        """The zero level set of f(., t) by marching cubes on [-1, 1]^3 (normalised), as a trimesh.Trimesh."""
        from .meshing import marching_cubes_sdf  # noqa: PLC0415

        def field(y: np.ndarray) -> np.ndarray:
            with self._on():
                tt = jnp.full((y.shape[0],), t, dtype=jnp.float32)
                return np.asarray(_eval_sdf(self.sdf_net, jnp.asarray(y, dtype=jnp.float32), tt))

        m = marching_cubes_sdf(field, (-1.0, -1.0, -1.0), (1.0, 1.0, 1.0), resolution)
        m.vertices = np.asarray(m.vertices) / self.scale + self.center
        return m


@eqx.filter_jit
def _eval_sdf(net, y, t):
    return jax.vmap(net)(y, t)


@eqx.filter_jit
def _eval_grad(net, y, t):
    return jax.vmap(jax.grad(net, argnums=0))(y, t)


@eqx.filter_jit
def _eval_integrate_inner(net, y, t, steps, method):
    return integrate(net, y, steps, method=method, t1=t)[-1]


def _eval_integrate(net, y, t, steps, method):
    return _eval_integrate_inner(net, y, jnp.asarray(t, dtype=jnp.float32), steps, method)


# -------------------------------------------------------------------------------------------------- fit
def _check_cloud(x: Any, name: str, min_points: int) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64) if not isinstance(x, np.ndarray) else x.astype(np.float64)
    if a.ndim != 2 or a.shape[1] != 3:
        raise ValueError(f"{name} must be an (n, 3) array of points, got shape {a.shape}")
    if a.shape[0] < min_points:
        raise ValueError(f"{name} has {a.shape[0]} points; the sampler needs at least {min_points} "
                         f"(knn + 1 for the local off-surface scale)")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf")
    return a


def _check_normals(n: Any, points: np.ndarray, name: str) -> np.ndarray | None:
    if n is None:
        return None
    a = np.asarray(n, dtype=np.float64)
    if a.shape != points.shape:
        raise ValueError(f"{name} must have the shape of its points {points.shape}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf")
    norm = np.linalg.norm(a, axis=1, keepdims=True)
    if np.any(norm < 1e-12):
        raise ValueError(f"{name} contains zero-length normals")
    return a / norm


def fit(source: Any, target: Any | None = None, *, config: DeformConfig | None = None,
        source_normals: Any = None, target_normals: Any = None, corr_source: Any = None,
        corr_target: Any = None, velocity: VelocityNet | DeformResult | None = None, seed: int = 0,
        show_progress: bool = True, device: Any = None) -> DeformResult:
    """Fit f(x, t) and v(x) so that f(., 0) is the source surface, f(., 1) the target and v carries one to
    the other (the paper's staged schedule; see the module doc).

    ``source`` is either a :class:`~iclr25.implicit_deform.shapes.ShapePair` (then the other arguments come
    from it) or an (n, 3) array of source surface points, with ``target`` (m, 3), optional unit normals and
    optional sparse correspondences ``corr_source[i] -> corr_target[i]`` (k, 3) each. Without
    correspondences (or with ``config.correspondence_free``) the matching loss is the Chamfer distance between
    the advected source and the target. ``velocity`` (a trained VelocityNet, or a DeformResult of the same
    pair) skips stage 1 and reuses that field, e.g. for an ablation of the SDF stages. ``device`` is where JAX
    trains (:func:`resolve_device`: ``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:N"``; ``None``: ``$ICLR25_DEVICE``,
    else ``auto``), in float32 on every device; the data go there once and the result's methods return numpy.

    Examples
    --------
    >>> from iclr25.implicit_deform import make_pair, fit, DeformConfig
    >>> pair = make_pair("bar", "twist", n_points=2000, mesh_resolution=32)
    >>> res = fit(pair, config=DeformConfig.preset("test", velocity_iters=50, sdf_iters=50, finetune_iters=0),
    ...           show_progress=False)
    >>> res.sdf(pair.source_points[:3], 0.0).shape
    (3,)
    """
    from .shapes import ShapePair  # noqa: PLC0415

    seed = check_seed(seed)
    config = config or DeformConfig()
    if not isinstance(config, DeformConfig):
        raise TypeError(f"config must be a DeformConfig, got {type(config).__name__}")
    if isinstance(source, ShapePair):
        pair = source
        source, target = pair.source_points, pair.target_points
        source_normals, target_normals = pair.source_normals, pair.target_normals
        corr_source, corr_target = (pair.corr_source, pair.corr_target) if len(pair.corr) else (None, None)
    if target is None:
        raise TypeError("fit needs a target point cloud (or a ShapePair as source)")
    src, tgt, src_n, tgt_n, corr, config = _check_fit_inputs(source, target, source_normals, target_normals,
                                                              corr_source, corr_target, config)
    dev = resolve_device(device)
    with jax.default_device(dev):
        res = _fit(src, tgt, src_n, tgt_n, corr, config, velocity, seed, show_progress)
    return dataclasses.replace(res, device=dev)


def _fit(src: np.ndarray, tgt: np.ndarray, src_n: np.ndarray | None, tgt_n: np.ndarray | None, corr: Any,
         config: DeformConfig, velocity: VelocityNet | DeformResult | None, seed: int,
         show_progress: bool) -> DeformResult:
    center, scale = normalisation(src, tgt)
    rng = np.random.default_rng(seed)
    key = jax.random.key(seed)
    k_sdf, k_vel, k_train1, k_train2 = jax.random.split(key, 4)
    sdf_net = ImplicitNet(config.sdf_width, config.sdf_depth, beta=config.beta, init_radius=config.init_radius,
                          key=k_sdf)
    vel_net = VelocityNet(config.vel_width, config.vel_depth, activation=config.vel_activation,
                          time_dependent=config.time_dependent, key=k_vel)
    pool_idx = rng.choice(len(src), size=min(config.pool, len(src)), replace=False)
    src_pool = src[pool_idx]
    data1 = _velocity_data(src_pool, tgt, corr, center, scale)
    static_cfg, weights = _split_config(config)
    timings: dict[str, float] = {}
    history: dict[str, dict[str, np.ndarray]] = {}
    opt = _optimizer(config, 0)
    t0 = time.perf_counter()
    vel_net = _velocity_stage(vel_net, velocity, opt, k_train1, data1, config, static_cfg, weights, history,
                              show_progress)
    timings["velocity_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    data2 = _sdf_data(vel_net, src_pool, pool_idx, tgt, src_n, tgt_n, rng, center, scale, config, static_cfg)
    timings["pool_s"] = time.perf_counter() - t0
    sdf_net = _sdf_stages(sdf_net, opt, k_train2, data2, config, static_cfg, weights, history, timings,
                          show_progress)
    return DeformResult(sdf_net, vel_net, config, center, float(scale), history, timings)


def _check_fit_inputs(source: Any, target: Any, source_normals: Any, target_normals: Any, corr_source: Any,
                      corr_target: Any, config: DeformConfig):
    """Step of :func:`fit`: the checked clouds, normals and correspondences (``(cs, ct)``, or None when the
    matching is correspondence-free), and the config (``correspondence_free`` set when nothing is matched)."""
    min_points = config.knn + 1
    src = _check_cloud(source, "source", min_points)
    tgt = _check_cloud(target, "target", min_points)
    src_n = _check_normals(source_normals, src, "source_normals")
    tgt_n = _check_normals(target_normals, tgt, "target_normals")
    use_corr = corr_source is not None and not config.correspondence_free
    if (corr_source is None) != (corr_target is None):
        raise ValueError("corr_source and corr_target must be given together")
    if corr_source is not None:
        cs = _check_cloud(corr_source, "corr_source", 1)
        ct = _check_cloud(corr_target, "corr_target", 1)
        if cs.shape != ct.shape:
            raise ValueError(f"corr_source and corr_target must have the same shape, got {cs.shape} and {ct.shape}")
    if not use_corr:
        config = config.replace(correspondence_free=True)
    return src, tgt, src_n, tgt_n, ((cs, ct) if use_corr else None), config


def _to_unit(a: np.ndarray, center: np.ndarray, scale: float) -> jax.Array:
    """Points in the fitting frame (see :func:`normalisation`), as float32."""
    return jnp.asarray((a - center) * scale, dtype=jnp.float32)


def _box() -> tuple[jax.Array, jax.Array]:
    """The fitting frame's bounding box ``[-1, 1]^3`` (low and high corners)."""
    return jnp.full((3,), -1.0, dtype=jnp.float32), jnp.full((3,), 1.0, dtype=jnp.float32)


def _velocity_data(src_pool: np.ndarray, tgt: np.ndarray, corr: tuple[np.ndarray, np.ndarray] | None,
                   center: np.ndarray, scale: float) -> dict[str, jax.Array]:
    """Step of :func:`fit`: the stage-1 data (source pool, target, correspondences or a dummy pair)."""
    lo, hi = _box()
    data1 = {"src": _to_unit(src_pool, center, scale), "tgt": _to_unit(tgt, center, scale), "lo": lo, "hi": hi}
    if corr is not None:
        data1["corr_src"], data1["corr_tgt"] = (_to_unit(c, center, scale) for c in corr)
    else:
        data1["corr_src"] = data1["corr_tgt"] = jnp.zeros((1, 3), dtype=jnp.float32)
    return data1


def _velocity_stage(vel_net: VelocityNet, velocity: Any, opt: optax.GradientTransformation, key: jax.Array,
                    data1: dict[str, jax.Array], config: DeformConfig, static_cfg: DeformConfig,
                    weights: dict[str, jax.Array], history: dict[str, dict[str, np.ndarray]],
                    show_progress: bool) -> VelocityNet:
    """Step of :func:`fit`, stage 1: train v (or take the given ``velocity``); records ``history["velocity"]``."""
    vel_params, vel_static = eqx.partition(vel_net, eqx.is_inexact_array)
    if velocity is not None:
        reused = velocity.velocity_net if isinstance(velocity, DeformResult) else velocity
        if not isinstance(reused, VelocityNet):
            raise TypeError(f"velocity must be a VelocityNet or DeformResult, got {type(velocity).__name__}")
        vel_params, vel_static = eqx.partition(reused, eqx.is_inexact_array)
    elif config.velocity_iters:
        vel_params, _, _, history["velocity"] = _run_stage(
            _velocity_chunk, vel_params, vel_static, opt.init(vel_params), key, data1,
            config.velocity_iters, 0, static_cfg, "velocity", show_progress, extra=(weights,))
    return eqx.combine(vel_params, vel_static)


def _sdf_data(vel_net: VelocityNet, src_pool: np.ndarray, pool_idx: np.ndarray, tgt: np.ndarray,
              src_n: np.ndarray | None, tgt_n: np.ndarray | None, rng: np.random.Generator, center: np.ndarray,
              scale: float, config: DeformConfig, static_cfg: DeformConfig) -> dict[str, jax.Array]:
    """Step of :func:`fit`: the stage 2-3 data, pools of trajectories under the frozen v of surface points and
    off-surface samples (local, at the ``knn``-th neighbour's distance, and global), with normals."""
    k = min(config.knn, len(src_pool) - 1)
    dist, _ = cKDTree(src_pool).query(src_pool, k=k + 1, workers=1)
    sigma = dist[:, -1:]
    local = src_pool + sigma * rng.standard_normal(src_pool.shape)
    glob = rng.uniform(-1.0, 1.0, size=(max(1, len(src_pool) // 4), 3)) / scale + center
    off = np.concatenate([local, glob])
    S_x, S_v, S_j = _trajectory_pool(vel_net, _to_unit(src_pool, center, scale), static_cfg)
    O_x, O_v, O_j = _trajectory_pool(vel_net, _to_unit(off, center, scale), static_cfg)
    has_sn, has_tn = src_n is not None, tgt_n is not None
    lo, hi = _box()
    return {"S_x": S_x, "S_v": S_v, "S_j": S_j, "O_x": O_x, "O_v": O_v, "O_j": O_j,
            "tgt": _to_unit(tgt, center, scale),
            "src_n": jnp.asarray(src_n[pool_idx] if has_sn else np.zeros_like(src_pool), dtype=jnp.float32),
            "tgt_n": jnp.asarray(tgt_n if has_tn else np.zeros_like(tgt), dtype=jnp.float32),
            "has_src_n": jnp.float32(has_sn), "has_tgt_n": jnp.float32(has_tn), "lo": lo, "hi": hi}


def _sdf_stages(sdf_net: ImplicitNet, opt: optax.GradientTransformation, key: jax.Array,
                data2: dict[str, jax.Array], config: DeformConfig, static_cfg: DeformConfig,
                weights: dict[str, jax.Array], history: dict[str, dict[str, np.ndarray]],
                timings: dict[str, float], show_progress: bool) -> ImplicitNet:
    """Step of :func:`fit`, stages 2-3: train f with v frozen, then fine-tune it (one optimiser state through
    both); records ``history["sdf"]``, ``history["finetune"]`` and their timings."""
    t0 = time.perf_counter()
    sdf_params, sdf_static = eqx.partition(sdf_net, eqx.is_inexact_array)
    opt_state = opt.init(sdf_params)
    if config.sdf_iters:
        sdf_params, opt_state, key, history["sdf"] = _run_stage(
            _sdf_chunk, sdf_params, sdf_static, opt_state, key, data2, config.sdf_iters, config.velocity_iters,
            static_cfg, "sdf", show_progress, extra=(weights, jnp.float32(config.w_onsurf)))
    timings["sdf_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    if config.finetune_iters:
        sdf_params, opt_state, key, history["finetune"] = _run_stage(
            _sdf_chunk, sdf_params, sdf_static, opt_state, key, data2, config.finetune_iters,
            config.velocity_iters, static_cfg, "fine-tune", show_progress,
            extra=(weights, jnp.float32(config.w_finetune)))
    timings["finetune_s"] = time.perf_counter() - t0
    return eqx.combine(sdf_params, sdf_static)
