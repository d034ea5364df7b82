"""Sub-network layers: frozen signed weights with a learned binary mask per task (supermasks).

.. math:: y = (W \\odot M_t)\\, x, \\quad M_t = \\mathbb 1[S_t \\ge 0], \\quad
          W = \\operatorname{sign}(W_0)\\, \\frac{g}{\\sqrt{\\text{fan\\_in}}}

``W`` never trains; each task ``t`` owns a score tensor ``S_t`` that trains through the straight-through
estimator (``dL/dS_t := dL/dM_t``), and its own LayerNorm. Earlier tasks' scores and norms are frozen, so their
sub-networks cannot change: zero forgetting by construction. ``masked=False`` gives the ordinary dense layer
(trainable ``W``) that the continual-learning baselines use on the same backbone.

References: Zhang et al., ICLR 2025, Sec. 4.2 (MS-GODE sub-network learning); Wortsman et al., "Supermasks in
Superposition", NeurIPS 2020; Ramanujan et al., "What's hidden in a randomly weighted network?", CVPR 2020.
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["MaskLinear", "TaskLayerNorm", "straight_through_mask"]


def straight_through_mask(scores: torch.Tensor) -> torch.Tensor:
    """``1[scores >= 0]`` in the forward pass, identity gradient to ``scores`` in the backward pass."""
    hard = (scores >= 0).to(scores.dtype)
    if not scores.requires_grad:
        return hard
    return hard + scores - scores.detach()


class MaskLinear(nn.Module):
    """A bias-free linear layer, ``masked`` (frozen signed weights, one score tensor per task) or dense."""

    def __init__(self, d_in: int, d_out: int, *, masked: bool = True, generator: torch.Generator | None = None):
        super().__init__()
        self.d_in, self.d_out, self.masked = int(d_in), int(d_out), bool(masked)
        self.task = 0
        w = torch.empty(d_out, d_in)
        if masked:
            w.normal_(generator=generator)
            gain = math.sqrt(2.0)  # relu gain
            self.register_buffer("weight", torch.sign(w) * gain / math.sqrt(d_in))
            self.scores = nn.ParameterList()
        else:
            bound = 1.0 / math.sqrt(d_in)  # nn.Linear's kaiming_uniform(a=sqrt(5)) bound
            w.uniform_(-bound, bound, generator=generator)
            self.weight = nn.Parameter(w)
        self._generator = generator
        self._cache: torch.Tensor | None = None

    @property
    def n_tasks(self) -> int:
        return len(self.scores) if self.masked else 1

    def add_task(self) -> None:
        """Append a fresh score tensor, ``kaiming_uniform(a = sqrt(0.5))`` (no preallocated task count), drawn on
        the CPU from the layer's generator and placed beside the weights (the same scores on every device)."""
        if not self.masked:
            return
        s = torch.empty(self.d_out, self.d_in)
        bound = math.sqrt(6.0 / ((1 + 0.5) * self.d_in))
        s.uniform_(-bound, bound, generator=self._generator)
        self.scores.append(nn.Parameter(s.to(self.weight.device)))

    def mask(self, task: int | None = None) -> torch.Tensor:
        """The binary mask of ``task`` (default: the current one)."""
        t = self.task if task is None else task
        return (self.scores[t] >= 0).to(self.weight.dtype)

    def effective_weight(self) -> torch.Tensor:
        if self._cache is not None:
            return self._cache
        if not self.masked:
            return self.weight
        if not 0 <= self.task < len(self.scores):
            raise ValueError(f"task must be in [0, {len(self.scores) - 1}], got {self.task}")
        return self.weight * straight_through_mask(self.scores[self.task])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.effective_weight().T


class TaskLayerNorm(nn.Module):
    """One LayerNorm per task (masked models) or a single shared one (dense models)."""

    def __init__(self, d: int, *, per_task: bool = True):
        super().__init__()
        self.d, self.per_task = int(d), bool(per_task)
        self.norms = nn.ModuleList([] if per_task else [nn.LayerNorm(d)])
        self.task = 0

    def add_task(self, device: torch.device | str | None = None) -> None:
        """Append a LayerNorm for a new task on ``device`` (default the CPU)."""
        if self.per_task:
            self.norms.append(nn.LayerNorm(self.d, device=device))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norms[self.task if self.per_task else 0](x)
