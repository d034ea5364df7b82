"""``HiddenProgressMonitor``: log the hidden-layer geometry of any model during training.

At each call the monitor takes the hidden features H (n, d) and outputs f (n,) of the training (and optionally
held-out) examples and records: training/held-out accuracy, the normalised hidden-layer SVM margin (features
divided by their RMS norm, see :mod:`iclr25.overtraining.geometry`), Fisher's discriminant, the kernel–task
alignment of K = HHᵀ, and per-example held-out correctness (for wrong→right flips). Features come from

* a torch model: ``monitor.watch(model, layer)`` registers a forward hook on ``layer`` (any ``nn.Module`` of the
  model) and ``monitor(epoch, model)`` runs the model on the stored inputs under ``torch.no_grad()``;
* numpy (its twin): ``monitor.log_features(epoch, H_train, f_train, H_test, f_test)`` or, for this package's
  network, ``monitor(epoch, params)`` with :class:`~iclr25.overtraining.network.MLPParams`.

It is a callback: ``train_mlp(..., callback=monitor)``, or call it from your own training loop.

References: Kumar et al., ICLR 2025, Sec. 3–4 (the quantities), Sec. 5 (after-kernel alignment).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from .geometry import example_flips, fisher_discriminant, kernel_alignment, normalised_margin

__all__ = ["HiddenProgressMonitor", "MonitorRecord"]


@dataclasses.dataclass(frozen=True)
class MonitorRecord:
    """What the monitor measured at one epoch (test fields are ``nan``/empty without held-out data)."""

    epoch: int
    train_acc: float
    test_acc: float
    margin: float
    fld: float
    alignment: float
    test_correct: np.ndarray
    seconds: float


class HiddenProgressMonitor:
    """Record hidden progress (margin, FLD, alignment, flips) at the epochs it is called.

    Parameters
    ----------
    X_train, y_train : inputs (n, ...) and labels in {−1, +1} (or {0, 1}, mapped to ∓1).
    X_test, y_test : optional held-out inputs and labels.

    Examples
    --------
    >>> from iclr25.overtraining import make_odour_task, TrainConfig, train_mlp
    >>> task = make_odour_task(n_train=32, n_test=64, seed=0)
    >>> mon = HiddenProgressMonitor(task.X_train, task.y_train, task.X_test, task.y_test)
    >>> _ = train_mlp(task.X_train, task.y_train, task.X_test, task.y_test, TrainConfig(n_epochs=50), callback=mon)
    >>> len(mon.records) > 5
    True
    """

    def __init__(self, X_train: Any, y_train: Any, X_test: Any = None, y_test: Any = None) -> None:
        self.X_train = X_train
        self.y_train = _labels(y_train, "y_train", _n(X_train, "X_train"))
        if (X_test is None) != (y_test is None):
            raise ValueError("X_test and y_test must be given together")
        self.X_test = X_test
        self.y_test = None if y_test is None else _labels(y_test, "y_test", _n(X_test, "X_test"))
        self.records: list[MonitorRecord] = []
        self._captured: Any = None
        self._handle: Any = None
        self._layer: Any = None

    # ------------------------------------------------------------------ torch
    def watch(self, model: Any, layer: Any) -> HiddenProgressMonitor:
        """Register a forward hook on ``layer`` (a submodule of ``model``) that captures its output."""
        import torch

        if not isinstance(layer, torch.nn.Module):
            raise TypeError(f"layer must be a torch.nn.Module, got {type(layer).__name__}")
        if not any(m is layer for m in model.modules()):
            raise ValueError("layer must be a submodule of model")
        self.remove()

        def hook(_module, _inputs, output):
            self._captured = output

        self._handle = layer.register_forward_hook(hook)
        self._layer = layer
        return self

    def remove(self) -> None:
        """Remove the forward hook (if any)."""
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    def _torch_features(self, model: Any, X: Any) -> tuple[np.ndarray, np.ndarray]:
        import torch

        if self._handle is None:
            raise ValueError("call monitor.watch(model, layer) before logging a torch model")
        Xt = X if isinstance(X, torch.Tensor) else torch.as_tensor(np.asarray(X))
        p = next(iter(model.parameters()), None)
        if p is not None:
            Xt = Xt.to(dtype=p.dtype, device=p.device)
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad():
                self._captured = None
                out = model(Xt)
        finally:
            model.train(was_training)
        if self._captured is None:
            raise ValueError("the watched layer did not run in the model's forward pass")
        H = self._captured.detach().reshape(Xt.shape[0], -1).double().cpu().numpy()
        f = out.detach().reshape(Xt.shape[0], -1).double().cpu().numpy()
        if f.shape[1] == 2:           # two logits: score of class +1 minus class −1
            f = f[:, 1:] - f[:, :1]
        if f.shape[1] != 1:
            raise ValueError(f"the model must output one score (or two logits) per example, got {f.shape[1]}")
        return H, f[:, 0]

    # ------------------------------------------------------------------ numpy
    def log_features(self, epoch: int, H_train: Any, f_train: Any, H_test: Any = None,
                     f_test: Any = None) -> MonitorRecord:
        """Record one epoch from hidden features and output scores (the numpy twin of the torch path)."""
        t0 = time.perf_counter()
        H = np.asarray(H_train, dtype=np.float64).reshape(len(self.y_train), -1)
        f = np.asarray(f_train, dtype=np.float64).reshape(-1)
        if f.shape != self.y_train.shape:
            raise ValueError(f"f_train must have shape {self.y_train.shape}, got {f.shape}")
        y = self.y_train
        rec_test_acc, correct = float("nan"), np.zeros(0, dtype=bool)
        if self.y_test is not None and f_test is not None:
            ft = np.asarray(f_test, dtype=np.float64).reshape(-1)
            if ft.shape != self.y_test.shape:
                raise ValueError(f"f_test must have shape {self.y_test.shape}, got {ft.shape}")
            correct = self.y_test * ft > 0
            rec_test_acc = float(np.mean(correct))
        rec = MonitorRecord(epoch=int(epoch), train_acc=float(np.mean(y * f > 0)), test_acc=rec_test_acc,
                            margin=normalised_margin(H, y, require_separable=False), fld=fisher_discriminant(H, y),
                            alignment=kernel_alignment(H, y), test_correct=correct,
                            seconds=time.perf_counter() - t0)
        self.records.append(rec)
        return rec

    def __call__(self, epoch: int, model: Any) -> MonitorRecord:
        """Record ``epoch`` of ``model``: an :class:`MLPParams` (numpy) or a watched torch model."""
        from .network import MLPParams, forward, hidden

        t0 = time.perf_counter()
        if isinstance(model, MLPParams):
            H, f = hidden(model, self.X_train), forward(model, self.X_train)
            Ht, ft = ((hidden(model, self.X_test), forward(model, self.X_test)) if self.X_test is not None
                      else (None, None))
        else:
            H, f = self._torch_features(model, self.X_train)
            Ht, ft = self._torch_features(model, self.X_test) if self.X_test is not None else (None, None)
        rec = self.log_features(epoch, H, f, Ht, ft)
        rec = dataclasses.replace(rec, seconds=time.perf_counter() - t0)
        self.records[-1] = rec
        return rec

    # ------------------------------------------------------------------ summaries
    def curve(self, name: str) -> np.ndarray:
        """One logged quantity across the records (``margin``, ``fld``, ``alignment``, ``train_acc``, ...)."""
        return np.array([getattr(r, name) for r in self.records], dtype=np.float64)

    @property
    def epochs(self) -> np.ndarray:
        return np.array([r.epoch for r in self.records], dtype=int)

    def flips(self, start_epoch: int | None = None):
        """Held-out examples wrong at ``start_epoch`` (default: first epoch with training accuracy 1) that become
        right and stay right."""
        if self.y_test is None or len(self.records) < 2:
            raise ValueError("flips need held-out data (X_test, y_test) and at least two records")
        if start_epoch is None:
            hit = np.flatnonzero(self.curve("train_acc") >= 1.0)
            start_epoch = int(self.epochs[hit[0]]) if len(hit) else int(self.epochs[0])
        i = int(np.searchsorted(self.epochs, start_epoch))
        C = np.stack([r.test_correct for r in self.records])
        return example_flips(C, start=min(i, len(self.records) - 2))


def _n(X: Any, name: str) -> int:
    shape = getattr(X, "shape", None)
    if shape is None:
        X = np.asarray(X)
        shape = X.shape
    if len(shape) < 2 or shape[0] < 2:
        raise ValueError(f"{name} must be an (n_examples >= 2, ...) array, got shape {tuple(shape)}")
    return int(shape[0])


def _labels(y: Any, name: str, n: int) -> np.ndarray:
    ya = np.asarray(y.cpu().numpy() if hasattr(y, "cpu") else y, dtype=np.float64).reshape(-1)
    if ya.shape != (n,):
        raise ValueError(f"{name} must have {n} labels (one per example), got shape {ya.shape}")
    if np.all(np.isin(ya, (0.0, 1.0))) and not np.all(np.isin(ya, (-1.0, 1.0))):
        ya = 2.0 * ya - 1.0
    if not np.all(np.isin(ya, (-1.0, 1.0))):
        raise ValueError(f"{name} must hold labels -1/+1 (or 0/1)")
    return ya
