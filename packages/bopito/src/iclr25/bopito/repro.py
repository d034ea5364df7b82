"""The reduced-scale reproduction behind ``iclr25 bopito repro``: the Prinz ladder, long-lag equilibrium,
spectral check and interpolation (default), the 2-D triple-well experiment (``--system triple-well``) and the
alanine-dipeptide ladder and claims (``--system alanine``). Each writes ``results.json`` and ``details.json``;
the README's tables are made from the files it wrote (:func:`triple_well_table`).

References: BoPITO (ICLR 2025), Sec. 5.1 (Prinz: equilibrium at long lags, data efficiency, interpolation) and
Sec. 5.2 (alanine dipeptide).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.cli import set_torch_threads
from iclr25.utils.device import describe_device, torch_device
from iclr25.utils.results import RunResult

from .analysis import (
    chain_timescales,
    cross_correlation,
    estimate_lambda,
    evaluate_acf,
    fit_interpolation,
    fit_msm,
    vamp2_score,
)
from .experiments import PRINZ_BOX, REPRO_BUDGET, Budget, cached_simulation, model_kwargs, w1_members
from .reference import exact_reference
from .sampling import sample, sample_chain, sample_equilibrium
from .training import fit_model

__all__ = ["ReproConfig", "TripleWellConfig", "TRIPLE_WELL_BOX", "run_repro", "run_triple_well", "repro_command",
           "triple_well_table", "alanine_tables", "replace_readme_section", "readme_section",
           "prinz_tables"]

PACKAGE = "iclr25-bopito"


# ----------------------------------------------------------------------------------------------------- repro
@dataclasses.dataclass(frozen=True)
class ReproConfig:
    seeds: tuple[int, ...] = (0, 1, 2)
    ladder: tuple[int, ...] = (30, 100, 300, 1000)
    n_frames: int = 1000
    max_lag: int = 1000
    lambda_hat: float = 0.994
    acf_lags: tuple[int, ...] = (10, 25, 50, 75, 100, 200, 300, 500, 750, 1000)
    # equilibrium claim: low data, short max_lag
    w1_n_traj: int = 100
    w1_max_lag: int = 100
    long_lag: int = 5000
    x_start: float = 0.75
    # interpolation: short trajectories started from prior samples
    int_n_traj: int = 1000
    int_max_lag: int = 50
    int_fit_lags: tuple[int, ...] = (200, 500)
    int_test_lags: tuple[int, ...] = (100, 300, 1000)
    # spectral check: chains of the 1000-trajectory BoPITO model
    chain_lag: int = 20
    chain_walkers: int = 300
    chain_len: int = 60
    msm_lag: int = 5
    n_bins: int = 40


def run_repro(*, budget: Budget = REPRO_BUDGET, config: ReproConfig = ReproConfig(), cache: Path | None = None,
              log: Any = print) -> dict[str, Any]:
    """The reduced-scale reproduction (see the README "Results"): returns every number and array it used."""
    cfg = config
    ref = exact_reference("prinz")
    kw = model_kwargs(budget)
    timings: dict[str, float] = {}
    t = time.perf_counter()
    full = {s: cached_simulation(cache, system="prinz", n_traj=max(cfg.ladder), n_frames=cfg.n_frames, seed=s,
                                 desc=f"simulate seed {s}") for s in cfg.seeds}
    timings["simulate"] = time.perf_counter() - t
    log(f"data: {len(cfg.seeds)} x {max(cfg.ladder)} trajectories x {cfg.n_frames} frames "
        f"({timings['simulate']:.0f} s)")

    # priors: one per seed, on the equilibrium frames of that seed's full data set
    t = time.perf_counter()
    bg = fit_model("bg", [full[s] for s in cfg.seeds], n_models=len(cfg.seeds), steps=budget.bg_steps, seed=100,
                   desc="priors", **kw)
    timings["train prior"] = time.perf_counter() - t
    eq_bg = sample_equilibrium(bg.model, 2 * budget.n_eval, steps=budget.long_lag_steps, seed=101)
    w1_bg = w1_members(ref, eq_bg)
    log(f"priors: W1 to Boltzmann {np.round(w1_bg, 4).tolist()}")

    # lambda_hat from data (TICA), reported beside the value used
    lam_est = [estimate_lambda(full[s].subset(cfg.w1_n_traj).x, lagtime=10, n_bins=cfg.n_bins, box=PRINZ_BOX)
               for s in cfg.seeds]
    ladder = _prinz_ladder(ref, full, bg, cfg, budget, kw, timings, log)
    long_lag = _prinz_long_lag(ref, full, bg, cfg, budget, kw, timings, log)
    spectral = _prinz_chains(ref, full, ladder["ito_fit"], ladder["bop_fit"], ladder["members"], cfg, budget,
                             timings, log)
    interp = _prinz_interpolation(ref, bg, ladder["x_eq"], cfg, budget, kw, cache, timings, log)
    ito, bop = ladder.pop("ito_fit"), ladder.pop("bop_fit")
    ladder.pop("x_eq")
    return {"ref": ref, "config": cfg, "budget": budget, **ladder, "w1_bg": w1_bg, **long_lag,
            "lambda_est": lam_est, **spectral, **interp, "timings": timings,
            "train_seconds": {"prior": bg.seconds, "ito": ito.seconds, "bopito": bop.seconds}}


def _prinz_ladder(ref: Any, full: dict, bg: Any, cfg: ReproConfig, budget: Budget, kw: dict[str, Any],
                  timings: dict[str, float], log: Any) -> dict[str, Any]:
    """The data ladder: ITO vs BoPITO vs the MSM, mean |C error| per (seed, number of trajectories)."""
    members = [(s, n) for n in cfg.ladder for s in cfg.seeds]
    data_l = [full[s].subset(n) for s, n in members]
    prior_l = bg.model.select([cfg.seeds.index(s) for s, _ in members])
    K = len(members)
    t = time.perf_counter()
    ito = fit_model("ito", data_l, n_models=K, max_lag=cfg.max_lag, steps=budget.steps, seed=200,
                    desc="ITO ladder", **kw)
    bop = fit_model("bopito", data_l, prior=prior_l, n_models=K, max_lag=cfg.max_lag, lambda_hat=cfg.lambda_hat,
                    steps=budget.steps, seed=200, desc="BoPITO ladder", **kw)
    timings["train ladder"] = time.perf_counter() - t
    x_eq = ref.sample_boltzmann(budget.n_eval, seed=300)[:, 0]
    c_ref = ref.correlation(cfg.acf_lags)
    t = time.perf_counter()
    acf_ito = evaluate_acf(ito.model, x_eq, cfg.acf_lags, c_ref, steps=budget.sample_steps, seed=301)
    acf_bop = evaluate_acf(bop.model, x_eq, cfg.acf_lags, c_ref, steps=budget.sample_steps, seed=301)
    timings["evaluate ladder"] = time.perf_counter() - t
    # noise floor of the measure: exact transition samples from the same starts, same sample size
    xN_exact = np.stack([ref.sample_transition(x_eq[:, None], lag, seed=310 + j)[:, 0]
                         for j, lag in enumerate(cfg.acf_lags)])
    c_exact_samples = cross_correlation(np.broadcast_to(x_eq, xN_exact.shape), xN_exact)
    noise_floor = float(np.mean(np.abs(c_exact_samples - c_ref)))
    log(f"noise floor of the mean |C error| with {budget.n_eval} samples per lag: {noise_floor:.4f}")
    msm_c, msm_err, msm_its = [], [], []
    for s, n in members:
        msm = fit_msm(full[s].subset(n).x, cfg.msm_lag, n_bins=cfg.n_bins, box=PRINZ_BOX)
        c = msm.correlation(cfg.acf_lags)
        msm_c.append(c)
        msm_err.append(float(np.mean(np.abs(c - c_ref))))
        msm_its.append(float(msm.timescales[0]))
    ladder_rows = []
    for i, (s, n) in enumerate(members):
        ladder_rows.append({"seed": s, "n_traj": n, "ito": float(acf_ito.mean_error[i]),
                            "bopito": float(acf_bop.mean_error[i]), "msm": msm_err[i], "msm_its": msm_its[i]})
    log("ladder (mean |C error|): " + json.dumps(ladder_rows))
    return {"members": members, "ladder": ladder_rows, "acf_ito": acf_ito, "acf_bop": acf_bop,
            "noise_floor": noise_floor, "c_exact_samples": c_exact_samples, "msm_c": np.array(msm_c),
            "c_ref": c_ref, "ito_fit": ito, "bop_fit": bop, "x_eq": x_eq}


def _prinz_long_lag(ref: Any, full: dict, bg: Any, cfg: ReproConfig, budget: Budget, kw: dict[str, Any],
                    timings: dict[str, float], log: Any) -> dict[str, Any]:
    """Equilibrium at a long lag: W1 to Boltzmann of ITO's and BoPITO's samples from the fixed start."""
    S = len(cfg.seeds)
    data_w = [full[s].subset(cfg.w1_n_traj) for s in cfg.seeds]
    t = time.perf_counter()
    ito_w = fit_model("ito", data_w, n_models=S, max_lag=cfg.w1_max_lag, steps=budget.steps, seed=400,
                      desc="ITO N_max=100", **kw)
    bop_w = fit_model("bopito", data_w, prior=bg.model, n_models=S, max_lag=cfg.w1_max_lag,
                      lambda_hat=cfg.lambda_hat, steps=budget.steps, seed=400, desc="BoPITO N_max=100", **kw)
    timings["train long-lag"] = time.perf_counter() - t
    x0 = np.full(2 * budget.n_eval, cfg.x_start)
    long_ito = sample(ito_w.model, x0, cfg.long_lag, steps=budget.long_lag_steps, seed=401)
    long_bop = sample(bop_w.model, x0, cfg.long_lag, steps=budget.long_lag_steps, seed=401)
    w1_ito, w1_bop = w1_members(ref, long_ito), w1_members(ref, long_bop)
    log(f"W1 at lag {cfg.long_lag}: ITO {np.round(w1_ito, 4).tolist()}, BoPITO {np.round(w1_bop, 4).tolist()}")
    return {"w1_ito": w1_ito, "w1_bop": w1_bop, "long_ito": long_ito, "long_bop": long_bop}


def _prinz_chains(ref: Any, full: dict, ito: Any, bop: Any, members: list[tuple[int, int]], cfg: ReproConfig,
                  budget: Budget, timings: dict[str, float], log: Any) -> dict[str, Any]:
    """Spectral check on generated chains of the ladder's largest rung: implied timescale and VAMP-2."""
    t = time.perf_counter()
    i_big = [i for i, (s, n) in enumerate(members) if n == max(cfg.ladder)]
    start = ref.sample_boltzmann(cfg.chain_walkers, seed=500)
    chains = {}
    for name, m in (("ito", ito.model), ("bopito", bop.model)):
        sub = m.select(i_big)
        chains[name] = sample_chain(sub, start, cfg.chain_lag, cfg.chain_len, steps=budget.sample_steps,
                                    seed=501, desc=f"{name} chains")
    its = {name: [float(chain_timescales(ch[k], cfg.chain_lag, n_bins=cfg.n_bins, box=PRINZ_BOX)[0])
                  for k in range(ch.shape[0])] for name, ch in chains.items()}
    vamp = {name: [vamp2_score(ch[k], 1, box=PRINZ_BOX) for k in range(ch.shape[0])]
            for name, ch in chains.items()}
    md_sub = [full[s].x[:, :: cfg.chain_lag] for s in cfg.seeds]
    vamp["md"] = [vamp2_score(x, 1, box=PRINZ_BOX) for x in md_sub]
    msm_full = [fit_msm(full[s].x, cfg.msm_lag, n_bins=cfg.n_bins, box=PRINZ_BOX) for s in cfg.seeds]
    its["msm"] = [float(m.timescales[0]) for m in msm_full]
    timings["chains"] = time.perf_counter() - t
    log(f"implied timescale (frames, exact {ref.timescales[0]:.1f}): {json.dumps(its)}; VAMP-2 {json.dumps(vamp)}")
    return {"its": its, "vamp": vamp}


