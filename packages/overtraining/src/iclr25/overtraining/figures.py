"""Figures and Markdown tables of the demo, ``analyze`` and ``repro`` (hidden progress, the per-day analysis)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from iclr25.utils.plotting import savefig, subplots

__all__ = ["analysis_figure", "progress_figure", "table"]


def _fmt(x) -> str:
    if isinstance(x, str):
        return x
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "NO"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return f"{x:.3g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.2e}"


def table(rows: list[dict], cols: list[str]) -> str:
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(_fmt(r.get(c)) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def progress_figure(runs, path: Path, *, title: str = "") -> Path:
    """Normalised hidden margin, training / held-out accuracy against epoch, with E₀ marked (one line per run)."""
    fig, axes = subplots(1, 3, size=(3.3, 2.8), layout="constrained")
    for k, hp in enumerate(runs):
        r = hp.run
        ep = np.maximum(r.epochs, 0.8)
        lab = f"seed {k}" if len(runs) > 1 else None
        axes[0].plot(ep, r.curve("margin"), lw=1.2, label=lab)
        axes[1].plot(ep, r.curve("train_acc"), lw=1.2)
        axes[2].plot(ep, r.curve("test_acc"), lw=1.2)
        for ax in axes:
            ax.axvline(hp.E0, color="0.6", lw=0.6, ls=":")
            ax.axvline(hp.end_epoch, color="0.8", lw=0.6, ls="--")
    for ax, name, ylabel in zip(axes, ("hidden SVM margin", "training accuracy (behaviour)", "held-out accuracy"),
                                ("margin (RMS-normalised features)", "accuracy (fraction correct)",
                                 "accuracy (fraction correct)"), strict=True):
        ax.set_xscale("log")
        ax.set_xlabel("epoch (log scale)")
        ax.set_ylabel(ylabel)
        ax.set_title(name, fontsize=9)
    if len(runs) > 1:
        axes[0].legend(fontsize=6)
    if title:
        fig.suptitle(title, fontsize=9)
    return savefig(fig, path)


def analysis_figure(res, path: Path) -> Path:
    """``analyze``'s figure: accuracies, the normalised margin per day and which probes were decoded right."""
    fig, axes = subplots(1, 3, size=(3.3, 2.8), layout="constrained")
    x = np.arange(len(res.days))
    axes[0].plot(x, res.behaviour, "o-", label="behaviour")
    axes[0].plot(x, res.decoding_accuracy, "s-", label="decoding (CV)")
    axes[0].plot(x, res.probe_accuracy, "^-", label="probe decoding")
    axes[0].legend(fontsize=6)
    axes[0].set_title("accuracy", fontsize=9)
    axes[0].set_ylabel("accuracy (fraction correct)")
    axes[1].plot(x, res.signed_margin, "o-", label="margin (hard; soft where not separable)")
    if res.non_separable_days:
        ns = list(res.non_separable_days)
        axes[1].plot(x[ns], res.signed_margin[ns], "rx", ms=6, label="not separable (soft margin)")
        axes[1].axhline(0.0, color="0.6", lw=0.6)
    axes[1].legend(fontsize=5)
    rho = "n/a" if not math.isfinite(res.margin_trend.rho) else f"{res.margin_trend.rho:.2f}"
    pv = "n/a" if not math.isfinite(res.margin_trend.p_value) else f"{res.margin_trend.p_value:.3g}"
    axes[1].set_title(f"normalised margin (rho {rho}, p {pv})", fontsize=8)
    axes[1].set_ylabel("margin (RMS-normalised features)")
    if res.probe_correct.size:
        from matplotlib.colors import ListedColormap  # noqa: PLC0415 - matplotlib came with subplots

        im = axes[2].imshow(res.probe_correct.T.astype(float), aspect="auto", cmap=ListedColormap(["k", "w"]),
                            interpolation="nearest", vmin=0, vmax=1)
        axes[2].set_ylabel("probe stimulus")
        cb = fig.colorbar(im, ax=axes[2], ticks=[0.25, 0.75])  # two colours: decoded wrong, decoded right
        cb.ax.set_yticklabels(["wrong", "right"], fontsize=7)
    axes[2].set_title("probe decoded right (white)", fontsize=9)
    for ax in axes:
        ax.axvline(res.reference_day, color="0.6", lw=0.6, ls=":")
        ax.set_xlabel("day index")
    return savefig(fig, path)
