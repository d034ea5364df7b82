"""The LG-ODE backbone (latent graph ODE VAE) with every linear map a :class:`MaskLinear`.

Encoder (temporal graph over observations, ``GTrans`` attention, 2 layers): every observation (object i, time
t) is a node; node (j, t') sends to node (i, t) when i = j or A_ij != 0 and 0 <= t - t' <= max_gap:

.. math:: x_j' = \\mathrm{gelu}(W_{tr}[x_j; \\Delta t]) + TE(\\Delta t), \\quad
          \\alpha_{ij} = \\mathrm{softmax}_i\\big((W_k^{s|d} x_j')^\\top (W_q x_i) / \\sqrt d\\big), \\quad
          x_i \\leftarrow x_i + \\mathrm{gelu}\\big(\\textstyle\\sum_j \\alpha_{ij} W_v^{s|d} x_j'\\big)

then attention pooling per object and ``(mu, |sigma|)`` of ``z0``. Generator: an ODE on ``[z; 0_aug]`` whose
vector field is an NRI message-passing layer over the fully connected object graph with one MLP per edge type,
solved by ``torchdiffeq`` rk4. Decoder: a linear map of the state. Message passing is plain torch
(``index_add_``), no compiled graph extensions.

Loss (IWAE-style bound of LG-ODE, K samples of z0):

.. math:: \\mathcal L = -\\log\\sum_k \\exp\\Big(\\overline{\\log \\mathcal N(y \\mid \\hat y_k, 0.01^2)}
          - \\beta\\, \\mathrm{KL}\\big(q(z_0) \\,\\|\\, \\mathcal N(\\tau, 1)\\big)\\Big)

with the prior mean ``tau`` the task index during training.

Devices: ``LGODE(..., device=)`` (``None``: ``$ICLR25_DEVICE``, else ``auto``) draws its weights on the CPU from
its seed and moves them; :class:`TaskTensors` holds a task on a device and builds every batch there; the encoder
graphs are built in numpy on the CPU (cached) and copied. Everything computes in float32.

References: Huang et al., "Learning Continuous System Dynamics from Irregularly-Sampled Partial Observations"
(LG-ODE), NeurIPS 2020, Sec. 3; Zhang et al., ICLR 2025, Sec. 4.1.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .layers import MaskLinear, TaskLayerNorm
from .trajectories import TaskData

__all__ = ["ModelConfig", "LGODE", "Batch", "TaskTensors", "LossOutput"]


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """Sizes and solver of the backbone (paper: hidden 64, latent 16, augment 64, ODE hidden 128, K = 3)."""

    hidden: int = 32
    latent: int = 16
    augment: int = 16
    ode_hidden: int = 32
    n_layers: int = 2
    n_samples: int = 3
    obs_std: float = 0.01
    max_gap: float = 0.1
    solver: str = "rk4"
    step_size: float = 1.0 / 15.0
    rtol: float = 1e-2
    atol: float = 1e-2

    def __post_init__(self) -> None:
        for name in ("hidden", "latent", "ode_hidden", "n_layers", "n_samples"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if isinstance(self.augment, bool) or not isinstance(self.augment, int) or self.augment < 0:
            raise ValueError(f"augment must be an integer >= 0, got {self.augment!r}")
        for name in ("obs_std", "max_gap", "step_size", "rtol", "atol"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
        if self.solver not in ("rk4", "euler", "midpoint", "dopri5"):
            raise ValueError(f"solver must be 'rk4', 'euler', 'midpoint' or 'dopri5', got {self.solver!r}")


# ------------------------------------------------------------------------------------------ graph batches
@dataclasses.dataclass
class Batch:
    """A batch of B trajectories of one task, as flat tensors (encoder graph) plus the decoding targets."""

    x: torch.Tensor          # (M, D) observed values
    t: torch.Tensor          # (M,) observation times
    obj: torch.Tensor        # (M,) global object index b * N + i
    src: torch.Tensor        # (E,) sender node
    dst: torch.Tensor        # (E,) receiver node
    dt: torch.Tensor         # (E,) t_dst - t_src >= 0
    same: torch.Tensor       # (E,) 1. when both ends are the same object
    n_traj: int
    n_nodes: int
    rel_type: torch.Tensor   # (B * N * (N - 1), 2) one-hot edge types of the ODE graph
    t_out: torch.Tensor      # (T',) decoding times (sorted)
    y: torch.Tensor          # (B, N, T', D) targets at t_out
    y_mask: torch.Tensor     # (B, N, T') which targets count


class TaskTensors:
    """A task's arrays as torch tensors, with the per-trajectory encoder graphs cached."""

    def __init__(self, task: TaskData, max_gap: float, device: Any = "cpu"):
        self.task = task
        self.device = dev = torch.device(device)
        self.values = torch.as_tensor(task.values, dtype=torch.float32, device=dev)
        self.times = torch.as_tensor(task.times, dtype=torch.float32, device=dev)
        self.max_gap = float(max_gap)
        self._graphs: dict[tuple[int, int], tuple[np.ndarray, ...]] = {}
        n = task.n_nodes
        self._off = np.nonzero(~np.eye(n, dtype=bool))

    def _graph(self, s: int, cut: int) -> tuple[np.ndarray, ...]:
        key = (s, cut)
        g = self._graphs.get(key)
        if g is None:
            obs = self.task.obs_mask[s].copy()
            obs[:, cut:] = False
            obj, frame = np.nonzero(obs)
            tt = self.task.times[frame]
            a = self.task.adjacency[s] != 0
            link = a[obj[None, :], obj[:, None]] | (obj[None, :] == obj[:, None])  # [receiver, sender]
            dt = tt[:, None] - tt[None, :]
            ok = link & (dt >= 0) & (dt <= self.max_gap + 1e-6)
            dst, src = np.nonzero(ok)
            g = (obj, frame, src, dst, dt[dst, src].astype(np.float32), (obj[src] == obj[dst]).astype(np.float32))
            self._graphs[key] = g
        return g

    def batch(self, idx: np.ndarray, *, enc_cut: int | None = None, target: str = "future") -> Batch:
        """Trajectories ``idx``; the encoder sees observations before frame ``enc_cut`` (default the whole
        window). ``target="future"``: the extrapolation targets; ``"window"``: the observations in
        ``[enc_cut, n_obs)`` (the self-prediction sub-problem of mode switching)."""
        task = self.task
        n = task.n_nodes
        cut = task.n_obs if enc_cut is None else int(enc_cut)
        xs, ts, objs, srcs, dsts, dts, sames = [], [], [], [], [], [], []
        offset = 0
        dev = self.device
        for b, s in enumerate(idx):
            obj, frame, src, dst, dt, same = self._graph(int(s), cut)
            xs.append(self.values[s, obj, frame])
            ts.append(self.times[frame])
            objs.append(torch.as_tensor(obj + b * n, device=dev))
            srcs.append(torch.as_tensor(src + offset, device=dev))
            dsts.append(torch.as_tensor(dst + offset, device=dev))
            dts.append(torch.as_tensor(dt, device=dev))
            sames.append(torch.as_tensor(same, device=dev))
            offset += obj.size
        if target == "future":
            ymask = task.target_mask[idx]
        else:
            ymask = task.obs_mask[idx].copy()
            ymask[:, :, :cut] = False
        frames = np.nonzero(ymask.any(axis=(0, 1)))[0]
        if frames.size == 0:
            raise ValueError("the batch has no target observations to decode")
        rel = (task.adjacency[idx][:, self._off[0], self._off[1]] > 0).astype(np.int64).reshape(-1)
        return Batch(torch.cat(xs), torch.cat(ts), torch.cat(objs), torch.cat(srcs), torch.cat(dsts),
                     torch.cat(dts), torch.cat(sames), len(idx), n,
                     F.one_hot(torch.as_tensor(rel, device=dev), 2).float(), self.times[frames],
                     self.values[idx][:, :, frames], torch.as_tensor(ymask[:, :, frames], device=dev))


