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
on 8 fresh batches of 5 per task, and the learner's own validation check
(:meth:`iclr25.ms_gode.continual.MSGODE.selection_check`: per task the fraction of its validation trajectories
given their own sub-network, and whether it calls the tasks separable; ``train`` prints its line when not).
``--fixture-only`` keeps the physics rows and verdict of an earlier run's JSON and redoes the fixture rows.

Writes DIR/mode_switch_fresh_seeds.json (after every seed) and DIR/mode_switch_fresh_seeds.md (the table, from
the JSON; ``--render`` only rewrites it from an existing JSON).
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
from mode_switch_ablation import AXES, FRESH_BATCH, _train, fixture  # noqa: E402

USED = {0, 1, 2, 5, 11, 12, 13, *range(100, 110)}  # seeds of the claims, tests, issue 62 and calibration


def fixture_row(seed: int, axis: str, epochs: int) -> dict:
    learner, fresh, cpu = _train(seed, AXES[axis], epochs=epochs)
    per_task = []
    for j, te in enumerate(fresh):
        sels = [learner.select_mode(te, np.arange(b, b + FRESH_BATCH))
                for b in range(0, len(te) - FRESH_BATCH + 1, FRESH_BATCH)]
        per_task.append(float(np.mean([s.best == j for s in sels])))
    # the learner's own validation check (what `train` runs and reports in one line when it fails)
    check = learner.selection_check([t.split((0.6, 0.2, 0.2))[1] for t in fixture(seed, AXES[axis])])
    return {"system": "user oscillators", "axis": axis, "seed": seed, "epochs": epochs, "train_cpu_s": round(cpu, 1),
            "per_task": per_task, "check_per_task": list(check.per_task), "separable": check.separable,
            "check_line": check.line()}


def markdown(doc: dict) -> str:
    """The docs table of a run, every number from ``doc`` (the JSON the run wrote)."""
    v = doc.get("verdict") or {}
    lines = ["# Mode switching at seeds never used before (issue 62)", "",
             f"Written by `{doc['command']}` (seeds {', '.join(map(str, doc['seeds']))}) on {doc['date']} "
             f"({doc['cpu_seconds']} s CPU) from `mode_switch_fresh_seeds.json` beside this file. Every model was "
             "trained here at these seeds (none shipped, none used by a claim, a test, a calibration or an ablation "
             "before). Physics: the claims' sequence at the `test` rung's recipe, 16 fresh test batches of 10 per "
             "task. User oscillators: issue 62's two-oscillator arrays (omega = 1 and 4), hidden 16, "
             f"{next((r['epochs'] for r in doc['rows'] if 'epochs' in r), '-')} epochs, 8 fresh batches of 5 per "
             "task, on frame numbers and with frames 0.1 apart. Per-task selection: the fraction of a task's "
             "batches given its own sub-network. Validation check: `MSGODE.selection_check` on the tasks' "
             "validation parts (what `iclr25 ms-gode train` runs), per task the fraction given its own "
             "sub-network, and whether it calls the tasks separable (when not, `train` says so in one line "
             "with the per-mask losses).",
             "", "| system | time axis | seed | per-task selection | validation check per task (separable?) |",
             "|---|---|---|---|---|"]
    for r in doc["rows"]:
        sep = (" / ".join(f"{x:.2f}" for x in r["check_per_task"]) + f" ({'yes' if r['separable'] else 'no'})"
               if "check_per_task" in r else "-")
        system = r["system"] if r["system"] != "physics" else "physics (" + ", ".join(r["task_names"]) + ")"
        lines.append(f"| {system} | {r.get('axis', '-')} | {r['seed']} | "
                     f"{' / '.join(f'{x:.2f}' for x in r['per_task'])} | {sep} |")
    if v:
        lines += ["", f"Claim `{v['claim']}` (rule `{v['rule']}`, threshold {v['threshold']}) decided at seeds "
                      f"{', '.join(map(str, v['decided_on']))}: per-seed fractions "
                      f"{', '.join(f'{x:.3f}' for x in v['values'])} (mean {sum(v['values']) / len(v['values']):.3f}), "
                      f"95 % interval of the mean minus the threshold "
                      f"[{v['mean_ci95'][0]:+.3f}, {v['mean_ci95'][1]:+.3f}]: "
                      f"{'holds' if v['holds'] else 'does not hold'}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[200, 201, 202, 203, 204])
    ap.add_argument("--fixture-epochs", type=int, default=16)
    ap.add_argument("--fixture-only", action="store_true",
                    help="keep the physics rows and verdict of DIR's JSON (same seeds) and redo the fixture rows")
    ap.add_argument("--render", action="store_true", help="only rewrite DIR/mode_switch_fresh_seeds.md from the JSON")
    args = ap.parse_args()
    path = args.out / "mode_switch_fresh_seeds.json"
    if args.render:
        (args.out / "mode_switch_fresh_seeds.md").write_text(markdown(json.loads(path.read_text(encoding="utf-8"))),
                                                             encoding="utf-8")
        return
    reused = sorted(set(args.seeds) & USED)
    if reused:
        raise SystemExit(f"--seeds {reused} were used before (claims, tests, calibration): pick others")
    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    t0 = time.process_time()
    claim = REGISTRY.claims["mode-switching"]
    verdict: dict = {}
    physics_cpu = None

    command = "python benchmarks/mode_switch_fresh_seeds.py --out DIR --seeds " + " ".join(map(str, args.seeds))
    if args.fixture_only:
        command += " (physics rows), then the same with --fixture-only (the user-fixture rows)"

    def write() -> None:
        doc = {"command": command, "seeds": args.seeds,
               "date": time.strftime("%Y-%m-%d"), "cpu_seconds": round(time.process_time() - t0, 1),
               "physics_cpu_seconds": physics_cpu, "verdict": verdict, "rows": rows}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        tmp.replace(path)
        (args.out / "mode_switch_fresh_seeds.md").write_text(markdown(doc), encoding="utf-8")

    if args.fixture_only:
        old = json.loads(path.read_text(encoding="utf-8"))
        if old["seeds"] != args.seeds:
            raise SystemExit(f"--fixture-only: {path} has seeds {old['seeds']}, not {args.seeds}")
        rows[:] = [r for r in old["rows"] if r["system"] == "physics"]
        verdict.update(old["verdict"])
        t0 -= old.get("physics_cpu_seconds", old["cpu_seconds"])
    else:
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
                        "mean_ci95": list(res.ci), "decided_on": args.seeds})
    physics_cpu = round(time.process_time() - t0, 1)
    write()
    for axis in AXES:
        for seed in args.seeds:
            rows.append(fixture_row(seed, axis, args.fixture_epochs))
            write()
            print(f"[{time.process_time() - t0:.0f}s] fixture {axis} seed {seed}: {rows[-1]['per_task']}", flush=True)
    print(markdown(json.loads(path.read_text(encoding="utf-8"))))


if __name__ == "__main__":
    main()
