"""PIORF against the strongest other rewiring (SDRF), the ladder and ablation of the main claim
``piorf-beats-other-rewirings``, at the repro's regime and on its data.

- budget ladder (2 blocks, width 32): 600, 1500 and 3000 Adam steps, MGN, MGN+PIORF and MGN+SDRF, ``--seeds``
  (5); the 3000-step rows are the repro's and the regime ladder's baselines, the 600/1500-step PIORF and MGN rows
  the regime ladder's budget rungs, so only MGN+SDRF at 600 and 1500 steps is trained here (one model per job,
  saved as ``OUT/runs/<key>.json`` like ``regime_ladder.py``; a rerun skips finished ones);
- ablation at 3000 steps: every PIORF partner rule and every other rewiring (and no rewiring), each paired with
  MGN+SDRF of the same seed.

Writes ``OUT/vs_rewirings.md``::

    python benchmarks/vs_rewirings.py --out benchmarks/measured/regime
"""

from __future__ import annotations

import json
import time

import numpy as np
from regime_ladder import _key, _run_path, load_rows

from iclr25.piorf import paired_test
from iclr25.piorf.repro import HORIZONS, REGIME, label, run_job
from iclr25.utils.bench import benchmark_parser
from iclr25.utils.io import atomic_write

BUDGETS = (600, 1500, REGIME["train_steps"])
H = f"rmse_{max(HORIZONS)}"


def _steps(r: dict) -> int:
    return r.get("train_steps", r["job"].get("train_steps", REGIME["train_steps"]))


def _regime(r: dict, steps: int) -> bool:
    """The repro's depth and width at ``steps`` Adam steps, Re visible."""
    return (r.get("layers", REGIME["layers"]) == REGIME["layers"] and r.get("latent", REGIME["latent"]) == REGIME["latent"]
            and _steps(r) == steps and r.get("vary", "speed") == "speed")


def _pick(rows: list[dict], method: str, steps: int, **rule) -> dict[int, float]:
    out = {}
    for r in rows:
        if r["method"] != method or not _regime(r, steps):
            continue
        if method == "piorf":
            want = {"partner": "feature-difference", "top_k": 1, "separate": False, **rule}
            if any(r.get(k, {"partner": "feature-difference", "top_k": 1, "separate": False}[k]) != v
                   for k, v in want.items()):
                continue
        out[r["seed"]] = r[H]
    return out


def _vs(a: dict[int, float], b: dict[int, float]) -> str:
    """``b`` against ``a`` (SDRF) on their common seeds: paired change (+ = b better), wins, p."""
    seeds = sorted(set(a) & set(b))
    if len(seeds) < 2:
        return "| n/a | | |"
    pt = paired_test([a[s] for s in seeds], [b[s] for s in seeds])
    return f"| {pt.improvement:+.1f} % ± {pt.improvement_std:.1f} | {pt.wins}/{pt.n} | {pt.p_t:.3f} |"


def _ms(d: dict[int, float]) -> str:
    v = np.array(list(d.values()))
    return f"{v.mean():.1f} ± {v.std(ddof=1):.1f} ({len(v)})" if len(v) > 1 else "n/a"


def tables(rows: list[dict]) -> str:
    lines = [f"### Budget ladder: MGN+PIORF against MGN+SDRF (velocity RMSE x1e3 @{max(HORIZONS)}, mean ± std (seeds))",
             "", "| Adam steps | MGN | MGN+PIORF | MGN+SDRF | PIORF vs SDRF (+ = PIORF better) | seeds PIORF better "
             "| paired t-test p |", "|---|---|---|---|---|---|---|"]
    for b in BUDGETS:
        mgn, pio, sdrf = _pick(rows, "none", b), _pick(rows, "piorf", b), _pick(rows, "sdrf", b)
        lines.append(f"| {b} | {_ms(mgn)} | {_ms(pio)} | {_ms(sdrf)} {_vs(sdrf, pio)}")
    steps = REGIME["train_steps"]
    sdrf = _pick(rows, "sdrf", steps)
    lines += ["", f"### Ablation at {steps} steps: each model against MGN+SDRF of the same seed (@{max(HORIZONS)})", "",
              "| model | RMSE | vs SDRF (+ = better) | seeds better | paired t-test p |", "|---|---|---|---|---|"]
    variants = [("MGN (no rewiring)", _pick(rows, "none", steps)),
                ("MGN+PIORF (feature-difference)", _pick(rows, "piorf", steps)),
                ("MGN+PIORF (speed)", _pick(rows, "piorf", steps, partner="speed")),
                ("MGN+PIORF (gradient)", _pick(rows, "piorf", steps, partner="gradient")),
                ("MGN+PIORF (speed, top-4)", _pick(rows, "piorf", steps, partner="speed", top_k=4)),
                ("MGN+PIORF (feature-difference, own edge MLPs)", _pick(rows, "piorf", steps, separate=True)),
                ("MGN+FoSR", _pick(rows, "fosr", steps)), ("MGN+BORF", _pick(rows, "borf", steps)),
                ("MGN+DIGL", _pick(rows, "digl", steps))]
    for name, d in variants:
        lines.append(f"| {name} | {_ms(d)} {_vs(sdrf, d)}")
    return "\n".join(lines)


def main() -> None:
    ap = benchmark_parser(__doc__, out="results/piorf-regime", raw=True)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--tables-only", action="store_true")
    args = ap.parse_args()
    (args.out / "runs").mkdir(parents=True, exist_ok=True)
    jobs = [{"part": "sdrf-budget", "method": "sdrf", "layers": REGIME["layers"], "train_steps": b, "seed": s}
            for s in range(args.seeds) for b in BUDGETS if b != REGIME["train_steps"]]
    done = {_key(r["job"]) for r in load_rows(args.out)}
    todo = [] if args.tables_only else [j for j in jobs if _key(j) not in done]
    t0 = time.perf_counter()
    for k, job in enumerate(todo):
        row = {**run_job({k2: v for k2, v in job.items() if k2 != "part"}), "part": job["part"], "job": job}
        with atomic_write(_run_path(args.out, job)) as f:
            json.dump(row, f, indent=1)
        print(f"[{k + 1}/{len(todo)}] {label(job)} steps={job['train_steps']} seed={job['seed']}: @16 {row[H]:.1f}, "
              f"{row['wall_s']:.0f} s", flush=True)
    text = tables(load_rows(args.out))
    with atomic_write(args.out / "vs_rewirings.md") as f:
        f.write(f"<!-- written by `python benchmarks/vs_rewirings.py --out {args.out}`; do not edit -->\n{text}\n")
    print(text)
    print(f"wall {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
