"""Ablation of the change-localisation F1 of the tiny TEOChat: which budget / choice moves it?

Each row trains the referenced (``image i :``) model for ``--steps`` steps on the repro's data and scores
change localisation (pixel F1) and its box parse-failure rate on the repro's test split. Rows: the repro's
configuration; localisation-only training (task mix); a wider, deeper LM (model size); twice the training
sequences (data size). Writes JSON and a markdown table.

    python benchmarks/ablation_localisation.py --steps 600 --out results/teochat-ablation
"""

from __future__ import annotations

import argparse
import json
import time

import torch
from _ablation_table import write_ablation  # the sibling module (benchmarks/ is the script's folder)
from _outputs import add_out, parse_checked

from iclr25.teochat.assistant import TrainConfig, train_assistant
from iclr25.teochat.conversation import Vocabulary
from iclr25.teochat.experiments import REPRO_TASKS, evaluate, make_data
from iclr25.teochat.model import ModelConfig


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=600)
    add_out(ap, "--out", "results/teochat-ablation", ("ablation.json", "ablation.md"))
    args = parse_checked(ap)
    torch.set_num_threads(1)
    v = len(Vocabulary())
    rows = [("repro configuration (d=64, 2 layers, lr 3e-3, 2400 seqs, all tasks)", {}, {}, 2400, REPRO_TASKS),
            ("task mix: localisation only", {}, {}, 2400, ("loc",)),
            ("model size: d=96, 3 layers", {"d_model": 96, "n_layers": 3}, {}, 2400, REPRO_TASKS),
            ("data size: 4800 sequences", {}, {}, 4800, REPRO_TASKS)]
    out, cache = [], {}
    for name, mkw, tkw, n_train, tasks in rows:
        key = (n_train, tasks)
        if key not in cache:
            cache[key] = make_data(n_train, 320, seed=0, tasks=tasks, balanced_looks=False)
        data = cache[key]
        t0 = time.perf_counter()
        mcfg = ModelConfig(vocab_size=v, **{"d_model": 64, "n_layers": 2, **mkw})
        asst = train_assistant(data.train_seqs, data.train, seed=0, model_config=mcfg,
                               config=TrainConfig(steps=args.steps, batch_size=32, **{"lr": 3e-3, **tkw}), desc=name)
        loc = [e for e in data.test if e.task == "loc"]
        s, _ = evaluate(asst, data, examples=loc)
        row = {"ablation": name, "steps": args.steps, "loc_f1": s.scores["loc"],
               "parse_failures": s.parse_failures["loc"], "seconds": time.perf_counter() - t0}
        out.append(row)
        print(json.dumps(row), flush=True)
    write_ablation(args.out, out, time_key="seconds", time_header="s")


if __name__ == "__main__":
    main()
