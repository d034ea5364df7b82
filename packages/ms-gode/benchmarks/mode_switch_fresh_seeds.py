"""Per-task mode-switch accuracy at seeds never used before (issue 62), models trained here, not shipped.

    python benchmarks/mode_switch_fresh_seeds.py --out DIR [--seeds 200 201 202 203 204] [--fixture-epochs 16]

**Physics** (the claims' sequence: springs, charged, springs): at each seed MS-GODE is trained at the ``test``
rung's recipe (``pretrained.learner_for_seed(seed, shipped=False)``: :data:`~iclr25.ms_gode.pretrained.PRETRAIN`,
kept in the trained-checkpoint cache) and scored on the claim's 48 fresh test batches of 10
(``pretrained.measure``): the fraction per task given its own sub-network. The verdict uses the federation's
rules: the registered claim ``mode-switching`` (threshold 0.9 from issue 44; rule ``mean_ci`` because its
calibration seeds 100-109 showed ``every_seed`` is not robust) decided on these seeds, none of which any
threshold, margin or rule was set on.

**User fixture** (issue 62's two-oscillator arrays, ``benchmarks/mode_switch_ablation.py``'s ``fixture``) at the
same seeds, both time axes, trained with the issue's recipe (hidden 16, ``--fixture-epochs``): per-task selection
on 8 fresh batches of 5 per task, and the fraction of batches mode switching calls separable
(:attr:`iclr25.ms_gode.continual.ModeSelection.separable`).

Writes DIR/mode_switch_fresh_seeds.json (after every seed) and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from iclr25.ms_gode.claims import REGISTRY
from iclr25.ms_gode.pretrained import learner_for_seed, measure
from iclr25.utils.claims import Measurement, decide

sys.path.insert(0, str(Path(__file__).parent))
from mode_switch_ablation import AXES, FRESH_BATCH, _train  # noqa: E402

USED = {0, 1, 2, 5, 11, 12, 13, *range(100, 110)}  # seeds of the claims, tests, issue 62 and calibration


def fixture_row(seed: int, axis: str, epochs: int) -> dict:
    learner, fresh, cpu = _train(seed, AXES[axis], epochs=epochs)
    per_task, sep = [], []
    for j, te in enumerate(fresh):
        sels = [learner.select_mode(te, np.arange(b, b + FRESH_BATCH))
                for b in range(0, len(te) - FRESH_BATCH + 1, FRESH_BATCH)]
        per_task.append(float(np.mean([s.best == j for s in sels])))
        sep.append(float(np.mean([s.separable for s in sels])))
    return {"system": "user oscillators", "axis": axis, "seed": seed, "epochs": epochs, "train_cpu_s": round(cpu, 1),
            "per_task": per_task, "separable_fraction": sep}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[200, 201, 202, 203, 204])
    ap.add_argument("--fixture-epochs", type=int, default=16)
    args = ap.parse_args()
    reused = sorted(set(args.seeds) & USED)
    if reused:
        raise SystemExit(f"--seeds {reused} were used before (claims, tests, calibration): pick others")
    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "mode_switch_fresh_seeds.json"
    rows: list[dict] = []
    t0 = time.process_time()
    claim = REGISTRY.claims["mode-switching"]
    verdict: dict = {}

    def write() -> None:
        doc = {"command": "python benchmarks/mode_switch_fresh_seeds.py --out DIR", "seeds": args.seeds,
               "date": time.strftime("%Y-%m-%d"), "cpu_seconds": round(time.process_time() - t0, 1),
               "verdict": verdict, "rows": rows}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        tmp.replace(path)

    values = {}
    for seed in args.seeds:
        t1 = time.process_time()
        learner, source = learner_for_seed(seed, shipped=False)
        m = measure(learner, seed=seed, errors=False)
        values[seed] = Measurement(m["mode_fraction"])
        rows.append({"system": "physics", "seed": seed, "source": source, "mode_fraction": m["mode_fraction"],
                     "per_task": m["mode_per_task"], "ci95": m["mode_ci95"], "task_names": learner.task_names,
                     "unknown_known": m["unknown_known"], "unknown_unseen": m["unknown_unseen"],
                     "cpu_s": round(time.process_time() - t1, 1)})
        write()
        print(f"[{time.process_time() - t0:.0f}s] physics seed {seed}: {m['mode_per_task']}", flush=True)
    res = decide(claim, values, rung="test")
    verdict.update({"claim": claim.id, "rule": claim.rule, "threshold": claim.threshold,
                    "holds": bool(res.holds), "values": [values[s].value for s in args.seeds],
                    "mean_ci95": list(res.ci),
                    "decided_on": args.seeds})
    write()
    for axis in AXES:
        for seed in args.seeds:
            rows.append(fixture_row(seed, axis, args.fixture_epochs))
            write()
            print(f"[{time.process_time() - t0:.0f}s] fixture {axis} seed {seed}: {rows[-1]['per_task']}", flush=True)
    print("| system | seed | per-task selection | separable batches |\n|---|---|---|---|")
    for r in rows:
        print(f"| {r['system']} {r.get('axis', '')} | {r['seed']} | {' / '.join(f'{x:.2f}' for x in r['per_task'])} | "
              f"{' / '.join(f'{x:.2f}' for x in r.get('separable_fraction', [])) or '-'} |")
    print(f"mode-switching ({claim.rule}, threshold {claim.threshold}) at seeds {args.seeds}: "
          f"{'holds' if res.holds else 'does not hold'}")


if __name__ == "__main__":
    main()
