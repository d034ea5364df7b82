"""Score models: the Boltzmann-generator prior (unconditional DDPM), the lag-conditioned ITO model and
BoPITO, which adds the frozen prior's ε-prediction to a λ̂^N-weighted dynamic one.

.. math::

    \\hat\\epsilon_{\\text{BoPITO}}(x^{t}, t \\mid x_0, N) = \\epsilon_{\\text{eq}}(x^{t}, t)
        + \\lambda_{\\text{eff}}(N)^{N}\\, \\epsilon_{\\text{dyn},\\theta}(x^{t}, x_0, \\min(N, N_{\\max}), t),
    \\qquad \\lambda_{\\text{eff}}(N) = \\hat\\lambda \\ (N \\le N_{\\max}),\\ \\lambda_{\\text{int}}\\ (N > N_{\\max}).

Since both ε-predictions share the factor ``-σ_t``, this is the sum of scores
``∇ log μ + λ̂^N (∇ log p_N - ∇ log μ)``, motivated by the spectral expansion
``p_N(y|x) = μ(y)[1 + Σ_{k≥2} λ_k^N ψ_k(x) φ_k(y)]``; as ``N → ∞`` the model is exactly the prior.
Without ``λ_int`` (``None``), ``λ_eff = λ̂`` at every lag.

Every network here is an *ensemble*: ``n_models`` independent MLPs with stacked weights evaluated by one
batched matrix product, so that models of several seeds and data budgets train and sample together (Adam
is elementwise, so training an ensemble on the summed loss is exactly training each member alone).

Inputs are sinusoidal encodings (as in the reference's ``PositionalEncoder``) of the state (over the
system's box), the condition ``x_0``, the capped lag (over ``[0, N_max]``) and the diffusion step
(over ``[0, T]``), concatenated and fed to an MLP with SiLU.

References: Viguera Diez et al., ICLR 2025, Eq. 7 (BoPITO score) and Sec. 4.3 (interpolation, λ_int);
Schreiner et al., "Implicit Transfer Operator Learning", NeurIPS 2023 (ITO); Ho et al., NeurIPS 2020 (DDPM).

Devices (issue 59): a model is built on ``device=`` (``None``: ``$ICLR25_DEVICE``, else ``auto``, the accelerator
when torch sees one; :func:`resolve_device`); its weights are drawn on the CPU and then moved, so a seed gives the
same initial model everywhere. The networks compute in float32; the BoPITO weight ``λ^N`` in float64 (``λ̂^N``
at N = 5000 needs it), except on MPS, which has no float64 (:func:`wide_dtype`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

__all__ = ["ModelConfig", "ScoreModel", "EnsembleMLP", "DiffusionSchedule", "sinusoidal_encoding",
           "bopito_weight", "check_lambda", "MODEL_KINDS", "resolve_device", "wide_dtype"]

MODEL_KINDS = ("bg", "ito", "bopito")
STATE_RANGE = 4.0


def resolve_device(device: Any) -> torch.device:
    """The ``torch.device`` of a ``device=`` argument (:func:`iclr25.utils.device.torch_device`: ``None`` is
    ``$ICLR25_DEVICE`` or ``auto``; an absent device is a one-line ``ValueError`` naming ``--device``); torch's
    ``meta`` stand-in (:func:`iclr25.utils.device.check_device_conformance`) is taken as given."""
    from iclr25.utils.device import torch_device  # noqa: PLC0415

    if isinstance(device, torch.device) and device.type == "meta":
        return device
    return torch_device(device)


def wide_dtype(device: Any) -> torch.dtype:
    """float64 where the device has it (CPU, CUDA), float32 on MPS: the dtype of the lag weights, the training
    draws and the sampler's update."""
    return torch.float32 if torch.device(device).type == "mps" else torch.float64


