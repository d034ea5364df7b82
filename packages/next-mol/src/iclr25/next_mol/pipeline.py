"""End to end: molecules from the SELFIES LM, then their conformers from DMT (with the stereo check that resamples
conformers whose chirality flipped), then an SDF file.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from iclr25.utils.io import atomic_write

from .chem import Molecule, prepare_many
from .diffusion import SAMPLERS, graphs_of, sample_conformers
from .dmt import DMT
from .lm import CausalLM, decode_to_smiles, sample_lm
from .metrics import graph_from_3d, sanity, sanity_reasons, stereo_matches
from .tokenizer import Tokenizer

__all__ = ["ConformerSet", "generate_smiles", "predict_conformers", "redraw_flipped", "to_rdkit", "write_sdf"]


@dataclasses.dataclass(frozen=True)
class ConformerSet:
    """``k`` predicted heavy-atom conformers of one molecule with their checks."""

    molecule: Molecule
    coords: np.ndarray       # (k, n_atoms, 3) Angstrom
    stereo_ok: np.ndarray    # (k,) bool
    sane: np.ndarray         # (k,) bool: bond lengths and no internal clash
    resampled: int           # conformers redrawn because their stereo flipped
    graph_ok: np.ndarray | None = None  # (k,) bool: bonds perceived from the coordinates = the intended graph
    #: (k,) why each conformer fails the bond-length/clash check ("ok" when it passes; :func:`sanity_reasons`)
    reasons: tuple[str, ...] | None = None


def generate_smiles(lm: CausalLM, tokenizer: Tokenizer, n: int, *, temperature: float = 1.0,
                    top_k: int | None = None, seed: int = 0, unique: bool = False, max_rounds: int = 20,
                    device=None) -> list[str]:
    """``n`` valid molecules (canonical SMILES) from the LM that :func:`~iclr25.next_mol.chem.prepare` accepts
    (one fragment, SELFIES round trip), so that DMT can take each; with ``unique`` duplicates are redrawn. The LM
    samples on ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``)."""
    from .chem import prepare  # noqa: PLC0415

    out: list[str] = []
    seen: set[str] = set()
    for r in range(max_rounds):
        strings = sample_lm(lm, tokenizer, max(n - len(out), 1) if r else n, temperature=temperature, top_k=top_k,
                            seed=seed + 7919 * r, device=device)
        for s in decode_to_smiles(strings, tokenizer.kind):
            if s is None or (unique and s in seen):
                continue
            try:
                prepare(s)
            except ValueError:
                continue
            seen.add(s)
            out.append(s)
        if len(out) >= n:
            return out[:n]
    raise ValueError(f"the LM produced only {len(out)} valid{' unique' if unique else ''} molecules of n={n}")


def redraw_flipped(dmt: DMT, molecules: Sequence[Molecule], coords: list[np.ndarray], *, rounds: int = 3,
                   steps: int = 50, sampler: str = "ancestral", seed: int = 0, graphs=None, batch_size: int = 64,
                   device=None) -> tuple[list[np.ndarray], list[np.ndarray], list[int]]:
    """The stereo check: conformers whose tetrahedral or double-bond stereo perceived from 3D (RDKit
    ``AssignStereochemistryFrom3D``) differs from the input molecule are redrawn from DMT, all molecules' flipped
    conformers in one batched call per round, for at most ``rounds`` rounds; a redrawn conformer replaces the old
    one only when its stereo is right. DMT is not reflection-equivariant, so nothing in it forbids the mirror
    image of a centre; this check fixes what the model gets wrong instead of hiding it.

    Returns ``(coords, stereo_ok, n_redrawn)``, one entry per molecule (``coords`` is a new list; the input
    arrays are not modified). DMT samples on ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``).
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0:
        raise ValueError(f"rounds must be a non-negative integer, got {rounds!r}")
    graphs = list(graphs) if graphs is not None else graphs_of(molecules)
    coords = [np.array(c, copy=True) for c in coords]
    ok = [stereo_matches(m, c) for m, c in zip(molecules, coords, strict=True)]
    redrawn = [0] * len(coords)
    for r in range(rounds):
        bad = [(i, j) for i, o in enumerate(ok) for j in np.flatnonzero(~o)]
        if not bad:
            break
        new = sample_conformers(dmt, [graphs[i] for i, _ in bad], 1, steps=steps, sampler=sampler,
                                seed=seed + 104729 * (r + 1), batch_size=batch_size, device=device)
        for (i, j), x in zip(bad, new, strict=True):
            if stereo_matches(molecules[i], x)[0]:
                coords[i][j] = x[0]
                ok[i][j] = True
                redrawn[i] += 1
    return coords, ok, redrawn


