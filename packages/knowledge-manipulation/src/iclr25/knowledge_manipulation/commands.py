"""The work behind each subcommand (imported by :mod:`.cli` only when a command runs: torch loads here)."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from iclr25.utils.cli import set_torch_threads
from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult

from .biography import make_population, read_people_jsonl, write_people_jsonl
from .tasks import build_task, parse_task, write_qa_jsonl

PACKAGE = "iclr25-knowledge-manipulation"


def _check_out_dir(out: Path, flag: str = "--out") -> None:
    if out.exists() and not out.is_dir():
        raise ValueError(f"{flag} {out}: exists and is not a folder")


# ------------------------------------------------------------------------------------------------- demo
def claim_config():
    """The small run of the claim tests (N = 200, a 2-layer d = 64 GPT, biographies of birth date and city)."""
    from .experiments import ExperimentConfig
    from .training import TrainConfig

    return ExperimentConfig(
        n_people=200, n_layers=2, d_model=64, n_heads=4,
        bio_attributes=("birth_date", "birth_city"), qa_attributes=("birth_date",),
        pretrain=TrainConfig(epochs=40, lr=3e-3, batch_size=8, seq_len=64),
        finetune=TrainConfig(epochs=30, lr=1e-3, batch_size=4, seq_len=64), replay=0.3,
        tasks=("classification:birth_month:mod2", "classification:birth_month:mod2:cot",
               "inverse:birth_date+birth_city"))


def demo_config():
    """The built-in run of ``demo``: the claim run at N = 120 and 30 epochs (about 10 s on one core)."""
    import dataclasses as dc

    cfg = claim_config()
    return dc.replace(cfg, n_people=120, pretrain=dc.replace(cfg.pretrain, epochs=30),
                      finetune=dc.replace(cfg.finetune, epochs=25))


def _add_experiment(run: RunResult, res, prefix: str = "") -> None:
    for a, (tr, te) in res.retrieval.items():
        run.add(f"{prefix}retrieval {a} train (after Stage A)", tr, higher_is_better=True)
        run.add(f"{prefix}retrieval {a} test (after Stage A)", te, higher_is_better=True)
    for f in res.finetunes:
        run.add(f"{prefix}{f.task} train", f.train.accuracy, higher_is_better=True)
        run.add(f"{prefix}{f.task} test", f.test.accuracy, peer=f.test.chance, peer_name="chance")
        run.add(f"{prefix}{f.task}: birth_date retrieval test after", f.retrieval_test_after, higher_is_better=True)
    if res.pretrain_stats is not None:  # None for a model loaded from a folder
        run.add(f"{prefix}pretrain throughput", res.pretrain_stats.tokens_per_s, unit="tok/s", timing=True)


def task_figure(rows: list[dict], path: Path, title: str) -> Path:
    """Bars of train/test accuracy per task, chance marked."""
    from iclr25.utils.plotting import savefig, subplots

    fig, ax = subplots(size=(max(4.0, 1.3 * len(rows) + 1.5), 3.4))
    x = range(len(rows))
    ax.bar([i - 0.2 for i in x], [r["train"] for r in rows], width=0.4, label="train people")
    ax.bar([i + 0.2 for i in x], [r["test"] for r in rows], width=0.4, label="test people")
    for i, r in enumerate(rows):
        ax.plot([i - 0.4, i + 0.4], [r["chance"]] * 2, "k--", lw=1)
    ax.set_xticks(list(x))
    ax.set_xticklabels([r["task"].replace(":", "\n", 1) for r in rows], fontsize=7)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("exact match")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    return savefig(fig, path)


def demo(args: argparse.Namespace) -> int:
    set_torch_threads(args.threads)
    from .experiments import run_experiment

    _check_out_dir(args.out)
    cfg = demo_config()
    run = RunResult.start(PACKAGE, "demo", seed=args.seed, config=cfg.to_dict())
    res = run_experiment(cfg, seed=args.seed)
    _add_experiment(run, res)
    fig = task_figure(res.table(), args.out / "tasks.png", f"N={cfg.n_people}, {cfg.mode} mode, "
                      f"{cfg.n_layers}L d={cfg.d_model}")
    run.add_figure(fig, relative_to=args.out)
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    return 0


# --------------------------------------------------------------------------------------------- generate
def generate(args: argparse.Namespace) -> int:
    specs = [parse_task(t) for t in args.tasks] if args.qa else []
    out = Path(args.out)
    if out.is_dir():
        raise ValueError(f"--out {out}: is a folder (expected a .jsonl file)")
    if args.qa is not None and Path(args.qa).is_dir():
        raise ValueError(f"--qa {args.qa}: is a folder (expected a .jsonl file)")
    pop = make_population(args.n, seed=args.seed)
    qas = [q for s in specs for q in build_task(pop, s, people=args.people, seed=args.seed)]
    write_people_jsonl(out, pop, multiplicity=args.multiplicity, seed=args.seed, permute=not args.no_permute,
                       fullname=args.fullname, order=args.order)
    if args.qa:
        write_qa_jsonl(args.qa, qas)
    print(f"wrote {len(pop)} people ({len(pop.train)} train, {len(pop.test)} test) to {out}"
          + (f" and {len(qas)} QAs to {args.qa}" if args.qa else ""))
    return 0


# ------------------------------------------------------------------------------------------------ train
def train(args: argparse.Namespace) -> int:
    _check_out_dir(args.out)
    pop = read_people_jsonl(args.people) if args.people else None
    set_torch_threads(args.threads)
    from .experiments import ExperimentConfig, pretrain, retrieval_accuracy, save_pretrained
    from .training import TrainConfig

    cfg = ExperimentConfig(n_people=len(pop) if pop else args.n, mode=args.mode, order=args.order,
                           n_layers=args.layers, d_model=args.d_model, n_heads=args.heads,
                           pretrain=TrainConfig(epochs=args.epochs, lr=args.lr, batch_size=args.batch_size))
    run = RunResult.start(PACKAGE, "train", seed=args.seed, config=cfg.to_dict())
    pre = pretrain(cfg, population=pop, seed=args.seed)
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
    from .experiments import DEFAULT_TASKS

    tasks = [str(parse_task(t)) for t in (args.tasks or DEFAULT_TASKS)]
    if args.out is not None:
        _check_out_dir(args.out)
    if args.shots < 0:
        raise ValueError(f"--shots must be an integer >= 0, got {args.shots}")
    if args.model is not None:
        return _evaluate_own(args, tasks)
    pop = read_people_jsonl(args.people) if args.people else make_population(args.n, seed=args.seed)
    set_torch_threads(args.threads)
    from .hf_eval import HFCausalLM, evaluate_hf

    lm = HFCausalLM(args.hf_path)
    run = RunResult.start(PACKAGE, "eval", seed=args.seed,
                          config={"hf_path": str(args.hf_path), "tasks": tasks, "shots": args.shots,
                                  "context": args.context, "n_people": len(pop)})
    for r in evaluate_hf(lm, pop, tasks, shots=args.shots, limit=args.limit, context=args.context, seed=args.seed):
        run.add(f"{r.task} test", r.accuracy, peer=r.chance, peer_name="chance")
    run.finish()
    if args.out is not None:
        run.save(args.out / "results.json")
    print(run.to_markdown())
    return 0


def _evaluate_own(args: argparse.Namespace, tasks: list[str]) -> int:
    set_torch_threads(args.threads)
    from .experiments import load_pretrained, run_experiment

    pre = load_pretrained(args.model)
    cfg = dataclasses.replace(pre.config, tasks=tuple(tasks))
    if args.epochs is not None:
        cfg = dataclasses.replace(cfg, finetune=dataclasses.replace(cfg.finetune, epochs=args.epochs))
    pre.config = cfg
    run = RunResult.start(PACKAGE, "eval", seed=args.seed, config={"model": str(args.model), **cfg.to_dict()})
    res = run_experiment(cfg, seed=args.seed, pre=pre)
    _add_experiment(run, res)
    run.finish()
    if args.out is not None:
        run.save(args.out / "results.json")
    print(run.to_markdown())
    return 0


# ------------------------------------------------------------------------------------------------ repro
def repro(args: argparse.Namespace) -> int:
    set_torch_threads(args.threads)
    from .reproduction import run_repro

    _check_out_dir(args.out)
    run = RunResult.start(PACKAGE, "repro", seed=args.seed)
    report = run_repro(args.out, seed=args.seed, run=run)
    run.config = report["config"]
    run.finish().save(args.out / "results.json")
    with atomic_write(args.out / "report.json") as f:
        json.dump(report, f, indent=1, default=str)
    print(run.to_markdown())
    return 0
