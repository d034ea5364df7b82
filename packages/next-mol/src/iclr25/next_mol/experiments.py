"""The experiments behind ``demo`` and ``repro``: 1D generation (SELFIES LM vs SMILES LM vs random tokens, FCD
against MOSES test) and 3D conformer prediction (DMT-mini vs untrained DMT vs RDKit ETKDG, aligned vs unaligned
loss, with and without the 1D-to-3D transfer).

Every function that trains or samples takes ``device=`` (``None``: ``$ICLR25_DEVICE``, else ``auto``), passed to
:mod:`.lm`, :mod:`.diffusion` and :mod:`.transfer`; RDKit (ETKDG, references, metrics) runs on the CPU."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .chem import canonical_smiles
from .conformers import Ensemble, EnsembleSettings, etkdg_conformers, reference_ensembles
from .data import load_moses
from .diffusion import Graph, graphs_of, make_dmt, pos_std_of, sample_conformers, train_dmt, validation_rmsd
from .dmt import DMT
from .lm import (
    CausalLM,
    LMConfig,
    decode_to_smiles,
    random_token_strings,
    sample_lm,
    to_selfies_corpus,
    train_lm,
)
from .metrics import CovMat, cov_mat_from_rmsd, de_novo_metrics, mean_cov_mat, rmsd_matrix, sanity
from .tokenizer import SelfiesTokenizer, SmilesTokenizer, Tokenizer

__all__ = ["LMRun", "fit_lm", "one_d_experiment", "ThreeDData", "three_d_data", "evaluate_conformers",
           "ConformerScores", "transfer_vs_control"]


# ------------------------------------------------------------------------------------------------------ 1D
@dataclasses.dataclass
class LMRun:
    """A trained LM, its tokenizer and training record."""

    kind: str
    model: CausalLM
    tokenizer: Tokenizer
    corpus: list[str]
    seconds: float
    final_loss: float


def fit_lm(kind: str, smiles: Sequence[str], *, steps: int, d_model: int = 128, n_layers: int = 2, n_heads: int = 4,
           batch_size: int = 64, lr: float = 1e-3, seed: int = 0, extra_vocab: Sequence[str] = (),
           corpus: Sequence[str] | None = None, model: CausalLM | None = None, device=None, **train_kw: Any
           ) -> LMRun:
    """Train a SELFIES (``kind="selfies"``) or SMILES LM on ``smiles`` for ``steps`` steps (``extra_vocab``:
    strings whose tokens join the vocabulary without being trained on; ``train_kw`` go to :func:`train_lm`)."""
    if corpus is None:
        corpus = to_selfies_corpus(smiles) if kind == "selfies" else [canonical_smiles(s) for s in smiles]
    tok = (SelfiesTokenizer() if kind == "selfies" else SmilesTokenizer()).fit(list(corpus) + list(extra_vocab))
    max_len = max(len(tok.split(s)) for s in list(corpus) + list(extra_vocab)) + 2
    if model is None:
        torch.manual_seed(seed)
        model = CausalLM(LMConfig(tok.size, d_model=d_model, n_layers=n_layers, n_heads=n_heads, max_len=max_len))
    res = train_lm(model, tok, corpus, steps=steps, batch_size=batch_size, lr=lr, seed=seed, desc=f"{kind} LM",
                   device=device, **train_kw)
    return LMRun(kind, model, tok, list(corpus), res.seconds, res.final_loss)


def one_d_experiment(lm: LMRun, n: int, *, train: Sequence[str], reference: Sequence[str], seed: int = 0,
                     temperature: float = 1.0, device=None) -> dict[str, Any]:
    """Sample ``n`` molecules and score them (validity, uniqueness, novelty, FCD against ``reference``)."""
    t0 = time.perf_counter()
    strings = sample_lm(lm.model, lm.tokenizer, n, temperature=temperature, seed=seed, device=device)
    t_sample = time.perf_counter() - t0
    smiles = decode_to_smiles(strings, lm.kind)
    m = de_novo_metrics(smiles, train=train, reference=reference)
    return {"validity": m.validity, "uniqueness": m.uniqueness, "novelty": m.novelty, "fcd": m.fcd,
            "sample_s": t_sample, "smiles": smiles}


def random_baseline(tokenizer: Tokenizer, corpus: Sequence[str], n: int, *, train: Sequence[str],
                    reference: Sequence[str], seed: int = 0) -> dict[str, Any]:
    """Scores of random-token strings of the corpus' lengths (see :func:`random_token_strings`)."""
    smiles = decode_to_smiles(random_token_strings(tokenizer, corpus, n, seed=seed), tokenizer.kind)
    m = de_novo_metrics(smiles, train=train, reference=reference)
    return {"validity": m.validity, "uniqueness": m.uniqueness, "novelty": m.novelty, "fcd": m.fcd}