def _prinz_interpolation(ref: Any, bg: Any, x_eq: np.ndarray, cfg: ReproConfig, budget: Budget, kw: dict[str, Any],
                         cache: Path | None, timings: dict[str, float], log: Any) -> dict[str, Any]:
    """Interpolation: ITO and BoPITO on short runs (N_max = int_max_lag), BoPITO's λ_int fitted per seed; the
    C error at the held-out lags against capped ITO and the prior alone."""
    S = len(cfg.seeds)
    t = time.perf_counter()
    starts = sample_equilibrium(bg.model, cfg.int_n_traj, steps=budget.sample_steps, seed=600)
    short = {s: cached_simulation(cache, system="prinz", n_traj=cfg.int_n_traj, n_frames=cfg.int_max_lag + 1,
                                  x0=starts[k], seed=1000 + s, desc=f"short runs seed {s}")
             for k, s in enumerate(cfg.seeds)}
    lam_short = [estimate_lambda(short[s].x, lagtime=10, n_bins=cfg.n_bins, box=PRINZ_BOX) for s in cfg.seeds]
    data_i = [short[s] for s in cfg.seeds]
    ito_i = fit_model("ito", data_i, n_models=S, max_lag=cfg.int_max_lag, steps=budget.steps, seed=700,
                      desc="ITO short", **kw)
    bop_i = fit_model("bopito", data_i, prior=bg.model, n_models=S, max_lag=cfg.int_max_lag,
                      lambda_hat=float(np.mean(lam_short)), steps=budget.steps, seed=700, desc="BoPITO short", **kw)
    c_fit = ref.correlation(cfg.int_fit_lags)
    c_test = ref.correlation(cfg.int_test_lags)
    x_fit = ref.sample_boltzmann(budget.n_eval, seed=701)[:, 0]
    fits, err_int = [], []
    for k in range(S):
        member = bop_i.model.select([k])
        fit = fit_interpolation(member, x_fit, cfg.int_fit_lags, c_fit, steps=budget.sample_steps, seed=702,
                                lo=0.95, hi=0.99999, n_iter=10)
        fits.append(fit.lambda_int)
        r = evaluate_acf(member.with_lambda(lambda_int=fit.lambda_int), x_eq, cfg.int_test_lags, c_test,
                         steps=budget.sample_steps, seed=703)
        err_int.append(float(r.mean_error[0]))
    r_ito = evaluate_acf(ito_i.model, x_eq, cfg.int_test_lags, c_test, steps=budget.sample_steps, seed=703)
    err_ito_i = [float(v) for v in r_ito.mean_error]
    # the prior alone samples x_N independently of x_0: its correlation function is 0 at every lag
    err_bg_i = [float(np.mean(np.abs(c_test)))] * S
    timings["interpolation"] = time.perf_counter() - t
    log(f"interpolation: lambda_int {np.round(fits, 5).tolist()} (lambda_hat short {np.round(lam_short, 5).tolist()}); "
        f"held-out error BoPITO-int {np.round(err_int, 4).tolist()}, ITO {np.round(err_ito_i, 4).tolist()}, "
        f"prior {np.round(err_bg_i, 4).tolist()}")
    return {"lambda_short": lam_short, "lambda_int": fits, "err_int": err_int, "err_ito_int": err_ito_i,
            "err_bg_int": err_bg_i}


# ---------------------------------------------------------------------------------------------- triple well
TRIPLE_WELL_BOX = ((-2.0, 2.0), (-1.5, 2.5))


@dataclasses.dataclass(frozen=True)
class TripleWellConfig:
    """The 2-D triple-well experiment (deeptime's potential, exact SqRA reference on 40 × 40 cells)."""

    seeds: tuple[int, ...] = (0, 1, 2)
    ladder: tuple[int, ...] = (30, 100, 300)
    n_frames: int = 200
    max_lag: int = 100
    n_prior: int = 20_000
    long_lag: int = 5000
    x_start: tuple[float, float] = (0.0, 1.5)
    acf_lags: tuple[int, ...] = (10, 25, 50, 100, 200, 500, 1000)
    msm_lag: int = 5


def run_triple_well(*, budget: Budget = REPRO_BUDGET, config: TripleWellConfig = TripleWellConfig()
                    ) -> dict[str, Any]:
    """Prior, ITO and BoPITO (λ̂ = the exact λ_2) on short trajectories of the exact grid dynamics of the
    2-D triple well, one ensemble member per seed and ladder rung; deeptime's MLE MSM on the same data.

    Scores: W1 of the x and y marginals (summed) of samples at ``long_lag`` from ``x_start`` against the
    exact Boltzmann marginals, and the mean |C(N) − C_exact(N)| of the x coordinate over ``acf_lags``.
    """
    import torch  # noqa: PLC0415

    torch.set_num_threads(1)
    cfg = config
    t0 = time.perf_counter()
    ref = exact_reference("triple-well-2d")
    lam2 = float(ref.eigenvalues[1])
    members = [(s, n) for s in cfg.seeds for n in cfg.ladder]
    full = {s: ref.sample_trajectories(max(cfg.ladder), cfg.n_frames, seed=2000 + s) for s in cfg.seeds}
    data = [full[s][:n] for s, n in members]
    prior_data = [ref.sample_boltzmann(cfg.n_prior, seed=3000 + s)[:, None, :] for s in cfg.seeds]
    kw = {"width": budget.width, "depth": budget.depth, "emb_dim": budget.emb_dim,
          "n_diffusion": budget.n_diffusion, "batch_size": budget.batch_size, "lr": budget.lr,
          "box": TRIPLE_WELL_BOX, "dim": 2}
    t1 = time.perf_counter()
    bg = fit_model("bg", prior_data, n_models=len(cfg.seeds), steps=budget.bg_steps, seed=1, desc="prior", **kw)
    prior = bg.model.select([cfg.seeds.index(s) for s, _ in members])
    ito = fit_model("ito", data, n_models=len(members), max_lag=cfg.max_lag, steps=budget.steps, seed=2,
                    desc="ITO", **kw)
    bop = fit_model("bopito", data, prior=prior, n_models=len(members), max_lag=cfg.max_lag, lambda_hat=lam2,
                    steps=budget.steps, seed=2, desc="BoPITO", **kw)
    t_train = time.perf_counter() - t1

    def w1(x: np.ndarray) -> float:
        return float(ref.w1_to_boltzmann(x, axis=0) + ref.w1_to_boltzmann(x, axis=1))

    x0 = np.tile(np.asarray(cfg.x_start, dtype=np.float64), (budget.n_eval, 1))
    long = {name: sample(m.model, x0, cfg.long_lag, steps=budget.sample_steps, seed=3)
            for name, m in (("ito", ito), ("bopito", bop))}
    w1s = {name: [w1(v[k]) for k in range(len(members))] for name, v in long.items()}
    w1_prior = [w1(x) for x in sample_equilibrium(bg.model, budget.n_eval, steps=budget.sample_steps, seed=4)]
    eq = ref.sample_boltzmann(budget.n_eval, seed=5)
    c_ref = ref.correlation(cfg.acf_lags)
    acf = {name: evaluate_acf(m.model, eq, cfg.acf_lags, c_ref, steps=budget.sample_steps, seed=6)
           for name, m in (("ito", ito), ("bopito", bop))}
    exact_pairs = np.stack([ref.sample_transition(eq, lag, seed=7 + i)[:, 0] for i, lag in enumerate(cfg.acf_lags)])
    floor = float(np.abs(cross_correlation(np.broadcast_to(eq[:, 0], exact_pairs.shape), exact_pairs) - c_ref).mean())
    msm_err = []
    for (_, _n), d in zip(members, data, strict=True):
        msm = fit_msm(d, cfg.msm_lag, n_bins=20, box=TRIPLE_WELL_BOX)
        lags_ok = [lag for lag in cfg.acf_lags if lag % cfg.msm_lag == 0]
        msm_err.append(float(np.abs(msm.correlation(lags_ok) - ref.correlation(lags_ok)).mean()))
    return {
        "members": [list(m) for m in members], "ladder": list(cfg.ladder), "seeds": list(cfg.seeds),
        "lambda_2": lam2, "timescale": float(ref.timescales[0]),
        "w1": w1s, "w1_prior": w1_prior, "w1_exact_samples": w1(ref.sample_boltzmann(budget.n_eval, seed=8)),
        "w1_start_only": w1(x0),
        "c_err": {name: a.mean_error.tolist() for name, a in acf.items()}, "c_err_msm": msm_err,
        "c_err_zero": float(np.abs(c_ref).mean()), "noise_floor": floor,
        "seconds_train": t_train, "seconds": time.perf_counter() - t0, "config": dataclasses.asdict(cfg),
    }


