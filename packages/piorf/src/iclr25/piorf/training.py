"""One-step training with noise injection and autoregressive rollouts of a MeshGraphNet, with any rewiring.

The simulator predicts the normalised velocity change and the next pressure,

.. math::

    \\hat v_{t+1} = v_t + \\sigma_{\\Delta v}\\,\\mathrm{MGN}(\\tilde v_t)_{1:2} + \\mu_{\\Delta v}, \\qquad
    \\mathcal L = \\mathrm{MSE}_{\\text{normal}\\cup\\text{outflow}}(\\widehat{\\Delta v})
    + \\mathrm{MSE}_{\\text{all}}(\\hat p),

where :math:`\\tilde v_t = v_t + \\varepsilon`, :math:`\\varepsilon \\sim N(0, 0.02^2)` on normal nodes (the target
is corrected for the noise). ``rewiring="piorf"`` rewires the mesh at every step from the current (noisy or
predicted) velocity through one :class:`~iclr25.piorf.Rewirer` per mesh; the baselines rewire each mesh once.

Devices: :func:`train` takes ``device=`` (``None``: ``$ICLR25_DEVICE``, else ``auto``, the GPU when torch sees
one) and :meth:`Simulator.to` moves a trained simulator. The model, the mesh tensors, the normalisation
statistics, the frames and the training noise (a generator seeded on that device) live there, in float32; the
rewiring itself (curvature, the partner rule) runs in numpy on the CPU, so PIORF copies the current velocity to
the CPU once a step. Rollouts and errors come back on the CPU.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from iclr25.utils.device import torch_device, torch_generator
from iclr25.utils.progress import progress
from iclr25.utils.seeding import check_seed

from .baselines import BASELINES
from .curvature import ollivier_ricci
from .datasets import FlowDataset, Trajectory
from .mesh import NodeType
from .rewiring import PARTNER_RULES, Rewirer, default_projection

__all__ = ["REWIRINGS", "TrainConfig", "Simulator", "Rollout", "train"]

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
    ratio, partner, top_k
        PIORF's rewired fraction [0.03], partner rule and partner spread [1] (:func:`~iclr25.piorf.rewire`).
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
    top_k: int = 1
    separate_long_range: bool = False

    def __post_init__(self) -> None:
        for name in ("steps", "layers", "latent", "top_k"):
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

    @classmethod
    def against(cls, traj: Trajectory, start: int, velocity: np.ndarray, pressure: np.ndarray) -> Rollout:
        """A rollout of ``len(velocity) - 1`` steps from frame ``start``, scored against ``traj``:
        :math:`\\mathrm{RMSE}_t = \\sqrt{\\operatorname{mean}_i \\|\\hat v_{t,i} - v_{t,i}\\|^2}` per step."""
        T = len(velocity) - 1
        truth_v = traj.velocity[start + 1:start + T + 1]
        truth_p = traj.pressure[start + 1:start + T + 1]
        rv = np.sqrt(np.mean(np.sum((velocity[1:] - truth_v) ** 2, axis=2), axis=1))
        rp = np.sqrt(np.mean((pressure[1:] - truth_p) ** 2, axis=1))
        return cls(velocity, pressure, rv, rp)


class _MeshPlan:
    """What a trajectory's mesh needs per step: static rewired edges, or PIORF's :class:`Rewirer`."""

    def __init__(self, traj: Trajectory, method: str, config: TrainConfig, seed: int, projection: np.ndarray,
                 device: Any = "cpu") -> None:
        import ot  # noqa: F401 - POT's first import takes seconds; keep it out of the preprocessing time
        import torch

        t0 = time.perf_counter()
        mesh = traj.edge_index
        self.rewirer = None
        if method == "piorf":
            self.rewirer = Rewirer(mesh, ollivier_ricci(mesh, n_nodes=traj.n_nodes).node, ratio=config.ratio,
                                   partner=config.partner, top_k=config.top_k, projection=projection,
                                   pos=traj.pos, seed=seed)
        if method in ("none", "piorf"):
            static, long_range = mesh, np.zeros(mesh.shape[1], dtype=bool)
        else:
            rw = BASELINES[method](mesh, seed=seed)
            static, long_range = rw.edge_index, rw.long_range
        self.seconds = time.perf_counter() - t0
        self.device = dev = torch_device(device)
        self.pos = torch.as_tensor(np.asarray(traj.pos, dtype=np.float32), device=dev)
        self.static = (torch.as_tensor(static, device=dev), torch.as_tensor(long_range, device=dev))
        self.onehot = torch.as_tensor(np.eye(NodeType.SIZE, dtype=np.float32)[traj.node_type], device=dev)
        nt = traj.node_type
        self.normal = torch.as_tensor(nt == NodeType.NORMAL, device=dev)
        self.loss_mask = torch.as_tensor((nt == NodeType.NORMAL) | (nt == NodeType.OUTFLOW), device=dev)

    def graph(self, velocity: np.ndarray):
        """``(edge_index, long_range, edge_attr)`` tensors on the plan's device for the current velocity (numpy,
        on the CPU)."""
        import torch

        if self.rewirer is not None and len(self.rewirer.bottleneck):
            rw = self.rewirer(velocity)
            ei = torch.as_tensor(rw.edge_index, device=self.device)
            lr = torch.as_tensor(rw.long_range, device=self.device)
        else:
            ei, lr = self.static
        d = self.pos[ei[0]] - self.pos[ei[1]]
        return ei, lr, torch.cat([d, d.norm(dim=1, keepdim=True)], dim=1)


def _inputs(stats: dict[str, Any], plan: _MeshPlan, velocity):
    """Normalised node features, edge features, edges and long-range mask for ``velocity`` (a tensor)."""
    import torch

    x = torch.cat([(velocity - stats["v_mean"]) / stats["v_std"], plan.onehot], dim=1)
    # the rewiring reads the velocity in numpy: one copy to the CPU a step (PIORF rewires from the current field)
    ei, lr, ea = plan.graph(velocity.detach().cpu().numpy())
    return x, (ea - stats["e_mean"]) / stats["e_std"], ei, lr


class Simulator:
    """A trained MeshGraphNet with its normalisation statistics and rewiring (made by :func:`train`).

    Attributes
    ----------
    model, stats, config, rewiring, seed
        The network, the normalisation statistics, the settings, the rewiring name and the training seed.
    projection
        The feature-difference rule's fixed projection (drawn from ``seed``).
    device
        Where the model computes (:meth:`to` moves it); rollouts and errors come back on the CPU.
    preprocess_seconds
        Curvature / static rewiring time over the training meshes.
    step_seconds
        Mean wall time of one training step.
    losses
        Training loss of every step.
    """

    def __init__(self, model, stats: dict[str, Any], config: TrainConfig, rewiring: str, projection: np.ndarray,
                 seed: int, preprocess_seconds: float, step_seconds: float, losses: np.ndarray,
                 plans: dict[int, tuple[Trajectory, _MeshPlan]] | None = None) -> None:
        self.model = model
        self.stats = stats
        self.config = config
        self.rewiring = rewiring
        self.projection = projection
        self.seed = seed
        self.preprocess_seconds = preprocess_seconds
        self.step_seconds = step_seconds
        self.losses = losses
        self._plans = dict(plans or {})
        self.device = next(model.parameters()).device

    def to(self, device: Any) -> Simulator:
        """Move the simulator (model, statistics, mesh plans) to ``device`` (``None``: ``$ICLR25_DEVICE``, else
        ``auto``), in place; returns it."""
        dev = torch_device(device)
        if dev != self.device:
            self.model.to(dev)
            self.stats = {k: v.to(dev) for k, v in self.stats.items()}
            self._plans = {}  # rebuilt on the new device when next needed
            self.device = dev
        return self

    def _plan(self, traj: Trajectory) -> _MeshPlan:
        """The (cached) static rewiring or :class:`Rewirer` of a trajectory's mesh."""
        hit = self._plans.get(id(traj))
        if hit is None or hit[0] is not traj:
            plan = _MeshPlan(traj, self.rewiring, self.config, self.seed, self.projection, self.device)
            hit = self._plans[id(traj)] = (traj, plan)
        return hit[1]

    def _step(self, plan: _MeshPlan, velocity):
        import torch

        s = self.stats
        out = self.model(*_inputs(s, plan, velocity))
        dv = out[:, :2] * s["dv_std"] + s["dv_mean"]
        p = out[:, 2] * s["p_std"] + s["p_mean"]
        return torch.where(plan.loss_mask[:, None], velocity + dv, velocity), p

    def rollout(self, traj: Trajectory, n_steps: int | None = None, *, start: int = 0) -> Rollout:
        """Autoregressive prediction of ``n_steps`` frames from frame ``start`` (non-fluid nodes held fixed), on the
        simulator's device; the frames come back on the CPU."""
        import torch

        T = _check_rollout(traj, n_steps, start)
        plan = self._plan(traj)
        v = torch.as_tensor(traj.velocity[start].astype(np.float32), device=self.device)
        vs, ps = [v.cpu().numpy().copy()], [traj.pressure[start].astype(np.float32)]
        self.model.eval()
        with torch.no_grad():
            for _ in range(T):
                v, p = self._step(plan, v)
                vs.append(v.cpu().numpy().copy())
                ps.append(p.cpu().numpy().copy())
        return Rollout.against(traj, start, np.stack(vs), np.stack(ps))

    def one_step_rmse(self, traj: Trajectory, *, stride: int = 1) -> float:
        """Velocity RMSE of one step from every ``stride``-th ground-truth frame, averaged over frames."""
        import torch

        plan = self._plan(traj)
        errs = []
        self.model.eval()
        with torch.no_grad():
            for t in range(0, traj.n_steps - 1, stride):
                v, _ = self._step(plan, torch.as_tensor(traj.velocity[t].astype(np.float32), device=self.device))
                errs.append(np.sqrt(np.mean(np.sum((v.cpu().numpy() - traj.velocity[t + 1]) ** 2, axis=1))))
        return float(np.mean(errs))


