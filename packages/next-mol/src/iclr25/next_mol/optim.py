"""AdamW with a per-step learning-rate factor: the optimiser of the LM and of DMT.

The same arithmetic as ``torch.optim.AdamW`` (single-tensor path, no amsgrad) driven by
``torch.optim.lr_scheduler.LambdaLR``, step for step, without ``torch.optim``: the first call of a
``torch.optim.Optimizer`` imports ``torch._dynamo`` (about 1.8 s of CPU per process), which this package, which
compiles nothing, has no use for. Per parameter, with ``lr_k = lr * lr_lambda(k)`` at step ``k = 0, 1, ...``:

.. math::

    \\theta \\leftarrow \\theta (1 - lr_k \\lambda), \\quad m \\leftarrow \\beta_1 m + (1 - \\beta_1) g, \\quad
    v \\leftarrow \\beta_2 v + (1 - \\beta_2) g^2, \\quad
    \\theta \\leftarrow \\theta - \\frac{lr_k}{1 - \\beta_1^{t}} \\frac{m}{\\sqrt{v} / \\sqrt{1 - \\beta_2^{t}} + \\epsilon}.

References: Loshchilov & Hutter, *Decoupled Weight Decay Regularization*, ICLR 2019 (Algorithm 2).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch

__all__ = ["AdamW"]


class AdamW:
    """AdamW over ``params`` whose learning rate at step ``k`` is ``lr * lr_lambda(k)``.

    Examples
    --------
    >>> w = torch.nn.Parameter(torch.ones(2))
    >>> opt = AdamW([w], lr=0.1, weight_decay=0.0)
    >>> (w ** 2).sum().backward(); opt.step()
    >>> print(*(round(x, 4) for x in w.tolist()))
    0.9 0.9
    """

    def __init__(self, params: Iterable[torch.nn.Parameter], *, lr: float, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2,
                 lr_lambda: Callable[[int], float] | None = None) -> None:
        self.params = list(params)
        if not self.params:
            raise ValueError("AdamW got no parameters to optimise")
        if not lr > 0:
            raise ValueError(f"lr must be > 0, got {lr}")
        self.lr, self.betas, self.eps, self.weight_decay = float(lr), betas, float(eps), float(weight_decay)
        self.lr_lambda = lr_lambda if lr_lambda is not None else (lambda k: 1.0)
        self.k = 0
        self.state: dict[int, tuple[list[float], torch.Tensor, torch.Tensor]] = {}

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        lr = self.lr * self.lr_lambda(self.k)
        beta1, beta2 = self.betas
        for p in self.params:
            if p.grad is None:
                continue
            grad = p.grad
            if id(p) not in self.state:
                self.state[id(p)] = ([0.0], torch.zeros_like(p, memory_format=torch.preserve_format),
                                     torch.zeros_like(p, memory_format=torch.preserve_format))
            count, exp_avg, exp_avg_sq = self.state[id(p)]
            count[0] += 1.0
            t = count[0]
            p.mul_(1 - lr * self.weight_decay)
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            step_size = lr / (1 - beta1 ** t)
            denom = (exp_avg_sq.sqrt() / (1 - beta2 ** t) ** 0.5).add_(self.eps)
            p.addcdiv_(exp_avg, denom, value=-step_size)
        self.k += 1


def step_callback(model: torch.nn.Module, callback: Callable[[int], None] | None, step: int,
                  marks: set[int]) -> None:
    """Call ``callback(step)`` at the marked training steps with ``model`` in eval mode, then back to training."""
    if callback is not None and step in marks:
        model.eval()
        callback(step)
        model.train()
