"""AutoDock Vina docking (the ``docking`` extra) on a tiny receptor the test writes: receptor typing, the box, the
oracle's cache and CPU-time estimate, and the reward."""

import json
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


def test_t4_lysozyme_is_bundled():
    t = t4_lysozyme()
    assert t.receptor_pdb.is_file() and t.ligand.is_file() and "openmmtools" in t.source
    assert np.allclose(t.center, (42.32, 45.43, 18.17), atol=0.01)  # the bound p-xylene's centre
    assert min(t.size) >= 16.0


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
    assert oracle.score("OB(O)c1ccccc1") is None  # boron: no AutoDock type, refused by Vina
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


# ------------------------------------------------------------------------------------------- command line
@pytest.fixture(scope="module")
def cup(tmp_path_factory):
    """The cup receptor as a PDB, and a library of tiny blocks (amines and acids: amide couplings; small ligands
    dock in a fraction of a second)."""
    d = tmp_path_factory.mktemp("vina")
    _cup_pdb(d / "cup.pdb")
    (d / "blocks.smi").write_text("\n".join(["CN", "CCN", "CC(=O)O", "OC(=O)C1CC1", "CCOC(C)=O"]) + "\n")
    (d / "t.txt").write_text("amide [C;!$(C-[#7]):1](=[O:2])[OX2H1].[NX3;H2,H1;!$(N-C=[O,S,N]):3]>>[C:1](=[O:2])[N:3]\n")
    return d


def _vina_argv(cup, *extra):
    return ["--reward", "vina", "--receptor", str(cup / "cup.pdb"), "--center", "0,0,-1", "--box", "10,10,10",
            *extra]


