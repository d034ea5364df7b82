"""Figures of the demo and the reproduction (matplotlib on Agg via ``iclr25.utils.plotting``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from iclr25.utils.plotting import savefig, subplots

__all__ = ["plot_rollout", "plot_ratio", "plot_repro"]


def plot_rollout(path: str | os.PathLike[str], truth: np.ndarray, preds: Mapping[str, np.ndarray],
                 per_step: Mapping[str, np.ndarray], *, t: np.ndarray, x: np.ndarray, title: str = "",
                 caption: str = "") -> Path:
    """Space-time plots of one test trajectory (truth and each model's one-step predictions, one colour bar for
    all) and nRMSE per step; ``title`` says what the figure shows, ``caption`` (under the panels) what a panel shows
    that the headline does not (the rollout curves)."""
    n = 1 + len(preds) + 1
    fig, axes = subplots(1, n, size=(3.4, 3.2), layout="constrained")
    vmax = float(np.abs(truth).max())
    panels = [("observed truth", truth), *((f"{k} one-step prediction", v) for k, v in preds.items())]
    ims = []
    for i, (ax, (name, field)) in enumerate(zip(axes, panels, strict=False)):
        ims.append(ax.imshow(field, aspect="auto", origin="lower", cmap="RdBu_r", vmin=-vmax, vmax=vmax,
                             extent=(x[0], x[-1], t[0], t[-1])))
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("x (nondimensional)")
        if i == 0:
            ax.set_ylabel("t (nondimensional)")
        else:  # the same time axis as the truth's
            ax.sharey(axes[0])
            ax.tick_params(labelleft=False)
        ax.grid(False)
    cb = fig.colorbar(ims[0], ax=list(axes[:len(panels)]), shrink=0.9)
    cb.ax.set_title("u(x, t)", fontsize=9)  # one scale (-max|u|, max|u|) for the truth and every prediction
    ax = axes[-1]
    colours: dict[str, str] = {}
    for name, err in per_step.items():
        # one colour per model (first word of the label), dashed for rollouts
        c = colours.setdefault(name.split()[0], f"C{len(colours)}")
        ax.plot(t[1:], err, label=name, color=c, ls="--" if "rollout" in name else "-")
    ax.set_title("error per step: one-step vs rollout", fontsize=9)
    ax.set_xlabel("t (nondimensional)")
    ax.set_ylabel("nRMSE (error / norm of truth)")
    ax.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    if caption:
        fig.get_layout_engine().set(h_pad=0.1)
        fig.text(0.5, -0.02, caption, ha="center", va="top", fontsize=8, wrap=True)
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


def plot_repro(path: str | os.PathLike[str], rows: Sequence[Mapping[str, object]], *, main_resolution: int,
               main_nu: float, epochs: int) -> Path:
    """The figure of ``repro``: the MemNO/FFNO ratio against resolution and against viscosity, and the budget
    ladder (nRMSE against epochs, with the do-nothing and linear-extrapolation predictors as lines).

    ``rows`` are the rows ``repro`` writes to ``rows.json``.
    """
    fig, axes = subplots(1, 3, size=(4.0, 3.3), layout="constrained")
    ks_rows = [r for r in rows if r["pde"] == "ks" and not r["noise"]]
    # (a) ratio vs resolution at the main viscosity and budget (every seed as a point)
    ax = axes[0]
    pts = [(int(r["resolution"]), float(r["ratio"])) for r in ks_rows
           if float(r["nu"]) == main_nu and r["epochs"] == epochs]
    ax.scatter(*zip(*pts, strict=True), color="tab:blue", label=f"KS ν={main_nu:g} ({epochs} ep.)")
    res_u = sorted({p[0] for p in pts})
    ax.plot(res_u, [np.mean([q for r_, q in pts if r_ == r]) for r in res_u], color="tab:blue")
    for r in rows:
        if r["noise"]:
            ax.scatter([r["resolution"]], [r["ratio"]], marker="x", color="tab:red",
                       label=f"noise {float(r['noise']):g}")
        if r["pde"] == "burgers":
            ax.scatter([r["resolution"]], [r["ratio"]], marker="s", color="tab:green",
                       label=f"Burgers ν={float(r['nu']):g}")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted({int(r["resolution"]) for r in rows}), [str(v) for v in sorted({int(r["resolution"])
                                                                                            for r in rows})])
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xlabel("resolution")
    ax.set_ylabel("nRMSE(MemNO) / nRMSE(FFNO), one-step")
    ax.legend(fontsize=7)
    # (b) ratio vs viscosity at the main resolution
    ax = axes[1]
    by_nu: dict[float, list[float]] = {}
    for r in ks_rows:
        if int(r["resolution"]) == main_resolution and r["epochs"] == epochs:
            by_nu.setdefault(float(r["nu"]), []).append(float(r["ratio"]))
    nus = sorted(by_nu)
    ax.plot(nus, [np.mean(by_nu[v]) for v in nus], "o-", color="tab:blue")
    ax.set_xscale("log")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xlabel(f"viscosity ν (KS, res {main_resolution})")
    ax.set_ylabel("MemNO / FFNO")
    # (c) budget ladder at each resolution of the ladder
    ax = axes[2]
    seed0 = rows[0]["seed"]
    lad = [r for r in ks_rows if float(r["nu"]) == main_nu and r["seed"] == seed0]
    for i, res in enumerate(sorted({int(r["resolution"]) for r in lad})):
        rr = sorted((r for r in lad if int(r["resolution"]) == res), key=lambda r: int(r["epochs"]))
        if len(rr) < 2:
            continue
        e = [int(r["epochs"]) for r in rr]
        ax.plot(e, [r["ffno"] for r in rr], "o--", color=f"C{i}", label=f"FFNO res {res}")
        ax.plot(e, [r["memno"] for r in rr], "o-", color=f"C{i}", label=f"MemNO res {res}")
        ax.axhline(float(np.mean([r["do-nothing"] for r in rr])), color=f"C{i}", lw=0.8, ls=":")
    lin = [float(r["linear-extrapolation"]) for r in lad]
    if lin:
        ax.axhline(float(np.mean(lin)), color="gray", lw=0.8, ls="-.", label="linear extrap.")
    ax.plot([], [], color="k", lw=0.8, ls=":", label="do-nothing")
    ax.set_xscale("log")
    ax.set_xlabel("epochs")
    ax.set_ylabel("test nRMSE, one-step")
    ax.legend(fontsize=7)
    return savefig(fig, path)
