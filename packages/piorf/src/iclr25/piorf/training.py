"""One-step training with noise injection and autoregressive rollouts of a MeshGraphNet, with any rewiring.

The simulator predicts the normalised velocity change and the next pressure,

.. math::

    \\hat v_{t+1} = v_t + \\sigma_{\\Delta v}\\,\\mathrm{MGN}(\\tilde v_t)_{1:2} + \\mu_{\\Delta v}, \\qquad
    \\mathcal L = \\mathrm{MSE}_{\\text{normal}\\cup\\text{outflow}}(\\widehat{\\Delta v})
    + \\mathrm{MSE}_{\\text{all}}(\\hat p),

where :math:`\\tilde v_t = v_t + \\varepsilon`, :math:`\\varepsilon \\sim N(0, 0.02^2)` on normal nodes (the target
is corrected for the noise). ``rewiring="piorf"`` rewires the mesh at every step from the current (noisy or
predicted) velocity; the baselines rewire each mesh once.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from iclr25.utils.progress import progress
from iclr25.utils.seeding import check_seed

from .baselines import BASELINES
from .curvature import ollivier_ricci
from .datasets import FlowDataset, Trajectory
from .graph import edge_keys
from .mesh import NodeType
from .rewiring import PARTNER_RULES, _combine, bottleneck_nodes, default_projection, partners

__all__ = ["REWIRINGS", "TrainConfig", "Simulator", "Rollout", "train", "rollout_rmse"]

REWIRINGS = ("none", "piorf", *BASELINES)


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Settings of :func:`train` (paper values in brackets).

    Attributes
    ----------
    steps
        Optimiser steps, one frame each [10M].
    layers, latent
        Message-passing blocks and width [15, 128].
    lr, lr_final
        Adam learning rate, decayed exponentially to ``lr_final`` [1e-4 to 1e-6].
    noise_std
        Training noise on the velocity of normal nodes [0.02].
    ratio, partner
        PIORF's rewired fraction [0.03] and partner rule.
    separate_long_range
        Encode long-range edges with their own MLPs.
    """

    steps: int = 1000
    layers: int = 4
    latent: int = 64
    lr: float = 1e-3
    lr_final: float = 1e-4
    noise_std: float = 0.02
    ratio: float = 0.03
    partner: str = "feature-difference"
    separate_long_range: bool = False

    def __post_init__(self) -> None:
        for name in ("steps", "layers", "latent"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if not (0 < self.lr_final <= self.lr):
            raise ValueError(f"lr and lr_final must satisfy 0 < lr_final <= lr, got {self.lr}, {self.lr_final}")
        if not self.noise_std >= 0:
            raise ValueError(f"noise_std must be >= 0, got {self.noise_std!r}")
        if not 0 < self.ratio < 1:
            raise ValueError(f"ratio must be in (0, 1), got {self.ratio!r}")
        if self.partner not in PARTNER_RULES:
            raise ValueError(f"partner must be one of {PARTNER_RULES}, got {self.partner!r}")


@dataclasses.dataclass(frozen=True)
class Rollout:
    """Predicted frames and their errors: ``velocity`` (T+1, N, 2), ``pressure`` (T+1, N), per-step RMSE (T,)."""

    velocity: np.ndarray
    pressure: np.ndarray
    rmse_velocity: np.ndarray
    rmse_pressure: np.ndarray


class _MeshPlan:
    """What a trajectory's mesh needs per step: static rewired edges, or PIORF's bottleneck set."""

    def __init__(self, traj: Trajectory, method: str, config: TrainConfig, seed: int) -> None:
        import ot  # noqa: F401 - POT's first import takes seconds; keep it out of the preprocessing time
        import torch

        t0 = time.perf_counter()
        self.method = method
        self.n = traj.n_nodes
        self.mesh = traj.edge_index
        # sorted for _combine's membership test (a user's Trajectory need not hold a sorted edge_index)
        self.keys = np.sort(edge_keys(self.mesh[0], self.mesh[1], self.n))
        if method == "piorf":
            self.bottleneck = bottleneck_nodes(ollivier_ricci(self.mesh).node, config.ratio)
        if method in ("none", "piorf"):
            static, long_range = self.mesh, np.zeros(self.mesh.shape[1], dtype=bool)
        else:
            rw = BASELINES[method](self.mesh, seed=seed)
            static, long_range = rw.edge_index, rw.long_range
        self.seconds = time.perf_counter() - t0
        self.pos = torch.as_tensor(np.asarray(traj.pos, dtype=np.float32))
        self.static = (torch.as_tensor(static), torch.as_tensor(long_range))
        onehot = np.eye(NodeType.SIZE, dtype=np.float32)[traj.node_type]
        self.onehot = torch.as_tensor(onehot)
        nt = traj.node_type
        self.normal = torch.as_tensor(nt == NodeType.NORMAL)
        self.loss_mask = torch.as_tensor((nt == NodeType.NORMAL) | (nt == NodeType.OUTFLOW))

    def graph(self, velocity: np.ndarray, partner: str, projection: np.ndarray):
        """``(edge_index, long_range, edge_attr)`` tensors for the current velocity."""
        import torch

        if self.method == "piorf" and len(self.bottleneck):
            r = partners(self.bottleneck, velocity, partner, projection)
            ei, lr, _ = _combine(self.mesh, self.n, np.stack([self.bottleneck, r], axis=1), self.keys)
            ei, lr = torch.as_tensor(ei), torch.as_tensor(lr)
        else:
            ei, lr = self.static
        d = self.pos[ei[0]] - self.pos[ei[1]]
        return ei, lr, torch.cat([d, d.norm(dim=1, keepdim=True)], dim=1)


class Simulator:
    """A trained MeshGraphNet with its normalisation statistics and rewiring (made by :func:`train`)."""

    def __init__(self, model, stats: dict[str, Any], config: TrainConfig, rewiring: str, projection: np.ndarray,
                 seed: int, preprocess_seconds: float, step_seconds: float, losses: np.ndarray) -> None:
        self.model = model
        self.stats = stats
        self.config = config
        self.rewiring = rewiring
        self.projection = projection
        self.seed = seed
        self.preprocess_seconds = preprocess_seconds
        self.step_seconds = step_seconds
        self.losses = losses
        self._plans: dict[int, tuple[Trajectory, _MeshPlan]] = {}

    def _plan(self, traj: Trajectory) -> _MeshPlan:
        """The (cached) static rewiring or bottleneck set of a trajectory's mesh."""
        hit = self._plans.get(id(traj))
        if hit is None or hit[0] is not traj:
            hit = self._plans[id(traj)] = (traj, _MeshPlan(traj, self.rewiring, self.config, self.seed))
        return hit[1]

    def _inputs(self, plan: _MeshPlan, velocity):
        import torch

        s = self.stats
        x = torch.cat([(velocity - s["v_mean"]) / s["v_std"], plan.onehot], dim=1)
        ei, lr, ea = plan.graph(velocity.numpy(), self.config.partner, self.projection)
        return x, (ea - s["e_mean"]) / s["e_std"], ei, lr

    def _step(self, plan: _MeshPlan, velocity):
        import torch

        s = self.stats
        x, ea, ei, lr = self._inputs(plan, velocity)
        out = self.model(x, ea, ei, lr)
        dv = out[:, :2] * s["dv_std"] + s["dv_mean"]
        p = out[:, 2] * s["p_std"] + s["p_mean"]
        v_next = torch.where(plan.loss_mask[:, None], velocity + dv, velocity)
        return v_next, p

    def rollout(self, traj: Trajectory, n_steps: int | None = None, *, start: int = 0) -> Rollout:
        """Autoregressive prediction of ``n_steps`` frames from frame ``start`` (non-fluid nodes held fixed)."""
        import torch

        T = traj.n_steps - 1 - start if n_steps is None else int(n_steps)
        if not 1 <= T <= traj.n_steps - 1 - start:
            raise ValueError(f"n_steps must be in [1, {traj.n_steps - 1 - start}], got {n_steps!r}")
        plan = self._plan(traj)
        v = torch.as_tensor(traj.velocity[start].astype(np.float32))
        vs, ps = [v.numpy().copy()], [traj.pressure[start].astype(np.float32)]
        self.model.eval()
        with torch.no_grad():
            for _ in range(T):
                v, p = self._step(plan, v)
                vs.append(v.numpy().copy())
                ps.append(p.numpy().copy())
        vel, prs = np.stack(vs), np.stack(ps)
        truth_v = traj.velocity[start:start + T + 1]
        truth_p = traj.pressure[start:start + T + 1]
        rv = np.sqrt(np.mean(np.sum((vel[1:] - truth_v[1:]) ** 2, axis=2), axis=1))
        rp = np.sqrt(np.mean((prs[1:] - truth_p[1:]) ** 2, axis=1))
        return Rollout(vel, prs, rv, rp)

    def one_step_rmse(self, traj: Trajectory, *, stride: int = 1) -> float:
        """Velocity RMSE of one step from every ``stride``-th ground-truth frame, averaged over frames."""
        import torch

        plan = self._plan(traj)
        errs = []
        self.model.eval()
        with torch.no_grad():
            for t in range(0, traj.n_steps - 1, stride):
                v, _ = self._step(plan, torch.as_tensor(traj.velocity[t].astype(np.float32)))
                errs.append(np.sqrt(np.mean(np.sum((v.numpy() - traj.velocity[t + 1]) ** 2, axis=1))))
        return float(np.mean(errs))


def _stats(dataset: FlowDataset, plans: list[_MeshPlan], partner: str, projection: np.ndarray) -> dict[str, Any]:
    import torch

    v = np.concatenate([t.velocity[:-1].reshape(-1, 2) for t in dataset.trajectories])
    dv = np.concatenate([(t.velocity[1:] - t.velocity[:-1]).reshape(-1, 2) for t in dataset.trajectories])
    p = np.concatenate([t.pressure[1:].ravel() for t in dataset.trajectories])
    ea = torch.cat([pl.graph(t.velocity[0], partner, projection)[2] for pl, t in zip(plans, dataset.trajectories)])

    def t(x):
        return torch.as_tensor(np.asarray(x, dtype=np.float32))

    eps = 1e-8
    return {"v_mean": t(v.mean(0)), "v_std": t(np.maximum(v.std(0), eps)), "dv_mean": t(dv.mean(0)),
            "dv_std": t(np.maximum(dv.std(0), eps)), "p_mean": t(p.mean()), "p_std": t(max(p.std(), eps)),
            "e_mean": ea.mean(0), "e_std": ea.std(0).clamp_min(eps)}


def train(dataset: FlowDataset, *, rewiring: str = "piorf", config: TrainConfig | None = None, seed: int = 0,
          show_progress: bool = False) -> Simulator:
    """Train a MeshGraphNet one step ahead on random frames of ``dataset`` (Adam, exponential lr decay).

    Parameters
    ----------
    dataset
        Training trajectories (:func:`~iclr25.piorf.cylinder_flow`).
    rewiring
        ``"none"`` (plain MGN), ``"piorf"``, or a baseline name in :data:`~iclr25.piorf.BASELINES`.
    config
        :class:`TrainConfig`; the default is the package's reduced scale.
    seed
        Seeds the weights, the frame order, the noise and the PIORF projection.

    References
    ----------
    Pfaff et al., ICLR 2021, Sec. 3.2 (training noise, normalisation); Yu et al., PIORF, ICLR 2025, Sec. 5.
    """
    import torch

    from .model import MeshGraphNet

    seed = check_seed(seed)
    config = TrainConfig() if config is None else config
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    if rewiring not in REWIRINGS:
        raise ValueError(f"rewiring must be one of {REWIRINGS}, got {rewiring!r}")
    if not isinstance(dataset, FlowDataset) or len(dataset) == 0:
        raise TypeError(f"dataset must be a non-empty FlowDataset, got {type(dataset).__name__}")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    projection = default_projection(2, seed=seed)
    plans = [_MeshPlan(t, rewiring, config, seed) for t in dataset.trajectories]
    pre = sum(p.seconds for p in plans)
    stats = _stats(dataset, plans, config.partner, projection)
    model = MeshGraphNet(2 + NodeType.SIZE, 3, 3, latent=config.latent, layers=config.layers,
                         separate_long_range=config.separate_long_range)
    sim = Simulator(model, stats, config, rewiring, projection, seed, pre, 0.0, np.zeros(0))
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    gamma = (config.lr_final / config.lr) ** (1.0 / config.steps)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma)
    gen = torch.Generator().manual_seed(seed)
    losses = np.empty(config.steps)
    model.train()
    t0 = time.perf_counter()
    for step in progress(range(config.steps), total=config.steps, desc=f"train {rewiring}",
                         disable=None if show_progress else True):
        k = int(rng.integers(len(dataset)))
        traj, plan = dataset.trajectories[k], plans[k]
        t = int(rng.integers(traj.n_steps - 1))
        v = torch.as_tensor(traj.velocity[t].astype(np.float32))
        noise = torch.randn(v.shape, generator=gen) * config.noise_std * plan.normal[:, None]
        v_in = v + noise
        target_dv = (torch.as_tensor(traj.velocity[t + 1].astype(np.float32)) - v_in - stats["dv_mean"]) \
            / stats["dv_std"]
        target_p = (torch.as_tensor(traj.pressure[t + 1].astype(np.float32)) - stats["p_mean"]) / stats["p_std"]
        x, ea, ei, lr = sim._inputs(plan, v_in)
        out = model(x, ea, ei, lr)
        loss = ((out[:, :2] - target_dv) ** 2).sum(1)[plan.loss_mask].mean() + ((out[:, 2] - target_p) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses[step] = float(loss.detach())
    sim.step_seconds = (time.perf_counter() - t0) / config.steps
    sim.losses = losses
    return sim


def rollout_rmse(sim: Simulator, dataset: FlowDataset, horizon: int = 50, *, stride: int = 1) -> dict[str, float]:
    """Mean over ``dataset`` of one-step velocity RMSE (every ``stride``-th frame) and ``horizon``-step rollout
    velocity/pressure RMSE from frame 0.

    ``horizon`` must fit every trajectory (at most its number of frames minus one): the metrics are named
    after it, so it is never shortened silently.
    """
    if not isinstance(dataset, FlowDataset) or not len(dataset):
        raise TypeError(f"dataset must be a non-empty FlowDataset, got {type(dataset).__name__}")
    shortest = min(t.n_steps for t in dataset.trajectories)
    if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or not 1 <= horizon < shortest:
        raise ValueError(f"horizon must be an integer in [1, {shortest - 1}] (the shortest trajectory has "
                         f"{shortest} frames), got {horizon!r}")
    one, roll_v, roll_p = [], [], []
    for traj in dataset.trajectories:
        r = sim.rollout(traj, horizon)
        one.append(sim.one_step_rmse(traj, stride=stride))
        roll_v.append(float(np.mean(r.rmse_velocity)))
        roll_p.append(float(np.mean(r.rmse_pressure)))
    return {"rmse_1": float(np.mean(one)), f"rmse_{horizon}": float(np.mean(roll_v)),
            f"rmse_p_{horizon}": float(np.mean(roll_p))}
