"""``iclr25 rxnflow repro``: the paper's toy experiment scaled down, the estimator check, and the per-step
cost against the number of blocks.

1. Estimator: 5,000 subsets of a 1e5-action space at ρ = 0.02 (mean error), the variance against ρ and M.
2. Toy (App. D.1 scaled down): ~1,450 built-in blocks, 4 bimolecular amine couplings, at most 2 blocks, QED
   reward, β = 4; the exact target is enumerated. Each ρ trains for the same wall time; the exact fit is read at
   a quarter, half and all of it (the training-steps ladder).
3. Modes: top-100 diverse modes of 1,000 samples against 1,000 uniform-random synthesis trajectories.
4. Scale: one TB step on synthetic block libraries of 10k and 50k blocks, subsampled (ρ = 0.02) against the full
   softmax, time and peak memory, each in a fresh process.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult

from .scaling import scale_row as _scale_row

REPRO = {"n_electrophiles": 100, "n_amines": 400, "n_other": 950, "beta": 4.0, "batch_size": 64,
         "rhos": [1.0, 0.3, 0.1, 0.03], "min_sampling": 10, "seconds_per_rho": 40.0, "n_samples": 1000,
         "estimator_subsets": 5000, "scale_blocks": [10000, 50000], "scale_rho": 0.02, "scale_steps": 10}


def _estimator_rows(cfg: dict[str, Any]) -> dict[str, Any]:
    from .estimator import partition_estimates

    rng = np.random.default_rng(0)
    fixed = rng.normal(0, 2, size=11)
    spaces = [rng.normal(0, 2, size=n) for n in (40000, 30000, 20000, 9989)]
    exact = float(np.exp(fixed).sum() + sum(np.exp(s).sum() for s in spaces))
    z = partition_estimates(spaces, fixed, 0.02, cfg["estimator_subsets"], seed=1)
    ladder = []
    for rho in (0.005, 0.01, 0.02, 0.05, 0.1):
        v = float(partition_estimates(spaces, fixed, rho, 1000, seed=2).var() / exact ** 2)
        ladder.append({"rho": rho, "M": 1, "rel_var": v, "rel_var_x_rho_over_1-rho": v * rho / (1 - rho)})
    for m in (2, 4):
        v = float(partition_estimates(spaces, fixed, 0.02, 1000, n_mc=m, seed=3).var() / exact ** 2)
        ladder.append({"rho": 0.02, "M": m, "rel_var": v, "rel_var_x_rho_over_1-rho": v * 0.02 / 0.98 * m})
    return {"mean_rel_error": float(z.mean() / exact - 1), "mean_log_bias": float(np.log(z).mean() - np.log(exact)),
            "ladder": ladder}


def run_repro(args: argparse.Namespace) -> int:
    """The four parts of the module docstring in turn (estimator, toy at equal wall time, modes, scale), then
    the claims at the repro rung; writes ``results.json``, ``rows.json``, ``claims.json`` and the figures."""
    from .cli import REPRO_FILES, _check_run_folder

    _check_run_folder(args, REPRO_FILES)  # the figures and rows.json of a previous run are kept too
    cfg = dict(REPRO)
    run = RunResult.start("iclr25-rxnflow", "repro", seed=args.seed, config=cfg)
    from iclr25.utils.cli import set_torch_threads

    set_torch_threads(args.threads)
    from iclr25.utils.device import describe_device, device_scope, torch_device

    dev = torch_device(args.device)
    run.machine["device"] = describe_device(dev)
    from .rewards import parse_reward
    from .toy import enumerate_terminals, toy_space

    args.out.mkdir(parents=True, exist_ok=True)
    t_all = time.perf_counter()
    # 1. estimator
    est = _estimator_rows(cfg)
    print(json.dumps({"estimator": est}), flush=True)
    # 2. toy
    space = toy_space(cfg["n_electrophiles"], cfg["n_amines"], n_other=cfg["n_other"], seed=args.seed)
    reward = parse_reward("qed")
    t0 = time.perf_counter()
    enum = enumerate_terminals(space, reward, show_progress=True)
    t_enum = time.perf_counter() - t0
    space.parent_counts = enum.in_degree()
    print(f"enumerated {len(enum.terminals)} terminals ({enum.n_products} products) in {t_enum:.0f} s", flush=True)
    rows, models = _toy_rows(cfg, space, reward, enum, args.seed, dev)
    # 3. modes
    modes = _modes(models[0.1], cfg["n_samples"], args.seed)
    # 4. scale
    scale = _scale_rows(cfg, dev)
    wall = time.perf_counter() - t_all
    _add_metrics(run, cfg, est, len(enum.terminals), rows, modes, scale)
    run.add("repro wall time", wall, unit="s", higher_is_better=False, timing=True)
    _add_figures(run, args.out, cfg, rows, models, enum, len(space.blocks))
    (q_o, d_o, k_o), (q_r, d_r, k_r), _ = modes
    with atomic_write(args.out / "rows.json") as fh:
        json.dump({"estimator": est, "toy": rows, "modes": {"ours": [q_o, d_o, k_o], "random": [q_r, d_r, k_r]},
                   "scale": scale, "enumeration_s": t_enum, "n_blocks": len(space.blocks),
                   "n_products": enum.n_products}, fh, indent=1)
    # the registry's claims at the repro rung (5 seeds; about 80 s on one core): OUT/claims.json
    from .claims import REGISTRY

    with device_scope(args.device):  # the measuring code reads its device from $ICLR25_DEVICE
        report = REGISTRY.run("repro", command="iclr25 rxnflow repro")
    report.save(args.out)
    for r in report.results:
        run.add(f"claim {r.claim.id}: {r.verdict}", float(r.holds))
    run.finish().save(args.out / "results.json")
    print(_table(rows))
    print(run.to_markdown())
    return 0


def _toy_rows(cfg: dict[str, Any], space: Any, reward: Any, enum: Any,
              seed: int, device: Any = None) -> tuple[list[dict[str, Any]], dict[float, Any]]:
    """Part 2: one model per ρ in ``cfg["rhos"]``, each trained for the same wall time with the exact fit read
    at a quarter, half and all of it; returns the per-ρ rows and the trained models by ρ."""
    from .gflownet import RxnFlow, TrainConfig, train
    from .toy import distribution_fit

    rows, models = [], {}
    T = cfg["seconds_per_rho"]
    for rho in cfg["rhos"]:
        model = RxnFlow(space, reward, beta=cfg["beta"], seed=seed, device=device)
        res = train(model, TrainConfig(steps=10 ** 7, batch_size=cfg["batch_size"], rho=rho,
                                       min_sampling=cfg["min_sampling"], beta=cfg["beta"], time_budget_s=T),
                    seed=seed, eval_fn=lambda m: distribution_fit(m, enum).pearson,
                    eval_at=[T / 4, T / 2], eval_by="time", desc=f"rho={rho}")
        row = {"rho": rho, "steps": res.steps, "seconds": res.seconds, "steps_per_s": res.steps_per_s,
               "fit_ladder": [{"steps": s, "seconds": round(t, 1), "pearson": v} for s, t, v in res.evals],
               "pearson": res.evals[-1][2], "final_loss": float(res.losses[-50:].mean())}
        fit = distribution_fit(model, enum)
        row["l1"] = fit.l1
        rows.append(row)
        models[rho] = model
        print(json.dumps(row), flush=True)
    return rows, models


def _modes(model: Any, n_samples: int, seed: int) -> tuple[tuple[float, float, int], tuple[float, float, int], float]:
    """Part 3: the top-100 diverse modes (mean reward, diversity, count) of ``n_samples`` samples of ``model``
    and of as many uniform-random synthesis trajectories, and the fraction of sampled routes that replay."""
    from .routes import verify_route
    from .toy import diverse_top_k, diversity, random_synthesis

    samples = model.sample(n_samples, seed=seed)
    rand = random_synthesis(model, n_samples, seed=seed)
    replay = float(np.mean([verify_route(s.route) for s in samples]))

    def modes(ss):
        idx = diverse_top_k([s.smiles for s in ss], [s.reward for s in ss], k=100)
        return float(np.mean([ss[i].reward for i in idx])), diversity([ss[i].smiles for i in idx]), len(idx)

    return modes(samples), modes(rand), replay


def _scale_rows(cfg: dict[str, Any], device: Any = "cpu") -> list[dict[str, Any]]:
    """Part 4: one TB step's time and peak memory at each library size, subsampled and with the full softmax,
    on ``device``."""
    scale = []
    for nb in cfg["scale_blocks"]:
        for rho in (cfg["scale_rho"], 1.0):
            r = _scale_row(nb, rho, cfg["scale_steps"], device=device)
            scale.append(r)
            print(json.dumps(r), flush=True)
    return scale


def _add_metrics(run: RunResult, cfg: dict[str, Any], est: dict[str, Any], n_terminals: int,
                 rows: list[dict[str, Any]], modes: tuple[Any, Any, float], scale: list[dict[str, Any]]) -> None:
    """The repro's metrics of parts 1-4 (the estimator, the fit and speed at equal wall time against ρ = 1, the
    modes against random synthesis, and the time and memory per step against the full softmax)."""
    (q_o, d_o, _), (q_r, d_r, _), replay = modes
    by = {r["rho"]: r for r in rows}
    run.add("estimator: mean Ẑ / Z - 1 (5000 subsets, 1e5 actions, ρ=0.02)", est["mean_rel_error"])
    run.add("estimator: Var·ρ/(1-ρ) max/min over ρ ∈ [0.005, 0.1]",
            max(x["rel_var_x_rho_over_1-rho"] for x in est["ladder"][:5]) /
            min(x["rel_var_x_rho_over_1-rho"] for x in est["ladder"][:5]))
    run.add("toy terminals enumerated", n_terminals)
    run.add("fit r at equal wall time, ρ=0.1", by[0.1]["pearson"], peer=by[1.0]["pearson"], peer_name="ρ=1",
            higher_is_better=True)
    run.add("fit r at equal wall time, ρ=0.03", by[0.03]["pearson"], peer=by[1.0]["pearson"], peer_name="ρ=1",
            higher_is_better=True)
    run.add("steps/s, ρ=0.1", by[0.1]["steps_per_s"], peer=by[1.0]["steps_per_s"], peer_name="ρ=1", unit="1/s",
            higher_is_better=True, timing=True)
    run.add("steps/s, ρ=0.03", by[0.03]["steps_per_s"], peer=by[1.0]["steps_per_s"], peer_name="ρ=1", unit="1/s",
            higher_is_better=True, timing=True)
    run.add("top-100 diverse modes mean QED", q_o, peer=q_r, peer_name="random synthesis", higher_is_better=True)
    run.add("top-100 modes diversity", d_o, peer=d_r, peer_name="random synthesis", higher_is_better=True)
    run.add("routes that replay", replay, higher_is_better=True)
    for nb in cfg["scale_blocks"]:
        sub = next(r for r in scale if r["n_blocks"] == nb and r["rho"] != 1.0)
        full = next(r for r in scale if r["n_blocks"] == nb and r["rho"] == 1.0)
        run.add(f"s/step at {nb} blocks, ρ={cfg['scale_rho']}", sub["s_per_step"], peer=full["s_per_step"],
                peer_name="full softmax (ρ=1)", unit="s", higher_is_better=False, timing=True)
        run.add(f"peak RSS at {nb} blocks, ρ={cfg['scale_rho']}", sub["peak_rss_mb"], peer=full["peak_rss_mb"],
                peer_name="full softmax (ρ=1)", unit="MB", higher_is_better=False, timing=True)


def _add_figures(run: RunResult, out: Any, cfg: dict[str, Any], rows: list[dict[str, Any]],
                 models: dict[float, Any], enum: Any, n_blocks: int) -> None:
    """The exact fit of the ρ = 0.1 and ρ = 1 models against the target, and speed and fit against ρ."""
    from .figures import plot_fit, plot_speed
    from .toy import exact_log_probs

    by = {r["rho"]: r for r in rows}
    T = cfg["seconds_per_rho"]
    f1 = plot_fit(out / "fit_rho0.1.png", exact_log_probs(models[0.1], enum), enum.log_target(cfg["beta"]),
                  title=f"ρ=0.1, {by[0.1]['steps']} steps in {T:.0f} s, {n_blocks} blocks")
    f2 = plot_fit(out / "fit_rho1.png", exact_log_probs(models[1.0], enum), enum.log_target(cfg["beta"]),
                  title=f"ρ=1, {by[1.0]['steps']} steps in {T:.0f} s, {n_blocks} blocks")
    f3 = plot_speed(out / "speed_vs_rho.png", [r["rho"] for r in rows], [r["steps_per_s"] for r in rows],
                    [r["pearson"] for r in rows])
    for f in (f1, f2, f3):
        run.add_figure(f, relative_to=out)


def _table(rows) -> str:
    lines = ["| ρ | steps in budget | steps/s | fit r @¼ | fit r @½ | fit r @1 | L1 | final TB loss |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lad = [x["pearson"] for x in r["fit_ladder"]] + [float("nan")] * 3
        lines.append(f"| {r['rho']} | {r['steps']} | {r['steps_per_s']:.1f} | {lad[0]:.3f} | {lad[1]:.3f} | "
                     f"{lad[2]:.3f} | {r['l1']:.3f} | {r['final_loss']:.3f} |")
    return "\n".join(lines)