def repro_command(args: argparse.Namespace) -> int:
    """``iclr25 bopito repro``: the Prinz reproduction (default), ``--system triple-well`` or ``--system alanine``."""
    _check_readme_markers(args)
    if args.system == "alanine":
        return repro_alanine(args)
    if args.system == "triple-well":
        return repro_triple_well(args)
    t_start = time.perf_counter()
    run = RunResult.start(PACKAGE, "repro", seed=args.seed, config={})
    set_torch_threads(args.threads)
    run.machine["device"] = describe_device(torch_device(None))  # `repro --device` (iclr25.utils.device_scope)
    import dataclasses

    from iclr25.utils.seeding import seed_everything

    seed_everything(args.seed)
    cfg = ReproConfig(seeds=tuple(args.seed + s for s in (0, 1, 2)))
    run.config.update({"budget": dataclasses.asdict(REPRO_BUDGET), **dataclasses.asdict(cfg)})
    args.out.mkdir(parents=True, exist_ok=True)
    load0, cpu0 = os.getloadavg(), _cpu_seconds()
    res = run_repro(budget=REPRO_BUDGET, config=cfg, cache=args.out / "cache")
    split = _add_prinz_metrics(run, res, cfg)
    _add_prinz_figures(run, res, cfg, args.out)
    detail = _prinz_details(res, cfg, split)
    detail["seconds"] = time.perf_counter() - t_start
    detail["run"] = {"command": "iclr25 bopito repro" + (f" --seed {args.seed}" if args.seed else ""),
                     "date": time.strftime("%Y-%m-%d", time.gmtime()), "load_at_start": list(load0),
                     "load_at_end": list(os.getloadavg()), "cpu_s": _cpu_seconds() - cpu0,
                     "version": run.version, "threads": args.threads, "note": "before the repro-rung claims"}
    write_details_and_tables(args.out, detail, prinz_tables, "tables.md", getattr(args, "readme", None),
                             "prinz-tables")
    # the registry's claims at the repro rung (5 seeds): claims.json, from which the README's claims table is made
    from .claims import REGISTRY

    report = REGISTRY.run("repro", command="iclr25 bopito repro")
    report.save(args.out)
    for r in report.results:
        run.add(f"claim {r.claim.id} (repro rung, {len(r.seeds)} seeds): mean improvement over {r.claim.baseline}",
                r.mean_improvement, higher_is_better=True)
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    print(f"wrote {args.out / 'claims.json'}")
    return 0


def _check_readme_markers(args: argparse.Namespace) -> None:
    """``--readme``: a UTF-8 file with the begin/end markers of the chosen system's tables, checked before work."""
    readme = getattr(args, "readme", None)
    if readme is None:
        return
    names = {"alanine": "alanine-tables", "triple-well": "triple-well-table", "prinz": "prinz-tables"}
    if not Path(readme).is_file():
        raise FileNotFoundError(f"--readme {readme}: no such file")
    try:
        text = Path(readme).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"--readme {readme}: not a UTF-8 text file") from None
    if f"<!-- {names[args.system]}:begin" not in text or f"<!-- {names[args.system]}:end -->" not in text:
        raise ValueError(f"--readme {readme}: no <!-- {names[args.system]}:begin/end --> markers to write between")


def _add_prinz_metrics(run: RunResult, res: dict[str, Any], cfg: ReproConfig) -> dict[str, tuple[float, float]]:
    """The Prinz reproduction's numbers into ``run``; returns the |C error| split at N = 100 (short lags:
    dynamics; long lags: relaxation to equilibrium) per model and rung, and of the noise floor."""
    ref, rows = res["ref"], res["ladder"]

    def mean_at(name: str, n: int) -> float:
        return float(np.mean([r[name] for r in rows if r["n_traj"] == n]))

    run.add(f"W1(BoPITO at lag {cfg.long_lag}, Boltzmann), mean of 3 seeds", float(np.mean(res["w1_bop"])),
            peer=float(np.mean(res["w1_ito"])), peer_name="ITO (N_max=100)", higher_is_better=False)
    run.add("W1(prior samples, Boltzmann), mean of 3 seeds", float(np.mean(res["w1_bg"])), higher_is_better=False)
    for n in cfg.ladder:
        run.add(f"mean |C error| BoPITO, {n} trajectories", mean_at("bopito", n), peer=mean_at("ito", n),
                peer_name="ITO", higher_is_better=False)
    for n in cfg.ladder:
        run.add(f"mean |C error| MSM (deeptime MLE, lag {cfg.msm_lag}), {n} trajectories", mean_at("msm", n),
                higher_is_better=False)
    run.add(f"noise floor of mean |C error| (exact samples, {REPRO_BUDGET.n_eval} per lag)", res["noise_floor"],
            higher_is_better=False)
    short = np.asarray(cfg.acf_lags) <= 100
    e_floor = np.abs(res["c_exact_samples"] - res["c_ref"])
    split = {"floor": (float(e_floor[short].mean()), float(e_floor[~short].mean()))}
    for n in cfg.ladder:
        idx = [i for i, (_, m) in enumerate(res["members"]) if m == n]
        for name, acf in (("ito", res["acf_ito"]), ("bopito", res["acf_bop"])):
            e = acf.error[idx]
            split[f"{name} {n}"] = (float(e[:, short].mean()), float(e[:, ~short].mean()))
        run.add(f"|C error| N<=100 BoPITO, {n} trajectories", split[f"bopito {n}"][0],
                peer=split[f"ito {n}"][0], peer_name="ITO", higher_is_better=False)
        run.add(f"|C error| N>=200 BoPITO, {n} trajectories", split[f"bopito {n}"][1],
                peer=split[f"ito {n}"][1], peer_name="ITO", higher_is_better=False)
    run.add("noise floor N<=100 / N>=200", split["floor"][0], peer=split["floor"][1], peer_name="N>=200",
            higher_is_better=False)
    run.add("data efficiency: err(BoPITO, 100) / err(ITO, 1000)", mean_at("bopito", 100) / mean_at("ito", 1000),
            higher_is_better=False)
    run.add("interpolation: held-out |C error|, BoPITO with fitted λ_int", float(np.mean(res["err_int"])),
            peer=float(np.mean(res["err_ito_int"])), peer_name="ITO capped at 50", higher_is_better=False)
    run.add("interpolation: held-out |C error|, prior alone (C = 0)", float(np.mean(res["err_bg_int"])),
            higher_is_better=False)
    run.add("fitted λ_int (mean of seeds)", float(np.mean(res["lambda_int"])))
    run.add("λ̂ estimated by TICA from 100 trajectories (mean of seeds)", float(np.mean(res["lambda_est"])))
    exact_its = float(ref.timescales[0])
    run.add("slowest implied timescale of BoPITO chains (frames)", float(np.mean(res["its"]["bopito"])),
            peer=exact_its, peer_name="exact", higher_is_better=None)
    run.add("slowest implied timescale of ITO chains (frames)", float(np.mean(res["its"]["ito"])),
            peer=exact_its, peer_name="exact", higher_is_better=None)
    run.add("slowest implied timescale, deeptime MSM on MD (frames)", float(np.mean(res["its"]["msm"])),
            peer=exact_its, peer_name="exact", higher_is_better=None)
    run.add("VAMP-2 of BoPITO chains", float(np.mean(res["vamp"]["bopito"])),
            peer=float(np.mean(res["vamp"]["md"])), peer_name="MD", higher_is_better=None)
    run.add("VAMP-2 of ITO chains", float(np.mean(res["vamp"]["ito"])),
            peer=float(np.mean(res["vamp"]["md"])), peer_name="MD", higher_is_better=None)
    for k, v in res["timings"].items():
        run.add(f"time: {k}", v, unit="s", higher_is_better=False, timing=True)
    return split


