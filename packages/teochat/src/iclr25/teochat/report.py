"""The ``repro`` report: results.json, the README "Results" table (results.md) and the figures."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from iclr25.utils.claims import ClaimsReport
from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult

from .conversation import TASKS
from .figures import plot_ladder, plot_sequence_boxes
from .repro import ReproResult

__all__ = ["write_repro", "claims"]

_ROWS = [("tsc", "temporal scene classification (acc.)"), ("loc", "change localisation (pixel F1)"),
         ("damage", "damage classification (inv.-weighted F1)"), ("sre", "referring expression (pixel F1)"),
         ("qa", "change QA (acc.)"), ("rqa", "region change QA (acc.)"), ("tre", "temporal referring (acc.)"),
         ("rtqa", "region temporal QA (acc.)"), ("tsc1", "single-image scene classification (acc.)"),
         ("det1", "single-image detection (pixel F1)"), ("qa1", "single-image counting (acc.)")]


def _every_task(scores: Mapping[str, float]) -> dict[str, float]:
    """``scores`` with NaN for the tasks that had no test question (a toy split)."""
    return {task: scores.get(task, math.nan) for task in TASKS}


def _f(x: float | None) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def claims(res: ReproResult) -> list[tuple[str, float, float, bool]]:
    """``(claim, ours, bound, holds)`` for the paper note's five orderings on one seed (the claims registry's
    ``repro`` rung decides the paper's claims over seeds: :func:`iclr25.teochat.claims.repro_report`)."""
    t, lf, nr, sh = (_every_task(res.scores[m]) for m in ("teochat", "last_frame", "no_references",
                                                              "teochat (shuffled frames)"))
    out = [("change localisation F1 >= 2x last-frame-only", t["loc"], 2 * lf["loc"], t["loc"] >= 2 * lf["loc"]),
           ("damage F1 >= last-frame-only + 0.10", t["damage"], lf["damage"] + 0.10,
            t["damage"] >= lf["damage"] + 0.10),
           ("TRE accuracy with references >= without + 0.15", t["tre"], nr["tre"] + 0.15,
            t["tre"] >= nr["tre"] + 0.15)]
    for task in ("tre", "rtqa"):
        out.append((f"shuffled frames: {task.upper()} within 0.1 of chance", sh[task], res.chance[task] + 0.10,
                    abs(sh[task] - res.chance[task]) <= 0.10))
    out.append(("specialist above the assistant on localisation", res.specialist_loc_f1, t["loc"],
                res.specialist_loc_f1 > t["loc"]))
    return out


def _per_seed(values: list[float | None]) -> str:
    return ", ".join(_f(v) for v in values)


