"""NExT-Mol's claims as this package checks them (the federation's claims registry, :mod:`iclr25.utils.claims`).

Rungs: ``test`` (the default suite: tiny models trained for seconds, the shipped DMT-mini sampled on a few
held-out molecules) and ``repro`` (more molecules and the paper's 100 sampler steps). Each seed draws its own
molecules (except "dmt-learns" and "dmt-learns-mat-r", whose seeds share one small data set and draw the
initialisation, batches and noise), initialisation and sampling noise. "dmt-learns-mat-r" trains its tiny DMT in
the test itself (it never loads the shipped checkpoint). "lm-transfer-helps" (the 1D-to-3D transfer, expected to
fail at this scale) is decided at the ``repro`` rung only. Thresholds and margins come from the spread over
seeds 0-4 (see each claim's note).

Rung ``paper`` (seeds 0, 1, 2; for a GPU: ``iclr25 claims next-mol --rung paper --estimate``): the conformer claims
(DMT against RDKit ETKDG, and the 3D sanity checks beside them) with the paper's DMT-B (10 blocks, hidden 512, 8
heads) trained with the paper's optimiser on pseudo-GEOM ensembles of 10,000 MOSES molecules, instead of the
shipped DMT-mini. The device is ``$ICLR25_DEVICE`` (``iclr25 claims next-mol --device``), else ``auto``;
``--smoke`` runs the rung's code path for one training step.

Rung ``qm9`` (a side rung, seeds 0, 1, 2; calibration seeds 100-104; report ``docs/qm9/claims.json``): "DMT beats
ETKDG" against DFT geometries instead of ETKDG + MMFF pseudo-GEOM references. Per seed a DMT-mini (the shipped
checkpoint's architecture and optimiser, :data:`~iclr25.next_mol.qm9.QM9_RECIPE`) is trained 1,000 steps on the
DFT geometries of 2,000 QM9 molecules and scored on the DFT geometry of 40 held-out ones, against RDKit ETKDG and
ETKDG + MMFF94 (:func:`~iclr25.next_mol.qm9.qm9_experiment`). It needs the ``qm9`` extra (the ``qm9pack`` wheel);
without it the rung stops with one line saying so. Beside it, the extras hold the Frechet distance of 3D shape
descriptors to the DFT geometries (:func:`~iclr25.next_mol.metrics.frechet_3d`, the offline stand-in for 3D-FCD)
for DMT-mini, ETKDG and ETKDG + MMFF94.

Rung ``qm9-cond`` (a side rung, seeds 0, 1, 2; calibration seeds 100-104; report ``docs/qm9-cond/claims.json``;
the ``qm9`` extra): the main claim "qm9-conditional-alpha", the paper's QM9 conditional generation at reduced scale (:func:`~iclr25.next_mol.conditional.conditional_experiment`): a
SELFIES LM conditioned on a polarizability bin, scored by a ridge property predictor trained on a disjoint half.
"""

from __future__ import annotations

import functools

import numpy as np

from iclr25.utils.claims import Claim, ClaimRegistry, Measurement, RungCost, smoke_run
from iclr25.utils.device import default_device

__all__ = ["REGISTRY"]

REGISTRY = ClaimRegistry(
    "iclr25-next-mol", seeds={"test": (0, 1, 2), "repro": (0, 1, 2, 3, 4), "paper": (0, 1, 2), "qm9": (0, 1, 2),
                        "qm9-cond": (0, 1, 2)},
    # the qm9 side rung trains a DMT-mini per seed (~2 CPU-minutes): 5 calibration seeds
    calibration={"qm9": tuple(range(100, 105)), "qm9-cond": tuple(range(100, 105))},
    costs={"paper": RungCost(
        gpu_hours=4.5, memory_gb=20, hardware="one GPU with 24 GB or more (A100 or H100)",
        what="the conformer claims (DMT vs RDKit ETKDG, 3D sanity) with the paper's DMT-B (10 blocks, hidden 512, "
             "8 heads, dropout 0.1; pair width 128, which the paper note does not give; ~55 M parameters) trained "
             "with the paper's AdamW (lr 1e-4, weight decay 0.05, 1,000 warm-up steps, cosine to 1e-5) for 240,000 "
             "steps of 128 molecules (~3,000 epochs, the paper's count) on pseudo-GEOM ensembles (ETKDG + MMFF, up "
             "to 10 conformers) of 10,000 MOSES molecules of <= 27 heavy atoms; 2K conformers of 200 held-out "
             "molecules with the paper's 100-step ancestral sampler. Estimated, not measured on a GPU: ~12 GFLOP per "
             "molecule and step, 370 PFLOP at ~25 TFLOP/s in float32, plus ~3 CPU core-hours once for the reference "
             "ensembles (cached); about 2,000 CPU core-hours per seed with --force. The 1D-to-3D transfer claim is "
             "not at this rung (the paper's 960M MoLlama pretrained on 1.8B molecules is out of reach)",
        data="nothing to provide: the MOSES molecules ship in the wheel and their reference ensembles are built "
             "here (GEOM-DRUGS itself is not read by this package)")})

