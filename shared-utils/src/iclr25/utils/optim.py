"""Adam and AdamW without ``torch.optim``: the one optimiser the federation's torch packages share.

The first ``torch.optim.Optimizer`` a process builds imports ``torch._dynamo``: about 1.5-2 s of CPU, longer than
many of the short training runs here (a suite trains dozens of them). :class:`Adam` computes what
``torch.optim.Adam`` / ``torch.optim.AdamW`` compute with ``foreach`` kernels and no amsgrad, bit for bit on the
CPU (``tests/test_optim.py`` checks both against ``torch.optim`` over many steps, with weight decay, several
parameter groups and a learning-rate schedule). Per parameter ``θ`` with gradient ``g`` at its ``t``-th step,
learning rate ``η`` and weight decay ``λ``:

.. math::

    g \\leftarrow g + \\lambda \\theta \\text{ (Adam)} \\quad\\text{or}\\quad
    \\theta \\leftarrow \\theta (1 - \\eta \\lambda) \\text{ (AdamW, } decoupled=True),

    m \\leftarrow \\beta_1 m + (1 - \\beta_1) g, \\quad v \\leftarrow \\beta_2 v + (1 - \\beta_2) g^2, \\quad
    \\theta \\leftarrow \\theta - \\frac{\\eta}{1 - \\beta_1^{t}}
    \\frac{m}{\\sqrt{v} / \\sqrt{1 - \\beta_2^{t}} + \\epsilon}.

The learning rate of a step is ``group lr × lr_scale × lr_lambda(k)`` (``k`` = steps taken so far), which
covers ``torch.optim.lr_scheduler.LambdaLR`` and a schedule set by hand (:meth:`Adam.set_lr`).

References: Kingma & Ba, *Adam*, ICLR 2015; Loshchilov & Hutter, *Decoupled Weight Decay Regularization*, ICLR
2019 (Algorithm 2).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["Adam"]


class Adam:
    """Adam (``decoupled=False``) or AdamW (``decoupled=True``) over parameters or parameter groups.

    Parameters
    ----------
    params
        Tensors, or groups ``{"params": [...], "lr": η (optional), "weight_decay": λ (optional)}``; a group
        without its own ``lr`` / ``weight_decay`` uses the optimiser's. Tensors with ``requires_grad=False`` are
        left out; a parameter without a gradient at a step is skipped at that step (its step count waits), as in
        torch.
    lr, betas, eps, weight_decay
        As ``torch.optim.Adam`` (``weight_decay`` is the L2 term) or ``torch.optim.AdamW`` (decoupled).
    decoupled
        ``True``: AdamW's decoupled weight decay.
    lr_lambda
        Factor of the learning rate at step ``k = 0, 1, ...`` (as ``LambdaLR``); ``None``: 1.

    Examples
    --------
    In a torch package (``iclr25-utils`` itself does not depend on torch; ``tests/test_optim.py`` runs this)::

        w = torch.nn.Parameter(torch.ones(2))
        opt = Adam([w], lr=0.1)
        (w ** 2).sum().backward()
        opt.step()  # w is now [0.9, 0.9]
    """

    def __init__(self, params: Iterable[Any], *, lr: float, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, decoupled: bool = False,
                 lr_lambda: Callable[[int], float] | None = None) -> None:
        items = list(params)
        if not items:
            raise ValueError("Adam got no parameters to optimise")
        groups = items if isinstance(items[0], Mapping) else [{"params": items}]
        if not lr > 0:
            raise ValueError(f"lr must be > 0, got {lr}")
        self.lr, self.betas, self.eps = float(lr), (float(betas[0]), float(betas[1])), float(eps)
        self.weight_decay, self.decoupled = float(weight_decay), bool(decoupled)
        self.lr_lambda = lr_lambda
        self.groups = [{"params": [p for p in g["params"] if p.requires_grad],
                        "lr": None if g.get("lr") is None else float(g["lr"]),
                        "weight_decay": float(g.get("weight_decay", self.weight_decay))} for g in groups]
        self.k = 0
        self.state: dict[int, list] = {}  # id(param) -> [step count, m, v]

    @property
    def params(self) -> list:
        """Every parameter of every group, in order."""
        return [p for g in self.groups for p in g["params"]]

    def set_lr(self, lr: float) -> None:
        """Set the learning rate of the groups that have none of their own (a schedule set by hand)."""
        self.lr = float(lr)

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def step(self, lr_scale: float = 1.0) -> None:
        """One update of every parameter that has a gradient; the learning rate is scaled by ``lr_scale``."""
        import torch  # noqa: PLC0415 - only the torch packages build an optimiser

        with torch.no_grad():
            self._step(torch, float(lr_scale) * (1.0 if self.lr_lambda is None else float(self.lr_lambda(self.k))))
        self.k += 1

    def _step(self, torch: Any, factor: float) -> None:
        b1, b2 = self.betas
        for g in self.groups:
            live = [p for p in g["params"] if p.grad is not None]
            if not live:
                continue
            lr = (self.lr if g["lr"] is None else g["lr"]) * factor
            for p in live:
                if id(p) not in self.state:
                    self.state[id(p)] = [0, torch.zeros_like(p, memory_format=torch.preserve_format),
                                         torch.zeros_like(p, memory_format=torch.preserve_format)]
                self.state[id(p)][0] += 1
            states = [self.state[id(p)] for p in live]
            m, v = [s[1] for s in states], [s[2] for s in states]
            grads = [p.grad for p in live]
            wd = g["weight_decay"]
            if wd != 0:
                if self.decoupled:
                    torch._foreach_mul_(live, 1 - lr * wd)
                else:
                    grads = torch._foreach_add(grads, live, alpha=wd)
            torch._foreach_lerp_(m, grads, 1 - b1)
            torch._foreach_mul_(v, b2)
            torch._foreach_addcmul_(v, grads, grads, 1 - b2)
            step_size = [-(lr / (1 - b1 ** s[0])) for s in states]
            denom = torch._foreach_sqrt(v)
            torch._foreach_div_(denom, [(1 - b2 ** s[0]) ** 0.5 for s in states])
            torch._foreach_add_(denom, self.eps)
            torch._foreach_addcdiv_(live, m, denom, step_size)
