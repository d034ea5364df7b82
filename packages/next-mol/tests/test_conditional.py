"""Property-conditioned generation (issue 63) on a QM9 CSV slice written here in qm9pack's format, the property
predictor, the conditional sampler, and the Frechet distance over 3D shape descriptors (the 3D-FCD stand-in)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
import torch

from iclr25.next_mol.conditional import PROPERTIES, conditional_experiment, fit_property_predictor
from iclr25.next_mol.lm import CausalLM, LMConfig, decode_to_smiles, sample_lm, train_lm
from iclr25.next_mol.metrics import SHAPE_FEATURES, frechet_3d, shape_descriptors
from iclr25.next_mol.qm9 import qm9_ensembles, read_qm9_csv
from iclr25.next_mol.tokenizer import SelfiesTokenizer

SLICE = Path(__file__).parent / "data" / "qm9_slice.csv"


def _write_slice(path: Path, copies: int = 4) -> Path:
    """qm9pack's header and the slice's rows, ``copies`` times with new indices and shifted polarizabilities."""
    with open(SLICE, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames, list(reader)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for k in range(copies):
            for row in rows:
                w.writerow({**row, "Index": str(int(row["Index"]) + 1000 * k),
                            "Polarizability_bohr3": str(float(row["Polarizability_bohr3"]) + 0.5 * k)})
    return path


def test_conditional_experiment_on_a_qm9_csv(tmp_path: Path) -> None:
    recs = read_qm9_csv(_write_slice(tmp_path / "qm9_part1.csv"))
    assert len(recs) == 32 and all("Polarizability_bohr3" in r.properties for r in recs)
    recipe = dict(n_predictor=12, n_generator=16, n_bins=3, steps=5, n_generate=8, d_model=16, n_layers=1,
                  fp_bits=64)
    res = conditional_experiment(recs, seed=0, recipe=recipe)
    assert res["validity"] == 1.0 and res["n_generator"] + res["n_generator_dropped_selfies"] == 16
    for k in ("mae_conditional", "mae_unconditional", "mae_l_bound", "mae_u_bound", "mae_n_atoms",
              "mae_nearest_training_molecule", "quantisation_mae"):
        assert np.isfinite(res[k]) and res[k] >= 0, k
    assert res["mae_conditional"] > 0 and res["unit"] == PROPERTIES["alpha"][2]
    # same seed, same numbers
    again = conditional_experiment(recs, seed=0, recipe=recipe)
    assert again["mae_conditional"] == res["mae_conditional"]
    with pytest.raises(ValueError, match="property must be one of"):
        conditional_experiment(recs, recipe={**recipe, "property": "U0"})
    with pytest.raises(ValueError, match="n_predictor \\+ n_generator = 40 is more than the 32"):
        conditional_experiment(recs, recipe={**recipe, "n_predictor": 24})


def test_property_predictor_learns_an_additive_property() -> None:
    smiles = ["C", "CC", "CCC", "CCCC", "CO", "CCO", "CCCO", "CN", "CCN", "OCCO", "NCCN", "CCCCC", "C1CC1", "C1CO1"]
    from rdkit import Chem

    # a property additive in the atoms: the ridge predictor must recover it far better than the mean does
    y = np.array([sum({"C": 2.0, "N": 3.0, "O": 1.0}[a.GetSymbol()] for a in Chem.MolFromSmiles(s).GetAtoms())
                  for s in smiles])
    pred = fit_property_predictor(smiles, y, l2=0.1, fp_bits=32).predict(smiles + ["not a molecule"])
    assert np.isnan(pred[-1])
    assert np.abs(pred[:-1] - y).mean() < 0.2 * np.abs(y - y.mean()).mean()
    with pytest.raises(ValueError, match="y must be a 1-D array"):
        fit_property_predictor(smiles, y[:-1])
    with pytest.raises(ValueError, match="y must be finite"):
        fit_property_predictor(smiles, np.where(np.arange(len(y)) == 0, np.nan, y))


def test_prefix_conditions_the_sampler() -> None:
    """Trained on "[CondA] carbon chains" and "[CondB] oxygen", the LM follows the prefix; the condition tokens
    never come out of the sampler and are not part of the returned strings."""
    corpus = ["[CondA][C][C][C]", "[CondA][C][C]", "[CondB][O]", "[CondB][O][O]"] * 8
    tok = SelfiesTokenizer().fit(corpus)
    torch.manual_seed(0)
    model = CausalLM(LMConfig(tok.size, d_model=16, n_layers=1, n_heads=2, max_len=8))
    train_lm(model, tok, corpus, steps=80, batch_size=16, lr=1e-2, warmup=5, seed=0)
    a, b = tok.vocab.index("[CondA]"), tok.vocab.index("[CondB]")
    prefix = np.array([[a]] * 10 + [[b]] * 10)
    out = sample_lm(model, tok, 20, prefix=prefix, banned=[a, b], seed=0)
    assert not any("Cond" in s for s in out)
    assert sum("[C]" in s for s in out[:10]) >= 8 and sum("[O]" in s for s in out[10:]) >= 8
    assert all(s is not None for s in decode_to_smiles(out, "selfies"))
    with pytest.raises(ValueError, match="prefix must be an integer array"):
        sample_lm(model, tok, 3, prefix=prefix)
    with pytest.raises(ValueError, match="prefix ids must be non-special"):
        sample_lm(model, tok, 2, prefix=np.array([[0], [0]]))


def test_frechet_3d_of_shape_descriptors() -> None:
    ens, _ = qm9_ensembles(read_qm9_csv(SLICE))
    mols, refs = [e.molecule for e in ens], [e.coords for e in ens]
    d = shape_descriptors(mols[-1], refs[-1])
    assert d.shape == (1, len(SHAPE_FEATURES)) and np.all(np.isfinite(d))
    rng = np.random.default_rng(0)
    assert frechet_3d(mols, refs, refs) < 1e-6
    small, big = ([r + rng.normal(0, s, r.shape) for r in refs] for s in (0.05, 0.3))
    assert 0 < frechet_3d(mols, refs, small) < frechet_3d(mols, refs, big)
    with pytest.raises(ValueError, match="coords must be"):
        shape_descriptors(mols[-1], np.zeros((1, 2, 3)))
    with pytest.raises(ValueError, match="one length each"):
        frechet_3d(mols, refs[:-1], refs)
