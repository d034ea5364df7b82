"""The reduced-scale reproduction: MGN vs MGN+PIORF over seeds, in a regime where the rollout claim is decidable.

Regime (issue 28): the Reynolds number is set by the inflow speed (visible to the model), 2 message-passing
blocks on the ~720-node mesh (PIORF's bottleneck-to-partner distance is beyond their reach), 3000 Adam steps,
and rollout errors at horizons within one shedding period beside the hold-first-frame and time-mean fields.
The other partner rules, the rewiring baselines and the depth ladder are ``benchmarks/regime_ladder.py``
(they use :func:`run_job` with the same data and settings).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from iclr25.utils.io import atomic_write
from iclr25.utils.parallel import parallel_map
from iclr25.utils.results import RunResult

from .experiments import (  # noqa: F401 - the old import paths (iclr25.piorf.repro.run_job, ...) keep working
    FINE_MESH,
    HORIZONS,
    LABELS,
    PAPER_BEST_IMPROVEMENT,
    REGIME,
    REPRO_DATA,
    label,
    remember,
    repro_data,
    run_job,
    trivial_rows,
)

__all__ = ["run_repro", "run_job", "repro_data", "trivial_rows", "REPRO_DATA", "REGIME", "HORIZONS",
           "PAPER_BEST_IMPROVEMENT", "LABELS", "FINE_MESH"]

def _cols() -> list[str]:
    return ["rmse_1step", *[f"rmse_{h}" for h in HORIZONS]]


def method_table(rows: list[dict[str, Any]], trivial: list[dict[str, Any]], baseline: str = "MGN",
                 extra: tuple[str, ...] = ()) -> str:
    """Markdown table: mean ± std over seeds per label, the trivial rows, and the change against ``baseline``
    at the longest horizon; ``extra`` columns (e.g. ``rmse_50_frame0``) where the rows have them."""
    from .metrics import paired_test

    cols = [*_cols(), *extra]

    def cell(rs: list[dict[str, Any]], c: str) -> str:
        if not rs or any(c not in r for r in rs):
            return "–"
        v = np.array([r[c] for r in rs])
        return f"{v.mean():.1f}" + (f" ± {v.std(ddof=1):.1f}" if len(v) > 1 else "")

    H = f"rmse_{max(HORIZONS)}"
    labels = list(dict.fromkeys(r["label"] for r in rows))
    head = ["model", "seeds", "1-step", *[f"@{h}" for h in HORIZONS], *[f"{c} (0.2 metric)" for c in extra],
            f"vs {baseline} @{max(HORIZONS)}",
            "paired t-test p", "final loss"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    base = {r["seed"]: r[H] for r in rows if r["label"] == baseline}
    for lab in labels:
        rs = sorted((r for r in rows if r["label"] == lab), key=lambda r: r["seed"])
        cells = [lab, str(len(rs)), *[cell(rs, c) for c in cols]]
        common = [r for r in rs if r["seed"] in base]
        if lab != baseline and len(common) >= 2:
            pt = paired_test([base[r["seed"]] for r in common], [r[H] for r in common])
            cells += [f"{pt.improvement:+.1f} % ± {pt.improvement_std:.1f} ({pt.wins}/{pt.n} seeds better)",
                      f"{pt.p_t:.3f}"]
        else:
            cells += ["", ""]
        cells.append(f"{np.mean([r['final_loss'] for r in rs]):.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    for r in trivial:
        lines.append("| " + " | ".join([r["label"], "", *[cell([r], c) for c in cols], "", "", ""]) + " |")
    return "\n".join(lines)


def run_repro(args: argparse.Namespace) -> int:
    """Train MGN and MGN+PIORF for ``args.seeds`` seeds; write the table, the paired test and the figures.

    ``args`` holds ``out``, ``seed``, ``seeds``, ``train_steps`` and ``jobs`` (as ``iclr25 piorf repro`` parses
    them; the command line checks them before this runs).
    """
    from .metrics import paired_test, shedding_period

    t0 = time.perf_counter()
    seeds = list(range(args.seed, args.seed + args.seeds))
    run = RunResult.start("iclr25-piorf", "repro", seed=args.seed,
                          config={**REPRO_DATA, **REGIME, "train_steps": args.train_steps, "seeds": seeds,
                                  "horizons": list(HORIZONS), "methods": ["none", "piorf"]})
    from iclr25.utils.device import describe_device, torch_device  # noqa: PLC0415

    run.machine["device"] = describe_device(torch_device(None))  # $ICLR25_DEVICE (repro --device), else auto
    tr, te = repro_data(show_progress=True)  # fills the cache before the workers read it
    t_data = time.perf_counter() - t0
    periods = [shedding_period(t) for t in te]
    jobs = [{"method": m, "seed": s, "train_steps": args.train_steps} for s in seeds for m in ("none", "piorf")]
    rows = parallel_map(run_job, jobs, n_jobs=args.jobs, desc="train")
    for r in rows:  # the workers' models, for the claims below
        remember(r)
    trivial = trivial_rows(te)
    table = method_table(rows, trivial)
    H = f"rmse_{max(HORIZONS)}"
    a = [r[H] for r in sorted(rows, key=lambda r: r["seed"]) if r["method"] == "none"]
    b = [r[H] for r in sorted(rows, key=lambda r: r["seed"]) if r["method"] == "piorf"]
    pt = paired_test(a, b) if len(seeds) >= 2 else None
    _add_metrics(run, rows, trivial, pt, periods, t_data)
    args.out.mkdir(parents=True, exist_ok=True)
    _add_figures(run, args.out, rows, te)
    run.finish().save(args.out / "results.json")
    with atomic_write(args.out / "rows.json") as f:  # per-seed rows, read by benchmarks/regime_ladder.py
        json.dump({"rows": rows, "trivial": trivial, "shedding_periods": periods,
                   "reynolds": [t.reynolds for t in te]}, f, indent=1)
    with atomic_write(args.out / "table.md") as f:
        f.write(table + "\n")
    _print_summary(table, periods, te, pt)
    _repro_claims(seeds, args.train_steps, args.out)
    print(f"wall {time.perf_counter() - t0:.0f} s (data {t_data:.0f} s)")
    return 0


def _add_metrics(run: RunResult, rows: list[dict[str, Any]], trivial: list[dict[str, Any]], pt: Any,
                 periods: list[float], t_data: float) -> None:
    """The repro's metrics: per-seed RMSE at the longest horizon, the per-label means at every horizon, the
    trivial rows, the paired test (``pt``, None for one seed), the shortest shedding period and the data time."""
    H = f"rmse_{max(HORIZONS)}"
    for r in rows:
        run.add(f"{r['label']} seed {r['seed']} RMSE@{max(HORIZONS)} x1e3", r[H], higher_is_better=False)
    for lab in ("MGN", "MGN+PIORF (feature-difference)"):
        for c in _cols():
            run.add(f"{lab} {c} x1e3", float(np.mean([r[c] for r in rows if r["label"] == lab])),
                    higher_is_better=False)
    for r in trivial:
        for c in _cols():
            run.add(f"{r['label']} {c} x1e3", r[c], higher_is_better=False)
    if pt is not None:
        run.add(f"PIORF improvement over MGN, RMSE@{max(HORIZONS)} %", pt.improvement, peer=PAPER_BEST_IMPROVEMENT,
                peer_name="paper's best", higher_is_better=True)
        run.add("paired t-test p", pt.p_t)
        run.add("sign test p", pt.p_sign)
    run.add("shedding period of the test trajectories, frames (min)", float(min(periods)))
    run.add("data s", t_data, unit="s", timing=True)


def _add_figures(run: RunResult, out: Any, rows: list[dict[str, Any]], te: Any) -> None:
    """The rollout-error curves on test trajectory 0 (mean of seeds per label, beside the hold-first-frame and
    time-mean fields) and PIORF's rewiring of the test mesh, drawn into ``out`` and added to ``run``."""
    from .curvature import ollivier_ricci
    from .figures import flow_figure, rollout_figure
    from .metrics import HoldFirstFrame, TimeMean
    from .rewiring import rewire

    curves = {lab: np.mean([r["curve"] for r in rows if r["label"] == lab], axis=0) / 1e3
              for lab in dict.fromkeys(r["label"] for r in rows)}
    bold = tuple(curves)
    for name, p in (("hold first frame", HoldFirstFrame()), ("time-mean field (oracle)", TimeMean())):
        curves[name] = p.rollout(te[0], max(HORIZONS)).rmse_velocity
    run.add_figure(rollout_figure(out / "rollout_error.png", curves, bold=bold,
                                  title="rollout error (test trajectory 0, mean of seeds)"), relative_to=out)
    traj = te[0]
    rw = rewire(traj.edge_index, ollivier_ricci(traj.edge_index).node, traj.velocity[0])
    run.add_figure(flow_figure(out / "rewiring.png", traj, 0, {"PIORF (feature-difference)": rw},
                               f"test mesh, Re={traj.reynolds:.0f}"), relative_to=out)


