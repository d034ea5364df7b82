"""The parts of issue 28 that do not fit the 10-minute repro, at the repro's regime and on its data:

- ``repro``: the repro's own MGN and MGN+PIORF (feature-difference) models, ``--seeds`` (5), so the rows
  below can be paired without a repro folder (same seeds, data and settings: same models as the repro's);
- ``rules``: the partner-rule ablation (speed, velocity gradient, speed top-4, feature-difference with its own
  long-range edge MLPs), ``--seeds`` (5);
- ``baselines``: MGN+SDRF/FoSR/BORF/DIGL, ``--seeds`` (5);
- ``hidden``: 0.2's data (Re set by the viscosity, invisible to the model), MGN and MGN+PIORF, ``--ladder-seeds``;
- ``ladder``: the depth ladder, 2/3/4/6 message-passing blocks x (MGN, MGN+PIORF) at 1500 steps, and a
  training-budget rung (600 steps at 2 blocks), ``--ladder-seeds`` (2);

each model trained on one core. Every finished model is saved as its own file ``OUT/runs/<key>.json``
(atomically; a rerun skips the finished ones; 0.3.0's ``OUT/rows.json`` is read too), so several processes
can work on one folder: ``--list`` numbers the jobs, ``--index K`` runs only job K (one short job per model).
The tables are written to ``OUT/tables.md``, with the repro's MGN and MGN+PIORF rows from ``--repro DIR`` (its
``rows.json``) when given, else from the ``repro`` part.

    python benchmarks/regime_ladder.py --parts repro,rules,baselines --list
    python benchmarks/regime_ladder.py --parts repro,rules,baselines --index 3 --out results/piorf-regime
    python benchmarks/regime_ladder.py --parts repro,rules,baselines --tables-only --out results/piorf-regime
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

import numpy as np

from iclr25.piorf.repro import HORIZONS, REGIME, label, method_table, repro_data, run_job, trivial_rows
from iclr25.utils.io import atomic_write

RULES = [("speed", 1, False), ("gradient", 1, False), ("speed", 4, False), ("feature-difference", 1, True)]
BASELINES = ("sdrf", "fosr", "borf", "digl")
DEPTHS = (2, 3, 4, 6)
LADDER_STEPS = 1500


def jobs(parts: list[str], seeds: int, ladder_seeds: int) -> list[dict]:
    out = []
    if "repro" in parts:
        out += [{"part": "repro", "method": m, "seed": s} for s in range(seeds) for m in ("none", "piorf")]
    if "rules" in parts:
        out += [{"part": "rules", "method": "piorf", "partner": p, "top_k": k, "separate": sep, "seed": s}
                for s in range(seeds) for p, k, sep in RULES]
    if "hidden" in parts:  # 0.2's data: Re set by the viscosity, invisible to the model
        out += [{"part": "hidden", "method": m, "vary": "viscosity", "seed": s}
                for s in range(ladder_seeds) for m in ("none", "piorf")]
    if "ladder" in parts:
        out += [{"part": "ladder", "method": m, "layers": L, "train_steps": LADDER_STEPS, "seed": s}
                for s in range(ladder_seeds) for L in DEPTHS for m in ("none", "piorf")]
        out += [{"part": "ladder", "method": m, "layers": 2, "train_steps": 600, "seed": s}
                for s in range(ladder_seeds) for m in ("none", "piorf")]
    if "baselines" in parts:
        out += [{"part": "baselines", "method": m, "seed": s} for s in range(seeds) for m in BASELINES]
    return out


def _key(job: dict) -> str:
    return json.dumps({k: v for k, v in job.items() if k != "part"}, sort_keys=True)


def _run_path(out: Path, job: dict) -> Path:
    return out / "runs" / f"{hashlib.sha256(_key(job).encode()).hexdigest()[:16]}.json"


def load_rows(out: Path) -> list[dict]:
    """0.3.0's ``rows.json`` plus every ``runs/*.json``, one row per job key (the newest file wins)."""
    rows = json.loads((out / "rows.json").read_text()) if (out / "rows.json").is_file() else []
    rows += [json.loads(p.read_text()) for p in sorted((out / "runs").glob("*.json"))]
    return list({_key(r["job"]): r for r in rows}.values())


