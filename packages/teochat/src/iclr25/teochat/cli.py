"""Command line of ``iclr25 teochat``: ``demo``, ``generate``, ``train``, ``chat`` and ``repro``."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from iclr25.utils.cli import (
    add_run_command,
    method_parser,
    positive_float,
    positive_int,
    run_main,
    set_torch_threads,
)
from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import check_seed, seed_everything

# torch and the modules built on it are imported inside the commands, so that `--help` answers at once.

PACKAGE = "iclr25-teochat"

DEMO = {"n_train": 320, "n_test": 64, "steps": 110, "batch_size": 16, "d_model": 64, "n_layers": 2, "lr": 3e-3,
        "tasks": ["tsc", "qa", "loc"]}


def _threads(p: argparse.ArgumentParser) -> None:
    p.add_argument("--threads", type=positive_int("--threads"), default=1,
                   help="torch CPU threads (default: 1, fastest for tiny models on a shared machine)")


def demo(args: argparse.Namespace) -> int:
    cfg = dict(DEMO)
    run = RunResult.start(PACKAGE, "demo", seed=args.seed, config=cfg)
    check_seed(args.seed, "--seed")
    set_torch_threads(args.threads)
    from .assistant import TrainConfig, train_assistant  # noqa: PLC0415
    from .experiments import evaluate, make_data  # noqa: PLC0415
    from .figures import plot_sequence_boxes  # noqa: PLC0415
    from .model import ModelConfig  # noqa: PLC0415
    from .synth import SCENES  # noqa: PLC0415

    seed_everything(args.seed)
    data = make_data(cfg["n_train"], cfg["n_test"], seed=args.seed, tasks=cfg["tasks"])
    asst = train_assistant(data.train_seqs, data.train, seed=args.seed,
                           config=TrainConfig(steps=cfg["steps"], batch_size=cfg["batch_size"], lr=cfg["lr"]),
                           model_config=ModelConfig(vocab_size=_vocab_size(), d_model=cfg["d_model"],
                                                    n_layers=cfg["n_layers"]), desc="demo")
    ex = data.test
    scores, preds = evaluate(asst, data)
    run.add("temporal scene classification accuracy", scores["tsc"], peer=1 / len(SCENES), peer_name="chance",
            higher_is_better=True)
    run.add("change localisation pixel F1", scores["loc"], higher_is_better=True)
    run.add("change localisation box parse failures", scores.parse_failures["loc"], higher_is_better=False)
    run.add("change QA accuracy", scores["qa"], higher_is_better=True)
    run.add("training tokens/s", asst.tokens_per_s, unit="tokens/s", higher_is_better=True, timing=True)
    loc = [i for i, e in enumerate(ex) if e.task == "loc" and e.boxes]
    if loc:
        i = loc[0]
        fig = plot_sequence_boxes(args.out / "example.png", data.test_seqs[ex[i].seq], ex[i].answer, preds[i],
                                  title=f"demo ({cfg['steps']} steps): {ex[i].question}")
        run.add_figure(fig, relative_to=args.out)
    run.notes = "a 110-step run: the scene classes are learnt, localisation needs `repro`'s budget"
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    return 0


def _vocab_size() -> int:
    from .conversation import Vocabulary  # noqa: PLC0415

    return len(Vocabulary())


def generate(args: argparse.Namespace) -> int:
    check_seed(args.seed, "--seed")
    if args.size < 16:
        raise ValueError(f"--size must be at least 16 pixels, got {args.size}")
    run = RunResult.start(PACKAGE, "generate", seed=args.seed, config={"n": args.n, "size": args.size})
    from .conversation import make_examples  # noqa: PLC0415
    from .sequences import save_dataset  # noqa: PLC0415
    from .synth import generate_sequences  # noqa: PLC0415

    seqs = generate_sequences(args.n, seed=args.seed, size=args.size)
    examples = make_examples(seqs, seed=args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    save_dataset(args.out / "sequences.npz", seqs)
    with atomic_write(args.out / "conversations.jsonl") as f:
        for e in examples:
            f.write(json.dumps({"sequence": seqs[e.seq].name, "task": e.task, "question": e.question,
                                "answer": e.answer}) + "\n")
    run.add("sequences", float(len(seqs)))
    run.add("conversations", float(len(examples)))
    run.finish().save(args.out / "results.json")
    print(f"wrote {len(seqs)} sequences to {args.out / 'sequences.npz'} and {len(examples)} conversations to "
          f"{args.out / 'conversations.jsonl'}")
    return 0


def train(args: argparse.Namespace) -> int:
    check_seed(args.seed, "--seed")
    if not 0 < args.test_fraction < 1:
        raise ValueError(f"--test-fraction must be in (0, 1), got {args.test_fraction}")
    from .sequences import load_dataset  # noqa: PLC0415

    seqs = load_dataset(args.data)  # errors name the file before any work
    if len(seqs) < 2:
        raise ValueError(f"{args.data}: needs at least 2 sequences (train and test), got {len(seqs)}")
    set_torch_threads(args.threads)
    run = RunResult.start(PACKAGE, "train", seed=args.seed,
                          config={"data": str(args.data), "steps": args.steps, "batch_size": args.batch_size,
                                  "lr": args.lr, "references": not args.no_references,
                                  "last_frame": args.last_frame, "d_model": args.d_model})
    import numpy as np  # noqa: PLC0415

    from .assistant import TrainConfig, train_assistant  # noqa: PLC0415
    from .conversation import make_examples  # noqa: PLC0415
    from .metrics import evaluate_predictions  # noqa: PLC0415
    from .model import ModelConfig  # noqa: PLC0415

    rng = np.random.default_rng(args.seed)
    perm = rng.permutation(len(seqs))
    n_test = max(1, int(round(args.test_fraction * len(seqs))))
    test = [seqs[i] for i in perm[:n_test]]
    tr = [seqs[i] for i in perm[n_test:]]
    cfg = TrainConfig(steps=args.steps, batch_size=args.batch_size, lr=args.lr, references=not args.no_references,
                      last_frame=args.last_frame)
    asst = train_assistant(tr, make_examples(tr, seed=args.seed), config=cfg, seed=args.seed,
                           model_config=ModelConfig(vocab_size=_vocab_size(), image_size=tr[0].size,
                                                    d_model=args.d_model))
    test_ex = make_examples(test, seed=args.seed + 1)
    scores = evaluate_predictions(test_ex, asst.predict(test_ex, test))
    args.out.mkdir(parents=True, exist_ok=True)
    asst.save(args.out / "model.pt")
    for task, v in scores.scores.items():
        run.add(f"{task} ({'pixel F1' if task in ('loc', 'sre', 'det1') else 'score'})", v, higher_is_better=True)
    run.add("training tokens/s", asst.tokens_per_s, unit="tokens/s", timing=True)
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    print(f"model: {args.out / 'model.pt'}")
    return 0


def chat(args: argparse.Namespace) -> int:
    if not args.question.strip():
        raise ValueError("--question must not be empty")
    if (args.model is None) == (args.hf_model is None):
        raise ValueError("give exactly one of --model FILE.pt (from `iclr25 teochat train`) or --hf-model DIR")
    if args.model is not None:
        from .assistant import Assistant  # noqa: PLC0415

        set_torch_threads(args.threads)
        asst = Assistant.load(args.model)
        size = asst.model.cfg.image_size
    else:
        from .hf import HFLlavaAssistant  # noqa: PLC0415

        asst = HFLlavaAssistant(args.hf_model)
        size = asst.image_size
    from .sequences import load_sequence, resize_frames  # noqa: PLC0415

    dates = [d.strip() for d in args.dates.split(",")] if args.dates else None
    seq = load_sequence(args.sequence, dates=dates)
    frames = resize_frames(seq.frames, size)
    print(f"{seq.n_frames} frames in chronological order: {', '.join(seq.dates)}")
    print(asst.ask(frames, args.question))
    return 0


def repro(args: argparse.Namespace) -> int:
    from .experiments import run_repro  # noqa: PLC0415

    check_seed(args.seed, "--seed")
    set_torch_threads(args.threads)
    run = RunResult.start(PACKAGE, "repro", seed=args.seed)
    from .report import write_repro  # noqa: PLC0415

    res = run_repro(seed=args.seed, steps=args.steps)
    write_repro(run, res, args.out)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub = method_parser("teochat", "TEOChat: a vision-language assistant for temporal earth-observation "
                                           "sequences (Irvin et al., ICLR 2025)")
    p = add_run_command(sub, "demo", demo, help="train a tiny TEOChat for 110 steps on generated sequences "
                                                "(at most 60 s)", default_out="results/teochat")
    _threads(p)
    p = sub.add_parser("generate", help="write a generated data set: DIR/sequences.npz, DIR/conversations.jsonl",
                       description="Generate dated, shuffled 2-5-frame sequences and their conversations.")
    p.add_argument("--n", type=positive_int("--n"), default=6000, help="number of sequences (default: 6000)")
    p.add_argument("--size", type=positive_int("--size"), default=32, help="frame size in pixels (default: 32)")
    p.add_argument("--out", type=Path, default=Path("data"), help="output folder (default: data)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.set_defaults(func=generate)
    p = sub.add_parser("train", help="train a tiny TEOChat on a generated data set (.npz) and score it",
                       description="Train on DATA.npz (from `generate`), hold out --test-fraction of the "
                                   "sequences, write OUT/model.pt and OUT/results.json.")
    p.add_argument("--data", type=Path, required=True, help="sequences.npz written by `iclr25 teochat generate`")
    p.add_argument("--out", type=Path, default=Path("results/teochat-model"), help="output folder")
    p.add_argument("--steps", type=positive_int("--steps"), default=600, help="training steps (default: 600)")
    p.add_argument("--batch-size", type=positive_int("--batch-size"), default=32, help="batch size (default: 32)")
    p.add_argument("--lr", type=positive_float("--lr"), default=2e-3, help="peak learning rate (default: 2e-3)")
    p.add_argument("--d-model", type=positive_int("--d-model"), default=96, help="LM width (default: 96)")
    p.add_argument("--no-references", action="store_true", help="no 'image i :' references (Video-LLaVA style)")
    p.add_argument("--last-frame", action="store_true", help="show only the latest frame (single-image baseline)")
    p.add_argument("--test-fraction", type=float, default=0.1, help="held-out sequences (default: 0.1)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    _threads(p)
    p.set_defaults(func=train)
    p = sub.add_parser("chat", help="ask a question about your own dated image sequence",
                       description="Ask about a folder of dated frames (PNG/JPEG, or GeoTIFF with the geotiff "
                                   "extra). Dates come from dates.csv ('filename,YYYY-MM-DD'), --dates, or the "
                                   "file names (2021-06-30.png). Frames are sorted by date and resized to the "
                                   "model's input size.")
    p.add_argument("--sequence", type=Path, required=True, help="folder of dated images")
    p.add_argument("--question", required=True, help="e.g. 'identify the buildings that changed .'")
    p.add_argument("--model", type=Path, default=None, help="a .pt checkpoint from `iclr25 teochat train`")
    p.add_argument("--hf-model", type=Path, default=None, help="a local Hugging Face LLaVA model folder (hf extra)")
    p.add_argument("--dates", default=None, help="comma-separated dates, one per image in file-name order")
    _threads(p)
    p.set_defaults(func=chat)
    p = add_run_command(sub, "repro", repro, help="the reduced-scale reproduction (at most 10 min)",
                        default_out="results/teochat-repro")
    p.add_argument("--steps", type=positive_int("--steps"), default=1200,
                   help="training steps per model (default: 1200; the ladder evaluates 1/4, 1/2 and all)")
    _threads(p)
    return run_main(parser, argv)
