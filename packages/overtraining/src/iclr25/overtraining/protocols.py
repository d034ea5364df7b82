"""Overtraining reversal and the other task changes: stop one copy of the network at the behavioural plateau
(E₀, the first epoch with training accuracy 1), train an identical copy on to ``overtrain_factor``·E₀, change
the labels (:data:`~iclr25.overtraining.task.PROTOCOLS`), train both, and count the epochs to relearn.

The kernel argument: with K_t(x, x') = ⟨φ_t(x), φ_t(x')⟩ the hidden kernel at epoch t, the alignment
A(K) = yᵀKy/(‖K‖_F‖y‖²) is unchanged by reversal (−y)ᵀK(−y) = yᵀKy, so a kernel that grew aligned to the task
during overtraining (A(K_over) > A(K_plateau) > A(K₀)) is reused to relearn the reversed readout.

References: Kumar et al., ICLR 2025, Sec. 5 (overtraining reversal effect, after-kernel argument).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .geometry import kernel_alignment
from .network import MLPParams, TrainConfig, forward, hidden, init_mlp, train_mlp
from .task import OdourTask, shifted_labels

__all__ = ["ShiftResult", "epochs_to_learn", "overtraining_shift"]


@dataclasses.dataclass(frozen=True)
class ShiftResult:
    """Relearning after a task change for a plateau-stopped and an overtrained copy of one network."""

    protocol: str
    E0: int
    overtrain_epochs: int
    epochs_plateau: int | None       # epochs to reach the criterion on the new labels (None: not within budget)
    epochs_overtrained: int | None
    alignment_initial: float         # A(K₀) on the original labels
    alignment_plateau: float
    alignment_overtrained: float
    criterion: float

    @property
    def ratio(self) -> float:
        """epochs_overtrained / epochs_plateau (nan when either did not reach the criterion)."""
        if not self.epochs_plateau or self.epochs_overtrained is None:
            return float("nan")
        return self.epochs_overtrained / self.epochs_plateau


def epochs_to_learn(params: MLPParams, X: np.ndarray, y: np.ndarray, config: TrainConfig, *,
                    criterion: float = 1.0, max_epochs: int = 5000, train_hidden: bool = True,
                    device: Any = None) -> int | None:
    """Full-batch GD epochs from ``params`` until training accuracy ≥ ``criterion`` (None if not by max_epochs).
    ``train_hidden=False`` trains the readout a only, on the frozen features φ (the kernel argument literally).
    ``device``: where the GD runs (:func:`~iclr25.overtraining.network.train_mlp`)."""
    from .network import _accuracy_torch, _grad_torch, _t, accelerator, loss_and_grad

    dev = accelerator(device)
    if dev is not None:  # the same loop in torch float64 on the device
        Xd, yd, Wd, ad = _t(X, dev), _t(y, dev), _t(params.W, dev), _t(params.a, dev)
        for e in range(max_epochs + 1):
            if _accuracy_torch(Wd, ad, Xd, yd, params.alpha, params.activation) >= criterion:
                return e
            gW, ga = _grad_torch(Wd, ad, Xd, yd, params.alpha, params.activation, config.weight_decay)
            if train_hidden:
                Wd -= config.lr * gW
            ad -= config.lr * ga
        return None
    W, a = params.W.copy(), params.a.copy()
    for e in range(max_epochs + 1):
        p = dataclasses.replace(params, W=W, a=a)
        if np.mean(y * forward(p, X) > 0) >= criterion:
            return e
        _, gW, ga = loss_and_grad(p, X, y, weight_decay=config.weight_decay)
        if train_hidden:
            W -= config.lr * gW
        a -= config.lr * ga
    return None


def overtraining_shift(task: OdourTask, config: TrainConfig | None = None, *, protocol: str = "reversal",
                       overtrain_factor: int = 20, criterion: float = 1.0, max_epochs: int = 5000,
                       reset_readout: bool = False, match_norm: bool = False, readout_only: bool = False,
                       seed: int = 0, device: Any = None) -> ShiftResult:
    """The overtraining-reversal experiment (module docstring) for one network and one task change.

    ``reset_readout=True`` gives both copies their initial readout a₀ back before relearning (they keep their
    learned hidden weights W): the after-kernel argument in isolation, without the readout's grown norm.
    ``match_norm=True`` rescales the overtrained copy's (W, a) to the plateau copy's norm ‖θ‖ (for ReLU this only
    rescales f by a positive factor, so its predictions are unchanged): the direction without the norm growth.
    ``readout_only=True`` relearns with the hidden weights frozen (only a is trained on K_t's features).
    ``device``: where every GD runs (:func:`~iclr25.overtraining.network.train_mlp`)."""
    cfg = config or TrainConfig()
    if isinstance(overtrain_factor, bool) or not isinstance(overtrain_factor, int) or overtrain_factor < 2:
        raise ValueError(f"overtrain_factor must be an integer >= 2, got {overtrain_factor!r}")
    if not (isinstance(criterion, (int, float)) and 0.5 < criterion <= 1.0):
        raise ValueError(f"criterion must be a training accuracy in (0.5, 1], got {criterion!r}")
    y_new, _ = shifted_labels(task, protocol)
    X, y = task.X_train, task.y_train
    p0 = init_mlp(X.shape[1], cfg.width, alpha=cfg.alpha, activation=cfg.activation, seed=seed)
    E0 = epochs_to_learn(p0, X, y, cfg, criterion=1.0, max_epochs=cfg.n_epochs, device=device)
    if E0 is None:
        raise ValueError(f"the network did not reach training accuracy 1 within {cfg.n_epochs} epochs")
    E0 = max(E0, 1)
    run = train_mlp(X, y, task.X_test, task.y_test, cfg, init=p0, epochs=[E0, overtrain_factor * E0], seed=seed,
                    device=device)
    p_plateau, p_over = run.checkpoints[0].params, run.checkpoints[1].params
    if match_norm:
        c = p_plateau.norm() / p_over.norm()
        p_over = dataclasses.replace(p_over, W=p_over.W * c, a=p_over.a * c)
    if reset_readout:
        p_plateau = dataclasses.replace(p_plateau, a=p0.a.copy())
        p_over = dataclasses.replace(p_over, a=p0.a.copy())
    kw = {"criterion": criterion, "max_epochs": max_epochs, "train_hidden": not readout_only, "device": device}
    ep_plateau = epochs_to_learn(p_plateau, X, y_new, cfg, **kw)
    ep_over = epochs_to_learn(p_over, X, y_new, cfg, **kw)
    return ShiftResult(protocol=protocol, E0=int(E0), overtrain_epochs=int(overtrain_factor * E0),
                       epochs_plateau=ep_plateau, epochs_overtrained=ep_over,
                       alignment_initial=kernel_alignment(hidden(p0, X), y),
                       alignment_plateau=kernel_alignment(hidden(p_plateau, X), y),
                       alignment_overtrained=kernel_alignment(hidden(p_over, X), y), criterion=float(criterion))
