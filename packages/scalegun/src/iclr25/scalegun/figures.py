"""The figures of ``iclr25 scalegun demo`` and ``repro``: the three bounds per request against the budget, and
the time per request against the graph size."""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["demo_figure", "repro_figure"]


def demo_figure(out: Path, recs: list, budget: float, counts: tuple[int, int, int] = (60, 10, 10)) -> None:
    """``out/bounds.png``: the three bounds per request on a log scale, the budget, retrain events (only when
    there are any) and the legend outside the axes, so it covers no line; request numbers are integers."""
    from matplotlib.ticker import MaxNLocator

    from iclr25.utils.plotting import savefig, subplots

    fig, ax = subplots(1, 1, size=(6.4, 3.6))
    x = np.arange(1, len(recs) + 1)
    ax.semilogy(x, [max(r.worst_case_bound, 1e-12) for r in recs], label="worst-case bound", color="C3")
    ax.semilogy(x, [max(r.data_bound) for r in recs], label="data-dependent bound", color="C0")
    ax.semilogy(x, [max(r.true_residual) for r in recs], label="true gradient residual", color="C2")
    ax.axhline(budget, color="k", ls="--", lw=1, label="budget σε/c(δ)")
    retrains = [r_i for r_i, r in zip(x, recs, strict=True) if r.retrained]
    for k, r_i in enumerate(retrains):
        ax.axvline(r_i, color="0.6", lw=0.6, label="retrain" if k == 0 else None)
    edges, nodes, feats = counts
    for b in (edges + 0.5, edges + nodes + 0.5):  # where the request kind changes
        ax.axvline(b, color="0.85", lw=3, zorder=0)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(0.5, len(recs) + 0.5)
    ax.set_xlabel(f"request ({edges} edges, then {nodes} nodes, then {feats} features; "
                  f"{len(retrains)} retrain{'s' if len(retrains) != 1 else ''})")
    ax.set_ylabel("gradient residual norm\n(max over classes)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, borderaxespad=0.0)
    ax.set_title("ScaleGUN certified unlearning: gradient-residual bounds per request\n(a request retrains the "
                 "model when the data-dependent bound passes the budget)", fontsize=9)
    savefig(fig, out / "bounds.png")


def repro_figure(out: Path, rows: list[dict]) -> None:
    """``out/time_vs_size.png``: seconds per single-edge request of ScaleGUN (total and update only), CGU and
    retraining against the number of edges, log-log."""
    from iclr25.utils.plotting import savefig, subplots

    fig, ax = subplots(1, 1, size=(5.0, 3.6))
    m = [r["edges"] for r in rows]
    ax.loglog(m, [r["scalegun_total_s"] for r in rows], "o-", label="ScaleGUN (push + Newton)")
    ax.loglog(m, [r["scalegun_update_s"] for r in rows], "o:", color="C0", label="ScaleGUN update only")
    ax.loglog(m, [r["cgu_total_s"] for r in rows], "s-", label="CGU (re-propagation + Newton)")
    ax.loglog(m, [r["retrain_total_s"] for r in rows], "^-", label="retrain from scratch")
    ax.set_xlabel("undirected edges")
    ax.set_ylabel("seconds per single-edge request")
    ax.legend(fontsize=8)
    savefig(fig, out / "time_vs_size.png")
