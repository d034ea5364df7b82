"""``repro``: the reduced-scale reproduction (N = 1000 people, 2 CPU cores, at most 10 min).

1. Extractable mode at three model sizes (the ladder): retrieval on test people, then classification and
   comparison without / with CoT and inverse search, each its own fine-tune from the Stage A checkpoint, with
   test-people retrieval re-measured after each fine-tune.
2. Paper mode (retrieval QAs of train people only) at the middle size.
3. The attributes-first control: biographies state the attributes before the name; inverse search only.
4. Throughput of our rotary GPT against a plain ``torch.nn`` transformer of equal size.

References: Allen-Zhu & Li, *Physics of Language Models: Part 3.2* (ICLR 2025), Fig. 1-5 and §6.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult

from .experiments import DEFAULT_TASKS, ExperimentConfig, pretrain, run_experiment
from .probe import name_token_probe
from .training import TrainConfig

__all__ = ["repro_plan", "run_repro"]

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
    from .commands import task_figure

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
