"""Figures: correlation functions C(N) (exact, MSM, ITO, BoPITO), densities at a long lag against the
Boltzmann density, and the data-efficiency ladder."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.plotting import savefig, subplots

__all__ = ["plot_acf", "plot_densities", "plot_ladder"]


def plot_acf(path: Path, lags: Sequence[float], curves: Mapping[str, Any], exact_lags: Any, exact: Any,
             *, title: str = "") -> Path:
    """``C(N)`` of each model (name -> values at ``lags``) beside the exact curve."""
    fig, ax = subplots(1, 1, size=(5.0, 3.4))
    ax.plot(exact_lags, exact, "k-", lw=2, label="exact (SqRA)")
    for name, c in curves.items():
        ax.plot(lags, c, "o-", ms=4, label=name)
    ax.set_xscale("log")
    ax.set_xlabel("lag N (frames)")
    ax.set_ylabel("C(N)")
    ax.set_title(title)
    ax.legend()
    return savefig(fig, path)


def plot_densities(path: Path, grid: Any, density: Any, samples: Mapping[str, Any], *, title: str = "") -> Path:
    """Histograms of samples (name -> 1-D array) over the Boltzmann density on ``grid``."""
    fig, ax = subplots(1, 1, size=(5.0, 3.4))
    ax.plot(grid, density, "k-", lw=2, label="Boltzmann (exact)")
    bins = np.linspace(float(np.min(grid)), float(np.max(grid)), 61)
    for name, s in samples.items():
        ax.hist(np.asarray(s).ravel(), bins=bins, density=True, histtype="step", lw=1.5, label=name)
    ax.set_xlabel("x")
    ax.set_ylabel("density")
    ax.set_title(title)
    ax.legend()
    return savefig(fig, path)


def plot_ladder(path: Path, rows: Sequence[Mapping[str, Any]], names: Mapping[str, str],
                *, floor: float | None = None) -> Path:
    """Mean |C error| against the number of training trajectories (mean ± std over seeds); ``names`` maps row
    keys to labels; ``floor`` is the error of exact samples of the same size (the measure's noise floor)."""
    fig, ax = subplots(1, 1, size=(5.0, 3.4))
    ns = sorted({int(r["n_traj"]) for r in rows})
    for key, label in names.items():
        vals = [[r[key] for r in rows if r["n_traj"] == n] for n in ns]
        m = np.array([np.mean(v) for v in vals])
        sd = np.array([np.std(v) for v in vals])
        ax.errorbar(ns, m, yerr=np.minimum(sd, 0.9 * m), marker="o", capsize=3, label=label)
    if floor is not None:
        ax.axhline(floor, color="grey", ls="--", label="noise floor (exact samples)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("training trajectories")
    ax.set_ylabel("mean |C(N) error| over lags")
    ax.legend()
    return savefig(fig, path)
