"""Ladder and ablation of the three repro claims that missed their declared expectation in 0.4.0 (0.4.1).

On the repro's data (per seed: :func:`~iclr25.teochat.experiments.make_data` with 2400 training / 240 test
sequences, :data:`~iclr25.teochat.experiments.REPRO_TASKS`, d=64, 2 layers, batch 16, lr 3e-3):

- ``specialist``: the siamese specialist at 100 / 200 / 400 steps (the 0.4.0 repro ran 200 and collapsed to F1 0
  at seeds 1-2): is its budget the cause?
- ``ladder``: TEOChat and the same model on the last frame only at 250 and 1000 steps (the repro's 500 is in
  ``claims.json``), scored on temporal scene classification (vs the answer prior), temporal referring and region
  temporal QA: does budget close the gap?
- ``tasks``: both models at 500 steps trained on the scene-classification and temporal-referring questions only
  (the data regime: in the repro each of the nine tasks gets a ninth of the questions);
- ``probe``: a linear classifier of the scene class on the first and last frames pooled to 8 x 8 px (Adam, 300
  full-batch steps): can the scene be read from the pixels at all (is the generator the cause)?

Writes ``ablation_claims.json`` (every row as it is measured).

    python benchmarks/ablation_claims.py --seeds 0,1,2 --out benchmarks --overwrite

``--out`` is checked before the work: a previous ``ablation_claims.json`` there is replaced only with ``--overwrite``.
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
from torch.nn import functional as F

from iclr25.teochat.assistant import TrainConfig, frames_to_tensor, train_assistant
from iclr25.teochat.conversation import Vocabulary
from iclr25.teochat.experiments import REPRO_TASKS, answer_prior, evaluate, make_data
from iclr25.teochat.metrics import pixel_f1
from iclr25.teochat.model import ModelConfig
from iclr25.teochat.repro import REPRO_RUNG
from iclr25.teochat.specialist import train_specialist
from iclr25.teochat.synth import SCENES
from iclr25.utils.io import atomic_write

ROWS = ("specialist", "ladder", "tasks", "probe")
QA = ("tsc", "tre", "rtqa")


def _probe(data, seed: int) -> float:
    def feats(seqs):
        chron = [s.chronological() for s in seqs]
        x = torch.cat([frames_to_tensor([c[0] for c in chron]), frames_to_tensor([c[-1] for c in chron])], 1)
        return F.avg_pool2d(x, 4).flatten(1)

    xtr, xte = feats(data.train_seqs), feats(data.test_seqs)
    mu, sd = xtr.mean(0), xtr.std(0) + 1e-6
    xtr, xte = (xtr - mu) / sd, (xte - mu) / sd
    ytr = torch.tensor([SCENES.index(s.scene) for s in data.train_seqs])
    yte = torch.tensor([SCENES.index(s.scene) for s in data.test_seqs])
    torch.manual_seed(seed)
    lin = torch.nn.Linear(xtr.shape[1], len(SCENES))
    opt = torch.optim.Adam(lin.parameters(), lr=1e-2, weight_decay=1e-4)
    for _ in range(300):
        loss = F.cross_entropy(lin(xtr), ytr)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        return float((lin(xte).argmax(1) == yte).float().mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--rows", default=",".join(ROWS))
    add_out(ap, "--out", "results/teochat-ablation-claims", ("ablation_claims.json",))
    ap.add_argument("--readme", type=Path, default=None,
                    help="also write the tables into this README, between its ablation-claims markers")
    ap.add_argument("--readme-only", action="store_true",
                    help="only rewrite --readme's tables from OUT/ablation_claims.json and claims.json")
    args = parse_checked(ap, check="--readme-only" not in sys.argv)  # --readme-only reads OUT, writes the README
    if args.readme_only:
        if args.readme is None:
            raise SystemExit("--readme-only needs --readme README.md")
        write_readme_block(json.loads((args.out / "ablation_claims.json").read_text()), args.readme)
        return
    torch.set_num_threads(1)
    seeds = [int(s) for s in args.seeds.split(",")]
    rows = args.rows.split(",")
    out = {"command": f"python benchmarks/ablation_claims.py --seeds {args.seeds} --rows {args.rows}",
           "torch": torch.__version__, "rung": REPRO_RUNG, "rows": []}
    args.out.mkdir(parents=True, exist_ok=True)
    v = len(Vocabulary())
    mcfg = ModelConfig(vocab_size=v, d_model=64, n_layers=2)
    cache = {}

    def data_of(seed: int, tasks=REPRO_TASKS):
        key = (seed, tuple(tasks))
        if key not in cache:
            cache[key] = make_data(REPRO_RUNG["n_train"], REPRO_RUNG["n_test"], seed=seed, tasks=tasks,
                                        balanced_looks=False)
        return cache[key]

    def emit(row: dict) -> None:
        out["rows"].append(row)
        print(json.dumps(row), flush=True)
        with atomic_write(args.out / "ablation_claims.json") as f:
            f.write(json.dumps(out, indent=2, allow_nan=False) + "\n")

    def assistants(row: str, seed: int, steps: int, tasks=REPRO_TASKS) -> None:
        data = data_of(seed, tasks)
        ex = [e for e in data.test if e.task in QA]
        prior = {t: answer_prior(data.train, data.test, t) for t in QA if any(e.task == t for e in ex)}
        for model, last in (("temporal", False), ("last_frame", True)):
            t0 = time.process_time()
            asst = train_assistant(data.train_seqs, data.train, seed=seed, model_config=mcfg,
                                   desc=f"{row} {model} {steps} {seed}",
                                   config=TrainConfig(steps=steps, batch_size=16, lr=3e-3, last_frame=last))
            s, _ = evaluate(asst, data, examples=ex)
            emit({"row": row, "seed": seed, "model": model, "steps": steps, "tasks": list(tasks),
                  "scores": s.scores, "answer_prior": prior, "cpu_s": round(time.process_time() - t0, 1)})

    for row in rows:
        for seed in seeds:
            if row == "specialist":
                data = data_of(seed)
                change = [s for s in data.train_seqs
                          if s.scene in ("residential", "construction_site", "demolition_site")]
                loc = [e for e in data.test if e.task == "loc"]
                for steps in (100, 200, 400):
                    t0 = time.process_time()
                    spec = train_specialist(change, steps=steps, seed=seed)
                    f1 = pixel_f1(spec.predict_boxes([data.test_seqs[e.seq] for e in loc]),
                                  [e.boxes for e in loc]).f1
                    emit({"row": row, "seed": seed, "model": "specialist", "steps": steps, "loc_f1": f1,
                          "cpu_s": round(time.process_time() - t0, 1)})
            elif row == "ladder":
                for steps in (250, 1000):
                    assistants(row, seed, steps)
            elif row == "tasks":
                assistants(row, seed, REPRO_RUNG["steps"], tasks=("tsc", "tre"))
            elif row == "probe":
                data = data_of(seed)
                t0 = time.process_time()
                emit({"row": row, "seed": seed, "model": "linear probe on 8x8 first+last frame",
                      "tsc_accuracy": _probe(data, seed),
                      "answer_prior": answer_prior(data.train, data.test, "tsc"),
                      "cpu_s": round(time.process_time() - t0, 1)})


    if args.readme is not None:
        write_readme_block(out, args.readme)


BEGIN, END = "<!-- ablation-claims:begin", "<!-- ablation-claims:end -->"


def _per_seed(rows: list[dict], row: str, model: str, steps: int, task: str) -> list[float]:
    return [r["scores"][task] for r in rows if r["row"] == row and r["model"] == model and r["steps"] == steps]


def tables(info: dict, claims: dict) -> str:
    """The ladder/ablation table (scene classification and temporal referring per rung, the repro's own rung
    from ``claims.json``) and the checks table (linear probe, specialist budget), from ``info``'s rows."""
    rows = info["rows"]
    seeds = sorted({r["seed"] for r in rows})
    by_id = {c["id"]: c for c in claims["claims"]}

    def cells(v: list[float]) -> str:
        return ", ".join(f"{x:.3f}" for x in v)

    prior = [next(r["answer_prior"]["tsc"] for r in rows if r["row"] == "ladder" and r["seed"] == s) for s in seeds]
    lines = ["| rung / ablation | steps | scene cls. TEOChat (per seed) | answer prior | TRE TEOChat (per seed) | "
             "TRE last frame only | TRE gap (min over seeds) | CPU s (both models, per seed) |",
             "|---|---|---|---|---|---|---|---|"]

    def line(name: str, steps: int, tsc: list[float], tre: list[float], tre_last: list[float], cpu: str) -> str:
        gap = min(a - b for a, b in zip(tre, tre_last, strict=True))
        return (f"| {name} | {steps} | {cells(tsc)} | {cells(prior)} | {cells(tre)} | {cells(tre_last)} | "
                f"{gap:+.3f} | {cpu} |")

    def cpu_of(row: str, steps: int) -> str:
        return ", ".join(f"{sum(r['cpu_s'] for r in rows if r['row'] == row and r['steps'] == steps and r['seed'] == s):.0f}"
                         for s in seeds)

    for steps in sorted({r["steps"] for r in rows if r["row"] == "ladder"}):
        if steps > REPRO_RUNG["steps"] and "repro-tre-temporal-beats-last-frame" in by_id:
            c = by_id["repro-tre-temporal-beats-last-frame"]
            lines.append(line("the repro itself (`claims.json`)", REPRO_RUNG["steps"],
                              by_id["repro-tsc-beats-answer-prior"]["values"], c["values"],
                              [ref["value"] if isinstance(ref, dict) else ref for ref in c["references"]], "–"))
        lines.append(line("ladder, the repro's nine-task mix", steps, _per_seed(rows, "ladder", "temporal", steps, "tsc"),
                          _per_seed(rows, "ladder", "temporal", steps, "tre"),
                          _per_seed(rows, "ladder", "last_frame", steps, "tre"), cpu_of("ladder", steps)))
    if any(r["row"] == "tasks" for r in rows):
        st = REPRO_RUNG["steps"]
        lines.append(line("data regime: scene classification + TRE questions only", st,
                          _per_seed(rows, "tasks", "temporal", st, "tsc"), _per_seed(rows, "tasks", "temporal", st, "tre"),
                          _per_seed(rows, "tasks", "last_frame", st, "tre"), cpu_of("tasks", st)))
    checks = ["| check | " + " | ".join(f"seed {s}" for s in seeds) + " |", "|---|" + "---|" * len(seeds)]
    probe = {r["seed"]: r["tsc_accuracy"] for r in rows if r["row"] == "probe"}
    if probe:
        checks.append("| linear probe of the scene class on the pixels (accuracy) | "
                      + " | ".join(f"{probe[s]:.3f}" for s in seeds) + " |")
    for steps in sorted({r["steps"] for r in rows if r["row"] == "specialist"}):
        f1 = {r["seed"]: r["loc_f1"] for r in rows if r["row"] == "specialist" and r["steps"] == steps}
        checks.append(f"| specialist F1, {steps} steps | " + " | ".join(f"{f1[s]:.3f}" for s in seeds) + " |")
    return "\n".join(lines) + "\n\n" + "\n".join(checks)


def write_readme_block(info: dict, readme: Path) -> None:
    """Replace the README's block between the ablation-claims markers by :func:`tables` (with the package's
    ``claims.json`` for the repro's own rung)."""
    claims = json.loads((Path(__file__).resolve().parents[1] / "claims.json").read_text())
    replace_block(readme, BEGIN, END,
                  " (generated from benchmarks/ablation_claims.json and claims.json by `python "
                  "benchmarks/ablation_claims.py --out benchmarks --readme README.md --readme-only`; do not edit) -->\n"
                  f"`{info['command']}` (torch {info['torch']})\n\n" + tables(info, claims) + "\n")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
