"""Figures: optimal schedules, error curves, SGD against the ODE, forgetting against similarity."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.plotting import savefig, subplots

__all__ = ["plot_schedules", "plot_sgd_vs_ode", "plot_forgetting"]


def _window(problem: Any, n: int) -> np.ndarray:
    edges = np.linspace(problem.alpha_1, problem.alpha_f, n + 1)
    return edges


ALPHA_LABEL = r"training time $\alpha$ (SGD steps / input dimension $N$)"


def plot_schedules(path: str | os.PathLike[str], items: list[tuple[str, Any, Any, Any]], *, title: str = "") -> Path:
    """One column per ``(label, problem, SolveResult, Trajectory of the sequential protocol)``: the optimal
    replay share ``u_old(alpha)`` (and learning-rate factor) on top, the task errors below, both panels of a
    column on the same training-time axis ``[0, alpha_f]`` (task 1 alone on ``[0, alpha_1]``, shaded, where the
    schedule does not act)."""
    fig, axes = subplots(2, len(items), size=(5.6, 3.0), squeeze=False, sharex="col", layout="constrained")
    for j, (label, problem, res, seq) in enumerate(items):
        ax = axes[0, j]
        edges = _window(problem, res.schedule.n_intervals)
        for a in axes[:, j]:
            a.axvspan(0.0, problem.alpha_1, color="0.92", lw=0, zorder=0)
        ax.stairs(res.schedule.u[:, 0], edges, label="replay of task 1, $u_1$", color="C3", linewidth=2,
                  baseline=None)
        if np.any(res.schedule.eta_factor != 1.0):
            ax.stairs(res.schedule.eta_factor, edges, label=r"$\eta/\eta_0$", color="C2", baseline=None)
        ax.text(problem.alpha_1 / 2, 0.5, "task 1\nalone", ha="center", va="center", fontsize=7, color="0.4")
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlim(0.0, problem.alpha_f)
        ax.set_title(f"{label}: optimal schedule", fontsize=9)
        ax.set_ylabel("share of steps on task 1" + (r", $\eta/\eta_0$" if np.any(res.schedule.eta_factor != 1.0)
                                                    else ""))
        if j == 0:
            ax.legend(fontsize=7, loc="best")
        ax = axes[1, j]
        tr = res.trajectory
        for t in range(tr.errors.shape[1]):
            ax.plot(tr.alpha, tr.errors[:, t], color=f"C{t}", label=f"task {t + 1} (optimal)")
            ax.plot(seq.alpha, seq.errors[:, t], color=f"C{t}", linestyle=":", label=f"task {t + 1} (sequential)")
        ax.axvline(problem.alpha_1, color="0.6", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xlabel(ALPHA_LABEL)
        ax.set_title(f"{label}: generalisation error per task", fontsize=9)
        ax.set_ylabel(r"error $\epsilon_t$ (log scale)")
        if j == 0:
            ax.legend(fontsize=7)
    if title:
        fig.suptitle("\n".join(textwrap.wrap(title, 80)), fontsize=10)
    return savefig(fig, path)


def plot_sgd_vs_ode(path: str | os.PathLike[str], traj: Any, sim: Any, *, title: str = "") -> Path:
    """Seed-mean SGD errors (with one standard deviation) against the ODE."""
    fig, ax = subplots(1, 1, size=(4.6, 3.4))
    m, s = sim.errors.mean(axis=0), sim.errors.std(axis=0)
    for t in range(m.shape[1]):
        ax.plot(traj.alpha, traj.errors[:, t], color=f"C{t}", label=f"task {t + 1} ODE")
        ax.fill_between(sim.alpha, m[:, t] - s[:, t], m[:, t] + s[:, t], color=f"C{t}", alpha=0.25)
        ax.plot(sim.alpha, m[:, t], color=f"C{t}", linestyle="--", label=f"task {t + 1} SGD")
    ax.set_yscale("log")
    ax.set_xlabel(ALPHA_LABEL)
    ax.set_ylabel(r"error $\epsilon_t$ (log scale)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return savefig(fig, path)


def plot_forgetting(path: str | os.PathLike[str], gammas: Any, curves: dict[str, Any]) -> Path:
    """Forgetting ``eps_1(alpha_f) - eps_1(alpha_1)`` against the similarity, one line per protocol."""
    fig, ax = subplots(1, 1, size=(4.6, 3.4))
    for i, (label, y) in enumerate(curves.items()):
        ax.plot(gammas, y, marker="o", markersize=3, color=f"C{i}", label=label)
    ax.axhline(0, color="0.6", linewidth=0.8)
    ax.set_xlabel(r"task similarity $\gamma$")
    ax.set_ylabel(r"forgetting $\Delta\epsilon_1$")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return savefig(fig, path)
