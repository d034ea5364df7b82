"""Bad input: clear errors that name the item, the argument or the file (issue 18, point 4)."""

from pathlib import Path

import numpy as np
import pytest
import torch

from iclr25.next_mol import (
    EnsembleSettings,
    SelfiesTokenizer,
    cov_mat_from_rmsd,
    load_dmt,
    load_moses,
    make_dmt,
    prepare,
    prepare_many,
    reference_ensemble,
    reference_ensembles,
    sample_conformers,
    save_dmt,
    token_atom_map,
    train_dmt,
)
from iclr25.next_mol.cli import main


@pytest.mark.parametrize("bad", ["C1CC", "not a molecule", "c1ccccc", "C(C)(C)(C)(C)C"])
def test_invalid_smiles_names_the_item(bad):
    with pytest.raises(ValueError, match=r"smiles\[1\].*is not a valid SMILES"):
        prepare_many(["CCO", bad])


def test_empty_and_wrongly_typed_sets():
    with pytest.raises(ValueError, match="empty"):
        prepare_many([])
    with pytest.raises(TypeError, match="not one string"):
        prepare_many("CCO")
    with pytest.raises(ValueError, match="empty"):
        reference_ensembles([])
    with pytest.raises(ValueError, match="empty SMILES"):
        prepare("  ")
    with pytest.raises(ValueError, match="fragments"):
        prepare("CCO.Cl")


def test_invalid_selfies_names_the_string():
    with pytest.raises(ValueError, match=r"selfies '\[C\]\[Xx' is not a valid SELFIES"):
        token_atom_map("[C][Xx")
    with pytest.raises(ValueError, match="not a SELFIES string"):
        SelfiesTokenizer().fit(["[C][O]", "CCO"])
    tok = SelfiesTokenizer().fit(["[C][O]"])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        tok.encode("[C][N]")


def test_molecule_rdkit_cannot_embed_is_named():
    with pytest.raises(ValueError, match=r"C1#CC1.*could not embed"):
        reference_ensemble("C1#CC1", EnsembleSettings(n_embed=2))
    with pytest.raises(ValueError, match=r"smiles\[1\].*could not embed"):
        reference_ensembles(["CCO", "C1#CC1"], EnsembleSettings(n_embed=2), cache_dir=False)
    kept = reference_ensembles(["CCO", "C1#CC1"], EnsembleSettings(n_embed=2), cache_dir=False, skip_failed=True)
    assert len(kept) == 1


def test_impossible_parameters():
    with pytest.raises(ValueError, match="n_embed"):
        EnsembleSettings(n_embed=0)
    with pytest.raises(ValueError, match="delta"):
        cov_mat_from_rmsd(np.ones((2, 2)), delta=0)
    with pytest.raises(ValueError, match="non-empty"):
        cov_mat_from_rmsd(np.ones((0, 2)))
    with pytest.raises(ValueError, match="finite"):
        cov_mat_from_rmsd(np.array([[np.nan]]))
    with pytest.raises(ValueError, match="split"):
        load_moses("valid")
    with pytest.raises(ValueError, match="n=999999"):
        load_moses("test", 999999)
    dmt = make_dmt(hidden=16, pair_hidden=8, n_blocks=1, n_heads=2)
    with pytest.raises(ValueError, match="sampler"):
        sample_conformers(dmt, [], 2, sampler="euler")
    with pytest.raises(ValueError, match="steps"):
        sample_conformers(dmt, [], 2, steps=0)
    with pytest.raises(ValueError, match="reference conformers"):
        train_dmt(dmt, [], steps=1)


def test_checkpoint_errors_name_the_file(tmp_path):
    dmt = make_dmt(hidden=16, pair_hidden=8, n_blocks=1, n_heads=2)
    p = save_dmt(tmp_path / "d.pt", dmt)
    assert torch.equal(load_dmt(p).head.weight, dmt.head.weight)
    garbage = tmp_path / "g.pt"
    garbage.write_bytes(b"\x00garbage")
    with pytest.raises(ValueError, match="g.pt: not a readable torch checkpoint"):
        load_dmt(garbage)
    with pytest.raises(FileNotFoundError, match="missing.pt"):
        load_dmt(tmp_path / "missing.pt")
    torch.save({"format": "iclr25-next-mol/1", "kind": "lm"}, tmp_path / "lm.pt")
    with pytest.raises(ValueError, match="expected a 'dmt'"):
        load_dmt(tmp_path / "lm.pt")
    payload = torch.load(p, weights_only=True)
    del payload["state_dict"]["head.weight"]
    torch.save(payload, tmp_path / "partial.pt")
    with pytest.raises(ValueError, match="partial.pt: weights do not fit.*head.weight"):
        load_dmt(tmp_path / "partial.pt")


