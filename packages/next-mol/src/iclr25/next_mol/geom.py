"""GEOM conformer ensembles as reference :class:`~iclr25.next_mol.conformers.Ensemble` objects, for users who have
GEOM (Axelrod and Gomez-Bombarelli, "GEOM, energy-annotated molecular conformations for property prediction and
molecular generation", Scientific Data 9, 185 (2022); the paper's GEOM-DRUGS and GEOM-QM9).

Two formats, neither needs pickle:

- GEOM's msgpack files (``drugs_crude.msgpack``, ``qm9_crude.msgpack``, ``*_featurized.msgpack``): a stream of
  msgpack maps, each ``{SMILES: {"conformers": [{"xyz": [[Z, x, y, z], ...], "relativeenergy": kcal/mol,
  "boltzmannweight": ..., ...}, ...], ...}, ...}``, read one map at a time with ``msgpack.Unpacker`` (the optional
  extra ``geom``: ``pip install 'iclr25-next-mol[geom]'``);
- SDF files holding several conformers per molecule (hydrogens kept or not): consecutive records of the same
  molecule (same canonical SMILES) form one ensemble; an SD property ``relativeenergy`` or ``energy`` (kcal/mol)
  is read when present.

Each conformer's heavy atoms are put in the atom order of :func:`~iclr25.next_mol.prepare` by matching the
molecule's graph onto the bonds perceived from the coordinates (:func:`~iclr25.next_mol.qm9.heavy_atom_index`).
Molecules whose geometry does not have the SMILES' connectivity, or that SELFIES/RDKit cannot take, are skipped
and counted; conformers are kept lowest energy first, at most ``max_confs``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .chem import prepare
from .conformers import Ensemble
from .qm9 import heavy_atom_index

__all__ = ["read_geom_msgpack", "read_sdf_ensembles"]

_HARTREE_KCAL = 627.509474


def _limits(max_molecules: int | None, max_confs: int | None) -> None:
    for name, v in (("max_molecules", max_molecules), ("max_confs", max_confs)):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
            raise ValueError(f"{name} must be a positive integer or None, got {v!r}")


def _ensemble(smiles: str, confs: list[tuple[tuple[str, ...], np.ndarray, float]], where: str,
              max_confs: int | None) -> Ensemble:
    """One ensemble from ``(elements, coords, energy)`` conformers (all atoms); ``ValueError`` when it cannot be."""
    m = prepare(smiles, name=where)
    order = sorted(range(len(confs)), key=lambda j: (not np.isfinite(confs[j][2]),
                                                     confs[j][2] if np.isfinite(confs[j][2]) else 0.0, j))
    confs = [confs[j] for j in order][:max_confs]
    idx, prev = None, None
    out = []
    for els, X, _ in confs:  # one atom matching serves every conformer stored in the same atom order
        if idx is None or tuple(els) != prev:
            idx, prev = heavy_atom_index(els, X, m, where=where), tuple(els)
        out.append(X[idx])
    energies = np.array([c[2] for c in confs], dtype=np.float64)
    # relative to the lowest; zeros (file order kept) when the file gives no energy for some conformer
    energies = energies - energies.min() if np.all(np.isfinite(energies)) else np.zeros(len(confs))
    return Ensemble(m, np.stack(out), energies)


def read_geom_msgpack(path: str | os.PathLike[str], *, max_molecules: int | None = None,
                      max_confs: int | None = None) -> tuple[list[Ensemble], dict[str, int]]:
    """Reference ensembles from a GEOM msgpack file (streamed, one map of molecules at a time), and a count of
    the molecules skipped and why. A malformed file is a ``ValueError`` naming it."""
    _limits(max_molecules, max_confs)
    try:
        import msgpack  # noqa: PLC0415
    except ImportError:
        raise ImportError("GEOM msgpack files need msgpack: pip install 'iclr25-next-mol[geom]'") from None
    from rdkit import Chem  # noqa: PLC0415

    path = Path(path)
    table = Chem.GetPeriodicTable()
    out: list[Ensemble] = []
    skipped = {"no_conformers": 0, "smiles": 0, "connectivity": 0}

    def molecules() -> Iterator[tuple[str, dict]]:
        with open(path, "rb") as f:
            unpacker = msgpack.Unpacker(f, raw=False, strict_map_key=False, max_buffer_size=2**31 - 1)
            try:
                for chunk in unpacker:
                    if not isinstance(chunk, dict):
                        raise ValueError(f"{path}: not a GEOM msgpack file (a {type(chunk).__name__} where a map "
                                         "of SMILES to molecules was expected)")
                    yield from chunk.items()
            except (msgpack.exceptions.ExtraData, msgpack.exceptions.FormatError, msgpack.exceptions.StackError,
                    ValueError, UnicodeDecodeError) as exc:
                if str(exc).startswith(str(path)):
                    raise
                raise ValueError(f"{path}: not a readable GEOM msgpack file ({type(exc).__name__})") from None

    n_seen = 0
    for smiles, entry in molecules():
        if max_molecules is not None and len(out) >= max_molecules:
            break
        n_seen += 1
        where = f"{path} molecule {n_seen} {smiles!r}"
        if not isinstance(smiles, str) or not isinstance(entry, dict):
            raise ValueError(f"{where}: not a GEOM molecule (SMILES key with a map value expected)")
        confs = []
        for j, c in enumerate(entry.get("conformers") or []):
            try:
                xyz = np.asarray(c["xyz"], dtype=np.float64)
            except (KeyError, TypeError, ValueError):
                raise ValueError(f"{where} conformer {j}: no 'xyz' list of [Z, x, y, z] rows") from None
            if xyz.ndim != 2 or xyz.shape[1] != 4 or not np.all(np.isfinite(xyz)):
                raise ValueError(f"{where} conformer {j}: 'xyz' is not a finite (n_atoms, 4) list of [Z, x, y, z]")
            try:
                els = tuple(table.GetElementSymbol(int(z)) for z in xyz[:, 0])
            except RuntimeError:
                raise ValueError(f"{where} conformer {j}: an atomic number is not an element") from None
            e = c.get("relativeenergy")
            if e is None and c.get("totalenergy") is not None:
                e = float(c["totalenergy"]) * _HARTREE_KCAL
            confs.append((els, xyz[:, 1:], float(e) if e is not None else float("nan")))
        if not confs:
            skipped["no_conformers"] += 1
            continue
        try:
            prepare(smiles)
        except ValueError:
            skipped["smiles"] += 1
            continue
        try:
            out.append(_ensemble(smiles, confs, where, max_confs))
        except ValueError:
            skipped["connectivity"] += 1
    return out, skipped


def read_sdf_ensembles(path: str | os.PathLike[str], *, max_molecules: int | None = None,
                       max_confs: int | None = None) -> tuple[list[Ensemble], dict[str, int]]:
    """Reference ensembles from an SDF file of conformers (consecutive records of one molecule form its
    ensemble), and a count of the molecules skipped and why. A record RDKit cannot read, or a file without any,
    is a ``ValueError`` naming the file and the record."""
    _limits(max_molecules, max_confs)
    from rdkit import Chem  # noqa: PLC0415

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such SDF file")
    out: list[Ensemble] = []
    skipped = {"smiles": 0, "connectivity": 0}
    groups: list[tuple[str, list]] = []
    n_records = 0

    def flush() -> None:
        smiles, confs = groups.pop()
        where = f"{path} molecule {len(out) + sum(skipped.values()) + 1} {smiles!r}"
        try:
            prepare(smiles)
        except ValueError:
            skipped["smiles"] += 1
            return
        try:
            out.append(_ensemble(smiles, confs, where, max_confs))
        except ValueError:
            skipped["connectivity"] += 1

    with Chem.ForwardSDMolSupplier(str(path), removeHs=False, sanitize=True) as supplier:
        for i, mol in enumerate(supplier):
            n_records += 1
            if mol is None or mol.GetNumConformers() == 0:
                raise ValueError(f"{path} record {i + 1}: RDKit cannot read it as a molecule with coordinates")
            smiles = Chem.MolToSmiles(Chem.RemoveHs(mol))
            energy = float("nan")
            for key in ("relativeenergy", "energy"):
                if mol.HasProp(key):
                    try:
                        energy = float(mol.GetProp(key))
                    except ValueError:
                        raise ValueError(f"{path} record {i + 1}: property {key} {mol.GetProp(key)!r} is not a "
                                         "number") from None
                    break
            conf = (tuple(a.GetSymbol() for a in mol.GetAtoms()), mol.GetConformer().GetPositions(), energy)
            if groups and groups[-1][0] == smiles:
                groups[-1][1].append(conf)
                continue
            if groups:
                flush()
                if max_molecules is not None and len(out) >= max_molecules:
                    break
            groups.append((smiles, [conf]))
    if n_records == 0:
        raise ValueError(f"{path}: no SDF records")
    if groups and (max_molecules is None or len(out) < max_molecules):
        flush()
    return out, skipped
