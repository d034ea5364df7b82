"""Plot ``benchmarks/ladder_localisation.json`` (written by ``make_demo_checkpoints.py``) to ``docs/ladder.png``:
change-localisation F1 of TEOChat and of the last-frame-only model against training steps (mean over seeds, each
seed a dot), with the best trivial answer (mean over seeds) as a dashed line.

    python benchmarks/_plot_ladder.py
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from iclr25.utils.plotting import savefig, subplots

HERE = Path(__file__).resolve().parents[1]


def main() -> None:
    info = json.loads((HERE / "benchmarks/ladder_localisation.json").read_text())
    rows = info["rows"]
    fig, ax = subplots(size=(4.6, 3.2))
    for k, (model, label) in enumerate((("temporal", "TEOChat (every frame)"), ("last_frame", "last frame only"))):
        pts = [r for r in rows if r["model"] == model]
        steps = sorted({r["steps"] for r in pts})
        ax.plot(steps, [statistics.fmean(r["loc_f1"] for r in pts if r["steps"] == s) for s in steps], "o-",
                color=f"C{k}", label=label)
        ax.scatter([r["steps"] for r in pts], [r["loc_f1"] for r in pts], s=10, color=f"C{k}", alpha=0.5)
    first = [r for r in rows if r["model"] == "temporal" and r["steps"] == rows[0]["steps"]]
    best = statistics.fmean(r["best_trivial"] for r in first)
    names = sorted({max(r["trivial"], key=r["trivial"].get) for r in first})
    ax.axhline(best, linestyle="--", color="C3", label=f"best trivial answer ({', '.join(names)})")
    top = best
    if all("single_frame_oracle" in r for r in first):
        oracle = statistics.fmean(r["single_frame_oracle"] for r in first)
        ax.axhline(oracle, linestyle=":", color="C4", label="single-frame oracle (a bound, not trivial)")
        top = max(top, oracle)
    ax.set_xscale("log")
    ax.set_xlabel(f"training steps (batch {info['config']['batch_size']}, {'+'.join(info['config']['tasks'])})")
    ax.set_ylabel("change localisation pixel F1 (mean over seeds)")
    ax.set_ylim(0, max(0.5, top + 0.05, max(r["loc_f1"] for r in rows) + 0.05))
    ax.legend(fontsize=7)
    fig.tight_layout()
    savefig(fig, HERE / "docs/ladder.png")


if __name__ == "__main__":
    main()
