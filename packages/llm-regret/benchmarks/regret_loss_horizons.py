"""The regret-loss on the regrettable (alternating) sequence across horizons: the scale ladder and ablation
behind the claims ``regret-loss-sublinear-on-regrettable`` and ``regret-loss-beats-hedge-on-regrettable``.

For each horizon T a model is trained with the regret-loss (simplex head, h = relu², N = 1) on the online box
distribution at that T, then played on the alternating sequence, beside Hedge with its horizon-tuned rate,
Hedge tuned on the training distribution, and FTL. Ladders: the training budget (steps x batch) of linear
self-attention, and the model class (a 2-layer transformer, at the short horizons only: its cost grows as T²).

    python benchmarks/regret_loss_horizons.py --out results/llm-regret-horizons     # ~4 min CPU, one thread

Writes ``horizons.json`` (every seed's numbers) and ``horizons.md`` (the README table).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np

from iclr25.llm_regret.experiments import horizon_rows, loglog_slope
from iclr25.utils.cli import set_torch_threads
from iclr25.utils.io import atomic_write
from iclr25.utils.outputs import OutputError, add_output, check_outputs

SEEDS = (0, 1, 2)
TS = (25, 50, 100, 200)
CONFIGS = [  # (model, steps, batch, horizons)
    ("lsa", 150, 128, TS), ("lsa", 300, 256, TS), ("lsa", 600, 256, TS), ("transformer", 300, 256, (25, 50)),
]


def _strict(x):
    """NaN/inf -> None (strict JSON), dict keys -> str."""
    if isinstance(x, dict):
        return {str(k): _strict(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_strict(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _cell(vals) -> str:
    v = np.asarray(vals, dtype=float)
    if not np.any(np.isfinite(v)):
        return "undefined (regret < 0)"
    return f"{v.mean():.3g} [{v.min():.3g}, {v.max():.3g}]" if v.size > 1 else f"{v[0]:.3g}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_output(ap, "--out", kind="folder", default="results/llm-regret-horizons",
               run_files=("horizons.json", "horizons.md"), help="folder for horizons.json and horizons.md")
    args = ap.parse_args()
    try:
        check_outputs(args)  # before the 4 minutes of work
    except OutputError as exc:
        sys.exit(f"{ap.prog}: error: {exc}")
    set_torch_threads(1)
    runs, baselines = [], {}
    t0 = time.process_time()
    for model, steps, batch, Ts in CONFIGS:
        for seed in SEEDS:
            rows, slopes = horizon_rows(Ts=Ts, steps=steps, batch=batch, seed=seed, model=model)
            name = f"regret-loss {model}"
            runs.append({"model": model, "steps": steps, "batch": batch, "seed": seed,
                         "regret_over_T": {r["T"]: r["regret_over_T"] for r in rows if r["agent"] == name},
                         "slope": slopes[name]})
            for r in rows:
                if not r["agent"].startswith("regret-loss"):
                    baselines.setdefault((r["agent"], r["T"]), {})[seed] = r["regret_over_T"]
            print(f"{model} {steps}x{batch} seed {seed}: {runs[-1]['regret_over_T']} slope {slopes[name]:.3f} "
                  f"({time.process_time() - t0:.0f} s CPU)", flush=True)
    header = "| agent | budget (steps × batch) | " + " | ".join(f"T = {T}" for T in TS) + " | slope over T |"
    lines = [header, "|" + "---|" * (len(TS) + 3)]
    for agent in ("FTL", "Hedge, distribution-tuned η", "Hedge, horizon-tuned η"):
        vals = {T: list(baselines[(agent, T)].values()) for T in TS}
        slope = [loglog_slope(TS, [baselines[(agent, T)][s] * T for T in TS]) for s in SEEDS]
        lines.append(f"| {agent} | – | " + " | ".join(_cell(vals[T]) for T in TS) + f" | {_cell(slope)} |")
    for model, steps, batch, Ts in CONFIGS:
        sel = [r for r in runs if (r["model"], r["steps"], r["batch"]) == (model, steps, batch)]
        cells = [_cell([r["regret_over_T"][T] for r in sel]) if T in Ts else "–" for T in TS]
        slope = _cell([r["slope"] for r in sel]) + ("" if Ts == TS else f" (T ≤ {max(Ts)})")
        lines.append(f"| regret-loss {model} | {steps} × {batch} | " + " | ".join(cells) + f" | {slope} |")
    table = "\n".join(lines)
    meta = {"seeds": list(SEEDS), "horizons": list(TS), "cpu_s": time.process_time() - t0,
            "configs": [list(c[:3]) + [list(c[3])] for c in CONFIGS], "runs": runs,
            "baselines": [{"agent": a, "T": T, "regret_over_T": v} for (a, T), v in baselines.items()]}
    with atomic_write(args.out / "horizons.json") as f:
        f.write(json.dumps(_strict(meta), indent=1, allow_nan=False) + "\n")
    with atomic_write(args.out / "horizons.md") as f:
        f.write(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