def _print_summary(table: str, periods: list[float], te: Any, pt: Any) -> None:
    """Print the method table, the shedding periods and Reynolds numbers of the test trajectories, and the
    paired test of PIORF against MGN (when there are two seeds or more)."""
    print(table)
    print()
    print(f"shedding periods of the test trajectories (frames): {', '.join(f'{p:.1f}' for p in periods)} "
          f"(Re {', '.join(f'{t.reynolds:.0f}' for t in te)})")
    if pt is not None:
        print(f"PIORF vs MGN, RMSE@{max(HORIZONS)}: {pt.improvement:+.1f} % ± {pt.improvement_std:.1f} over "
              f"{pt.n} seeds ({pt.wins} better), paired t = {pt.t:.2f}, p = {pt.p_t:.4f}, sign test p = "
              f"{pt.p_sign:.3f} (paper's best: {PAPER_BEST_IMPROVEMENT} %)")


def _repro_claims(seeds: list[int], train_steps: int, out: Any) -> None:
    """The claims at the repro rung into ``out/claims.json``, from the models trained above (only the mechanism
    task trains anything more), when the run is the rung's (seeds 0-4, the regime's steps); else say why not."""
    from .claims import REGISTRY  # noqa: PLC0415

    if seeds == list(REGISTRY.rung_seeds("repro")) and train_steps == REGIME["train_steps"]:
        report = REGISTRY.run("repro", command="iclr25 piorf repro")
        report.save(out / "claims.json")
        for r in report.results:
            print(f"claim {r.claim.id}: {r.verdict} (expected: {r.claim.expect})")
    else:
        print("claims.json not written: the claims' repro rung is seeds 0-4 at "
              f"{REGIME['train_steps']} steps (run without --seed/--seeds/--train-steps)")
