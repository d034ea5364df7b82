"""The demo and repro experiments: task sequences, every method side by side, tables and figures."""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .continual import SequenceResult, TrainConfig, run_sequence
from .model import ModelConfig
from .trajectories import TaskData

__all__ = ["split_tasks", "summary_rows", "markdown_table", "plot_predictions", "COMPARED_METHODS", "run_repro"]

#: the methods MS-GODE is compared with at the ``repro`` rung: the continual learners it is ranked against
#: (fine-tune, EWC, replay, LwF) and joint training on every task seen so far (an upper bound, reported beside)
COMPARED_METHODS = ("finetune", "ewc", "replay", "lwf", "joint")


def split_tasks(tasks: Sequence[TaskData], fractions: Sequence[float] = (0.6, 0.2, 0.2)
                ) -> list[tuple[TaskData, ...]]:
    """Each task split into (train, valid, test)."""
    return [t.split(fractions) for t in tasks]


def summary_rows(results: dict[str, SequenceResult], *, sequence: str, seed: int) -> list[dict[str, Any]]:
    rows = []
    for m, r in results.items():
        row = {"sequence": sequence, "seed": seed, "method": r.method, "AP-MSE": r.ap_mse, "AF-MSE": r.af_mse,
               "task1 after task1": float(r.acc[0, 0]), "task1 after last": float(r.acc[-1, 0]),
               "s/epoch": r.seconds_per_epoch, "state bytes/task": r.state_bytes_per_task,
               "acc": r.acc.tolist()}
        if r.oracle_acc is not None:
            row["oracle AP-MSE"] = float(np.mean(r.oracle_acc[-1]))
            row["oracle max |a_Kj - a_jj|"] = float(max(abs(r.oracle_acc[-1, j] - r.oracle_acc[j, j])
                                                        for j in range(r.acc.shape[0])))
            row["mode accuracy"] = list(r.mode_accuracy)
        rows.append(row)
        del m
    return rows


def markdown_table(rows: Sequence[dict[str, Any]]) -> str:
    """Mean ± std over seeds per (sequence, method)."""
    keys: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        keys.setdefault((r["sequence"], r["method"]), []).append(r)
    lines = ["| sequence | method | seeds | AP-MSE ↓ | AF-MSE ↓ | task 1: after task 1 → after last | "
             "mode-switch acc. per task | s/epoch | state bytes / task |", "|" + "---|" * 9]

    def ms(vals: list[float]) -> str:
        a = np.asarray(vals, dtype=float)
        return f"{a.mean():.4f} ± {a.std():.4f}" if a.size > 1 else f"{a.mean():.4f}"

    for (seq, meth), rs in keys.items():
        mode = "–"
        if "mode accuracy" in rs[0]:
            acc = np.nanmean(np.asarray([r["mode accuracy"] for r in rs], dtype=float), axis=0)
            mode = " / ".join(f"{a:.2f}" for a in acc)
        lines.append(f"| {seq} | {meth} | {len(rs)} | {ms([r['AP-MSE'] for r in rs])} | "
                     f"{ms([r['AF-MSE'] for r in rs])} | {np.mean([r['task1 after task1'] for r in rs]):.4f} → "
                     f"{np.mean([r['task1 after last'] for r in rs]):.4f} | {mode} | "
                     f"{np.mean([r['s/epoch'] for r in rs]):.3f} | {rs[0]['state bytes/task']} |")
    return "\n".join(lines)


def plot_predictions(path: str | Path, task: TaskData, preds: dict[str, np.ndarray], *, n_traj: int = 2,
                     title: str = "") -> Path:
    """Trajectories of ``task`` (first ``n_traj``): observed window, true future and each method's prediction.
    ``preds[name]`` is ``(S, N, T', D)`` at the target frames of the trajectories."""
    from iclr25.utils.plotting import savefig, subplots  # noqa: PLC0415

    fig, axes = subplots(1, n_traj, size=(4.0, 3.6), squeeze=False)
    colours = {"truth": "k"}
    styles = ["--", ":", "-."]
    legend: list[Any] = []
    for b in range(n_traj):
        ax = axes[0, b]
        frames = np.nonzero(task.target_mask[:n_traj].any(axis=(0, 1)))[0]
        for i in range(task.n_nodes):
            obs = np.nonzero(task.obs_mask[b, i])[0]
            if task.n_features >= 2:
                ax.plot(task.values[b, i, obs, 0], task.values[b, i, obs, 1], ".", ms=2, color=f"C{i}")
                ax.plot(task.values[b, i, frames, 0], task.values[b, i, frames, 1], "-", lw=1.2, color=f"C{i}",
                        alpha=0.5)
                for s, p in enumerate(preds.values()):
                    ax.plot(p[b, i, :, 0], p[b, i, :, 1], styles[s % 3], lw=1.2, color=f"C{i}",
                            label=None)
            else:
                ax.plot(task.times[obs], task.values[b, i, obs, 0], ".", ms=2, color=f"C{i % 10}")
                ax.plot(task.times[frames], task.values[b, i, frames, 0], "-", lw=1.0, color=f"C{i % 10}",
                        alpha=0.5)
                for s, p in enumerate(preds.values()):
                    ax.plot(task.times[frames], p[b, i, :, 0], styles[s % 3], lw=1.0, color=f"C{i % 10}")
        ax.set_title(f"{title} trajectory {b}" if title else f"trajectory {b}", fontsize=9)
        if task.n_features >= 2:
            ax.set_xlabel("position x (scaled to [-1, 1])", fontsize=8)
            ax.set_ylabel("position y (scaled to [-1, 1])", fontsize=8)
        else:
            ax.set_xlabel("time (observed window = [0, 1])", fontsize=8)
            ax.set_ylabel("value (scaled to [-1, 1])", fontsize=8)
        if b == 0:
            from matplotlib.lines import Line2D  # noqa: PLC0415

            handles = [Line2D([], [], color="0.3", ls="none", marker=".", label="observed (encoder input)"),
                       Line2D([], [], color="0.3", ls="-", alpha=0.5, label="true future (targets)")]
            handles += [Line2D([], [], color="0.3", ls=styles[s % 3], label=name) for s, name in enumerate(preds)]
            n_obj = min(task.n_nodes, 10)
            handles += [Line2D([], [], color=f"C{i}", lw=3, label=f"object {i}") for i in range(n_obj)]
            legend = handles
    del colours
    fig.legend(handles=legend, loc="upper center", bbox_to_anchor=(0.5, -0.03), ncol=4, fontsize=7, frameon=False)
    return savefig(fig, path, bbox_inches="tight")