def _add_prinz_figures(run: RunResult, res: dict[str, Any], cfg: ReproConfig, out: Path) -> None:
    """acf.png, density.png and ladder.png (seed 0, 100 trajectories), listed in ``run``."""
    from .figures import plot_acf, plot_densities, plot_ladder

    ref, rows = res["ref"], res["ladder"]
    i100 = [i for i, (s, n) in enumerate(res["members"]) if n == 100][0]
    fine = np.unique(np.geomspace(1, 1000, 80).astype(int))
    f1 = plot_acf(out / "acf.png", cfg.acf_lags,
                  {"MSM (deeptime)": res["msm_c"][i100], "ITO": res["acf_ito"].c_model[i100],
                   "BoPITO": res["acf_bop"].c_model[i100]}, fine, ref.correlation(fine),
                  title="Prinz, 100 trajectories (seed 0)")
    f2 = plot_densities(out / "density.png", ref.axes[0], ref.density(),
                        {"ITO (N_max=100)": res["long_ito"][0, :, 0], "BoPITO": res["long_bop"][0, :, 0]},
                        title=f"lag {cfg.long_lag} from x0 = {cfg.x_start}")
    f3 = plot_ladder(out / "ladder.png", rows, {"ito": "ITO", "bopito": "BoPITO", "msm": "MSM (deeptime)"},
                     floor=res["noise_floor"])
    for f in (f1, f2, f3):
        run.add_figure(f, relative_to=out)


def _prinz_details(res: dict[str, Any], cfg: ReproConfig, split: dict[str, tuple[float, float]]) -> dict[str, Any]:
    """The numbers of ``details.json`` (the README tables are rendered from them)."""
    ref = res["ref"]
    detail = {k: res[k] for k in ("ladder", "noise_floor", "w1_bg", "w1_ito", "w1_bop", "lambda_est", "lambda_short", "its",
                                  "vamp", "lambda_int", "err_int", "err_ito_int", "err_bg_int", "timings",
                                  "train_seconds")}
    detail["acf_lags"] = list(cfg.acf_lags)
    detail["c_exact"] = res["c_ref"].tolist()
    detail["c_ito"] = res["acf_ito"].c_model.tolist()
    detail["c_bopito"] = res["acf_bop"].c_model.tolist()
    detail["c_msm"] = res["msm_c"].tolist()
    detail["members"] = res["members"]
    detail["error_split_short_long"] = split
    detail["exact_timescale"] = float(ref.timescales[0])
    return detail


def repro_triple_well(args: argparse.Namespace) -> int:
    """``repro --system triple-well``: prior, ITO, BoPITO and deeptime's MSM on the 2-D triple well."""
    import dataclasses

    import numpy as np

    from iclr25.utils.seeding import seed_everything


    cfg = TripleWellConfig(seeds=tuple(args.seed + s for s in (0, 1, 2)))
    budget = dataclasses.replace(REPRO_BUDGET, bg_steps=4000)
    run = RunResult.start(PACKAGE, "repro-triple-well", seed=args.seed,
                          config={"budget": dataclasses.asdict(budget), **dataclasses.asdict(cfg)})
    set_torch_threads(args.threads)
    run.machine["device"] = describe_device(torch_device(None))  # `repro --device` (iclr25.utils.device_scope)
    seed_everything(args.seed)
    load0, cpu0 = os.getloadavg(), _cpu_seconds()
    res = run_triple_well(budget=budget, config=cfg)
    res["run"] = {"command": "iclr25 bopito repro --system triple-well" + (f" --seed {args.seed}" if args.seed else ""),
                  "date": time.strftime("%Y-%m-%d", time.gmtime()), "load_at_start": list(load0),
                  "load_at_end": list(os.getloadavg()), "cpu_s": _cpu_seconds() - cpu0,
                  "version": run.version, "threads": args.threads}
    mem = res["members"]

    def at(table: list[float], n: int) -> float:
        return float(np.mean([table[i] for i, m in enumerate(mem) if m[1] == n]))

    for n in cfg.ladder:
        run.add(f"W1(x) + W1(y) at lag {cfg.long_lag} from {cfg.x_start}, BoPITO, {n} trajectories",
                at(res["w1"]["bopito"], n), peer=at(res["w1"]["ito"], n), peer_name="ITO", higher_is_better=False)
    for n in cfg.ladder:
        run.add(f"mean |C(N) error| of x, BoPITO, {n} trajectories", at(res["c_err"]["bopito"], n),
                peer=at(res["c_err"]["ito"], n), peer_name="ITO", higher_is_better=False)
        run.add(f"mean |C(N) error| of x, deeptime MSM (lag {cfg.msm_lag}, 20×20 cells), {n} trajectories",
                at(res["c_err_msm"], n), higher_is_better=False)
    run.add("W1 of the priors", float(np.mean(res["w1_prior"])), higher_is_better=False)
    run.add("W1 of exact Boltzmann samples of the same size (noise floor)", res["w1_exact_samples"],
            higher_is_better=False)
    run.add("W1 of the start point only (trivial)", res["w1_start_only"], higher_is_better=False)
    run.add("mean |C error| of exact transition samples (noise floor)", res["noise_floor"], higher_is_better=False)
    run.add("mean |C error| of C = 0 (trivial)", res["c_err_zero"], higher_is_better=False)
    run.add("time: training", res["seconds_train"], unit="s", higher_is_better=False, timing=True)
    args.out.mkdir(parents=True, exist_ok=True)
    write_details_and_tables(args.out, res, triple_well_table, "table.md", getattr(args, "readme", None),
                             "triple-well-table")
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    print(f"wrote {args.out / 'details.json'} and {args.out / 'table.md'} (the README's triple-well table)")
    return 0


def write_details_and_tables(out: Path, details: dict, render, table_file: str, readme: str | Path | None,
                             section: str) -> str:
    """Write ``out/details.json``, render the tables from the plain-JSON form of the same dict (what a reader of
    the file sees), write them to ``out/<table_file>`` and, with ``readme``, into its ``section`` markers."""
    from iclr25.utils.io import atomic_write  # noqa: PLC0415

    text = json.dumps(details, indent=1, default=float)
    with atomic_write(out / "details.json") as f:
        f.write(text)
    tables = render(json.loads(text))
    with atomic_write(out / table_file) as f:
        f.write(tables + "\n")
    if readme is not None:
        replace_readme_section(readme, section, tables)
    return tables


def replace_readme_section(readme: str | Path, name: str, table: str) -> Path:
    """Write ``table`` into ``readme`` between ``<!-- NAME:begin ... -->`` and ``<!-- NAME:end -->`` (atomically);
    the markers must be there already."""
    from iclr25.utils.io import atomic_write  # noqa: PLC0415

    path = Path(readme)
    text = path.read_text(encoding="utf-8")
    begin, end = f"<!-- {name}:begin", f"<!-- {name}:end -->"
    if begin not in text or end not in text:
        raise ValueError(f"--readme {path}: no '{begin} ... -->' / '{end}' markers")
    i = text.index("-->", text.index(begin)) + 3
    j = text.index(end)
    with atomic_write(path) as f:
        f.write(text[:i] + "\n" + table + "\n" + text[j:])
    return path