# set from the spread over seeds 0-4 at the test rung (see the notes)
MARGIN_ANGLE, NOTE_ANGLE = 5.0, ("margin 5 deg < max_margin 48.5 from calibration seeds 100-109 (3.1-5.3 deg vs "
                                 "54.9-63.7 deg untrained; claims-calibration.json)")
MARGIN_VALID, NOTE_VALID = 0.3, ("margin 0.3 < max_margin 0.80 from calibration seeds 100-109 (0.75-1.0 vs 0.0 "
                                 "untrained; claims-calibration.json)")

# set from the spread over seeds 0-4 (see the notes)
MARGIN_LEARN_MATR, NOTE_LEARN_MATR = 100.0, (
    "the test trains the DMT (hidden 32, 2 blocks) itself, 60 steps on 10 molecules, and samples 2K conformers "
    "(50 ancestral steps) of the 2 held-out molecules: MAT-R 8.2-38.3 A vs 258-358 A untrained at seeds 0-4 "
    "(60 steps are far from sane conformers, 0 % sane); margin 100 A < max_margin 178 A from calibration seeds "
    "100-109 (3.6-34.6 A vs 212-389 A untrained; claims-calibration.json)")
EXPECT_TRANSFER, NOTE_TRANSFER = "fails", (
    "not reproduced at CPU scale: repro rung, seeds 0-4 (tiny SELFIES LM d=64, 2 layers, 200 steps on 2,000 MOSES "
    "molecules; the dmt-learns DMT after 300 steps; 100 stage-2 steps vs 100 steps of DMT alone): 0.803-0.863 A "
    "with the LM vs 0.779-0.843 A without, worse at every seed (MAT-R 0.82-0.99 vs 0.83-0.99 A); the README's "
    "transfer ablation points at the LM's features (a tiny LM adds nothing DMT's graph inputs lack)")

_RUNG = {
    "test": {"lm_train": 300, "lm_steps": 40, "lm_d": 32, "n_sample": 60,
             "dmt_train": 10, "dmt_test": 2, "dmt_steps": 60, "n_embed": 3, "max_confs": 2,
             "transfer_steps": 30, "transfer_lm_steps": 40,
             "shipped_test": 4, "shipped_steps": 50, "n_embed_test": 12, "test_confs": 3},
    "repro": {"lm_train": 2000, "lm_steps": 200, "lm_d": 64, "n_sample": 500,
              "dmt_train": 48, "dmt_test": 6, "dmt_steps": 300, "n_embed": 8, "max_confs": 3,
              "transfer_steps": 100, "transfer_lm_steps": 200,
              "shipped_test": 12, "shipped_steps": 100, "n_embed_test": 40, "test_confs": 4},
    # the paper's DMT-B and optimiser, trained here (not the shipped DMT-mini) on pseudo-GEOM MOSES ensembles
    "paper": {"dmt_train": 10_000, "dmt_val": 50, "n_embed": 30, "max_confs": 10, "max_heavy_atoms": 27,
              "dmt_steps": 240_000, "batch_size": 128, "warmup": 1000, "n_jobs": 8,
              "shipped_test": 200, "shipped_steps": 100, "n_embed_test": 100, "test_confs": 10},
}
#: --smoke: the paper rung's code path (DMT-B itself) for one training step on a few small molecules
_SMOKE = {"dmt_train": 4, "dmt_val": 2, "n_embed": 3, "max_confs": 2, "max_heavy_atoms": None, "dmt_steps": 1,
          "batch_size": 2, "warmup": 1, "n_jobs": 1, "shipped_test": 2, "shipped_steps": 1, "n_embed_test": 3,
          "test_confs": 2}
#: DMT-B of the paper (the pair width is not in the paper note)
DMT_B = {"hidden": 512, "pair_hidden": 128, "n_blocks": 10, "n_heads": 8, "dropout": 0.1}


def _cfg(rung: str, smoke: bool = False) -> dict:
    import torch  # noqa: PLC0415

    torch.set_num_threads(1)  # tiny models: more intra-op threads only contend (and spin) on a busy machine
    if rung not in _RUNG:
        raise ValueError(f"unknown rung {rung!r}; rungs: {sorted(_RUNG)}")
    return {**_RUNG[rung], **_SMOKE} if smoke and rung == "paper" else _RUNG[rung]


# ------------------------------------------------------------------------------------------------- 1D
@REGISTRY.measures(Claim(
    "selfies-lm-always-valid", kind="sanity",
    statement="a SELFIES language model generates 100 % valid molecules, unlike the same LM over SMILES",
    paper="100 % validity (MoLlama, GEOM-DRUGS and QM9)", metric="validity of LM samples (RDKit)",
    direction="higher", baseline="same LM over SMILES", margin=0.3, rule="every_seed", rungs=("test", "repro"),
    note="tiny LMs (d=32, 1 layer) trained 40 steps on 300-400 MOSES molecules; margin 0.3 < max_margin 0.92 from "
         "calibration seeds 100-109 (SELFIES 1.0, SMILES 0.0-0.1; claims-calibration.json); true by construction "
         "of SELFIES, hence a sanity claim"))
