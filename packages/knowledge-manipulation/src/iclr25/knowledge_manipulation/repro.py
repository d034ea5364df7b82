"""``repro``: the reduced-scale reproduction, decided over seeds.

The default ``repro`` (at most 10 min on one core of a quiet machine) is the claims' ``repro`` rung
(:mod:`.claims`): at each of seeds 0-4 a population of N = 100 people, Stage A trained on their biographies,
then every fine-tune of the paper's figure ladder (reduced): month parity without and with CoT at 30 epochs,
at three times the epochs and on half the train people; month comparison without and with CoT; inverse search;
and, from a Stage A model of N = 200 people trained with the same recipe, month parity without and with CoT on
50 and on 100 train people (the top of the fine-tune data ladder).
Every no-CoT fine-tune is also scored with a CoT prompt (CoT at inference only). :func:`run_claims_repro` writes
``claims.json`` (each claim decided by its rule over the seeds), the per-seed table ``summary.md`` and
``ladder.png``. The two main CoT claims are decided at their own rung, ``cot`` (N = 200, 90 epochs, 10 seeds:
``iclr25 claims knowledge-manipulation --rung cot``), not by ``repro``.

``repro --n1000`` adds the single-seed N = 1000 plan of 0.1 (:func:`repro_plan`, about 8 min more):
1. Extractable mode at three model sizes (the ladder): retrieval on test people, then classification and
   comparison without / with CoT and inverse search, each its own fine-tune from the Stage A checkpoint, with
   test-people retrieval re-measured after each fine-tune.
2. Paper mode (retrieval QAs of train people only) at the middle size.
3. The attributes-first control: biographies state the attributes before the name; inverse search only.
4. Throughput of our rotary GPT against a plain ``torch.nn`` transformer of equal size.

References: Allen-Zhu & Li, *Physics of Language Models: Part 3.2* (ICLR 2025), Fig. 1-5 and §6.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult

from .experiments import DEFAULT_TASKS, ExperimentConfig, pretrain, run_experiment
from .probe import name_token_probe
from .training import TrainConfig

__all__ = ["repro_plan", "run_repro", "run_claims_repro", "per_seed_markdown", "task_figure", "repro"]

PACKAGE = "iclr25-knowledge-manipulation"

LADDER = ((1, 32, 2), (2, 64, 4), (3, 96, 4))
CLASSIFY = ("classification:birth_month:mod2", "classification:birth_month:mod2:cot")


def repro_plan(n_people: int = 1000) -> dict[str, ExperimentConfig]:
    """The runs of ``repro`` by name: the extractable-mode ladder (the middle rung runs all five tasks, the
    others the classification pair), paper mode and the attributes-first control at the middle size."""
    base = ExperimentConfig(
        n_people=n_people, bio_attributes=("birth_date", "birth_city"), qa_attributes=("birth_date",),
        pretrain=TrainConfig(epochs=40, lr=3e-3, batch_size=8, seq_len=64),
        finetune=TrainConfig(epochs=20, lr=1e-3, batch_size=8, seq_len=64), replay=0.3,
        n_layers=2, d_model=64, n_heads=4, tasks=DEFAULT_TASKS)
    plan = {}
    for L, d, h in LADDER:
        tasks = DEFAULT_TASKS if (L, d) == (2, 64) else CLASSIFY
        plan[f"extractable {L}L d{d}"] = dataclasses.replace(base, n_layers=L, d_model=d, n_heads=h, tasks=tasks)
    plan["paper 2L d64"] = dataclasses.replace(base, mode="paper", tasks=CLASSIFY)
    plan["attributes-first 2L d64"] = dataclasses.replace(base, order="attributes_first",
                                                          tasks=("inverse:birth_date+birth_city",))
    return plan


def run_repro(out: Path, *, seed: int = 0, run: RunResult, n_people: int = 1000) -> dict:
    """Run the plan, add every number to ``run`` and write the task-table figure; returns a JSON-able report."""
    from .benchmarking import throughput

    plan = repro_plan(n_people)
    report: dict = {"config": {k: v.to_dict() for k, v in plan.items()}, "runs": {}}
    figs_rows = {}
    for name, cfg in plan.items():
        t0 = time.perf_counter()
        pre = pretrain(cfg, seed=seed)
        res = run_experiment(cfg, seed=seed, pre=pre)
        rows = res.table()
        if name == "extractable 2L d64":
            probes = [name_token_probe(pre, target="birth_month"), name_token_probe(pre, target="birth_month", modulus=2)]
            for pr in probes:
                run.add(f"{name}: linear probe of {pr.target} on the name token, test", pr.test, peer=pr.chance,
                        peer_name="chance")
            report["probes"] = [dataclasses.asdict(pr) for pr in probes]
        figs_rows[name] = rows
        retr_tr, retr_te = res.retrieval["birth_date"]
        run.add(f"{name}: retrieval birth_date test", retr_te, higher_is_better=True)
        run.add(f"{name}: retrieval birth_date train", retr_tr, higher_is_better=True)
        for f in res.finetunes:
            run.add(f"{name}: {f.task} train", f.train.accuracy, higher_is_better=True)
            run.add(f"{name}: {f.task} test", f.test.accuracy, peer=f.test.chance, peer_name="chance")
            run.add(f"{name}: {f.task} retrieval test after", f.retrieval_test_after)
        run.add(f"{name}: pretrain throughput", res.pretrain_stats.tokens_per_s, unit="tok/s", timing=True)
        report["runs"][name] = {"retrieval": res.retrieval, "tasks": rows, "capacity": res.capacity.to_dict(),
                                "pretrain_s": res.pretrain_stats.seconds, "wall_s": time.perf_counter() - t0,
                                "examples": {f.task: f.test.examples for f in res.finetunes}}
        print(f"[repro] {name}: {time.perf_counter() - t0:.0f} s", flush=True)
    bench = throughput(n_layers=2, d_model=64, n_heads=4, seconds=4.0)
    for k, v in bench.items():
        run.add(f"throughput {k}", v, unit="tok/s", timing=True)
    report["throughput"] = bench
    (out / "summary.md").parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(out / "summary.md") as f:
        f.write(summary_markdown(report))
    main = "extractable 2L d64"
    fig = task_figure(figs_rows[main], out / "tasks.png", f"N={n_people}, extractable mode, 2L d=64 (test vs train people)")
    run.add_figure(fig, relative_to=out)
    return report


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


def summary_markdown(report: dict) -> str:
    """The README "Results" table: one row per (run, task) with train / test exact match, chance and test
    retrieval after the fine-tune; then the throughput table."""
    lines = ["| run | task | train people | test people | chance (test) | birth-date retrieval test after |",
             "|---|---|---|---|---|---|"]
    for name, r in report["runs"].items():
        tr, te = r["retrieval"]["birth_date"]
        lines.append(f"| {name} | retrieval:birth_date (after Stage A) | {tr:.2f} | {te:.2f} | | |")
        for row in r["tasks"]:
            lines.append(f"| {name} | {row['task']} | {row['train']:.2f} | {row['test']:.2f} | {row['chance']:.2f} "
                         f"| {row['retrieval_test_after']:.2f} |")
    for pr in report.get("probes", []):
        lines.append(f"| extractable 2L d64 | linear probe: {pr['target']} from the name token | {pr['train']:.2f} "
                     f"| {pr['test']:.2f} | {pr['chance']:.2f} | |")
    if "throughput" in report:
        lines += ["", "| model (training step, equal size) | tokens/s | parameters |", "|---|---|---|"]
        for k, v in report["throughput"].items():
            if not k.startswith("params "):
                lines.append(f"| {k} | {v:,.0f} | {report['throughput'].get('params ' + k, 0):,.0f} |")
    return "\n".join(lines) + "\n"


def _fmt(x) -> str:
    return "" if x is None or x != x else f"{x:.2f}"


def per_seed_markdown(details: dict[int, list[dict]]) -> str:
    """One row per (condition, task), one column per seed: test accuracy (train in brackets), then the CoT
    prompt's test accuracy and the CoT step's for the rows that have them, and the majority label."""
    seeds = sorted(details)
    keys: list[tuple[str, str]] = []
    for s in seeds:
        for r in details[s]:
            if (r["condition"], r["task"]) not in keys:
                keys.append((r["condition"], r["task"]))
    head = ["fine-tune", "task", *[f"seed {s}: test (train)" for s in seeds], "mean test", "majority label (mean)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def get(s, k):
        return next((r for r in details[s] if (r["condition"], r["task"]) == k), None)

    for k in keys:
        rs = [get(s, k) for s in seeds]
        cells = [f"{r['test']:.2f} ({r['train']:.2f})" if r else "" for r in rs]
        tests = [r["test"] for r in rs if r]
        chances = [r["chance"] for r in rs if r]
        lines.append("| " + " | ".join([k[0], k[1], *cells, f"{sum(tests) / len(tests):.2f}",
                                        f"{sum(chances) / len(chances):.2f}"]) + " |")
        for field, label in (("cot_prompt_test", "+ CoT prompt (CoT at inference only)"),
                             ("cot_step_test", "CoT step right (months written)")):
            vals = [r.get(field) if r else None for r in rs]
            if any(v is not None for v in vals):
                got = [v for v in vals if v is not None]
                lines.append("| " + " | ".join([k[0], f"{k[1]} {label}", *[_fmt(v) for v in vals],
                                                f"{sum(got) / len(got):.2f}", ""]) + " |")
    return "\n".join(lines) + "\n"


def ladder_figure(details: dict[int, list[dict]], path: Path) -> Path:
    """Test accuracy of every fine-tune of the repro rung (the three CoT conditions: no CoT in grey, CoT at
    inference only in orange, CoT in training and inference in blue): the mean over seeds as a bar, each seed a
    dot, the majority label dashed."""
    from iclr25.utils.plotting import savefig, subplots

    keys: list[tuple[str, str]] = []
    for rows in details.values():
        for r in rows:
            if (r["condition"], r["task"]) not in keys and not r["task"].startswith("inverse"):
                keys.append((r["condition"], r["task"]))
    bars = []  # (label, values, chance, colour)
    for k in keys:
        rs = [r for rows in details.values() for r in rows if (r["condition"], r["task"]) == k]
        kind = {"classification": "parity", "comparison": "compare"}.get(k[1].split(":")[0], k[1])
        where = k[0].replace(" epochs", " ep").replace(" train ", " ").replace(", ", "\n").replace(" (", "\n").rstrip(")")
        ch = sum(r["chance"] for r in rs) / len(rs)
        if k[1].endswith(":cot"):
            bars.append((f"CoT\n{kind}\n{where}", [r["test"] for r in rs], ch, "tab:blue"))
        else:
            bars.append((f"no CoT\n{kind}\n{where}", [r["test"] for r in rs], ch, "0.6"))
            if any(r.get("cot_prompt_test") is not None for r in rs):
                bars.append((f"CoT prompt\n{kind}\n{where}", [r["cot_prompt_test"] for r in rs], ch, "tab:orange"))
    fig, ax = subplots(size=(max(6.0, 0.7 * len(bars) + 1.5), 4.0))
    for i, (_, vals, ch, colour) in enumerate(bars):
        ax.bar(i, sum(vals) / len(vals), width=0.7, color=colour)
        ax.plot([i] * len(vals), vals, "k.", ms=4)
        ax.plot([i - 0.4, i + 0.4], [ch, ch], "k--", lw=1)
    ax.set_xticks(range(len(bars)))
    ax.set_xticklabels([b[0] for b in bars], fontsize=5.5)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("test exact match")
    ax.set_title(f"repro rung, seeds {', '.join(map(str, sorted(details)))}: no CoT (grey), CoT at inference only "
                 "(orange), CoT in training and inference (blue);\nbar = mean, dots = seeds, dashes = majority label",
                 fontsize=7)
    return savefig(fig, path)


def run_claims_repro(out: Path, *, run: RunResult, seeds: tuple[int, ...] | None = None):
    """Decide every claim at the ``repro`` rung; write ``claims.json``, ``summary.md`` (per-seed table) and
    ``ladder.png``; returns the :class:`iclr25.utils.claims.ClaimsReport`."""
    import resource

    from .claims import DETAILS, REGISTRY

    def cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    c0, t0 = cpu(), time.perf_counter()
    claims = REGISTRY.run("repro", seeds, command="iclr25 knowledge-manipulation repro")
    claims.save(out / "claims.json")
    details = {s: rows for (s, rung), rows in DETAILS.items() if rung == "repro"}
    with atomic_write(out / "summary.md") as f:
        f.write(per_seed_markdown(details))
    run.add_figure(ladder_figure(details, out / "ladder.png"), relative_to=out)
    for r in claims.results:
        run.add(f"claim {r.claim.id}: mean improvement over seeds {', '.join(map(str, r.seeds))}",
                r.mean_improvement, higher_is_better=True)
    run.add("claims repro rung: CPU time", cpu() - c0, unit="s", timing=True)
    run.add("claims repro rung: wall time", time.perf_counter() - t0, unit="s", timing=True)
    with atomic_write(out / "details.json") as f:
        import json

        json.dump({str(s): rows for s, rows in details.items()}, f, indent=1)
    return claims


def repro(args: argparse.Namespace) -> int:
    """``iclr25 knowledge-manipulation repro``: ``--out`` is checked by the command line before this runs; the claims
    and the N = 1000 plan run on ``--device``."""
    from iclr25.utils.cli import set_torch_threads
    from iclr25.utils.device import describe_device, device_scope, torch_device

    spec = getattr(args, "device", None)
    dev = torch_device(spec)  # an absent device: one line naming --device, before any work
    set_torch_threads(args.threads)
    run = RunResult.start(PACKAGE, "repro", seed=args.seed, config={"n1000": bool(args.n1000)})
    run.machine["device"] = describe_device(dev)
    with device_scope(spec):  # the claims' measuring code (device=None) trains and evaluates there
        return _repro(args, run)


def _repro(args: argparse.Namespace, run: RunResult) -> int:
    import json

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
