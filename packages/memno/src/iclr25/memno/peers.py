"""External Markovian peer: the ``neuraloperator`` package's FNO (extra ``iclr25-memno[peers]``).

It is wrapped to the next-step interface of :class:`~iclr25.memno.models.MemNO` (``forward`` over a trajectory,
``init_state``/``step`` for rollouts) with the same residual parametrisation ``û_{t+1} = u_t + FNO(u_t)``, and
trained by the same :func:`~iclr25.memno.training.train` loop and budget.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from .datasets import PDEDataset
from .experiments import check_modes
from .training import evaluate, train

try:
    from neuralop.models import FNO as _FNO
except ImportError as exc:  # pragma: no cover - depends on the optional extra
    raise ImportError("the neuraloperator peer needs the [peers] extra: pip install './packages/memno[peers]' "
                      "from a clone") from exc

__all__ = ["NeuralopFNO", "train_neuralop_fno", "neuralop_fno"]


class NeuralopFNO(nn.Module):
    """``neuralop.models.FNO`` applied to every time slice: ``(batch, T, X)`` → next-step predictions."""

    def __init__(self, *, width: int = 32, n_layers: int = 4, modes: int = 16) -> None:
        super().__init__()
        # neuralop counts modes over the full spectrum and keeps n_modes // 2 + 1 of the real FFT;
        # 2 (modes − 1) keeps the same ``modes`` lowest modes as our layers
        self.fno = _FNO(n_modes=(2 * (modes - 1),), in_channels=1, out_channels=1, hidden_channels=width,
                        n_layers=n_layers)
        self.config = {"peer": "neuralop.models.FNO", "width": width, "n_layers": n_layers, "modes": modes}

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        b, t, n_x = u.shape
        return u + self.fno(u.reshape(b * t, 1, n_x)).reshape(b, t, n_x)

    def init_state(self, u0: torch.Tensor) -> None:
        return None

    def step(self, u_t: torch.Tensor, state: None) -> tuple[torch.Tensor, None]:
        return u_t + self.fno(u_t[:, None])[:, 0], None


def neuralop_fno(*, width: int = 32, n_layers: int = 4, modes: int = 16, seed: int = 0) -> NeuralopFNO:
    """A seeded :class:`NeuralopFNO`."""
    torch.manual_seed(seed)
    return NeuralopFNO(width=width, n_layers=n_layers, modes=modes)


def train_neuralop_fno(train_set: PDEDataset, test_set: PDEDataset, *, epochs: int, width: int, n_layers: int,
                       modes: int | None = None, seed: int = 0, device: Any = None, **train_kw: Any
                       ) -> dict[str, Any]:
    """Train the peer with :func:`~iclr25.memno.training.train` and evaluate it like the other models, on
    ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``).

    ``modes=None`` keeps ``resolution // 2`` modes; a ``modes`` too large for the resolution raises.
    """
    modes = check_modes(modes, train_set.resolution)
    model = neuralop_fno(width=width, n_layers=n_layers, modes=modes, seed=seed)
    res = train(model, train_set, epochs=epochs, seed=seed, desc="neuralop FNO", device=device, **train_kw)
    return {"model": res.model, "train": res, "eval": evaluate(res.model, test_set, device=device)}
