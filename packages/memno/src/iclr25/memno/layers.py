"""Markovian Fourier layers acting on one time slice ``(batch, X, channels)``: FNO and factorised FNO (FFNO).

Channels are last so that every pointwise map is one ``nn.Linear`` (a plain matrix product, several times
faster on CPU than a 1×1 ``Conv1d``).
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["SpectralConv1d", "FNOLayer", "FFNOLayer", "FeedForward"]


class SpectralConv1d(nn.Module):
    """``IFFT(W_k · FFT(z)_k)`` for the lowest ``modes`` Fourier modes (complex per-mode channel mixing).

    .. math:: (\\mathcal K z)(x) = \\mathcal F^{-1}\\big[ W_k\\, \\hat z_k \\big](x), \\quad k < k_{max}

    Resolution-agnostic: the same weights apply on any grid with at least ``2 (modes − 1)`` points, which is
    what resolution transfer uses.

    References: Li et al., "Fourier neural operator" (ICLR 2021), eq. (4); Tran et al., "Factorized Fourier
    neural operators" (ICLR 2023), eq. (5).
    """

    def __init__(self, in_channels: int, out_channels: int, modes: int) -> None:
        super().__init__()
        for name, v in (("in_channels", in_channels), ("out_channels", out_channels), ("modes", modes)):
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        self.modes = modes
        scale = 1.0 / (in_channels * out_channels)
        self.weight = nn.Parameter(scale * torch.randn(modes, in_channels, out_channels, 2))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        n_x = z.shape[-2]
        if n_x // 2 + 1 < self.modes:
            raise ValueError(f"resolution {n_x} is too coarse for {self.modes} Fourier modes: the input needs at "
                             f"least {2 * (self.modes - 1)} grid points (or fewer modes)")
        zh = torch.fft.rfft(z, dim=-2)[..., : self.modes, :]
        w = torch.view_as_complex(self.weight)
        # per-mode channel mixing as one batched complex matmul over modes: (M, N, I) @ (M, I, O)
        out = torch.matmul(zh.transpose(0, 1), w).transpose(0, 1)
        return torch.fft.irfft(out, n=n_x, dim=-2)


class FeedForward(nn.Module):
    """Pointwise two-layer MLP ``W₂ σ(W₁ z)`` on the channel axis of ``(batch, X, C)``."""

    def __init__(self, width: int, factor: int = 2, activation: type[nn.Module] = nn.GELU) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(width, factor * width), activation(), nn.Linear(factor * width, width))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.net(z)


class FFNOLayer(nn.Module):
    """A factorised-FNO layer, ``z ← z + FF(K z)``: spectral mixing, then a feed-forward, inside a residual.

    In 1-D the factorisation over axes is trivial, so this is the F-FNO block of Tran et al. (2023) with one
    axis: the nonlinearity lives in the feed-forward after the spectral operator, not between layers.

    References: Tran et al., "Factorized Fourier neural operators" (ICLR 2023), eq. (7); MemNO paper §4
    (Markovian layers of S4FFNO).
    """

    def __init__(self, width: int, modes: int, *, ff_factor: int = 2) -> None:
        super().__init__()
        self.spectral = SpectralConv1d(width, width, modes)
        self.ff = FeedForward(width, ff_factor)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return z + self.ff(self.spectral(z))


class FNOLayer(nn.Module):
    """A plain FNO layer, ``z ← σ(K z + W z)`` (``σ`` = GELU, omitted on the last layer).

    References: Li et al., "Fourier neural operator" (ICLR 2021), eq. (2).
    """

    def __init__(self, width: int, modes: int, *, activation: bool = True) -> None:
        super().__init__()
        self.spectral = SpectralConv1d(width, width, modes)
        self.pointwise = nn.Linear(width, width)
        self.activation = nn.GELU() if activation else nn.Identity()

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.activation(self.spectral(z) + self.pointwise(z))
