"""Epoch ladder of the ranking claims (issue 44): AP-MSE and AF-MSE of MS-GODE against fine-tune, EWC, replay,
LwF and joint training, every method retrained from scratch on the physics sequence at the checkpoint rung's
data (``PRETRAIN``: 36 training + 12 validation simulations per task, batches of 6) with E epochs per task, and
scored on the same fresh test tasks as the claims (16 batches of 10 per task): ``experiments.run_repro(seed,
epochs=E)``, the function the ``repro`` rung of the claims registry calls at E = 16.

    python benchmarks/ranking_ladder.py --out DIR [--seeds 0 1 2] [--epochs 8 16 24]

Writes DIR/ladder_ranking.json (one row per seed, rung and method) and prints a markdown table (mean ± std over
the seeds per rung and method, and how many seeds MS-GODE's AP-MSE beats the best continual learner's).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from iclr25.ms_gode.claims import BASELINE_METHODS
from iclr25.ms_gode.experiments import run_repro


def rows_for(seed: int, epochs: int) -> list[dict]:
    r = run_repro(seed, epochs)
    # "fit": mean of a_jj, each task's test MSE right after learning it (MS-GODE: its own mask, unchanged since)
    rows = [{"seed": seed, "epochs": epochs, "method": "ms-gode", "ap_mse": r["ap_mse"], "af_mse": r["af_mse"],
             "fit": float(np.mean(r["oracle_mse"])), "mode_fraction": r["mode_fraction"],
             "cpu_s": round(r["cpu_s"]["ms-gode"], 1)}]
    rows += [{"seed": seed, "epochs": epochs, "method": m, "ap_mse": b["ap_mse"], "af_mse": b["af_mse"],
              "fit": float(np.mean(np.diag(np.asarray(b["acc"], dtype=float)))), "cpu_s": round(r["cpu_s"][m], 1)}
             for m, b in r["baselines"].items()]
    return rows


def _values(at: list[dict], seeds: list[int], method: str, key: str) -> np.ndarray:
    return np.asarray([next(r[key] for r in at if r["seed"] == s and r["method"] == method) for s in seeds])


def table(rows: list[dict]) -> str:
    methods = ["ms-gode", *BASELINE_METHODS, "joint"]
    lines = ["| epochs per task | seeds | " + " | ".join(f"{m} AP-MSE" for m in methods)
             + " | MS-GODE AF-MSE | fine-tune AF-MSE | single-task fit (mean a_jj): MS-GODE / fine-tune / replay"
             " | seeds where MS-GODE's AP-MSE < best CL baseline's |",
             "|" + "---|" * (len(methods) + 6)]
    for e in sorted({r["epochs"] for r in rows}):
        at = [r for r in rows if r["epochs"] == e]
        seeds = sorted({r["seed"] for r in at})

        def get(m: str, k: str, at: list[dict] = at, seeds: list[int] = seeds) -> np.ndarray:
            return _values(at, seeds, m, k)

        wins = sum(get("ms-gode", "ap_mse")[i] < min(get(m, "ap_mse")[i] for m in BASELINE_METHODS)
                   for i in range(len(seeds)))
        cells = [f"{get(m, 'ap_mse').mean():.4f} ± {get(m, 'ap_mse').std():.4f}" for m in methods]
        lines.append(f"| {e} | {', '.join(map(str, seeds))} | " + " | ".join(cells)
                     + f" | {get('ms-gode', 'af_mse').mean():+.4f} | {get('finetune', 'af_mse').mean():+.4f} | "
                     + " / ".join(f"{get(m, 'fit').mean():.4f}" for m in ("ms-gode", "finetune", "replay"))
                     + f" | {wins} of {len(seeds)} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--epochs", type=int, nargs="+", default=[8, 16, 24])
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    for e in args.epochs:
        for s in args.seeds:
            new = rows_for(s, e)
            print(json.dumps(new), flush=True)
            rows += new
    (args.out / "ladder_ranking.json").write_text(json.dumps(rows, indent=1) + "\n")
    print(table(rows))


if __name__ == "__main__":
    main()
