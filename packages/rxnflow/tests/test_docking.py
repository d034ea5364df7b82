"""AutoDock Vina docking (the ``docking`` extra) on a tiny receptor the test writes: receptor typing, the box, the
oracle's cache and CPU-time estimate, and the reward."""

import importlib.metadata
import math

import numpy as np
import pytest

from iclr25.rxnflow.docking import ligand_box, receptor_pdbqt, t4_lysozyme


def _pdb_line(serial, name, res, resseq, xyz, element):
    name = name if len(name) == 4 else f" {name:<3s}"
    return (f"ATOM  {serial:5d} {name} {res:>3s} A{resseq:4d}    {xyz[0]:8.3f}{xyz[1]:8.3f}{xyz[2]:8.3f}"
            f"  1.00  0.00          {element:>2s}")


def _cup_pdb(path):
    """A hydrophobic cup around the origin: 48 leucine side-chain carbons on a hemisphere of radius 5 A (and below
    it), one serine hydroxyl with its hydrogen, one methyl hydrogen (dropped in the PDBQT)."""
    lines, k = [], 0
    for i, theta in enumerate(np.linspace(0.35, 1.75, 6)):
        for j, phi in enumerate(np.linspace(0, 2 * np.pi, 8, endpoint=False)):
            k += 1
            xyz = 5.0 * np.array([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), -np.cos(theta)])
            lines.append(_pdb_line(k, "CD1", "LEU", 10 * i + j + 1, xyz, "C"))
    lines.append(_pdb_line(k + 1, "OG", "SER", 99, (0.0, 5.2, 1.5), "O"))
    lines.append(_pdb_line(k + 2, "HG", "SER", 99, (0.0, 4.4, 2.0), "H"))
    lines.append(_pdb_line(k + 3, "HD11", "LEU", 1, (1.0, 1.0, -5.8), "H"))
    path.write_text("\n".join(lines) + "\nEND\n")
    return path


def test_receptor_atom_types(tmp_path):
    pdb = tmp_path / "r.pdb"
    rows = [("CG", "PHE", 1, (0, 0, 0), "C"), ("CB", "PHE", 1, (0, 1.5, 0), "C"), ("HB2", "PHE", 1, (0, 2.5, 0), "H"),
            ("ND1", "HIS", 2, (5, 0, 0), "N"), ("NE2", "HIS", 2, (7, 0, 0), "N"), ("HE2", "HIS", 2, (7.9, 0.4, 0), "H"),
            ("OG", "SER", 3, (0, 0, 6), "O"), ("HG", "SER", 3, (0, 0.9, 6.3), "H"), ("SD", "MET", 4, (9, 9, 9), "S"),
            ("O", "HOH", 5, (20, 20, 20), "O")]
    pdb.write_text("\n".join(_pdb_line(i + 1, *r) for i, r in enumerate(rows)) + "\n")
    out = receptor_pdbqt(pdb, tmp_path / "r.pdbqt")
    types = [(ln[12:16].strip(), ln[77:79].strip()) for ln in out.read_text().splitlines()]
    assert types == [("CG", "A"), ("CB", "C"), ("ND1", "NA"), ("NE2", "N"), ("HE2", "HD"), ("OG", "OA"),
                     ("HG", "HD"), ("SD", "SA")]  # the C-H hydrogen and the water are left out
    assert not list(tmp_path.glob(".*.tmp"))


def test_receptor_and_box_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="receptor"):
        receptor_pdbqt(tmp_path / "none.pdb", tmp_path / "r.pdbqt")
    empty = tmp_path / "e.pdb"
    empty.write_text("REMARK nothing\n")
    with pytest.raises(ValueError, match="no ATOM"):
        receptor_pdbqt(empty, tmp_path / "r.pdbqt")
    odd = tmp_path / "x.pdb"
    odd.write_text(_pdb_line(1, "XE", "XEN", 1, (0, 0, 0), "XE") + "\n")
    with pytest.raises(ValueError, match="cannot type"):
        receptor_pdbqt(odd, tmp_path / "r.pdbqt")
    with pytest.raises(ValueError, match="ligand: .* no ATOM"):
        ligand_box(empty)
    with pytest.raises(FileNotFoundError, match="ligand"):
        ligand_box(tmp_path / "none.mol2")


def test_box_around_a_bound_ligand(tmp_path):
    lig = tmp_path / "l.pdb"
    lig.write_text("\n".join([_pdb_line(1, "C1", "LIG", 1, (1, 2, 3), "C"), _pdb_line(2, "C2", "LIG", 1, (3, 2, 7), "C"),
                              _pdb_line(3, "H1", "LIG", 1, (30, 2, 7), "H")]) + "\n")
    center, size = ligand_box(lig, padding=5.0, min_size=12.0)
    assert center == (2.0, 2.0, 5.0) and size == (12.0, 12.0, 14.0)


def test_t4_lysozyme_missing_wheel_is_one_line(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(FileNotFoundError, match="openmmtools"):
        t4_lysozyme()


def test_vina_oracle_docks_caches_and_estimates(tmp_path):
    pytest.importorskip("vina")
    pytest.importorskip("meeko")
    from iclr25.rxnflow import VinaOracle, VinaReward, parse_reward

    rec = receptor_pdbqt(_cup_pdb(tmp_path / "cup.pdb"), tmp_path / "cup.pdbqt")
    oracle = VinaOracle(rec, (0.0, 0.0, -1.0), (10.0, 10.0, 10.0), exhaustiveness=1, seed=0)
    benzene, toluene = oracle.score("c1ccccc1"), oracle.score("Cc1ccccc1")
    assert math.isfinite(benzene) and math.isfinite(toluene)
    assert toluene < 0 and benzene < 0  # buried in a hydrophobic cup
    assert oracle.score("c1ccccc1") == benzene and len(oracle.cpu_per_call) == 2  # cached: no second docking
    assert oracle.score("not a smiles") is None
    assert all(t > 0 for t in oracle.cpu_per_call[:2]) and oracle.setup_cpu_s > 0
    assert oracle.estimate(100) == pytest.approx(100 * np.mean(oracle.cpu_per_call))
    again = VinaOracle(rec, (0.0, 0.0, -1.0), (10.0, 10.0, 10.0), exhaustiveness=1, seed=0)
    assert [again.score("c1ccccc1"), again.score("Cc1ccccc1")] == [benzene, toluene]  # same seed and order
    reward = parse_reward(VinaReward(str(rec), (0.0, 0.0, -1.0), (10.0, 10.0, 10.0), exhaustiveness=1))
    assert reward("Cc1ccccc1") == pytest.approx(-0.1 * toluene)
    with pytest.raises(ValueError, match="center and size"):
        VinaOracle(rec, (0.0, float("nan"), 0.0))
    with pytest.raises(ValueError, match="exhaustiveness"):
        VinaOracle(rec, (0.0, 0.0, 0.0), exhaustiveness=0)
    with pytest.raises(FileNotFoundError, match="PDBQT"):
        VinaOracle(tmp_path / "none.pdbqt", (0.0, 0.0, 0.0))
