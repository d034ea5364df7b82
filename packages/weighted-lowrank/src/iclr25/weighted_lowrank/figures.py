"""The figures of ``iclr25 weighted-lowrank demo`` and ``repro``: recovery error per round of each solver, and
seconds per round against the rank ``k``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["plot_errors", "plot_demo", "plot_repro"]


def plot_errors(ax: Any, curves: dict[str, list[float]], title: str, *, ylabel: bool = True) -> None:
    """Recovery error per round of each solver in ``curves`` on a log scale (whole-number round ticks)."""
    from matplotlib.ticker import MaxNLocator

    for label, errs in curves.items():
        ax.semilogy(range(1, len(errs) + 1), np.maximum(errs, 1e-17), marker="o", ms=3, label=label)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # rounds are whole numbers: no 2.5 / 7.5 ticks
    ax.set_xlabel("round")
    if ylabel:
        ax.set_ylabel("recovery error\n‖M* − XYᵀ‖_F / ‖M*‖_F")
    ax.set_title(title, fontsize=9)
    ax.legend()


def plot_demo(path: Path, curves: dict[str, dict[str, list[float]]], *, n: int, d: int, k: int) -> Path:
    """The demo's figure: one panel of :func:`plot_errors` per noise level (``curves[title][solver]``)."""
    from iclr25.utils.plotting import savefig, subplots

    fig, axes = subplots(1, 2, size=(4.2, 3.3), layout="constrained")
    for ax, (title, c) in zip(axes, curves.items(), strict=True):
        plot_errors(ax, c, title)  # every panel its own y label: the two noise levels have different scales
    fig.suptitle(f"Weighted low-rank recovery error per alternating round (n={n}, d={d}, k={k}, dense W)",
                 fontsize=10)
    return savefig(fig, path)


def plot_repro(path: Path, conv: dict[str, dict[str, Any]], rows: list[dict[str, Any]], *, n_scale: int) -> Path:
    """The reproduction's figure: the three convergence problems (exact and sketch per round), then seconds per
    round against ``k`` of each solver on log-log axes (``rows`` of :func:`~.experiments.scaling`)."""
    from iclr25.utils.plotting import savefig, subplots

    fig, axes = subplots(1, 4, size=(3.6, 3.2))
    for ax, (name, c) in zip(axes[:3], conv.items(), strict=True):  # every panel its own y label (issue 66)
        plot_errors(ax, {s: c[s]["errors"] for s in ("exact", "sketch")}, f"n=d=1000, k=16, {name}")
    ax = axes[3]
    kk = [r["k"] for r in rows]
    for solver in ("exact", "sketch", "pcg"):
        ax.loglog(kk, [r[solver]["seconds"] for r in rows], marker="o", label=solver)
    ax.set_xticks(kk, [str(x) for x in kk])
    ax.minorticks_off()
    ax.set_xlabel("k")
    ax.set_ylabel("seconds per round")
    ax.set_title(f"n=d={n_scale}, dense W", fontsize=9)
    ax.legend()
    return savefig(fig, path)
