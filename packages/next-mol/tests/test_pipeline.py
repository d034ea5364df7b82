"""End to end with tiny models: LM molecules -> DMT conformers -> SDF, checkpoints round trip."""

import numpy as np
import pytest
import torch

from iclr25.next_mol import (
    generate_smiles,
    load_dmt,
    load_lm,
    make_dmt,
    predict_conformers,
    save_dmt,
    save_lm,
    write_sdf,
)
from iclr25.next_mol.data import load_moses
from iclr25.next_mol.experiments import fit_lm


@pytest.fixture(scope="module")
def tiny_lm():
    return fit_lm("selfies", load_moses("train", 200, seed=1), steps=10, d_model=32, n_layers=1, n_heads=2,
                  batch_size=16, lr=3e-3)


def test_generate_then_conformers_then_sdf(tmp_path, tiny_lm):
    from rdkit import Chem

    smiles = generate_smiles(tiny_lm.model, tiny_lm.tokenizer, 4, seed=0, unique=True)
    assert len(set(smiles)) == 4 and all(Chem.MolFromSmiles(s) is not None for s in smiles)
    dmt = make_dmt(hidden=16, pair_hidden=8, n_blocks=1, n_heads=2, pos_std=1.5)
    sets = predict_conformers(dmt, ["C[C@@H](N)C(=O)O", "CCO"], 3, steps=4, sampler="ddim", seed=0)
    assert [s.coords.shape for s in sets] == [(3, 6, 3), (3, 3, 3)]
    assert sets[0].stereo_ok.dtype == bool and sets[1].stereo_ok.all()   # no stereo: trivially fine
    path = write_sdf(tmp_path / "out.sdf", sets)
    mols = [m for m in Chem.SDMolSupplier(str(path))]
    assert len(mols) == 6 and mols[0].GetProp("smiles") == "C[C@@H](N)C(=O)O"
    np.testing.assert_allclose(mols[4].GetConformer().GetPositions(), sets[1].coords[1], atol=1e-3)
    # every conformer is marked with both checks (an untrained 1-block DMT at 4 steps gives garbage: marked 0)
    assert all(m.HasProp("sane") and m.HasProp("bonds_from_3d") for m in mols)
    assert [int(m.GetProp("bonds_from_3d")) for m in mols] == [int(x) for s in sets for x in s.graph_ok]
    assert [int(m.GetProp("sane")) for m in mols] == [int(x) for s in sets for x in s.sane]
    assert [m.GetProp("sanity") == "ok" for m in mols] == [bool(x) for s in sets for x in s.sane]


def test_checkpoints_round_trip(tmp_path, tiny_lm):
    p = save_lm(tmp_path / "lm.pt", tiny_lm.model, tiny_lm.tokenizer)
    lm, tok = load_lm(p)
    assert tok.vocab == tiny_lm.tokenizer.vocab
    ids = torch.as_tensor(tok.batch(["[C][O]"]))
    assert torch.equal(lm(ids), tiny_lm.model(ids))
    dmt = make_dmt(hidden=16, pair_hidden=8, n_blocks=1, n_heads=2, pos_std=1.5, lm_dim=4)
    assert load_dmt(save_dmt(tmp_path / "d.pt", dmt)).config == dmt.config


def test_cli_generate_and_conformers_with_checkpoints(tmp_path, tiny_lm):
    from rdkit import Chem

    from iclr25.next_mol.cli import main

    lm = save_lm(tmp_path / "lm.pt", tiny_lm.model, tiny_lm.tokenizer)
    dmt = save_dmt(tmp_path / "dmt.pt", make_dmt(hidden=16, pair_hidden=8, n_blocks=1, n_heads=2, pos_std=1.5))
    out = tmp_path / "mols.sdf"
    assert main(["generate", "--n", "3", "--lm", str(lm), "--dmt", str(dmt), "--steps", "3", "--out", str(out)]) == 0
    assert len([m for m in Chem.SDMolSupplier(str(out))]) == 3
    src = tmp_path / "in.smi"
    src.write_text("CCO ethanol\nc1ccccc1O phenol\n")
    out2 = tmp_path / "confs.sdf"
    assert main(["conformers", str(src), "--k", "2", "--dmt", str(dmt), "--steps", "3", "--sampler", "ddim",
                 "--out", str(out2)]) == 0
    mols = [m for m in Chem.SDMolSupplier(str(out2))]
    assert [m.GetProp("smiles") for m in mols] == ["CCO", "CCO", "Oc1ccccc1", "Oc1ccccc1"]
