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


#: the claims' test rung and the demo: N = 100 people, Stage A 50 epochs (shipped, see .checkpoints), fine-tunes
#: of 30 epochs at peak learning rate 2e-3 (at 1e-3 the CoT fine-tune under-fitted its 50 train people at one
#: seed in five: train 0.52, no gap; at 2e-3 every fine-tune reaches train 1.00 at seeds 0-4)
TEST_N, TEST_PRE_EPOCHS, TEST_FT_EPOCHS, TEST_FT_LR = 100, 50, 30, 2e-3


def test_config():
    """The test rung of the claims and the demo's run: the claim run at N = 100 people and 50 Stage A epochs,
    whose Stage A models for seeds 0-4 ship with the package (:mod:`.checkpoints`), so that five seeds of
    Stage B fit the 90 s test budget."""
    import dataclasses as dc

    cfg = claim_config()
    return dc.replace(cfg, n_people=TEST_N, pretrain=dc.replace(cfg.pretrain, epochs=TEST_PRE_EPOCHS),
                      finetune=dc.replace(cfg.finetune, epochs=TEST_FT_EPOCHS, lr=TEST_FT_LR))


def demo_config():
    """The built-in run of ``demo``: the claims' test rung (:func:`test_config`) at the demo's seed, month parity
    without and with CoT (inverse search is left to the claims and ``repro``, to keep the demo near 10 s)."""
    import dataclasses as dc

    return dc.replace(test_config(), tasks=("classification:birth_month:mod2", "classification:birth_month:mod2:cot"))


def _add_experiment(run: RunResult, res, prefix: str = "") -> None:
    for a, (tr, te) in res.retrieval.items():
        run.add(f"{prefix}retrieval {a} train (after Stage A)", tr, higher_is_better=True)
        run.add(f"{prefix}retrieval {a} test (after Stage A)", te, higher_is_better=True)
    for f in res.finetunes:
        run.add(f"{prefix}{f.task} train", f.train.accuracy, higher_is_better=True)
        run.add(f"{prefix}{f.task} test", f.test.accuracy, peer=f.test.chance, peer_name="chance")
        run.add(f"{prefix}{f.task}: birth_date retrieval test after", f.retrieval_test_after, higher_is_better=True)
        if f.cot_prompt is not None:
            run.add(f"{prefix}{f.task} train, CoT prompt (CoT at inference only)", f.cot_prompt[0].accuracy)
            run.add(f"{prefix}{f.task} test, CoT prompt (CoT at inference only)", f.cot_prompt[1].accuracy,
                    peer=f.cot_prompt[1].chance, peer_name="chance")
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


def cot_figure(no_cot, cot, path: Path, title: str) -> Path:
    """The demo's figure: month parity on train and test people for the three CoT conditions of the paper's R3
    (no CoT; CoT at inference only; CoT in training and inference), the majority label marked."""
    from iclr25.utils.plotting import savefig, subplots

    conds = [("no CoT", no_cot.train.accuracy, no_cot.test.accuracy),
             ("CoT at inference only\n(no-CoT fine-tune,\nCoT prompt)", no_cot.cot_prompt[0].accuracy,
              no_cot.cot_prompt[1].accuracy),
             ("CoT in training\nand inference", cot.train.accuracy, cot.test.accuracy)]
    fig, ax = subplots(size=(5.6, 3.6))
    x = range(len(conds))
    ax.bar([i - 0.2 for i in x], [c[1] for c in conds], width=0.4, label="train people", color="0.7")
    bars = ax.bar([i + 0.2 for i in x], [c[2] for c in conds], width=0.4, label="test people", color="tab:blue")
    for b, c in zip(bars, conds, strict=True):
        ax.annotate(f"{c[2]:.2f}", (b.get_x() + b.get_width() / 2, c[2]), ha="center", va="bottom", fontsize=8)
    ax.axhline(no_cot.test.chance, color="k", ls="--", lw=1, label=f"majority label ({no_cot.test.chance:.2f})")
    ax.set_xticks(list(x))
    ax.set_xticklabels([c[0] for c in conds], fontsize=7)
    ax.set_ylim(0, 1.3)
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_ylabel("month-parity exact match")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper center", ncol=3, frameon=False)
    return savefig(fig, path)


