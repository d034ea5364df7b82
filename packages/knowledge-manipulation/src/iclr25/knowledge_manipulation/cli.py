"""Command line of ``iclr25 knowledge-manipulation``: ``demo``, ``generate``, ``train``, ``eval``, ``repro``.

The handlers of ``generate``, ``train`` and ``eval`` are here; ``demo`` and ``repro`` live in :mod:`.demo` and
:mod:`.repro`, imported only when they run. Torch is imported inside the commands, so ``--help`` stays light.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from iclr25.utils import cli as ucli
from iclr25.utils.guards import check_size
from iclr25.utils.outputs import add_output

DESCRIPTION = ("Knowledge manipulation by language models on synthetic biographies: retrieval, classification, "
               "comparison and inverse search, with and without chain of thought (Allen-Zhu & Li, ICLR 2025).")
DEMO_HELP = ("fine-tune a tiny GPT that stores 100 people's biographies (shipped Stage A checkpoint; "
             "trained first for an unshipped --seed) on month parity without and with CoT, and compare "
             "them on test people (about 10 s)")
REPRO_HELP = ("the reduced-scale reproduction decided over seeds 0-4 (N = 100, Stage A trained at each "
              "seed): month parity without / with CoT on the fine-tune data / epoch ladder, CoT at "
              "inference only, month comparison, inverse search; claims.json, a per-seed table "
              "(summary.md) and ladder.png (about 4 min of one core; the CoT claims: iclr25 claims "
              "knowledge-manipulation --rung cot)")
#: the ``--help`` description of a command whose handler has no docstring to read here
DESCRIPTIONS = {
    "generate": ("Write one JSON line per person (attributes, name, split, bios). With --qa, also the QAs "
                 "of the given tasks."),
    "train": ("Pretrain on a fresh biography of every person each epoch plus retrieval QAs (extractable "
              "mode: everyone's; paper mode: train people's), save model.pt, tokenizer.json, people.jsonl "
              "and results.json into --out."),
    "eval": ("With --model DIR (the --out of `train`): one fine-tune per task from the checkpoint, exact "
             "match on train and test people. With --hf-path DIR: a local Hugging Face causal LM, "
             "few-shot, on the people of --people (or --n new ones)."),
}

PACKAGE = "iclr25-knowledge-manipulation"
#: what ``train --out DIR`` writes at the top of DIR (a previous run is any of them)
TRAIN_FILES = ("results.json", "model.pt", "tokenizer.json", "people.jsonl", "manifest.json")
TASK_HELP = ("task specs KIND:ATTRIBUTE[:modM][:cot], e.g. classification:birth_month:mod2:cot, "
             "comparison:birth_month, inverse:birth_date+birth_city, retrieval:birth_city, partial:birth_year")


def _cmd(name: str):
    """The handler of ``generate``, ``train`` or ``eval`` (below), after its inputs are checked."""
    def run(args: argparse.Namespace) -> int:
        _check_before_work(name, args)
        return _HANDLERS[name](args)
    return run


#: rough costs on one CPU thread: tokens per person per epoch (six attribute sentences and their retrieval QAs),
#: training FLOPs per second, the vocabulary a population of n people needs, and bytes per packed token
_TOKENS_PER_PERSON, _FLOPS, _BYTES_PER_TOKEN = 150.0, 2e10, 48.0


def _train_estimate(n: float, epochs: float, layers: int, d: int, batch_size: float = 4.0, heads: int = 4,
                    seq_len: int = 128) -> tuple[float, float]:
    """(bytes, seconds) of pretraining n people for ``epochs`` epochs on a layers x d rotary GPT in batches of
    ``batch_size`` packed rows of ``seq_len`` tokens (a batch holds at most every row of the data). The bytes
    count the packed data, the parameters with their optimiser state, and one batch's logits (three vocab-wide
    copies: logits, softmax, gradient) and activations (per layer about 40 d-wide vectors and three attention
    maps per token)."""
    vocab = 2000.0 + 3.0 * n
    params = 12.0 * layers * d * d + vocab * d
    tokens = n * epochs * _TOKENS_PER_PERSON
    rows = min(float(batch_size), max(1.0, tokens / seq_len))
    batch = 4.0 * rows * seq_len * (3.0 * vocab + layers * (40.0 * d + 3.0 * heads * seq_len))
    return tokens * _BYTES_PER_TOKEN + 16.0 * params + batch, 6.0 * params * tokens / _FLOPS


def _on_accelerator(args: argparse.Namespace) -> bool:
    """Whether ``--device`` sends the training to a GPU (an absent one is refused later, naming --device)."""
    from iclr25.utils.device import on_accelerator

    return on_accelerator(getattr(args, "device", None))


def _check_before_work(name: str, args: argparse.Namespace) -> None:
    """Output paths and sizes, checked before any work or heavy import (one line, exit 2; --force skips sizes)."""
    force = getattr(args, "force", False)
    if name == "generate":
        from .tasks import parse_task

        for t in args.tasks or ():  # a bad spec is named first, with or without --qa
            try:
                parse_task(t)
            except ValueError as exc:
                raise ValueError(f"--tasks: {exc}") from None
        if args.qa is None and args.tasks is not None:
            raise ValueError("--tasks chooses the QAs written to --qa; give --qa FILE.jsonl too (or drop --tasks)")
        size = float(args.n) * args.multiplicity
        check_size(f"--n {args.n} --multiplicity {args.multiplicity}", bytes_needed=2000.0 * size,
                   seconds_needed=2e-4 * size, force=force)
    elif name == "train":
        sizes = (f"--epochs {args.epochs} --layers {args.layers} --d-model {args.d_model} --heads {args.heads} "
                 f"--batch-size {args.batch_size}")
        gpu = _on_accelerator(args)  # a GPU run is not judged by the CPU-time estimate, only by memory
        if args.people is None:
            b, sec = _train_estimate(float(args.n), args.epochs, args.layers, args.d_model, args.batch_size,
                                     args.heads)
            check_size(f"--n {args.n} {sizes}", bytes_needed=b, seconds_needed=sec, force=force, on_accelerator=gpu)
        else:  # the population is sized once the file is read (train below); the model and epochs already,
            # at the smallest population worth training (100 people)
            b, sec = _train_estimate(100.0, args.epochs, args.layers, args.d_model, args.batch_size, args.heads)
            check_size(sizes, bytes_needed=b, seconds_needed=sec, force=force, on_accelerator=gpu)
    elif name == "evaluate":
        if args.parity is not None:
            if args.hf_path is None:
                raise ValueError("--parity is the R5 check of a Hugging Face model: give --hf-path DIR")
            if args.tasks is not None:
                raise ValueError("--parity runs its own three questions; drop --tasks")
            parse_parity(args.parity)
        if args.model is not None and args.epochs is not None:
            check_size(f"--epochs {args.epochs}", seconds_needed=_train_estimate(1000.0, args.epochs, 2, 64)[1],
                       force=force, on_accelerator=_on_accelerator(args))
        if args.hf_path is not None and args.people is None:
            check_size(f"--n {args.n}", bytes_needed=2000.0 * args.n, seconds_needed=1e-4 * args.n, force=force)
        if args.hf_path is None and (args.dtype is not None or args.device_map is not None):
            raise ValueError(f"{'--dtype' if args.dtype is not None else '--device-map'} is for --hf-path (a Hugging "
                             "Face model); a --model folder trains and evaluates in float32 on --device")
    if name in ("train", "evaluate"):  # an absent device: one line naming --device, before any work
        from iclr25.utils.device import torch_device

        torch_device(args.device)


def parse_parity(text: str) -> tuple[str, int]:
    """``"birth_year:mod2"`` -> ``("birth_year", 2)``; ``"birth_month"`` -> ``("birth_month", 2)``."""
    from .biography import DATE_PARTS

    attr, _, mod = text.partition(":")
    if attr not in DATE_PARTS:
        raise ValueError(f"--parity {text!r}: the attribute must be one of {', '.join(DATE_PARTS)}")
    if not mod:
        return attr, 2
    if not (mod.startswith("mod") and mod[3:].isdigit() and int(mod[3:]) >= 2):
        raise ValueError(f"--parity {text!r}: expected ATTRIBUTE[:modM] with M >= 2, e.g. birth_year:mod2")
    return attr, int(mod[3:])


def _report(run, out: Path | None) -> int:
    """Finish ``run``, save it as ``out/results.json`` when ``--out`` is given, print its table."""
    run.finish()
    if out is not None:
        run.save(out / "results.json")
    print(run.to_markdown())
    return 0


@contextlib.contextmanager
def _torch_memory_error(what: str):
    """torch's failed CPU allocation (a ``RuntimeError``, possible after ``--force``) as a one-line
    ``MemoryError`` naming the request."""
    try:
        yield
    except RuntimeError as exc:
        if "can't allocate memory" not in str(exc):
            raise
        asked = re.search(r"allocate (\d+) bytes", str(exc))
        raise MemoryError(f"{what}: a tensor of {int(asked.group(1)) / 2**30:.1f} GiB did not fit" if asked
                          else what) from None


# --------------------------------------------------------------------------------------------- generate
def generate(args: argparse.Namespace) -> int:
    from .biography import make_population, write_people_jsonl
    from .tasks import build_task, parse_task, write_qa_jsonl

    specs = [parse_task(t) for t in (args.tasks or ["retrieval:birth_date"])] if args.qa else []
    out = Path(args.out)
    pop = make_population(args.n, seed=args.seed)
    qas = [q for s in specs for q in build_task(pop, s, people=args.people, seed=args.seed)]
    write_people_jsonl(out, pop, multiplicity=args.multiplicity, seed=args.seed, permute=not args.no_permute,
                       fullname=args.fullname, order=args.order)
    if args.qa:
        write_qa_jsonl(args.qa, qas)
    print(f"wrote {len(pop)} people ({len(pop.train)} train, {len(pop.test)} test) to {out}"
          + (f" and {len(qas)} QAs to {args.qa}" if args.qa else ""))
    return 0


def _record_device(run, spec):
    """``--device`` resolved, and named in the run record (results.json's ``machine.device``)."""
    from iclr25.utils.device import describe_device, torch_device

    dev = torch_device(spec)
    run.machine["device"] = describe_device(dev)
    return dev


# ------------------------------------------------------------------------------------------------ train
def train(args: argparse.Namespace) -> int:
    from iclr25.utils.results import RunResult

    from .biography import read_people_jsonl

    pop = read_people_jsonl(args.people) if args.people else None
    if pop is not None and not getattr(args, "force", False):
        b, sec = _train_estimate(float(len(pop)), args.epochs, args.layers, args.d_model, args.batch_size,
                                 args.heads)
        check_size(f"--people {args.people} ({len(pop)} people) --epochs {args.epochs} --batch-size "
                   f"{args.batch_size}", bytes_needed=b, seconds_needed=sec, on_accelerator=_on_accelerator(args))
    ucli.set_torch_threads(args.threads)
    from .experiments import ExperimentConfig, pretrain, retrieval_accuracy, save_pretrained
    from .training import TrainConfig

    cfg = ExperimentConfig(n_people=len(pop) if pop else args.n, mode=args.mode, order=args.order,
                           n_layers=args.layers, d_model=args.d_model, n_heads=args.heads,
                           pretrain=TrainConfig(epochs=args.epochs, lr=args.lr, batch_size=args.batch_size))
    run = RunResult.start(PACKAGE, "train", seed=args.seed, config=cfg.to_dict())
    dev = _record_device(run, args.device)
    with _torch_memory_error(f"--batch-size {args.batch_size}"):
        pre = pretrain(cfg, population=pop, seed=args.seed, device=dev)
    for a in cfg.qa_attributes:
        run.add(f"retrieval {a} train", retrieval_accuracy(pre.model, pre, a, "train").accuracy, higher_is_better=True)
        run.add(f"retrieval {a} test", retrieval_accuracy(pre.model, pre, a, "test").accuracy, higher_is_better=True)
    run.add("pretrain throughput", pre.stats.tokens_per_s, unit="tok/s", timing=True)
    save_pretrained(pre, args.out)
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    print(f"saved the model to {args.out}")
    return 0


# ------------------------------------------------------------------------------------------------- eval
def evaluate(args: argparse.Namespace) -> int:
    from .biography import make_population, read_people_jsonl
    from .experiments import DEFAULT_TASKS
    from .tasks import parse_task

    tasks = [str(parse_task(t)) for t in (args.tasks or DEFAULT_TASKS)]
    if args.shots < 0:
        raise ValueError(f"--shots must be an integer >= 0, got {args.shots}")
    if args.model is not None:
        return _evaluate_own(args, tasks)
    pop = read_people_jsonl(args.people) if args.people else make_population(args.n, seed=args.seed)
    ucli.set_torch_threads(args.threads)
    from iclr25.utils.results import RunResult

    from .hf_eval import HFCausalLM, evaluate_hf

    lm = HFCausalLM(args.hf_path, device=args.device, dtype=args.dtype, device_map=args.device_map)
    if args.parity is not None:
        return _parity(args, lm, pop)
    run = RunResult.start(PACKAGE, "eval", seed=args.seed,
                          config={"hf_path": str(args.hf_path), "tasks": tasks, "shots": args.shots,
                                  "context": args.context, "n_people": len(pop)})
    _record_hf_device(run, lm, args)
    for r in evaluate_hf(lm, pop, tasks, shots=args.shots, limit=args.limit, context=args.context, seed=args.seed):
        run.add(f"{r.task} test", r.accuracy, peer=r.chance, peer_name="chance")
    return _report(run, args.out)


def _record_hf_device(run, lm, args: argparse.Namespace) -> None:
    """Where a --hf-path model runs (its first device), its --dtype and --device-map, in the run record."""
    from iclr25.utils.device import describe_device

    run.machine["device"] = describe_device(lm.input_device)
    run.config.update({"dtype": args.dtype, "device_map": args.device_map})


def _parity(args: argparse.Namespace, lm, pop) -> int:
    """``eval --hf-path DIR --parity ATTRIBUTE[:modM]``: the paper's R5 check (:func:`.hf_eval.parity_check`)."""
    from iclr25.utils.results import RunResult

    from .hf_eval import parity_check

    attr, m = parse_parity(args.parity)
    run = RunResult.start(PACKAGE, "eval", seed=args.seed,
                          config={"hf_path": str(args.hf_path), "parity": f"{attr}:mod{m}", "shots": args.shots,
                                  "context": args.context, "n_people": len(pop), "limit": args.limit})
    _record_hf_device(run, lm, args)
    r = parity_check(lm, pop, attribute=attr, modulus=m, shots=args.shots, limit=args.limit, context=args.context,
                     seed=args.seed)
    run.add(f"{attr} retrieved (test people)", r.retrieval, higher_is_better=True)
    run.add(f"{attr} mod {m} with CoT, people whose {attr} it retrieves ({r.n_stored} of {r.n})", r.cot_stored,
            peer=r.no_cot_stored, peer_name="without CoT", higher_is_better=True, headline=True)
    run.add(f"{attr} mod {m} without CoT, all people", r.no_cot, peer=r.chance, peer_name="majority label")
    run.add(f"{attr} mod {m} with CoT, all people", r.cot, peer=r.chance, peer_name="majority label")
    if r.n_stored == 0:
        run.headline_note = (f"the model retrieves no test person's {attr}: nothing is stored, so the R5 comparison "
                             "(parity of a stored attribute) is empty; fine-tune the model on `generate`'s "
                             "biographies first, or use --context")
    elif not r.cot_stored > r.no_cot_stored:
        run.headline_note = (f"on the {r.n_stored} people whose {attr} it retrieves, CoT does not beat no CoT "
                             "(the paper's R5 finds it does)")
    return _report(run, args.out)


def _evaluate_own(args: argparse.Namespace, tasks: list[str]) -> int:
    import dataclasses

    from iclr25.utils.results import RunResult

    ucli.set_torch_threads(args.threads)
    from .experiments import load_pretrained, run_experiment

    pre = load_pretrained(args.model)
    cfg = dataclasses.replace(pre.config, tasks=tuple(tasks))
    if args.epochs is not None:
        cfg = dataclasses.replace(cfg, finetune=dataclasses.replace(cfg.finetune, epochs=args.epochs))
    pre.config = cfg
    run = RunResult.start(PACKAGE, "eval", seed=args.seed, config={"model": str(args.model), **cfg.to_dict()})
    dev = _record_device(run, args.device)
    with _torch_memory_error(f"--model {args.model}"):
        res = run_experiment(cfg, seed=args.seed, pre=pre, device=dev)
    res.add_to(run)
    return _report(run, args.out)


_HANDLERS = {"generate": generate, "train": train, "evaluate": evaluate}


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub, d, r = ucli.method_commands("knowledge-manipulation", DESCRIPTION, demo="iclr25.knowledge_manipulation.demo:demo", demo_help=DEMO_HELP,
                                             repro="iclr25.knowledge_manipulation.repro:repro", repro_help=REPRO_HELP)
    d.add_argument("--threads", type=ucli.positive_int("--threads"), default=1, help="torch CPU threads (default 1)")
    r.add_argument("--threads", type=ucli.positive_int("--threads"), default=1, help="torch CPU threads (default 1)")
    r.add_argument("--n1000", action="store_true", help="also run 0.1's single-seed N = 1000 plan (three model "
                   "sizes, paper mode, attributes-first control, throughput; about 8 min more)")

    g = ucli.add_command(sub, "generate", _cmd("generate"), seed=True, overwrite="replace an existing --out (and --qa) file", force=True, help="write a population of synthetic people and their biographies (JSONL)",
                         description=DESCRIPTIONS["generate"])
    g.add_argument("--n", type=ucli.positive_int("--n"), default=1000, help="number of people (default 1000)")
    add_output(g, "--out", kind="file", required=True, suffixes=(".jsonl",),
               help="the people file written: one JSON line per person (attributes, name, split, bios)")
    g.add_argument("--multiplicity", type=ucli.positive_int("--multiplicity"), default=5,
                   help="biographies per person, each with fresh templates (default 5)")
    g.add_argument("--order", choices=("name_first", "attributes_first"), default="name_first",
                   help="sentence form (default name_first; attributes_first is the inverse-search control)")
    g.add_argument("--fullname", action="store_true", help="the full name in every sentence (default he/she)")
    g.add_argument("--no-permute", action="store_true", help="keep the default sentence order")
    add_output(g, "--qa", kind="file", suffixes=(".jsonl",),
               help="also write the QAs of --tasks to this file, one JSON line per question")
    g.add_argument("--tasks", nargs="+", default=None,
                   help=TASK_HELP + " (with --qa; default retrieval:birth_date)")
    g.add_argument("--people", choices=("train", "test", "all"), default="all", help="whose QAs (default all)")

    t = ucli.add_command(sub, "train", _cmd("train"), seed=True, overwrite="write over a previous model in --out", force=True, help="Stage A: pretrain a rotary GPT on biographies (+ retrieval QAs) and save it",
                         description=DESCRIPTIONS["train"])
    add_output(t, "--out", kind="folder", required=True, run_files=TRAIN_FILES,
               help="the model folder written: model.pt, tokenizer.json, people.jsonl, manifest.json "
                    "(the parts' hashes, written last) and results.json")
    src = t.add_mutually_exclusive_group()
    src.add_argument("--people", type=Path, help="a people .jsonl file from `generate` (default: --n new people)")
    src.add_argument("--n", type=ucli.positive_int("--n"), default=1000, help="number of people to generate (default 1000)")
    t.add_argument("--mode", choices=("extractable", "paper"), default="extractable", help="default extractable")
    t.add_argument("--order", choices=("name_first", "attributes_first"), default="name_first")
    t.add_argument("--layers", type=ucli.positive_int("--layers"), default=2, help="default 2")
    t.add_argument("--d-model", type=ucli.positive_int("--d-model"), default=64, help="default 64")
    t.add_argument("--heads", type=ucli.positive_int("--heads"), default=4, help="default 4")
    t.add_argument("--epochs", type=ucli.positive_int("--epochs"), default=40,
                   help="Stage A epochs = exposures of each biography (default 40)")
    t.add_argument("--lr", type=ucli.positive_float("--lr"), default=3e-3, help="peak learning rate (default 3e-3)")
    t.add_argument("--batch-size", type=ucli.positive_int("--batch-size"), default=4,
                   help="packed rows of 128 tokens per step (default 4)")
    t.add_argument("--threads", type=ucli.positive_int("--threads"), default=1, help="torch CPU threads (default 1)")

    e = ucli.add_command(sub, "eval", _cmd("evaluate"), seed=True, overwrite="write over a previous run in --out", force=True, help="Stage B: fine-tune and evaluate the tasks on a trained model, or evaluate a "
                                      "local Hugging Face model few-shot",
                         description=DESCRIPTIONS["eval"])
    which = e.add_mutually_exclusive_group(required=True)
    which.add_argument("--model", type=Path, help="a folder written by `train`")
    which.add_argument("--hf-path", type=Path, help="a local Hugging Face model folder (needs the hf extra)")
    e.add_argument("--tasks", nargs="+", default=None, help=TASK_HELP + " (default: the paper's five)")
    e.add_argument("--people", type=Path, help="--hf-path: a people .jsonl file (default: --n new people)")
    e.add_argument("--n", type=ucli.positive_int("--n"), default=100, help="--hf-path: people to generate (default 100)")
    e.add_argument("--shots", type=int, default=3, help="--hf-path: solved examples in the prompt (default 3)")
    e.add_argument("--limit", type=ucli.positive_int("--limit"), default=None, help="--hf-path: questions per task")
    e.add_argument("--context", action="store_true", help="--hf-path: put the biographies in the prompt")
    e.add_argument("--parity", metavar="ATTRIBUTE[:modM]", default=None,
                   help="--hf-path: the paper's R5 check instead of --tasks: the attribute (birth_month, birth_day "
                        "or birth_year) retrieved, and its residue mod M (default 2) asked without and with CoT, on "
                        "all people and on those whose attribute the model retrieves")
    e.add_argument("--epochs", type=ucli.positive_int("--epochs"), default=None, help="--model: fine-tune epochs")
    add_output(e, "--out", kind="folder", help="folder for results.json (default: none, only the table is printed)")
    e.add_argument("--threads", type=ucli.positive_int("--threads"), default=1, help="torch CPU threads (default 1)")
    # where every command that computes runs (`generate` writes text only); eval --hf-path also takes the weights'
    # type and accelerate's placement
    from iclr25.utils.device import add_device_argument

    for p in (d, r, t):
        add_device_argument(p)
    add_device_argument(e, dtype=True)
    e.add_argument("--device-map", choices=("auto",), default=None,
                   help="--hf-path: auto spreads a model too large for one GPU over the visible GPUs (and the CPU); "
                        "needs accelerate (pip install accelerate); overrides --device")
    return ucli.run_main(parser, argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