def readme_section(readme: str | Path, name: str) -> str:
    """The text between the ``NAME`` markers of ``readme`` (see :func:`replace_readme_section`)."""
    text = Path(readme).read_text(encoding="utf-8")
    i = text.index("-->", text.index(f"<!-- {name}:begin")) + 3
    return text[i:text.index(f"<!-- {name}:end -->")].strip("\n")


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (user + system)."""
    import resource  # noqa: PLC0415

    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def _cell(values: list[float], digits: int = 3, bold: bool = False) -> str:
    m = f"{float(np.mean(values)):.{digits}f}"
    return f"{'**' + m + '**' if bold else m} ({', '.join(f'{v:.{digits}f}' for v in values)})"


def triple_well_table(details: dict[str, Any]) -> str:
    """The README's triple-well table (markdown), made from the ``details.json`` that
    ``iclr25 bopito repro --system triple-well`` wrote: per rung the mean over seeds and the per-seed values of
    W1 at the long lag and of the C(N) error, ITO / BoPITO / MSM, with the trivial references and noise floors."""
    cfg, mem = details["config"], details["members"]
    rows = []
    for n in details["ladder"]:
        idx = [i for i, m in enumerate(mem) if m[1] == n]

        def vals(table: list[float], idx: list[int] = idx) -> list[float]:
            return [float(table[i]) for i in idx]

        w_i, w_b = vals(details["w1"]["ito"]), vals(details["w1"]["bopito"])
        c_i, c_b, c_m = vals(details["c_err"]["ito"]), vals(details["c_err"]["bopito"]), vals(details["c_err_msm"])
        rows.append(f"| {n} | {_cell(w_i)} | {_cell(w_b, bold=np.mean(w_b) < np.mean(w_i))} | {_cell(c_i)} | "
                    f"{_cell(c_b, bold=np.mean(c_b) < np.mean(c_i))} | {_cell(c_m)} |")
    head = _run_line(details, "iclr25 bopito repro --system triple-well")
    lag, x0 = cfg["long_lag"], tuple(cfg["x_start"])
    table = [head, "",
             f"| trajectories (× {cfg['n_frames']} frames) | W1(x) + W1(y) at lag {lag} from {x0}, ITO | … BoPITO | "
             rf"mean \|C(N) error\| of x, ITO | … BoPITO | … deeptime MSM (lag {cfg['msm_lag']}) |",
             "|---|---|---|---|---|---|", *rows, "",
             f"References: the priors' W1 {_cell(details['w1_prior'])}; exact Boltzmann samples of the same size "
             f"{details['w1_exact_samples']:.3f} (noise floor); the start point only {details['w1_start_only']:.3f}. "
             f"C(N) error of exact transition samples {details['noise_floor']:.3f} (noise floor), of C = 0 "
             f"{details['c_err_zero']:.3f} (trivial). Exact λ_2 = {details['lambda_2']:.5f} per frame (slowest "
             f"implied timescale {details['timescale']:.1f} frames), used as BoPITO's λ̂."]
    return "\n".join(table)


def _run_line(details: dict[str, Any], default_command: str) -> str:
    run = details.get("run", {})
    load = run.get("load_at_start")
    return (f"`{run.get('command', default_command)}` (iclr25-bopito {run.get('version', '?')}), "
            f"{run.get('date', '?')}, seeds {', '.join(map(str, details['seeds']))}; {details['seconds']:.0f} s wall, "
            f"{run.get('cpu_s', float('nan')):.0f} s CPU" + (f", load {load[0]:.1f} at start" if load else "")
            + ". Values: mean (per seed).")


def prinz_tables(details: dict[str, Any]) -> str:
    """The README's Prinz tables (markdown), made from the ``details.json`` that ``iclr25 bopito repro`` wrote:
    the headline numbers per seed, the data-efficiency ladder (ITO / BoPITO / MSM) and its split into short and
    long lags, each beside its noise floor."""
    rows = details["ladder"]
    seeds = sorted({int(m[0]) for m in details["members"]})
    ladder = sorted({int(r["n_traj"]) for r in rows})

    def at(name: str, n: int) -> list[float]:
        return [float(r[name]) for s in seeds for r in rows if r["n_traj"] == n and r["seed"] == s]

    split = details["error_split_short_long"]
    run = details.get("run", {})
    load = run.get("load_at_start")
    exact = details["exact_timescale"]
    ratio = float(np.mean(at("bopito", 100)) / np.mean(at("ito", ladder[-1]))) if 100 in ladder else float("nan")
    text = [f"`{run.get('command', 'iclr25 bopito repro')}` (iclr25-bopito {run.get('version', '?')}), "
            f"{run.get('date', '?')}, seeds {', '.join(map(str, seeds))}; {details['seconds']:.0f} s wall, "
            f"{run.get('cpu_s', float('nan')):.0f} s CPU before the repro-rung claims"
            + (f", load {load[0]:.1f} at start" if load else "") + ". Values: mean (per seed).", "",
            "| measure | BoPITO | ITO | reference |", "|---|---|---|---|",
            f"| W1(samples at lag 5000 from x0 = 0.75, Boltzmann), N_max = 100, 100 trajectories | "
            f"{_cell(details['w1_bop'])} | {_cell(details['w1_ito'])} | the priors' own samples "
            f"{_cell(details['w1_bg'])} |",
            f"| data efficiency: mean \\|C error\\| of BoPITO on 100 trajectories / ITO on {ladder[-1]} | "
            f"{ratio:.2f} | | noise floor {details['noise_floor']:.3f} (ladder below) |",
            "| interpolation (N_max = 50, prior-seeded short runs, λ_int fitted at N = 200, 500): held-out "
            f"\\|C error\\| at N = 100, 300, 1000 | {_cell(details['err_int'])} | {_cell(details['err_ito_int'])} | "
            f"prior alone (C = 0) {details['err_bg_int'][0]:.3f} |",
            f"| slowest implied timescale of chains of lag-20 steps (frames) | {_cell(details['its']['bopito'], 1)} | "
            f"{_cell(details['its']['ito'], 1)} | exact {exact:.1f}; deeptime MSM on the MD "
            f"{_cell(details['its']['msm'], 1)} |",
            f"| VAMP-2 of the chains at one step | {_cell(details['vamp']['bopito'])} | {_cell(details['vamp']['ito'])} "
            f"| MD at the same lag {_cell(details['vamp']['md'])} |",
            f"| λ̂ by TICA from 100 trajectories / from the interpolation's short runs; fitted λ_int | "
            f"{_cell(details['lambda_est'], 4)} / {_cell(details['lambda_short'], 4)}; {_cell(details['lambda_int'], 4)} "
            f"| | exact λ_2 {np.exp(-1.0 / exact):.5f} |", "",
            "Data-efficiency ladder, mean \\|C(N) − C_exact(N)\\| over N ∈ {"
            + ", ".join(map(str, details["acf_lags"])) + "}:", "",
            "| trajectories (× 1000 frames) | ITO | BoPITO | BoPITO / ITO | MSM (deeptime) |", "|---|---|---|---|---|"]
    for n in ladder:
        i, b = at("ito", n), at("bopito", n)
        text.append(f"| {n} | {_cell(i)} | {_cell(b, bold=np.mean(b) < np.mean(i))} | "
                    f"{np.mean(b) / np.mean(i):.2f} | {_cell(at('msm', n))} |")
    text += ["", f"The same error split at N = 100 (noise floor of exact samples: {details['noise_floor']:.3f} overall):",
             "", "| trajectories | ITO, N ≤ 100 | BoPITO, N ≤ 100 | ITO, N ≥ 200 | BoPITO, N ≥ 200 |",
             "|---|---|---|---|---|"]
    for n in (n for n in ladder if f"ito {n}" in split):
        (i_s, i_l), (b_s, b_l) = split[f"ito {n}"], split[f"bopito {n}"]
        text.append(f"| {n} | {i_s:.3f} | {b_s:.3f} | {i_l:.3f} | {b_l:.3f} |")
    f_s, f_l = split["floor"]
    text.append(f"| exact samples (noise floor) | {f_s:.3f} | {f_s:.3f} | {f_l:.3f} | {f_l:.3f} |")
    return "\n".join(text)


def alanine_tables(details: dict[str, Any]) -> str:
    """The README's alanine-dipeptide tables (markdown), made from the ``details.json`` that
    ``iclr25 bopito repro --system alanine`` wrote: φ correlation-function error and long-lag free-energy error
    per rung (ITO / BoPITO / deeptime MSM on the same short trajectories), kinetics of generated chains, λ̂."""
    mem, ladder = details["members"], details["ladder"]

    def vals(table: list[float], n: int) -> list[float]:
        return [float(table[i]) for i, m in enumerate(mem) if m[1] == n]

    def rows(key: str, msm: list[float]) -> list[str]:
        out = []
        for n in ladder:
            i, b = vals(details[key]["ito"], n), vals(details[key]["bopito"], n)
            out.append(f"| {n} | {_cell(i)} | {_cell(b, bold=np.mean(b) < np.mean(i))} | {_cell(vals(msm, n))} |")
        return out

    tr = details["trivial"]
    lags = ", ".join(map(str, details["acf_lags"]))
    n_eval = details["scale"]["n_eval"]
    text = [_run_line(details, "iclr25 bopito repro --system alanine"), "", alanine_data_line(details["data_meta"]), "",
            rf"φ correlation-function error, mean \|C(N) − C_MD(N)\| over N ∈ {{{lags}}} ps (trivial C = 0: "
            f"{tr['c_err_zero']:.3f}):", "",
            f"| trajectories (× {details['max_lag'] + 1} ps) | ITO | BoPITO | MSM (deeptime, same data) |",
            "|---|---|---|---|", *rows("c_err", details["msm"]["c_err"]), "",
            f"φ/ψ free-energy error (kT; 24 bins per angle, MD-weighted) of {n_eval} samples at lag "
            f"{details['long_lag']} ps from φ = −80°, ψ = 70° (trivial: uniform {tr['fe_uniform']:.2f}, the start "
            f"point {tr['fe_start_only']:.2f}; MD samples of the same size {tr['fe_md_sample']:.3f}, the noise "
            f"floor; the priors' own samples {_cell(details['fe_prior'], 2)}):", "",
            "| trajectories | ITO | BoPITO | MSM stationary (same data) |", "|---|---|---|---|",
            *rows("fe", details["msm"]["fe"])]
    kin = details.get("kinetics") or {}
    sc = details["scale"]
    t_md = details["timescale_md"]
    if kin:
        lag = kin.get("chain_lag", sc["chain_lag"])
        pairs = details["data_meta"]["n_eq"] * (details["data_meta"]["eq_frames"] // lag - 1)
        text += ["", "#### Alanine kinetics", "",
                 f"Generated dynamics: {sc['n_chains']} chains of {sc['chain_steps']} steps of {lag} ps per model "
                 f"from the same equilibrium frames (BoPITO and ITO: one sampled transition at lag {lag} ps per step; "
                 f"the MSM peer: its transition matrix at lag {lag} ps, estimated from the same short trajectories "
                 f"as the models, one step at a time). Scored on the {sc['n_grid']} × {sc['n_grid']} φ/ψ grid: "
                 f"slowest implied timescale of an MSM of the chains at one step, VAMP-2 of the grid indicators at "
                 f"one step (4 singular values). The equilibrium MD at the same lag and grid "
                 f"({details['data_meta']['n_eq']} runs, {pairs} pairs): slowest implied timescale "
                 f"{kin['md']['timescale']:.2f} ps, VAMP-2 {kin['md']['vamp2']:.3f} (trivial: 1, no dynamics).", "",
                 "| trajectories | slowest timescale (ps), ITO chains | … BoPITO chains | … MSM (same data) | "
                 "VAMP-2, ITO chains | … BoPITO chains | … MSM chains (same data) |",
                 "|---|---|---|---|---|---|---|"]
        for n in ladder:
            text.append(f"| {n} | {_cell(vals(kin['ito']['timescale'], n), 2)} | "
                        f"{_cell(vals(kin['bopito']['timescale'], n), 2)} | "
                        f"{_cell(vals(details['msm']['timescale'], n), 2)} | {_cell(vals(kin['ito']['vamp2'], n))} | "
                        f"{_cell(vals(kin['bopito']['vamp2'], n))} | {_cell(vals(kin['msm']['vamp2'], n))} |")
    it = details.get("interpolation") or {}
    if it:
        lam = it["lambda_int"]
        text += ["", "#### Alanine interpolation", "",
                 f"ITO and BoPITO trained on the same short trajectories with N_max = {it['max_lag']} ps "
                 f"({sc['int_steps'] or sc['steps']} steps each); BoPITO's λ_int fitted per model to C_MD at "
                 f"{', '.join(map(str, it['fit_lags']))} ps; C(N) error at the held-out lags "
                 f"{', '.join(map(str, it['test_lags']))} ps (C_MD there: "
                 f"{', '.join(f'{c:.3f}' for c in it['c_test'])}), and at the trained lags "
                 f"{', '.join(map(str, it['short_lags']))} ps. The prior alone (C = 0) has held-out error "
                 f"{it['err_prior']:.3f}.", "",
                 r"| trajectories | held-out \|C error\|, ITO capped at N_max | … BoPITO with fitted λ_int | "
                 r"… BoPITO with λ̂ beyond N_max (no fit) | fitted λ_int | \|C error\| at N ≤ N_max, ITO | … BoPITO |",
                 "|---|---|---|---|---|---|---|"]
        for n in ladder:
            b_i, b_b = vals(it["err_ito"], n), vals(it["err_bopito"], n)
            text.append(f"| {n} | {_cell(b_i)} | {_cell(b_b, bold=np.mean(b_b) < min(np.mean(b_i), it['err_prior']))} "
                        f"| {_cell(vals(it['err_bopito_lambda_hat'], n))} | {_cell(vals(lam, n))} | "
                        f"{_cell(vals(it['err_short_ito'], n))} | {_cell(vals(it['err_short_bopito'], n))} |")
    text += ["", f"λ̂ from the short trajectories (MSM at lag {sc['msm_lag']} ps): {details['lambda_hat']:.3f} per frame "
                 f"(equilibrium runs: {details['lambda_hat_equilibrium']:.3f}); slowest implied timescale of the "
                 f"equilibrium MD (MSM at lag {sc['msm_lag']} ps, the reference above) {t_md:.2f} ps. Frames with "
                 f"φ > 0 (C7ax, αL) in the equilibrium MD: {100 * details['phi_positive_fraction']:.2f} %."]
    return "\n".join(text)


def alanine_data_line(meta: dict[str, Any]) -> str:
    """One line on how the alanine data set was made (from its ``meta``): command, sizes, MD time."""
    ns = (meta["n_eq"] * (meta["eq_frames"] + meta["burn_in_frames"]) + meta["n_short"] * meta["short_frames"]) \
        * meta["frame_ps"] / 1000.0
    wall = meta["seconds_equilibrium"] + meta["seconds_short"]
    load = meta.get("load_at_end")
    return (f"Data: `{meta['command']}` (OpenMM {meta.get('openmm', '?')}, CPU platform, one thread): "
            f"{meta['n_eq']} equilibrium runs × {meta['eq_frames']} frames after {meta['burn_in_frames']} frames of "
            f"burn-in and {meta['n_short']} short runs × {meta['short_frames']} frames started from frames of those "
            f"runs, frames of {meta['frame_ps']:g} ps: {ns:.1f} ns of MD in {wall:.0f} s wall, "
            f"{meta['cpu_seconds']:.0f} s CPU" + (f" (load {load[0]:.1f} at the end)" if load else "") + ".")


def repro_alanine(args: argparse.Namespace) -> int:
    """``repro --system alanine``: the alanine-dipeptide ladder and claims on the shipped MD (or ``--data``)."""
    import dataclasses

    from iclr25.utils.device import default_device
    from iclr25.utils.seeding import seed_everything

    from .alanine import load_data, load_shipped
    from .alanine_experiment import ALANINE_SCALES, run_alanine
    from .claims import REGISTRY, measure_alanine

    data = load_shipped() if args.data is None else load_data(args.data)
    sc = ALANINE_SCALES["alanine"]
    run = RunResult.start(PACKAGE, "repro-alanine", seed=args.seed,
                          config={"scale": dataclasses.asdict(sc), "data": data.meta})
    set_torch_threads(args.threads)
    run.machine["device"] = describe_device(torch_device(None))  # `repro --device` (iclr25.utils.device_scope)
    seed_everything(args.seed)
    seeds = tuple(args.seed + s for s in (0, 1, 2))
    load0, cpu0 = os.getloadavg(), _cpu_seconds()
    if args.data is None and seeds == REGISTRY.rung_seeds("alanine"):
        # the registry's claims below reuse these models: the same cache key (their device is default_device())
        res = measure_alanine(seeds, "alanine", default_device())
    else:
        res = run_alanine(data, seeds, sc, desc=True)
    res = {**res, "run": {"command": "iclr25 bopito repro --system alanine"
                                     + (f" --seed {args.seed}" if args.seed else "")
                                     + (f" --data {args.data}" if args.data is not None else ""),
                          "date": time.strftime("%Y-%m-%d", time.gmtime()), "load_at_start": list(load0),
                          "load_at_end": list(os.getloadavg()), "cpu_s": _cpu_seconds() - cpu0,
                          "version": run.version, "threads": args.threads}}
    _add_alanine_metrics(run, res, sc)
    args.out.mkdir(parents=True, exist_ok=True)
    write_details_and_tables(args.out, res, alanine_tables, "tables.md", getattr(args, "readme", None),
                             "alanine-tables")
    if args.data is None and seeds == REGISTRY.rung_seeds("alanine"):
        report = REGISTRY.run("alanine", command="iclr25 bopito repro --system alanine")
        report.save(args.out)
    else:
        print("claims.json is written only for the shipped data at --seed 0 (the registry's seeds)")
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    print(f"wrote {args.out / 'claims.json'}, {args.out / 'details.json'} and {args.out / 'tables.md'}")
    return 0

def _add_alanine_metrics(run: RunResult, res: dict[str, Any], sc: Any) -> None:
    """The alanine rung's numbers into ``run``: per ladder rung, BoPITO beside ITO and the MSM peer, the trivial
    references, λ̂, the kinetics of the chains and the interpolation."""
    import numpy as np

    mem = res["members"]

    def at(table: list[float], n: int) -> tuple[float, list[float]]:
        v = [float(table[i]) for i, m in enumerate(mem) if m[1] == n]
        return float(np.mean(v)), v

    for n in sc.ladder:
        run.add(f"φ/ψ free-energy error at lag {sc.long_lag} ps (kT), BoPITO, {n} trajectories",
                at(res["fe"]["bopito"], n)[0], peer=at(res["fe"]["ito"], n)[0], peer_name="ITO",
                higher_is_better=False)
    for n in sc.ladder:
        run.add(f"mean |C(N) error|, BoPITO, {n} trajectories", at(res["c_err"]["bopito"], n)[0],
                peer=at(res["c_err"]["ito"], n)[0], peer_name="ITO", higher_is_better=False)
        run.add(f"mean |C(N) error|, deeptime MSM (lag 1, 10×10 grid), {n} trajectories",
                at(res["msm"]["c_err"], n)[0], higher_is_better=False)
    run.add("free-energy error of the priors (kT)", float(np.mean(res["fe_prior"])), higher_is_better=False)
    run.add("free-energy error of MD samples of the same size (noise floor)", res["trivial"]["fe_md_sample"],
            higher_is_better=False)
    run.add("free-energy error of uniform samples (trivial)", res["trivial"]["fe_uniform"], higher_is_better=False)
    run.add("mean |C(N) error| of C = 0 (trivial)", res["trivial"]["c_err_zero"], higher_is_better=False)
    run.add(f"λ̂ from the short trajectories (MSM, lag {sc.msm_lag} ps)", res["lambda_hat"])
    run.add(f"λ̂ from the equilibrium runs (MSM, lag {sc.msm_lag} ps)", res["lambda_hat_equilibrium"])
    run.add("slowest implied timescale, MSM of the equilibrium MD (ps)", res["timescale_md"])
    kin = res["kinetics"]
    if kin:
        for n in sc.ladder:
            for name in ("bopito", "ito"):
                run.add(f"slowest implied timescale of {name} chains ({sc.chain_lag}-ps steps), {n} trajectories (ps)",
                        at(kin[name]["timescale"], n)[0], peer=kin["md"]["timescale"], peer_name="MSM of the MD",
                        higher_is_better=None)
            run.add(f"slowest implied timescale, deeptime MSM (lag {sc.chain_lag} ps), {n} trajectories (ps)",
                    at(res["msm"]["timescale"], n)[0], peer=kin["md"]["timescale"], peer_name="MSM of the MD",
                    higher_is_better=None)
            for name in ("bopito", "ito", "msm"):
                run.add(f"VAMP-2 of {name} chains ({sc.chain_lag}-ps steps), {n} trajectories",
                        at(kin[name]["vamp2"], n)[0], peer=kin["md"]["vamp2"], peer_name="MD", higher_is_better=None)
    it = res["interpolation"]
    if it:
        for n in sc.ladder:
            run.add(f"interpolation: held-out |C error|, BoPITO with fitted λ_int, {n} trajectories",
                    at(it["err_bopito"], n)[0], peer=at(it["err_ito"], n)[0], peer_name="ITO capped at N_max",
                    higher_is_better=False)
        run.add("interpolation: held-out |C error|, prior alone (C = 0)", it["err_prior"], higher_is_better=False)
    run.add("time: training (all families)", res["seconds_train"], unit="s", higher_is_better=False, timing=True)
    run.add("time: whole experiment", res["seconds"], unit="s", higher_is_better=False, timing=True)


def alanine_ablation_table(details: dict[str, Any]) -> str:
    """The README's alanine ablation table (markdown), made from the ``details.json`` that
    ``benchmarks/alanine_ablation.py`` wrote: per variant the kinetics errors of BoPITO and ITO chains beside the
    MSM peer, and the one-step correlation C(1 ps) of the models beside the MD's."""
    run = details["run"]
    load = run.get("load_at_start")
    text = [f"`{run['command']}`, {run['date']}, seeds {', '.join(map(str, details['seeds']))}, "
            f"{details['n_traj']} short trajectories; {run['wall_s']:.0f} s wall, {run['cpu_s']:.0f} s CPU"
            + (f", load {load[0]:.1f} at start" if load else "") + ". Values: mean (per seed).", "",
            "| variant | slowest-timescale rel. error, BoPITO | … ITO | … MSM (same data) | \\|VAMP-2 error\\|, "
            "BoPITO | … ITO | … MSM chains | C(1 ps), BoPITO | … ITO | … MD |", "|---|---|---|---|---|---|---|---|---|---|"]
    for name, row in details["variants"].items():
        text.append(f"| {name} | {_cell(row['its_rel_bopito'])} | {_cell(row['its_rel_ito'])} | "
                    f"{_cell(row['its_rel_msm'])} | {_cell(row['vamp_err_bopito'])} | {_cell(row['vamp_err_ito'])} | "
                    f"{_cell(row['vamp_err_msm'])} | {_cell(row['c1_bopito'])} | {_cell(row['c1_ito'])} | "
                    f"{row['c1_md']:.3f} |")
    return "\n".join(text)


