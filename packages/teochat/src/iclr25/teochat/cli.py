"""Command line of ``iclr25 teochat``: ``demo``, ``generate``, ``train``, ``chat`` and ``repro``."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

from iclr25.utils.cli import (
    add_force_argument,
    add_run_command,
    method_parser,
    positive_float,
    positive_int,
    run_main,
    set_torch_threads,
)
from iclr25.utils.guards import check_out, check_size
from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import check_seed, seed_everything

# torch and the modules built on it are imported inside the commands, so that `--help` answers at once.

PACKAGE = "iclr25-teochat"

DEMO = {"n_train": 240, "n_test": 64, "steps": 80, "batch_size": 16, "d_model": 64, "n_layers": 2, "lr": 3e-3,
        "tasks": ["tsc", "qa", "loc"]}


#: Rough cost of one training question (forward + backward) of the tiny assistant at d_model = 64 on one core of
#: this machine, from the repro's throughput (1200 steps x 32 questions in about 150 s); the size guard scales it
#: with the batch and (d_model / 64)^2. An order of magnitude is enough to refuse 10^12.
_S_PER_QUESTION = 0.004


def _train_seconds(steps: int, batch_size: int, d_model: int = 64, models: int = 1) -> float:
    return models * steps * batch_size * _S_PER_QUESTION * max(1.0, (d_model / 64) ** 2)


def _threads(p: argparse.ArgumentParser) -> None:
    p.add_argument("--threads", type=positive_int("--threads"), default=1,
                   help="torch CPU threads (default: 1, fastest for tiny models on a shared machine)")


def demo(args: argparse.Namespace) -> int:
    cfg = dict(DEMO)
    run = RunResult.start(PACKAGE, "demo", seed=args.seed, config=cfg)
    check_seed(args.seed, "--seed")
    set_torch_threads(args.threads)
    from .assistant import TrainConfig, train_assistant  # noqa: PLC0415
    from .experiments import (  # noqa: PLC0415
        TRIVIAL_LOCALISATION,
        answer_prior,
        evaluate,
        make_data,
        trivial_localisation,
    )
    from .figures import plot_sequence_boxes  # noqa: PLC0415
    from .metrics import parse_boxes  # noqa: PLC0415
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
    trivial = trivial_localisation(ex, data.test_seqs)
    best = max(trivial, key=trivial.get)
    loc = run.add("change localisation pixel F1", scores["loc"], peer=trivial[best],
                  peer_name=f"trivial answer: {best}", higher_is_better=True, headline=True)
    prior = answer_prior(data.train, ex, "tsc")
    tsc = run.add("temporal scene classification accuracy", scores["tsc"], peer=prior,
                  peer_name="answer prior (most common training scene)", higher_is_better=True, headline=True)
    for name, v in trivial.items():
        run.add(f"change localisation pixel F1, trivial: {name}", v, higher_is_better=True)
    failures = scores.parse_failures["loc"]
    run.add("change localisation box parse failures", failures, higher_is_better=False)
    run.add("temporal scene classification, chance", 1 / len(SCENES))
    run.add("change QA accuracy", scores["qa"], peer=answer_prior(data.train, ex, "qa"),
            peer_name="answer prior", higher_is_better=True)
    run.add("training tokens/s", asst.tokens_per_s, unit="tokens/s", higher_is_better=True, timing=True)
    failing = [m for m in (loc, tsc) if not m.holds]
    if failing:
        why = []
        if not loc.holds:
            why.append(f"localisation F1 {scores['loc']:.3f} vs {trivial[best]:.3f} for '{best}' "
                       f"({failures:.0%} of box answers unparseable): {cfg['steps']} steps do not teach the tiny "
                       "LM boxes, and on this generator time-blind answers score high (issue 42)")
        if not tsc.holds:
            why.append(f"scene accuracy {scores['tsc']:.3f} vs answer prior {prior:.3f}")
        run.headline_note = "does not hold at the demo's 60-s budget: " + "; ".join(why)
    locs = [i for i, e in enumerate(ex) if e.task == "loc" and e.boxes]
    if locs:
        i = locs[0]
        ok = parse_boxes(preds[i]).valid
        fig = plot_sequence_boxes(args.out / ("example.png" if ok else "example-prediction-unparseable.png"),
                                  data.test_seqs[ex[i].seq], ex[i].answer, preds[i],
                                  title=f"demo ({cfg['steps']} steps): {ex[i].question}"
                                  + ("" if ok else f" [predicted answer unparseable: {preds[i][:40]!r}]"))
        run.add_figure(fig, relative_to=args.out)
    run.notes = (f"a {cfg['steps']}-step run; localisation is scored beside the trivial answerers "
                 f"{', '.join(TRIVIAL_LOCALISATION)} (issue 42)")
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
    check_out(args.out, overwrite=args.overwrite, run_files=("sequences.npz", "conversations.jsonl", "results.json"))
    # up to 5 frames of size^2 x 3 bytes per sequence, plus float32 rendering buffers of one sequence at a time
    check_size(f"--n {args.n} --size {args.size}", bytes_needed=args.n * 5 * args.size ** 2 * 3 * 2.0,
               seconds_needed=args.n * 2e-3 * (args.size / 32) ** 2, force=args.force)
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
    check_out(args.out, inputs=[args.data], overwrite=args.overwrite, run_files=("model.pt", "results.json"))
    check_size(f"--steps {args.steps} --batch-size {args.batch_size} --d-model {args.d_model}",
               seconds_needed=_train_seconds(args.steps, args.batch_size, args.d_model), force=args.force)
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
    from .sequences import FramesThinnedWarning, load_sequence, resize_frames  # noqa: PLC0415

    dates = [d.strip() for d in args.dates.split(",")] if args.dates else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FramesThinnedWarning)
        seq = load_sequence(args.sequence, dates=dates, max_frames=args.max_frames)
    for w in caught:  # said, never silent (issue 40): the frames the model did not see
        if issubclass(w.category, FramesThinnedWarning):
            print(f"note: {w.message}", file=sys.stderr)
    frames = resize_frames(seq.frames, size)
    print(f"{seq.n_frames} frames in chronological order: {', '.join(seq.dates)}")
    print(asst.ask(frames, args.question))
    return 0


def repro(args: argparse.Namespace) -> int:
    check_seed(args.seed, "--seed")
    check_size(f"--steps {args.steps}", seconds_needed=_train_seconds(args.steps, 32, models=3), force=args.force)
    from .experiments import run_repro  # noqa: PLC0415

    set_torch_threads(args.threads)
    run = RunResult.start(PACKAGE, "repro", seed=args.seed)
    from .report import write_repro  # noqa: PLC0415

    res = run_repro(seed=args.seed, steps=args.steps)
    write_repro(run, res, args.out)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub = method_parser("teochat", "TEOChat: a vision-language assistant for temporal earth-observation "
                                           "sequences (Irvin et al., ICLR 2025)")
    p = add_run_command(sub, "demo", demo, help="train a tiny TEOChat for 80 steps on generated sequences "
                                                "(at most 60 s)", default_out="results/teochat")
    _threads(p)
    p = sub.add_parser("generate", help="write a generated data set: DIR/sequences.npz, DIR/conversations.jsonl",
                       description="Generate dated, shuffled 2-5-frame sequences and their conversations.")
    p.add_argument("--n", type=positive_int("--n"), default=6000, help="number of sequences (default: 6000)")
    p.add_argument("--size", type=positive_int("--size"), default=32, help="frame size in pixels (default: 32)")
    p.add_argument("--out", type=Path, default=Path("data"),
                   help="output folder (default: data); other files in it are kept")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--overwrite", action="store_true", help="replace a previous data set in --out")
    add_force_argument(p)
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
    p.add_argument("--overwrite", action="store_true", help="replace a previous model.pt/results.json in --out")
    add_force_argument(p)
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
    p.add_argument("--max-frames", type=positive_int("--max-frames"), default=16,
                   help="frames the model sees (default: 16, TEOChat's MAX_IMAGE_LENGTH); a longer sequence is "
                        "thinned to an order-preserving seeded subset, and the command says so")
    _threads(p)
    p.set_defaults(func=chat)
    p = add_run_command(sub, "repro", repro, help="the reduced-scale reproduction (at most 10 min)",
                        default_out="results/teochat-repro")
    p.add_argument("--steps", type=positive_int("--steps"), default=1200,
                   help="training steps per model (default: 1200; the ladder evaluates 1/4, 1/2 and all)")
    add_force_argument(p)
    _threads(p)
    return run_main(parser, argv)
