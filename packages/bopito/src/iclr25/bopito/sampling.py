"""Samplers: ancestral DDPM (all ``T`` steps) and a fewer-step deterministic DDIM sampler; conditional
samples ``x_N ~ p_θ(· | x_0, N)`` at any lag in one diffusion pass, and long chains by repeated lag-N steps.

Ancestral step (Ho et al. 2020, Alg. 2, in its posterior-mean form), ``σ_t^2 = β̃_t = β_t (1-ᾱ_{t-1})/(1-ᾱ_t)``:

.. math::

    x̂_0 = \\mathrm{clip}_{\\text{box}}\\big((x^t - \\sqrt{1-ᾱ_t}\\,\\hat ε)/\\sqrt{ᾱ_t}\\big),\\quad
    x^{t-1} = \\frac{\\sqrt{ᾱ_{t-1}} β_t x̂_0 + \\sqrt{α_t}(1-ᾱ_{t-1}) x^t}{1-ᾱ_t} + σ_t z
    \\quad(\\text{without clipping: } \\tfrac{1}{\\sqrt{α_t}}(x^t - \\tfrac{β_t}{\\sqrt{1-ᾱ_t}}\\hat ε) + σ_t z).

DDIM step (Song et al. 2021, η = 0) between strided steps ``t > s``:
``x^s = √ᾱ_s x̂_0 + √(1-ᾱ_s) ε̂``, ``x̂_0 = (x^t - √(1-ᾱ_t) ε̂)/√ᾱ_t``.

References: BoPITO (ICLR 2025), Sec. 3 (ITO sampling, ancestral / ODE solver) and Sec. 4.3 (direct
long-lag sampling); Ho et al., NeurIPS 2020; Song, Meng & Ermon, ICLR 2021.

Devices (issue 59): every sampler takes ``device=`` (``None``: ``$ICLR25_DEVICE`` or ``auto``); the model is moved
there (in place), the conditions, the noise and its generator (:func:`iclr25.utils.device.torch_generator`) are
made there, and the samples come back as CPU numpy arrays. The network runs in float32, the update in float64
(:func:`~iclr25.bopito.models.wide_dtype`: float32 on MPS); on the CPU the numbers are 0.7's bit for bit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from iclr25.utils.device import torch_generator
from iclr25.utils.progress import progress
from iclr25.utils.seeding import check_seed

from .models import ScoreModel, resolve_device, wide_dtype

__all__ = ["sample", "sample_equilibrium", "sample_chain"]


def _check_steps(steps: Any, T: int) -> int | None:
    if steps is None:
        return None
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or not 2 <= steps <= T:
        raise ValueError(f"steps must be None (ancestral, all {T} steps) or an integer in [2, {T}], got {steps!r}")
    return int(steps)


def _as_states(x0: Any, model: ScoreModel, name: str = "x0", device: Any = "cpu") -> torch.Tensor:
    """``x0`` as ``(K, B, dim)`` float32 on ``device`` (checked on the CPU first): accepts ``(B,)`` (dim 1),
    ``(B, dim)`` (shared by members) or ``(K, B, dim)``."""
    arr = torch.as_tensor(np.asarray(x0, dtype=np.float32))
    dim, K = model.config.dim, model.n_models
    if arr.ndim == 1 and dim == 1:
        arr = arr[:, None]
    if arr.ndim == 2:
        if arr.shape[1] != dim:
            raise ValueError(f"{name} must have {dim} column(s) (the system's dimension), got shape "
                             f"{tuple(arr.shape)}")
        arr = arr[None].expand(K, -1, -1)
    if arr.ndim != 3 or arr.shape[0] != K or arr.shape[2] != dim or arr.shape[1] < 1:
        raise ValueError(f"{name} must have shape (B,), (B, {dim}) or ({K}, B, {dim}), got {tuple(arr.shape)}")
    if not torch.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr.contiguous().to(device)


def _as_lags(lag: Any, shape: tuple[int, int], kind: str, device: Any = "cpu") -> torch.Tensor:
    arr = np.asarray(lag, dtype=np.float64)
    if arr.dtype.kind not in "fiu" or np.isnan(arr).any() or (arr < 0).any():
        raise ValueError(f"lag must be a non-negative number of frames (or an array of them), got {lag!r}")
    if np.isinf(arr).any() and kind != "bopito":
        raise ValueError(f"lag = inf is only defined for BoPITO models (the prior), not {kind!r}")
    if arr.ndim == 0:
        arr = np.full(shape, float(arr))
    elif arr.shape == (shape[1],):
        arr = np.broadcast_to(arr[None], shape)
    elif arr.shape != shape:
        raise ValueError(f"lag must be a scalar, a (B,) array or a {shape} array, got shape {arr.shape}")
    return torch.tensor(np.array(arr, dtype=np.float32), device=device)


@torch.no_grad()
def _denoise(model: ScoreModel, shape: tuple[int, int], x0: torch.Tensor | None, lag: torch.Tensor | None,
             steps: int | None, gen: torch.Generator | None, device: torch.device) -> torch.Tensor:
    # everything on ``device`` (the model is there); the result stays there
    K, B = shape
    dim = model.config.dim
    sched = model.schedule
    T = sched.n_steps
    betas, abar = sched.betas, sched.alpha_bars
    wide = wide_dtype(device)
    x = torch.randn(K, B, dim, generator=gen, device=device)
    lo = torch.tensor([b[0] for b in model.config.box], dtype=wide, device=device)
    hi = torch.tensor([b[1] for b in model.config.box], dtype=wide, device=device)
    ts = np.arange(T)[::-1] if steps is None else np.unique(np.round(np.linspace(0, T - 1, steps)).astype(int))[::-1]
    for i, t in enumerate(ts):
        tt = torch.full((K, B), int(t), dtype=torch.long, device=device)
        eps = model.eps(x, tt, x0, lag).to(wide)
        xd = x.to(wide)
        ab = float(abar[t])
        # the denoised estimate is clipped to the data box (as DDPM implementations clip images to [-1, 1])
        x0_hat = torch.clamp((xd - math.sqrt(1 - ab) * eps) / math.sqrt(ab), lo, hi)
        if i + 1 == len(ts):
            x = x0_hat
        elif steps is None:
            ab_prev = float(abar[t - 1])
            b = float(betas[t])
            mean = (math.sqrt(ab_prev) * b * x0_hat + math.sqrt(1 - b) * (1 - ab_prev) * xd) / (1 - ab)
            var = b * (1 - ab_prev) / (1 - ab)
            x = mean + math.sqrt(var) * torch.randn(K, B, dim, generator=gen, dtype=wide, device=device)
        else:
            ab_s = float(abar[ts[i + 1]])
            eps_c = (xd - math.sqrt(ab) * x0_hat) / math.sqrt(1 - ab)
            x = math.sqrt(ab_s) * x0_hat + math.sqrt(1 - ab_s) * eps_c
        x = x.to(torch.float32)
    return x


def _chunks(B: int, chunk: int) -> list[slice]:
    return [slice(i, min(B, i + chunk)) for i in range(0, B, chunk)]


def sample(model: ScoreModel, x0: Any, lag: Any, *, steps: int | None = None, seed: int = 0,
           chunk: int = 8192, device: Any = None) -> np.ndarray:
    """Conditional samples ``x_N ~ p_θ(x_N | x_0, N)``, one per condition, for every ensemble member.

    Parameters
    ----------
    model: an ``"ito"`` or ``"bopito"`` :class:`ScoreModel` (``"bg"`` ignores ``x0``/``lag``).
    x0: conditions, ``(B,)``/``(B, dim)`` (shared by the members) or ``(K, B, dim)``.
    lag: frames, a scalar or one per condition (``(B,)`` or ``(K, B)``); BoPITO accepts ``inf``.
    steps: ``None`` for ancestral sampling with all ``T`` steps, or the number of DDIM steps.
    chunk: conditions per diffusion pass (bounds memory).
    device: where to sample (``None``: ``$ICLR25_DEVICE`` or ``auto``); the model is moved there.

    Returns
    -------
    ``(K, B, dim)`` array (float64, on the CPU).
    """
    seed = check_seed(seed)
    steps = _check_steps(steps, model.schedule.n_steps)
    dev = resolve_device(device)
    xs = _as_states(x0, model, device=dev)
    K, B, _ = xs.shape
    lags = None if model.config.kind == "bg" else _as_lags(lag, (K, B), model.config.kind, dev)
    model.to(dev)
    gen = torch_generator(dev, seed)  # on the CPU: torch.Generator().manual_seed(seed), 0.7's stream
    out = torch.empty_like(xs)
    for sl in _chunks(B, chunk):
        out[:, sl] = _denoise(model, (K, sl.stop - sl.start), xs[:, sl] if lags is not None else None,
                              lags[:, sl] if lags is not None else None, steps, gen, dev)
    return out.cpu().numpy().astype(np.float64)


def sample_equilibrium(model: ScoreModel, n: int, *, steps: int | None = None, seed: int = 0,
                       chunk: int = 8192, device: Any = None) -> np.ndarray:
    """``n`` samples of a ``"bg"`` prior (or of a BoPITO model at ``N = ∞``, which is its prior), ``(K, n, dim)``
    on the CPU, drawn on ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``; the model is moved there)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if model.config.kind == "ito":
        raise ValueError("an ITO model has no equilibrium limit (its lag is capped at max_lag); use sample()")
    if model.config.kind == "bopito":
        assert model.prior is not None
        model = model.prior
    seed = check_seed(seed)
    steps = _check_steps(steps, model.schedule.n_steps)
    dev = resolve_device(device)
    model.to(dev)
    gen = torch_generator(dev, seed)
    parts = [_denoise(model, (model.n_models, sl.stop - sl.start), None, None, steps, gen, dev)
             for sl in _chunks(int(n), chunk)]
    return torch.cat(parts, dim=1).cpu().numpy().astype(np.float64)