def alanine_solvent_table(details: dict[str, Any]) -> str:
    """The Evidence page's solvent table (markdown), made from the ``details.json`` that
    ``benchmarks/alanine_solvent.py`` wrote: per seed, the alanine main claims decided at 3 seeds on the GBSA
    (implicit-solvent) data (rung ``alanine-gbsa``, its ``claims.json``) beside the same claims on the vacuum data
    (rung ``alanine``, ``docs/alanine/claims.json``, and ITO on 100 trajectories from ``docs/alanine/details.json``),
    with the references and the data each rests on."""
    g, v, run = details["gbsa"], details["vacuum"], details.get("run", {})
    cg, cv = {c["id"]: c for c in g["claims"]}, {c["id"]: c for c in v["claims"]}
    de_g, de_v = cg["alanine-gbsa-data-efficiency"], cv["alanine-data-efficiency"]
    in_g, in_v = cg["alanine-gbsa-interpolation"], cv["alanine-interpolation"]
    seeds = de_g["seeds"]
    meta, res = g["data_meta"], g["result"]

    def yes(c: dict[str, Any], k: int) -> str:
        return "yes" if c["holds_per_seed"][k] else "**no**"

    def ex(c: dict[str, Any], k: int, key: str) -> float:
        return float(c["extra"][k][key])

    w = details.get("tip3p")  # the explicit-water claims (rung alanine-tip3p), beside GBSA when present
    cw = {c["id"]: c for c in w["claims"]} if w else {}
    de_w, in_w = cw.get("alanine-tip3p-data-efficiency"), cw.get("alanine-tip3p-interpolation")

    def water(c: dict[str, Any] | None, s: int, interp: bool) -> str:
        if c is None:
            return ""
        k = c["seeds"].index(s)
        ref = (f"{ex(c, k, 'ito_capped'):.3f} / {ex(c, k, 'prior_alone'):.3f}" if interp
               else f"{c['references'][k]:.3f}")
        return f" {c['values'][k]:.3f} | {ref} | {yes(c, k)} |"

    rows = []
    for k, s in enumerate(seeds):
        kv = de_v["seeds"].index(s)
        rows.append(f"| data efficiency | {s} | {de_v['values'][kv]:.3f} | {v['ito_100'][kv]:.3f} | "
                    f"{de_v['references'][kv]:.3f} | {yes(de_v, kv)} | {de_g['values'][k]:.3f} | "
                    f"{de_g['references'][k]:.3f} | {yes(de_g, k)} |" + water(de_w, s, False))
    for k, s in enumerate(seeds):
        kv = in_v["seeds"].index(s)
        rows.append(f"| interpolation | {s} | {in_v['values'][kv]:.3f} | {ex(in_v, kv, 'ito_capped'):.3f} / "
                    f"{ex(in_v, kv, 'prior_alone'):.3f} | {in_v['references'][kv]:.3f} | {yes(in_v, kv)} | "
                    f"{in_g['values'][k]:.3f} | {ex(in_g, k, 'ito_capped'):.3f} / {ex(in_g, k, 'prior_alone'):.3f} | "
                    f"{yes(in_g, k)} |" + water(in_w, s, True))
    ns = _md_ns(meta)
    load = run.get("load_at_start")
    cal = g["calibration"]
    cal_txt = "; ".join(f"`{e['id']}` max margin {e['max_margin']:.3f} at seeds "
                        f"{', '.join(map(str, e['seeds']))} (margin {e['margin']:g})" for e in cal["claims"])
    msm = [ex(de_g, k, "msm_peer_same_data") for k in range(len(seeds))]
    ito25 = [ex(de_g, k, "ito_same_data") for k in range(len(seeds))]
    verdict = {c["id"]: c["verdict"] for c in g["claims"]}
    text = [
        f"`{run.get('command', 'python benchmarks/alanine_solvent.py')}` (iclr25-bopito {run.get('version', '?')}), "
        f"{run.get('date', '?')}, decision seeds {', '.join(map(str, seeds))}, calibration seeds "
        f"{', '.join(map(str, cal['seeds']))}; {run.get('cpu_s', float('nan')):.0f} s CPU for both sets"
        + (f", load {load[0]:.1f} at start" if load else "") + ".", "",
        f"GBSA data (shipped, `src/iclr25/bopito/data/alanine_gbsa_dihedrals.npz`): `{meta['command']}` (OpenMM "
        f"{meta.get('openmm', '?')}, {meta.get('platform', 'CPU')} platform): {meta['n_eq']} equilibrium runs × "
        f"{meta['eq_frames']} ps after {meta['burn_in_frames']} ps of burn-in and {meta['n_short']} short runs × "
        f"{meta['short_frames']} ps, {ns:.1f} ns of MD in {meta['cpu_seconds']:.0f} s CPU. Its equilibrium "
        f"reference: slowest implied timescale {res['timescale_md']:.2f} ps (MSM at lag 1 ps; vacuum "
        f"{v['timescale_md']:.2f} ps), λ̂ {res['lambda_hat']:.3f} per frame (vacuum {v['lambda_hat']:.3f}), frames "
        f"with φ > 0 {100 * res['phi_positive_fraction']:.2f} % (vacuum {100 * v['phi_positive_fraction']:.2f} %), "
        f"C(N) of its two halves of runs differ by {g['c_md_split_half']:.3f} on average over the C(N) lags (the "
        f"reference's own noise; trivial C = 0: {res['trivial']['c_err_zero']:.3f}, vacuum "
        f"{v['c_err_zero']:.3f}).", "",
        "Per seed, mean \\|C(N) − C_MD(N)\\| against each data set's own equilibrium MD (lower is better). Data "
        "efficiency: BoPITO on 25 short trajectories against ITO on more (vacuum: the claim's 250, 10×, and 100, "
        "4×; GBSA: 100, 4×, all the set holds), lags 1-200 ps. Interpolation: models with N_max = 2 ps on 100 "
        "trajectories, held-out lags 3, 7, 15 ps; the reference is the better of ITO capped at N_max and the prior "
        "alone (C = 0).", "",
        "| claim | seed | vacuum: BoPITO | vacuum: ITO on 4× / ITO capped / prior | vacuum: claim's reference | "
        "holds | GBSA: BoPITO | GBSA: reference (ITO on 4× / ITO capped / prior) | holds |"
        + (" TIP3P (reduced): BoPITO | TIP3P: reference (ITO on 4× / ITO capped / prior) | holds |" if w else ""),
        "|---|---|---|---|---|---|---|---|---|" + ("---|---|---|" if w else ""), *rows, "",
        f"Verdicts on GBSA (rule: every seed, margin 0, fixed before calibrating): `alanine-gbsa-data-efficiency` "
        f"{verdict['alanine-gbsa-data-efficiency']}, `alanine-gbsa-interpolation` "
        f"{verdict['alanine-gbsa-interpolation']}. Calibration: {cal_txt}. GBSA references at 25 trajectories: "
        f"ITO {_cell(ito25)}, deeptime's MSM {_cell(msm)}."]
    tc = details.get("tip3p_cost")
    if w:
        text += ["", *_solvent_tip3p_rows(w, tc, meta)]
    elif tc:
        text += ["", f"Explicit water (`alanine-md --solvent tip3p`, openmmtools' alanine-dipeptide-explicit: "
                     f"{tc['atoms']} atoms, PME) measured on one CPU core ({tc['date']}, load {tc['load'][0]:.1f}): "
                     f"{tc['ns_per_day_one_core']:.1f} ns per day, {_tip3p_over_gbsa(tc, meta):.0f}× the CPU time per "
                     f"molecule-ns of GBSA here; the GBSA set's {ns:.1f} ns would take about "
                     f"{ns / tc['ns_per_cpu_s'] / 3600:.0f} CPU-hours in explicit water, so its claims are not "
                     "re-decided there (the path is tested at a few femtoseconds)."]
    if "equilibrium" in details:
        text += ["", *_solvent_equilibrium_rows(details["equilibrium"])]
    return "\n".join(text)