def test_cli_train_and_sample_with_vina_and_its_cache(cup, tmp_path, capsys):
    pytest.importorskip("vina")
    pytest.importorskip("meeko")
    from iclr25.rxnflow.cli import main

    model, cache = tmp_path / "m", tmp_path / "scores.json"
    assert main(["train", "--blocks", str(cup / "blocks.smi"), "--templates", str(cup / "t.txt"), "--steps", "1",
                 "--batch-size", "3", "--min-sampling", "1", "--out", str(model),
                 *_vina_argv(cup, "--vina-cache", str(cache))]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("vina: about") and "CPU per oracle call" in first  # the estimate, before any docking
    res = json.loads((model / "results.json").read_text())
    per = {m["name"]: m["value"] for m in res["metrics"]}
    assert per["Vina oracle calls"] >= 1 and per["Vina CPU seconds per oracle call"] > 0
    scores = json.loads(cache.read_text())["scores"]
    assert scores and all(v is None or v < 0 for v in scores.values())  # small ligands in a hydrophobic cup
    with pytest.raises(ValueError, match="Vina reward"):  # the receptor is not saved with the model
        from iclr25.rxnflow import load_model

        load_model(model)
    smi = tmp_path / "s.smi"
    assert main(["sample", "--model", str(model), "--n", "3", "--out", str(smi),
                 *_vina_argv(cup, "--vina-cache", str(cache))]) == 0
    out = capsys.readouterr().out
    assert f"{len(scores)} cached scores" in out
    assert len(json.loads(cache.read_text())["scores"]) >= len(scores)
    assert main(["sample", "--model", str(model), "--n", "3", "--reward", "qed", "--out", str(tmp_path / "q.smi")]) == 0
    # a cache of another box is refused in one line naming the flag
    capsys.readouterr()
    assert main(["sample", "--model", str(model), "--n", "2", "--out", str(tmp_path / "x.smi"),
                 "--reward", "vina", "--receptor", str(cup / "cup.pdb"), "--center", "0,0,0", "--box", "10,10,10",
                 "--vina-cache", str(cache)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--vina-cache" in err[0]


@pytest.mark.parametrize("argv, flag", [
    (["--reward", "vina", "--center", "1,2"], "--center"),
    (["--reward", "vina", "--center", "1,nan,2"], "--center"),
    (["--reward", "vina", "--box", "10,0,10"], "--box"),
    (["--reward", "vina", "--exhaustiveness", "0"], "--exhaustiveness"),
    (["--exhaustiveness", "1000000000000"], "--exhaustiveness must be at most"),  # refused without vina too
    (["--reward", "vina", "--receptor", "{d}/none.pdb", "--center", "0,0,0"], "--receptor"),
    (["--reward", "vina", "--receptor", "{d}/blocks.smi", "--center", "0,0,0"], "--receptor"),
    (["--reward", "vina", "--receptor", "{d}/cup.pdb"], "--center"),
    (["--reward", "qed", "--receptor", "{d}/cup.pdb"], "--receptor"),
    (["--reward", "vina", "--vina-cache", "{d}"], "--vina-cache"),
    (["--reward", "vina", "--steps", "2000", "--batch-size", "64"], "--reward vina (128000 Vina calls)"),
])
def test_cli_vina_bad_input_is_one_line_naming_the_argument(cup, tmp_path, capsys, argv, flag):
    from iclr25.rxnflow.cli import main

    argv = [a.replace("{d}", str(cup)) for a in argv]
    out = tmp_path / "m"
    capsys.readouterr()
    try:
        rc = main(["train", "--blocks", str(cup / "blocks.smi"), "--templates", str(cup / "t.txt"), "--out", str(out),
                   *argv])
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1, err  # one line, no traceback
    except SystemExit as exc:  # refused by argparse (usage, then the one error line)
        rc, err = exc.code, capsys.readouterr().err.strip().splitlines()[-1:]
    assert rc == 2 and flag in err[0], err
    assert not out.exists()


def test_parse_reward_vina_says_what_it_needs():
    from iclr25.rxnflow import parse_reward

    with pytest.raises(ValueError, match="receptor"):
        parse_reward("vina")


# ------------------------------------------------------------------------ fragments and the docking claim
def test_brics_fragments_and_the_fragment_ga_respect_the_budget():
    from rdkit import Chem
    from rdkit.Chem import Crippen

    from iclr25.rxnflow.fragments import brics_fragments, cap, fragment_ga

    frags = brics_fragments(["CCOC(=O)c1ccccc1", "CN(C)c1ccc(F)cc1", "O=C(NC1CC1)c1ccncc1", "CCCCN"])
    assert frags and all("*" in f for f in frags)
    assert cap(Chem.MolFromSmiles("[16*]c1ccccc1")) == "c1ccccc1"
    calls = []

    def score(smi):
        calls.append(smi)
        return -Crippen.MolLogP(Chem.MolFromSmiles(smi))

    run = fragment_ga(frags, score, 25, seed=0, max_heavy=20)
    assert len(run.smiles) == len(set(run.smiles)) == len(calls) == 25
    assert all(Chem.MolFromSmiles(s).GetNumHeavyAtoms() <= 20 and "*" not in s for s in run.smiles)
    assert run.smiles == fragment_ga(frags, lambda s: -Crippen.MolLogP(Chem.MolFromSmiles(s)), 25, seed=0,
                                     max_heavy=20).smiles  # same seed, same molecules
    with pytest.raises(ValueError, match="budget"):
        fragment_ga(frags, score, 0)
    with pytest.raises(ValueError, match="BRICS"):
        brics_fragments(["C", "CC"])


def test_docking_comparison_runs_on_the_cup_at_equal_oracle_calls(cup):
    pytest.importorskip("vina")
    pytest.importorskip("meeko")
    from iclr25.rxnflow import SynthesisSpace, load_blocks, load_templates
    from iclr25.rxnflow.docking import Target
    from iclr25.rxnflow.pocket import docking_comparison

    target = Target("cup", cup / "cup.pdb", cup / "cup.pdb", (0.0, 0.0, -1.0), (10.0, 10.0, 10.0), "the test")
    space = SynthesisSpace(load_blocks(str(cup / "blocks.smi")), load_templates(str(cup / "t.txt")), max_len=2)
    c = docking_comparison(3, seed=0, target=target, space=space, rxnflow_kw={"batch_size": 2, "min_sampling": 1})
    assert set(c.runs) == {"RxnFlow", "random synthesis", "fragment GA"}
    assert all(len(r.smiles) == 3 for r in c.runs.values())  # equal oracle calls
    m = c.metrics()
    assert all(math.isfinite(v["top_k_vina"]) and v["top_k_vina"] < 0 for v in m.values())
    assert m["RxnFlow"]["replay"] == 1.0 and m["random synthesis"]["replay"] == 1.0  # routes replay in RDKit
    assert m["fragment GA"]["replay"] == 0.0  # no route
    assert 0 < len(c.cpu_per_call) <= 9 and all(t > 0 for t in c.cpu_per_call)  # shared cache: <= 3 x 3 dockings
