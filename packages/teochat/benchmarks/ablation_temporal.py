"""Ablation of change localisation on the 0.3 generator (changed buildings among unchanged ones): which choice
moves the tiny TEOChat's pixel F1 towards the trivial answers and the specialist?

Rows (seed 0, the ladder's data: 1200 training / 160 test sequences, localisation questions only, batch 16):
the ladder's configuration; a wider, deeper LM (d=96, 3 layers); single-image detection added to the training
mix (practice at writing boxes); a lower learning rate (1e-3); and the siamese U-Net-lite specialist on the
(first, last) frame pairs of the same sequences. Writes JSON and a markdown table.

    python benchmarks/ablation_temporal.py --steps 400 --out results/teochat-ablation-temporal
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
from iclr25.teochat.experiments import evaluate, make_data, trivial_localisation
from iclr25.teochat.metrics import pixel_f1
from iclr25.teochat.model import ModelConfig
from iclr25.teochat.specialist import train_specialist


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    add_out(ap, "--out", "results/teochat-ablation-temporal", ("ablation.json", "ablation.md"))
    args = parse_checked(ap)
    torch.set_num_threads(1)
    v = len(Vocabulary())
    data = make_data(1200, 160, seed=args.seed, tasks=["loc", "det1"], balanced_looks=False)
    loc = [e for e in data.test if e.task == "loc"]
    trivial = trivial_localisation(loc, data.test_seqs)
    rows = [("ladder configuration (d=64, 2 layers, 16 tokens/frame, lr 3e-3, loc only)", {}, {}, ("loc",)),
            ("model size: d=96, 3 layers", {"d_model": 96, "n_layers": 3}, {}, ("loc",)),
            ("task mix: + single-image detection (box practice)", {}, {}, ("loc", "det1")),
            ("learning rate 1e-3", {}, {"lr": 1e-3}, ("loc",))]
    out = []
    for name, mkw, tkw, tasks in rows:
        t0 = time.process_time()
        mcfg = ModelConfig(vocab_size=v, **{"d_model": 64, "n_layers": 2, **mkw})
        train = [e for e in data.train if e.task in tasks]
        asst = train_assistant(data.train_seqs, train, seed=args.seed, model_config=mcfg, desc=name,
                               config=TrainConfig(steps=args.steps, batch_size=16, **{"lr": 3e-3, **tkw}))
        s, _ = evaluate(asst, data, examples=loc)
        row = {"ablation": name, "steps": args.steps, "loc_f1": s.scores["loc"],
               "parse_failures": s.parse_failures["loc"], "cpu_s": time.process_time() - t0}
        out.append(row)
        print(json.dumps(row), flush=True)
    t0 = time.process_time()
    change = [s for s in data.train_seqs if s.scene in ("residential", "construction_site", "demolition_site")]
    spec = train_specialist(change, steps=args.steps, seed=args.seed)
    f1 = pixel_f1(spec.predict_boxes([data.test_seqs[e.seq] for e in loc]), [e.boxes for e in loc]).f1
    out.append({"ablation": "specialist: siamese U-Net-lite on (first, last) frames", "steps": args.steps,
                "loc_f1": f1, "parse_failures": 0.0, "cpu_s": time.process_time() - t0})
    print(json.dumps(out[-1]), flush=True)
    for k, val in trivial.items():
        out.append({"ablation": f"trivial: {k}", "steps": 0, "loc_f1": val, "parse_failures": 0.0, "cpu_s": 0.0})
    write_ablation(args.out, out, time_key="cpu_s", time_header="CPU s")


if __name__ == "__main__":
    main()
