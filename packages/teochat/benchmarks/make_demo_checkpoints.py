"""The change-localisation checkpoints the demo loads, and their budget ladder over seeds.

For each seed, TEOChat (every frame, ``image i :`` references) and the single-image baseline (the last frame
only) are trained on the same sequences, questions, seed and budget; both, and the trivial answerers, are
scored on the held-out split of ``make_data(.., seed=seed)`` (test sequences of seed + 10000, the demo's split at
``--seed 0``) at every rung of the ladder (one run per model, evaluated along the way). The seed-0 models at the
last rung are written to ``src/iclr25/teochat/weights`` (``.npz``, no pickle) with ``weights/demo.json`` (this
command, the seeds, the configuration, every score); the ladder also goes to
``benchmarks/ladder_localisation.json`` (rewritten after every model, so a cut run keeps what it finished) and a
markdown table on stdout.

Since 0.5.0 (issue 42) the default recipe trains on *fresh* change-scene sequences (``--train-data fresh``:
``--n-train`` residential / construction / demolition sequences drawn with seed + 20000, disjoint from the test
split), on change localisation plus single-image building detection (``det1``: box practice on one frame, as
TEOChat's mix holds GeoChat_Instruct's single-image grounding), with a 3-layer LM at lr 1e-3 for 5000 steps (scored at 1000 / 2500 / 5000):

    python benchmarks/make_demo_checkpoints.py --overwrite  # the shipped checkpoints and the README's ladder
    python benchmarks/make_demo_checkpoints.py --out results/teochat-ladder   # elsewhere (make bench)
    python benchmarks/make_demo_checkpoints.py --train-data split --n-train 1200 --tasks loc --layers 2 \\
        --lr 3e-3 --ladder 60,300,1200 --overwrite  # the 0.4 recipe (1200 sequences of the repro mix, ~650 questions)

Every output is checked before the training (``iclr25.utils.outputs``): the shipped weights and the committed
ladder are replaced only with ``--overwrite``. The weights folder gets ``manifest.json`` (sizes and SHA-256 of the
two checkpoints and ``demo.json``) written last, so the demo refuses a folder whose parts come from two runs.

Run from ``packages/teochat``; one thread (the numbers are reproducible on one machine, not across CPUs).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch
from _readme_block import replace_block  # the sibling module (benchmarks/ is the script's folder)

from iclr25.teochat.assistant import TrainConfig, train_assistant
from iclr25.teochat.conversation import Vocabulary, make_examples
from iclr25.teochat.experiments import evaluate, make_data, single_frame_oracle, trivial_localisation
from iclr25.teochat.model import ModelConfig
from iclr25.teochat.pretrained import PARTS
from iclr25.teochat.synth import generate_sequences
from iclr25.utils.checkpoints import MANIFEST, start_save, write_manifest
from iclr25.utils.io import atomic_write
from iclr25.utils.outputs import OutputError, add_output, check_outputs

HERE = Path(__file__).resolve().parents[1]

#: the training scenes: the change scenes in the proportions of ``REPRO_SCENES``
#: (3 residential : 2 construction : 2 demolition)
TRAIN_SCENES = ("residential",) * 3 + ("construction_site",) * 2 + ("demolition_site",) * 2


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--ladder", default="1000,2500,5000", help="training steps at which both models are scored")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--train-data", choices=("fresh", "split"), default="fresh",
                    help="fresh: --n-train change-scene sequences of seed + 20000; split: make_data's training "
                         "split (the repro scene mix, seed)")
    ap.add_argument("--n-train", type=int, default=16000)
    ap.add_argument("--n-test", type=int, default=160)
    ap.add_argument("--tasks", default="loc,det1", help="comma-separated training tasks (default: loc,det1)")
    ap.add_argument("--models", default="temporal,last_frame")
    add_output(ap, "--weights", kind="folder", run_files=(*PARTS, MANIFEST),
               default=lambda a: None if a.out is not None or not _ships(a) else HERE / "src/iclr25/teochat/weights",
               help="folder for the seed-0 checkpoints, demo.json and manifest.json (default: the package's "
                    "src/iclr25/teochat/weights; written when the seeds start at 0 and the models include temporal)")
    add_output(ap, "--json", kind="file", suffixes=(".json",),
               default=lambda a: None if a.out is not None else HERE / "benchmarks/ladder_localisation.json",
               help="the ladder's JSON, rewritten after every model (default: benchmarks/ladder_localisation.json)")
    ap.add_argument("--readme-only", action="store_true",
                    help="train nothing: rewrite the README's ladder block from --json (the committed ladder)")
    add_output(ap, "--out", kind="folder", run_files=(*PARTS, MANIFEST, "ladder_localisation.json"),
               help="write the checkpoints, demo.json, manifest.json and ladder_localisation.json here instead "
                    "of --weights and --json (make bench)")
    return ap


def _ships(args: argparse.Namespace) -> bool:
    """Whether the run writes checkpoints: seed 0 first and the temporal model among the models."""
    return args.seeds.split(",")[0].strip() == "0" and "temporal" in args.models.split(",")


def _run_info(args: argparse.Namespace, seeds: list[int], ladder: list[int], tasks: list[str]) -> dict:
    """The JSON record of the run: the command that remakes the files, the configuration, the rows to come."""
    data_note = ("make_data(n_train, n_test, seed=seed): train sequences of seed, test of seed + 10000"
                 if args.train_data == "split" else
                 "train: generate_sequences(n_train, seed=seed + 20000, scenes=TRAIN_SCENES); test: "
                 "make_data's test split (seed + 10000, the repro scene mix)")
    argv = list(sys.argv[1:])
    if "--out" in argv:  # the destination, not the recipe: the recorded command is the one that remakes the files
        i = argv.index("--out")
        del argv[i:i + 2]
    argv = [a for a in argv if a != "--overwrite"]
    return {"command": " ".join(["python benchmarks/make_demo_checkpoints.py", *argv]), "seed": seeds[0],
            "seeds": seeds, "ladder": ladder,
            "config": {"steps": ladder[-1], "batch_size": args.batch_size, "lr": args.lr, "n_train": args.n_train,
                       "n_test": args.n_test, "tasks": tasks, "d_model": args.d_model, "n_layers": args.layers,
                       "train_data": args.train_data, "data": data_note},
            "torch": torch.__version__, "rows": []}


def _seed_data(args: argparse.Namespace, seed: int, tasks: list[str]) -> tuple:
    """(test data, training sequences, training questions, test ``loc`` questions, trivial F1s, oracle F1)."""
    data = make_data(1 if args.train_data == "fresh" else args.n_train, args.n_test, seed=seed,
                     tasks=sorted(set(tasks) | {"loc"}), balanced_looks=False)
    if args.train_data == "fresh":
        train_seqs = generate_sequences(args.n_train, seed=seed + 20_000, scenes=TRAIN_SCENES)
        train = make_examples(train_seqs, seed=seed, tasks=tasks)
    else:
        train_seqs, train = data.train_seqs, [e for e in data.train if e.task in tasks]
    loc = [e for e in data.test if e.task == "loc"]
    return (data, train_seqs, train, loc, trivial_localisation(loc, data.test_seqs),
            single_frame_oracle(loc, data.test_seqs))


def main() -> None:
    ap = _parser()
    args = ap.parse_args()
    if args.readme_only:  # reads --json (or OUT/ladder_localisation.json); writes the README's block only
        src = args.out / "ladder_localisation.json" if args.out is not None else (
            args.json or HERE / "benchmarks/ladder_localisation.json")
        write_readme_block(json.loads(src.read_text(encoding="utf-8")), HERE / "README.md")
        return
    if args.out is not None and (args.weights is not None or args.json is not None):
        ap.error("--out replaces --weights and --json: give one or the others")
    try:
        check_outputs(args)  # before any training: the shipped files are replaced only with --overwrite
    except OutputError as exc:
        ap.error(str(exc))
    if args.out is not None:
        args.weights, args.json = args.out, args.out / "ladder_localisation.json"
    torch.set_num_threads(1)
    tasks = args.tasks.split(",")
    seeds = [int(s) for s in args.seeds.split(",")]
    models = args.models.split(",")
    ladder = sorted(int(s) for s in args.ladder.split(","))
    mcfg = ModelConfig(vocab_size=len(Vocabulary()), d_model=args.d_model, n_layers=args.layers)
    info = _run_info(args, seeds, ladder, tasks)
    ship = seeds[0] == 0 and "temporal" in models
    if ship:
        args.weights.mkdir(parents=True, exist_ok=True)
        start_save(args.weights)  # the old manifest goes first: a run cut short leaves no whole-looking folder
    args.json.parent.mkdir(parents=True, exist_ok=True)
    cache: dict[int, tuple] = {}
    # every seed of TEOChat first, then the last-frame model: a cut run keeps the headline's seeds
    for name in models:
        for seed in seeds:
            if seed not in cache:
                cache[seed] = _seed_data(args, seed, tasks)
            data, train_seqs, train, loc, trivial, oracle = cache[seed]
            last = name == "last_frame"
            t0 = time.process_time()

            def on_rung(step: int, asst, name=name, t0=t0, seed=seed, trivial=trivial, loc=loc, data=data,
                        oracle=oracle) -> None:
                s, _ = evaluate(asst, data, examples=loc)
                row = {"seed": seed, "model": name, "steps": step, "loc_f1": s.scores["loc"],
                       "parse_failures": s.parse_failures["loc"], "best_trivial": max(trivial.values()),
                       "trivial": trivial, "single_frame_oracle": oracle,
                       "cpu_s": round(time.process_time() - t0, 1)}
                info["rows"].append(row)
                print(json.dumps(row), flush=True)

            asst = train_assistant(train_seqs, train, seed=seed, model_config=mcfg, desc=f"{name} {seed}",
                                   config=TrainConfig(steps=ladder[-1], batch_size=args.batch_size, lr=args.lr,
                                                      last_frame=last), callback=on_rung, callback_steps=ladder)
            if ship and seed == 0:
                asst.save_npz(args.weights / ("demo-temporal.npz" if not last else "demo-last-frame.npz"))
            with atomic_write(args.json) as f:
                f.write(json.dumps(info, indent=2, allow_nan=False) + "\n")
    if ship:
        with atomic_write(args.weights / "demo.json") as f:
            f.write(json.dumps(info, indent=2, allow_nan=False) + "\n")
        parts = [p for p in PARTS if (args.weights / p).is_file()]
        write_manifest(args.weights, parts, meta={"format": "iclr25-teochat/1", "command": info["command"],
                                                  "seed": info["seed"]})
    print(ladder_table(info))
    if args.out is None:
        write_readme_block(info, HERE / "README.md")


BEGIN, END = "<!-- ladder-table:begin", "<!-- ladder-table:end -->"


def write_readme_block(info: dict, readme: Path) -> None:
    """Replace the README's block between the ladder-table markers by :func:`ladder_table` of ``info``."""
    replace_block(readme, BEGIN, END,
                  " (generated from benchmarks/ladder_localisation.json by `python "
                  "benchmarks/make_demo_checkpoints.py --readme-only`; do not edit) -->\n"
                  f"`{info['command']}` (torch {info['torch']}; n_train {info['config']['n_train']}, "
                  f"tasks {'+'.join(info['config']['tasks'])}, d={info['config']['d_model']}, "
                  f"{info['config']['n_layers']} layers, lr {info['config']['lr']}, batch {info['config']['batch_size']})"
                  "\n\n" + reference_table(info) + "\n\n" + ladder_table(info) + "\n")