def _check_rollout(traj: Trajectory, n_steps: int | None, start: int) -> int:
    if isinstance(start, bool) or not isinstance(start, (int, np.integer)) or not 0 <= start < traj.n_steps - 1:
        raise ValueError(f"start must be an integer in [0, {traj.n_steps - 2}], got {start!r}")
    T = traj.n_steps - 1 - start if n_steps is None else n_steps
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or not 1 <= T <= traj.n_steps - 1 - start:
        raise ValueError(f"n_steps must be an integer in [1, {traj.n_steps - 1 - start}] from frame {start}, "
                         f"got {n_steps!r}")
    return int(T)


def _stats(dataset: FlowDataset, plans: list[_MeshPlan], device: Any = "cpu") -> dict[str, Any]:
    import torch

    v = np.concatenate([t.velocity[:-1].reshape(-1, 2) for t in dataset.trajectories])
    dv = np.concatenate([(t.velocity[1:] - t.velocity[:-1]).reshape(-1, 2) for t in dataset.trajectories])
    p = np.concatenate([t.pressure[1:].ravel() for t in dataset.trajectories])
    ea = torch.cat([pl.graph(t.velocity[0])[2] for pl, t in zip(plans, dataset.trajectories)])

    def t(x):
        return torch.as_tensor(np.asarray(x, dtype=np.float32), device=device)

    eps = 1e-8
    return {"v_mean": t(v.mean(0)), "v_std": t(np.maximum(v.std(0), eps)), "dv_mean": t(dv.mean(0)),
            "dv_std": t(np.maximum(dv.std(0), eps)), "p_mean": t(p.mean()), "p_std": t(max(p.std(), eps)),
            "e_mean": ea.mean(0), "e_std": ea.std(0).clamp_min(eps)}