def _one_d(seed: int, rung: str) -> dict[str, Measurement]:
    import torch  # noqa: PLC0415

    from .data import load_moses  # noqa: PLC0415
    from .lm import CausalLM, LMConfig, decode_to_smiles, sample_lm, to_selfies_corpus, train_lm  # noqa: PLC0415
    from .metrics import de_novo_metrics  # noqa: PLC0415
    from .tokenizer import SelfiesTokenizer, SmilesTokenizer  # noqa: PLC0415

    c = _cfg(rung)
    smiles = load_moses("train", c["lm_train"], seed=seed)
    corpora = {"selfies": to_selfies_corpus(smiles), "smiles": smiles}
    validity = {}
    for kind, tok in (("selfies", SelfiesTokenizer()), ("smiles", SmilesTokenizer())):
        tok.fit(corpora[kind])
        torch.manual_seed(seed)
        max_len = max(len(tok.split(s)) for s in corpora[kind]) + 2
        lm = CausalLM(LMConfig(tok.size, d_model=c["lm_d"], n_layers=1, n_heads=2, max_len=max_len))
        train_lm(lm, tok, corpora[kind], steps=c["lm_steps"], batch_size=32, lr=3e-3, seed=seed)
        out = decode_to_smiles(sample_lm(lm, tok, c["n_sample"], seed=seed), kind)
        validity[kind] = de_novo_metrics([s or "" for s in out]).validity
    return {"selfies-lm-always-valid": Measurement(validity["selfies"], reference=validity["smiles"])}


# ------------------------------------------------------------------------------------------ 3D learning
@functools.lru_cache(maxsize=2)
def _learn_data(rung: str):
    from .conformers import EnsembleSettings  # noqa: PLC0415
    from .experiments import three_d_data  # noqa: PLC0415

    c = _cfg(rung)
    settings = EnsembleSettings(n_embed=c["n_embed"], max_confs=c["max_confs"])
    return three_d_data(c["dmt_train"], c["dmt_test"], max_heavy_atoms=14, train_settings=settings,
                        test_settings=settings, seed=0)


_TINY_DMT = {"hidden": 32, "pair_hidden": 16, "n_blocks": 2, "n_heads": 4}
#: the DMT trained by ``_learns`` per (seed, rung), for the transfer claim (which starts from it)
_LEARNED: dict[tuple[int, str], object] = {}


@REGISTRY.measures(
    Claim("dmt-learns", kind="sanity",
          statement="DMT trained with the aligned denoising loss predicts held-out conformers from noisy ones far "
                    "better than the same model untrained",
          paper="DMT-B MAT-R 0.38-0.40 A on GEOM-DRUGS",
          metric="held-out denoising error (A): Kabsch RMSD of x0_hat to x0 at t = 0.1, 0.3, 0.5, 0.7",
          direction="lower", baseline="same DMT untrained", margin=0.5, rule="every_seed", rungs=("test", "repro"),
          note="DMT (hidden 32, 2 blocks) trained 60 steps on 10 molecules; margin 0.5 A < max_margin 0.86 A from "
               "calibration seeds 100-109 (1.27-1.53 A vs 2.38-3.05 A untrained; claims-calibration.json)"),
    Claim("dmt-learns-mat-r", kind="sanity",
          statement="a tiny DMT trained in the test itself samples held-out conformers far closer to the reference "
                    "ensembles (MAT-R) than the same model untrained",
          paper="DMT-B MAT-R 0.38-0.40 A on GEOM-DRUGS",
          metric="held-out MAT-R (A), 2K conformers, 50 ancestral steps", direction="lower",
          baseline="same DMT untrained", margin=MARGIN_LEARN_MATR, rule="every_seed", rungs=("test", "repro"),
          note=NOTE_LEARN_MATR),
)
def _learns(seed: int, rung: str) -> dict[str, Measurement]:
    import copy  # noqa: PLC0415

    from .diffusion import make_dmt, validation_rmsd  # noqa: PLC0415
    from .experiments import evaluate_conformers, fit_dmt  # noqa: PLC0415

    c = _cfg(rung)
    # one set of molecules and reference ensembles for every seed (built once, then cached); the seed draws the
    # initialisation, the training batches and the noise
    data = _learn_data(rung)
    untrained = make_dmt(pos_std=data.pos_std, seed=seed, **_TINY_DMT)
    untrained_rmsd = validation_rmsd(untrained, data.test_graphs)
    untrained_mat, _ = evaluate_conformers(untrained, data, steps=50, seed=seed)
    model, info = fit_dmt(data, steps=c["dmt_steps"], seed=seed, batch_size=16, lr=2e-3, **_TINY_DMT)
    trained_mat, _ = evaluate_conformers(model, data, steps=50, seed=seed)
    _LEARNED[(seed, rung)] = copy.deepcopy(model)
    return {"dmt-learns": Measurement(info["val_rmsd"], reference=untrained_rmsd),
            "dmt-learns-mat-r": Measurement(trained_mat.mean.mat_r, reference=untrained_mat.mean.mat_r,
                                            extra={"sane": trained_mat.fraction_sane,
                                                   "sane_untrained": untrained_mat.fraction_sane})}


