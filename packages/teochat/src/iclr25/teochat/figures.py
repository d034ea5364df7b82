"""Figures: an example sequence with the predicted and true boxes; the ladder of training steps."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iclr25.utils.plotting import savefig, subplots

from .metrics import parse_boxes
from .synth import EOSequence

__all__ = ["plot_sequence_boxes", "plot_ladder"]


def _draw_boxes(ax: Any, boxes: Sequence[Sequence[int]], size: int, color: str, style: str, label: str) -> None:
    from matplotlib.patches import Rectangle  # noqa: PLC0415

    for k, (x1, y1, x2, y2) in enumerate(boxes):
        s = size / 100.0
        ax.add_patch(Rectangle((x1 * s - 0.5, y1 * s - 0.5), (x2 - x1) * s, (y2 - y1) * s, fill=False,
                               edgecolor=color, linestyle=style, linewidth=1.6, label=label if k == 0 else None))


def plot_sequence_boxes(path: str | os.PathLike[str], seq: EOSequence, truth: str, prediction: str, *,
                        title: str = "", other: str | None = None, other_label: str = "baseline") -> Path:
    """The chronological frames, each with the true (green, solid) and predicted (magenta, dashed) boxes, and
    a second model's boxes (``other``: cyan, dotted) if given; an unparseable answer is named in the legend."""
    import re  # noqa: PLC0415
    import textwrap  # noqa: PLC0415

    chron, dates = seq.chronological(), [seq.dates[i] for i in seq.order]
    n = len(chron)
    fig, axes = subplots(1, n, size=(1.9, 2.9))  # per panel
    axes = [axes] if n == 1 else list(axes)
    tb, pb = parse_boxes(truth), parse_boxes(prediction)
    ob = parse_boxes(other) if other is not None else None
    for j, (ax, f) in enumerate(zip(axes, chron, strict=True)):
        ax.imshow(f, interpolation="nearest")
        ax.set_title(f"image {j + 1}\n{dates[j]}", fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
        _draw_boxes(ax, tb.boxes, seq.size, "lime", "-", "true")
        _draw_boxes(ax, pb.boxes, seq.size, "magenta", "--", "TEOChat" if pb.valid else "TEOChat (unparseable)")
        if ob is not None:
            _draw_boxes(ax, ob.boxes, seq.size, "cyan", ":", other_label if ob.valid else f"{other_label} "
                        "(unparseable)")
    handles, labels = axes[-1].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, fontsize=7, loc="lower center", ncol=len(handles), frameon=False)
    # the questions are tokenised text ("... changed ?"): no space before punctuation in the title
    title = re.sub(r"\s+([?.,:;!)])", r"\1", title or f"{seq.scene}: changed buildings")
    fig.suptitle("\n".join(textwrap.wrap(title, 60)), fontsize=8)
    fig.subplots_adjust(top=0.78, bottom=0.12, wspace=0.08)
    return savefig(fig, path)


def plot_ladder(path: str | os.PathLike[str], ladder: Sequence[dict[str, Any]], *, reference: dict[str, float]
                ) -> Path:
    """Localisation F1 against training steps, with the baselines as horizontal lines."""
    fig, ax = subplots(size=(4.2, 3.0))
    ax.plot([r["steps"] for r in ladder], [r["loc_f1"] for r in ladder], "o-", label="TEOChat (tiny)")
    for k, (name, v) in enumerate(reference.items()):
        ax.axhline(v, linestyle="--", color=f"C{k + 1}", label=name)
    ax.set_xlabel("training steps")
    ax.set_ylabel("change localisation pixel F1")
    ax.legend(fontsize=7)
    return savefig(fig, path)