def train(dataset: FlowDataset, *, rewiring: str = "piorf", config: TrainConfig | None = None, seed: int = 0,
          show_progress: bool = False, device: Any = None) -> Simulator:
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
    device
        Where to train (``None``: ``$ICLR25_DEVICE``, else ``auto``); float32. The weights are drawn on the CPU
        and moved; the noise is drawn there from a generator seeded with ``seed`` (on the CPU, the numbers of
        0.5 bit for bit; on a GPU its own stream).

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
    dev = torch_device(device)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    projection = default_projection(2, seed=seed)
    plans = [_MeshPlan(t, rewiring, config, seed, projection, dev) for t in dataset.trajectories]
    stats = _stats(dataset, plans, dev)
    model = MeshGraphNet(2 + NodeType.SIZE, 3, 3, latent=config.latent, layers=config.layers,
                         separate_long_range=config.separate_long_range).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, (config.lr_final / config.lr) ** (1.0 / config.steps))
    gen = torch_generator(dev, seed)
    losses = np.empty(config.steps)
    model.train()
    t0 = time.perf_counter()
    for step in progress(range(config.steps), total=config.steps, desc=f"train {rewiring}",
                         disable=None if show_progress else True):
        k = int(rng.integers(len(dataset)))
        traj, plan = dataset.trajectories[k], plans[k]
        t = int(rng.integers(traj.n_steps - 1))
        v = torch.as_tensor(traj.velocity[t].astype(np.float32), device=dev)
        v_in = v + torch.randn(v.shape, generator=gen, device=dev) * config.noise_std * plan.normal[:, None]
        target_dv = (torch.as_tensor(traj.velocity[t + 1].astype(np.float32), device=dev) - v_in
                     - stats["dv_mean"]) / stats["dv_std"]
        target_p = (torch.as_tensor(traj.pressure[t + 1].astype(np.float32), device=dev) - stats["p_mean"]) \
            / stats["p_std"]
        out = model(*_inputs(stats, plan, v_in))
        loss = ((out[:, :2] - target_dv) ** 2).sum(1)[plan.loss_mask].mean() + ((out[:, 2] - target_p) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses[step] = float(loss.detach())
    step_seconds = (time.perf_counter() - t0) / config.steps
    return Simulator(model, stats, config, rewiring, projection, seed, sum(p.seconds for p in plans), step_seconds,
                     losses, {id(t): (t, p) for t, p in zip(dataset.trajectories, plans)})
