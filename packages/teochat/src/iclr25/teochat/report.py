"""The ``repro`` report: results.json, the README "Results" table (results.md) and the figures."""

from __future__ import annotations

import math
from pathlib import Path

from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult

from .experiments import ReproResult
from .figures import plot_ladder, plot_sequence_boxes

__all__ = ["write_repro", "claims"]

_ROWS = [("tsc", "temporal scene classification (acc.)"), ("loc", "change localisation (pixel F1)"),
         ("damage", "damage classification (inv.-weighted F1)"), ("sre", "referring expression (pixel F1)"),
         ("qa", "change QA (acc.)"), ("rqa", "region change QA (acc.)"), ("tre", "temporal referring (acc.)"),
         ("rtqa", "region temporal QA (acc.)"), ("tsc1", "single-image scene classification (acc.)"),
         ("det1", "single-image detection (pixel F1)"), ("qa1", "single-image counting (acc.)")]


def _f(x: float | None) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def claims(res: ReproResult) -> list[tuple[str, float, float, bool]]:
    """``(claim, ours, bound, holds)`` for the five orderings the issue asks for."""
    t, lf, nr = res.scores["teochat"], res.scores["last_frame"], res.scores["no_references"]
    sh = res.scores["teochat (shuffled frames)"]
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


def write_repro(run: RunResult, res: ReproResult, out: Path) -> None:
    run.config = dict(res.config)
    out.mkdir(parents=True, exist_ok=True)
    t, lf, nr = res.scores["teochat"], res.scores["last_frame"], res.scores["no_references"]
    run.add("change localisation pixel F1", t["loc"], peer=lf["loc"], peer_name="last-frame-only",
            higher_is_better=True)
    run.add("damage classification inv.-weighted F1", t["damage"], peer=lf["damage"], peer_name="last-frame-only",
            higher_is_better=True)
    run.add("temporal referring accuracy", t["tre"], peer=nr["tre"], peer_name="no image references",
            higher_is_better=True)
    sh = res.scores["teochat (shuffled frames)"]
    for task in ("tre", "rtqa"):
        run.add(f"{task.upper()} accuracy, shuffled frames", sh[task], peer=res.chance[task],
                peer_name="shuffled-label chance")
    run.add("change localisation pixel F1 (assistant vs specialist)", t["loc"], peer=res.specialist_loc_f1,
            peer_name="siamese specialist", higher_is_better=True)
    for r in res.ladder:
        run.add(f"ladder: localisation F1 after {r['steps']} steps", r["loc_f1"], higher_is_better=True)
    run.add("training tokens/s", res.tokens_per_s, unit="tokens/s", timing=True, higher_is_better=True)
    run.add("inference ms per question", res.ms_per_sequence, unit="ms", timing=True, higher_is_better=False)
    ex = res.example
    fig = plot_sequence_boxes(out / "example.png", ex["seq"], ex["truth"], ex["prediction"],
                              title=f"{ex['question']}\ntrue (green) vs TEOChat-tiny (magenta)")
    run.add_figure(fig, relative_to=out)
    fig = plot_ladder(out / "ladder.png", res.ladder,
                      reference={"last-frame-only": lf["loc"], "no references": nr["loc"],
                                 "siamese specialist": res.specialist_loc_f1})
    run.add_figure(fig, relative_to=out)
    lines = ["| task (metric) | TEOChat-tiny | no references | last frame only | shuffled frames |",
             "|---|---|---|---|---|"]
    for task, label in _ROWS:
        lines.append(f"| {label} | {_f(t.get(task))} | {_f(nr.get(task))} | {_f(lf.get(task))} | "
                     f"{_f(sh.get(task))} |")
    lines.append(f"| change localisation, siamese specialist (pixel F1) | {_f(res.specialist_loc_f1)} | | | |")
    lines += ["", "| box parse failures | TEOChat-tiny | no references | last frame only |", "|---|---|---|---|"]
    for task in ("loc", "sre", "det1", "damage"):
        lines.append(f"| {task} | {_f(res.parse_failures['teochat'].get(task))} | "
                     f"{_f(res.parse_failures['no_references'].get(task))} | "
                     f"{_f(res.parse_failures['last_frame'].get(task))} |")
    lines += ["", "| claim | ours | bound | holds |", "|---|---|---|---|"]
    for name, ours, bound, ok in claims(res):
        lines.append(f"| {name} | {_f(ours)} | {_f(bound)} | {'yes' if ok else '**no**'} |")
    lines += ["", "| training steps | localisation F1 | parse failures |", "|---|---|---|"]
    for r in res.ladder:
        lines.append(f"| {r['steps']} | {_f(r['loc_f1'])} | {_f(r['loc_parse_failures'])} |")
    lines += ["", f"chance (shuffled labels): TRE {_f(res.chance['tre'])}, RTQA {_f(res.chance['rtqa'])}; "
              f"training {res.tokens_per_s:.0f} tokens/s, inference {res.ms_per_sequence:.1f} ms per question; "
              "seconds: " + ", ".join(f"{k} {v:.0f}" for k, v in res.seconds.items())]
    with atomic_write(out / "results.md") as f:
        f.write("\n".join(lines) + "\n")
    run.finish().save(out / "results.json")
    print("\n".join(lines))
