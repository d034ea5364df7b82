"""Training: the denoising ε-loss on equilibrium frames (prior) or on lagged pairs (ITO, BoPITO).

.. math::

    \\mathcal L(θ) = \\mathbb E_{(x_0, x_N), N, t, ε}\\big\\| ε - \\hat ε_θ(\\sqrt{ᾱ_t} x_N + \\sqrt{1-ᾱ_t} ε,
    t \\mid x_0, N)\\big\\|^2, \\qquad N \\sim \\mathcal U\\{1, …, N_{\\max}\\}

Pairs are drawn afresh every step: trajectory uniformly, lag uniformly in ``1..min(N_max, n_frames - 1)``,
start frame uniformly among those with a partner ``N`` frames later (the reference's
``UniformBatchStochasticLaggedDatasetMixin``). For BoPITO only ε_dyn is trained; the prior is frozen.
Adam, constant learning rate, and an exponential moving average of the weights (the EMA weights are the
trained model).

Devices (issue 59): :func:`train` and :func:`fit_model` take ``device=`` (``None``: ``$ICLR25_DEVICE`` or
``auto``). The model and the trajectories are moved there once; every draw of a step (trajectory, lag, start,
diffusion step, noise) is made there from a generator seeded on that device
(:func:`iclr25.utils.device.torch_generator`), so on the CPU the numbers are those of 0.7 bit for bit, and on a
GPU a seed gives its own (equally valid) stream. Adam's moments live beside the parameters; the per-step losses
come back to the CPU.

References: BoPITO (ICLR 2025), Sec. 3-4 and App. (training details); Schreiner et al. (2023), Eq. 4.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from iclr25.utils.device import torch_generator
from iclr25.utils.optim import Adam
from iclr25.utils.progress import progress
from iclr25.utils.seeding import check_seed

from .models import ModelConfig, ScoreModel, resolve_device, wide_dtype

__all__ = ["TrainResult", "train", "fit_model"]


@dataclasses.dataclass(frozen=True)
class TrainResult:
    """A trained model (EMA weights), the per-step loss of each member ``(steps, K)`` and the wall time."""

    model: ScoreModel
    losses: np.ndarray
    seconds: float

    @property
    def final_loss(self) -> np.ndarray:
        """Mean loss of each member over the last 10% of the steps."""
        n = max(1, len(self.losses) // 10)
        return self.losses[-n:].mean(axis=0)


def _stack_data(data: Any, K: int, dim: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One array ``(n, F, dim)`` shared by all members, or a sequence of K of them (padded and stacked), as CPU
    tensors."""
    if isinstance(data, np.ndarray) or hasattr(data, "x"):
        items: Sequence[Any] = [data] * K
    else:
        items = list(data)
        if len(items) != K:
            raise ValueError(f"data must be one trajectory array or {K} of them (one per member), "
                             f"got {len(items)}")
    arrs = []
    for i, it in enumerate(items):
        a = np.asarray(getattr(it, "x", it), dtype=np.float64)
        if a.ndim == 2 and dim == 1:
            a = a[..., None]
        if a.ndim != 3 or a.shape[2] != dim or a.shape[0] < 1 or a.shape[1] < 1:
            raise ValueError(f"data[{i}] must have shape (n_traj, n_frames, {dim}), got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"data[{i}] contains NaN or inf")
        arrs.append(a)
    n_max = max(a.shape[0] for a in arrs)
    f_max = max(a.shape[1] for a in arrs)
    buf = np.zeros((K, n_max, f_max, dim), dtype=np.float32)
    for k, a in enumerate(arrs):
        buf[k, : a.shape[0], : a.shape[1]] = a
    n_traj = torch.tensor([a.shape[0] for a in arrs], dtype=torch.float64)
    n_frames = torch.tensor([a.shape[1] for a in arrs], dtype=torch.long)
    return torch.as_tensor(buf), n_traj, n_frames


def train(model: ScoreModel, data: Any, *, steps: int = 2000, batch_size: int = 512, lr: float = 1e-3,
          ema: float = 0.99, seed: int = 0, desc: str | None = None, device: Any = None) -> TrainResult:
    """Train ``model`` (every ensemble member on its own data) with the ε-loss of the module docstring, on
    ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``; the model is moved there, in place, with its prior).

    Parameters
    ----------
    model: a :class:`ScoreModel`; a BoPITO model's prior stays frozen.
    data: trajectories ``(n_traj, n_frames, dim)`` (array or :class:`~iclr25.bopito.Trajectories`) shared by
        all members, or a list with one per member. The prior (kind ``"bg"``) uses every frame as an
        equilibrium sample; ITO/BoPITO draw lagged pairs, which needs ``n_frames >= 2``.
    steps, batch_size, lr, ema: optimisation budget (per member), Adam learning rate, EMA decay.

    Returns
    -------
    :class:`TrainResult` whose ``model`` is a copy holding the EMA weights (on ``device``); ``losses`` on the
    CPU (numpy).
    """
    for v, name, lo in ((steps, "steps", 1), (batch_size, "batch_size", 1)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    if not (isinstance(lr, (int, float)) and math.isfinite(lr) and lr > 0):
        raise ValueError(f"lr must be a positive number, got {lr!r}")
    if not (isinstance(ema, (int, float)) and 0 <= ema < 1):
        raise ValueError(f"ema must be in [0, 1), got {ema!r}")
    seed = check_seed(seed)
    cfg = model.config
    K, dim = cfg.n_models, cfg.dim
    dev = resolve_device(device)
    model.to(dev)
    wide = wide_dtype(dev)
    X, n_traj, n_frames = _stack_data(data, K, dim)
    conditional = cfg.kind != "bg"
    if conditional and int(n_frames.min()) < 2:  # checked on the CPU, before anything moves
        raise ValueError("ITO/BoPITO training needs trajectories of at least 2 frames")
    X, n_traj, n_frames = X.to(dev), n_traj.to(device=dev, dtype=wide), n_frames.to(dev)
    max_lag = torch.clamp(n_frames - 1, max=cfg.max_lag).to(wide)
    gen = torch_generator(dev, seed)  # on the CPU: torch.Generator().manual_seed(seed), 0.7's stream
    abar = model.schedule.alpha_bars.to(device=dev, dtype=torch.float32)
    T = model.schedule.n_steps
    params = [p for p in model.net.parameters()]
    opt = Adam(params, lr=lr)  # torch.optim.Adam's update without importing torch._dynamo (iclr25.utils.optim)
    shadow = [p.detach().clone() for p in params]
    B = int(batch_size)
    kidx = torch.arange(K, device=dev)[:, None].expand(K, B)
    losses = np.empty((int(steps), K))
    t0 = time.perf_counter()
    model.train()
    for step in progress(range(int(steps)), desc=desc, total=int(steps)):
        u = torch.rand(K, B, 3, generator=gen, dtype=wide, device=dev)
        traj = (u[..., 0] * n_traj[:, None]).long()
        if conditional:
            lag = 1 + (u[..., 1] * max_lag[:, None]).long()
            start = (u[..., 2] * (n_frames[:, None] - lag).to(wide)).long()
            x0 = X[kidx, traj, start]
            target = X[kidx, traj, start + lag]
        else:
            frame = (u[..., 1] * n_frames[:, None].to(wide)).long()
            target = X[kidx, traj, frame]
            x0, lag = None, None
        t = torch.randint(0, T, (K, B), generator=gen, device=dev)
        noise = torch.randn(K, B, dim, generator=gen, device=dev)
        ab = abar[t][..., None]
        xt = ab.sqrt() * target + (1 - ab).sqrt() * noise
        pred = model.eps(xt, t, x0, lag)
        per_member = ((pred - noise) ** 2).mean(dim=(1, 2))
        loss = per_member.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            torch._foreach_lerp_(shadow, [p.detach() for p in params], 1.0 - ema)
        losses[step] = per_member.detach().cpu().numpy()
    seconds = time.perf_counter() - t0
    model.eval()
    trained = copy.deepcopy(model)
    with torch.no_grad():
        for p, s in zip(trained.net.parameters(), shadow, strict=True):
            p.copy_(s)
    return TrainResult(trained, losses, seconds)


def fit_model(kind: str, data: Any, *, prior: ScoreModel | None = None, n_models: int = 1, max_lag: int = 1000,
              lambda_hat: float | None = None, lambda_int: float | None = None, box: Any = None, dim: int = 1,
              width: int = 64, depth: int = 3, emb_dim: int = 32, n_diffusion: int = 500, steps: int = 2000,
              batch_size: int = 512, lr: float = 1e-3, seed: int = 0, desc: str | None = None,
              device: Any = None) -> TrainResult:
    """Build a :class:`ScoreModel` of ``kind`` (``"bg"``, ``"ito"``, ``"bopito"``) and :func:`train` it on
    ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``; a ``prior`` is moved there).

    ``box`` defaults to the prior's box, else to the data range widened by 10%.
    """
    items = data if isinstance(data, (list, tuple)) else [data]
    for i, d in enumerate(items):
        if not np.all(np.isfinite(np.asarray(getattr(d, "x", d), dtype=np.float64))):
            raise ValueError(f"data[{i}] contains NaN or inf")
    if box is None:
        if prior is not None:
            box = prior.config.box
        else:
            arr = np.concatenate([np.asarray(getattr(d, "x", d), dtype=np.float64).reshape(-1, dim)
                                  for d in items])
            lo, hi = arr.min(axis=0), arr.max(axis=0)
            pad = 0.1 * np.maximum(hi - lo, 1e-3)
            box = tuple((float(a - p), float(b + p)) for a, b, p in zip(lo, hi, pad, strict=True))
    cfg = ModelConfig(kind=kind, dim=dim, box=box, max_lag=max_lag, n_diffusion=n_diffusion, emb_dim=emb_dim,
                      width=width, depth=depth, n_models=n_models, lambda_hat=lambda_hat, lambda_int=lambda_int)
    dev = resolve_device(device)
    model = ScoreModel(cfg, prior=prior, seed=seed, device=dev)
    return train(model, data, steps=steps, batch_size=batch_size, lr=lr, seed=seed, desc=desc, device=dev)