def demo(args: argparse.Namespace) -> int:
    set_torch_threads(args.threads)
    from .experiments import run_experiment

    _check_out_dir(args.out)
    from .checkpoints import load_stage_a, shipped_seeds

    cfg = demo_config()
    shipped = args.seed in shipped_seeds()
    run = RunResult.start(PACKAGE, "demo", seed=args.seed,
                          config=cfg.to_dict() | {"stage_a": "shipped checkpoint" if shipped else "trained now"})
    res = run_experiment(cfg, seed=args.seed, pre=load_stage_a(args.seed) if shipped else None)
    no_cot = res.finetune_of("classification:birth_month:mod2")
    cot = res.finetune_of("classification:birth_month:mod2:cot")
    run.add("month parity, test people: CoT fine-tune", cot.test.accuracy, peer=no_cot.test.accuracy,
            peer_name="no-CoT fine-tune", higher_is_better=True, headline=True)
    if cot.test.accuracy <= no_cot.test.accuracy:
        run.headline_note = (f"at seed {args.seed} CoT does not beat no-CoT on test people (the gap varies with "
                             "the seed at N = 100; the claim is decided over seeds 0-4 in claims.json)")
    _add_experiment(run, res)
    fig = cot_figure(no_cot, cot, args.out / "cot.png",
                     f"month parity on {no_cot.test.n} test people: CoT "
                     f"{cot.test.accuracy:.2f} vs no CoT {no_cot.test.accuracy:.2f}\n(seed {args.seed}, N = "
                     f"{cfg.n_people}, {cfg.n_layers}L d={cfg.d_model}, Stage A "
                     f"{'shipped' if shipped else 'trained now'})")
    run.add_figure(fig, relative_to=args.out)
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    return 0


# --------------------------------------------------------------------------------------------- generate
def generate(args: argparse.Namespace) -> int:
    specs = [parse_task(t) for t in (args.tasks or ["retrieval:birth_date"])] if args.qa else []
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
    if pop is not None and not getattr(args, "force", False):
        from iclr25.utils.guards import check_size

        from .cli import _train_estimate

        b, sec = _train_estimate(float(len(pop)), args.epochs, args.layers, args.d_model)
        check_size(f"--people {args.people} ({len(pop)} people) --epochs {args.epochs}", bytes_needed=b,
                   seconds_needed=sec)
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
    if args.parity is not None:
        return _parity(args, lm, pop)
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


def _parity(args: argparse.Namespace, lm, pop) -> int:
    """``eval --hf-path DIR --parity ATTRIBUTE[:modM]``: the paper's R5 check (:func:`.hf_eval.parity_check`)."""
    from .cli import parse_parity
    from .hf_eval import parity_check

    attr, m = parse_parity(args.parity)
    run = RunResult.start(PACKAGE, "eval", seed=args.seed,
                          config={"hf_path": str(args.hf_path), "parity": f"{attr}:mod{m}", "shots": args.shots,
                                  "context": args.context, "n_people": len(pop), "limit": args.limit})
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
    from .reproduction import run_claims_repro, run_repro

    _check_out_dir(args.out)
    run = RunResult.start(PACKAGE, "repro", seed=args.seed, config={"n1000": bool(args.n1000)})
    claims = run_claims_repro(args.out, run=run)
    print("\n".join(r.explain() for r in claims.results), flush=True)
    if args.n1000:  # the single-seed N = 1000 plan of 0.1 (about 8 min more)
        big = args.out / "n1000"
        report = run_repro(big, seed=args.seed, run=run)
        run.config = {"n1000": report["config"]}
        with atomic_write(big / "report.json") as f:
            json.dump(report, f, indent=1, default=str)
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    return 0
