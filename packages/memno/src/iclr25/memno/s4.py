"""Diagonal S4 (S4D) in pure PyTorch: a causal FFT convolution over time, and the equivalent recurrence.

Per channel ``h`` the continuous state space model is ``x' = A x + B u``, ``y = 2 Re(C x) + D u`` with a diagonal
complex ``A`` (only one of each conjugate pair is stored, hence the factor 2). Zero-order-hold discretisation
with step ``Δ`` gives ``Ā = e^{ΔA}``, ``B̄ = (e^{ΔA} − 1)/A · B`` and the convolution kernel

    K_k = 2 Re Σ_n C_n B̄_n Ā_n^k,     y_t = Σ_{k≤t} K_k u_{t−k} + D u_t,

evaluated for a whole sequence with an FFT of length 2T (so the circular convolution does not wrap), or one step
at a time with the cached state ``x_t = Ā x_{t−1} + B̄ u_t`` (streaming inference in O(1) per step).
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["S4D", "GRUMemory", "LSTMMemory", "make_memory"]


class S4D(nn.Module):
    """Diagonal state space layer (S4D-Lin initialisation) applied independently to each of ``d_model`` channels.

    Input and output have shape ``(batch, T, ..., H)``: time is axis 1, channels are last and any axes between
    (e.g. space) are independent sequences sharing the kernel, so no transpose is needed.
    :meth:`step` takes ``(batch, ..., H)``.

    Parameters
    ----------
    d_model : int
        Number of channels ``H`` (independent SSMs).
    d_state : int
        State size ``N``; ``N/2`` complex modes are stored (conjugate pairs).
    dt_min, dt_max : float
        ``log Δ`` is initialised uniformly in ``[log dt_min, log dt_max]`` and learned.
    output : {"glu", "linear"}
        The pointwise map after the GELU: a GLU of a 1×1 linear to ``2H`` channels, or a linear ``H → H``.

    References: Gu, Gupta, Goel, Ré, "On the parameterization and initialization of diagonal state space
    models" (S4D, NeurIPS 2022), eqs. (4)-(6) and S4D-Lin; the MemNO paper §4 (S4 as the memory layer).
    """

    def __init__(self, d_model: int, d_state: int = 64, *, dt_min: float = 1e-3, dt_max: float = 1e-1,
                 output: str = "glu") -> None:
        super().__init__()
        if not isinstance(d_model, int) or d_model < 1:
            raise ValueError(f"d_model must be a positive integer, got {d_model!r}")
        if not isinstance(d_state, int) or d_state < 2 or d_state % 2:
            raise ValueError(f"d_state must be an even integer >= 2, got {d_state!r}")
        if not 0 < dt_min <= dt_max:
            raise ValueError(f"need 0 < dt_min <= dt_max, got dt_min={dt_min}, dt_max={dt_max}")
        if output not in ("glu", "linear"):
            raise ValueError(f"output must be 'glu' or 'linear', got {output!r}")
        h, n = d_model, d_state // 2
        self.d_model, self.d_state = d_model, d_state
        log_dt = torch.rand(h) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)
        self.log_dt = nn.Parameter(log_dt)
        self.C = nn.Parameter(torch.view_as_real(torch.randn(h, n, dtype=torch.cfloat)))
        self.log_A_real = nn.Parameter(torch.log(0.5 * torch.ones(h, n)))
        self.A_imag = nn.Parameter(math.pi * torch.arange(n, dtype=torch.float32).repeat(h, 1))
        self.D = nn.Parameter(torch.randn(h))
        self.activation = nn.GELU()
        if output == "glu":
            self.output = nn.Sequential(nn.Linear(h, 2 * h), nn.GLU(dim=-1))
        else:
            self.output = nn.Linear(h, h)

    def _a_and_dta(self) -> tuple[torch.Tensor, torch.Tensor]:
        # the continuous A and ΔA, complex (H, N/2)
        a = -torch.exp(self.log_A_real) + 1j * self.A_imag
        return a, a * torch.exp(self.log_dt)[:, None]

    def discretize(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(Ā, B̄, C)``, each complex of shape ``(H, N/2)``, by zero-order hold with ``B = 1``."""
        a, dta = self._a_and_dta()
        a_bar = torch.exp(dta)
        b_bar = (a_bar - 1.0) / a
        return a_bar, b_bar, torch.view_as_complex(self.C)

    def kernel(self, length: int) -> torch.Tensor:
        """The convolution kernel ``K_k = 2 Re Σ_n C_n B̄_n Ā_n^k``, shape ``(H, length)``."""
        a, dta = self._a_and_dta()
        cb = torch.view_as_complex(self.C) * (torch.exp(dta) - 1.0) / a
        powers = torch.exp(dta[..., None] * torch.arange(length, device=dta.device))  # Ā^k, (H, N/2, L)
        return 2 * torch.einsum("hn,hnl->hl", cb, powers).real

    def ssm(self, u: torch.Tensor, *, method: str = "auto") -> torch.Tensor:
        """The linear SSM part ``y = K * u + D u``, causal in time (axis 1).

        ``method="fft"``: an FFT of length ``2T`` (no wrap-around), O(T log T); ``"toeplitz"``: the same
        convolution as a product with the lower-triangular Toeplitz matrix ``K_{t−s}``, O(T²) but faster on
        CPU for the short histories of the paper (T ≈ 25); ``"auto"`` uses Toeplitz for ``T ≤ 64``.
        """
        t = u.shape[1]
        if method not in ("auto", "fft", "toeplitz"):
            raise ValueError(f"method must be 'auto', 'fft' or 'toeplitz', got {method!r}")
        if method == "toeplitz" or (method == "auto" and t <= 64):
            return self._ssm_toeplitz(u)
        k = self.kernel(t).T  # (T, H)
        n_fft = 2 * t
        k_f = torch.fft.rfft(k, n=n_fft, dim=0).reshape((n_fft // 2 + 1,) + (1,) * (u.ndim - 3) + (self.d_model,))
        y = torch.fft.irfft(torch.fft.rfft(u, n=n_fft, dim=1) * k_f, n=n_fft, dim=1)[:, :t]
        return y + self.D * u

    def _ssm_toeplitz(self, u: torch.Tensor) -> torch.Tensor:
        t, h = u.shape[1], self.d_model
        k = self.kernel(t)  # (H, T)
        idx = torch.arange(t, device=u.device)
        lag = idx[:, None] - idx[None, :]
        toeplitz = torch.where(lag >= 0, k[:, lag.clamp(min=0)], 0.0)  # (H, T, T): K_{t−s} for s ≤ t
        perm = (u.ndim - 1, 1, *[i for i in range(u.ndim) if i not in (1, u.ndim - 1)])
        cols = u.permute(perm)  # (H, T, batch, ...)
        y = torch.bmm(toeplitz, cols.reshape(h, t, -1)).reshape(cols.shape)
        inv = [perm.index(i) for i in range(u.ndim)]
        return y.permute(inv) + self.D * u

    def ssm_recurrent(self, u: torch.Tensor) -> torch.Tensor:
        """The same as :meth:`ssm` by the explicit recurrence ``x_t = Ā x_{t−1} + B̄ u_t`` (slow; for checks)."""
        state = self.init_state(u.shape[:1] + u.shape[2:-1], device=u.device)
        ys = []
        for i in range(u.shape[1]):
            y, state = self._ssm_step(u[:, i], state)
            ys.append(y)
        return torch.stack(ys, dim=1)

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        """``output(GELU(K * u + D u))`` for ``u`` of shape ``(batch, T, ..., H)``."""
        if u.ndim < 3 or u.shape[-1] != self.d_model:
            raise ValueError(f"u must have shape (batch, T, ..., {self.d_model}), got {tuple(u.shape)}")
        return self.output(self.activation(self.ssm(u)))

    def init_state(self, batch: int | tuple[int, ...], *, device: torch.device | str | None = None
                   ) -> torch.Tensor:
        """The zero state, complex of shape ``(*batch, H, N/2)``."""
        shape = (batch,) if isinstance(batch, int) else tuple(batch)
        return torch.zeros(*shape, self.d_model, self.d_state // 2, dtype=torch.cfloat, device=device)

    def _ssm_step(self, u_t: torch.Tensor, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a_bar, b_bar, c = self.discretize()
        state = a_bar * state + b_bar * u_t[..., None]
        y = 2 * (c * state).sum(-1).real + self.D * u_t
        return y, state

    def step(self, u_t: torch.Tensor, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One streaming step: ``u_t`` of shape ``(batch, ..., H)`` → output of that shape and the next state."""
        y, state = self._ssm_step(u_t, state)
        return self.output(self.activation(y)), state


class _RNNMemory(nn.Module):
    """A torch RNN run along time for each sequence, with the ``(batch, T, H)`` layout of :class:`S4D`."""

    rnn: nn.Module

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        y, _ = self.rnn(u)
        return y

    def init_state(self, batch: int, *, device: torch.device | str | None = None):
        return None

    def step(self, u_t: torch.Tensor, state):
        y, state = self.rnn(u_t[:, None, :], state)
        return y[:, 0], state


class GRUMemory(_RNNMemory):
    """A GRU over time (the paper's RNN-memory ablation), channels ``H → H``."""

    def __init__(self, d_model: int) -> None:
        super().__init__()
        self.rnn = nn.GRU(d_model, d_model, batch_first=True)


class LSTMMemory(_RNNMemory):
    """An LSTM over time, channels ``H → H``."""

    def __init__(self, d_model: int) -> None:
        super().__init__()
        self.rnn = nn.LSTM(d_model, d_model, batch_first=True)


def make_memory(kind: str, d_model: int, *, d_state: int = 64, output: str = "glu") -> nn.Module:
    """The memory layer ``kind`` ∈ {"s4d", "gru", "lstm"} on ``d_model`` channels (``output``: S4D's)."""
    if kind == "s4d":
        return S4D(d_model, d_state, output=output)
    if kind == "gru":
        return GRUMemory(d_model)
    if kind == "lstm":
        return LSTMMemory(d_model)
    raise ValueError(f"memory must be one of 's4d', 'gru', 'lstm' or None, got {kind!r}")
