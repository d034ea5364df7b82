"""``iclr25 next-mol repro``: the reduced-scale reproduction behind the README "Results".

Experiment A (1D): a SELFIES LM and a SMILES LM of the same size and budget on MOSES train; validity, uniqueness,
novelty and FCD against MOSES test, beside a random-token SELFIES baseline; a ladder of training steps.
Experiment B (3D): DMT-mini on pseudo-GEOM ensembles of MOSES molecules versus the untrained DMT (same sampler)
and RDKit ETKDG (with and without MMFF) at 2K conformers per molecule; the aligned versus the unaligned loss at
equal steps; the 1D-to-3D transfer against the same extra steps without it; a ladder of training steps; time per
conformer; a figure of generated versus reference conformers.
Claims: every claim of :mod:`iclr25.next_mol.claims` decided over seeds 0-4 at the ``repro`` rung (``--quick``:
the ``test`` rung, seeds 0-2), written to ``OUT/claims.json`` (the README's claims table is made from it).

``repro`` runs the claims only (inside the 10-minute budget); ``repro --full`` runs Experiments A and B (one
seed) before them, about twice the CPU time.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr25.utils.device import describe_device, torch_device
from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult

from .conformers import EnsembleSettings
from .data import load_moses
from .diffusion import graphs_of, make_dmt, sample_conformers, validation_rmsd
from .experiments import (
    LMRun,
    evaluate_conformers,
    fit_dmt,
    fit_lm,
    one_d_experiment,
    random_baseline,
    three_d_data,
    transfer_vs_control,
)
from .figures import plot_conformers, plot_ladder
from .lm import to_selfies_corpus

PACKAGE = "iclr25-next-mol"

REPRO: dict[str, Any] = {
    "lm_train": 10000, "lm_ladder": [200, 400, 800], "lm_d": 128, "lm_layers": 2, "n_sample": 1000,
    "n_sample_ladder": 500, "fcd_ref": 1000,
    "dmt_train": 120, "dmt_test": 12, "max_heavy_atoms": 18, "n_embed_train": 12, "n_embed_test": 40,
    "max_confs": 4, "dmt_ladder": [200, 400, 800], "dmt_hidden": 96, "dmt_blocks": 4, "dmt_heads": 4,
    "dmt_batch": 32, "dmt_lr": 1e-3, "sample_steps": 50, "final_sample_steps": 100, "ddim_steps": 20,
    "transfer_steps": 100, "stereo_rounds": 3, "n_jobs": 2, "side_process": True,
}
QUICK: dict[str, Any] = {
    **REPRO, "lm_train": 1000, "lm_ladder": [20, 40, 80], "lm_d": 64, "lm_layers": 1, "n_sample": 200,
    "n_sample_ladder": 100, "fcd_ref": 300, "dmt_train": 16, "dmt_test": 3, "n_embed_train": 4, "n_embed_test": 8,
    "max_confs": 2, "dmt_ladder": [10, 20, 40], "dmt_hidden": 32, "dmt_blocks": 2, "sample_steps": 10,
    "final_sample_steps": 20, "ddim_steps": 5, "transfer_steps": 10,
}


def _row(name: str, s) -> dict[str, Any]:
    return {"method": name, "COV-R mean": s.mean.cov_r, "MAT-R mean": s.mean.mat_r, "COV-R median": s.median.cov_r,
            "MAT-R median": s.median.mat_r, "COV-P mean": s.mean.cov_p, "MAT-P mean": s.mean.mat_p,
            "sane": s.fraction_sane, "bonds ok": s.fraction_bonds_ok, "no clash": s.fraction_no_clash,
            "stereo ok": s.fraction_stereo_ok, "bond error": s.bond_error, "s/conformer": s.seconds_per_conformer}


def _stereo_variants(test, seed: int):
    """The test molecules that have stereocentres or stereo double bonds, each fixed to one stereoisomer (MOSES
    SMILES carry no stereo, so the stereo check is vacuous on them as they are)."""
    from rdkit import Chem  # noqa: PLC0415
    from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions  # noqa: PLC0415

    from .chem import prepare  # noqa: PLC0415

    out = []
    for e in test:
        opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True, maxIsomers=8, rand=None)
        isomers = sorted(Chem.MolToSmiles(m) for m in EnumerateStereoisomers(Chem.Mol(e.molecule.mol), options=opts))
        if len(isomers) > 1:
            try:
                out.append(prepare(isomers[seed % len(isomers)]))
            except ValueError:
                continue
    return out


def _main_line(cfg: dict[str, Any], seed: int, out: Path, clock: _Clock) -> tuple[dict[str, Any], dict[str, Any]]:
    """Experiment B (3D) up to the transfer: ensembles, ETKDG / ETKDG+MMFF / untrained baselines, DMT training
    with its ladder, the final samplers and the stereo check."""
    say, stage = clock.say, clock.stage
    log: dict[str, Any] = {"ladder_3d": []}
    data = _three_d(cfg, seed)
    say(f"ensembles: {len(data.train)} train / {len(data.test)} test molecules, "
        f"K = {np.mean([e.n_confs for e in data.test]):.1f}, pos_std {data.pos_std:.3f} A, {data.seconds:.0f} s")
    stage("3D: pseudo-GEOM ensembles")
    size = _dmt_size(cfg)
    steps, ddim, fsteps = cfg["sample_steps"], cfg["ddim_steps"], cfg["final_sample_steps"]
    rows = []
    s_etkdg, g_etkdg = evaluate_conformers("etkdg", data, seed=seed)
    s_mmff, _ = evaluate_conformers("etkdg+mmff", data, seed=seed)
    rows += [_row("RDKit ETKDG", s_etkdg), _row("RDKit ETKDG + MMFF", s_mmff)]
    untrained = make_dmt(pos_std=data.pos_std, seed=seed, **size)
    s_untr, _ = evaluate_conformers(untrained, data, steps=fsteps, seed=seed)
    rows.append(_row(f"DMT-mini untrained ({fsteps} ancestral steps)", s_untr))
    say(f"ETKDG MAT-R {s_etkdg.mean.mat_r:.3f}, +MMFF {s_mmff.mean.mat_r:.3f}, untrained {s_untr.mean.mat_r:.3g}")
    dmt = make_dmt(pos_std=data.pos_std, seed=seed, **size)
    rungs: dict[int, Any] = {}

    def dmt_rung(step: int) -> None:
        s_rung, gen = evaluate_conformers(dmt, data, steps=steps, seed=seed)
        rungs[step] = (s_rung, validation_rmsd(dmt, data.test_graphs), gen)
        log["ladder_3d"].append({"steps": step, "MAT-R": s_rung.mean.mat_r, "COV-R": s_rung.mean.cov_r,
                                 "val RMSD": rungs[step][1], "sane": s_rung.fraction_sane})
        say(f"DMT @ {step} steps: {log['ladder_3d'][-1]}")

    stage("3D: ETKDG, ETKDG+MMFF and untrained DMT baselines")
    prev = cfg["dmt_ladder"][-1]
    dmt, info = fit_dmt(data, steps=prev, seed=seed, batch_size=cfg["dmt_batch"], lr=cfg["dmt_lr"], model=dmt,
                        callback=dmt_rung, callback_steps=cfg["dmt_ladder"])
    mid = cfg["dmt_ladder"][1]
    mid_val, mid_mat = rungs[mid][1], rungs[mid][0].mean.mat_r
    s_50 = rungs[prev][0]
    stage("3D: DMT training + 3 ladder evaluations")
    from .checkpoint import save_dmt  # noqa: PLC0415

    save_dmt(out / "models" / "dmt.pt", dmt, extra={"steps": prev})  # for benchmarks/transfer_ablation.py
    # the headline row: the paper's 100-step ancestral sampler, with the stereo check
    s_dmt, g_dmt = evaluate_conformers(dmt, data, steps=fsteps, seed=seed, stereo_rounds=cfg["stereo_rounds"])
    s_ddim, _ = evaluate_conformers(dmt, data, steps=ddim, sampler="ddim", seed=seed)
    rows.append(_row(f"DMT-mini ({prev} steps, {fsteps} ancestral steps, stereo check)", s_dmt))
    rows.append(_row(f"DMT-mini ({prev} steps, {steps} ancestral steps)", s_50))
    rows.append(_row(f"DMT-mini ({prev} steps, {ddim} DDIM steps)", s_ddim))
    say(f"DMT final MAT-R {s_dmt.mean.mat_r:.3f} ({fsteps} ancestral), {s_50.mean.mat_r:.3f} ({steps}), "
        f"{s_ddim.mean.mat_r:.3f} (ddim)")
    # the stereo check where it has work to do: the test molecules with stereocentres, fixed to one isomer
    from .metrics import sanity, stereo_matches  # noqa: PLC0415
    from .pipeline import redraw_flipped  # noqa: PLC0415

    iso = _stereo_variants(data.test, seed)
    stereo_tab: dict[str, Any] = {"molecules": len(iso)}
    if iso:
        k_iso = 2 * cfg["max_confs"]
        g_iso = graphs_of(iso)
        raw = sample_conformers(dmt, g_iso, k_iso, steps=fsteps, seed=seed, batch_size=128)
        before = float(np.concatenate([stereo_matches(m, c) for m, c in zip(iso, raw, strict=True)]).mean())
        fixed, oks, counts = redraw_flipped(dmt, iso, raw, rounds=cfg["stereo_rounds"], steps=fsteps, seed=seed,
                                            graphs=g_iso, batch_size=128)
        stereo_tab.update({"conformers": k_iso * len(iso), "stereo ok before": before,
                           "stereo ok after": float(np.concatenate(oks).mean()), "redrawn": sum(counts),
                           "sane after": float(np.concatenate([sanity(m, c).sane for m, c in
                                                               zip(iso, fixed, strict=True)]).mean())})
    say(f"stereo check on stereo-fixed test molecules: {stereo_tab}")
    stage("3D: final 100-step sampling, DDIM, stereo check")

    log.update({"3d": rows, "stereo": stereo_tab})
    return log, {"data": data, "dmt": dmt, "mid_val": mid_val, "mid_mat": mid_mat, "unaligned_at": len(rows),
                 "s_50": s_50, "s_dmt": s_dmt, "s_ddim": s_ddim, "s_untr": s_untr, "s_etkdg": s_etkdg,
                 "s_mmff": s_mmff, "g_dmt": g_dmt, "g_etkdg": g_etkdg}


class _Clock:
    """Time-stamped progress lines and per-stage wall times of one process."""

    def __init__(self, tag: str = "") -> None:
        self.t0 = self.mark = time.perf_counter()
        self.tag = tag
        self.stages: dict[str, float] = {}

    def say(self, msg: str) -> None:
        print(f"[{time.perf_counter() - self.t0:6.1f} s]{self.tag} {msg}", flush=True)

    def stage(self, name: str) -> None:
        now = time.perf_counter()
        self.stages[name] = now - self.mark
        self.mark = now
        self.say(f"stage {name!r}: {self.stages[name]:.1f} s")


def _ens_smiles(cfg: dict[str, Any], seed: int) -> list[str]:
    return [*load_moses("train", cfg["dmt_train"], seed=seed + 11, max_heavy_atoms=cfg["max_heavy_atoms"]),
            *load_moses("test", cfg["dmt_test"], seed=seed + 13, max_heavy_atoms=cfg["max_heavy_atoms"])]


def _three_d(cfg: dict[str, Any], seed: int):
    return three_d_data(cfg["dmt_train"], cfg["dmt_test"], max_heavy_atoms=cfg["max_heavy_atoms"],
                        train_settings=EnsembleSettings(n_embed=cfg["n_embed_train"], max_confs=cfg["max_confs"]),
                        test_settings=EnsembleSettings(n_embed=cfg["n_embed_test"], max_confs=cfg["max_confs"]),
                        seed=seed, n_jobs=cfg["n_jobs"])


def _dmt_size(cfg: dict[str, Any]) -> dict[str, int]:
    return {"hidden": cfg["dmt_hidden"], "n_blocks": cfg["dmt_blocks"], "n_heads": cfg["dmt_heads"]}


def _side(cfg: dict[str, Any], seed: int, out: Path, threads: int, tag: str = " [side]") -> dict[str, Any]:
    """Experiment A (1D) and the unaligned-loss ablation: the half of the repro that does not need the main
    line's DMT. It runs in a second process beside the main 3D line (the two halves share nothing but files:
    the SELFIES LM goes to ``OUT/models/lm.pt``, the ensembles come from the on-disk cache)."""
    torch.set_num_threads(threads)
    clock = _Clock(tag)
    res: dict[str, Any] = {"ladder_1d": []}
    train = load_moses("train", cfg["lm_train"], seed=seed)
    ref = load_moses("test", cfg["fcd_ref"], seed=seed)
    sf_corpus = to_selfies_corpus(train)
    # the 3D molecules' tokens join the vocabulary (for the transfer), their strings are not trained on
    extra = to_selfies_corpus(_ens_smiles(cfg, seed))
    holder: dict[str, Any] = {}
    last = cfg["lm_ladder"][-1]

    def lm_rung(step: int) -> None:
        n = cfg["n_sample"] if step == last else cfg["n_sample_ladder"]
        r = one_d_experiment(holder["lm"], n, train=train, reference=ref, seed=seed)
        holder[step] = r
        res["ladder_1d"].append({"steps": step, "n": n, **{k: r[k] for k in ("validity", "uniqueness", "fcd")}})
        clock.say(f"SELFIES LM @ {step} steps: {res['ladder_1d'][-1]}")

    from .checkpoint import save_lm  # noqa: PLC0415
    from .lm import CausalLM, LMConfig  # noqa: PLC0415
    from .tokenizer import SelfiesTokenizer  # noqa: PLC0415

    tok = SelfiesTokenizer().fit(sf_corpus + extra)
    torch.manual_seed(seed)
    model = CausalLM(LMConfig(tok.size, d_model=cfg["lm_d"], n_layers=cfg["lm_layers"],
                              max_len=max(len(tok.split(x)) for x in sf_corpus + extra) + 2))
    holder["lm"] = LMRun("selfies", model, tok, sf_corpus, 0.0, 0.0)
    clock.stage("1D: data and SELFIES corpus")
    lm_sf = fit_lm("selfies", train, corpus=sf_corpus, extra_vocab=extra, steps=last, model=model, seed=seed,
                   callback=lm_rung, callback_steps=cfg["lm_ladder"])
    save_lm(out / "models" / "lm.pt", lm_sf.model, lm_sf.tokenizer)
    final_sf = holder[last]
    clock.stage("1D: SELFIES LM training + 3 ladder evaluations")
    lm_sm = fit_lm("smiles", train, steps=last, d_model=cfg["lm_d"], n_layers=cfg["lm_layers"], seed=seed)
    final_sm = one_d_experiment(lm_sm, cfg["n_sample"], train=train, reference=ref, seed=seed)
    clock.stage("1D: SMILES LM training + evaluation")
    rand = random_baseline(lm_sf.tokenizer, sf_corpus, cfg["n_sample"], train=train, reference=ref, seed=seed)
    clock.stage("1D: random-token baseline")
    res["1d"] = [{"method": name, **{k: r[k] for k in ("validity", "uniqueness", "novelty", "fcd")}}
                 for name, r in (("SELFIES LM", final_sf), ("SMILES LM", final_sm), ("random SELFIES tokens", rand))]
    for row in res["1d"]:
        clock.say(f"{row['method']}: {row}")
    res["final"] = {"selfies": final_sf, "smiles": final_sm, "random": rand}

    # aligned vs unaligned loss at equal steps: the ladder's middle rung of the main line's schedule (same
    # learning rates, same batches and noise draws; only the regression target differs)
    data = _three_d(cfg, seed)
    prev, mid, steps = cfg["dmt_ladder"][-1], cfg["dmt_ladder"][1], cfg["sample_steps"]
    unal, info_u = fit_dmt(data, steps=prev, stop_after=mid, seed=seed, aligned=False, batch_size=cfg["dmt_batch"],
                           lr=cfg["dmt_lr"], **_dmt_size(cfg))
    s_unal, _ = evaluate_conformers(unal, data, steps=steps, seed=seed)
    res["unaligned"] = {"row": _row(f"DMT-mini unaligned loss ({mid} steps, {steps} ancestral steps)", s_unal),
                        "val RMSD": info_u["val_rmsd"], "MAT-R": s_unal.mean.mat_r}
    clock.stage("3D: unaligned-loss ablation")
    res["stages"] = clock.stages
    return res


def run_repro(out: Path, *, seed: int = 0, quick: bool = False, full: bool = False) -> RunResult:
    """Run the reproduction into ``out``: every claim of :mod:`iclr25.next_mol.claims` decided over seeds 0-4 at
    the ``repro`` rung (``quick``: the ``test`` rung, seeds 0-2), written to ``OUT/claims.json``, in two processes
    (the training claims in a second one beside the shipped-DMT claims).

    ``full`` also runs the one-seed experiments before the claims (about 2x the CPU time, over the 10-minute
    budget): the main process the 3D line (ensembles, baselines, DMT training and its ladder, the final samplers,
    the stereo check, then the transfer), a second one the 1D experiment and the unaligned-loss ablation
    (:func:`_side`); ``cfg["side_process"] = False`` runs both in this process, one after the other (same
    results)."""
    cfg = dict(QUICK if quick else REPRO)
    load0 = os.getloadavg()
    run = RunResult.start(PACKAGE, "repro", seed=seed, config={**cfg, "full": full})
    # where the models compute: $ICLR25_DEVICE (`repro --device`), else auto
    run.machine["device"] = describe_device(torch_device(None))
    clock = _Clock()
    stage = clock.stage
    threads = torch.get_num_threads()
    pool = None
    if cfg["side_process"]:
        import multiprocessing  # noqa: PLC0415
        from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415

        pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    rung = "test" if quick else "repro"
    side_claims, main_claims = _claims_split()
    claims_future = None
    log: dict[str, Any] = {}
    side: dict[str, Any] = {"stages": {}}
    try:
        if full:
            side_future = pool.submit(_side, cfg, seed, out, threads) if pool is not None else None
            log, main = _main_line(cfg, seed, out, clock)
            side = side_future.result() if side_future is not None else _side(cfg, seed, out, threads, tag="")
            if pool is not None:
                stage("waiting for the side process")
        if pool is not None:
            # the claims over seeds (claims.json): the 1D and learning claims in the side process while this one
            # runs the transfer (with ``full``) and then the claims of the shipped DMT
            claims_future = pool.submit(_measure_claims, rung, side_claims, threads)
        if full:
            log.update(_rest(cfg, seed, out, run, clock, log, main, side))
        measured = _measure_claims(rung, main_claims if pool is not None else side_claims + main_claims, threads)
        stage("claims over seeds (this process)")
        if claims_future is not None:
            measured.update(claims_future.result())
            stage("waiting for the side process's claims")
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    claims = _write_claims(out, rung, measured, quick, load0, full)
    log.update({"stages": [{"process": "main", "stage": k, "seconds": v} for k, v in clock.stages.items()]
                + [{"process": "side", "stage": k, "seconds": v} for k, v in side["stages"].items()]})
    with atomic_write(out / "tables.json") as f:
        json.dump(log, f, indent=1, default=float)
    md = (tables_markdown(log) if full else "### Time per stage\n" + _table(log["stages"]) + "\n") \
        + "\n### Claims over seeds (claims.json, rung `" + rung + "`)\n\n" + claims + "\n"
    with atomic_write(out / "tables.md") as f:
        f.write(md)
    if not full:
        _claims_metrics(run, out)
    run.add("repro wall time", time.perf_counter() - clock.t0, unit="s", higher_is_better=False, timing=True)
    import resource  # noqa: PLC0415

    cpu = sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                  resource.getrusage(resource.RUSAGE_CHILDREN)))
    run.add("repro CPU time (user+sys, both processes)", cpu, unit="s", higher_is_better=False, timing=True)
    run.add("load average at start (1 min)", float(load0[0]), timing=True)
    run.finish().save(out / "results.json")
    print(md)
    return run


def _claims_metrics(run: RunResult, out: Path) -> None:
    """Each claim's mean over seeds beside its reference's, into ``results.json`` (the claims-only repro)."""
    report = json.loads((out / "claims.json").read_text(encoding="utf-8"))
    for c in report["claims"]:
        vals = [float(v) for v in c["values"]]
        refs = [float(v) for v in c.get("references") or [] if v is not None]
        peer = float(np.mean(refs)) if refs else (float(c["threshold"]) if c.get("threshold") is not None else None)
        kw: dict[str, Any] = {"peer": peer, "peer_name": c.get("baseline") or "threshold"} if peer is not None else {}
        run.add(f"{c['id']} ({c['verdict']}, expected {c['expect']}): {c['metric']}", float(np.mean(vals)),
                higher_is_better=c["direction"] == "higher", **kw)


def _claims_split() -> tuple[list[str], list[str]]:
    """The registered claims in two halves: those measured by training (1D LMs, the DMT learning tests, the
    1D-to-3D transfer: the side process) and those of the shipped DMT (this process)."""
    from .claims import REGISTRY  # noqa: PLC0415

    ids = list(REGISTRY.claims)
    side = [c for c in ids if c in ("selfies-lm-always-valid", "dmt-learns", "dmt-learns-mat-r", "lm-transfer-helps")]
    return side, [c for c in ids if c not in side]


def _measure_claims(rung: str, claim_ids: list[str], threads: int) -> dict[str, dict[int, Any]]:
    """``{claim: {seed: measurement}}`` at every seed of ``rung`` (:mod:`iclr25.next_mol.claims`)."""
    torch.set_num_threads(threads)
    from .claims import REGISTRY  # noqa: PLC0415

    seeds = REGISTRY.rung_seeds(rung)
    return {c: {s: REGISTRY.measure(c, s, rung) for s in seeds} for c in claim_ids if c in REGISTRY.claims_at(rung)}


def _write_claims(out: Path, rung: str, measured: dict[str, dict[int, Any]], quick: bool,
                  load: tuple[float, float, float], full: bool = False) -> str:
    """Decide every claim from its measurements and write ``OUT/claims.json``; returns the explanations."""
    import importlib.metadata  # noqa: PLC0415

    from iclr25.utils.claims import ClaimsReport, decide  # noqa: PLC0415

    from .claims import REGISTRY  # noqa: PLC0415

    results = [decide(REGISTRY.claims[c], measured[c], rung=rung) for c in REGISTRY.claims_at(rung)]
    report = ClaimsReport(REGISTRY.package, importlib.metadata.version(PACKAGE), rung, results, load=load,
                          command="iclr25 next-mol repro" + (" --quick" if quick else "") + (" --full" if full else ""))
    report.save(out)
    return "\n\n".join(r.explain() for r in results)


def _rest(cfg: dict[str, Any], seed: int, out: Path, run: RunResult, clock: _Clock, log: dict[str, Any],
          main: dict[str, Any], side: dict[str, Any]) -> dict[str, Any]:
    """The 1D rows, the 1D-to-3D transfer and its control, the headline rows and the figures (after both
    processes' first halves)."""
    say, stage = clock.say, clock.stage
    final_sf, final_sm, rand = (side["final"][k] for k in ("selfies", "smiles", "random"))
    log["1d"], log["ladder_1d"] = side["1d"], side["ladder_1d"]
    run.add("1D: SELFIES LM validity", final_sf["validity"], peer=final_sm["validity"], peer_name="SMILES LM",
            higher_is_better=True)
    run.add("1D: SELFIES LM uniqueness", final_sf["uniqueness"], higher_is_better=True)
    run.add("1D: SELFIES LM novelty", final_sf["novelty"], higher_is_better=True)
    run.add("1D: FCD vs MOSES test, SELFIES LM", final_sf["fcd"], peer=rand["fcd"], peer_name="random tokens",
            higher_is_better=False)
    run.add("1D: FCD vs MOSES test, SELFIES LM vs SMILES LM", final_sf["fcd"], peer=final_sm["fcd"],
            peer_name="SMILES LM", higher_is_better=False)
    mid = cfg["dmt_ladder"][1]
    log["3d"].insert(main["unaligned_at"], side["unaligned"]["row"])
    log["alignment"] = {"aligned": {"steps": mid, "val RMSD": main["mid_val"], "MAT-R": main["mid_mat"]},
                        "unaligned": {"steps": mid, "val RMSD": side["unaligned"]["val RMSD"],
                                      "MAT-R": side["unaligned"]["MAT-R"]}}
    say(f"alignment ablation @ {mid} steps: {log['alignment']}")
    data, dmt = main["data"], main["dmt"]
    steps, prev = cfg["sample_steps"], cfg["dmt_ladder"][-1]
    rows = log["3d"]
    # 1D-to-3D transfer: stage 2 (projector + new DMT input columns) versus the same steps of DMT alone
    from .checkpoint import load_lm  # noqa: PLC0415

    lm_model, lm_tok = load_lm(out / "models" / "lm.pt")  # written by the side process
    t_steps = cfg["transfer_steps"]
    tr = transfer_vs_control(dmt, data, lm_model, lm_tok, steps=t_steps, batch_size=cfg["dmt_batch"],
                             lr=cfg["dmt_lr"], seed=seed, sample_steps=steps)
    (s_tr, val_tr), (s_ctl, val_ctl) = tr["with LM features"], tr["same steps, no LM"]
    transfer_tab = {"with LM features": {"val RMSD": val_tr, "MAT-R": s_tr.mean.mat_r},
                    "same steps, no LM": {"val RMSD": val_ctl, "MAT-R": s_ctl.mean.mat_r}}
    rows.append(_row(f"DMT-mini + LM transfer ({prev}+{t_steps} steps)", s_tr))
    rows.append(_row(f"DMT-mini, same extra steps without LM ({prev}+{t_steps} steps)", s_ctl))
    say(f"transfer: {transfer_tab}")
    stage("3D: 1D-to-3D transfer and its control")

    s_dmt, s_untr, s_etkdg, s_mmff, s_50, s_ddim = (main[k] for k in ("s_dmt", "s_untr", "s_etkdg", "s_mmff",
                                                                      "s_50", "s_ddim"))
    fsteps = cfg["final_sample_steps"]
    run.add("3D: DMT-mini MAT-R (A), vs untrained DMT", s_dmt.mean.mat_r, peer=s_untr.mean.mat_r,
            peer_name="untrained DMT-mini", unit="A", higher_is_better=False)
    run.add("3D: DMT-mini MAT-R (A), vs RDKit ETKDG", s_dmt.mean.mat_r, peer=s_etkdg.mean.mat_r,
            peer_name="RDKit ETKDG", unit="A", higher_is_better=False)
    run.add("3D: DMT-mini COV-R @0.75 A, vs RDKit ETKDG", s_dmt.mean.cov_r, peer=s_etkdg.mean.cov_r,
            peer_name="RDKit ETKDG", higher_is_better=True)
    run.add(f"3D: sane conformers (DMT-mini, {fsteps} steps) vs {steps} steps", s_dmt.fraction_sane,
            peer=s_50.fraction_sane, peer_name=f"{steps} sampler steps", higher_is_better=True)
    run.add("3D: median |bond length - MMFF| (A, DMT-mini)", s_dmt.bond_error, unit="A", higher_is_better=False)
    run.add(f"3D: validation RMSD @ {mid} steps, aligned vs unaligned loss", main["mid_val"], peer=side["unaligned"]["val RMSD"],
            peer_name="unaligned", unit="A", higher_is_better=False)
    run.add("3D: MAT-R with LM transfer vs same steps without", s_tr.mean.mat_r, peer=s_ctl.mean.mat_r,
            peer_name="no transfer", unit="A", higher_is_better=False)
    run.add("3D: s/conformer DMT-mini (ancestral) vs ETKDG", s_dmt.seconds_per_conformer,
            peer=s_etkdg.seconds_per_conformer, peer_name="ETKDG", unit="s", higher_is_better=False, timing=True)
    run.add("3D: s/conformer DMT-mini (DDIM) vs ETKDG+MMFF", s_ddim.seconds_per_conformer,
            peer=s_mmff.seconds_per_conformer, peer_name="ETKDG+MMFF", unit="s", higher_is_better=False,
            timing=True)

    _figures(out, run, data, main, log["ladder_1d"], log["ladder_3d"], rand["fcd"], final_sm["fcd"])
    stage("figures")
    return {"transfer": transfer_tab}


def _figures(out: Path, run: RunResult, data, main: dict[str, Any], lad1: list[dict[str, Any]],
             lad3: list[dict[str, Any]], fcd_random: float, fcd_smiles: float) -> None:
    """The repro's three figures: conformers of the smallest test molecule, the FCD and MAT-R ladders."""
    s_etkdg, g_dmt, g_etkdg = main["s_etkdg"], main["g_dmt"], main["g_etkdg"]
    best = int(np.argmin([e.molecule.n_atoms for e in data.test]))  # the smallest molecule draws clearest
    e0 = data.test[best]
    fig = plot_conformers(out / "conformers.png", e0.molecule,
                          {"DMT-mini": g_dmt[best], "RDKit ETKDG": g_etkdg[best]}, e0.coords,
                          title=f"{e0.molecule.smiles}: pseudo-GEOM references")
    run.add_figure(fig, relative_to=out)
    fig = plot_ladder(out / "ladder_fcd.png", {"SELFIES LM": ([r["steps"] for r in lad1], [r["fcd"] for r in lad1])},
                      xlabel="LM training steps", ylabel="FCD vs MOSES test",
                      hlines={"0.5 x random tokens": 0.5 * fcd_random, "SMILES LM (final)": fcd_smiles})
    run.add_figure(fig, relative_to=out)
    fig = plot_ladder(out / "ladder_matr.png",
                      {"DMT-mini": ([r["steps"] for r in lad3], [r["MAT-R"] for r in lad3])},
                      xlabel="DMT training steps", ylabel="MAT-R (A)",
                      hlines={"RDKit ETKDG": s_etkdg.mean.mat_r, "1.5 x ETKDG": 1.5 * s_etkdg.mean.mat_r})
    run.add_figure(fig, relative_to=out)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1e4 else f"{v:.3e}"
    return str(v)


def _table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return ""
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(_fmt(r.get(c)) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def tables_markdown(log: dict[str, Any]) -> str:
    parts = ["### 1D generation (MOSES)", _table(log["1d"]), "", "### 1D ladder (SELFIES LM)",
             _table(log["ladder_1d"]), "", "### 3D conformers (pseudo-GEOM, 2K per molecule, delta 0.75 A)",
             _table(log["3d"]), "", "### 3D ladder (DMT-mini)", _table(log["ladder_3d"])]
    if "alignment" in log:
        parts += ["", "### Aligned vs unaligned loss (equal steps)",
                  _table([{"loss": k, **v} for k, v in log["alignment"].items()]),
                  "", "### 1D-to-3D transfer", _table([{"run": k, **v} for k, v in log["transfer"].items()])]
    if "stereo" in log:
        parts += ["", "### Stereo check on the stereo-fixed test molecules", _table([log["stereo"]])]
    if "stages" in log:
        parts += ["", "### Time per stage", _table(log["stages"])]
    return "\n".join(parts) + "\n"