@REGISTRY.measures(Claim(
    "lm-transfer-helps", kind="main",
    statement="1D-to-3D transfer: the SELFIES LM's token features, mapped to atoms, make DMT's held-out conformer "
              "predictions better than the same extra training steps without them",
    paper="DMT + MoLlama representations beat DMT alone in conformer prediction (GEOM-DRUGS; the paper's figure is "
          "not confirmed in the paper note)",
    metric="held-out denoising error (A) after the stage-2 transfer steps",
    direction="lower", baseline="same DMT, same extra steps, no LM features", margin=0.0, rule="mean_ci",
    expect=EXPECT_TRANSFER, rungs=("repro",), ladder="README.md#ladders-of-the-declared-fails",
    note=NOTE_TRANSFER))
def _transfer(seed: int, rung: str) -> dict[str, Measurement]:
    import copy  # noqa: PLC0415

    from .data import load_moses  # noqa: PLC0415
    from .experiments import fit_lm, transfer_vs_control  # noqa: PLC0415
    from .lm import to_selfies_corpus  # noqa: PLC0415

    c = _cfg(rung)
    data = _learn_data(rung)
    if (seed, rung) not in _LEARNED:
        _learns(seed, rung)
    dmt = copy.deepcopy(_LEARNED[(seed, rung)])
    # the 3D molecules' tokens join the LM's vocabulary (their strings are not trained on), as in repro --full
    extra = to_selfies_corpus([e.molecule.smiles for e in data.train + data.test])
    lm = fit_lm("selfies", load_moses("train", c["lm_train"], seed=seed), steps=c["transfer_lm_steps"], d_model=c["lm_d"],
                n_layers=2, n_heads=4, batch_size=32, lr=3e-3, seed=seed, extra_vocab=extra)
    tr = transfer_vs_control(dmt, data, lm.model, lm.tokenizer, steps=c["transfer_steps"], batch_size=16, lr=2e-3,
                             seed=seed, sample_steps=50)
    (s_lm, val_lm), (s_ctl, val_ctl) = tr["with LM features"], tr["same steps, no LM"]
    return {"lm-transfer-helps": Measurement(val_lm, reference=val_ctl,
                                             extra={"mat_r": s_lm.mean.mat_r, "mat_r_no_lm": s_ctl.mean.mat_r})}


# ------------------------------------------------------------------------------- shipped DMT vs ETKDG
@functools.lru_cache(maxsize=1)
def _shipped():
    from .shipped import load_shipped_dmt  # noqa: PLC0415

    return load_shipped_dmt()


@functools.lru_cache(maxsize=1)
def _paper_dmt(seed: int, device: str, smoke: bool):
    """The paper rung's DMT-B, trained on ``device`` (``$ICLR25_DEVICE`` or ``auto``) with the paper's optimiser on
    pseudo-GEOM ensembles of MOSES training molecules (:data:`_RUNG` ``"paper"``; ``smoke``: one step)."""
    from .conformers import EnsembleSettings  # noqa: PLC0415
    from .diffusion import make_dmt, train_dmt, validation_rmsd  # noqa: PLC0415
    from .experiments import three_d_data  # noqa: PLC0415

    c = _cfg("paper", smoke)
    settings = EnsembleSettings(n_embed=c["n_embed"], max_confs=c["max_confs"])
    data = three_d_data(c["dmt_train"], c["dmt_val"], max_heavy_atoms=c["max_heavy_atoms"], train_settings=settings,
                        test_settings=settings, seed=0, n_jobs=c["n_jobs"])
    model = make_dmt(pos_std=data.pos_std, seed=seed, device=device, **DMT_B)
    res = train_dmt(model, data.train_graphs, steps=c["dmt_steps"], batch_size=c["batch_size"], lr=1e-4,
                    weight_decay=0.05, warmup=c["warmup"], seed=seed, desc="DMT-B", device=device)
    return model, {"final_loss": res.final_loss, "val_rmsd": validation_rmsd(model, data.test_graphs, device=device),
                   "seconds": res.seconds}


