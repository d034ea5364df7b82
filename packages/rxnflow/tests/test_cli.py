"""The command line on a user's own files: train, sample (with --add-blocks), doctor, and bad files."""

import json

import pytest

from iclr25.rxnflow.cli import main


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    from iclr25.rxnflow import toy_blocks

    d = tmp_path_factory.mktemp("cli")
    lib = toy_blocks(12, 18, seed=0)
    lib.save(d / "blocks.smi")
    (d / "t.txt").write_text("amide [C;!$(C-[#7]):1](=[O:2])[OX2H1].[NX3;H2,H1;!$(N-C=[O,S,N]):3]>>[C:1](=[O:2])[N:3]\n")
    (d / "new.smi").write_text("NCc1ccc(F)cc1F\nCNCc1ccccn1\n")
    return d


def test_train_sample_doctor_round_trip(files, tmp_path, capsys):
    out = tmp_path / "model"
    assert main(["train", "--blocks", str(files / "blocks.smi"), "--templates", str(files / "t.txt"),
                 "--reward", "qed", "--steps", "20", "--batch-size", "16", "--rho", "0.5", "--min-sampling", "3",
                 "--out", str(out)]) == 0
    assert {p.name for p in out.iterdir()} >= {"model.pt", "blocks.smi", "templates.txt", "results.json"}
    sdf = tmp_path / "mols.sdf"
    assert main(["sample", "--model", str(out), "--n", "30", "--add-blocks", str(files / "new.smi"),
                 "--out", str(sdf)]) == 0
    from rdkit import Chem

    mols = [m for m in Chem.SDMolSupplier(str(sdf))]
    assert len(mols) == 30
    from iclr25.rxnflow import verify_route

    assert all(m.GetProp("route_replays") == "True" for m in mols)
    assert all(verify_route(json.loads(m.GetProp("route"))) for m in mols)
    rep = tmp_path / "rep.json"
    assert main(["doctor", "--blocks", str(files / "blocks.smi"), "--templates", str(files / "t.txt"),
                 "--json", str(rep)]) == 0
    report = json.loads(rep.read_text())
    assert report["n_unique"] == 30 and not report["dead_templates"]
    assert report["templates"][0]["compatible"][1] == 18  # every amine fits the amine position
    assert "verdict" in capsys.readouterr().out


@pytest.mark.parametrize("content", [None, "", "not a smiles ((( \x00garbage\n"])
@pytest.mark.parametrize("which", ["train-blocks", "train-templates", "doctor", "sample-add"])
def test_bad_files_exit_2_with_one_line_and_write_nothing(files, tmp_path, capsys, content, which):
    bad = tmp_path / ("bad.txt" if which == "train-templates" else "bad.smi")
    if content is not None:
        bad.write_text(content)
    out = tmp_path / "out"
    argv = {"train-blocks": ["train", "--blocks", str(bad), "--templates", str(files / "t.txt"), "--out", str(out)],
            "train-templates": ["train", "--blocks", str(files / "blocks.smi"), "--templates", str(bad),
                                "--out", str(out)],
            "doctor": ["doctor", "--blocks", str(bad), "--json", str(out)],
            "sample-add": ["sample", "--model", str(tmp_path / "nomodel"), "--add-blocks", str(bad),
                           "--out", str(out) + ".sdf"]}[which]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(bad) in err[0], err
    assert {p.name for p in tmp_path.iterdir()} <= {bad.name}  # nothing written, no temp files
