"""Epoch ladder of mode switching (issue 44): the checkpoint rung's data (PRETRAIN), each task trained once for
the largest number of epochs with its scores and LayerNorms snapshotted after every epoch; each rung restores
the snapshots, recalibrates the unknown thresholds and is scored by ``pretrained.measure`` on fresh test tasks
(``measure``'s defaults: 16 batches of 10 trajectories per task; 8 batches of 6 before 0.4). A rung of e epochs equals a run trained for e epochs from scratch: the
tasks' parameters are disjoint, each task's trainer is seeded by its id, and the cosine schedule (T_max 1000
iterations) does not depend on the number of epochs.

    python benchmarks/mode_switch_ladder.py --out DIR [--seeds 0 1 2 3 4] [--epochs 4 8 12 16 20]
        [--export 12]

Writes DIR/ladder_mode_switch.json (one row per seed and rung) and, for each --export rung,
DIR/e{E}/physics-seed{S}.npz (+ .json record): the state ``iclr25 ms-gode pretrain --seed S`` writes at that number of epochs.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import torch

import iclr25.ms_gode.continual as continual
from iclr25.ms_gode.data import task_sequence
from iclr25.ms_gode.pretrained import PRETRAIN, measure, record, train_pretrained
from iclr25.utils.bench import benchmark_parser


def ladder(seed: int, epochs: list[int], export: list[int], out: Path) -> list[dict]:
    top = max(epochs)
    snaps: dict[tuple[int, int], list[torch.Tensor]] = {}
    box: dict[str, object] = {}
    original = continual.progress

    def snapshotting(it, desc=""):
        for e in original(it, desc=desc):
            yield e
            learner = box["learner"]
            t = learner.n_tasks - 1
            snaps[(t, e + 1)] = [p.detach().clone() for p in learner.model.task_parameters(t)]

    real_init = continual.MSGODE.__init__

    def init(self, *a, **k):
        real_init(self, *a, **k)
        box["learner"] = self

    continual.progress, continual.MSGODE.__init__ = snapshotting, init
    try:
        t0 = time.process_time()
        learner, _ = train_pretrained(seed, dataclasses.replace(PRETRAIN, epochs=top))
        train_cpu = time.process_time() - t0
    finally:
        continual.progress, continual.MSGODE.__init__ = original, real_init
    sc = PRETRAIN
    tasks = task_sequence("physics", sc.n_train + sc.n_valid, seed=seed)
    valids = [t.subset(range(sc.n_train, sc.n_train + sc.n_valid)) for t in tasks]
    rows = []
    for e in epochs:
        with torch.no_grad():
            for t in range(learner.n_tasks):
                for p, s in zip(learner.model.task_parameters(t), snaps[(t, e)], strict=True):
                    p.copy_(s)
        for t in range(learner.n_tasks):
            learner.calibrate(t, valids[t])
        m = measure(learner, seed=seed)
        row = {"seed": seed, "epochs": e, "n_train": sc.n_train, **{k: m[k] for k in (
            "mode_fraction", "mode_hits", "mode_batches", "mode_ci95", "mode_per_task", "af_mse", "ap_mse",
            "oracle_ap_mse", "unknown_unseen", "unknown_known")}, "train_cpu_s_top_rung": round(train_cpu, 1)}
        print(json.dumps(row), flush=True)
        rows.append(row)
        if e in export:
            learner.train_config = dataclasses.replace(learner.train_config, epochs=e)
            dest = out / f"e{e}"
            dest.mkdir(parents=True, exist_ok=True)
            learner.export_state(dest / f"physics-seed{seed}.npz")
            rec = record(learner, seed, m, scale=dataclasses.replace(PRETRAIN, epochs=e))
            rec["exported_by"] = (f"benchmarks/mode_switch_ladder.py, the {e}-epoch snapshot (the same state as "
                                  f"`pretrain` at {e} epochs)")
            (dest / f"physics-seed{seed}.json").write_text(json.dumps(rec, indent=1) + "\n")
    return rows


def main() -> None:
    parser = benchmark_parser(__doc__, out="results/ms-gode-mode-ladder", raw=True)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--epochs", type=int, nargs="+", default=[4, 8, 12, 16, 20])
    parser.add_argument("--export", type=int, nargs="*", default=[])
    args = parser.parse_args()
    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for s in args.seeds:
        rows += ladder(s, sorted(args.epochs), args.export, args.out)
        (args.out / "ladder_mode_switch.json").write_text(json.dumps(
            {"scale": dataclasses.asdict(PRETRAIN), "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
