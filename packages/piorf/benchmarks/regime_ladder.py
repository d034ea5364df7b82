"""The parts of issue 28 that do not fit the 10-minute repro, at the repro's regime and on its data:

- ``repro``: the repro's own MGN and MGN+PIORF (feature-difference) models, ``--seeds`` (5), so the rows
  below can be paired without a repro folder (same seeds, data and settings: same models as the repro's);
- ``rules``: the partner-rule ablation (speed, velocity gradient, speed top-4, feature-difference with its own
  long-range edge MLPs), ``--seeds`` (5);
- ``baselines``: MGN+SDRF/FoSR/BORF/DIGL, ``--seeds`` (5);
- ``ladder``: the depth ladder, 3/4/6 message-passing blocks x (MGN, MGN+PIORF) at the repro's 3000 steps (its
  2-block rung is the repro's rows), and the training-budget rungs (600 and 1500 steps at 2 blocks),
  ``--ladder-seeds`` (5);
- ``width``: the repro's 2 blocks and 3000 steps at width 64, ``--ladder-seeds`` (5);
- ``hidden``: 0.2's data (Re set by the viscosity, invisible to the model), MGN and MGN+PIORF, ``--ladder-seeds``;

each model trained on one core. Every finished model is saved as its own file ``OUT/runs/<key>.json``
(atomically; a rerun skips the finished ones; 0.3.0's ``OUT/rows.json`` is read too), so several processes
can work on one folder: ``--list`` numbers the jobs, ``--index K`` runs only job K (one short job per model).
The tables are written to ``OUT/tables.md`` and the figure to ``OUT/ladder.png``, with the repro's MGN and
MGN+PIORF rows from ``--repro DIR`` (its ``rows.json``) when given, else from the ``repro`` part. The job list
(and so ``--index K``) is fixed by ``--parts``, ``--seeds`` and ``--ladder-seeds``; ``--tables-only`` tabulates
every finished row of ``OUT``, whatever job list made it.

    python benchmarks/regime_ladder.py --parts repro,rules,baselines --list
    python benchmarks/regime_ladder.py --parts repro,rules,baselines --index 3 --out results/piorf-regime
    python benchmarks/regime_ladder.py --parts repro,rules,baselines --tables-only --out results/piorf-regime
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import numpy as np

from iclr25.piorf.repro import (
    HORIZONS,
    PAPER_BEST_IMPROVEMENT,
    REGIME,
    label,
    method_table,
    repro_data,
    run_job,
    trivial_rows,
)
from iclr25.utils.bench import benchmark_parser
from iclr25.utils.io import atomic_write

RULES = [("speed", 1, False), ("gradient", 1, False), ("speed", 4, False), ("feature-difference", 1, True)]
BASELINES = ("sdrf", "fosr", "borf", "digl")
DEPTHS = (2, 3, 4, 6)
#: the depth ladder trains as long as the repro (its 2-block rung is the repro's own rows)
LADDER_STEPS = 3000
#: the training-budget rungs at the repro's 2 blocks (its 3000-step rung is the repro)
BUDGETS = (600, 1500)
#: the width rung: the repro's 2 blocks and 3000 steps at twice the latent width
WIDTHS = (64,)


def jobs(parts: list[str], seeds: int, ladder_seeds: int) -> list[dict]:
    out = []
    if "repro" in parts:
        out += [{"part": "repro", "method": m, "seed": s} for s in range(seeds) for m in ("none", "piorf")]
    if "rules" in parts:
        out += [{"part": "rules", "method": "piorf", "partner": p, "top_k": k, "separate": sep, "seed": s}
                for s in range(seeds) for p, k, sep in RULES]
    if "baselines" in parts:
        out += [{"part": "baselines", "method": m, "seed": s} for s in range(seeds) for m in BASELINES]
    if "ladder" in parts:
        out += [{"part": "ladder", "method": m, "layers": L, "train_steps": LADDER_STEPS, "seed": s}
                for s in range(ladder_seeds) for L in DEPTHS if L != REGIME["layers"] for m in ("none", "piorf")]
        out += [{"part": "ladder", "method": m, "layers": REGIME["layers"], "train_steps": b, "seed": s}
                for s in range(ladder_seeds) for b in BUDGETS for m in ("none", "piorf")]
    if "width" in parts:
        out += [{"part": "ladder", "method": m, "latent": w, "seed": s}
                for s in range(ladder_seeds) for w in WIDTHS for m in ("none", "piorf")]
    if "hidden" in parts:  # 0.2's data: Re set by the viscosity, invisible to the model
        out += [{"part": "hidden", "method": m, "vary": "viscosity", "seed": s}
                for s in range(ladder_seeds) for m in ("none", "piorf")]
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


def _plain_rule(r: dict) -> bool:
    """The repro's rewiring settings (feature-difference, one partner, shared edge MLPs, Re visible): the rows
    the ladder compares, whatever their depth, budget or width."""
    return (r.get("partner", "feature-difference") == "feature-difference" and r.get("top_k", 1) == 1
            and not r.get("separate", False) and r.get("vary", "speed") == "speed")


def ladder_table(rows: list[dict]) -> str:
    """Depth / budget / width ladder: MGN and MGN+PIORF RMSE@16 and the paired change per rung."""
    from iclr25.piorf import paired_test

    H = f"rmse_{max(HORIZONS)}"

    def rung(r: dict) -> tuple[int, int, int]:
        return (r.get("layers", REGIME["layers"]), r.get("train_steps", REGIME["train_steps"]),
                r.get("latent", REGIME["latent"]))

    lines = [f"| blocks | Adam steps | width | seeds | MGN 1-step | MGN+PIORF 1-step | MGN @{max(HORIZONS)} | "
             f"MGN+PIORF @{max(HORIZONS)} | PIORF vs MGN @{max(HORIZONS)} | paired t-test p | wall per model |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for key in sorted({rung(r) for r in rows}):
        def pick(m, key=key):
            return sorted((r for r in rows if r["method"] == m and rung(r) == key and _plain_rule(r)),
                          key=lambda r: r["seed"])
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
        wall = [r["wall_s"] for r in a + b]
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {len(seeds)} | {ms(a, 'rmse_1step')} | {ms(b, 'rmse_1step')} | "
                     f"{ms(a, H)} | {ms(b, H)} | {pt.improvement:+.1f} % ± {pt.improvement_std:.1f} ({pt.wins}/{pt.n}) | "
                     f"{pt.p_t:.3f} | {min(wall):.0f}-{max(wall):.0f} s |")
    return "\n".join(lines)


def ladder_figure(path: Path, rows: list[dict], methods: list[dict] = ()) -> Path | None:
    """RMSE@16 of MGN and MGN+PIORF against the number of message-passing blocks (3000 steps, width 32; mean ±
    std over seeds, seeds as dots); the per-seed paired change against MGN of every rung of the ladder; and,
    with ``methods`` (rows of the rules and baselines parts), of every partner rule and rewiring baseline."""
    from iclr25.utils.plotting import savefig, subplots

    H = f"rmse_{max(HORIZONS)}"

    def sel(m, **want):
        return {r["seed"]: r[H] for r in rows if r["method"] == m and _plain_rule(r)
                and all(r.get(k, REGIME[k]) == v for k, v in want.items())}

    depth = [(L, sel("none", layers=L, train_steps=REGIME["train_steps"], latent=REGIME["latent"]),
              sel("piorf", layers=L, train_steps=REGIME["train_steps"], latent=REGIME["latent"])) for L in DEPTHS]
    depth = [(L, a, b) for L, a, b in depth if len(set(a) & set(b)) >= 2]
    if not depth:
        return None
    fig, axes = subplots(1, 3 if methods else 2, size=(4.6, 3.4))
    ax, bx = axes[0], axes[1]
    for j, (m, name) in enumerate((("none", "MGN"), ("piorf", "MGN+PIORF"))):
        xs = np.array([L for L, *_ in depth], dtype=float) + (j - 0.5) * 0.12
        vals = [np.array(list((a if m == "none" else b).values())) for _, a, b in depth]
        ax.errorbar(xs, [v.mean() for v in vals], yerr=[v.std(ddof=1) for v in vals], marker="o", capsize=3,
                    label=name)
        for x, v in zip(xs, vals):
            ax.plot(np.full(len(v), x), v, ".", color="0.6", ms=3)
    ax.set(xlabel="message-passing blocks", ylabel=f"velocity RMSE @{max(HORIZONS)} x1e3",
           title=f"depth ladder ({REGIME['train_steps']} Adam steps)")
    ax.set_xticks(list(DEPTHS))
    ax.legend(fontsize=7)
    rungs = [(f"{L} blocks", L, REGIME["train_steps"], REGIME["latent"]) for L in DEPTHS]
    rungs += [(f"{b} steps", REGIME["layers"], b, REGIME["latent"]) for b in BUDGETS]
    rungs += [(f"width {w}", REGIME["layers"], REGIME["train_steps"], w) for w in WIDTHS]
    labels, changes = [], []
    for name, L, st, w in rungs:
        a, b = sel("none", layers=L, train_steps=st, latent=w), sel("piorf", layers=L, train_steps=st, latent=w)
        common = sorted(set(a) & set(b))
        if len(common) >= 2:
            labels.append(name)
            changes.append([100.0 * (a[s] - b[s]) / a[s] for s in common])
    for i, c in enumerate(changes):
        bx.plot(np.full(len(c), i), c, "o", color="C1", ms=4, alpha=0.7)
        bx.plot([i - 0.25, i + 0.25], [np.mean(c)] * 2, color="k", lw=2)
    bx.axhline(0.0, color="0.5", lw=0.8)
    bx.axhline(PAPER_BEST_IMPROVEMENT, color="C3", ls="--", lw=1, label=f"paper's best +{PAPER_BEST_IMPROVEMENT} %")
    bx.set_xticks(range(len(labels)), labels, rotation=35, ha="right", fontsize=7)
    bx.set(ylabel=f"PIORF vs MGN @{max(HORIZONS)}, % (+ = better)", title="ladder: paired change per seed")
    bx.legend(fontsize=7)
    if methods:
        cx = axes[2]
        base = sel("none", layers=REGIME["layers"], train_steps=REGIME["train_steps"], latent=REGIME["latent"])
        groups = {"feature-difference": (sel("piorf", layers=REGIME["layers"], train_steps=REGIME["train_steps"],
                                             latent=REGIME["latent"]), "C2")}
        order = {_key(j): i for i, j in enumerate(jobs(["rules", "baselines"], 1 << 10, 0))}
        for r in sorted(methods, key=lambda r: order.get(_key(r["job"]), 0) if "job" in r else 0):
            name = label(r).replace("MGN+PIORF ", "").replace("MGN+", "").strip("()")
            groups.setdefault(name, ({}, "C2" if r["method"] == "piorf" else "C4"))[0][r["seed"]] = r[H]
        for i, (g, color) in enumerate(groups.values()):
            c = [100.0 * (base[s] - v) / base[s] for s, v in g.items() if s in base]
            cx.plot(np.full(len(c), i), c, "o", color=color, ms=4, alpha=0.7)
            cx.plot([i - 0.25, i + 0.25], [np.mean(c)] * 2, color="k", lw=2)
        cx.axhline(0.0, color="0.5", lw=0.8)
        cx.axhline(PAPER_BEST_IMPROVEMENT, color="C3", ls="--", lw=1)
        cx.set_xticks(range(len(groups)), list(groups), rotation=35, ha="right", fontsize=7)
        cx.set(ylabel=f"vs MGN @{max(HORIZONS)}, % (+ = better)", title="rules and baselines (2 blocks)")
    fig.tight_layout()
    return savefig(fig, path, dpi=130)


def write_tables(out: Path, rows: list[dict], repro_rows: list[dict], trivial: list[dict]) -> str:
    reg = sorted(repro_rows, key=lambda r: (r["method"] != "none", r["seed"]))  # MGN's rows first
    text = []
    for part, title in (("rules", "Partner rules (repro regime)"), ("baselines", "Rewiring baselines (repro regime)")):
        order = {_key(j): i for i, j in enumerate(jobs([part], 1 << 10, 0))}
        rs = sorted((r for r in rows if r["part"] == part), key=lambda r: (order.get(_key(r["job"]), -1), r["seed"]))
        if rs:
            text += [f"### {title}", "", method_table(reg + rs, trivial, extra=("rmse_50_frame0",)), ""]
    hid = [r for r in rows if r["part"] == "hidden"]
    if hid:
        text += ["### 0.2's data (Re set by the viscosity, hidden from the model)", "",
                 method_table(hid, trivial_rows(repro_data(vary="viscosity")[1]), baseline="MGN [Re by viscosity]",
                              extra=("rmse_50_frame0",)), ""]
    lad = [r for r in rows if r["part"] == "ladder"] + reg
    if any(r["part"] == "ladder" for r in rows):
        text += ["### Depth, budget and width ladder", "", ladder_table(lad), ""]
        ladder_figure(out / "ladder.png", lad, [r for r in rows if r["part"] in ("rules", "baselines")])
    s = "\n".join(text).replace("rmse_50_frame0 (0.2 metric)", "@50 from frame 0 (0.2's metric)")
    with atomic_write(out / "tables.md") as f:
        f.write(s + "\n")
    return s


def main() -> None:
    ap = benchmark_parser(__doc__, out="results/piorf-regime", raw=True)
    ap.add_argument("--repro", type=Path, default=None, help="folder of a finished repro (its rows.json)")
    ap.add_argument("--parts", default="repro,rules,baselines,ladder,width,hidden")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--ladder-seeds", type=int, default=5)
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
