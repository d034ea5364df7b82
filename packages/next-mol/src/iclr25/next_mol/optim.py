"""AdamW with a per-step learning-rate factor: the optimiser of the LM and of DMT.

``torch.optim.AdamW`` driven by ``torch.optim.lr_scheduler.LambdaLR``, step for step, without ``torch.optim``:
the first call of a ``torch.optim.Optimizer`` imports ``torch._dynamo`` (about 1.8 s of CPU per process), which
this package, which compiles nothing, has no use for. It is the federation's shared optimiser,
:class:`iclr25.utils.optim.Adam` with decoupled weight decay (its module gives the update). Per parameter, with
``lr_k = lr * lr_lambda(k)`` at step ``k = 0, 1, ...``, the update of Loshchilov & Hutter, *Decoupled Weight
Decay Regularization*, ICLR 2019 (Algorithm 2).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch

from iclr25.utils.optim import Adam

__all__ = ["AdamW"]


def AdamW(params: Iterable[torch.nn.Parameter], *, lr: float,  # noqa: N802 - named as torch's
          betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8, weight_decay: float = 1e-2,
          lr_lambda: Callable[[int], float] | None = None) -> Adam:
    """AdamW over ``params`` whose learning rate at step ``k`` is ``lr * lr_lambda(k)``.

    Examples
    --------
    >>> w = torch.nn.Parameter(torch.ones(2))
    >>> opt = AdamW([w], lr=0.1, weight_decay=0.0)
    >>> (w ** 2).sum().backward(); opt.step()
    >>> print(*(round(x, 4) for x in w.tolist()))
    0.9 0.9
    """
    return Adam(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, decoupled=True, lr_lambda=lr_lambda)


def step_callback(model: torch.nn.Module, callback: Callable[[int], None] | None, step: int,
                  marks: set[int]) -> None:
    """Call ``callback(step)`` at the marked training steps with ``model`` in eval mode, then back to training."""
    if callback is not None and step in marks:
        model.eval()
        callback(step)
        model.train()
