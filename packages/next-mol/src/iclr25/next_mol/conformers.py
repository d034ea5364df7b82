"""Pseudo-GEOM reference ensembles and the RDKit ETKDG baseline.

GEOM's conformers come from CREST/GFN2-xTB metadynamics; here each molecule's ensemble is built the classic
cheap way: ETKDGv3 embeddings (with hydrogens), MMFF94 minimisation, an energy window above the minimum and
greedy RMSD pruning (heavy atoms, symmetry-aware), keeping at most ``max_confs`` lowest-energy conformers.
Ensembles are computed in parallel and cached on disk (one ``.npz`` per settings, keyed by a hash).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from iclr25.utils.io import save_npz
from iclr25.utils.parallel import parallel_map

from .chem import Molecule, prepare

__all__ = ["Ensemble", "EnsembleSettings", "reference_ensemble", "reference_ensembles", "etkdg_conformers",
           "default_cache_dir"]


@dataclasses.dataclass(frozen=True)
class EnsembleSettings:
    """How a reference ensemble is built (the note's pseudo-GEOM recipe)."""

    n_embed: int = 60
    energy_window: float = 10.0   # kcal/mol above the lowest MMFF energy
    rmsd_threshold: float = 0.5   # Angstrom, heavy atoms
    max_confs: int = 10
    mmff_iters: int = 500

    def __post_init__(self) -> None:
        for k in ("n_embed", "max_confs", "mmff_iters"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{k} must be a positive integer, got {v!r}")
        if not self.energy_window > 0 or not self.rmsd_threshold >= 0:
            raise ValueError(f"energy_window must be > 0 and rmsd_threshold >= 0, got {self.energy_window}, "
                             f"{self.rmsd_threshold}")


@dataclasses.dataclass(frozen=True)
class Ensemble:
    """Reference conformers of one molecule: heavy-atom coordinates ``(K, n_atoms, 3)`` in Angstrom in the atom
    order of ``molecule.mol``, and their MMFF energies (kcal/mol, relative to the lowest)."""

    molecule: Molecule
    coords: np.ndarray
    energies: np.ndarray

    @property
    def n_confs(self) -> int:
        return int(self.coords.shape[0])


def _embed(mol, n: int, seed: int, *, n_threads: int = 1):
    from rdkit import Chem  # noqa: PLC0415
    from rdkit.Chem import rdDistGeom  # noqa: PLC0415

    molh = Chem.AddHs(mol)
    params = rdDistGeom.ETKDGv3()
    params.randomSeed = 0xF00D + int(seed)  # RDKit 2026.9 gives identical conformers for randomSeed=0
    params.numThreads = n_threads
    params.pruneRmsThresh = -1.0
    ids = list(rdDistGeom.EmbedMultipleConfs(molh, numConfs=int(n), params=params))
    if not ids:
        params.useRandomCoords = True
        ids = list(rdDistGeom.EmbedMultipleConfs(molh, numConfs=int(n), params=params))
    return molh, ids


def heavy_coords(molh, conf_ids: Sequence[int], n_heavy: int) -> np.ndarray:
    """Heavy-atom coordinates of the given conformers (AddHs appends hydrogens after the heavy atoms)."""
    return np.stack([molh.GetConformer(int(c)).GetPositions()[:n_heavy] for c in conf_ids]).astype(np.float64)


def reference_ensemble(smiles: str | Molecule, settings: EnsembleSettings | None = None, *, seed: int = 0
                       ) -> Ensemble:
    """ETKDGv3 (``n_embed`` seeds) + MMFF94 + energy window + RMSD pruning for one molecule.

    ``ValueError`` naming the SMILES when RDKit cannot embed it or MMFF has no parameters for it.
    """
    from rdkit.Chem import rdForceFieldHelpers  # noqa: PLC0415

    from .metrics import rmsd_matrix  # noqa: PLC0415

    settings = settings or EnsembleSettings()
    molecule = smiles if isinstance(smiles, Molecule) else prepare(smiles)
    mol = molecule.mol
    molh, ids = _embed(mol, settings.n_embed, seed)
    if not ids:
        raise ValueError(f"smiles {molecule.smiles!r}: RDKit ETKDG could not embed any conformer")
    if not rdForceFieldHelpers.MMFFHasAllMoleculeParams(molh):
        raise ValueError(f"smiles {molecule.smiles!r}: MMFF94 has no parameters for this molecule")
    res = rdForceFieldHelpers.MMFFOptimizeMoleculeConfs(molh, numThreads=1, maxIters=settings.mmff_iters)
    energies = np.array([e for _, e in res], dtype=np.float64)
    conf_ids = np.array([c.GetId() for c in molh.GetConformers()])
    order = np.argsort(energies, kind="stable")
    order = order[energies[order] - energies[order[0]] <= settings.energy_window]
    n = mol.GetNumAtoms()
    coords = heavy_coords(molh, conf_ids[order], n)
    rms = rmsd_matrix(mol, coords, coords)
    keep: list[int] = []
    for i in range(len(order)):
        if all(rms[i, j] > settings.rmsd_threshold for j in keep):
            keep.append(i)
        if len(keep) == settings.max_confs:
            break
    e = energies[order[keep]]
    return Ensemble(molecule, coords[keep], e - e.min())


def default_cache_dir() -> Path:
    """``$ICLR25_NEXT_MOL_CACHE`` or ``~/.cache/iclr25-next-mol``."""
    env = os.environ.get("ICLR25_NEXT_MOL_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "iclr25-next-mol"


def _one(item: tuple[str, EnsembleSettings, int]) -> tuple[np.ndarray, np.ndarray] | str:
    smi, settings, seed = item
    try:
        ens = reference_ensemble(smi, settings, seed=seed)
    except ValueError as exc:
        return str(exc)
    return ens.coords, ens.energies


def reference_ensembles(smiles: Sequence[str], settings: EnsembleSettings | None = None, *, seed: int = 0,
                        n_jobs: int = 1, cache_dir: str | os.PathLike[str] | None = None, skip_failed: bool = False,
                        desc: str = "reference ensembles") -> list[Ensemble]:
    """:func:`reference_ensemble` for many molecules, in parallel (``n_jobs``), cached under ``cache_dir``
    (default :func:`default_cache_dir`; ``cache_dir=False`` disables it). With ``skip_failed`` molecules that
    cannot be embedded are dropped, otherwise the first failure is raised naming the item.
    """
    settings = settings or EnsembleSettings()
    if isinstance(smiles, str):
        raise TypeError("smiles must be a list of SMILES strings, not one string")
    molecules = [prepare(s, name=f"smiles[{i}]") for i, s in enumerate(smiles)]
    if not molecules:
        raise ValueError("smiles is empty; give at least one molecule")
    key = hashlib.sha256(json.dumps([dataclasses.asdict(settings), seed, [m.smiles for m in molecules]]
                                    ).encode()).hexdigest()[:20]
    path = None if cache_dir is False else Path(cache_dir or default_cache_dir()) / f"ensembles-{key}.npz"
    results: list[tuple[np.ndarray, np.ndarray] | str]
    if path is not None and path.is_file():
        z = np.load(path, allow_pickle=False)
        results = [(z[f"c{i}"], z[f"e{i}"]) if f"c{i}" in z else str(z[f"err{i}"]) for i in range(len(molecules))]
    else:
        results = parallel_map(_one, [(m.smiles, settings, seed) for m in molecules], n_jobs=n_jobs, desc=desc)
        if path is not None:
            arrays = {}
            for i, r in enumerate(results):
                if isinstance(r, str):
                    arrays[f"err{i}"] = np.array(r)
                else:
                    arrays[f"c{i}"], arrays[f"e{i}"] = r
            path.parent.mkdir(parents=True, exist_ok=True)
            save_npz(path, **arrays)
    out = []
    for i, (m, r) in enumerate(zip(molecules, results, strict=True)):
        if isinstance(r, str):
            if skip_failed:
                continue
            raise ValueError(f"smiles[{i}]: {r}")
        out.append(Ensemble(m, r[0], r[1]))
    if not out:
        raise ValueError("no molecule of smiles could be embedded")
    return out


def etkdg_conformers(molecule: Molecule | str, k: int, *, mmff: bool = False, seed: int = 0) -> np.ndarray:
    """The RDKit baseline: ``k`` ETKDGv3 conformers (optionally MMFF94-minimised), heavy atoms ``(k, n, 3)``."""
    from rdkit.Chem import rdForceFieldHelpers  # noqa: PLC0415

    molecule = molecule if isinstance(molecule, Molecule) else prepare(molecule)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    molh, ids = _embed(molecule.mol, k, seed)
    if not ids:
        raise ValueError(f"smiles {molecule.smiles!r}: RDKit ETKDG could not embed any conformer")
    if mmff:
        rdForceFieldHelpers.MMFFOptimizeMoleculeConfs(molh, numThreads=1, maxIters=500)
    coords = heavy_coords(molh, ids, molecule.n_atoms)
    if len(coords) < k:  # pad by repetition so every method gets the same budget
        coords = np.concatenate([coords, coords[np.arange(k - len(coords)) % len(coords)]])
    return coords
