"""How mode switching is scored (issue 44): the shipped 16-epoch checkpoints (seeds 0, 1, 2) on fresh test tasks
under several scorings: batches of 6 or 10 trajectories, 8 or 16 batches per task, and the test set min-max
scaled by its own ranges (as every task set is, the package's default) or by the training set's ranges.

    python benchmarks/mode_switch_scoring.py --out DIR

Writes DIR/mode_switch_scoring.json (one row per scoring and seed) and prints a markdown table: hits of
decisions, with the Wilson 95 % interval and the per-task fractions. No training (about 1 min of CPU).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import numpy as np

import iclr25.ms_gode.data as data
from iclr25.ms_gode.pretrained import PRETRAIN, TEST_SEED_OFFSET, load_pretrained, measure

_own_scale = data.task_sequence


def _training_scale(which: str, n: int, *, seed: int = 0, **kwargs):
    """The test tasks re-scaled with the min-max ranges of the training tasks of the same seed."""
    tasks = _own_scale(which, n, seed=seed, **kwargs)
    if seed < TEST_SEED_OFFSET:
        return tasks
    train = _own_scale(which, PRETRAIN.n_train + PRETRAIN.n_valid, seed=seed - TEST_SEED_OFFSET)
    out = []
    for te, tr in zip(tasks, train, strict=True):
        lo, hi = np.asarray(te.params["scale_lo"]), np.asarray(te.params["scale_hi"])
        tlo, thi = np.asarray(tr.params["scale_lo"]), np.asarray(tr.params["scale_hi"])
        raw = (te.values.astype(np.float64) + 1) / 2 * (hi - lo) + lo
        out.append(dataclasses.replace(te, values=(2 * (raw - tlo) / (thi - tlo) - 1).astype(np.float32)))
    return out


SCORINGS = [("8 batches of 6, own scale (0.3.0)", 8, 6, False),
            ("8 batches of 6, training-set scale", 8, 6, True),
            ("16 batches of 6, own scale", 16, 6, False),
            ("8 batches of 10, own scale", 8, 10, False),
            ("16 batches of 10, own scale (0.4: claims, demo)", 16, 10, False)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, n_batches, batch_size, rescale in SCORINGS:
        data.task_sequence = _training_scale if rescale else _own_scale
        try:
            for seed in args.seeds:
                learner, _ = load_pretrained(seed)
                m = measure(learner, seed=seed, n_batches=n_batches, batch_size=batch_size)
                row = {"scoring": name, "seed": seed, **{k: m[k] for k in (
                    "mode_hits", "mode_batches", "mode_fraction", "mode_ci95", "mode_per_task", "af_mse",
                    "unknown_unseen", "unknown_known")}}
                print(json.dumps(row), flush=True)
                rows.append(row)
        finally:
            data.task_sequence = _own_scale
    (args.out / "mode_switch_scoring.json").write_text(json.dumps(rows, indent=1) + "\n")
    print("| scoring | " + " | ".join(f"seed {s}: hits (95 % CI), per task" for s in args.seeds) + " |")
    print("|---|" + "---|" * len(args.seeds))
    for name, *_ in SCORINGS:
        cells = [f"{r['mode_hits']}/{r['mode_batches']} ({r['mode_ci95'][0]:.2f}-{r['mode_ci95'][1]:.2f}), "
                 + " / ".join(f"{a:.2f}" for a in r["mode_per_task"]) for r in rows if r["scoring"] == name]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