@REGISTRY.measures(
    Claim("dmt-beats-etkdg", kind="main",
          statement="DMT's conformers match the reference ensembles better than RDKit ETKDG's",
          paper="GEOM-DRUGS MAT-R 0.38-0.40 A (DMT-B/L) vs 1.058 A (ETKDG)",
          metric="held-out MAT-R (A), shipped DMT-mini, 2K conformers", direction="lower",
          baseline="RDKit ETKDG, same 2K budget", margin=0.0, rule="mean_ci", expect="fails",
          ladder="README.md#3d-ladder-dmt-mini-50-sampler-steps", rungs=("test", "repro", "paper"),
          note="not reproduced at CPU scale: the shipped DMT-mini (0.8M parameters, 2000 steps) is behind ETKDG "
               "at every calibration seed 100-109 (MAT-R 0.53-0.91 vs 0.36-0.81 A; claims-calibration.json); the "
               "README's ladder shows the gap closing with training steps"),
    Claim("dmt-etkdg-parity", kind="secondary",
          statement="a small DMT reaches ETKDG's accuracy within 1.5x (the note's honest CPU-scale target)",
          paper="", metric="held-out MAT-R (A), shipped DMT-mini, 2K conformers", direction="lower",
          baseline="1.5 x RDKit ETKDG MAT-R, same 2K budget", margin=0.0, rule="mean_ci", rungs=("repro", "paper"),
          note="not robust at the test rung (4 molecules): calibration seeds 100-109 give max_margin -0.19 for every "
               "seed at 3 seeds (ratio to ETKDG up to 1.6x; docs/claims-calibration-0.7.0-first.json), "
               "so it is decided at the repro rung (12 molecules, 5 seeds) by the 95 % interval of the mean; margin 0 "
               "<= max_margin 0.059 A from calibration seeds 100-104 at the repro rung (DMT-mini 0.65-0.72 A vs "
               "1.5x ETKDG 0.84-1.00 A; claims-calibration-repro.json)"),
    Claim("dmt-bond-lengths-learned", kind="sanity",
          statement="DMT's conformers reproduce the reference bond-length distributions, unlike the same model "
                    "untrained (the local-geometry side of the paper's 3D metrics)",
          paper="bond/angle/dihedral distribution distances (JODO-style 3D metrics of de novo 3D generation)",
          metric="bond-length W1 to the reference ensembles (A), per bond type, weighted mean",
          direction="lower", baseline="same DMT untrained", margin=1.0, rule="every_seed",
          rungs=("test", "repro", "paper"),
          note="shipped DMT-mini; margin 1 A < max_margin 522 A from calibration seeds 100-109 (0.025-0.056 A vs "
               "553-770 A untrained; claims-calibration.json)"),
    Claim("dmt-angles-learned", kind="sanity",
          statement="DMT's bond-angle distributions are far closer to the references than the untrained model's",
          paper="bond/angle/dihedral distribution distances (JODO-style 3D metrics of de novo 3D generation)",
          metric="bond-angle W1 to the reference ensembles (degrees), per angle type, weighted mean",
          direction="lower", baseline="same DMT untrained", margin=MARGIN_ANGLE, rule="every_seed",
          rungs=("test", "repro", "paper"), note=NOTE_ANGLE),
    Claim("dmt-3d-valid", kind="sanity",
          statement="the bonds perceived from DMT's coordinates alone (rdDetermineBonds) are the intended graph's, "
                    "unlike the untrained model's (3D validity of the paper's de novo 3D metrics)",
          paper="3D molecule stability / validity from bonds rebuilt from coordinates (JODO-style 3D metrics)",
          metric="fraction of conformers whose perceived bonds equal the intended graph", direction="higher",
          baseline="same DMT untrained", margin=MARGIN_VALID, rule="every_seed", rungs=("test", "repro", "paper"),
          note=NOTE_VALID),
    Claim("dmt-torsions-learned", kind="sanity",
          statement="DMT's torsion distributions are far closer to the references than the untrained model's",
          paper="bond/angle/dihedral distribution distances (JODO-style 3D metrics of de novo 3D generation)",
          metric="|torsion| W1 to the reference ensembles (degrees), per torsion type, weighted mean",
          direction="lower", baseline="same DMT untrained", margin=10.0, rule="every_seed",
          rungs=("test", "repro", "paper"),
          note="margin 10 deg < max_margin 28 deg from calibration seeds 100-109 (9.3-17.1 deg vs 45.3-61.2 deg "
               "untrained; claims-calibration.json)"),
    Claim("dmt-torsions-vs-etkdg", kind="main",
          statement="DMT's torsion distributions are at least as close to the references as ETKDG's (the paper's "
                    "3D distribution lead over its baselines, on local geometry)",
          paper="26 % relative 3D-FCD improvement over JODO, GEOM-DRUGS (abstract)",
          metric="|torsion| W1 to the reference ensembles (degrees), per torsion type, weighted mean",
          direction="lower", baseline="RDKit ETKDG, same 2K budget", margin=0.0, rule="mean_ci", expect="fails",
          ladder="README.md#ladders-of-the-declared-fails", rungs=("test", "repro", "paper"),
          note="not reproduced at CPU scale: calibration seeds 100-109 at the test rung give 9.3-17.1 deg vs "
               "ETKDG 5.3-10.0 deg (behind at every seed; claims-calibration.json); README ladder over training "
               "budgets and the ablation of its causes"),
    Claim("dmt-conformers-sane", kind="sanity",
          statement="DMT's sampled conformers are chemically sane (bond lengths, no internal clash)",
          paper="", metric="fraction of conformers passing the bond/clash checks", direction="higher",
          threshold=0.8, rule="every_seed", rungs=("test", "repro", "paper"),
          note="shipped DMT-mini, 50 ancestral steps; threshold 0.8, max_margin 0.060 >= margin 0 from calibration "
               "seeds 100-109 (0.83-1.0; claims-calibration.json)"),
)
def _vs_etkdg(seed: int, rung: str) -> dict[str, Measurement | float]:
    from .conformers import EnsembleSettings, reference_ensembles  # noqa: PLC0415
    from .data import load_moses  # noqa: PLC0415
    from .diffusion import graphs_of, make_dmt  # noqa: PLC0415
    from .experiments import ThreeDData, evaluate_conformers  # noqa: PLC0415
    from .metrics import geometry_distances, graph_from_3d  # noqa: PLC0415

    c = _cfg(rung, smoke_run())
    # the shipped DMT-mini, or at the paper rung the paper's DMT-B trained here
    dmt, _ = _paper_dmt(seed, default_device(), smoke_run()) if rung == "paper" else _shipped()
    test = reference_ensembles(load_moses("test", c["shipped_test"], seed=seed + 101,
                                          max_heavy_atoms=c.get("max_heavy_atoms", 16)),
                               EnsembleSettings(n_embed=c["n_embed_test"], max_confs=c["test_confs"]),
                               seed=seed, skip_failed=True, desc="test ensembles")
    data = ThreeDData([], test, [], graphs_of(test), dmt.config.pos_std, 0.0)
    ours, g_ours = evaluate_conformers(dmt, data, steps=c["shipped_steps"], seed=seed)
    etkdg, g_etkdg = evaluate_conformers("etkdg", data, seed=seed)
    untrained = make_dmt(pos_std=dmt.config.pos_std, seed=seed, hidden=dmt.config.hidden,
                         pair_hidden=dmt.config.pair_hidden, n_blocks=dmt.config.n_blocks, n_heads=dmt.config.n_heads)
    # the untrained model's samples explode whatever their number: K per molecule (not 2K) is enough to show it
    _, g_untr = evaluate_conformers(untrained, data, ratio=1, steps=c["shipped_steps"], seed=seed)
    mols, refs = [e.molecule for e in test], [e.coords for e in test]
    geo = {name: geometry_distances(mols, g, refs) for name, g in
           (("ours", g_ours), ("etkdg", g_etkdg), ("untrained", g_untr))}
    valid = {name: float(np.concatenate([graph_from_3d(m, c) for m, c in zip(mols, g, strict=True)]).mean())
             for name, g in (("ours", g_ours), ("etkdg", g_etkdg), ("untrained", g_untr))}
    return {"dmt-beats-etkdg": Measurement(ours.mean.mat_r, reference=etkdg.mean.mat_r),
            "dmt-etkdg-parity": Measurement(ours.mean.mat_r, reference=1.5 * etkdg.mean.mat_r,
                                            extra={"etkdg": etkdg.mean.mat_r}),
            "dmt-conformers-sane": float(np.float64(ours.fraction_sane)),
            "dmt-bond-lengths-learned": Measurement(geo["ours"].bond_length, reference=geo["untrained"].bond_length,
                                                    extra={"etkdg": geo["etkdg"].bond_length}),
            "dmt-angles-learned": Measurement(geo["ours"].bond_angle, reference=geo["untrained"].bond_angle,
                                              extra={"etkdg": geo["etkdg"].bond_angle}),
            "dmt-3d-valid": Measurement(valid["ours"], reference=valid["untrained"], extra={"etkdg": valid["etkdg"]}),
            "dmt-torsions-learned": Measurement(geo["ours"].torsion, reference=geo["untrained"].torsion,
                                                extra={"etkdg": geo["etkdg"].torsion}),
            "dmt-torsions-vs-etkdg": Measurement(geo["ours"].torsion, reference=geo["etkdg"].torsion,
                                                 extra={"untrained": geo["untrained"].torsion}),
            **{f"_geometry/{name}": g for name, g in geo.items()}}