# ------------------------------------------------------------------------------------------------------ 3D
@dataclasses.dataclass
class ThreeDData:
    """Training and test ensembles of the 3D experiment and their model inputs."""

    train: list[Ensemble]
    test: list[Ensemble]
    train_graphs: list[Graph]
    test_graphs: list[Graph]
    pos_std: float
    seconds: float


def three_d_data(n_train: int, n_test: int, *, max_heavy_atoms: int = 18, train_settings: EnsembleSettings,
                 test_settings: EnsembleSettings, seed: int = 0, n_jobs: int = 1) -> ThreeDData:
    """MOSES train/test molecules (disjoint splits of the benchmark) with pseudo-GEOM ensembles (cached)."""
    t0 = time.perf_counter()
    tr = reference_ensembles(load_moses("train", n_train, seed=seed + 11, max_heavy_atoms=max_heavy_atoms),
                             train_settings, seed=seed, n_jobs=n_jobs, skip_failed=True, desc="train ensembles")
    te = reference_ensembles(load_moses("test", n_test, seed=seed + 13, max_heavy_atoms=max_heavy_atoms),
                             test_settings, seed=seed, n_jobs=n_jobs, skip_failed=True, desc="test ensembles")
    return ThreeDData(tr, te, graphs_of(tr), graphs_of(te), pos_std_of(tr), time.perf_counter() - t0)


@dataclasses.dataclass(frozen=True)
class ConformerScores:
    """Mean (and median) COV/MAT over test molecules, sanity and time per conformer."""

    mean: CovMat
    median: CovMat
    fraction_sane: float
    bond_error: float
    seconds_per_conformer: float
    fraction_bonds_ok: float = float("nan")   # the two halves of "sane": bond lengths within bounds...
    fraction_no_clash: float = float("nan")   # ... and no non-bonded pair too close
    fraction_stereo_ok: float = float("nan")  # stereo perceived from 3D equals the input's (trivial without any)
    redrawn: int = 0                          # conformers redrawn by the stereo check


def _score(test: Sequence[Ensemble], generated: Sequence[np.ndarray], seconds: float, delta: float,
           redrawn: int = 0) -> ConformerScores:
    from .metrics import stereo_matches  # noqa: PLC0415

    vals, sane, err, bonds, clash, stereo = [], [], [], [], [], []
    for e, g in zip(test, generated, strict=True):
        vals.append(cov_mat_from_rmsd(rmsd_matrix(e.molecule.mol, e.coords, g), delta))
        s = sanity(e.molecule, g, e.coords[0])
        sane.append(s.sane)
        err.append(s.bond_error)
        bonds.append(s.bonds_ok)
        clash.append(s.no_clash)
        stereo.append(stereo_matches(e.molecule, g))
    mean, median = mean_cov_mat(vals)
    n_conf = sum(len(g) for g in generated)
    frac = [float(np.concatenate(x).mean()) for x in (sane, bonds, clash, stereo)]
    return ConformerScores(mean, median, frac[0], float(np.median(np.concatenate(err))), seconds / n_conf,
                           frac[1], frac[2], frac[3], redrawn)


def evaluate_conformers(source: DMT | str, data: ThreeDData, *, ratio: int = 2, steps: int = 50,
                        sampler: str = "ancestral", seed: int = 0, delta: float = 0.75,
                        graphs: Sequence[Graph] | None = None, stereo_rounds: int = 0,
                        ensembles: Sequence[Ensemble] | None = None, device=None
                        ) -> tuple[ConformerScores, list[np.ndarray]]:
    """``ratio x K`` conformers per test molecule from DMT (or ``"etkdg"`` / ``"etkdg+mmff"``), scored;
    ``stereo_rounds > 0`` runs DMT's stereo check (:func:`~iclr25.next_mol.pipeline.redraw_flipped`);
    ``ensembles`` replaces ``data.test`` (same molecules in another stereo form, for instance)."""
    test = list(ensembles) if ensembles is not None else data.test
    redrawn = 0
    t0 = time.perf_counter()
    if isinstance(source, str):
        gen = [etkdg_conformers(e.molecule, ratio * e.n_confs, mmff=source == "etkdg+mmff", seed=seed + 101)
               for e in test]
    else:
        graphs = list(graphs if graphs is not None else
                      (data.test_graphs if ensembles is None else graphs_of(test)))
        gen_all = sample_conformers(source, graphs, ratio * max(e.n_confs for e in test), steps=steps,
                                    sampler=sampler, seed=seed, batch_size=128, device=device)
        gen = [g[:ratio * e.n_confs] for g, e in zip(gen_all, test, strict=True)]
        if stereo_rounds:
            from .pipeline import redraw_flipped  # noqa: PLC0415

            gen, _, counts = redraw_flipped(source, [e.molecule for e in test], gen, rounds=stereo_rounds,
                                            steps=steps, sampler=sampler, seed=seed, graphs=graphs, batch_size=128,
                                            device=device)
            redrawn = sum(counts)
    return _score(test, gen, time.perf_counter() - t0, delta, redrawn), gen


