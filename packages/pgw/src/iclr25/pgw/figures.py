"""The figures of ``iclr25 pgw demo`` and ``repro``: a PGW and a GW plan side by side on a shape with outliers,
and one heat map per distance matrix."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .experiments import OutlierMatching

__all__ = ["plot_matching", "plot_matrices"]


def plot_matching(m: OutlierMatching, path: Path) -> None:
    """The shape, its moved copy with outliers, and the strongest link of each source point under the PGW plan
    (left) and the GW plan (right), each titled with its transported mass and its share on the outliers."""
    from matplotlib.collections import LineCollection

    from iclr25.utils.plotting import savefig, subplots

    fig, axes = subplots(1, 2, size=(5.0, 3.3), layout="constrained")
    shift = np.array([m.X[:, 0].max() - m.Y[:, 0].min() + 0.5, 0.0])
    Y = m.Y + shift
    n_clean = m.Y.shape[0] - m.n_outliers
    for ax, plan, title in ((axes[0], m.pgw.plan, f"PGW (lam={m.lam:.3g})"), (axes[1], m.gw.plan, "GW")):
        ax.scatter(m.X[:, 0], m.X[:, 1], s=8, c="tab:blue", label="shape", zorder=3)
        ax.scatter(Y[:n_clean, 0], Y[:n_clean, 1], s=8, c="tab:green", label="moved copy", zorder=3)
        ax.scatter(Y[n_clean:, 0], Y[n_clean:, 1], s=14, c="tab:red", marker="x", label="outliers", zorder=3)
        # the strongest link of each source point keeps the picture readable
        j = np.argmax(plan, axis=1)
        keep = plan[np.arange(len(j)), j] > 1e-6 * plan.max()
        segs = np.stack([m.X[keep], Y[j[keep]]], axis=1)
        ax.add_collection(LineCollection(segs, colors="0.4", alpha=0.5, linewidths=0.6,
                                         label="strongest link per shape point"))
        ax.set_title(f"{title}: mass {plan.sum():.2f}, on outliers {m.outlier_share(plan):.1%}", fontsize=9)
        ax.set_aspect("equal")
        ax.set_xlabel("x (shape units; the copy is drawn shifted right)")
        ax.set_ylabel("y (shape units)")
    axes[0].legend(loc="lower left", fontsize=7)
    fig.suptitle(f"Matching a shape to its moved copy with {m.n_outliers} outliers: share of the plan's mass on "
                 f"the outliers, PGW {m.outlier_share(m.pgw.plan):.1%} vs GW {m.outlier_share(m.gw.plan):.1%}",
                 fontsize=10)
    savefig(fig, path)


def plot_matrices(D: dict[str, np.ndarray], path: Path, labels: np.ndarray | None = None) -> None:
    """One heat map per method: rows and columns are shape indices (integer ticks), each with its own
    colour bar; a constrained layout keeps every colour bar clear of the next panel."""
    from matplotlib.ticker import MaxNLocator

    from iclr25.utils.plotting import savefig, subplots

    fig, axes = subplots(1, len(D), size=(3.9, 3.3), layout="constrained")
    for ax, (name, M) in zip(np.atleast_1d(axes), D.items()):
        im = ax.imshow(M, cmap="viridis", interpolation="nearest")
        ax.set_title(f"{name} distance matrix", fontsize=9)
        ax.set_xlabel("shape index")
        ax.set_ylabel("shape index")
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(MaxNLocator(integer=True, nbins=6))
        ax.grid(False)
        if labels is not None:  # class boundaries, so the block structure reads at a glance
            cuts = np.flatnonzero(np.diff(labels)) + 0.5
            for c in cuts:
                ax.axhline(c, color="w", lw=0.6, alpha=0.7)
                ax.axvline(c, color="w", lw=0.6, alpha=0.7)
        cb = fig.colorbar(im, ax=ax, shrink=0.85)
        cb.set_label(f"{name} distance", fontsize=8)
        cb.ax.tick_params(labelsize=7)
    savefig(fig, path)
