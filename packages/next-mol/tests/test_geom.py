"""GEOM's conformer ensembles (issue 63): a msgpack file and a multi-conformer SDF, written here in exactly GEOM's
layout (``{SMILES: {"conformers": [{"xyz": [[Z, x, y, z], ...], "relativeenergy": ...}]}}`` maps streamed one
after another; SDF records of one molecule in a row) from the QM9 slice's DFT geometries, atoms shuffled."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from iclr25.next_mol.geom import read_geom_msgpack, read_sdf_ensembles
from iclr25.next_mol.qm9 import qm9_ensembles, read_qm9_csv

SLICE = Path(__file__).parent / "data" / "qm9_slice.csv"
Z = {"H": 1, "C": 6, "N": 7, "O": 8, "F": 9}


def _records():
    recs = [r for r in read_qm9_csv(SLICE) if r.n_heavy >= 2]
    want = {e.molecule.smiles: e.coords[0] for e in qm9_ensembles(recs)[0]}
    return recs, want


def _conformers(r, rng):
    """Two conformers of ``r`` in a shuffled atom order: the DFT one (energy 0.0) and a rigidly moved copy
    listed first with energy 1.5 (the reader puts the lowest first)."""
    perm = rng.permutation(len(r.elements))
    els, X = [r.elements[i] for i in perm], r.coords[perm]
    R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    return [(els, X @ R.T + 2.0, 1.5), (els, X, 0.0)]


def _same(e, want, tol) -> None:
    """The lowest conformer is the DFT geometry in the molecule's atom order (up to its symmetries: the RMSD is
    symmetry-aware; but-1-yne has none, so its atoms must be exactly where the QM9 reader puts them)."""
    from iclr25.next_mol.metrics import rmsd_matrix

    ref = want[e.molecule.smiles]
    assert rmsd_matrix(e.molecule.mol, ref[None], e.coords[:1])[0, 0] < tol
    if e.molecule.smiles == "C#CCC":
        np.testing.assert_allclose(e.coords[0], ref, atol=tol)


def test_geom_msgpack_ensembles(tmp_path: Path) -> None:
    msgpack = pytest.importorskip("msgpack")
    recs, want = _records()
    rng = np.random.default_rng(0)
    maps = [{}, {}]
    for i, r in enumerate(recs):
        maps[i % 2][r.smiles] = {"charge": 0, "totalconfs": 2, "conformers": [
            {"geom_id": 10 * i + j, "xyz": [[Z[e], *map(float, p)] for e, p in zip(els, X)], "relativeenergy": en,
             "boltzmannweight": 0.5} for j, (els, X, en) in enumerate(_conformers(r, rng))]}
    maps[0]["O=O"] = {"conformers": []}
    path = tmp_path / "qm9_crude.msgpack"
    path.write_bytes(b"".join(msgpack.packb(m) for m in maps))
    ens, skipped = read_geom_msgpack(path)
    assert skipped == {"no_conformers": 1, "smiles": 0, "connectivity": 0}
    assert sorted(e.molecule.smiles for e in ens) == sorted(want)
    for e in ens:
        assert e.coords.shape == (2, e.molecule.n_atoms, 3) and e.energies.tolist() == [0.0, 1.5]
        _same(e, want, 1e-6)
        D = [np.linalg.norm(c[:, None] - c[None], axis=-1) for c in e.coords]
        np.testing.assert_allclose(D[0], D[1], atol=1e-9)  # the moved copy: same shape, same atom order
    assert len(read_geom_msgpack(path, max_molecules=2, max_confs=1)[0]) == 2
    assert read_geom_msgpack(path, max_confs=1)[0][0].coords.shape[0] == 1
    bad = tmp_path / "bad.msgpack"
    bad.write_bytes(msgpack.packb([1, 2, 3]))
    with pytest.raises(ValueError, match="bad.msgpack: not a GEOM msgpack file"):
        read_geom_msgpack(bad)
    bad.write_bytes(msgpack.packb({"CC": {"conformers": [{"xyz": [[6, 0.0, 0.0]]}]}}))
    with pytest.raises(ValueError, match=r"bad.msgpack molecule 1 'CC' conformer 0: 'xyz' is not a finite"):
        read_geom_msgpack(bad)
    bad.write_bytes(b"\xc1\xc1\xc1")
    with pytest.raises(ValueError, match="bad.msgpack: not a readable GEOM msgpack file"):
        read_geom_msgpack(bad)
    with pytest.raises(ValueError, match="max_confs"):
        read_geom_msgpack(path, max_confs=0)


def test_sdf_ensembles(tmp_path: Path) -> None:
    from rdkit import Chem
    from rdkit.Chem import rdDetermineBonds
    from rdkit.Geometry import Point3D

    recs, want = _records()
    rng = np.random.default_rng(1)
    path = tmp_path / "ensembles.sdf"
    with Chem.SDWriter(str(path)) as w:
        for r in recs:
            for els, X, en in _conformers(r, rng):
                m = Chem.RWMol()
                for e in els:
                    m.AddAtom(Chem.Atom(e))
                conf = Chem.Conformer(len(els))
                for i, p in enumerate(X):
                    conf.SetAtomPosition(i, Point3D(*map(float, p)))
                m.AddConformer(conf, assignId=True)
                rdDetermineBonds.DetermineBonds(m, charge=0)
                m = m.GetMol()
                m.SetProp("energy", str(en))
                w.write(m)
    ens, skipped = read_sdf_ensembles(path)
    assert skipped == {"smiles": 0, "connectivity": 0}
    assert sorted(e.molecule.smiles for e in ens) == sorted(want)
    for e in ens:
        assert e.coords.shape[0] == 2 and e.energies.tolist() == [0.0, 1.5]
        _same(e, want, 1e-3)  # SDF keeps 4 decimals
    assert [e.molecule.smiles for e in read_sdf_ensembles(path, max_molecules=2)[0]] == \
        [e.molecule.smiles for e in ens[:2]]
    bad = tmp_path / "bad.sdf"
    bad.write_text("not a molecule\n$$$$\n")
    with pytest.raises(ValueError, match="bad.sdf record 1: RDKit cannot read it"):
        read_sdf_ensembles(bad)
    with pytest.raises(ValueError, match="no such SDF file"):
        read_sdf_ensembles(tmp_path / "missing.sdf")
