"""The experiments behind ``demo`` and ``repro``: Prinz data (cached), prior / ITO / BoPITO ensembles of
equal size and budget, and their evaluation against the exact reference and deeptime's MLE MSM.

Every model family is trained as one ensemble (one member per seed and data budget), so that a whole
ladder costs one batched training run per family.

References: BoPITO (ICLR 2025), Sec. 5.1 (Prinz: equilibrium at long lags, data efficiency, interpolation).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .analysis import (
    chain_timescales,
    cross_correlation,
    estimate_lambda,
    evaluate_acf,
    fit_interpolation,
    fit_msm,
    vamp2_score,
)
from .reference import ExactReference, exact_reference
from .sampling import sample, sample_chain, sample_equilibrium
from .systems import Trajectories, load_trajectories, simulate
from .training import fit_model

__all__ = ["Budget", "DEMO_BUDGET", "REPRO_BUDGET", "cached_simulation", "run_demo", "run_repro", "run_triple_well",
           "TripleWellConfig",
           "PRINZ_BOX"]

PRINZ_BOX = ((-1.2, 1.2),)


@dataclasses.dataclass(frozen=True)
class Budget:
    """Model size and training / evaluation budget, the same for every model family."""

    width: int = 64
    depth: int = 3
    emb_dim: int = 32
    n_diffusion: int = 500
    steps: int = 3000
    bg_steps: int = 3000
    batch_size: int = 512
    lr: float = 1e-3
    sample_steps: int | None = 50
    long_lag_steps: int | None = None
    n_eval: int = 1000


DEMO_BUDGET = Budget(steps=500, bg_steps=500, batch_size=256, n_eval=600, width=48)
REPRO_BUDGET = Budget(bg_steps=6000, n_eval=2000)


def cached_simulation(cache: Path | None, **kw: Any) -> Trajectories:
    """:func:`simulate` with the result kept in ``cache`` (an ``.npz`` named after the arguments, written
    atomically); ``cache=None`` always simulates."""
    if cache is None:
        return simulate(**kw)
    key = "-".join(f"{k}={v}" for k, v in sorted(kw.items()) if k not in ("desc", "x0")
                   and not isinstance(v, np.ndarray))
    if isinstance(kw.get("x0"), np.ndarray):
        key += f"-x0sum={float(np.sum(kw['x0'])):.6f}"
    path = Path(cache) / (key.replace("/", "_") + ".npz")
    if path.is_file():
        return load_trajectories(path)
    tr = simulate(**kw)
    tr.save(path)
    return tr


def _kw(b: Budget) -> dict[str, Any]:
    return {"width": b.width, "depth": b.depth, "emb_dim": b.emb_dim, "n_diffusion": b.n_diffusion,
            "batch_size": b.batch_size, "lr": b.lr, "box": PRINZ_BOX}


def _w1(ref: ExactReference, xs: np.ndarray) -> list[float]:
    return [ref.w1_to_boltzmann(xs[k, :, 0]) for k in range(xs.shape[0])]


# ------------------------------------------------------------------------------------------------------ demo
def run_demo(*, seed: int = 0, budget: Budget = DEMO_BUDGET, n_traj: int = 100, n_frames: int = 200,
             max_lag: int = 100, lambda_hat: float = 0.994, long_lag: int = 5000, x_start: float = 0.75,
             lags: Sequence[int] = (10, 25, 50, 100)) -> dict[str, Any]:
    """The demo: prior, ITO and BoPITO on ``n_traj`` short Prinz trajectories; W1 to Boltzmann at a long
    lag from ``x_start`` and the correlation-function error at ``lags``."""
    t0 = time.perf_counter()
    ref = exact_reference("prinz")
    data = simulate("prinz", n_traj, n_frames, seed=seed, desc="simulate")
    t_sim = time.perf_counter() - t0
    kw = _kw(budget)
    bg = fit_model("bg", data, steps=budget.bg_steps, seed=seed, desc="prior", **kw)
    ito = fit_model("ito", data, max_lag=max_lag, steps=budget.steps, seed=seed + 1, desc="ITO", **kw)
    bop = fit_model("bopito", data, prior=bg.model, max_lag=max_lag, lambda_hat=lambda_hat, steps=budget.steps,
                    seed=seed + 1, desc="BoPITO", **kw)
    x0 = np.full(budget.n_eval, x_start)
    long = {name: sample(m.model, x0, long_lag, steps=budget.sample_steps, seed=seed + 2)
            for name, m in (("ito", ito), ("bopito", bop))}
    eq = ref.sample_boltzmann(budget.n_eval, seed=seed + 3)[:, 0]
    c_ref = ref.correlation(lags)
    acf = {name: evaluate_acf(m.model, eq, lags, c_ref, steps=budget.sample_steps, seed=seed + 4)
           for name, m in (("ito", ito), ("bopito", bop))}
    return {"ref": ref, "data": data, "bg": bg, "ito": ito, "bopito": bop, "long": long, "acf": acf,
            "w1": {k: _w1(ref, v)[0] for k, v in long.items()}, "c_ref": c_ref, "lags": list(lags),
            "t_sim": t_sim, "x_start": x_start, "long_lag": long_lag}


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
    kw = _kw(budget)
    S = len(cfg.seeds)
    timings: dict[str, float] = {}
    t = time.perf_counter()
    full = {s: cached_simulation(cache, system="prinz", n_traj=max(cfg.ladder), n_frames=cfg.n_frames, seed=s,
                                 desc=f"simulate seed {s}") for s in cfg.seeds}
    timings["simulate"] = time.perf_counter() - t
    log(f"data: {len(cfg.seeds)} x {max(cfg.ladder)} trajectories x {cfg.n_frames} frames "
        f"({timings['simulate']:.0f} s)")

    # priors: one per seed, on the equilibrium frames of that seed's full data set
    t = time.perf_counter()
    bg = fit_model("bg", [full[s] for s in cfg.seeds], n_models=S, steps=budget.bg_steps, seed=100,
                   desc="priors", **kw)
    timings["train prior"] = time.perf_counter() - t
    eq_bg = sample_equilibrium(bg.model, 2 * budget.n_eval, steps=budget.long_lag_steps, seed=101)
    w1_bg = _w1(ref, eq_bg)
    log(f"priors: W1 to Boltzmann {np.round(w1_bg, 4).tolist()}")

    # lambda_hat from data (TICA), reported beside the value used
    lam_est = [estimate_lambda(full[s].subset(cfg.w1_n_traj).x, lagtime=10, n_bins=cfg.n_bins, box=PRINZ_BOX)
               for s in cfg.seeds]

    # ---------------------------------------------------------------- ladder: ITO vs BoPITO vs MSM
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

    # ---------------------------------------------------------------- equilibrium at a long lag
    members_w = list(cfg.seeds)
    data_w = [full[s].subset(cfg.w1_n_traj) for s in members_w]
    t = time.perf_counter()
    ito_w = fit_model("ito", data_w, n_models=S, max_lag=cfg.w1_max_lag, steps=budget.steps, seed=400,
                      desc="ITO N_max=100", **kw)
    bop_w = fit_model("bopito", data_w, prior=bg.model, n_models=S, max_lag=cfg.w1_max_lag,
                      lambda_hat=cfg.lambda_hat, steps=budget.steps, seed=400, desc="BoPITO N_max=100", **kw)
    timings["train long-lag"] = time.perf_counter() - t
    x0 = np.full(2 * budget.n_eval, cfg.x_start)
    long_ito = sample(ito_w.model, x0, cfg.long_lag, steps=budget.long_lag_steps, seed=401)
    long_bop = sample(bop_w.model, x0, cfg.long_lag, steps=budget.long_lag_steps, seed=401)
    w1_ito, w1_bop = _w1(ref, long_ito), _w1(ref, long_bop)
    log(f"W1 at lag {cfg.long_lag}: ITO {np.round(w1_ito, 4).tolist()}, BoPITO {np.round(w1_bop, 4).tolist()}")

    # ---------------------------------------------------------------- spectral check on generated chains
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

    # ---------------------------------------------------------------- interpolation
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

    return {"ref": ref, "config": cfg, "budget": budget, "members": members, "ladder": ladder_rows,
            "acf_ito": acf_ito, "acf_bop": acf_bop, "noise_floor": noise_floor,
            "c_exact_samples": c_exact_samples, "msm_c": np.array(msm_c), "c_ref": c_ref,
            "w1_bg": w1_bg, "w1_ito": w1_ito, "w1_bop": w1_bop, "long_ito": long_ito, "long_bop": long_bop,
            "lambda_est": lam_est, "lambda_short": lam_short, "its": its, "vamp": vamp,
            "lambda_int": fits, "err_int": err_int, "err_ito_int": err_ito_i, "err_bg_int": err_bg_i,
            "timings": timings,
            "train_seconds": {"prior": bg.seconds, "ito": ito.seconds, "bopito": bop.seconds}}


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
