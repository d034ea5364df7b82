"""``iclr25 next-mol demo``: the whole NExT-Mol pipeline at toy scale in well under a minute."""

from __future__ import annotations

from pathlib import Path

from iclr25.utils.results import RunResult

from .conformers import EnsembleSettings
from .data import load_moses
from .experiments import evaluate_conformers, fit_dmt, fit_lm, one_d_experiment, three_d_data
from .figures import plot_conformers
from .pipeline import predict_conformers, write_sdf

PACKAGE = "iclr25-next-mol"

DEMO = {"lm_train": 1500, "lm_steps": 120, "lm_d": 64, "n_sample": 200, "fcd_ref": 400,
        "dmt_train": 24, "dmt_test": 4, "dmt_steps": 120, "dmt_hidden": 64, "dmt_blocks": 2, "max_heavy_atoms": 16,
        "sample_steps": 20, "sampler": "ddim", "n_embed_train": 6, "n_embed_test": 12, "max_confs": 3}


def run_demo(out: Path, *, seed: int = 0) -> RunResult:
    cfg = dict(DEMO)
    run = RunResult.start(PACKAGE, "demo", seed=seed, config=cfg)
    # 1D: SELFIES LM versus SMILES LM (same size, same steps)
    train = load_moses("train", cfg["lm_train"], seed=seed)
    ref = load_moses("test", cfg["fcd_ref"], seed=seed)
    res = {}
    for kind in ("selfies", "smiles"):
        lm = fit_lm(kind, train, steps=cfg["lm_steps"], d_model=cfg["lm_d"], n_layers=1, batch_size=32, lr=3e-3,
                    seed=seed)
        res[kind] = one_d_experiment(lm, cfg["n_sample"], train=train, reference=ref if kind == "selfies" else (),
                                     seed=seed)
    run.add("SELFIES LM validity", res["selfies"]["validity"], peer=res["smiles"]["validity"],
            peer_name="SMILES LM", higher_is_better=True)
    run.add("SELFIES LM uniqueness", res["selfies"]["uniqueness"], higher_is_better=True)
    run.add("SELFIES LM FCD vs MOSES test", res["selfies"]["fcd"], higher_is_better=False)
    # 3D: DMT-mini versus RDKit ETKDG on pseudo-GEOM references
    data = three_d_data(cfg["dmt_train"], cfg["dmt_test"], max_heavy_atoms=cfg["max_heavy_atoms"],
                        train_settings=EnsembleSettings(n_embed=cfg["n_embed_train"], max_confs=cfg["max_confs"]),
                        test_settings=EnsembleSettings(n_embed=cfg["n_embed_test"], max_confs=cfg["max_confs"]),
                        seed=seed)
    dmt, info = fit_dmt(data, steps=cfg["dmt_steps"], seed=seed, hidden=cfg["dmt_hidden"],
                        n_blocks=cfg["dmt_blocks"], n_heads=4, batch_size=16, lr=1e-3)
    ours, gen = evaluate_conformers(dmt, data, steps=cfg["sample_steps"], sampler=cfg["sampler"], seed=seed)
    etkdg, gen_rd = evaluate_conformers("etkdg", data, seed=seed)
    run.add("DMT-mini MAT-R (A)", ours.mean.mat_r, peer=etkdg.mean.mat_r, peer_name="RDKit ETKDG",
            unit="A", higher_is_better=False)
    run.add("DMT-mini COV-R @0.75 A", ours.mean.cov_r, peer=etkdg.mean.cov_r, peer_name="RDKit ETKDG",
            higher_is_better=True)
    run.add("DMT-mini sane conformers", ours.fraction_sane, higher_is_better=True)
    run.add("DMT-mini validation RMSD of x0_hat (A)", info["val_rmsd"], unit="A", higher_is_better=False)
    e0 = data.test[0]
    fig = plot_conformers(out / "conformers.png", e0.molecule, {"DMT-mini (demo)": gen[0], "RDKit ETKDG": gen_rd[0]},
                          e0.coords, title=e0.molecule.smiles)
    run.add_figure(fig, relative_to=out)
    # end to end: LM molecules -> DMT conformers -> SDF
    sets = predict_conformers(dmt, _preparable([s for s in res["selfies"]["smiles"] if s])[:3], 2,
                              steps=cfg["sample_steps"], sampler=cfg["sampler"], seed=seed)
    write_sdf(out / "generated.sdf", sets)
    run.finish().save(out / "results.json")
    return run


def _preparable(smiles: list[str]) -> list[str]:
    from .chem import prepare  # noqa: PLC0415

    out = []
    for s in smiles:
        try:
            prepare(s)
        except ValueError:
            continue
        out.append(s)
    return out