# ------------------------------------------------------------------------------------------------ modules
def _temporal_encoding(t: torch.Tensor, d: int) -> torch.Tensor:
    j = torch.arange(d, dtype=torch.float32, device=t.device)
    div = 1.0 / torch.pow(10000.0, 2 * torch.div(j, 2, rounding_mode="floor") / d)
    pos = (t.view(-1, 1) * 200.0) * div
    return torch.where(j % 2 == 0, torch.sin(pos), torch.cos(pos))


def _segment_softmax(score: torch.Tensor, seg: torch.Tensor, n: int) -> torch.Tensor:
    mx = torch.full((n,), -torch.inf, dtype=score.dtype, device=score.device).scatter_reduce(
        0, seg, score, "amax", include_self=True)
    e = torch.exp(score - mx[seg])
    den = torch.zeros(n, dtype=score.dtype, device=score.device).index_add_(0, seg, e)
    return e / den[seg]


def _segment_mean(x: torch.Tensor, seg: torch.Tensor, n: int) -> torch.Tensor:
    tot = torch.zeros(n, x.shape[1], dtype=x.dtype, device=x.device).index_add_(0, seg, x)
    cnt = torch.zeros(n, dtype=x.dtype, device=x.device).index_add_(0, seg, torch.ones_like(seg, dtype=x.dtype))
    return tot / cnt.clamp_min(1.0).unsqueeze(1)


