"""Teacher-forced training, next-step and autoregressive evaluation, and the nRMSE metric.

Every entry point takes ``device=`` (``None``: ``$ICLR25_DEVICE`` or ``auto``, the accelerator when one is
present; :func:`iclr25.utils.device.torch_device`): the model is moved there (in place, as ``nn.Module.to``
does), the data are copied there once, and what is returned (losses, errors, rollouts) is on the CPU. Everything
computes in float32.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from iclr25.utils.device import torch_device
from iclr25.utils.progress import progress
from iclr25.utils.seeding import check_seed

from .datasets import PDEDataset

__all__ = ["nrmse", "TrainResult", "EvalResult", "train", "evaluate", "rollout", "rollout_full", "warmup_cosine"]


def resolve_device(device: str | torch.device | None) -> torch.device:
    """The ``torch.device`` of a ``device=`` argument (:func:`iclr25.utils.device.torch_device`); torch's ``meta``
    device, the stand-in of :func:`iclr25.utils.device.check_device_conformance`, is taken as given (``torch_device``
    refuses it in iclr25-utils 0.10.0)."""
    if isinstance(device, torch.device) and device.type == "meta":
        return device
    return torch_device(device)


def nrmse(pred: torch.Tensor | np.ndarray, target: torch.Tensor | np.ndarray, *, eps: float = 1e-12
          ) -> torch.Tensor:
    """Normalised RMSE over the last (space) axis, ``‖û − u‖₂ / ‖u‖₂``, one value per leading index.

    References: the paper's metric (nRMSE, averaged over steps and samples), as in PDEBench.
    """
    p, t = torch.as_tensor(pred), torch.as_tensor(target)
    if p.shape != t.shape:
        raise ValueError(f"pred and target must have the same shape, got {tuple(p.shape)} and {tuple(t.shape)}")
    return torch.linalg.vector_norm(p - t, dim=-1) / (torch.linalg.vector_norm(t, dim=-1) + eps)


@dataclasses.dataclass(frozen=True)
class TrainResult:
    """A trained model and its training record.

    Attributes
    ----------
    model : nn.Module
        The trained model (in eval mode), on the device it was trained on.
    losses : np.ndarray, shape (epochs,)
        Mean training loss (teacher-forced nRMSE) per epoch.
    seconds : float
        Wall time of training.
    seconds_per_epoch : float
        ``seconds / epochs``.
    """

    model: nn.Module
    losses: np.ndarray
    seconds: float
    seconds_per_epoch: float


@dataclasses.dataclass(frozen=True)
class EvalResult:
    """Test errors of one model on one data set.

    Attributes
    ----------
    nrmse : float
        Teacher-forced one-step nRMSE (every input is the observed frame), mean over steps and samples.
    nrmse_rollout : float or None
        Autoregressive nRMSE from the first observed frame, mean over steps and samples.
    per_step : np.ndarray, shape (n_t - 1,)
        Teacher-forced nRMSE per predicted step.
    per_step_rollout : np.ndarray or None
        Rollout nRMSE per predicted step.
    """

    nrmse: float
    nrmse_rollout: float | None
    per_step: np.ndarray
    per_step_rollout: np.ndarray | None


def _tensors(data: PDEDataset, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    if not isinstance(data, PDEDataset):
        raise TypeError(f"data must be a PDEDataset (see iclr25.memno.datasets), got {type(data).__name__}")
    if data.u.shape[1] < 2:
        raise ValueError(f"data must hold at least 2 time steps, got {data.u.shape[1]}")
    return (torch.as_tensor(data.u, dtype=torch.float32, device=device),
            torch.as_tensor(data.target, dtype=torch.float32, device=device))


def warmup_cosine(step: int, total: int, peak: float, *, warmup: float = 0.1, floor: float = 1e-3) -> float:
    """Learning rate at ``step`` of ``total``: linear warm-up to ``peak`` over the first ``warmup`` fraction,
    then cosine decay to ``floor · peak``."""
    n_warm = max(1, round(warmup * total))
    if step < n_warm:
        return peak * (step + 1) / n_warm
    frac = (step - n_warm) / max(1, total - n_warm)
    return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * frac)))


def train(model: nn.Module, data: PDEDataset, *, epochs: int = 50, batch_size: int = 32, lr: float = 1e-3,
          weight_decay: float = 1e-4, seed: int = 0, desc: str | None = None,
          callback: Callable[[int, float], None] | None = None, device: str | torch.device | None = None
          ) -> TrainResult:
    """Train a next-step model on whole trajectories at once (teacher forcing), on ``device``.

    Inputs ``u(t₀..t_{N−1})``, targets ``target(t₁..t_N)``; the loss is the nRMSE averaged over steps and
    samples. ``torch.optim.AdamW`` (decoupled weight decay ``weight_decay``) with a linear warm-up over 10 % of
    the steps and a cosine decay
    (:func:`warmup_cosine`); mini-batches of trajectories, shuffled by ``seed`` (the shuffle is drawn on the
    CPU, so every device sees the same batches). The model is moved to ``device`` and stays there.
    Because every model here is causal in time, one forward pass trains all ``N`` next-step predictions.

    References: MemNO paper §5 (training on full trajectories with a causal memory layer).
    """
    seed = check_seed(seed)
    for name, v in (("epochs", epochs), ("batch_size", batch_size)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if not (isinstance(lr, (int, float)) and math.isfinite(lr) and lr > 0):
        raise ValueError(f"lr must be a positive finite number, got {lr!r}")
    dev = resolve_device(device)
    u, target = _tensors(data, dev)
    model.to(dev)
    gen = torch.Generator().manual_seed(seed)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    n = u.shape[0]
    steps = epochs * math.ceil(n / batch_size)
    step = 0
    losses = []
    model.train()
    t0 = time.perf_counter()
    for epoch in progress(range(epochs), total=epochs, desc=desc):
        perm = torch.randperm(n, generator=gen)
        total = 0.0
        for start in range(0, n, batch_size):
            idx = perm[start:start + batch_size].to(dev)
            pred = model(u[idx, :-1])
            loss = nrmse(pred, target[idx, 1:]).mean()
            model.zero_grad(set_to_none=True)
            loss.backward()
            for group in opt.param_groups:
                group["lr"] = warmup_cosine(step, steps, lr)
            opt.step()
            step += 1
            total += loss.detach().item() * len(idx)
        losses.append(total / n)
        if not math.isfinite(losses[-1]):
            raise FloatingPointError(f"training diverged at epoch {epoch} (loss {losses[-1]})")
        if callback is not None:
            callback(epoch, losses[-1])
    seconds = time.perf_counter() - t0
    model.eval()
    return TrainResult(model=model, losses=np.asarray(losses), seconds=seconds, seconds_per_epoch=seconds / epochs)


def _check_steps(n_steps: int) -> None:
    if not isinstance(n_steps, int) or n_steps < 1:
        raise ValueError(f"n_steps must be a positive integer, got {n_steps!r}")


@torch.no_grad()
def rollout(model: nn.Module, u0: torch.Tensor, n_steps: int, *, device: str | torch.device | None = None
            ) -> torch.Tensor:
    """Autoregressive prediction from the first frame with the streaming state (O(1) memory cost per step).

    ``u0`` ``(batch, X)`` → ``(batch, n_steps, X)`` = ``û(t₁..t_n)``, computed on ``device`` (the model is moved
    there), returned on the CPU.
    """
    _check_steps(n_steps)
    dev = resolve_device(device)
    return _rollout(model.to(dev), torch.as_tensor(u0, device=dev), n_steps).cpu()


def _rollout(model: nn.Module, u0: torch.Tensor, n_steps: int) -> torch.Tensor:
    # model and u0 on one device; the result stays there
    state = model.init_state(u0)
    cur, out = u0, []
    for _ in range(n_steps):
        cur, state = model.step(cur, state)
        out.append(cur)
    return torch.stack(out, dim=1)


@torch.no_grad()
def rollout_full(model: nn.Module, u0: torch.Tensor, n_steps: int, *, device: str | torch.device | None = None
                 ) -> torch.Tensor:
    """The same as :func:`rollout` by re-running the whole history through :meth:`forward` at every step
    (O(t) per step; the reference the streaming mode is timed against); on ``device``, returned on the CPU."""
    _check_steps(n_steps)
    dev = resolve_device(device)
    model.to(dev)
    hist = torch.as_tensor(u0, device=dev)[:, None]
    for _ in range(n_steps):
        nxt = model(hist)[:, -1:]
        hist = torch.cat([hist, nxt], dim=1)
    return hist[:, 1:].cpu()


@torch.no_grad()
def evaluate(model: nn.Module, data: PDEDataset, *, with_rollout: bool = True, batch_size: int = 64,
             device: str | torch.device | None = None) -> EvalResult:
    """Teacher-forced one-step nRMSE and (optionally) autoregressive-rollout nRMSE on ``data``, computed on
    ``device`` (the model is moved there); the errors are returned on the CPU.

    A model trained at one resolution can be evaluated at another (resolution transfer): the Fourier layers'
    weights act on the lowest modes of any grid fine enough for them.
    """
    dev = resolve_device(device)
    u, target = _tensors(data, dev)
    model.to(dev).eval()
    steps, steps_roll = [], []
    for start in range(0, u.shape[0], batch_size):
        ub, tb = u[start:start + batch_size], target[start:start + batch_size]
        steps.append(nrmse(model(ub[:, :-1]), tb[:, 1:]))
        if with_rollout:
            steps_roll.append(nrmse(_rollout(model, ub[:, 0], ub.shape[1] - 1), tb[:, 1:]))
    per_step = torch.cat(steps).mean(0).cpu().numpy()
    per_roll = torch.cat(steps_roll).mean(0).cpu().numpy() if with_rollout else None
    return EvalResult(nrmse=float(per_step.mean()), nrmse_rollout=None if per_roll is None else float(per_roll.mean()),
                      per_step=per_step, per_step_rollout=per_roll)
