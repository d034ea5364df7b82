"""Mode switching at seeds nobody tuned (issue 58): MS-GODE trained here at the checkpoint rung at each seed
(``learner_for_seed(seed, shipped=False)``: never the shipped files, which were made on another CPU; kept in the
trained-checkpoint cache) and scored on the claim's fresh test batches (``measure``), beside the nearest-centroid
rule on the observed window's statistics without a model (``centroid_task_accuracy``, the same batches).

    python benchmarks/mode_switch_calibration.py --out DIR [--seeds 0 1 2 11 12 13 100 ... 109]

Writes DIR/mode_switch_calibration.json (one row per seed) and prints a markdown table. About 1 min of CPU per
seed that is not cached yet (training), 15-20 s per cached one.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from iclr25.ms_gode.data import task_sequence
from iclr25.ms_gode.pretrained import (
    PRETRAIN,
    TEST_BATCH_SIZE,
    TEST_BATCHES,
    TEST_SEED_OFFSET,
    centroid_task_accuracy,
    learner_for_seed,
    measure,
)

DEFAULT_SEEDS = (0, 1, 2, 11, 12, 13, *range(100, 110))


def one(seed: int) -> dict:
    t0 = time.process_time()
    learner, source = learner_for_seed(seed, shipped=False)
    m = measure(learner, seed=seed)
    train = [t.subset(np.arange(PRETRAIN.n_train))
             for t in task_sequence("physics", PRETRAIN.n_train + PRETRAIN.n_valid, seed=seed)]
    tests = task_sequence("physics", TEST_BATCHES * TEST_BATCH_SIZE, seed=TEST_SEED_OFFSET + seed)
    rival = centroid_task_accuracy(train, tests)
    return {"seed": seed, "source": source, "mode_fraction": m["mode_fraction"], "mode_per_task": m["mode_per_task"],
            "centroid_fraction": rival["fraction"], "centroid_per_task": rival["per_task"],
            "unknown_unseen": m["unknown_unseen"], "unknown_known": m["unknown_known"], "ap_mse": m["ap_mse"],
            "cpu_s": time.process_time() - t0}


def table(rows: list[dict]) -> str:
    lines = ["| seed | mode switching (of 48) | per task | nearest centroid, no model | per task |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['seed']} | {r['mode_fraction']:.3f} | "
                     + " / ".join(f"{a:.2f}" for a in r["mode_per_task"]) + f" | {r['centroid_fraction']:.3f} | "
                     + " / ".join(f"{a:.2f}" for a in r["centroid_per_task"]) + " |")
    cal = [r["mode_fraction"] for r in rows if r["seed"] >= 100]
    if len(cal) >= 2:
        lines.append(f"\nCalibration seeds (>= 100): mean {statistics.fmean(cal):.3f}, sd {statistics.stdev(cal):.3f}, "
                     f"{sum(v < 0.9 for v in cal)} of {len(cal)} below 0.9")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=list(DEFAULT_SEEDS))
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for s in args.seeds:
        rows.append(one(s))
        print(json.dumps(rows[-1]), flush=True)
    meta = {"command": "python benchmarks/mode_switch_calibration.py --out DIR --seeds " + " ".join(map(str, args.seeds)),
            "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())}
    (args.out / "mode_switch_calibration.json").write_text(json.dumps({**meta, "rows": rows}, indent=1) + "\n")
    print(table(rows))


if __name__ == "__main__":
    main()