def _solvent_equilibrium_rows(eq: dict[str, Any]) -> list[str]:
    """The long-lag equilibrium part of the solvent table: per seed, the GBSA claim (rung ``alanine-gbsa-eq``) beside
    the vacuum one (rung ``alanine-eq``), both from their committed ``claims.json``, and the two verdicts."""
    g, v, cal = eq["gbsa"], eq["vacuum"], eq["calibration"]

    def ex(c: dict[str, Any], k: int, key: str) -> float:
        return float(c["extra"][k][key])

    rows = []
    for k, s in enumerate(g["seeds"]):
        kv = v["seeds"].index(s)
        rows.append(f"| {s} | {v['values'][kv]:.3f} | {v['references'][kv]:.3f} | {ex(v, kv, 'prior'):.3f} | "
                    f"{g['values'][k]:.3f} | {g['references'][k]:.3f} | {ex(g, k, 'prior'):.3f} |")

    def gap(c: dict[str, Any]) -> str:
        lo, hi = c["ci95"]
        return f"{c['mean_improvement']:.3f} kT (95 % interval {lo:.3f} to {hi:.3f}; {c['verdict']})"

    def msm(c: dict[str, Any]) -> float:
        return float(np.mean([e["msm_peer"] for e in c["extra"]]))

    cal_gaps = [r - x for x, r in zip(cal["values"], cal["references"])]
    return [
        f"Long-lag equilibrium, `{g['id']}` at the rung `alanine-gbsa-eq` (the vacuum rung `alanine-eq` mirrored on "
        f"the GBSA set: 100 short trajectories, N_max = 49 ps, {len(g['seeds'])} seeds; rule: the mean's 95 % "
        f"interval of ITO − BoPITO above margin {g['margin']:g}, written before any seed ran). Per seed, the φ/ψ "
        "free-energy error (kT) of samples at lag 20,000 ps from φ = −80°, ψ = 70° against each set's own "
        "equilibrium MD (lower is better).", "",
        "| seed | vacuum: BoPITO | vacuum: ITO | vacuum: prior | GBSA: BoPITO | GBSA: ITO | GBSA: prior |",
        "|---|---|---|---|---|---|---|", *rows, "",
        f"Mean gap ITO − BoPITO: vacuum {gap(v)}, GBSA {gap(g)}. Calibration (GBSA, "
        f"`claims-calibration-alanine-gbsa-eq.json`): max margin {cal['max_margin']:.3f} at seeds "
        f"{', '.join(map(str, cal['seeds']))}, gaps {min(cal_gaps):.3f} to {max(cal_gaps):.3f} kT. References: MD "
        f"samples of the same size (noise floor) vacuum {ex(v, 0, 'md_samples_floor'):.3f}, GBSA "
        f"{ex(g, 0, 'md_samples_floor'):.3f}; uniform vacuum {ex(v, 0, 'uniform'):.3f}, GBSA "
        f"{ex(g, 0, 'uniform'):.3f}; deeptime's MSM's samples from the same 100 trajectories, mean over seeds "
        f"vacuum {msm(v):.3f}, GBSA {msm(g):.3f}."]