def write_repro(run: RunResult, results: Mapping[int, ReproResult], out: Path,
                report: ClaimsReport | None = None) -> None:
    """``results.json``, ``results.md`` (every task, model and seed; the claims over seeds), ``claims.json``
    (when ``report`` is given) and the figures of the first seed in ``out``."""
    seeds = sorted(results)
    first = results[seeds[0]]
    run.config = {**first.config, "seeds": seeds}
    out.mkdir(parents=True, exist_ok=True)
    for seed in seeds:
        res = results[seed]
        t, lf, nr, sh = (_every_task(res.scores[m]) for m in ("teochat", "last_frame", "no_references",
                                                                  "teochat (shuffled frames)"))
        run.add(f"change localisation pixel F1 (seed {seed})", t["loc"], peer=lf["loc"],
                peer_name="last-frame-only", higher_is_better=True)
        run.add(f"change localisation pixel F1 vs best trivial answer (seed {seed})", t["loc"],
                peer=max(res.trivial.values()), peer_name="best trivial answer", higher_is_better=True)
        run.add(f"damage classification inv.-weighted F1 (seed {seed})", t["damage"], peer=lf["damage"],
                peer_name="last-frame-only", higher_is_better=True)
        run.add(f"temporal referring accuracy (seed {seed})", t["tre"], peer=nr["tre"],
                peer_name="no image references", higher_is_better=True)
        for task in ("tre", "rtqa"):
            run.add(f"{task.upper()} accuracy, shuffled frames (seed {seed})", sh[task], peer=res.chance[task],
                    peer_name="shuffled-label chance")
        run.add(f"change localisation pixel F1, assistant vs specialist (seed {seed})", t["loc"],
                peer=res.specialist_loc_f1, peer_name="siamese specialist", higher_is_better=True)
    run.add("training tokens/s", first.tokens_per_s, unit="tokens/s", timing=True, higher_is_better=True)
    run.add("inference ms per question", first.ms_per_sequence, unit="ms", timing=True, higher_is_better=False)
    ex = first.example
    fig = plot_sequence_boxes(out / "example.png", ex["seq"], ex["truth"], ex["prediction"],
                              title=f"{ex['question']}\ntrue (green) vs TEOChat-tiny (magenta), seed {seeds[0]}")
    run.add_figure(fig, relative_to=out)
    lf0, nr0 = first.scores["last_frame"], first.scores["no_references"]
    fig = plot_ladder(out / "ladder.png", first.ladder,
                      reference={"last-frame-only": lf0["loc"], "no references": nr0["loc"],
                                 "siamese specialist": first.specialist_loc_f1,
                                 "best trivial answer": max(first.trivial.values())})
    run.add_figure(fig, relative_to=out)
    seed_note = f"seeds {', '.join(str(s) for s in seeds)}"
    lines = [f"Per seed ({seed_note}):", "",
             "| task (metric) | TEOChat-tiny | no references | last frame only | shuffled frames | answer prior | "
             "question / frame-count prior |",
             "|---|---|---|---|---|---|---|"]
    for task, label in _ROWS:
        cells = [_per_seed([results[s].scores[m].get(task) for s in seeds])
                 for m in ("teochat", "no_references", "last_frame", "teochat (shuffled frames)")]
        prior = _per_seed([results[s].prior.get(task) for s in seeds])
        qprior = _per_seed([results[s].question_prior.get(task) for s in seeds])
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {prior} | {qprior} |")
    lines.append(f"| change localisation, siamese specialist (pixel F1) | "
                 f"{_per_seed([results[s].specialist_loc_f1 for s in seeds])} | | | | | |")
    for name in first.trivial:
        lines.append(f"| change localisation, trivial: {name} | {_per_seed([results[s].trivial[name] for s in seeds])}"
                     " | | | | | |")
    lines += ["", "| box parse failures | TEOChat-tiny | no references | last frame only |", "|---|---|---|---|"]
    for task in ("loc", "sre", "det1", "damage"):
        lines.append(f"| {task} | " + " | ".join(
            _per_seed([results[s].parse_failures[m].get(task) for s in seeds])
            for m in ("teochat", "no_references", "last_frame")) + " |")
    if report is not None:
        lines += ["", f"Claims over {seed_note} (every seed must hold; `claims.json`):", "",
                  "| claim | ours (per seed) | reference (per seed) | margin | verdict |", "|---|---|---|---|---|"]
        for r in report.results:
            lines.append(f"| {r.claim.id} | {_per_seed(list(r.values))} | {_per_seed(list(r.references))} | "
                         f"{r.claim.margin:g} | {r.verdict} |")
    lines += ["", "| TEOChat, training steps | localisation F1 (per seed) | parse failures (per seed) |",
              "|---|---|---|"]
    for k, r in enumerate(first.ladder):
        rows = [results[s].ladder[k] for s in seeds]
        lines.append(f"| {r['steps']} | {_per_seed([x['loc_f1'] for x in rows])} | "
                     f"{_per_seed([x['loc_parse_failures'] for x in rows])} |")
    for seed in seeds:
        res = results[seed]
        lines += ["", f"seed {seed}: chance (shuffled labels) TRE {_f(res.chance['tre'])}, RTQA "
                  f"{_f(res.chance['rtqa'])}; training {res.tokens_per_s:.0f} tokens/s, inference "
                  f"{res.ms_per_sequence:.1f} ms per question; seconds: "
                  + ", ".join(f"{k} {v:.0f}" for k, v in res.seconds.items())]
    if report is not None:
        report.save(out / "claims.json")
    with atomic_write(out / "results.md") as f:
        f.write("\n".join(lines) + "\n")
    run.finish().save(out / "results.json")
    print("\n".join(lines))