class _GTrans(nn.Module):
    def __init__(self, h: int, lin):
        super().__init__()
        self.h = h
        self.norm = TaskLayerNorm(h, per_task=lin.keywords["masked"])
        self.w_tr, self.w_q = lin(h + 1, h), lin(h, h)
        self.w_k_same, self.w_k_diff = lin(h, h), lin(h, h)
        self.w_v_same, self.w_v_diff = lin(h, h), lin(h, h)

    def forward(self, hid: torch.Tensor, bt: Batch) -> torch.Tensor:
        x = self.norm(hid)
        xj = F.gelu(self.w_tr(torch.cat([x[bt.src], bt.dt.unsqueeze(1)], 1))) + _temporal_encoding(bt.dt, self.h)
        same = bt.same.unsqueeze(1)
        k = same * self.w_k_same(xj) + (1 - same) * self.w_k_diff(xj)
        v = same * self.w_v_same(xj) + (1 - same) * self.w_v_diff(xj)
        q = self.w_q(x)[bt.dst]
        att = _segment_softmax((k * q).sum(1) / math.sqrt(self.h), bt.dst, x.shape[0])
        agg = torch.zeros_like(x).index_add_(0, bt.dst, att.unsqueeze(1) * v)
        return hid + F.gelu(agg)


class _ODEFunc(nn.Module):
    """NRI message passing over the fully connected object graph, one MLP per edge type."""

    def __init__(self, d_state: int, h: int, lin):
        super().__init__()
        masked = lin.keywords["masked"]
        self.w_in, self.norm = lin(d_state, h), TaskLayerNorm(h, per_task=masked)
        self.msg1 = nn.ModuleList([lin(2 * h, h) for _ in range(2)])
        self.msg2 = nn.ModuleList([lin(h, h) for _ in range(2)])
        self.out1, self.out2 = lin(2 * h, h), lin(h, h)
        self.w_out = lin(h, d_state)
        self.graph: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None
        self.nfe = 0

    def forward(self, _t: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        self.nfe += 1
        send, recv, rel = self.graph
        h = self.norm(F.relu(self.w_in(z)))
        pre = torch.cat([h[send], h[recv]], 1)
        msg = sum(rel[:, i:i + 1] * F.relu(self.msg2[i](F.relu(self.msg1[i](pre)))) for i in range(2))
        agg = torch.zeros_like(h).index_add_(0, recv, msg)
        h = h + F.relu(self.out2(F.relu(self.out1(torch.cat([h, agg], 1)))))
        return self.w_out(h)


@dataclasses.dataclass
class LossOutput:
    loss: torch.Tensor          # scalar: the LG-ODE bound, averaged over trajectories
    loss_per_traj: torch.Tensor  # (B,)
    mse: torch.Tensor            # scalar: MSE of the mean-z0 prediction on the targets
    mse_per_traj: torch.Tensor   # (B,)
    pred: torch.Tensor           # (B, N, T', D) prediction from the mean z0 (or first sample)
    kl: torch.Tensor


class LGODE(nn.Module):
    """LG-ODE encoder / ODE generator / decoder; ``masked=True`` for MS-GODE, ``False`` for the baselines; on
    ``device`` (``None``: ``$ICLR25_DEVICE``, else ``auto``; weights drawn on the CPU from ``seed``, then moved)."""

    def __init__(self, n_features: int, config: ModelConfig = ModelConfig(), *, masked: bool = True, seed: int = 0,
                 device: Any = None):
        super().__init__()
        import functools  # noqa: PLC0415

        if isinstance(n_features, bool) or not isinstance(n_features, int) or n_features < 1:
            raise ValueError(f"n_features must be an integer >= 1, got {n_features!r}")
        self.n_features, self.config, self.masked = n_features, config, masked
        gen = torch.Generator().manual_seed(int(seed))
        lin = functools.partial(MaskLinear, masked=masked, generator=gen)
        c = config
        self.w_in, self.norm_in = lin(n_features, c.hidden), TaskLayerNorm(c.hidden, per_task=masked)
        self.layers = nn.ModuleList([_GTrans(c.hidden, lin) for _ in range(c.n_layers)])
        self.w_pool, self.w_seq = lin(c.hidden + 1, c.hidden), lin(c.hidden, c.hidden)
        self.w_out = lin(c.hidden, 2 * c.latent)
        self.ode = _ODEFunc(c.latent + c.augment, c.ode_hidden, lin)
        self.decoder = lin(c.latent + c.augment, n_features)
        self._task = 0
        self._n_tasks = 0 if masked else 1
        from iclr25.utils.device import torch_device  # noqa: PLC0415

        self.to(torch_device(device))

    @property
    def device(self) -> torch.device:
        """Where the model's weights are."""
        return self.decoder.weight.device

    # ------------------------------------------------------------------ tasks
    @property
    def n_tasks(self) -> int:
        return self._n_tasks

    def add_task(self) -> int:
        """Append a score tensor to every masked layer and a LayerNorm to every norm; returns the new id."""
        if not self.masked:
            raise ValueError("add_task() needs a masked model (masked=True)")
        dev = self.device
        for m in self.modules():
            if isinstance(m, MaskLinear):
                m.add_task()
            elif isinstance(m, TaskLayerNorm):
                m.add_task(dev)
        self._n_tasks += 1
        return self._n_tasks - 1

    def set_task(self, task: int) -> None:
        if isinstance(task, bool) or not isinstance(task, (int, np.integer)) or not 0 <= task < max(1, self._n_tasks):
            raise ValueError(f"task must be an integer in [0, {max(1, self._n_tasks) - 1}], got {task!r}")
        self._task = int(task)
        for m in self.modules():
            if isinstance(m, (MaskLinear, TaskLayerNorm)):
                m.task = int(task)

    @property
    def task(self) -> int:
        return self._task

    def task_parameters(self, task: int) -> list[nn.Parameter]:
        """What trains on ``task``: its score tensors and LayerNorms (masked), or everything (dense)."""
        if not self.masked:
            return list(self.parameters())
        out: list[nn.Parameter] = []
        for m in self.modules():
            if isinstance(m, MaskLinear):
                out.append(m.scores[task])
            elif isinstance(m, TaskLayerNorm):
                out += list(m.norms[task].parameters())
        return out

    def freeze_task(self, task: int) -> None:
        for p in self.task_parameters(task):
            p.requires_grad_(False)

    # ---------------------------------------------------------------- forward
    def encode(self, bt: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.norm_in(F.relu(self.w_in(bt.x)))
        for layer in self.layers:
            h = layer(h, bt)
        n_obj = bt.n_traj * bt.n_nodes
        hp = F.gelu(self.w_pool(torch.cat([h, bt.t.unsqueeze(1)], 1))) + _temporal_encoding(bt.t, h.shape[1])
        a = F.relu(self.w_seq(_segment_mean(hp, bt.obj, n_obj)))
        w = torch.sigmoid((a[bt.obj] * hp).sum(1, keepdim=True))
        pooled = _segment_mean(w * hp, bt.obj, n_obj)
        out = self.w_out(pooled)
        lat = self.config.latent
        return out[:, :lat], out[:, lat:].abs() + 1e-4

    def _ode_graph(self, bt: Batch, k: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        n = bt.n_nodes
        s, r = np.nonzero(~np.eye(n, dtype=bool))
        g = np.arange(k * bt.n_traj)[:, None] * n
        send = torch.as_tensor((g + s[None]).reshape(-1), device=bt.x.device)
        recv = torch.as_tensor((g + r[None]).reshape(-1), device=bt.x.device)
        return send, recv, bt.rel_type.repeat(k, 1)

    def decode(self, z0: torch.Tensor, bt: Batch) -> torch.Tensor:
        """``z0`` (K, B * N, latent) -> predictions (K, B, N, T', D) at ``bt.t_out``."""
        from torchdiffeq import odeint  # noqa: PLC0415 - heavy import kept out of the CLI's --help

        k = z0.shape[0]
        state = torch.cat([z0, z0.new_zeros(*z0.shape[:2], self.config.augment)], -1).reshape(-1, z0.shape[-1] +
                                                                                              self.config.augment)
        self.ode.graph = self._ode_graph(bt, k)
        t = torch.cat([bt.t_out.new_zeros(1), bt.t_out]) if bt.t_out[0] > 0 else bt.t_out
        c = self.config
        opts: dict[str, Any] = {"step_size": c.step_size} if c.solver != "dopri5" else {}
        zs = odeint(self.ode, state, t, method=c.solver, rtol=c.rtol, atol=c.atol, options=opts)
        zs = zs[1:] if bt.t_out[0] > 0 else zs
        y = self.decoder(zs)  # (T', K * B * N, D)
        return y.permute(1, 0, 2).reshape(k, bt.n_traj, bt.n_nodes, len(bt.t_out), self.n_features)

    @contextlib.contextmanager
    def _cached_weights(self):
        # W * M_t once per forward pass instead of once per ODE function evaluation
        lin = [m for m in self.modules() if isinstance(m, MaskLinear)]
        for m in lin:
            m._cache = None
            m._cache = m.effective_weight()
        try:
            yield
        finally:
            for m in lin:
                m._cache = None

    def loss(self, bt: Batch, *, prior_mean: float = 0.0, kl_coef: float = 1.0, sample: bool = True,
             generator: torch.Generator | None = None) -> LossOutput:
        """The LG-ODE bound on ``bt``'s targets (K samples of z0 when ``sample``), and the mean-z0 MSE."""
        with self._cached_weights():
            return self._loss(bt, prior_mean, kl_coef, sample, generator)

    def _loss(self, bt: Batch, prior_mean: float, kl_coef: float, sample: bool,
              generator: torch.Generator | None) -> LossOutput:
        mu, sigma = self.encode(bt)
        if sample:
            eps = torch.randn((self.config.n_samples, *mu.shape), generator=generator, device=mu.device)
            z0 = torch.cat([mu.unsqueeze(0), mu + sigma * eps], 0)
        else:
            z0 = mu.unsqueeze(0)
        pred = self.decode(z0, bt)
        m = bt.y_mask.unsqueeze(-1).expand_as(bt.y).to(pred.dtype)
        cnt = m.sum((1, 2, 3)).clamp_min(1.0)
        sq = (pred - bt.y.unsqueeze(0)) ** 2
        std = self.config.obs_std
        logp = -0.5 * sq / std ** 2 - math.log(std) - 0.5 * math.log(2 * math.pi)
        ll = (logp * m).sum((2, 3, 4)) / cnt  # (K', B)
        kl = (torch.log(1.0 / sigma) + (sigma ** 2 + (mu - prior_mean) ** 2) / 2 - 0.5)
        kl = kl.reshape(bt.n_traj, -1).mean(1)  # (B,)
        samples = slice(1, None) if sample else slice(0, 1)
        per = -torch.logsumexp(ll[samples] - kl_coef * kl, 0)
        mse_traj = (sq[0] * m).sum((1, 2, 3)) / cnt
        return LossOutput(per.mean(), per, mse_traj.mean(), mse_traj, pred[0], kl.mean())

    def n_weights(self) -> int:
        return sum(m.weight.numel() for m in self.modules() if isinstance(m, MaskLinear))
