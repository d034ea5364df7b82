"""The budget ladder of change localisation over seeds, and the two small checkpoints the demo loads.

For each seed, TEOChat (every frame, ``image i :`` references) and the single-image baseline (the last frame
only) are trained on the same sequences, questions, seed and budget; both, and the trivial answerers, are
scored on a held-out split at every rung of the ladder (one run per model, evaluated along the way). The seed-0
models at the last rung are written to ``src/iclr25/teochat/weights`` (``.npz``, no pickle) with
``weights/demo.json`` (this command, the seeds, the configuration, every score); the ladder also goes to
``benchmarks/ladder_localisation.json`` and a markdown table on stdout.

    python benchmarks/make_demo_checkpoints.py            # the shipped checkpoints and the README's ladder
    python benchmarks/make_demo_checkpoints.py --out results/teochat-ladder   # elsewhere (make bench)

Run from ``packages/teochat``; one thread (the numbers are reproducible on one machine, not across CPUs).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from iclr25.teochat.assistant import TrainConfig, train_assistant
from iclr25.teochat.conversation import Vocabulary
from iclr25.teochat.experiments import evaluate, make_data, trivial_localisation
from iclr25.teochat.model import ModelConfig
from iclr25.utils.io import atomic_write

HERE = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--ladder", default="60,300,1200", help="training steps at which both models are scored")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--n-train", type=int, default=1200)
    ap.add_argument("--n-test", type=int, default=160)
    ap.add_argument("--tasks", default="loc", help="comma-separated training tasks (default: loc)")
    ap.add_argument("--weights", type=Path, default=HERE / "src/iclr25/teochat/weights")
    ap.add_argument("--json", type=Path, default=HERE / "benchmarks/ladder_localisation.json")
    ap.add_argument("--out", type=Path, default=None,
                    help="write the checkpoints, demo.json and ladder_localisation.json here instead (make bench)")
    args = ap.parse_args()
    if args.out is not None:
        args.weights, args.json = args.out, args.out / "ladder_localisation.json"
    torch.set_num_threads(1)
    tasks = args.tasks.split(",")
    seeds = [int(s) for s in args.seeds.split(",")]
    ladder = sorted(int(s) for s in args.ladder.split(","))
    steps = ladder[-1]
    mcfg = ModelConfig(vocab_size=len(Vocabulary()), d_model=64, n_layers=2)
    info = {"command": "python benchmarks/make_demo_checkpoints.py " + " ".join(sys.argv[1:]), "seed": seeds[0],
            "seeds": seeds, "ladder": ladder,
            "config": {"steps": steps, "batch_size": args.batch_size, "lr": args.lr, "n_train": args.n_train,
                       "n_test": args.n_test, "tasks": tasks, "d_model": 64, "n_layers": 2,
                       "data": "make_data(n_train, n_test, seed=seed): train sequences of seed, test of seed + 10000"},
            "torch": torch.__version__, "rows": []}
    args.weights.mkdir(parents=True, exist_ok=True)
    for seed in seeds:
        data = make_data(args.n_train, args.n_test, seed=seed, tasks=sorted(set(tasks) | {"loc"}))
        train = [e for e in data.train if e.task in tasks]
        loc = [e for e in data.test if e.task == "loc"]
        trivial = trivial_localisation(loc, data.test_seqs)
        for name, last in (("temporal", False), ("last_frame", True)):
            t0 = time.process_time()

            def on_rung(step: int, asst, name=name, t0=t0, seed=seed, trivial=trivial, loc=loc, data=data) -> None:
                s, _ = evaluate(asst, data, examples=loc)
                row = {"seed": seed, "model": name, "steps": step, "loc_f1": s.scores["loc"],
                       "parse_failures": s.parse_failures["loc"], "best_trivial": max(trivial.values()),
                       "trivial": trivial, "cpu_s": round(time.process_time() - t0, 1)}
                info["rows"].append(row)
                print(json.dumps(row), flush=True)

            asst = train_assistant(data.train_seqs, train, seed=seed, model_config=mcfg, desc=f"{name} {seed}",
                                   config=TrainConfig(steps=steps, batch_size=args.batch_size, lr=args.lr,
                                                      last_frame=last), callback=on_rung, callback_steps=ladder)
            if seed == seeds[0]:
                asst.save_npz(args.weights / ("demo-temporal.npz" if not last else "demo-last-frame.npz"))
    with atomic_write(args.weights / "demo.json") as f:
        f.write(json.dumps(info, indent=2, allow_nan=False) + "\n")
    with atomic_write(args.json) as f:
        f.write(json.dumps(info, indent=2, allow_nan=False) + "\n")
    print("\n| steps | TEOChat F1 (per seed) | last frame only F1 (per seed) | best trivial F1 (per seed) | "
          "TEOChat - last frame (mean) |\n|---|---|---|---|---|")
    for st in ladder:
        t = [r for r in info["rows"] if r["steps"] == st and r["model"] == "temporal"]
        lf = [r for r in info["rows"] if r["steps"] == st and r["model"] == "last_frame"]
        gap = statistics.fmean(a["loc_f1"] - b["loc_f1"] for a, b in zip(t, lf, strict=True))
        cells = [", ".join(f"{r['loc_f1']:.3f}" for r in rows) for rows in (t, lf)]
        best = ", ".join(f"{r['best_trivial']:.3f}" for r in t)
        print(f"| {st} | {cells[0]} | {cells[1]} | {best} | {gap:+.3f} |")


if __name__ == "__main__":
    main()
