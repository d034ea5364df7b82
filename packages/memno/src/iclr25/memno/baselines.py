"""The trivial predictors every table is read against: do-nothing (persistence) and linear extrapolation.

Both have the next-step interface of :class:`~iclr25.memno.models.MemNO` (``forward`` over a trajectory,
``init_state``/``step`` for rollouts), so :func:`~iclr25.memno.training.evaluate` scores them exactly like a
trained model. A learned model whose nRMSE is not below the do-nothing predictor's has learned nothing about
the dynamics; linear extrapolation is the simplest predictor that uses one past frame (memory).
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["DoNothing", "LinearExtrapolation", "TRIVIAL_NAMES", "make_trivial"]

#: Names of the trivial predictors in the tables of ``repro``.
TRIVIAL_NAMES = ("do-nothing", "linear-extrapolation")


class DoNothing(nn.Module):
    """Persistence: ``û_{t+1} = u_t``.

    References: the standard trivial baseline of next-step PDE surrogates (e.g. PDEBench); issue 27.
    """

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        """``(batch, T, X)`` → ``(batch, T, X)``: every frame predicts itself."""
        return u.clone()

    def init_state(self, u0: torch.Tensor) -> None:
        return None

    def step(self, u_t: torch.Tensor, state: None) -> tuple[torch.Tensor, None]:
        return u_t.clone(), None


class LinearExtrapolation(nn.Module):
    """Linear extrapolation from the last two frames: ``û_{t+1} = 2 u_t − u_{t−1}`` (``û_1 = u_0``).

    The first step has no past frame and falls back to persistence; a rollout from one frame therefore stays at
    ``u_0`` (its rollout score equals the do-nothing predictor's).
    """

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        """``(batch, T, X)`` → ``(batch, T, X)``, causal in time."""
        prev = torch.cat([u[:, :1], u[:, :-1]], dim=1)
        return 2 * u - prev

    def init_state(self, u0: torch.Tensor) -> torch.Tensor | None:
        return None

    def step(self, u_t: torch.Tensor, state: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        prev = u_t if state is None else state
        return 2 * u_t - prev, u_t


def make_trivial(name: str) -> nn.Module:
    """The trivial predictor called ``name`` (one of :data:`TRIVIAL_NAMES`)."""
    if name == "do-nothing":
        return DoNothing()
    if name == "linear-extrapolation":
        return LinearExtrapolation()
    raise ValueError(f"name must be one of {TRIVIAL_NAMES}, got {name!r}")
