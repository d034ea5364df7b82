"""Figures: learned vs target log-probability, steps/s against ρ."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from iclr25.utils.plotting import savefig, subplots

__all__ = ["plot_fit", "plot_speed"]


def plot_fit(path: str | os.PathLike[str], log_p: np.ndarray, log_target: np.ndarray, *, title: str = "",
             max_points: int = 20000, seed: int = 0) -> Path:
    """Scatter of the model's exact ``log p_θ(x)`` against the target ``log p*(x)`` (diagonal = perfect)."""
    sel = np.isfinite(log_p) & (np.exp(log_target) > 1e-6)
    x, y = log_target[sel], log_p[sel]
    if len(x) > max_points:
        i = np.random.default_rng(seed).choice(len(x), max_points, replace=False)
        x, y = x[i], y[i]
    fig, ax = subplots(size=(4.2, 3.8))
    ax.scatter(x, y, s=2, alpha=0.3)
    lo, hi = min(x.min(), y.min()), max(x.max(), y.max())
    ax.plot([lo, hi], [lo, hi], "k--", lw=0.8)
    ax.set_xlabel("target log p*(x) = β log R(x) − log Z")
    ax.set_ylabel("learned log p_θ(x) (exact)")
    r = np.corrcoef(x, y)[0, 1] if len(x) > 2 else float("nan")
    ax.set_title(f"{title}\nPearson r = {r:.3f}", fontsize=8)
    return savefig(fig, path)


def plot_speed(path: str | os.PathLike[str], rhos: Sequence[float], steps_per_s: Sequence[float],
               fits: Sequence[float] | None = None) -> Path:
    """Training steps/s against the subsampling ratio ρ (log x), with the fit on a second axis."""
    fig, ax = subplots(size=(4.2, 3.2))
    ax.plot(rhos, steps_per_s, "o-", label="steps/s")
    ax.set_xscale("log")
    ax.set_xlabel("subsampling ratio ρ")
    ax.set_ylabel("TB steps per second")
    if fits is not None:
        ax2 = ax.twinx()
        ax2.plot(rhos, fits, "s--", color="C1", label="fit r")
        ax2.set_ylabel("distribution fit (Pearson r)", color="C1")
    return savefig(fig, path)