# ------------------------------------------------------------------ the README's 3D metrics table from claims.json
TABLE_3D_BEGIN = "<!-- next-mol-3d-table:begin (generated from claims.json by `three_d_table`; do not edit) -->"
TABLE_3D_END = "<!-- next-mol-3d-table:end -->"
#: (claim, metric label, which column holds the untrained model's and ETKDG's value)
_TABLE_3D = (
    ("dmt-bond-lengths-learned", "bond-length W1 (A) ↓", "references", "etkdg"),
    ("dmt-angles-learned", "bond-angle W1 (deg) ↓", "references", "etkdg"),
    ("dmt-torsions-learned", "\\|torsion\\| W1 (deg) ↓", "references", "etkdg"),
    ("dmt-3d-valid", "3D validity: perceived bonds = intended graph ↑", "references", "etkdg"),
)


def three_d_table(report: dict) -> str:
    """The README's table of 3D metrics for the shipped DMT-mini, the same model untrained and RDKit ETKDG, made
    from a ``claims.json`` (``report``: its parsed JSON): per metric, the mean over seeds and the per-seed
    range, with the seeds and the rung."""
    by_id = {c["id"]: c for c in report["claims"]}

    def cell(vals: list[float]) -> str:
        v = np.asarray(vals, dtype=np.float64)
        return f"{v.mean():.3g} ({v.min():.3g}-{v.max():.3g})"

    rows = []
    seeds: list[int] = []
    for cid, label, _, extra_key in _TABLE_3D:
        c = by_id.get(cid)
        if c is None:
            continue
        seeds = c["seeds"]
        etkdg = [e.get(extra_key, float("nan")) for e in c.get("extra", [])] or [float("nan")]
        rows.append(f"| {label} | {cell(c['values'])} | {cell(c['references'])} | {cell(etkdg)} |")
    head = (f"3D metrics on held-out MOSES test molecules, `claims.json` of `{report['package']} {report['version']}`, "
            f"rung `{report['rung']}`, seeds {', '.join(map(str, seeds))}: mean over seeds (range).\n\n"
            "| metric | DMT-mini (shipped) | same DMT untrained | RDKit ETKDG |\n|---|---|---|---|\n")
    return head + "\n".join(rows) + "\n"