def sample_chain(model: ScoreModel, x0: Any, lag: float, n_steps: int, *, steps: int | None = 50,
                 seed: int = 0, chunk: int = 8192, desc: str | None = None, device: Any = None) -> np.ndarray:
    """Long trajectories by repeated lag-``lag`` transitions: ``x_{i+1} ~ p_θ(· | x_i, lag)``.

    Returns ``(K, B, n_steps + 1, dim)`` with the start in position 0; the time between saved points is
    ``lag`` frames. ``steps`` is the DDIM step count of each transition (``None``: ancestral). Each transition
    is sampled on ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``); the chain is returned on the CPU.
    """
    if isinstance(n_steps, bool) or not isinstance(n_steps, (int, np.integer)) or n_steps < 1:
        raise ValueError(f"n_steps must be an integer >= 1, got {n_steps!r}")
    if model.config.kind == "bg":
        raise ValueError("a chain needs a conditional model (kind 'ito' or 'bopito')")
    seed = check_seed(seed)
    dev = resolve_device(device)
    x = _as_states(x0, model).cpu().numpy().astype(np.float64)  # checked, on the CPU
    out = [x]
    for i in progress(range(int(n_steps)), desc=desc, total=int(n_steps)):
        x = sample(model, x, lag, steps=steps, seed=seed * 1_000_003 + i + 1, chunk=chunk, device=dev)
        out.append(x)
    return np.stack(out, axis=2)
