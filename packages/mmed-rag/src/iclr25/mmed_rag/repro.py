"""``iclr25 mmed-rag repro``: the pipeline across a scale ladder (three budgets), with the DPO-data ablation on
the largest rung; writes ``results.json``, ``results.md`` (the README Results table) and figures."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult

from .experiments import PipelineConfig, run_pipeline
from .figures import plot_ablation, plot_examples

RUNGS = {
    "S": PipelineConfig(n_train=200, n_db=120, n_test=60, router_steps=60, retriever_steps=120, sft_steps=500,
                        mine_images=80, dpo_steps=100, pooled_baseline=False, n_report_eval=20),
    "M": PipelineConfig(n_train=350, n_db=200, n_test=80, sft_steps=1000, mine_images=120, dpo_steps=150,
                        pooled_baseline=False, n_report_eval=25),
    "L": PipelineConfig(n_train=500, n_db=250, n_test=100, retriever_steps=250, sft_steps=1500, mine_images=150,
                        dpo_steps=200, ablations=True, pooled_baseline=True, n_report_eval=30),
}
ROWS = ("router_accuracy", "recall@1", "recall@5", "recall@5_pooled", "recall@5_random", "cross_domain_top5",
        "cross_domain_top5_pooled", "precision_fixed_k", "precision_gap", "mean_k_fixed", "mean_k_gap",
        "acc_no_rag", "acc_sft_fixed_k", "acc_sft_gap", "acc_mmed_rag", "f1_sft_fixed_k", "f1_mmed_rag",
        "auc_sft_fixed_k", "auc_mmed_rag", "copy_rate_sft", "copy_rate_mmed_rag", "harm_rate_sft",
        "harm_rate_mmed_rag", "acc_cm_only", "copy_rate_cm_only", "harm_rate_cm_only", "acc_oa_only",
        "copy_rate_oa_only", "harm_rate_oa_only", "acc_rule_oa2_only", "copy_rate_rule_oa2_only",
        "harm_rate_rule_oa2_only", "bleu_no_rag", "bleu_rag", "bleu_mmed_rag", "rouge_l_no_rag", "rouge_l_rag",
        "rouge_l_mmed_rag", "dpo_reward_accuracy", "dpo_margin", "seconds")


def run_repro(out: Path, *, seed: int = 0, quick: bool = False) -> int:
    rungs = {"S": RUNGS["S"]} if quick else RUNGS
    run = RunResult.start("iclr25-mmed-rag", "repro", seed=seed,
                          config={k: dataclasses.asdict(v) for k, v in rungs.items()})
    out.mkdir(parents=True, exist_ok=True)
    table: dict[str, dict[str, float]] = {}
    stats = {}
    last = None
    for name, cfg in rungs.items():
        t0 = time.perf_counter()
        res = run_pipeline(cfg, seed=seed, log=lambda m, n=name: print(f"[{n}] {m}", flush=True))
        table[name] = dict(res.metrics, seconds=time.perf_counter() - t0)
        stats[name] = res.stats
        last = res
        for k, v in res.metrics.items():
            run.add(f"{name}/{k}", v)
        print(f"[{name}] done in {table[name]['seconds']:.0f} s", flush=True)
    top = list(rungs)[-1]
    m = table[top]
    run.add_figure(plot_examples(last.examples, out / "examples.png"), relative_to=out)
    variants = {"SFT no-RAG": {"accuracy": m["acc_no_rag"]},
                "SFT + fixed-k": {"accuracy": m["acc_sft_fixed_k"]},
                "SFT + gap rule": {"accuracy": m["acc_sft_gap"], "copy_rate": m["copy_rate_sft"],
                                   "harm_rate": m["harm_rate_sft"]}}
    for key, label in (("rule_oa2_only", "RULE-style (D_oa2)"), ("cm_only", "DPO D_cm"), ("oa_only", "DPO D_oa")):
        if f"acc_{key}" in m:
            variants[label] = {"accuracy": m[f"acc_{key}"], "copy_rate": m[f"copy_rate_{key}"],
                               "harm_rate": m[f"harm_rate_{key}"]}
    variants["MMed-RAG"] = {"accuracy": m["acc_mmed_rag"], "copy_rate": m["copy_rate_mmed_rag"],
                            "harm_rate": m["harm_rate_mmed_rag"]}
    run.add_figure(plot_ablation(variants, out / "ablation.png"), relative_to=out)
    lines = ["| metric | " + " | ".join(rungs) + " |", "|---|" + "---|" * len(rungs)]
    for r in ROWS:
        if any(r in table[n] for n in rungs):
            lines.append(f"| {r} | " + " | ".join(f"{table[n][r]:.3f}" if r in table[n] else "–" for n in rungs)
                         + " |")
    lines += ["", "Preference pairs mined per rung: " + "; ".join(f"{n}: {s}" for n, s in stats.items())]
    with atomic_write(out / "results.md") as f:
        f.write("\n".join(lines) + "\n")
    run.notes = "see results.md"
    run.finish().save(out / "results.json")
    print("\n".join(lines))
    return 0