def replace_three_d_table(readme_text: str, report: dict) -> str:
    """``readme_text`` with the 3D metrics table (between :data:`TABLE_3D_BEGIN` and :data:`TABLE_3D_END`)
    made from ``report``."""
    b, e = readme_text.find(TABLE_3D_BEGIN), readme_text.find(TABLE_3D_END)
    if b < 0 or e < b:
        raise ValueError("README has no 3D metrics table markers")
    return readme_text[:b + len(TABLE_3D_BEGIN)] + "\n" + three_d_table(report) + readme_text[e:]


if __name__ == "__main__":  # pragma: no cover - `python -m iclr25.next_mol.claims README.md claims.json`
    import json
    import sys
    from pathlib import Path

    readme, claims_json = Path(sys.argv[1]), Path(sys.argv[2])
    readme.write_text(replace_three_d_table(readme.read_text(encoding="utf-8"),
                                            json.loads(claims_json.read_text(encoding="utf-8"))), encoding="utf-8")


# --------------------------------------------------------------------- DMT vs ETKDG on QM9 DFT geometries (rung qm9)
#: the qm9 rung's recipe: QM9_RECIPE trained 1,000 steps, scored at 250 and 500 steps too (the ladder)
QM9_STEPS, QM9_LADDER = 1000, (250, 500)
NOTE_QM9 = ("declared fail, decided at the qm9 side rung (seeds 0-2): at calibration seeds 100-104 "
            "(claims-calibration-qm9.json) DMT-mini trained 1,000 steps on ~1,900 QM9 DFT geometries is at parity "
            "with ETKDG, not ahead (MAT-R 0.487-0.651 vs 0.478-0.657 A; improvement mean -0.027 A, sd 0.080 A), "
            "max_margin -0.383 A for mean_ci at 3 seeds < margin 0; ladder over 250/500/1000 training steps and the "
            "ablation (2x sampler steps, MMFF94 polish of DMT's conformers) in docs/qm9/ladder.md")


@functools.lru_cache(maxsize=1)
def _qm9_records():
    from .qm9 import load_qm9  # noqa: PLC0415

    return tuple(load_qm9())  # ImportError (one line, with the install command) without the qm9 extra


@REGISTRY.measures(Claim(
    "dmt-beats-etkdg-qm9-dft", kind="main",
    statement="DMT trained on DFT geometries predicts held-out molecules' DFT geometry (QM9) better than RDKit ETKDG",
    paper="leading conformer prediction on GEOM-QM9 (ETKDG MAT-R 0.235 A) and GEOM-DRUGS (DMT-B 0.38-0.40 vs "
          "ETKDG 1.058 A)",
    metric="held-out MAT-R (A) to the DFT geometry, DMT-mini trained on 2,000 QM9 DFT geometries, 2 conformers",
    direction="lower", baseline="RDKit ETKDG, same 2 conformers", margin=0.0, rule="mean_ci", expect="fails",
    ladder="docs/qm9/ladder.md", rungs=("qm9",), note=NOTE_QM9))
