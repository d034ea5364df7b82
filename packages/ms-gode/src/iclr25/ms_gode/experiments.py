"""The demo and repro experiments: task sequences, every method side by side, tables and figures."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .continual import SequenceResult, TrainConfig
from .data import TaskData
from .model import ModelConfig

__all__ = ["split_tasks", "summary_rows", "markdown_table", "plot_predictions"]


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
