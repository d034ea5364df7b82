"""Figures: generated versus reference conformers of a molecule, and training-budget ladders."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from iclr25.utils.plotting import savefig, subplots

from .metrics import rmsd_matrix

__all__ = ["plot_conformers", "plot_ladder"]


def _align_to(ref: np.ndarray, x: np.ndarray) -> np.ndarray:
    a, b = ref - ref.mean(0), x - x.mean(0)
    U, _, Vt = np.linalg.svd(b.T @ a)
    d = np.sign(np.linalg.det(U @ Vt))
    return b @ (U @ np.diag([1, 1, d]) @ Vt)


def plot_conformers(path: str | os.PathLike[str], molecule, panels: Mapping[str, np.ndarray],
                    reference: np.ndarray, *, title: str = "") -> Path:
    """One panel per method: its conformers (grey) overlaid on the reference conformers (colour), each aligned to
    the first reference, drawn as bond sticks in the plane of the reference's two main axes; the panel title gives
    MAT-R."""
    mol = molecule.mol
    bonds = [(b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in mol.GetBonds()]
    r0 = reference[0] - reference[0].mean(0)
    _, _, axes = np.linalg.svd(r0)
    fig, ax = subplots(1, len(panels), size=(3.2 * len(panels), 3.2))
    ax = np.atleast_1d(ax)
    for a, (name, confs) in zip(ax, panels.items(), strict=True):
        mat = rmsd_matrix(mol, reference, confs).min(1).mean()
        for c in confs:
            p = _align_to(r0, c) @ axes[:2].T
            for i, j in bonds:
                a.plot(p[[i, j], 0], p[[i, j], 1], color="0.6", lw=0.8, alpha=0.6)
        for k, c in enumerate(reference):
            p = _align_to(r0, c) @ axes[:2].T
            for i, j in bonds:
                a.plot(p[[i, j], 0], p[[i, j], 1], color=f"C{k % 10}", lw=1.6)
        a.plot([], [], color="0.6", lw=0.8, label="generated")
        a.plot([], [], color="C0", lw=1.6, label="reference (one colour each)")
        a.legend(fontsize=6, loc="lower right")
        a.set_title(f"{name}\nMAT-R {mat:.2f} Å", fontsize=9)
        a.set_aspect("equal")
        a.set_xticks([])
        a.set_yticks([])
    if title:
        fig.suptitle(title, fontsize=8)
    fig.tight_layout()
    return savefig(fig, path)


def plot_ladder(path: str | os.PathLike[str], series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
                *, xlabel: str, ylabel: str, hlines: Mapping[str, float] | None = None) -> Path:
    """Lines ``y(x)`` per series, optional horizontal reference lines (e.g. ETKDG, the 0.5x random gate)."""
    fig, ax = subplots(1, 1, size=(4.6, 3.4))
    for name, (x, y) in series.items():
        ax.plot(x, y, marker="o", label=name)
    for k, (name, y) in enumerate((hlines or {}).items()):
        ax.axhline(y, ls="--", color=f"C{k + 3}", label=name)
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return savefig(fig, path)

