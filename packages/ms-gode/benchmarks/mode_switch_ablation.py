"""Why mode switching picks the wrong sub-network on simple user arrays (issue 62): one cause at a time.

    python benchmarks/mode_switch_ablation.py --out DIR [--seeds 0 1 2] [--epochs 16] [--physics-seeds 0 1 2]
        [--retrain-axes frames] [--retrain-seeds 0 1]

**User fixture** (issue 62's arrays, :func:`iclr25.ms_gode.simulators.simulate_oscillators`): two systems of three
uncoupled oscillators, omega = 1 and omega = 4, 24 trajectories each, ``observe(n_obs=20, sample_percent=0.6)``,
``split(0.6, 0.2, 0.2)``, MS-GODE with hidden 16, trained task after task on the train parts (thresholds on the
valid parts). Two time axes: ``frames`` (no times given: ``from_arrays``' default 0, 1, 2, ...; omega is in
radians per frame, so omega = 4 is above the Nyquist rate of pi per frame) and ``dt=0.1`` (frames 0.1 time
units apart). Scored on fresh draws of the same systems (40 trajectories each, scaled by their own ranges as
``predict`` does with a user's file): 8 batches of 5 per task, and the 40 trajectories one at a time.

Causes, one at a time against the ``base`` cell (the paper's ``part_recon``: the first half of the observed
window is encoded and predicts the observations of the second half; criterion ``loss``; per batch; each task
scaled by its own ranges; 16 epochs; rk4 step 1/15 of the window):

- ``criterion=mse``: the MSE alone, i.e. the loss without its KL term (with one z0 sample the Gaussian
  log-likelihood is an affine function of the MSE, so this is the whole ELBO-vs-MSE question);
- ``per-trajectory``: selection per trajectory instead of per batch;
- ``split=3/4``: the encoder sees the first three quarters of the window, the last quarter is the target;
- ``scaling=task-1``: task 2 and every test set scaled by task 1's training ranges (amplitude and the
  velocity/position ratio omega kept) - retrained;
- ``epochs=48``: three times the budget - retrained;
- ``lr=5e-2``: the scores' learning rate of the package's own recipe (``PRETRAIN``, ``train --lr``) instead of
  ``TrainConfig``'s default 5e-3 that a Python user gets - retrained;
- ``ode-step=1/60``: the rk4 step a quarter as long (finer than a frame of the window) - retrained.

Beside every cell: the fraction of batches whose best sub-network self-predicts better than the best do-nothing
rule (:func:`iclr25.ms_gode.continual.do_nothing_mse`: hold the last observation, the first part's mean, or
zero), and the median ratio best-mask MSE / do-nothing MSE (1 or more: no sub-network learned anything of the
batch that the criterion could use).

**Package systems** (``--physics-seeds``): the checkpoint of each seed (``learner_for_seed``: shipped for 0-2)
on the claim's 48 fresh physics test batches (springs, charged, springs) with the selection-only causes
(criterion, per trajectory, split); the training causes on physics are the epoch ladders of
``mode_switch_ladder.py``.

Writes DIR/mode_switch_ablation.json (after every row) and prints the markdown table.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import numpy as np
import torch

from iclr25.ms_gode import MSGODE, ModelConfig, TrainConfig
from iclr25.ms_gode.continual import do_nothing_mse
from iclr25.ms_gode.simulators import simulate_oscillators

OMEGAS = (1.0, 4.0)
N_TRAJ = 24
N_FRESH = 40
FRESH_BATCH = 5
AXES = {"frames": None, "dt=0.1": 0.1}
RETRAINED = ("scaling=task-1", "epochs=48", "lr=5e-2", "ode-step=1/60")


def fixture(seed: int, dt: float | None, *, n: int = N_TRAJ, fresh: bool = False) -> list:
    """The two oscillator tasks of issue 62 (observed and normalised) at ``seed``; ``fresh`` draws other
    trajectories of the same systems (other simulation and observation seeds)."""
    off = 50 if fresh else 0
    return [simulate_oscillators(n, omega=w, dt=dt, seed=100 * seed + off + i).to_task(
        n_obs=20, sample_percent=0.6, name=f"omega{w:g}", seed=1 if fresh else 0) for i, w in enumerate(OMEGAS)]


def _rescale(task, ref):
    lo, hi = np.asarray(task.params["scale_lo"]), np.asarray(task.params["scale_hi"])
    rlo, rhi = np.asarray(ref.params["scale_lo"]), np.asarray(ref.params["scale_hi"])
    raw = (task.values.astype(np.float64) + 1) / 2 * (hi - lo) + lo
    return dataclasses.replace(task, values=(2 * (raw - rlo) / (rhi - rlo) - 1).astype(np.float32))


def _self_mse(learner, task, idx, mask: int, cut: int) -> tuple[float, float]:
    tt = learner._tt(task)
    learner.model.set_task(mask)
    with torch.no_grad():
        out = learner.model.loss(tt.batch(np.asarray(idx), enc_cut=cut, target="window"), prior_mean=float(mask),
                                 sample=False)
    return float(out.loss), float(out.mse)


def _score(learner, tests, *, batch: int, criterion: str = "loss", cut_frac: float = 0.5) -> dict:
    """Per-task fraction of decisions given their own sub-network, with the do-nothing comparison."""
    per_task, beats, ratios, margins, decisions = [], [], [], [], []
    for j, te in enumerate(tests):
        cut = max(1, int(round(te.n_obs * cut_frac)))
        hits = []
        decisions.append([])
        for b in range(0, len(te) - batch + 1, batch):
            idx = np.arange(b, b + batch)
            res = [_self_mse(learner, te, idx, m, cut) for m in range(learner.n_tasks)]
            crit = np.array([r[0] if criterion == "loss" else r[1] for r in res])
            best = int(np.argmin(crit))
            hits.append(best == j)
            triv = do_nothing_mse(te, idx, cut)["best"]
            mses = [r[1] for r in res]
            beats.append(mses[best] < triv)
            ratios.append(mses[best] / triv)
            srt = np.sort(np.asarray(mses))
            margins.append(float((srt[1] - srt[0]) / max(srt[0], 1e-12)) if len(srt) > 1 else float("nan"))
            decisions[-1].append([int(best), round(margins[-1], 4), round(mses[best] / triv, 4)])
        per_task.append(float(np.mean(hits)))
    return {"per_task": per_task, "min_task": min(per_task), "beats_do_nothing": float(np.mean(beats)),
            "median_ratio_to_do_nothing": float(np.median(ratios)),
            "median_relative_gap_between_masks": float(np.median(margins)),
            "decisions": decisions}  # per task, per decision: [chosen mask, relative MSE gap, MSE / do-nothing]


def _train(seed: int, dt: float | None, *, epochs: int, step: float = 1.0 / 15.0, shared_scale: bool = False,
           lr: float = 5e-3):
    tasks = fixture(seed, dt)
    fresh = fixture(seed, dt, n=N_FRESH, fresh=True)
    if shared_scale:
        ref = tasks[0]
        tasks = [tasks[0], *[_rescale(t, ref) for t in tasks[1:]]]
        fresh = [_rescale(t, ref) for t in fresh]
    learner = MSGODE(2, ModelConfig(hidden=16, step_size=step), TrainConfig(epochs=epochs, lr=lr), seed=seed)
    t0 = time.process_time()
    for t in tasks:
        tr, va, _ = t.split((0.6, 0.2, 0.2))
        learner.fit_task(tr, valid=va)
    return learner, fresh, time.process_time() - t0


def user_rows(seed: int, axis: str, epochs: int, retrain: bool) -> list[dict]:
    dt = AXES[axis]
    learner, fresh, cpu = _train(seed, dt, epochs=epochs)
    base = {"system": "user oscillators", "axis": axis, "seed": seed, "epochs": epochs}
    rows = [{**base, "cell": "base", "batch": FRESH_BATCH, "train_cpu_s": round(cpu, 1),
             **_score(learner, fresh, batch=FRESH_BATCH)},
            {**base, "cell": "criterion=mse", **_score(learner, fresh, batch=FRESH_BATCH, criterion="mse")},
            {**base, "cell": "per-trajectory", **_score(learner, fresh, batch=1)},
            {**base, "cell": "split=3/4", **_score(learner, fresh, batch=FRESH_BATCH, cut_frac=0.75)}]
    if retrain:
        for cell in RETRAINED:
            kw = {"scaling=task-1": {"epochs": epochs, "shared_scale": True}, "epochs=48": {"epochs": 48},
                  "lr=5e-2": {"epochs": epochs, "lr": 5e-2},
                  "ode-step=1/60": {"epochs": epochs, "step": 1.0 / 60.0}}[cell]
            lr, fr, c = _train(seed, dt, **kw)
            rows.append({**base, "cell": cell, "train_cpu_s": round(c, 1), **_score(lr, fr, batch=FRESH_BATCH)})
    return rows


def physics_rows(seed: int) -> list[dict]:
    from iclr25.ms_gode.data import task_sequence  # noqa: PLC0415
    from iclr25.ms_gode.pretrained import TEST_BATCH_SIZE, TEST_BATCHES, TEST_SEED_OFFSET, learner_for_seed  # noqa: PLC0415

    learner, source = learner_for_seed(seed)
    tests = task_sequence("physics", TEST_BATCHES * TEST_BATCH_SIZE, seed=TEST_SEED_OFFSET + seed)
    base = {"system": "physics (springs, charged, springs)", "axis": "-", "seed": seed, "checkpoint": source}
    return [{**base, "cell": "base", "batch": TEST_BATCH_SIZE, **_score(learner, tests, batch=TEST_BATCH_SIZE)},
            {**base, "cell": "criterion=mse", **_score(learner, tests, batch=TEST_BATCH_SIZE, criterion="mse")},
            {**base, "cell": "per-trajectory", **_score(learner, [t.subset(np.arange(40)) for t in tests], batch=1)},
            {**base, "cell": "split=3/4", **_score(learner, tests, batch=TEST_BATCH_SIZE, cut_frac=0.75)}]


def table(rows: list[dict]) -> str:
    lines = ["| system | time axis | cell | seeds | per-task selection (mean over seeds) | worst task, per seed | "
             "best mask beats do-nothing | median MSE / do-nothing |", "|---|---|---|---|---|---|---|---|"]
    keys: list[tuple] = []
    for r in rows:
        k = (r["system"], r["axis"], r["cell"])
        if k not in keys:
            keys.append(k)
    for k in keys:
        rs = [r for r in rows if (r["system"], r["axis"], r["cell"]) == k]
        pt = np.mean([r["per_task"] for r in rs], axis=0)
        lines.append(f"| {k[0]} | {k[1]} | {k[2]} | {','.join(str(r['seed']) for r in rs)} | "
                     f"{' / '.join(f'{x:.2f}' for x in pt)} | {', '.join(format(r['min_task'], '.2f') for r in rs)} | "
                     f"{np.mean([r['beats_do_nothing'] for r in rs]):.2f} | "
                     f"{np.median([r['median_ratio_to_do_nothing'] for r in rs]):.2f} |")
    return "\n".join(lines)


def markdown(doc: dict) -> str:
    """The docs page: what was run, then the table (:func:`table`)."""
    return ("# Mode switching on simple user arrays: ablation of the causes (issue 62)\n\n"
            f"Written by `{doc['command']}` on {doc['date']} ({doc['cpu_seconds']} s CPU) from "
            "`mode_switch_ablation.json` beside this file; the cells and the fixture are described in "
            "`benchmarks/mode_switch_ablation.py`. Per-task selection: the fraction of each task's decisions (8 fresh "
            "batches of 5 per task for the oscillators, the claim's 16 batches of 10 per task for physics; "
            "per-trajectory cells decide each trajectory alone) given the task's own sub-network; 'beats "
            "do-nothing': decisions whose chosen sub-network self-predicts better than holding the last observation, "
            "the first part's mean or zero.\n\n" + table(doc["rows"]) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--render", action="store_true", help="only rewrite DIR/mode_switch_ablation.md from the JSON")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--epochs", type=int, default=16)
    ap.add_argument("--physics-seeds", type=int, nargs="*", default=[0, 1, 2])
    ap.add_argument("--retrain-axes", nargs="*", default=["frames"], help="time axes that also get the retrained "
                    "cells (scaling, epochs, lr, ODE step)")
    ap.add_argument("--retrain-seeds", type=int, nargs="*", default=[0, 1], help="seeds that get the retrained cells")
    args = ap.parse_args()
    path = args.out / "mode_switch_ablation.json"
    if args.render:
        (args.out / "mode_switch_ablation.md").write_text(markdown(json.loads(path.read_text())), encoding="utf-8")
        return
    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    t0 = time.process_time()

    def write() -> None:
        doc = {"command": "python benchmarks/mode_switch_ablation.py --out DIR", "seeds": args.seeds,
               "retrain_axes": args.retrain_axes, "retrain_seeds": args.retrain_seeds,
               "epochs": args.epochs, "physics_seeds": args.physics_seeds, "date": time.strftime("%Y-%m-%d"),
               "cpu_seconds": round(time.process_time() - t0, 1), "rows": rows}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        tmp.replace(path)

    # seed by seed (both axes, then the physics checkpoint): a run cut short still covers every system
    for seed in sorted(set(args.seeds) | set(args.physics_seeds)):
        for axis in AXES if seed in args.seeds else ():
            rows += user_rows(seed, axis, args.epochs, axis in args.retrain_axes and seed in args.retrain_seeds)
            write()
            print(f"[{time.process_time() - t0:.0f}s] {axis} seed {seed}", flush=True)
        if seed in args.physics_seeds:
            rows += physics_rows(seed)
            write()
            print(f"[{time.process_time() - t0:.0f}s] physics seed {seed}", flush=True)
    print(table(rows))
    (args.out / "mode_switch_ablation.md").write_text(markdown(json.loads(path.read_text())), encoding="utf-8")


if __name__ == "__main__":
    main()
