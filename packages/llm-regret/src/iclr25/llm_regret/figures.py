"""The tables and figures of ``iclr25 llm-regret``: a markdown table of result rows and the Regret_t / t curves."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from iclr25.utils.plotting import savefig, subplots

__all__ = ["table", "regret_figure"]


def _fmt(x) -> str:
    if isinstance(x, str):
        return x
    if isinstance(x, bool):
        return "yes" if x else "NO"
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, (int, np.integer)):
        return str(x)
    return f"{x:.3g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.2e}"


def table(rows: list[dict], cols: list[str]) -> str:
    """A markdown table of ``rows`` in the columns ``cols`` (3 significant digits; booleans yes/NO; missing –)."""
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(_fmt(r.get(c)) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def regret_figure(curves: dict, families, agents, path: Path, T: int, *, n_seeds: int | None = None) -> Path:
    """Regret_t / t (mean over seeds) against t, one panel per loss family, one line per agent; every panel has its
    own y scale and label, the title says what a falling line means."""
    fig, axes = subplots(1, len(families), size=(3.2, 2.9), layout="constrained")
    axes = np.atleast_1d(axes)
    t = np.arange(1, T + 1)
    for ax, fam in zip(axes, families, strict=True):
        for name in agents:
            ax.plot(t, curves[(fam, name)] / t, label=name, lw=1.2)
        ax.set_title(f"losses: {fam}", fontsize=9)
        ax.set_xlabel("round t (log scale)")
        ax.set_xscale("log")
        ax.set_ylabel("average regret Regret_t / t")
    axes[-1].legend(fontsize=7, title="agent", title_fontsize=7)
    seeds = f"mean over {n_seeds} seeds" if n_seeds else "mean over seeds"
    fig.suptitle(f"Average regret per round, T = {T} ({seeds}; loss per round in [0, 1]): falling to 0 means "
                 "no regret", fontsize=9)
    return savefig(fig, path)