def fit_dmt(data: ThreeDData, *, steps: int, aligned: bool = True, seed: int = 0, batch_size: int = 32,
            lr: float = 5e-4, model: DMT | None = None, callback=None, callback_steps=(),
            stop_after: int | None = None, device=None, **size: Any) -> tuple[DMT, dict[str, float]]:
    """Train (or continue training) DMT on the training ensembles, on ``device``; returns it with loss and
    validation RMSD."""
    if model is None:
        model = make_dmt(pos_std=data.pos_std, seed=seed, device=device, **size)
    res = train_dmt(model, data.train_graphs, steps=steps, batch_size=batch_size, lr=lr, aligned=aligned,
                    seed=seed, warmup=min(100, steps // 10 + 1), callback=callback, callback_steps=callback_steps,
                    stop_after=stop_after, device=device)
    return model, {"seconds": res.seconds, "final_loss": res.final_loss,
                   "val_rmsd": validation_rmsd(model, data.test_graphs, device=device)}


def transfer_vs_control(dmt: DMT, data: ThreeDData, lm: CausalLM, tokenizer: Tokenizer, *, steps: int,
                        batch_size: int, lr: float, seed: int = 0, sample_steps: int = 50, device=None,
                        ) -> dict[str, tuple[ConformerScores, float]]:
    """The 1D-to-3D transfer (the paper's stage 2: the LM and DMT's blocks frozen, the projector and DMT's
    node-input layer with its new LM columns trained ``steps`` steps) against its control, the same ``steps``
    of DMT alone from the same start (same seed, batches and learning-rate schedule).

    ``dmt`` is trained already; it ends as the control. Returns ``{"with LM features": (scores, val RMSD),
    "same steps, no LM": (scores, val RMSD)}`` on ``data``'s test molecules.
    """
    from .transfer import LMFeaturizer  # noqa: PLC0415

    molecules_tr = [e.molecule for e in data.train]
    molecules_te = [e.molecule for e in data.test]
    feat_tr = LMFeaturizer(lm, tokenizer, molecules_tr, seed=seed, device=device)
    feat_te = LMFeaturizer(lm, tokenizer, molecules_te, seed=seed, device=device)
    feat_te.projector = feat_tr.projector
    base_state = {k: v.clone() for k, v in dmt.state_dict().items()}
    with_lm = dmt.extend_lm_input(feat_tr.d_out)
    for p in with_lm.parameters():
        p.requires_grad_(False)
    with_lm.node_in.weight.requires_grad_(True)
    params = [with_lm.node_in.weight, *feat_tr.projector.parameters()]
    train_dmt(with_lm, data.train_graphs, steps=steps, batch_size=batch_size, lr=lr, seed=seed + 99,
              parameters=params, lm_features=feat_tr, warmup=10, desc="transfer", device=device)
    te_graphs = [Graph(g.atom_feats, g.pair_feats, g.coords, f) for g, f in
                 zip(data.test_graphs, feat_te.numpy(range(len(molecules_te))), strict=True)]
    s_tr, _ = evaluate_conformers(with_lm, data, steps=sample_steps, seed=seed, graphs=te_graphs, device=device)
    val_tr = validation_rmsd(with_lm, te_graphs, device=device)
    dmt.load_state_dict(base_state)
    for p in dmt.parameters():
        p.requires_grad_(True)
    train_dmt(dmt, data.train_graphs, steps=steps, batch_size=batch_size, lr=lr, seed=seed + 99, warmup=10,
              desc="same steps without LM", device=device)
    s_ctl, _ = evaluate_conformers(dmt, data, steps=sample_steps, seed=seed, device=device)
    val_ctl = validation_rmsd(dmt, data.test_graphs, device=device)
    return {"with LM features": (s_tr, val_tr), "same steps, no LM": (s_ctl, val_ctl)}