def _qm9(seed: int, rung: str) -> dict[str, Measurement]:
    from .qm9 import QM9_RECIPE, qm9_experiment  # noqa: PLC0415

    _cfg("test")  # one torch thread
    smoke = smoke_run()
    recipe = {**QM9_RECIPE, "steps": QM9_STEPS}
    if smoke:
        recipe.update(n_train=8, n_test=3, steps=2, sample_steps=2)
    res = qm9_experiment(_qm9_records(), seed=seed, recipe=recipe, ladder=() if smoke else QM9_LADDER,
                         shipped=False, ablation=True, device=default_device())
    m = res["methods"]
    dmt, etkdg, mmff = m["DMT-mini (QM9 DFT)"], m["RDKit ETKDG"], m["RDKit ETKDG + MMFF94"]
    extra = {"etkdg_mmff": mmff["mat_r"], "rmsd_dmt": dmt["rmsd"], "rmsd_etkdg": etkdg["rmsd"],
             "rmsd_etkdg_mmff": mmff["rmsd"], "cov_r_dmt": dmt["cov_r"], "cov_r_etkdg": etkdg["cov_r"],
             "cov_r_etkdg_mmff": mmff["cov_r"], "bond_error_dmt": dmt["bond_error"],
             "bond_error_etkdg": etkdg["bond_error"], "bond_error_etkdg_mmff": mmff["bond_error"],
             "sane_dmt": dmt["sane"], "frechet_3d_dmt": dmt["frechet_3d"], "frechet_3d_etkdg": etkdg["frechet_3d"],
             "frechet_3d_etkdg_mmff": mmff["frechet_3d"], "dmt_mmff": m["DMT-mini (QM9 DFT) + MMFF94"]["mat_r"],
             "dmt_2x_sampler_steps": m["DMT-mini (QM9 DFT), 2x sampler steps"]["mat_r"],
             "n_train": res["n_train"], "n_test": res["n_test"], "val_rmsd": res["val_rmsd"]}
    extra.update({f"dmt_at_{k}_steps": v["mat_r"] for k, v in res["ladder"].items()})
    return {"dmt-beats-etkdg-qm9-dft": Measurement(dmt["mat_r"], reference=etkdg["mat_r"], extra=extra)}


# ------------------------------------------------------- property-conditioned generation on QM9 (rung qm9)
#: written before any seed was run: conditioning must beat the same LM's unconditional molecules (margin 0, the
#: 95 % interval of the mean); checked at calibration seeds 100-104 before the decision seeds 0-2 were run
MARGIN_COND, EXPECT_COND, NOTE_COND = 0.0, "holds", (
    "margin 0 (conditioning beats the same LM's unconditional molecules) was written before any seed was run and "
    "checked at calibration seeds 100-104 (claims-calibration-qm9-cond.json: per-seed values and max_margin) "
    "before the decision seeds; per seed with the QM9-2014 references (L-bound, U-bound, #Atoms), the copy-the-training-"
    "set shortcut and the ladder over LM steps: docs/qm9/conditional.md")
#: the LM training steps at which the claim's MAE is also measured (the ladder; the final budget is the recipe's)
COND_LADDER = (375, 750)


@REGISTRY.measures(Claim(
    "qm9-conditional-alpha", kind="main",
    statement="The SELFIES LM conditioned on a QM9 property (polarizability alpha) generates molecules whose "
              "property is closer to the requested value than the same LM's unconditional molecules",
    paper="13 % average relative MAE gain for conditional 3D generation on QM9-2014 (abstract; properties alpha, "
          "gap, HOMO, LUMO, mu, Cv, scored by an EGNN property predictor trained on the other half of the data)",
    metric="MAE (Bohr^3) of the predicted alpha of 1,000 generated molecules to the alpha each was asked for "
           "(ridge predictor trained on the other 20,000 QM9 molecules)",
    direction="lower", baseline="same LM, null condition (unconditional), same targets", margin=MARGIN_COND,
    rule="mean_ci", expect=EXPECT_COND, rungs=("qm9-cond",), note=NOTE_COND))
def _qm9_conditional(seed: int, rung: str) -> dict[str, Measurement]:
    from .conditional import COND_RECIPE, conditional_experiment  # noqa: PLC0415

    _cfg("test")  # one torch thread
    recipe = dict(COND_RECIPE)
    if smoke_run():
        recipe.update(n_predictor=200, n_generator=200, steps=2, n_generate=20, fp_bits=64)
    res = conditional_experiment(_qm9_records(), seed=seed, recipe=recipe, ladder=() if smoke_run() else COND_LADDER,
                                 device=default_device())
    keys = ("mae_nearest_training_molecule", "mae_l_bound", "mae_u_bound", "mae_n_atoms", "predictor_test_mae",
            "quantisation_mae", "corr_conditional", "validity", "uniqueness", "novelty", "validity_unconditional",
            "n_predictor", "n_generator", "lm_final_loss", "lm_parameters")
    extra = {k: res[k] for k in keys}
    for k, v in res["ladder"].items():
        extra[f"conditional_at_{k}_steps"], extra[f"unconditional_at_{k}_steps"] = v["conditional"], v["unconditional"]
    return {"qm9-conditional-alpha": Measurement(res["mae_conditional"], reference=res["mae_unconditional"],
                                                  extra=extra)}
