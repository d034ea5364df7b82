"""The experiments behind ``demo`` and ``repro``: hidden progress after E₀, the overlap and weight-decay
controls, the lazy regime, the linear max-margin check and the overtraining-reversal protocols."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .network import TrainConfig, TrainingRun, linear_logistic_gd, log_epochs, train_mlp
from .task import make_odour_task

__all__ = ["DEFAULT_TASK", "DEFAULT_CONFIG", "HiddenProgress", "hidden_progress", "linear_max_margin",
           "separable_blobs"]

#: The package's default task: 20 odorants, 6-component mixtures (overlap 0.3), 40 training mixtures.
DEFAULT_TASK = {"n_odorants": 20, "n_components": 6, "n_train": 40, "n_test": 400, "input_dim": 100}
#: Rich regime (α = 1, standard parameterisation), full-batch GD.
DEFAULT_CONFIG = TrainConfig(width=128, activation="relu", alpha=1.0, lr=0.05, n_epochs=4000, n_checkpoints=30)


@dataclasses.dataclass(frozen=True)
class HiddenProgress:
    """Hidden progress of one run between E₀ and factor·E₀."""

    E0: int
    end_epoch: int
    margin_E0: float
    margin_end: float
    test_acc_E0: float
    test_acc_end: float
    fld_E0: float
    fld_end: float
    train_acc_min_after_E0: float
    margin_spearman: float
    n_flips: int
    run: TrainingRun

    @property
    def margin_ratio(self) -> float:
        return self.margin_end / self.margin_E0

    @property
    def test_gain(self) -> float:
        return self.test_acc_end - self.test_acc_E0


def hidden_progress(task_kwargs: dict | None = None, config: TrainConfig | None = None, *, factor: int = 20,
                    seed: int = 0, device: Any = None) -> HiddenProgress:
    """Train on the odour task until factor·E₀ and summarise the hidden progress after E₀; the GD runs on
    ``device`` (:func:`~iclr25.overtraining.network.train_mlp`: numpy on the CPU, torch float64 on a GPU)."""
    from scipy.stats import spearmanr

    from .network import init_mlp
    from .protocols import epochs_to_learn

    task = make_odour_task(**(DEFAULT_TASK | (task_kwargs or {})), seed=seed)
    cfg = config or DEFAULT_CONFIG
    p0 = init_mlp(task.X_train.shape[1], cfg.width, alpha=cfg.alpha, activation=cfg.activation, seed=seed)
    E0 = epochs_to_learn(p0, task.X_train, task.y_train, cfg, criterion=1.0, max_epochs=cfg.n_epochs, device=device)
    if E0 is None:
        raise ValueError(f"training accuracy never reached 1 within {cfg.n_epochs} epochs")
    E0 = max(E0, 1)
    end = factor * E0
    epochs = np.unique(np.concatenate([log_epochs(end, cfg.n_checkpoints), [E0]]))
    run = train_mlp(task.X_train, task.y_train, task.X_test, task.y_test, dataclasses.replace(cfg, n_epochs=int(end)),
                    init=p0, epochs=epochs, seed=seed, device=device)
    c0, c1 = run.at(E0), run.at(end)
    ep = run.epochs
    sel = (ep >= E0) & (ep <= c1.epoch)
    m = run.curve("margin")[sel]
    rho = float(spearmanr(ep[sel], m).statistic) if sel.sum() >= 3 and np.all(np.isfinite(m)) else float("nan")
    return HiddenProgress(E0=E0, end_epoch=c1.epoch, margin_E0=c0.margin, margin_end=c1.margin,
                          test_acc_E0=c0.test_acc, test_acc_end=c1.test_acc, fld_E0=c0.fld, fld_end=c1.fld,
                          train_acc_min_after_E0=float(run.curve("train_acc")[sel].min()), margin_spearman=rho,
                          n_flips=run.flips(E0).n if c1.epoch > E0 else 0, run=run)


def separable_blobs(n: int = 40, d: int = 2, *, gap: float = 1.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two Gaussian blobs pushed apart along a random direction until a gap of ``gap`` separates them through the
    origin (for the linear max-margin check)."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.standard_normal((n, d))
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    s = X @ u
    X += np.outer(y * np.maximum(gap - y * s, 0.0), u)
    return X, y


def linear_max_margin(n_steps: int = 100_000, *, n: int = 40, d: int = 2, seed: int = 0) -> dict:
    """GD on the linear logistic loss over separable data vs the hard-margin SVM direction (no bias)."""
    from .geometry import svm_margin

    X, y = separable_blobs(n, d, seed=seed)
    r = svm_margin(X, y, fit_intercept=False)
    gd = linear_logistic_gd(X, y, lr=1.0, n_steps=n_steps, n_checkpoints=30)
    cos = gd.directions() @ r.w
    return {"steps": gd.steps, "cosine": cos, "loss": gd.loss, "t_loss": gd.steps * gd.loss, "svm": r, "X": X, "y": y}
