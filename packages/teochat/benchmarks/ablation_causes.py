"""Ablation of the likely causes of the missing temporal gain on change localisation, over seeds (0.3.1).

Per seed, on the ladder's data (training sequences of ``seed``, 160 test sequences of ``seed + 10000``,
localisation questions only, batch 16, lr 3e-3, d=64, 2 layers), TEOChat and the same model on the last frame
only, in each configuration:

- ``ladder``: the ladder's configuration (1200 training sequences, 16 tokens per frame);
- ``tokens``: 64 tokens per frame (an 8 x 8 grid from an encoder with two stride-2 convolutions instead of three,
  cells of 4 x 4 px instead of 8 x 8): can the LM read building positions when the image tokens resolve them?
- ``data``: 4x the training sequences (4800): at 1200 steps x 16 questions the ladder shows each of its 1200
  sequences 16 times; does fresh data, not more steps, make the difference?

The trivial answers (every visible building in the last / first frame, every building, no change) are scored
on the same test split. Writes ``ablation_causes.json`` and a markdown table.

    python benchmarks/ablation_causes.py --steps 400 --seeds 0,1,2 --out benchmarks --overwrite

``--out`` is checked before the work: previous ``ablation_causes.*`` files are replaced only with ``--overwrite``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
from _outputs import add_out, parse_checked  # the sibling module (benchmarks/ is the script's folder)

from iclr25.teochat.assistant import TrainConfig, train_assistant
from iclr25.teochat.conversation import Vocabulary
from iclr25.teochat.experiments import evaluate, make_data, trivial_localisation
from iclr25.teochat.model import ModelConfig
from iclr25.utils.io import atomic_write

ROWS = {"ladder": ("ladder configuration (1200 sequences, 16 tokens per frame)", 1200, {}),
        "tokens": ("64 tokens per frame (8 x 8 grid, 2 stride-2 convolutions)", 1200, {"grid": 8, "enc_downsample": 2}),
        "data": ("4x training sequences (4800)", 4800, {})}


def _join(values: list[float], fmt: str = ".3f") -> str:
    return ", ".join(format(x, fmt) for x in values)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--rows", default=",".join(ROWS))
    add_out(ap, "--out", "results/teochat-ablation-causes", ("ablation_causes.json", "ablation_causes.md"))
    args = parse_checked(ap)
    torch.set_num_threads(1)
    v = len(Vocabulary())
    out = {"command": f"python benchmarks/ablation_causes.py --steps {args.steps} --seeds {args.seeds} "
                      f"--rows {args.rows}", "torch": torch.__version__, "rows": []}
    rows = args.rows.split(",")
    for seed in (int(s) for s in args.seeds.split(",")):
        cache: dict[int, object] = {}
        for key in rows:
            label, n_train, mkw = ROWS[key]
            if n_train not in cache:
                cache[n_train] = make_data(n_train, 160, seed=seed, tasks=["loc"], balanced_looks=False)
            data = cache[n_train]
            loc = [e for e in data.test if e.task == "loc"]
            trivial = trivial_localisation(loc, data.test_seqs)
            for model, last in (("temporal", False), ("last_frame", True)):
                t0 = time.process_time()
                mcfg = ModelConfig(vocab_size=v, **{"d_model": 64, "n_layers": 2, **mkw})
                asst = train_assistant(data.train_seqs, data.train, seed=seed, model_config=mcfg,
                                       desc=f"{key} {model} {seed}",
                                       config=TrainConfig(steps=args.steps, batch_size=16, lr=3e-3, last_frame=last))
                s, _ = evaluate(asst, data, examples=loc)
                row = {"row": key, "ablation": label, "seed": seed, "model": model, "steps": args.steps,
                       "n_train": n_train, "loc_f1": s.scores["loc"], "parse_failures": s.parse_failures["loc"],
                       "best_trivial": max(trivial.values()), "trivial": trivial,
                       "cpu_s": round(time.process_time() - t0, 1)}
                out["rows"].append(row)
                print(json.dumps(row), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out / "ablation_causes.json") as f:
        f.write(json.dumps(out, indent=2, allow_nan=False) + "\n")
    lines = ["| ablation | steps | TEOChat F1 (per seed) | last frame only F1 (per seed) | TEOChat - last frame "
             "(mean) | best trivial (per seed) | CPU s (both models, per seed) |", "|---|---|---|---|---|---|---|"]
    for key in rows:
        t = [r for r in out["rows"] if r["row"] == key and r["model"] == "temporal"]
        lf = [r for r in out["rows"] if r["row"] == key and r["model"] == "last_frame"]
        gap = statistics.fmean(a["loc_f1"] - b["loc_f1"] for a, b in zip(t, lf, strict=True))
        cells = [_join([r["loc_f1"] for r in t]), _join([r["loc_f1"] for r in lf]), f"{gap:+.3f}",
                 _join([r["best_trivial"] for r in t]),
                 _join([a["cpu_s"] + b["cpu_s"] for a, b in zip(t, lf, strict=True)], ".0f")]
        lines.append(f"| {ROWS[key][0]} | {args.steps} | " + " | ".join(cells) + " |")
    with atomic_write(args.out / "ablation_causes.md") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
