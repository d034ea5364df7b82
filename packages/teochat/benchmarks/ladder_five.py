"""Ladder and ablation of the five repro claims that had neither (issue 58): image references vs none on change
localisation and temporal referring, temporal vs last frame on damage classification and referring expressions,
and the frame-order claim.

On the repro's data per seed (:func:`~iclr25.teochat.experiments.make_data`, 2400 training / 240 test sequences,
:data:`~iclr25.teochat.experiments.REPRO_TASKS`, d=64, 2 layers, batch 16, lr 3e-3, one thread):

- ``ladder``: TEOChat, the same model without ``image i :`` references and the same model on the last frame
  only, at 250 and 1000 steps (the repro's own 500 are in ``claims.json``), every task scored, TEOChat also
  with its frames shuffled (TRE);
- ``budget``: TEOChat and the last-frame model at the repro's 500 steps on the box and damage questions only
  (loc, damage, sre, det1): in the repro each of nine tasks gets a ninth of the steps; is the per-task budget
  the cause? (Every model answered ``no_damage`` there; the damage claim's ``budget`` rung in
  :mod:`iclr25.teochat.claims` trains on the damage questions only, levels balanced, and the README table shows
  its ladder from ``budget/claims.json``.)

Writes ``ladder_five.json`` (every row as it is measured); ``--readme README.md`` writes the README's table.

    python benchmarks/ladder_five.py --seeds 0,1,2 --out benchmarks --readme README.md
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from _outputs import add_out, parse_checked  # sibling modules (benchmarks/ is the script's folder)
from _readme_block import replace_block

from iclr25.teochat.assistant import TrainConfig, train_assistant
from iclr25.teochat.conversation import ORDER_TASKS, Vocabulary
from iclr25.teochat.experiments import REPRO_TASKS, evaluate, make_data
from iclr25.teochat.model import ModelConfig
from iclr25.teochat.repro import REPRO_RUNG
from iclr25.utils.io import atomic_write

ROWS = ("ladder", "budget")
MODELS = {"teochat": {}, "no_references": {"references": False}, "last_frame": {"last_frame": True}}
SCORED = ("loc", "damage", "sre", "tre")
BUDGET_TASKS = ("loc", "damage", "sre", "det1")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--rows", default=",".join(ROWS))
    add_out(ap, "--out", "results/teochat-ladder-five", ("ladder_five.json",))
    ap.add_argument("--readme", type=Path, default=None,
                    help="also write the table into this README, between its ladder-five markers")
    ap.add_argument("--readme-only", action="store_true",
                    help="only rewrite --readme's table from OUT/ladder_five.json and claims.json")
    args = parse_checked(ap, check="--readme-only" not in sys.argv)
    if args.readme_only:
        if args.readme is None:
            raise SystemExit("--readme-only needs --readme README.md")
        write_readme_block(json.loads((args.out / "ladder_five.json").read_text()), args.readme)
        return
    torch.set_num_threads(1)
    seeds = [int(s) for s in args.seeds.split(",")]
    out = {"command": f"python benchmarks/ladder_five.py --seeds {args.seeds} --rows {args.rows}",
           "torch": torch.__version__, "rung": REPRO_RUNG, "rows": []}
    args.out.mkdir(parents=True, exist_ok=True)
    mcfg = ModelConfig(vocab_size=len(Vocabulary()), d_model=64, n_layers=2)

    def emit(row: dict) -> None:
        out["rows"].append(row)
        print(json.dumps(row), flush=True)
        with atomic_write(args.out / "ladder_five.json") as f:
            f.write(json.dumps(out, indent=2, allow_nan=False) + "\n")

    def train_and_score(row: str, seed: int, data, model: str, steps: int, tasks) -> None:
        t0 = time.process_time()
        asst = train_assistant(data.train_seqs, data.train, seed=seed, model_config=mcfg,
                               desc=f"{row} {model} {steps} {seed}",
                               config=TrainConfig(steps=steps, batch_size=16, lr=3e-3, **MODELS[model]))
        s, preds = evaluate(asst, data)
        scores = {t: float(s.scores[t]) for t in SCORED if t in s.scores}
        dmg = {p for p, e in zip(preds, data.test, strict=True) if e.task == "damage"}
        row_out = {"row": row, "seed": seed, "model": model, "steps": steps, "tasks": list(tasks),
                   "scores": scores, "damage_distinct_answers": len(dmg)}
        if model == "teochat" and "tre" in tasks:
            sh, _ = evaluate(asst, data, shuffle_frames=True,
                             examples=[e for e in data.test if e.task in ORDER_TASKS])
            row_out["tre_shuffled"] = float(sh.scores["tre"])
        row_out["cpu_s"] = round(time.process_time() - t0, 1)
        emit(row_out)

    for row in args.rows.split(","):
        for seed in seeds:
            if row == "ladder":
                data = make_data(REPRO_RUNG["n_train"], REPRO_RUNG["n_test"], seed=seed, tasks=REPRO_TASKS,
                                 balanced_looks=False)
                for steps in (250, 1000):
                    for model in MODELS:
                        train_and_score(row, seed, data, model, steps, REPRO_TASKS)
            elif row == "budget":
                data = make_data(REPRO_RUNG["n_train"], REPRO_RUNG["n_test"], seed=seed, tasks=BUDGET_TASKS,
                                 balanced_looks=False)
                for model in ("teochat", "last_frame"):
                    train_and_score(row, seed, data, model, REPRO_RUNG["steps"], BUDGET_TASKS)
            else:
                raise SystemExit(f"unknown row {row!r}; rows: {', '.join(ROWS)}")
    if args.readme is not None:
        write_readme_block(out, args.readme)


BEGIN, END = "<!-- ladder-five:begin", "<!-- ladder-five:end -->"
#: claim id -> (task, model, reference model); "shuffled" is TEOChat with its frames shuffled
CLAIMS = {"repro-loc-references-beat-no-references": ("loc", "teochat", "no_references"),
          "budget-damage-temporal-beats-last-frame": ("damage", "teochat", "last_frame"),
          "repro-sre-temporal-beats-last-frame": ("sre", "teochat", "last_frame"),
          "repro-tre-references-beat-no-references": ("tre", "teochat", "no_references"),
          "repro-tre-uses-frame-order": ("tre", "teochat", "shuffled")}


def _val(rows: list[dict], row: str, model: str, steps: int, task: str, seed: int) -> float | None:
    for r in rows:
        if r["row"] == row and r["steps"] == steps and r["seed"] == seed:
            if model == "shuffled" and r["model"] == "teochat":
                return r.get("tre_shuffled")
            if r["model"] == model:
                return r["scores"].get(task)
    return None


def tables(info: dict, claims: dict) -> str:
    """Per claim and rung (250 / the repro's 500 from ``claims.json`` / 1000 steps, then the budget ablation at
    500 steps on the box and damage tasks only): the value and its reference per seed, and the smallest gap."""
    rows = info["rows"]
    seeds = sorted({r["seed"] for r in rows})
    by_id = {c["id"]: c for c in claims["claims"]}
    budget = Path(__file__).resolve().parent / "budget" / "claims.json"  # `iclr25 claims teochat --rung budget`
    if budget.is_file():
        by_id.update({c["id"]: {**c, "budget": True} for c in json.loads(budget.read_text())["claims"]})

    def cells(v: list) -> str:
        return ", ".join("–" if x is None else f"{x:.3f}" for x in v)

    lines = ["| claim | rung / ablation | steps | TEOChat (per seed) | reference (per seed) | gap (min over seeds) |",
             "|---|---|---|---|---|---|"]
    for cid, (task, model, ref) in CLAIMS.items():
        entries = []
        for steps in (250, 500, 1000):
            if steps == REPRO_RUNG["steps"]:
                c = by_id.get(cid)
                if c is not None and not c.get("budget"):
                    entries.append(("the repro (`claims.json`)", steps, c["values"], c["references"]))
                continue
            v = [_val(rows, "ladder", model, steps, task, s) for s in seeds]
            r = [_val(rows, "ladder", ref, steps, task, s) for s in seeds]
            if any(x is not None for x in v):
                entries.append(("ladder, nine-task mix", steps, v, r))
        if ref == "last_frame" and any(r["row"] == "budget" for r in rows):
            st = REPRO_RUNG["steps"]
            entries.append(("budget: box + damage tasks only", st,
                            [_val(rows, "budget", model, st, task, s) for s in seeds],
                            [_val(rows, "budget", ref, st, task, s) for s in seeds]))
        c = by_id.get(cid)
        if c is not None and c.get("budget"):  # the budget rung: its ladder from the extras, then its decision
            name = "budget rung: damage questions only, levels balanced (`budget/claims.json`)"
            for st in (125, 250):
                key = f"_{st}_steps"
                if all(f"teochat{key}" in e for e in c.get("extra", [])):
                    entries.append((name, st, [e[f"teochat{key}"] for e in c["extra"]],
                                    [e[f"last_frame{key}"] for e in c["extra"]]))
            entries.append((name, REPRO_RUNG["steps"], c["values"], c["references"]))
        for name, steps, v, r in entries:
            gaps = [a - b for a, b in zip(v, r, strict=False) if a is not None and b is not None]
            gap = f"{min(gaps):+.3f}" if gaps else "–"
            lines.append(f"| {cid} | {name} | {steps} | {cells(v)} | {cells(r)} | {gap} |")
    dmg = [r["damage_distinct_answers"] for r in rows if "damage" in r["tasks"]]
    lines += ["", f"Distinct damage answers per model and seed (ladder rows): {min(dmg)}-{max(dmg)}." if dmg else ""]
    c = by_id.get("budget-damage-temporal-beats-last-frame")
    if c is not None and c.get("budget") and all("teochat_f1_destroyed" in e for e in c.get("extra", [])):
        ex = c["extra"]

        def per(key: str, fmt: str = ".3f") -> str:
            return ", ".join(format(e[key], fmt) for e in ex)

        lines += [f"Budget rung (seeds {', '.join(map(str, c['seeds']))}): distinct damage answers TEOChat "
                  f"{per('teochat_distinct_answers', '.0f')}, last frame {per('last_frame_distinct_answers', '.0f')}; "
                  f"F1 of `destroyed` (rubble in the last frame) TEOChat {per('teochat_f1_destroyed')}, last frame "
                  f"{per('last_frame_f1_destroyed')}; of `minor_damage` (seen only against the earlier frames) "
                  f"TEOChat {per('teochat_f1_minor_damage')}, last frame {per('last_frame_f1_minor_damage')}."]
    return "\n".join(lines)


def write_readme_block(info: dict, readme: Path) -> None:
    """Replace the README's block between the ladder-five markers by :func:`tables`."""
    claims = json.loads((Path(__file__).resolve().parents[1] / "claims.json").read_text())
    replace_block(readme, BEGIN, END,
                  " (generated from benchmarks/ladder_five.json and claims.json by `python benchmarks/ladder_five.py "
                  "--out benchmarks --readme README.md --readme-only`; do not edit) -->\n"
                  f"`{info['command']}` (torch {info['torch']})\n\n" + tables(info, claims) + "\n")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