def _md_ns(meta: dict[str, Any]) -> float:
    """Nanoseconds of MD a data set's ``meta`` records (burn-in included; frames of ``meta["frame_ps"]``)."""
    frames = meta["n_eq"] * (meta["eq_frames"] + meta["burn_in_frames"]) + meta["n_short"] * meta["short_frames"]
    return frames * float(meta.get("frame_ps", 1.0)) / 1e3


def _solvent_tip3p_rows(w: dict[str, Any], tc: dict[str, Any] | None, gbsa_meta: dict[str, Any]) -> list[str]:
    """The explicit-water part of the solvent table's text: the reduced set (what was simulated, its CPU cost), the
    lags scaled with its frames, the verdicts at rung ``alanine-tip3p``, its calibration and its data ladder."""
    meta, res, cal, run = w["data_meta"], w["result"], w["calibration"], w.get("run", {})
    fp = float(meta["frame_ps"])
    cw = {c["id"]: c for c in w["claims"]}
    de, it = cw["alanine-tip3p-data-efficiency"], cw["alanine-tip3p-interpolation"]
    sc = res["scale"]

    def ps(frames: Any) -> str:
        return ", ".join(f"{f * fp:g}" for f in frames)

    cal_txt = "; ".join(f"`{e['id']}` max margin {e['max_margin']:.3f} at seeds "
                        f"{', '.join(map(str, e['seeds']))} (margin {e['margin']:g})" for e in cal["claims"])
    lad = res["ladder"]

    def at(table: list[float], n: int) -> list[float]:
        return [float(table[res["members"].index([s, n])]) for s in res["seeds"]]

    ladder = "; ".join(
        f"{n}: BoPITO {_cell(at(res['c_err']['bopito'], n))}, ITO {_cell(at(res['c_err']['ito'], n))}, "
        f"interpolation BoPITO {_cell(at(res['interpolation']['err_bopito'], n))}" for n in lad)
    ns = _md_ns(meta)
    out = [
        f"Explicit water, a reduced length (rung `alanine-tip3p`): the shipped set "
        f"`src/iclr25/bopito/data/alanine_tip3p_dihedrals.npz`, `{meta['command']}` (OpenMM {meta.get('openmm', '?')}, "
        f"{meta.get('platform', 'CPU')} platform, openmmtools' alanine-dipeptide-explicit: Amber ff96 in TIP3P water, "
        f"PME, NVT): {meta['n_eq']} equilibrium runs × {meta['eq_frames'] * fp:g} ps after "
        f"{meta['burn_in_frames'] * fp:g} ps of burn-in and {meta['n_short']} short runs × "
        f"{meta['short_frames'] * fp:g} ps, frames of {fp:g} ps, {1000 * ns:.0f} ps of MD in all in "
        f"{meta['cpu_seconds']:.0f} s CPU on one core"
        + (f" (the vacuum and GBSA sets: frames of 1 ps; GBSA {_md_ns(gbsa_meta):.1f} ns of MD)" if gbsa_meta else "")
        + ". "
        f"The lags in frames are the GBSA rung's, so in ps they are scaled by {fp:g}: data efficiency at N ∈ "
        f"{{{ps(res['acf_lags'])}}} ps with N_max = {res['max_lag'] * fp:g} ps (the short runs' last lag); "
        f"interpolation with N_max = {sc['int_max_lag'] * fp:g} ps, λ_int fitted at {ps(sc['int_fit_lags'])} ps, "
        f"held-out lags {ps(sc['int_test_lags'])} ps. The models, budget and rule are the GBSA rung's (ladder "
        f"{', '.join(map(str, lad))} short trajectories; the prior on every frame of half the equilibrium runs). "
        f"Its equilibrium reference (one start structure, {meta['n_eq'] * meta['eq_frames'] * fp:g} ps): slowest "
        f"implied timescale {res['timescale_md'] * fp:.2f} ps (MSM at lag {fp:g} ps), frames with φ > 0 "
        f"{100 * res['phi_positive_fraction']:.2f} %, C(N) of its two halves of runs differ by "
        f"{w['c_md_split_half']:.3f} on average over the C(N) lags (trivial C = 0: "
        f"{res['trivial']['c_err_zero']:.3f}).", "",
        f"Verdicts in explicit water (rule: every seed, margin 0, fixed before calibrating): `{de['id']}` "
        f"{de['verdict']}, `{it['id']}` {it['verdict']}. Calibration (`claims-calibration-alanine-tip3p.json`): "
        f"{cal_txt}. Data ladder (short trajectories: mean over seeds 0-2, per seed in brackets): {ladder}. "
        f"deeptime's MSM on the same 25 trajectories: "
        f"{_cell([float(e['msm_peer_same_data']) for e in de['extra']])}. Decided by `{run.get('command', '?')}` "
        f"(iclr25-bopito {run.get('version', '?')}, {run.get('date', '?')}, {run.get('cpu_s', float('nan')):.0f} s "
        "CPU" + (f", load {run['load_at_start'][0]:.1f} at start" if run.get("load_at_start") else "") + ")."]
    if tc:
        out[0] += (f" Its cost: {tc['ns_per_day_one_core']:.1f} ns per day on one core (measured "
                   f"{tc['date']}), {_tip3p_over_gbsa(tc, gbsa_meta):.0f}× the CPU time per molecule-ns of GBSA; the "
                   f"GBSA set's {_md_ns(gbsa_meta):.1f} ns would take about "
                   f"{_md_ns(gbsa_meta) / tc['ns_per_cpu_s'] / 3600:.0f} CPU-hours in explicit water.")
    return out


def _tip3p_over_gbsa(tip3p: dict[str, Any], gbsa_meta: dict[str, Any]) -> float:
    """How many times more CPU time per molecule-ns explicit water took than the GBSA set's MD."""
    ns = (gbsa_meta["n_eq"] * (gbsa_meta["eq_frames"] + gbsa_meta["burn_in_frames"])
          + gbsa_meta["n_short"] * gbsa_meta["short_frames"]) / 1e3
    return (1.0 / tip3p["ns_per_cpu_s"]) / (gbsa_meta["cpu_seconds"] / ns)
