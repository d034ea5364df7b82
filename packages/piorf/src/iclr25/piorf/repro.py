"""The reduced-scale reproduction: MGN vs MGN+PIORF vs MGN with each baseline rewiring, on LBM cylinder flow."""

from __future__ import annotations

import argparse
import time

import numpy as np

from iclr25.utils.io import atomic_write
from iclr25.utils.parallel import parallel_map
from iclr25.utils.results import RunResult

__all__ = ["run_repro", "REPRO_DATA", "PAPER_BEST_IMPROVEMENT"]

REPRO_DATA = {"n_trajectories": 10, "steps": 100, "n_train": 8, "horizon": 50}
#: The paper's best improvement over MGN (abstract): 26.2 %.
PAPER_BEST_IMPROVEMENT = 26.2
METHODS = ("none", "piorf", "sdrf", "fosr", "borf", "digl")
LABELS = {"none": "MGN", "piorf": "MGN+PIORF", "sdrf": "MGN+SDRF", "fosr": "MGN+FoSR", "borf": "MGN+BORF",
          "digl": "MGN+DIGL"}


def _job(item: tuple[str, int, int]) -> dict:
    import torch

    from .datasets import cylinder_flow
    from .training import TrainConfig, rollout_rmse, train

    torch.set_num_threads(1)
    method, seed, steps = item
    ds = cylinder_flow(REPRO_DATA["n_trajectories"], REPRO_DATA["steps"])
    tr, te = ds.split(REPRO_DATA["n_train"])
    sim = train(tr, rewiring=method, config=TrainConfig(steps=steps), seed=seed)
    m = rollout_rmse(sim, te, REPRO_DATA["horizon"], stride=4)
    curve = sim.rollout(te[0], REPRO_DATA["horizon"]).rmse_velocity
    return {"method": method, "seed": seed, **m, "preprocess_s": sim.preprocess_seconds,
            "step_s": sim.step_seconds, "curve": curve.tolist()}


def run_repro(args: argparse.Namespace) -> int:
    """Train every rewiring for ``args.seeds`` seeds of ``args.train_steps`` steps; write the table and figures.

    ``args`` holds ``out``, ``seed``, ``seeds``, ``train_steps`` and ``jobs`` (as ``iclr25 piorf repro`` parses
    them; the command line checks them before this runs).
    """
    from .curvature import ollivier_ricci
    from .datasets import cylinder_flow
    from .figures import flow_figure, rollout_figure
    from .rewiring import rewire

    t0 = time.perf_counter()
    seeds = list(range(args.seed, args.seed + args.seeds))
    run = RunResult.start("iclr25-piorf", "repro", seed=args.seed,
                          config={**REPRO_DATA, "seeds": seeds, "train_steps": args.train_steps, "layers": 4,
                                  "latent": 64, "methods": list(METHODS)})
    ds = cylinder_flow(REPRO_DATA["n_trajectories"], REPRO_DATA["steps"], show_progress=True)  # fills the cache
    t_data = time.perf_counter() - t0
    items = [(m, s, args.train_steps) for s in seeds for m in METHODS]
    rows = parallel_map(_job, items, n_jobs=args.jobs, desc="train")
    h = REPRO_DATA["horizon"]
    by = {m: [r for r in rows if r["method"] == m] for m in METHODS}
    mean = {m: {k: float(np.mean([r[k] for r in by[m]])) for k in ("rmse_1", f"rmse_{h}", "preprocess_s", "step_s")}
            for m in METHODS}
    std = {m: {k: float(np.std([r[k] for r in by[m]])) for k in ("rmse_1", f"rmse_{h}")} for m in METHODS}
    base = mean["none"][f"rmse_{h}"]
    lines = [f"| model | 1-step RMSE x1e3 | {h}-step rollout RMSE x1e3 | vs MGN | preprocessing s (all meshes) "
             "| train step s |", "|---|---|---|---|---|---|"]
    for m in METHODS:
        imp = 100.0 * (base - mean[m][f"rmse_{h}"]) / base
        lines.append(f"| {LABELS[m]} | {1e3 * mean[m]['rmse_1']:.2f} ± {1e3 * std[m]['rmse_1']:.2f} | "
                     f"{1e3 * mean[m][f'rmse_{h}']:.1f} ± {1e3 * std[m][f'rmse_{h}']:.1f} | "
                     f"{'' if m == 'none' else f'{imp:+.1f} %'} | {mean[m]['preprocess_s']:.3f} | "
                     f"{mean[m]['step_s']:.4f} |")
        run.add(f"rollout{h} RMSE x1e3 {LABELS[m]}", 1e3 * mean[m][f"rmse_{h}"],
                peer=None if m == "none" else 1e3 * base, peer_name=None if m == "none" else "MGN",
                higher_is_better=False)
        run.add(f"1-step RMSE x1e3 {LABELS[m]}", 1e3 * mean[m]["rmse_1"], higher_is_better=False)
    improvement = 100.0 * (base - mean["piorf"][f"rmse_{h}"]) / base
    run.add(f"PIORF improvement over MGN, rollout{h} %", improvement, peer=PAPER_BEST_IMPROVEMENT,
            peer_name="paper's best", higher_is_better=True)
    run.add("preprocessing s PIORF", mean["piorf"]["preprocess_s"], peer=mean["borf"]["preprocess_s"],
            peer_name="BORF", unit="s", higher_is_better=False, timing=True)
    run.add("train step s PIORF", mean["piorf"]["step_s"], peer=mean["none"]["step_s"], peer_name="MGN", unit="s",
            higher_is_better=False, timing=True)
    run.add("data generation s", t_data, unit="s", timing=True)
    args.out.mkdir(parents=True, exist_ok=True)
    curves = {LABELS[m]: np.array([r["curve"] for r in by[m]]).mean(0) for m in METHODS}
    run.add_figure(rollout_figure(args.out / "rollout_error.png", curves, bold=(LABELS["none"], LABELS["piorf"]),
                                  title="rollout error (test trajectory 0, mean of seeds)"), relative_to=args.out)
    traj = ds[REPRO_DATA["n_train"]]
    rw = rewire(traj.edge_index, ollivier_ricci(traj.edge_index).node, traj.velocity[0])
    run.add_figure(flow_figure(args.out / "rewiring.png", traj, 0, {"PIORF (feature-difference)": rw},
                               f"test mesh, Re={traj.reynolds:.0f}"), relative_to=args.out)
    run.finish().save(args.out / "results.json")
    table = "\n".join(lines)
    with atomic_write(args.out / "table.md") as f:
        f.write(table + "\n")
    print(table)
    print()
    print(f"PIORF vs MGN ({h}-step rollout): {improvement:+.1f} % (paper's best: {PAPER_BEST_IMPROVEMENT} %); "
          f"preprocessing PIORF/BORF = {mean['piorf']['preprocess_s'] / mean['borf']['preprocess_s']:.3f}; "
          f"train step PIORF/MGN = {mean['piorf']['step_s'] / mean['none']['step_s']:.3f}; "
          f"wall {time.perf_counter() - t0:.0f} s")
    return 0