def config_dict(config: ModelConfig, train: TrainConfig) -> dict[str, Any]:
    return {"model": dataclasses.asdict(config), "train": dataclasses.asdict(train)}


@functools.lru_cache(maxsize=8)
def run_repro(seed: int, epochs: int | None = None, *, scale: Any = None,
              methods: tuple[str, ...] = COMPARED_METHODS, baseline_lr: float = 5e-3,
              n_test_batches: int | None = None, n_tasks: int | None = None, device: str | None = None
              ) -> dict[str, Any]:
    """MS-GODE and every method of :data:`COMPARED_METHODS` trained from scratch on the physics sequence at the
    checkpoint rung (:data:`~iclr25.ms_gode.pretrained.PRETRAIN`, ``epochs`` per task if given), all scored on
    the same fresh test tasks (:func:`~iclr25.ms_gode.pretrained.measure`'s, 16 batches of 10 per task).

    ``scale`` (a :class:`~iclr25.ms_gode.pretrained.PretrainScale`), ``methods``, ``baseline_lr`` and
    ``n_test_batches`` change the rung (the claims' ``paper`` rung; ``n_tasks``: the sequence's first tasks only,
    for its smoke run); ``device`` is where every learner computes
    (``None``: ``$ICLR25_DEVICE``, else ``auto``; also part of the cache key).

    Returns ``measure``'s dict for MS-GODE plus ``oracle_drift`` (``max_j |a_Kj - a_jj|`` with the oracle
    mask), ``baselines`` (``{method: {ap_mse, af_mse, acc}}``) and ``cpu_s`` (training + testing per method).
    """
    import torch  # noqa: PLC0415

    from iclr25.utils.device import device_scope  # noqa: PLC0415

    from .data import task_sequence  # noqa: PLC0415
    from .pretrained import (  # noqa: PLC0415  # noqa: PLC0415
        PRETRAIN,
        TEST_BATCH_SIZE,
        TEST_BATCHES,
        TEST_SEED_OFFSET,
        measure,
        train_pretrained,
    )

    torch.set_num_threads(1)
    sc = PRETRAIN if scale is None else scale
    sc = sc if epochs is None else dataclasses.replace(sc, epochs=epochs)
    n_batches = TEST_BATCHES if n_test_batches is None else n_test_batches
    diag: list[float] = []
    tests = task_sequence("physics", n_batches * TEST_BATCH_SIZE, seed=TEST_SEED_OFFSET + seed)[:n_tasks]

    def after(learner: Any, j: int) -> None:
        diag.append(learner.evaluate(tests[j], task_id=j).mse)

    t0 = time.process_time()
    with device_scope(device):
        learner, _ = train_pretrained(seed, sc, after_task=after, n_tasks=n_tasks)
    m = measure(learner, seed=seed, n_batches=n_batches, n_unseen_batches=4 if n_batches == TEST_BATCHES else 1)
    cpu = {"ms-gode": time.process_time() - t0}
    m["oracle_drift"] = float(max(abs(m["oracle_mse"][j] - diag[j]) for j in range(len(diag))))
    tasks = task_sequence("physics", sc.n_train + sc.n_valid, seed=seed)[:n_tasks]
    triples = [(t.subset(np.arange(sc.n_train)), t.subset(np.arange(sc.n_train, sc.n_train + sc.n_valid)), te)
               for t, te in zip(tasks, tests, strict=True)]
    mc = ModelConfig(hidden=sc.hidden, ode_hidden=sc.ode_hidden, augment=sc.augment)
    base = {}
    for meth in methods:
        t0 = time.process_time()
        r = run_sequence(meth, triples, config=mc,
                         train=TrainConfig(epochs=sc.epochs, batch_size=sc.batch_size, lr=baseline_lr), seed=seed,
                         device=device)
        cpu[meth] = time.process_time() - t0
        base[meth] = {"ap_mse": r.ap_mse, "af_mse": r.af_mse, "acc": r.acc.tolist()}
    m["baselines"] = base
    m["cpu_s"] = cpu
    m["epochs"] = sc.epochs
    return m