def check_lambda(value: Any, name: str) -> float:
    """Validate an eigenvalue-like hyperparameter: a number strictly inside (0, 1)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number in (0, 1), got {type(value).__name__}")
    v = float(value)
    if not (math.isfinite(v) and 0.0 < v < 1.0):
        raise ValueError(f"{name} must be in the open interval (0, 1), got {value!r}")
    return v


def bopito_weight(lag: torch.Tensor, lambda_hat: float, max_lag: int, lambda_int: float | None = None
                  ) -> torch.Tensor:
    """The weight of the dynamic score, ``λ_eff(N)^N`` (module docstring); ``lag`` may be ``inf`` (weight 0).

    Examples
    --------
    >>> float(bopito_weight(torch.tensor([0.0]), 0.9, 100)[0])
    1.0
    >>> float(bopito_weight(torch.tensor([float("inf")]), 0.9, 100)[0])
    0.0
    """
    lag = torch.as_tensor(lag)
    lag = lag.to(wide_dtype(lag.device))
    lam = torch.full_like(lag, float(lambda_hat))
    if lambda_int is not None:
        lam = torch.where(lag > max_lag, torch.full_like(lag, float(lambda_int)), lam)
    return torch.pow(lam, lag)


@dataclasses.dataclass(frozen=True)
class DiffusionSchedule:
    """DDPM noise schedule ``β_t = sigmoid(linspace(lo, hi, T))`` (the reference's sigmoid shape; its range
    is shifted so that ``ᾱ_T ≈ 0`` for data on the scale of the Prinz box)."""

    n_steps: int = 500
    lo: float = -7.0
    hi: float = -3.0

    def __post_init__(self) -> None:
        if isinstance(self.n_steps, bool) or not isinstance(self.n_steps, int) or self.n_steps < 2:
            raise ValueError(f"n_diffusion must be an integer >= 2, got {self.n_steps!r}")

    @property
    def betas(self) -> torch.Tensor:
        return torch.sigmoid(torch.linspace(self.lo, self.hi, self.n_steps, dtype=torch.float64))

    @property
    def alpha_bars(self) -> torch.Tensor:
        return torch.cumprod(1.0 - self.betas, 0)


def sinusoidal_encoding(s: torch.Tensor, lo: float, hi: float, dim: int) -> torch.Tensor:
    """``[u, sin(π ω_k u), cos(π ω_k u)]`` with ``u = (s - lo)/(hi - lo)`` and ``ω_k`` geometric in [1/2, 128]
    (the lowest frequency keeps ``[lo, hi]`` free of aliasing); ``s`` of shape ``(...)`` gives
    ``(..., dim + 1)``."""
    half = dim // 2
    freqs = math.pi * torch.pow(2.0, torch.linspace(-1.0, 7.0, half, dtype=s.dtype, device=s.device))
    u = (s - lo) / (hi - lo)
    ang = u[..., None] * freqs
    return torch.cat([u[..., None], torch.sin(ang), torch.cos(ang)], dim=-1)


class EnsembleMLP(nn.Module):
    """``n_models`` independent MLPs (``depth`` hidden layers of ``width``, SiLU), weights stacked on dim 0.

    ``forward(h)`` maps ``(n_models, B, in_dim)`` to ``(n_models, B, out_dim)``.
    """

    def __init__(self, n_models: int, in_dim: int, width: int, depth: int, out_dim: int, *,
                 generator: torch.Generator | None = None):
        super().__init__()
        dims = [in_dim] + [width] * depth + [out_dim]
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        for a, b in zip(dims[:-1], dims[1:], strict=True):
            bound = 1.0 / math.sqrt(a)
            w = (torch.rand(n_models, a, b, generator=generator) * 2 - 1) * bound
            bias = (torch.rand(n_models, 1, b, generator=generator) * 2 - 1) * bound
            self.weights.append(nn.Parameter(w))
            self.biases.append(nn.Parameter(bias))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        n = len(self.weights)
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = torch.baddbmm(b, h, w)
            if i < n - 1:
                h = torch.nn.functional.silu(h)
        return h


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """Hyperparameters of a :class:`ScoreModel` (JSON-serialisable; saved beside the weights)."""

    kind: str = "bopito"
    dim: int = 1
    box: tuple[tuple[float, float], ...] = ((-1.2, 1.2),)
    max_lag: int = 1000
    n_diffusion: int = 500
    emb_dim: int = 32
    width: int = 64
    depth: int = 3
    n_models: int = 1
    lambda_hat: float | None = None
    lambda_int: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in MODEL_KINDS:
            raise ValueError(f"kind must be one of {MODEL_KINDS}, got {self.kind!r}")
        for name in ("dim", "max_lag", "n_diffusion", "emb_dim", "width", "depth", "n_models"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.emb_dim % 2:
            raise ValueError(f"emb_dim must be even, got {self.emb_dim}")
        box = tuple(tuple(float(v) for v in b) for b in self.box)
        if len(box) != self.dim or any(len(b) != 2 or not b[0] < b[1] for b in box):
            raise ValueError(f"box must hold one (lo, hi) pair with lo < hi per dimension ({self.dim}), "
                             f"got {self.box!r}")
        object.__setattr__(self, "box", box)
        if self.kind == "bopito":
            if self.lambda_hat is None:
                raise ValueError("lambda_hat is required for a BoPITO model (a number in (0, 1))")
            object.__setattr__(self, "lambda_hat", check_lambda(self.lambda_hat, "lambda_hat"))
        if self.lambda_int is not None:
            object.__setattr__(self, "lambda_int", check_lambda(self.lambda_int, "lambda_int"))

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["box"] = [list(b) for b in self.box]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ModelConfig:
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - fields
        if unknown:
            raise ValueError(f"unknown model config keys {sorted(unknown)}")
        kw = dict(d)
        if "box" in kw:
            kw["box"] = tuple(tuple(b) for b in kw["box"])
        return cls(**kw)


class ScoreModel(nn.Module):
    """An ensemble ε-prediction model of one ``kind``: ``"bg"`` (unconditional prior), ``"ito"`` or
    ``"bopito"`` (which holds a frozen ``prior`` of kind ``"bg"``).

    ``eps(x_t, t, x0, lag)`` takes ``x_t`` ``(K, B, dim)``, integer diffusion steps ``t`` ``(K, B)``, and for
    the conditional kinds ``x0`` ``(K, B, dim)`` and ``lag`` ``(K, B)`` in frames (any value >= 0, ``inf``
    allowed for BoPITO).

    ``device``: where the model (and a BoPITO model's prior, moved with it) lives (``None``: ``$ICLR25_DEVICE`` or
    ``auto``); the weights are drawn on the CPU from ``seed`` and then moved.
    """

    def __init__(self, config: ModelConfig, *, prior: ScoreModel | None = None, seed: int = 0,
                 device: Any = None):
        super().__init__()
        self.config = config
        gen = torch.Generator().manual_seed(int(seed))
        e = config.emb_dim + 1
        n_in = config.dim * e + e
        if config.kind != "bg":
            n_in += config.dim * e + e
        self.net = EnsembleMLP(config.n_models, n_in, config.width, config.depth, config.dim, generator=gen)
        self.schedule = DiffusionSchedule(config.n_diffusion)
        if config.kind == "bopito":
            if prior is None or not isinstance(prior, ScoreModel) or prior.config.kind != "bg":
                raise ValueError("a BoPITO model needs prior= a ScoreModel of kind 'bg'")
            if prior.config.n_models not in (1, config.n_models):
                raise ValueError(f"prior has {prior.config.n_models} members; expected 1 or {config.n_models}")
            if prior.config.dim != config.dim or prior.config.n_diffusion != config.n_diffusion:
                raise ValueError("prior must have the same dim and n_diffusion as the BoPITO model")
            for p in prior.parameters():
                p.requires_grad_(False)
            prior.eval()
            self.prior = prior
        elif prior is not None:
            raise ValueError(f"prior= is only used by kind 'bopito', not {config.kind!r}")
        else:
            self.prior = None
        self.to(resolve_device(device))

    @property
    def device(self) -> torch.device:
        """Where the model's weights are."""
        return self.net.weights[0].device

    @property
    def n_models(self) -> int:
        return self.config.n_models

    def _encode_x(self, x: torch.Tensor) -> torch.Tensor:
        c = self.config
        # noised states x^t spread over about [-4, 4]: the encoding covers that range as well as the box
        return torch.cat([sinusoidal_encoding(x[..., d], min(lo, -STATE_RANGE), max(hi, STATE_RANGE), c.emb_dim)
                          for d, (lo, hi) in enumerate(c.box)], dim=-1)

    def _encode_t(self, t: torch.Tensor) -> torch.Tensor:
        return sinusoidal_encoding(t.to(torch.float32), 0.0, float(self.config.n_diffusion), self.config.emb_dim)

    def eps_dynamic(self, x: torch.Tensor, t: torch.Tensor, x0: torch.Tensor, lag: torch.Tensor) -> torch.Tensor:
        """The conditional network's output (ITO's ε, or BoPITO's ε_dyn) with the lag capped at ``max_lag``."""
        capped = torch.clamp(lag.to(torch.float32), max=float(self.config.max_lag))
        h = torch.cat([self._encode_x(x), self._encode_x(x0),
                       sinusoidal_encoding(capped, 0.0, float(self.config.max_lag), self.config.emb_dim),
                       self._encode_t(t)], dim=-1)
        return self.net(h)

    def eps(self, x: torch.Tensor, t: torch.Tensor, x0: torch.Tensor | None = None,
            lag: torch.Tensor | None = None) -> torch.Tensor:
        """The model's ε-prediction (module docstring)."""
        c = self.config
        if c.kind == "bg":
            return self.net(torch.cat([self._encode_x(x), self._encode_t(t)], dim=-1))
        if x0 is None or lag is None:
            raise ValueError(f"a {c.kind!r} model needs x0 and lag")
        dyn = self.eps_dynamic(x, t, x0, lag)
        if c.kind == "ito":
            return dyn
        assert self.prior is not None
        with torch.no_grad():
            prior = self.prior.eps(x, t) if self.prior.n_models == c.n_models else \
                self.prior.eps(x.reshape(1, -1, c.dim), t.reshape(1, -1)).reshape(x.shape)
        w = bopito_weight(lag, c.lambda_hat, c.max_lag, c.lambda_int).to(dyn.dtype)  # type: ignore[arg-type]
        return prior + w[..., None] * dyn

    def with_lambda(self, *, lambda_hat: float | None = None, lambda_int: float | None | str = "keep"
                    ) -> ScoreModel:
        """A copy sharing the weights, with another ``λ̂`` and/or ``λ_int`` (``None`` switches interpolation
        off). Only for BoPITO models."""
        if self.config.kind != "bopito":
            raise ValueError(f"with_lambda needs a BoPITO model, not kind {self.config.kind!r}")
        cfg = dataclasses.replace(self.config,
                                  lambda_hat=self.config.lambda_hat if lambda_hat is None else lambda_hat,
                                  lambda_int=self.config.lambda_int if lambda_int == "keep" else lambda_int)
        new = ScoreModel.__new__(ScoreModel)
        nn.Module.__init__(new)
        new.config = cfg
        new.net = self.net
        new.schedule = self.schedule
        new.prior = self.prior
        return new

    def select(self, idx: Sequence[int]) -> ScoreModel:
        """An ensemble of members ``idx`` (weights copied; a multi-member prior is selected alongside)."""
        idx = [int(i) for i in idx]
        if not idx or any(not 0 <= i < self.n_models for i in idx):
            raise ValueError(f"member indices must lie in [0, {self.n_models}), got {idx}")
        cfg = dataclasses.replace(self.config, n_models=len(idx))
        prior = None
        if self.prior is not None:
            prior = self.prior if self.prior.n_models == 1 else self.prior.select(idx)
        new = ScoreModel(cfg, prior=prior, device=self.device)
        with torch.no_grad():
            for p_new, p_old in zip(new.net.parameters(), self.net.parameters(), strict=True):
                p_new.copy_(p_old[idx])
        new.eval()
        return new

    def member(self, k: int) -> ScoreModel:
        """Ensemble member ``k`` as a one-member model (weights copied)."""
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < self.n_models:
            raise ValueError(f"member must be an integer in [0, {self.n_models}), got {k!r}")
        return self.select([k])
