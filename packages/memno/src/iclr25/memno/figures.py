"""Figures of the demo and the reproduction (matplotlib on Agg via ``iclr25.utils.plotting``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from iclr25.utils.plotting import savefig, subplots

__all__ = ["plot_rollout", "plot_ratio"]


def plot_rollout(path: str | os.PathLike[str], truth: np.ndarray, preds: Mapping[str, np.ndarray],
                 per_step: Mapping[str, np.ndarray], *, t: np.ndarray, x: np.ndarray) -> Path:
    """Space-time plots of one test trajectory (truth and each model's predictions) and nRMSE per step."""
    n = 1 + len(preds) + 1
    fig, axes = subplots(1, n, size=(3.4, 3.0), layout="constrained")
    vmax = float(np.abs(truth).max())
    panels = [("observed truth", truth), *((f"{k} one-step", v) for k, v in preds.items())]
    for ax, (title, field) in zip(axes, panels, strict=False):
        ax.imshow(field, aspect="auto", origin="lower", cmap="RdBu_r", vmin=-vmax, vmax=vmax,
                  extent=(x[0], x[-1], t[0], t[-1]))
        ax.set_title(title)
        ax.set_xlabel("x")
        ax.set_ylabel("t")
    ax = axes[-1]
    colours: dict[str, str] = {}
    for name, err in per_step.items():
        # one colour per model (first word of the label), dashed for rollouts
        c = colours.setdefault(name.split()[0], f"C{len(colours)}")
        ax.plot(t[1:], err, label=name, color=c, ls="--" if "rollout" in name else "-")
    ax.set_xlabel("t")
    ax.set_ylabel("nRMSE")
    ax.legend()
    return savefig(fig, path)


def plot_ratio(path: str | os.PathLike[str], rows: Sequence[Mapping[str, object]]) -> Path:
    """nRMSE(MemNO) / nRMSE(FFNO) against the setting (resolution, viscosity, noise) of each row."""
    fig, ax = subplots(1, 1, size=(5.5, 3.2))
    labels = [str(r["setting"]) for r in rows]
    ratios = [float(r["ratio"]) for r in rows]
    ax.bar(range(len(rows)), ratios, color=["tab:blue" if q < 1 else "tab:red" for q in ratios])
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks(range(len(rows)), labels, rotation=20, ha="right")
    ax.set_ylabel("nRMSE(MemNO) / nRMSE(FFNO)")
    return savefig(fig, path)