def ladder_table(rows: list[dict]) -> str:
    """Depth / budget ladder: MGN and MGN+PIORF RMSE@16 and the paired change per rung."""
    from iclr25.piorf import paired_test

    H = f"rmse_{max(HORIZONS)}"
    rungs = sorted({(r.get("layers", REGIME["layers"]), r.get("train_steps", REGIME["train_steps"])) for r in rows})
    lines = [f"| blocks | Adam steps | seeds | MGN 1-step | MGN+PIORF 1-step | MGN @{max(HORIZONS)} | "
             f"MGN+PIORF @{max(HORIZONS)} | PIORF vs MGN @{max(HORIZONS)} |", "|---|---|---|---|---|---|---|---|"]
    for L, steps in rungs:
        def pick(m, L=L, steps=steps):
            return sorted((r for r in rows if r["method"] == m and r.get("layers", REGIME["layers"]) == L
                           and r.get("train_steps", REGIME["train_steps"]) == steps
                           and r.get("partner", "feature-difference") == "feature-difference"
                           and r.get("top_k", 1) == 1), key=lambda r: r["seed"])
        a, b = pick("none"), pick("piorf")
        seeds = sorted({r["seed"] for r in a} & {r["seed"] for r in b})
        if len(seeds) < 2:
            continue
        a = [r for r in a if r["seed"] in seeds]
        b = [r for r in b if r["seed"] in seeds]
        pt = paired_test([r[H] for r in a], [r[H] for r in b])

        def ms(rs, c):
            v = np.array([r[c] for r in rs])
            return f"{v.mean():.1f} ± {v.std(ddof=1):.1f}"
        lines.append(f"| {L} | {steps} | {len(seeds)} | {ms(a, 'rmse_1step')} | {ms(b, 'rmse_1step')} | {ms(a, H)} | "
                     f"{ms(b, H)} | {pt.improvement:+.1f} % ± {pt.improvement_std:.1f} ({pt.wins}/{pt.n}) |")
    return "\n".join(lines)


def write_tables(out: Path, rows: list[dict], repro_rows: list[dict], trivial: list[dict]) -> str:
    reg = list(repro_rows)
    text = []
    for part, title in (("rules", "Partner rules (repro regime)"), ("baselines", "Rewiring baselines (repro regime)")):
        rs = [r for r in rows if r["part"] == part]
        if rs:
            text += [f"### {title}", "", method_table(reg + rs, trivial, extra=("rmse_50_frame0",)), ""]
    hid = [r for r in rows if r["part"] == "hidden"]
    if hid:
        text += ["### 0.2's data (Re set by the viscosity, hidden from the model)", "",
                 method_table(hid, trivial_rows(repro_data(vary="viscosity")[1]), baseline="MGN [Re by viscosity]",
                              extra=("rmse_50_frame0",)), ""]
    lad = [r for r in rows if r["part"] == "ladder"] + reg
    if any(r["part"] == "ladder" for r in rows):
        text += ["### Depth and budget ladder", "", ladder_table(lad), ""]
    s = "\n".join(text)
    with atomic_write(out / "tables.md") as f:
        f.write(s + "\n")
    return s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("results/piorf-regime"))
    ap.add_argument("--repro", type=Path, default=None, help="folder of a finished repro (its rows.json)")
    ap.add_argument("--parts", default="repro,rules,baselines,hidden,ladder")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--ladder-seeds", type=int, default=2)
    ap.add_argument("--list", action="store_true", help="print the numbered jobs and whether each is done")
    ap.add_argument("--index", type=int, action="append", help="run only job K of --list (repeatable)")
    ap.add_argument("--tables-only", action="store_true")
    args = ap.parse_args()
    (args.out / "runs").mkdir(parents=True, exist_ok=True)
    every = jobs(args.parts.split(","), args.seeds, args.ladder_seeds)
    done = {_key(r["job"]) for r in load_rows(args.out)}
    if args.list:
        for k, job in enumerate(every):
            print(k, "done" if _key(job) in done else "todo", json.dumps(job))
        return
    if args.index is not None and any(not 0 <= k < len(every) for k in args.index):
        ap.error(f"--index must be in [0, {len(every) - 1}]")
    chosen = every if args.index is None else [every[k] for k in args.index]
    todo = [] if args.tables_only else [j for j in chosen if _key(j) not in done]
    t0 = time.perf_counter()
    for k, job in enumerate(todo):
        row = run_job({k: v for k, v in job.items() if k != "part"})
        row = {**row, "part": job["part"], "job": job}
        with atomic_write(_run_path(args.out, job)) as f:
            json.dump(row, f, indent=1)
        print(f"[{k + 1}/{len(todo)}] {label(job)} layers={job.get('layers', REGIME['layers'])} "
              f"steps={job.get('train_steps', REGIME['train_steps'])} seed={job['seed']}: "
              f"@16 {row[f'rmse_{max(HORIZONS)}']:.1f}, {row['wall_s']:.0f} s (total {time.perf_counter() - t0:.0f} s)",
              flush=True)
    if args.index is not None:
        print(f"wall {time.perf_counter() - t0:.0f} s")
        return
    rows = load_rows(args.out)
    repro_rows, trivial = [r for r in rows if r["part"] == "repro"], []
    rows = [r for r in rows if r["part"] != "repro"]
    if args.repro is not None and (args.repro / "rows.json").is_file():
        rep = json.loads((args.repro / "rows.json").read_text())
        repro_rows, trivial = [{**r, "part": "repro"} for r in rep["rows"]], rep["trivial"]
    else:
        trivial = trivial_rows(repro_data()[1])
    print(write_tables(args.out, rows, repro_rows, trivial))
    print(f"wall {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
