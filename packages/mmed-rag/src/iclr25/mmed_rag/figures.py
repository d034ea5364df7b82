"""Figures: example images with their retrieved reports, and the ablation/ordering chart."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.plotting import savefig, subplots

from .data import DOMAINS

__all__ = ["plot_examples", "plot_ablation"]


def plot_examples(examples: dict[str, Any], path: str | Path) -> Path:
    """Up to six test images (procedural, 32 px), each titled with its domain (and where the router sent it),
    its ground-truth report, the top retrieved report and the generated report (when given)."""
    n = min(6, len(examples["images"]))
    fig, axes = subplots(2, 3, size=(4.2, 5.2))
    routed = examples.get("routed")
    for j, ax in enumerate(np.ravel(axes)):
        ax.axis("off")
        if j >= n:
            continue
        ax.imshow(np.transpose(examples["images"][j], (1, 2, 0)), interpolation="nearest")
        dom = DOMAINS[int(examples["domains"][j])]
        head = f"{dom} (synthetic, 32 px)"
        if routed is not None:
            r = DOMAINS[int(routed[j])]
            head += f"; routed to {r}" if r != dom else "; routed correctly"
        lines = [head, f"truth: {examples['truth'][j]}"]
        if examples["retrieved"][j]:
            lines.append(f"top retrieved: {examples['retrieved'][j][0]}")
        if examples["generated"][j]:
            lines.append(f"generated: {examples['generated'][j]}")
        ax.set_title("\n".join(textwrap.fill(line, 44) for line in lines), fontsize=6.5, loc="left")
    fig.suptitle("Procedural test images (not real scans): each domain's four findings drawn at random contrast",
                 fontsize=8)
    fig.subplots_adjust(hspace=0.75, top=0.84)
    return savefig(fig, path)


def plot_ablation(rows: dict[str, dict[str, float]], path: str | Path, *,
                  metrics: tuple[str, ...] = ("accuracy", "copy_rate", "harm_rate"),
                  title: str = "VQA on the test split (gap-rule contexts; no-RAG/fixed-k rows as labelled)") -> Path:
    """Grouped bars of ``metrics`` (default accuracy, copy rate, harm rate) per variant (``rows[variant][metric]``)."""
    names = list(rows)
    fig, ax = subplots(1, 1, size=(8.0, 3.6))
    w = 0.8 / len(metrics)
    x = np.arange(len(names))
    for i, m in enumerate(metrics):
        vals = [rows[n].get(m, np.nan) for n in names]
        ax.bar(x + (i - (len(metrics) - 1) / 2) * w, vals, w, label=m.replace("_", " "))
    ax.set_xticks(x)
    ax.set_xticklabels(names, rotation=20, fontsize=7)
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7)
    ax.set_title(title, fontsize=8)
    return savefig(fig, path)