def predict_conformers(dmt: DMT, smiles: Sequence[str], k: int, *, steps: int = 50, sampler: str = "ancestral",
                       seed: int = 0, stereo_check: bool = True, max_resample: int = 3, batch_size: int = 64,
                       device=None) -> list[ConformerSet]:
    """``k`` DMT conformers for each SMILES; with ``stereo_check`` those whose tetrahedral or double-bond stereo
    perceived from 3D differs from the input are redrawn (at most ``max_resample`` rounds, see
    :func:`redraw_flipped`).

    Every SMILES is validated first; an invalid one is a ``ValueError`` naming ``smiles[i]``. DMT samples on
    ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``); the conformers are numpy arrays on the CPU.
    """
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    molecules = prepare_many(smiles)
    graphs = graphs_of(molecules)
    coords = sample_conformers(dmt, graphs, k, steps=steps, sampler=sampler, seed=seed, batch_size=batch_size,
                               device=device)
    if stereo_check:
        coords, oks, redrawn = redraw_flipped(dmt, molecules, coords, rounds=max_resample, steps=steps,
                                              sampler=sampler, seed=seed, graphs=graphs, batch_size=batch_size,
                                              device=device)
    else:
        oks, redrawn = [np.ones(k, dtype=bool) for _ in molecules], [0] * len(molecules)
    return [ConformerSet(m, c, ok, sanity(m, c).sane, r, graph_from_3d(m, c), _reason_texts(m, c))
            for m, c, ok, r in zip(molecules, coords, oks, redrawn, strict=True)]


def _reason_texts(molecule: Molecule, coords: np.ndarray) -> tuple[str, ...]:
    return tuple("ok" if not w.category else f"{w.category}: {w.text}" for w in sanity_reasons(molecule, coords))


def to_rdkit(conformers: ConformerSet, *, add_hydrogens: bool = False):
    """An RDKit molecule holding the ``k`` conformers (hydrogens placed by RDKit when ``add_hydrogens``)."""
    from rdkit import Chem  # noqa: PLC0415
    from rdkit.Geometry import Point3D  # noqa: PLC0415

    mol = Chem.Mol(conformers.molecule.mol)
    mol.RemoveAllConformers()
    for xyz in conformers.coords:
        conf = Chem.Conformer(mol.GetNumAtoms())
        for j, p in enumerate(xyz):
            conf.SetAtomPosition(j, Point3D(*map(float, p)))
        mol.AddConformer(conf, assignId=True)
    if add_hydrogens:
        mol = Chem.AddHs(mol, addCoords=True)
    return mol


def write_sdf(path: str | os.PathLike[str], sets: Sequence[ConformerSet], *, add_hydrogens: bool = False) -> Path:
    """All conformers to one SDF file (atomically), with properties ``smiles``, ``conformer``, ``stereo_ok``,
    ``sane`` (0: the conformer fails the bond-length/clash checks) and, when known, ``sanity`` (why it fails:
    the category and each failing atom pair, ``ok`` when it passes) and ``bonds_from_3d`` (0: the bonds perceived
    from its coordinates are not the molecule's)."""
    from rdkit import Chem  # noqa: PLC0415

    p = Path(path)
    if p.suffix.lower() != ".sdf":
        raise ValueError(f"--out {p} must end in .sdf")
    blocks = []
    for i, cs in enumerate(sets):
        mol = to_rdkit(cs, add_hydrogens=add_hydrogens)
        for j, conf in enumerate(mol.GetConformers()):
            mol.SetProp("_Name", f"mol{i}_conf{j}")
            mol.SetProp("smiles", cs.molecule.smiles)
            mol.SetIntProp("conformer", j)
            mol.SetIntProp("stereo_ok", int(cs.stereo_ok[j]))
            mol.SetIntProp("sane", int(cs.sane[j]))
            if cs.reasons is not None:
                mol.SetProp("sanity", cs.reasons[j])
            if cs.graph_ok is not None:
                mol.SetIntProp("bonds_from_3d", int(cs.graph_ok[j]))
            blocks.append(Chem.MolToMolBlock(mol, confId=conf.GetId()) + _props(mol) + "$$$$\n")
    with atomic_write(p) as f:
        f.write("".join(blocks))
    return p


def _props(mol) -> str:
    keys = ("smiles", "conformer", "stereo_ok", "sane", "sanity", "bonds_from_3d")
    return "".join(f">  <{k}>\n{mol.GetProp(k)}\n\n" for k in keys if mol.HasProp(k))