def reference_table(info: dict) -> str:
    """Per seed: each trivial answerer and the single-frame oracle on the held-out ``loc`` questions."""
    first: dict[int, dict] = {}
    for r in info["rows"]:
        first.setdefault(r["seed"], r)
    seeds = sorted(first)
    lines = ["| reference (held-out split of the seed) | " + " | ".join(f"seed {s}" for s in seeds) + " |",
             "|---|" + "---|" * len(seeds)]
    for name in first[seeds[0]]["trivial"]:
        lines.append(f"| trivial: {name} | " + " | ".join(f"{first[s]['trivial'][name]:.3f}" for s in seeds) + " |")
    if all("single_frame_oracle" in first[s] for s in seeds):
        lines.append("| single-frame oracle (best rule on the last frame's statuses, chosen on the test set) | "
                     + " | ".join(f"{first[s]['single_frame_oracle']:.3f}" for s in seeds) + " |")
    return "\n".join(lines)


def ladder_table(info: dict) -> str:
    """The README's markdown table of a ladder JSON (per seed: TEOChat, last frame only, best trivial, the
    single-frame oracle; the margins as the minimum over seeds)."""
    rows = info["rows"]
    lines = ["| steps | TEOChat F1 (per seed) | last frame only F1 (per seed) | best trivial F1 (per seed) | "
             "single-frame oracle F1 (per seed) | TEOChat - best trivial (min over seeds) | "
             "TEOChat - last frame (min over seeds) | CPU s per model (per seed) |",
             "|---|---|---|---|---|---|---|---|"]
    for st in sorted({r["steps"] for r in rows}):
        t = sorted((r for r in rows if r["steps"] == st and r["model"] == "temporal"), key=lambda r: r["seed"])
        lf = sorted((r for r in rows if r["steps"] == st and r["model"] == "last_frame"), key=lambda r: r["seed"])
        cells = [", ".join(f"{r['loc_f1']:.3f}" for r in rs) or "-" for rs in (t, lf)]
        best = ", ".join(f"{r['best_trivial']:.3f}" for r in t)
        oracle = ", ".join(f"{r['single_frame_oracle']:.3f}" for r in t if "single_frame_oracle" in r) or "-"
        m_triv = min((r["loc_f1"] - r["best_trivial"] for r in t), default=float("nan"))
        pairs = [(a, b) for a in t for b in lf if a["seed"] == b["seed"]]
        m_last = min((a["loc_f1"] - b["loc_f1"] for a, b in pairs), default=float("nan"))
        cpu = ", ".join(f"{r['cpu_s']:.0f}" for r in t)
        margins = [f"{m:+.3f}" if m == m else "-" for m in (m_triv, m_last)]
        lines.append(f"| {st} | {cells[0]} | {cells[1]} | {best} | {oracle} | {margins[0]} | {margins[1]} | {cpu} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
