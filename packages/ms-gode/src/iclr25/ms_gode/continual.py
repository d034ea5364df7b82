"""Continual dynamics learning: MS-GODE (sub-networks + mode switching) and the baselines on the same backbone.

MS-GODE (Zhang et al., ICLR 2025, Alg. 1): for each new task, ``add_task()`` appends a score tensor and
LayerNorms; only those train (frozen signed weights, straight-through masks). At test time the task is unknown:
the observed window is split in two, every learned sub-network predicts the second half from the first
(self-prediction), and the sub-network with the smallest loss is used for the full extrapolation. When even the
best loss exceeds that sub-network's calibrated threshold the batch is flagged as an unknown system.

Baselines (dense LG-ODE): fine-tuning, joint training (all tasks seen so far), EWC (diagonal Fisher penalty,
lambda = 1e4), experience replay (8 stored trajectories per task) and LwF (distillation on the previous model's
predictions). Metrics (CGLB): AP-MSE = mean_j a_{K,j}; AF-MSE = mean_{j<K} (a_{K,j} - a_{j,j}).

Devices: every learner takes ``device=`` (``None``: ``$ICLR25_DEVICE``, else ``auto``); the model, the task
tensors, the batches and the z0 noise (a generator seeded on that device) live there, in float32; the training
order is drawn in numpy. Errors, predictions and exported states come back on the CPU.

References: Zhang et al., ICLR 2025, Sec. 4 and Sec. 5.1 (metrics); Kirkpatrick et al. 2017 (EWC); Li & Hoiem
2017 (LwF); Chaudhry et al. 2019 (ER).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr25.utils.device import torch_device, torch_generator
from iclr25.utils.io import DataFileError, atomic_path
from iclr25.utils.progress import progress
from iclr25.utils.seeding import check_seed

from .data import read_arrays
from .layers import MaskLinear, TaskLayerNorm
from .model import LGODE, ModelConfig, TaskTensors
from .trajectories import TaskData

__all__ = ["TrainConfig", "TrainLog", "ModeSelection", "Evaluation", "MSGODE", "Baseline", "BASELINES",
           "ap_mse", "af_mse", "SequenceResult", "do_nothing_mse", "SELECTION_BAR", "SelectionCheck", "run_sequence", "make_learner", "METHODS"]


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Training settings (paper: AdamW lr 5e-4, wd 1e-3, cosine T_max 1000, clip 10, 20 epochs, batch 10)."""

    epochs: int = 20
    batch_size: int = 10
    lr: float = 5e-3
    weight_decay: float = 1e-3
    t_max: int = 1000
    clip: float = 10.0
    kl_warmup: int = 10
    #: ``"window"`` (the reference): the encoder sees the first half of the observed window and the loss is on
    #: the observations of its second half; ``"future"``: encoder on the whole window, loss on the targets after it
    target: str = "window"

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "t_max"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        for name in ("lr", "clip"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
        if self.target not in ("window", "future"):
            raise ValueError(f"target must be 'window' or 'future', got {self.target!r}")


@dataclasses.dataclass(frozen=True)
class TrainLog:
    losses: tuple[float, ...]
    seconds: float
    epochs: int

    @property
    def seconds_per_epoch(self) -> float:
        return self.seconds / max(1, self.epochs)


#: mode switching is trusted when every learned task's validation trajectories are given their own sub-network
#: at least this often (:meth:`MSGODE.selection_check`; issue 44's bar for the physics claim)
SELECTION_BAR = 0.9


@dataclasses.dataclass(frozen=True)
class ModeSelection:
    """Mode switching of one batch: the per-mask self-prediction losses and MSEs, the chosen mask, and whether
    the batch looks like an unknown system (best MSE above that mask's calibrated threshold)."""

    losses: tuple[float, ...]
    mses: tuple[float, ...]
    best: int
    unknown: bool
    threshold: float | None
    #: the self-prediction MSE of the best do-nothing rule on the same targets (:func:`do_nothing_mse`)
    trivial_mse: float | None = None

    @property
    def relative_gap(self) -> float:
        """``(second smallest - smallest) / smallest`` of the per-mask self-prediction MSEs (inf with one mask)."""
        m = sorted(self.mses)
        return float("inf") if len(m) < 2 else float((m[1] - m[0]) / max(m[0], 1e-12))


@dataclasses.dataclass(frozen=True)
class SelectionCheck:
    """Whether mode switching tells the learned tasks apart (:meth:`MSGODE.selection_check`): on each task's
    validation trajectories, the fraction given their own sub-network and the mean self-prediction loss of
    every mask (``losses[task][mask]``)."""

    per_task: tuple[float, ...]
    losses: tuple[tuple[float, ...], ...]
    mses: tuple[tuple[float, ...], ...]
    do_nothing_mse: tuple[float, ...]
    task_names: tuple[str, ...]
    bar: float = SELECTION_BAR

    @property
    def separable(self) -> bool:
        return all(f >= self.bar for f in self.per_task)

    def line(self) -> str:
        """One line for a user: empty when separable, else which task goes where, with the per-mask losses."""
        if self.separable:
            return ""
        bad = [j for j, f in enumerate(self.per_task) if f < self.bar]
        parts = [f"{self.task_names[j]}: {self.per_task[j]:.0%} to its own sub-network, per-mask losses "
                 f"{[round(x, 1) for x in self.losses[j]]} (MSEs {[round(x, 4) for x in self.mses[j]]}, do-nothing "
                 f"{self.do_nothing_mse[j]:.4f})" for j in bad]
        return ("tasks not separable by the criterion (self-prediction on the observed window): "
                + "; ".join(parts) + f"; below {self.bar:.0%}, the chosen mode is not evidence of the task")

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "separable": self.separable}


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """Extrapolation MSE of a learner on a task, with the mode chosen for each test batch."""

    mse: float
    mse_per_batch: tuple[float, ...]
    modes: tuple[int, ...]
    unknown: tuple[bool, ...]

    def mode_accuracy(self, true_task: int) -> float:
        return float(np.mean([m == true_task for m in self.modes])) if self.modes else float("nan")


