"""Figures: generated versus reference conformers of a molecule, and training-budget ladders."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from iclr25.utils.plotting import savefig, subplots

from .metrics import _symmetry_perms, kabsch_rmsd, rmsd_matrix

__all__ = ["plot_conformers", "plot_ladder"]


def _align_to(ref: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``x`` centred and rotated onto ``ref`` (Kabsch, no reflection), in ``ref``'s centred frame."""
    a, b = ref - ref.mean(0), x - x.mean(0)
    U, _, Vt = np.linalg.svd(b.T @ a)
    d = np.sign(np.linalg.det(U @ Vt))
    return b @ (U @ np.diag([1, 1, d]) @ Vt)


def _best_match(mol, ref: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``x`` with its atoms renumbered by the graph symmetry that brings it closest to ``ref`` (the permutation
    :func:`~.metrics.rmsd_matrix` minimises over), so that the drawn overlay is the one the RMSD scores."""
    perms = _symmetry_perms(mol)
    return x[perms[int(np.argmin(kabsch_rmsd(ref[None], x[perms])))]]


def plot_conformers(path: str | os.PathLike[str], molecule, panels: Mapping[str, np.ndarray],
                    reference: np.ndarray, *, title: str = "", n_references: int = 3) -> Path:
    """One row per method, one column per reference conformer (the first ``n_references``): the reference (black)
    and the method's conformer closest to it (colour), superposed as MAT-R scores them (best RMSD over rotations
    and the molecule's symmetry), drawn as bond sticks in the plane of the reference's two main axes (Angstrom).
    Each panel gives that RMSD; the row's first panel the method's MAT-R (the mean of these minima over every
    reference)."""
    mol = molecule.mol
    bonds = [(b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in mol.GetBonds()]
    refs = np.asarray(reference)[:n_references]
    drawn = {}  # (method, reference) -> (reference 2-D, closest conformer 2-D, its RMSD); MAT-R per method
    mats = {}
    for name, confs in panels.items():
        confs = np.asarray(confs)
        R = rmsd_matrix(mol, np.asarray(reference), confs)  # (references, generated)
        mats[name] = R.min(1).mean()
        for j, ref in enumerate(refs):
            r0 = ref - ref.mean(0)
            _, _, axes = np.linalg.svd(r0)  # the reference's main axes: its widest projection
            k = int(np.argmin(R[j]))
            g = _align_to(r0, _best_match(mol, r0, confs[k]))
            drawn[name, j] = (r0 @ axes[:2].T, g @ axes[:2].T, R[j, k])
    pts = np.concatenate([np.concatenate(v[:2]) for v in drawn.values()])
    lo, hi = pts.min(0) - 0.4, pts.max(0) + 0.4
    aspect = float((hi[1] - lo[1]) / (hi[0] - lo[0]))  # equal axes: the panels take the molecule's shape
    fig, ax = subplots(len(panels), len(refs), size=(2.9, 2.9 * aspect + 0.7), squeeze=False, sharex=True,
                       sharey=True, layout="constrained")
    for i, name in enumerate(panels):
        colour = f"C{i}"
        for j in range(len(refs)):
            a = ax[i, j]
            q, g, rmsd = drawn[name, j]
            for u, v in bonds:
                a.plot(q[[u, v], 0], q[[u, v], 1], color="k", lw=2.2, solid_capstyle="round", zorder=2)
                a.plot(g[[u, v], 0], g[[u, v], 1], color=colour, lw=1.3, alpha=0.9, zorder=3)
            a.scatter(*q.T, s=9, color="k", zorder=2)
            a.scatter(*g.T, s=6, color=colour, zorder=3)
            head = f"{name} (MAT-R {mats[name]:.2f} Å)\n" if j == 0 else f"{name}\n"
            a.set_title(f"{head}reference {j + 1}: RMSD {rmsd:.2f} Å", fontsize=8)
            a.set_xlim(lo[0], hi[0])
            a.set_ylim(lo[1], hi[1])
            a.set_aspect("equal", adjustable="box")
            if i == len(panels) - 1:
                a.set_xlabel("main axis 1 (Å)")
            if j == 0:
                a.set_ylabel("main axis 2 (Å)")
        ax[i, 0].plot([], [], color="k", lw=2.2, label="reference")
        ax[i, 0].plot([], [], color=colour, lw=1.3, label=f"closest {name}")
        ax[i, 0].legend(fontsize=6, loc="best")
    n_ref = len(reference)
    shown = f"the first {len(refs)} of {n_ref} reference conformers" if len(refs) < n_ref else "each reference conformer"
    fig.suptitle((f"{title}\n" if title else "") + f"{shown} (black) with the generated conformer closest to it "
                 f"(colour)\nMAT-R = the mean of these RMSDs over all {n_ref} references", fontsize=9)
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

