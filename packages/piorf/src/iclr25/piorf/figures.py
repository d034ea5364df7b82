"""Figures of the command line and the reproduction: added edges over the flow field, training and rollout
curves (matplotlib on Agg via ``iclr25.utils.plotting``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["flow_figure", "training_figure", "rollout_figure"]


def _integer_x(ax: Any) -> None:
    """Steps are whole numbers: ticks at integers only."""
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415 - matplotlib is imported with the first figure

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def flow_figure(path: str | os.PathLike[str], traj: Any, frame: int, rewirings: Mapping[str, Any],
                title: str) -> Path:
    """One panel per rewiring: mesh over the speed ``|v|`` of ``frame``, added edges in red, bottleneck nodes."""
    from matplotlib.colors import Normalize  # noqa: PLC0415 - matplotlib is imported with the first figure

    from iclr25.utils.plotting import savefig, subplots  # noqa: PLC0415

    fig, axes = subplots(len(rewirings), 1, size=(11.0, 2.1), sharex=True, layout="constrained")
    axes = np.atleast_1d(axes)
    speed = np.linalg.norm(traj.velocity[frame], axis=1)
    norm = Normalize(float(speed.min()), float(speed.max()))  # one colour scale for every panel
    meshes = []
    for ax, (name, rw) in zip(axes, rewirings.items(), strict=True):
        meshes.append(ax.tripcolor(traj.pos[:, 0], traj.pos[:, 1], traj.cells, speed, shading="gouraud",
                                   cmap="viridis", norm=norm))
        ax.triplot(traj.pos[:, 0], traj.pos[:, 1], traj.cells, lw=0.15, color="w", alpha=0.5)
        for a, b in rw.added:
            ax.plot(traj.pos[[a, b], 0], traj.pos[[a, b], 1], color="tab:red", lw=0.9)
        if len(rw.bottleneck):
            ax.scatter(*traj.pos[rw.bottleneck].T, s=10, color="tab:orange", zorder=3, label="bottleneck nodes")
        ax.set_aspect("equal")
        ax.set_title(f"{name}: {rw.n_added} added edges", fontsize=9)
        ax.set_ylabel("y / D")
        ax.grid(False)
    # one key for the marks of every panel, in the first panel's corner (the flow there is far downstream)
    axes[0].plot([], [], color="tab:red", lw=0.9, label="added edges")
    handles, labels = axes[0].get_legend_handles_labels()
    axes[0].legend(handles[::-1], labels[::-1], loc="upper right", fontsize=7, frameon=True, framealpha=0.85)
    axes[-1].set_xlabel("x / D (D: cylinder diameter; flow left to right)")
    # one norm and one colour map: this bar is every panel's key (figure_problems reads it so)
    fig.colorbar(meshes[-1], ax=list(axes), label="speed |v| / U_ref (peak inflow speed)", shrink=0.8)
    fig.suptitle(title, fontsize=10)
    return savefig(fig, path)


def training_figure(path: str | os.PathLike[str], losses: Sequence[float], rmse_velocity: Sequence[float]) -> Path:
    """Training loss per optimiser step and the velocity RMSE of one rollout per step."""
    from iclr25.utils.plotting import savefig, subplots  # noqa: PLC0415

    fig, ax = subplots(1, 2, size=(4.5, 3.2))
    ax[0].plot(np.arange(1, len(losses) + 1), losses)
    ax[0].set(yscale="log", xlabel="optimiser step", ylabel="training loss")
    ax[1].plot(np.arange(1, len(rmse_velocity) + 1), 1e3 * np.asarray(rmse_velocity))
    ax[1].set(xlabel="rollout step", ylabel="velocity RMSE x1e3")
    for a in ax:
        _integer_x(a)
    return savefig(fig, path)


def rollout_figure(path: str | os.PathLike[str], curves: Mapping[str, np.ndarray], *, bold: Sequence[str] = (),
                   title: str = "") -> Path:
    """Velocity RMSE against the rollout step, one line per model (``bold`` ones thicker)."""
    from iclr25.utils.plotting import savefig, subplots  # noqa: PLC0415

    fig, ax = subplots(1, 1, size=(5.5, 3.6))
    for label, curve in curves.items():
        curve = np.asarray(curve)
        ax.plot(np.arange(1, len(curve) + 1), 1e3 * curve, label=label, lw=2.0 if label in bold else 1.0)
    ax.set(xlabel="rollout step", ylabel="velocity RMSE x1e3", title=title)
    _integer_x(ax)
    ax.legend(fontsize=7)
    return savefig(fig, path)