def do_nothing_mse(task: TaskData, idx: Sequence[int] | np.ndarray, cut: int | None = None) -> dict[str, float]:
    """The self-prediction sub-problem of mode switching (observations before frame ``cut``, default
    ``n_obs // 2``, predict the observations in ``[cut, n_obs)``) answered without a model, averaged per
    trajectory as the model's MSE: ``hold_last`` (each object's last observed value), ``window_mean`` (its
    mean over the observed first part) and ``zero`` (the middle of the scaled range); ``best`` is the
    smallest. A sub-network that is not below ``best`` has learned nothing about the batch that mode
    switching could use."""
    idx = np.asarray(idx, dtype=np.int64)
    cut = max(1, task.n_obs // 2) if cut is None else int(cut)
    v = task.values[idx].astype(np.float64)  # (B, N, T, D)
    obs = task.obs_mask[idx].copy()
    enc = obs.copy()
    enc[:, :, cut:] = False
    tgt = obs
    tgt[:, :, :cut] = False
    last = np.argmax(np.where(enc, np.arange(enc.shape[2]), -1), axis=2)  # (B, N) last observed frame
    hold = np.take_along_axis(v, last[:, :, None, None], axis=2)  # (B, N, 1, D)
    cnt_e = np.maximum(enc.sum(axis=2), 1)[:, :, None, None]
    mean = (v * enc[..., None]).sum(axis=2, keepdims=True) / cnt_e
    w = np.broadcast_to(tgt[..., None], v.shape)
    per_traj_cnt = np.maximum(w.sum(axis=(1, 2, 3)), 1)
    out = {}
    for name, guess in (("hold_last", hold), ("window_mean", mean), ("zero", np.zeros_like(hold))):
        sq = ((v - guess) ** 2 * w).sum(axis=(1, 2, 3)) / per_traj_cnt
        out[name] = float(sq.mean())
    out["best"] = min(out.values())
    return out


def _check_task(task: Any, name: str = "task") -> TaskData:
    if not isinstance(task, TaskData):
        raise TypeError(f"{name} must be a TaskData, got {type(task).__name__}")
    return task


def _batches(n: int, batch_size: int, rng: np.random.Generator | None) -> list[np.ndarray]:
    order = rng.permutation(n) if rng is not None else np.arange(n)
    return [order[i:i + batch_size] for i in range(0, n, batch_size)]


class _Trainer:
    """The shared optimisation loop: AdamW + cosine annealing, gradient clipping, KL warm-up."""

    def __init__(self, model: LGODE, config: TrainConfig, seed: int):
        self.model, self.config = model, config
        self.gen = torch_generator(model.device, seed)
        self.rng = np.random.default_rng(seed)

    def train_batch(self, tt: TaskTensors, idx: np.ndarray) -> Any:
        if self.config.target == "future":
            return tt.batch(idx)
        return tt.batch(idx, enc_cut=max(1, tt.task.n_obs // 2), target="window")

    def fit(self, streams: list[tuple[TaskTensors, int]], params: list[torch.nn.Parameter], *,
            extra_loss: Callable[[Any, int], torch.Tensor] | None = None, set_task: bool = False,
            desc: str = "train", replay: list[tuple[TaskTensors, int, np.ndarray]] | None = None) -> TrainLog:
        """Train ``params`` on batches of every (tensors, task id) stream, one batch of one task at a time."""
        c = self.config
        opt = torch.optim.AdamW(params, lr=c.lr, weight_decay=c.weight_decay)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=c.t_max)
        losses, itr, t0 = [], 0, time.perf_counter()
        self.model.train()
        for _ in progress(range(c.epochs), desc=desc):
            plan = [(si, b) for si, (tt, _) in enumerate(streams) for b in _batches(len(tt.task), c.batch_size,
                                                                                      self.rng)]
            order = self.rng.permutation(len(plan))
            epoch_loss = 0.0
            for p in order:
                si, idx = plan[p]
                tt, tid = streams[si]
                kl_coef = 0.0 if itr < c.kl_warmup else 1.0 - 0.99 ** (itr - c.kl_warmup)
                if set_task:
                    self.model.set_task(tid)
                out = self.model.loss(self.train_batch(tt, idx), prior_mean=float(tid), kl_coef=kl_coef,
                                      generator=self.gen)
                loss = out.loss
                if replay:
                    rt, rtid, ridx = replay[int(self.rng.integers(len(replay)))]
                    loss = loss + self.model.loss(self.train_batch(rt, ridx), prior_mean=float(rtid),
                                                  kl_coef=kl_coef, generator=self.gen).loss
                if extra_loss is not None:
                    loss = loss + extra_loss((tt, idx), tid)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, c.clip)
                opt.step()
                sched.step()
                itr += 1
                epoch_loss += float(loss.detach())
            losses.append(epoch_loss / max(1, len(plan)))
        self.model.eval()
        return TrainLog(tuple(losses), time.perf_counter() - t0, c.epochs)


def _evaluate(model: LGODE, tt: TaskTensors, batch_size: int, choose: Callable[[np.ndarray], ModeSelection] | None
              ) -> Evaluation:
    mses, modes, unknown, weights = [], [], [], []
    with torch.no_grad():
        for idx in _batches(len(tt.task), batch_size, None):
            if choose is not None:
                sel = choose(idx)
                model.set_task(sel.best)
                modes.append(sel.best)
                unknown.append(sel.unknown)
            out = model.loss(tt.batch(idx), sample=False)
            mses.append(float(out.mse))
            weights.append(len(idx))
    mse = float(np.average(mses, weights=weights))
    return Evaluation(mse, tuple(mses), tuple(modes), tuple(unknown))


# ------------------------------------------------------------------------------------------------- MS-GODE
class _TensorCache:
    """The tensors of each task a learner has seen, built once (MS-GODE and the baselines share it)."""

    model: LGODE
    config: ModelConfig
    _tensors: dict[int, TaskTensors]

    def _tt(self, task: TaskData) -> TaskTensors:
        tt = self._tensors.get(id(task))
        if tt is None or tt.task is not task:
            if task.n_features != self.model.n_features:
                raise ValueError(f"task has {task.n_features} features per object; this model was built for "
                                 f"{self.model.n_features} (n_features)")
            tt = TaskTensors(task, self.config.max_gap, self.model.device)
            self._tensors[id(task)] = tt
        return tt


class MSGODE(_TensorCache):
    """Mode-switching Graph ODE.

    Parameters
    ----------
    n_features : feature dimension D of every task (4 for particles, 1 for species).
    config, train : backbone and training settings.
    criterion : ``"loss"`` (the paper's default) or ``"mse"``: what mode switching minimises.
    unknown_factor : a batch is unknown when its best self-prediction MSE exceeds ``unknown_factor`` times the
        largest one seen on that task's validation batches.
    seed : keyword-only; seeds the frozen signs, the scores and the training order.
    device : keyword-only; where the learner computes (``None``: ``$ICLR25_DEVICE``, else ``auto``).
    """

    name = "MS-GODE"

    def __init__(self, n_features: int, config: ModelConfig | None = None, train: TrainConfig | None = None, *,
                 criterion: str = "loss", unknown_factor: float = 1.5, seed: int = 0, device: Any = None):
        config, train = config or ModelConfig(), train or TrainConfig()
        if criterion not in ("loss", "mse"):
            raise ValueError(f"criterion must be 'loss' or 'mse', got {criterion!r}")
        if not (isinstance(unknown_factor, (int, float)) and math.isfinite(unknown_factor) and unknown_factor > 0):
            raise ValueError(f"unknown_factor must be a finite number > 0, got {unknown_factor!r}")
        self.seed = check_seed(seed)
        self.model = LGODE(n_features, config, masked=True, seed=self.seed, device=torch_device(device))
        self.config, self.train_config = config, train
        self.criterion, self.unknown_factor = criterion, float(unknown_factor)
        self.thresholds: list[float | None] = []
        self.task_names: list[str] = []
        self.check: SelectionCheck | None = None
        self._tensors: dict[int, TaskTensors] = {}

    @property
    def n_tasks(self) -> int:
        return self.model.n_tasks

    def add_task(self, name: str | None = None) -> int:
        """Add a sub-network (scores + LayerNorms) for a new task; returns its id. No preallocated count."""
        tid = self.model.add_task()
        self.thresholds.append(None)
        self.task_names.append(name or f"task{tid}")
        return tid

    def fit_task(self, train: TaskData, *, valid: TaskData | None = None, task_id: int | None = None) -> TrainLog:
        """Learn ``train`` as a new task (or the existing ``task_id``) and calibrate its unknown threshold on
        ``valid`` (default: ``train``)."""
        _check_task(train, "train")
        if task_id is None:
            task_id = self.add_task(train.name)
        self._check_id(task_id)
        for t in range(self.n_tasks):
            for p in self.model.task_parameters(t):
                p.requires_grad_(t == task_id)
        trainer = _Trainer(self.model, self.train_config, self.seed + 7919 * (task_id + 1))
        log = trainer.fit([(self._tt(train), task_id)], self.model.task_parameters(task_id), set_task=True,
                          desc=f"MS-GODE task {task_id}")
        self.model.freeze_task(task_id)
        self.calibrate(task_id, valid if valid is not None else train)
        return log

    def _check_id(self, task_id: Any) -> int:
        if isinstance(task_id, bool) or not isinstance(task_id, (int, np.integer)) or \
                not 0 <= task_id < self.n_tasks:
            raise ValueError(f"task_id must be an integer in [0, {self.n_tasks - 1}] (learned tasks), "
                             f"got {task_id!r}")
        return int(task_id)

    def _self_prediction(self, tt: TaskTensors, idx: np.ndarray, mask: int) -> tuple[float, float]:
        cut = max(1, tt.task.n_obs // 2)
        bt = tt.batch(idx, enc_cut=cut, target="window")
        self.model.set_task(mask)
        with torch.no_grad():
            out = self.model.loss(bt, prior_mean=float(mask), sample=False)
        return float(out.loss), float(out.mse)

    def calibrate(self, task_id: int, valid: TaskData) -> float:
        """Set the unknown-system threshold of ``task_id`` from its self-prediction MSE on ``valid``."""
        tt = self._tt(_check_task(valid, "valid"))
        mses = [self._self_prediction(tt, idx, task_id)[1]
                for idx in _batches(len(valid), self.train_config.batch_size, None)]
        self.thresholds[task_id] = self.unknown_factor * float(np.max(mses))
        return self.thresholds[task_id]

    def select_mode(self, task: TaskData, idx: Sequence[int] | None = None, *,
                    n_masks: int | None = None) -> ModeSelection:
        """Mode switching for the trajectories ``idx`` of ``task`` (default all, treated as one batch), among
        the first ``n_masks`` learned sub-networks (default all: ``n_masks = j + 1`` is the learner as it was
        right after task j, since later tasks change nothing of earlier ones)."""
        if self.n_tasks == 0:
            raise ValueError("select_mode() needs at least one learned task (call fit_task first)")
        n_masks = self.n_tasks if n_masks is None else n_masks
        if isinstance(n_masks, bool) or not isinstance(n_masks, (int, np.integer)) or \
                not 1 <= n_masks <= self.n_tasks:
            raise ValueError(f"n_masks must be an integer in [1, {self.n_tasks}], got {n_masks!r}")
        tt = self._tt(_check_task(task))
        idx = np.arange(len(task)) if idx is None else np.asarray(idx, dtype=np.int64)
        if idx.size == 0 or idx.min() < 0 or idx.max() >= len(task):
            raise ValueError(f"idx must be non-empty trajectory indices in [0, {len(task) - 1}]")
        res = [self._self_prediction(tt, idx, m) for m in range(int(n_masks))]
        losses, mses = tuple(r[0] for r in res), tuple(r[1] for r in res)
        crit = self._criterion(losses, mses)
        best = int(np.argmin(crit))
        thr = self.thresholds[best]
        return ModeSelection(losses, mses, best, thr is not None and mses[best] > thr, thr,
                             do_nothing_mse(task, idx)["best"])

    def _criterion(self, losses: Sequence[float], mses: Sequence[float]) -> np.ndarray:
        """What mode switching minimises, per mask."""
        return np.asarray(losses if self.criterion == "loss" else mses, dtype=float)

    def selection_check(self, valid: Sequence[TaskData], *, batch_size: int = 1) -> SelectionCheck:
        """Mode switching on each learned task's validation set (``valid[j]`` for task j, every mask a
        candidate, batches of ``batch_size`` trajectories; default one at a time): how often each task gets its
        own sub-network, and every mask's mean self-prediction loss. Kept as ``self.check`` and exported with
        the state, so ``predict`` can say when the tasks were not separable."""
        if self.n_tasks == 0:
            raise ValueError("selection_check() needs at least one learned task (call fit_task first)")
        if len(valid) != self.n_tasks:
            raise ValueError(f"valid must hold one validation set per learned task ({self.n_tasks}), got {len(valid)}")
        per, losses, mses, triv = [], [], [], []
        for j, va in enumerate(valid):
            sels = [self.select_mode(va, idx) for idx in _batches(len(_check_task(va, f"valid[{j}]")), batch_size,
                                                                  None)]
            per.append(float(np.mean([s.best == j for s in sels])))
            losses.append(tuple(float(x) for x in np.mean([s.losses for s in sels], axis=0)))
            mses.append(tuple(float(x) for x in np.mean([s.mses for s in sels], axis=0)))
            triv.append(float(np.mean([s.trivial_mse for s in sels])))
        self.check = SelectionCheck(tuple(per), tuple(losses), tuple(mses), tuple(triv), tuple(self.task_names))
        return self.check

    def evaluate(self, task: TaskData, *, task_id: int | None = None, n_masks: int | None = None,
                 batch_size: int | None = None) -> Evaluation:
        """Extrapolation MSE on ``task``: with the given (oracle) ``task_id``, or with mode switching per batch
        of ``batch_size`` trajectories (default the training batch size) among the first ``n_masks`` masks."""
        tt = self._tt(_check_task(task))
        bs = self.train_config.batch_size if batch_size is None else batch_size
        if isinstance(bs, bool) or not isinstance(bs, (int, np.integer)) or bs < 1:
            raise ValueError(f"batch_size must be an integer >= 1, got {bs!r}")
        if task_id is not None:
            self.model.set_task(self._check_id(task_id))
            return _evaluate(self.model, tt, int(bs), None)
        return _evaluate(self.model, tt, int(bs), lambda idx: self.select_mode(task, idx, n_masks=n_masks))

    def predict(self, task: TaskData, *, task_id: int | None = None) -> tuple[np.ndarray, ModeSelection | None]:
        """Predictions ``(S, N, T', D)`` at the target frames of ``task`` (all trajectories as one batch)."""
        tt = self._tt(_check_task(task))
        sel = None
        if task_id is None:
            sel = self.select_mode(task)
            task_id = sel.best
        self.model.set_task(self._check_id(task_id))
        with torch.no_grad():
            out = self.model.loss(tt.batch(np.arange(len(task))), sample=False)
        return out.pred.cpu().numpy(), sel

    # -------------------------------------------------------------- mask export / import (no pickle)
    def state_bytes_per_task(self) -> int:
        """Bytes one added task costs in the exported state: bit-packed masks plus its LayerNorm floats."""
        bits = sum(m.weight.numel() for m in self.model.modules() if isinstance(m, MaskLinear))
        ln = sum(2 * m.d for m in self.model.modules() if isinstance(m, TaskLayerNorm))
        return int(math.ceil(bits / 8) + 4 * ln)

    def export_state(self, path: str | os.PathLike[str]) -> Path:
        """Write the frozen signs, every task's bit-packed masks and LayerNorms and the thresholds to ``.npz``
        (``np.savez`` without pickled objects; the config as JSON text), atomically."""
        p = Path(path)
        if p.suffix != ".npz":
            raise ValueError(f"path must end in .npz, got {str(p)!r}")
        arrays: dict[str, np.ndarray] = {}
        lin = [m for m in self.model.modules() if isinstance(m, MaskLinear)]
        norms = [m for m in self.model.modules() if isinstance(m, TaskLayerNorm)]
        for i, m in enumerate(lin):
            arrays[f"sign_{i}"] = np.packbits((m.weight > 0).cpu().numpy().reshape(-1))
            for t in range(self.n_tasks):
                arrays[f"mask_{i}_{t}"] = np.packbits(m.mask(t).cpu().numpy().astype(bool).reshape(-1))
        for i, m in enumerate(norms):
            for t in range(self.n_tasks):
                arrays[f"ln_{i}_{t}_w"] = m.norms[t].weight.detach().cpu().numpy()
                arrays[f"ln_{i}_{t}_b"] = m.norms[t].bias.detach().cpu().numpy()
        meta = {"format": "iclr25-ms-gode-state", "version": 1, "n_features": self.model.n_features,
                "config": dataclasses.asdict(self.config), "train": dataclasses.asdict(self.train_config),
                "criterion": self.criterion, "unknown_factor": self.unknown_factor, "seed": self.seed,
                "n_tasks": self.n_tasks, "thresholds": self.thresholds, "task_names": self.task_names,
                "selection_check": None if self.check is None else dataclasses.asdict(self.check),
                "n_linear": len(lin), "n_norms": len(norms)}
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        with atomic_path(p) as tmp:
            with open(tmp, "wb") as f:
                np.savez_compressed(f, **arrays)
        return p

    @classmethod
    def load_state(cls, path: str | os.PathLike[str], *, device: Any = None) -> MSGODE:
        """Rebuild a learner from :meth:`export_state` (``allow_pickle=False``) on ``device`` (``None``:
        ``$ICLR25_DEVICE``, else ``auto``); errors name the file."""
        dev = torch_device(device)
        p = Path(path)
        arrays = read_arrays(p, what="model state file")  # one line naming the file
        try:
            meta = json.loads(arrays["meta"].tobytes().decode())
            if meta.get("format") != "iclr25-ms-gode-state":
                raise ValueError("not an iclr25-ms-gode state file")
            self = cls(int(meta["n_features"]), ModelConfig(**meta["config"]), TrainConfig(**meta["train"]),
                       criterion=meta["criterion"], unknown_factor=meta["unknown_factor"], seed=meta["seed"],
                       device=dev)
            for name in meta["task_names"]:
                self.add_task(name)
            self.thresholds = list(meta["thresholds"])
            chk = meta.get("selection_check")
            if chk is not None:
                self.check = SelectionCheck(**{k: tuple(tuple(x) if isinstance(x, list) else x for x in v)
                                               if isinstance(v, list) else v for k, v in chk.items()})
            lin = [m for m in self.model.modules() if isinstance(m, MaskLinear)]
            norms = [m for m in self.model.modules() if isinstance(m, TaskLayerNorm)]
            if len(lin) != meta["n_linear"] or len(norms) != meta["n_norms"]:
                raise ValueError("layer count does not match this version's backbone")
            with torch.no_grad():
                for i, m in enumerate(lin):
                    n = m.weight.numel()
                    sign = np.unpackbits(arrays[f"sign_{i}"])[:n].reshape(m.weight.shape).astype(np.float32)
                    m.weight.copy_(torch.as_tensor(2 * sign - 1, device=dev) * m.weight.abs())
                    for t in range(self.n_tasks):
                        bits = np.unpackbits(arrays[f"mask_{i}_{t}"])[:n].reshape(m.weight.shape)
                        m.scores[t].copy_(torch.as_tensor(bits.astype(np.float32) * 2 - 1, device=dev))
                for i, m in enumerate(norms):
                    for t in range(self.n_tasks):
                        m.norms[t].weight.copy_(torch.as_tensor(arrays[f"ln_{i}_{t}_w"], device=dev))
                        m.norms[t].bias.copy_(torch.as_tensor(arrays[f"ln_{i}_{t}_b"], device=dev))
            for t in range(self.n_tasks):
                self.model.freeze_task(t)
        except (KeyError, ValueError, TypeError, json.JSONDecodeError, OSError, EOFError) as exc:
            raise DataFileError(p, f"not a valid MS-GODE state file ({exc})") from exc
        return self


# ----------------------------------------------------------------------------------------------- baselines
BASELINES = ("finetune", "joint", "ewc", "replay", "lwf")


class Baseline(_TensorCache):
    """A dense LG-ODE trained task after task with one continual-learning strategy.

    ``kind``: ``finetune`` (plain sequential training), ``joint`` (train on all tasks seen so far), ``ewc``
    (penalty ``lambda/2 sum_i F_i (theta_i - theta*_i)^2`` with the diagonal Fisher of each past task),
    ``replay`` (``n_replay`` stored trajectories per past task, one replayed batch per step) or ``lwf``
    (squared distance to the previous model's predictions on the current task, weight ``lwf_alpha``). ``device``:
    where it computes (``None``: ``$ICLR25_DEVICE``, else ``auto``).
    """

    def __init__(self, kind: str, n_features: int, config: ModelConfig | None = None,
                 train: TrainConfig | None = None, *, ewc_lambda: float = 1e4, n_replay: int = 8,
                 lwf_alpha: float = 1.0, seed: int = 0, device: Any = None):
        config, train = config or ModelConfig(), train or TrainConfig()
        if kind not in BASELINES:
            raise ValueError(f"kind must be one of {list(BASELINES)}, got {kind!r}")
        self.kind, self.seed = kind, check_seed(seed)
        self.name = {"finetune": "Fine-tune", "joint": "Joint", "ewc": "EWC", "replay": "Replay",
                     "lwf": "LwF"}[kind]
        self.model = LGODE(n_features, config, masked=False, seed=self.seed, device=torch_device(device))
        self.config, self.train_config = config, train
        self.ewc_lambda, self.n_replay, self.lwf_alpha = float(ewc_lambda), int(n_replay), float(lwf_alpha)
        self.n_tasks = 0
        self._seen: list[tuple[TaskTensors, int]] = []
        self._memory: list[tuple[TaskTensors, int, np.ndarray]] = []
        self._fisher: list[tuple[list[torch.Tensor], list[torch.Tensor]]] = []
        self._tensors: dict[int, TaskTensors] = {}

    def fit_task(self, train: TaskData, *, valid: TaskData | None = None) -> TrainLog:
        tt = self._tt(_check_task(train, "train"))
        tid = self.n_tasks
        trainer = _Trainer(self.model, self.train_config, self.seed + 7919 * (tid + 1))
        params = list(self.model.parameters())
        streams = [(tt, tid)]
        extra = None
        replay = None
        if self.kind == "joint":
            streams = self._seen + [(tt, tid)]
        elif self.kind == "replay" and self._memory:
            replay = self._memory
        elif self.kind == "ewc" and self._fisher:
            def extra(_b: Any, _tid: int) -> torch.Tensor:
                pen = 0.0
                for fisher, star in self._fisher:
                    pen = pen + sum((f * (p - s) ** 2).sum() for f, p, s in zip(fisher, params, star, strict=True))
                return 0.5 * self.ewc_lambda * pen
        elif self.kind == "lwf" and self.n_tasks > 0:
            old = copy.deepcopy(self.model).eval()
            for p in old.parameters():
                p.requires_grad_(False)

            def extra(b: Any, _tid: int) -> torch.Tensor:
                tt_, idx = b
                bt = trainer.train_batch(tt_, idx)
                with torch.no_grad():
                    target = old.loss(bt, sample=False).pred
                # the Gaussian negative log-likelihood of the old model's predictions, same scale as the loss
                return self.lwf_alpha * 0.5 * ((self.model.loss(bt, sample=False).pred - target) ** 2).mean() / \
                    self.config.obs_std ** 2
        log = trainer.fit(streams, params, extra_loss=extra, replay=replay, desc=f"{self.name} task {tid}")
        self._seen.append((tt, tid))
        if self.kind == "replay":
            pick = np.random.default_rng(self.seed + tid).choice(len(train), min(self.n_replay, len(train)),
                                                                 replace=False)
            self._memory.append((tt, tid, np.sort(pick)))
        if self.kind == "ewc":
            self._fisher.append(self._diag_fisher(tt, tid))
        self.n_tasks += 1
        return log

    def _diag_fisher(self, tt: TaskTensors, tid: int) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        params = list(self.model.parameters())
        fisher = [torch.zeros_like(p) for p in params]
        gen = torch_generator(self.model.device, self.seed + tid)
        batches = _batches(len(tt.task), self.train_config.batch_size, None)
        layout = _Trainer(self.model, self.train_config, 0)
        for idx in batches:
            self.model.zero_grad(set_to_none=True)
            out = self.model.loss(layout.train_batch(tt, idx), prior_mean=float(tid), generator=gen)
            # gradients of the per-point average negative log-likelihood (scale of one observation)
            (out.loss * self.config.obs_std ** 2).backward()
            for f, p in zip(fisher, params, strict=True):
                if p.grad is not None:
                    f += p.grad.detach() ** 2 / len(batches)
        self.model.zero_grad(set_to_none=True)
        return fisher, [p.detach().clone() for p in params]

    def evaluate(self, task: TaskData, *, task_id: int | None = None) -> Evaluation:
        return _evaluate(self.model, self._tt(_check_task(task)), self.train_config.batch_size, None)

    def state_bytes_per_task(self) -> int:
        """Bytes stored per added task: EWC a Fisher and a parameter copy; replay its stored trajectories."""
        n_par = sum(p.numel() for p in self.model.parameters())
        if self.kind == "ewc":
            return 2 * 4 * n_par
        if self.kind == "replay" and self._memory:
            tt, _, idx = self._memory[-1]
            t = tt.task
            return int(idx.size * (t.values[0].nbytes + t.obs_mask[0].nbytes + t.target_mask[0].nbytes
                                   + t.adjacency[0].nbytes))
        if self.kind == "lwf":
            return 0  # one previous model is kept, not one per task
        if self.kind == "joint" and self._seen:
            t = self._seen[-1][0].task
            return int(t.values.nbytes + t.obs_mask.nbytes + t.target_mask.nbytes + t.adjacency.nbytes)
        return 0


# ------------------------------------------------------------------------------------------------ metrics
def _check_matrix(acc: Any) -> np.ndarray:
    a = np.asarray(acc, dtype=float)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] < 1:
        raise ValueError(f"acc must be a square (K, K) matrix of test MSEs, got shape {a.shape}")
    return a


def ap_mse(acc: Any) -> float:
    """Average performance: mean of the last row, ``mean_j a_{K,j}`` (a_{i,j}: MSE on task j after task i)."""
    a = _check_matrix(acc)
    return float(np.mean(a[-1]))


def af_mse(acc: Any) -> float:
    """Average forgetting: ``mean_{j<K} (a_{K,j} - a_{j,j})`` (positive = worse than right after learning)."""
    a = _check_matrix(acc)
    k = a.shape[0]
    if k < 2:
        return 0.0
    return float(np.mean([a[-1, j] - a[j, j] for j in range(k - 1)]))


METHODS = ("ms-gode", *BASELINES)


def make_learner(method: str, n_features: int, config: ModelConfig, train: TrainConfig, *, seed: int = 0,
                 **kwargs: Any) -> MSGODE | Baseline:
    """``"ms-gode"`` or a baseline name (``device=`` among ``kwargs``: where it computes)."""
    if method == "ms-gode":
        return MSGODE(n_features, config, train, seed=seed, **kwargs)
    if method not in BASELINES:
        raise ValueError(f"method must be one of {list(METHODS)}, got {method!r}")
    return Baseline(method, n_features, config, train, seed=seed, **kwargs)


@dataclasses.dataclass(frozen=True)
class SequenceResult:
    """One method on one task sequence: ``acc[i][j]`` = test MSE on task j after learning task i (j <= i;
    NaN above the diagonal), mode-switch accuracies, timings and state size."""

    method: str
    acc: np.ndarray
    oracle_acc: np.ndarray | None
    mode_accuracy: tuple[float, ...]
    seconds_per_epoch: float
    state_bytes_per_task: int
    learner: Any = dataclasses.field(repr=False, compare=False, default=None)

    @property
    def ap_mse(self) -> float:
        return ap_mse(self.acc)

    @property
    def af_mse(self) -> float:
        return af_mse(self.acc)


def run_sequence(method: str, tasks: Sequence[tuple[TaskData, TaskData, TaskData]], *, config: ModelConfig,
                 train: TrainConfig, seed: int = 0, **kwargs: Any) -> SequenceResult:
    """Learn ``tasks`` (each ``(train, valid, test)``) in order and fill the MSE matrix after every task.
    MS-GODE is tested with mode switching (and, in ``oracle_acc``, with the true mask). ``device=`` (in
    ``kwargs``) is where the learner computes (``None``: ``$ICLR25_DEVICE``, else ``auto``)."""
    if not tasks:
        raise ValueError("tasks must hold at least one (train, valid, test) triple")
    feats = {t[0].n_features for t in tasks}
    if len(feats) != 1:
        raise ValueError(f"every task must have the same number of features, got {sorted(feats)}")
    learner = make_learner(method, feats.pop(), config, train, seed=seed, **kwargs)
    k = len(tasks)
    acc = np.full((k, k), np.nan)
    oracle = np.full((k, k), np.nan) if method == "ms-gode" else None
    mode_acc: list[float] = [float("nan")] * k
    secs = []
    for i, (tr, va, _) in enumerate(tasks):
        log = learner.fit_task(tr, valid=va)
        secs.append(log.seconds_per_epoch)
        for j in range(i + 1):
            ev = learner.evaluate(tasks[j][2])
            acc[i, j] = ev.mse
            if oracle is not None:
                oracle[i, j] = learner.evaluate(tasks[j][2], task_id=j).mse
                if i == k - 1:
                    mode_acc[j] = ev.mode_accuracy(j)
    return SequenceResult(method, acc, oracle, tuple(mode_acc), float(np.mean(secs)),
                          learner.state_bytes_per_task(), learner)