@pytest.mark.parametrize("content", [None, "", "\x00\x01garbage\n", "CCO\nC1CC\n"])
def test_conformers_command_rejects_bad_files(tmp_path, capsys, content):
    src = tmp_path / "in.smi"
    if content is not None:
        src.write_text(content)
    out = tmp_path / "out.sdf"
    rc = main(["conformers", str(src), "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "in.smi" in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == (["in.smi"] if content is not None else [])


def test_cli_rejects_bad_flags(tmp_path, capsys):
    src = tmp_path / "in.smi"
    src.write_text("CCO\n")
    assert main(["conformers", str(src), "--out", str(tmp_path / "x.txt")]) == 2
    assert "--out" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["conformers", str(src), "--k", "0", "--out", str(tmp_path / "x.sdf")])
    assert "--k must be an integer >= 1" in capsys.readouterr().err
    assert main(["generate", "--n", "2", "--lm", str(tmp_path / "nope.pt"), "--out", str(tmp_path / "m.sdf")]) == 2
    assert "--lm" in capsys.readouterr().err
    assert not any(Path(tmp_path).glob("*.sdf"))


# --------------------------------------------------------------------------- issue 40 / 43: guards, help, names
def test_de_novo_metrics_counts_only_real_molecules():
    from iclr25.next_mol import de_novo_metrics

    assert de_novo_metrics(["C1CC"]).validity == 0.0            # an unclosed ring is not a molecule
    m = de_novo_metrics(["CCO", "OCC", "C1CC", None, "", "not a molecule"])
    assert m.validity == pytest.approx(2 / 6)
    assert m.uniqueness == pytest.approx(0.5)                   # "CCO" and "OCC" are one molecule
    assert de_novo_metrics(["OCC"], train=["CCO"]).novelty == 0.0
    with pytest.raises(TypeError, match="list of SMILES"):
        de_novo_metrics("CCO")
    with pytest.raises(TypeError, match=r"generated\[1\]"):
        de_novo_metrics(["CCO", 3])


def test_huge_k_is_refused_before_any_work(tmp_path, capsys):
    import time

    src = tmp_path / "in.smi"
    src.write_text("CCO\n")
    t0 = time.perf_counter()
    for argv in (["conformers", str(src), "--k", "1000000000000", "--out", str(tmp_path / "c.sdf")],
                 ["generate", "--n", "1000000000000", "--out", str(tmp_path / "g.sdf")],
                 ["train", "--dmt-steps", "1000000000000", "--out", str(tmp_path / "m")]):
        capsys.readouterr()
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "1000000000000" in err[0] and "--force" in err[0], err
    assert time.perf_counter() - t0 < 10
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.smi"]


def test_help_states_the_true_default_of_k(capsys):
    import argparse

    from iclr25.next_mol import cli

    for cmd, k in (("generate", 1), ("conformers", 10)):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert f"conformers per molecule (default: {k})" in text
    parser = argparse.ArgumentParser()
    cli._sampling(parser, 7)
    assert parser.parse_args([]).k == 7


def test_messages_name_what_the_user_gave_not_internals(tmp_path, capsys):
    bad_csv = tmp_path / "in.csv"
    bad_csv.write_text("name,mol\na,CCO\n")
    assert main(["conformers", str(bad_csv), "--out", str(tmp_path / "o.sdf")]) == 2
    err = capsys.readouterr().err
    assert "column=" not in err and "'smiles'" in err
    smi = tmp_path / "in.smi"
    smi.write_text("CCO\nC1CC\n")
    assert main(["conformers", str(smi), "--out", str(tmp_path / "o.sdf")]) == 2
    err = capsys.readouterr().err
    assert "smiles[" not in err and "molecule 2 'C1CC'" in err


def test_existing_sdf_is_not_replaced_without_overwrite(tmp_path, capsys):
    src = tmp_path / "in.smi"
    src.write_text("CCO\n")
    out = tmp_path / "o.sdf"
    out.write_text("mine")
    assert main(["conformers", str(src), "--out", str(out)]) == 2
    assert "--out" in capsys.readouterr().err and out.read_text() == "mine"


def test_shipped_checkpoint_loads_without_pickle(tmp_path):
    from iclr25.next_mol.shipped import load_dmt_npz, load_shipped_dmt, save_dmt_npz

    dmt, meta = load_shipped_dmt()
    assert meta["seed"] == 0 and "python -m iclr25.next_mol.shipped" in meta["command"]
    p = save_dmt_npz(tmp_path / "d.npz", dmt, meta={"x": 1})
    again, m2 = load_dmt_npz(p)
    assert m2 == {"x": 1}
    for (k, a), (_, b) in zip(dmt.state_dict().items(), again.state_dict().items()):
        assert torch.equal(a, b), k
    np.savez(tmp_path / "bad.npz", obj=np.array([object()], dtype=object))
    with pytest.raises(ValueError, match="bad.npz"):
        load_dmt_npz(tmp_path / "bad.npz")


def test_shipped_claims_sit_beside_the_checkpoint_and_match_claims_json():
    """``data/dmt_mini_claims.json`` holds the claims of the committed ``claims.json`` measured on the shipped
    checkpoint, with the command and seed that trained it."""
    import json
    from importlib import resources
    from pathlib import Path

    from iclr25.next_mol.shipped import SHIPPED_CLAIMS, load_shipped_dmt

    beside = json.loads((resources.files("iclr25.next_mol") / "data" / "dmt_mini_claims.json").read_text())
    _, meta = load_shipped_dmt()
    assert beside["checkpoint"]["command"] == meta["command"] and beside["checkpoint"]["seed"] == meta["seed"]
    assert "iclr25 next-mol repro" in beside["command"] and beside["rung"] == "repro"
    repro = json.loads((Path(__file__).resolve().parents[1] / "claims.json").read_text())
    assert beside["created"] == repro["created"]
    by_id = {c["id"]: c for c in repro["claims"]}
    assert sorted(c["id"] for c in beside["claims"]) == sorted(SHIPPED_CLAIMS)
    for c in beside["claims"]:
        assert c == by_id[c["id"]]
