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


def regret_figure(curves: dict, families, agents, path: Path, T: int) -> Path:
    """Regret_t / t (mean over seeds) against t, one panel per loss family, one line per agent."""
    fig, axes = subplots(1, len(families), size=(3.0, 2.6))
    axes = np.atleast_1d(axes)
    t = np.arange(1, T + 1)
    for ax, fam in zip(axes, families, strict=True):
        for name in agents:
            ax.plot(t, curves[(fam, name)] / t, label=name, lw=1.2)
        ax.set_title(fam, fontsize=9)
        ax.set_xlabel("round t")
        ax.set_xscale("log")
    axes[0].set_ylabel("Regret_t / t (mean over seeds)")
    axes[-1].legend(fontsize=7)
    return savefig(fig, path)
