"""Scale ladder and ablations for the ranking claims of the physics sequence: AP-MSE of MS-GODE against
fine-tuning and joint training at three training budgets (epochs per task), and ablations of the likely causes
(score learning rate, data per task, hidden width, training layout).

    python benchmarks/ladder.py [--out DIR] [--quick]

Writes DIR/ladder.json and prints Markdown tables.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import torch

from iclr25.ms_gode import ModelConfig, TrainConfig, run_sequence, task_sequence
from iclr25.utils.bench import benchmark_parser


def run(methods, *, n_sims, epochs, hidden=24, lr_ms=5e-2, lr_base=5e-3, target="window", seed=0,
        sequence="physics", n_frames=None, step_size=1.0 / 15.0):
    tasks = [t.split((0.6, 0.2, 0.2)) for t in task_sequence(sequence, n_sims, seed=seed, n_frames=n_frames)]
    mc = ModelConfig(hidden=hidden, ode_hidden=hidden, augment=8, step_size=step_size)
    out = {}
    for m in methods:
        tc = TrainConfig(epochs=epochs, lr=lr_ms if m == "ms-gode" else lr_base, target=target)
        r = run_sequence(m, tasks, config=mc, train=tc, seed=seed)
        out[m] = {"AP-MSE": r.ap_mse, "AF-MSE": r.af_mse, "forget ratio": float(r.acc[-1, 0] / r.acc[0, 0]),
                  "mode accuracy": list(r.mode_accuracy), "acc": r.acc.tolist()}
    return out


def main() -> None:
    parser = benchmark_parser(__doc__, out="results/ms-gode-ladder", raw=True)
    parser.add_argument("--sequence", choices=["physics", "bio"], default="physics")
    args = parser.parse_args()
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    if args.sequence == "bio":
        bio_ladder(args.out, t0)
        return
    rows = []
    for epochs in (4, 10, 20):
        res = run(["ms-gode", "finetune", "joint"], n_sims=50, epochs=epochs)
        rows.append({"rung": f"epochs {epochs}", **{f"{m} {k}": v[k] for m, v in res.items()
                                                     for k in ("AP-MSE", "AF-MSE", "forget ratio")},
                     "mode accuracy": res["ms-gode"]["mode accuracy"]})
        print(json.dumps(rows[-1]), flush=True)
    ablations = [("score lr 2e-2", {"lr_ms": 2e-2}), ("score lr 1e-1", {"lr_ms": 1e-1}),
                 ("100 sims per task", {"n_sims": 100}), ("hidden 48", {"hidden": 48})]
    abl = []
    for name, kw in ablations:
        res = run(["ms-gode", "finetune"], **{"n_sims": 50, "epochs": 10, **kw})
        abl.append({"ablation": name, **{f"{m} {k}": v[k] for m, v in res.items() for k in ("AP-MSE", "AF-MSE")},
                    "mode accuracy": res["ms-gode"]["mode accuracy"]})
        print(json.dumps(abl[-1]), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "ladder.json").write_text(json.dumps({"ladder": rows, "ablations": abl,
                                                       "seconds": time.perf_counter() - t0}, indent=1))
    print("| rung | MS-GODE AP | Fine-tune AP | Joint AP | MS/FT | MS/Joint | FT forget ratio | mode acc |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['rung']} | {r['ms-gode AP-MSE']:.4f} | {r['finetune AP-MSE']:.4f} | {r['joint AP-MSE']:.4f} | "
              f"{r['ms-gode AP-MSE'] / r['finetune AP-MSE']:.2f} | {r['ms-gode AP-MSE'] / r['joint AP-MSE']:.2f} | "
              f"{r['finetune forget ratio']:.2f} | {' / '.join(f'{a:.2f}' for a in r['mode accuracy'])} |")
    print("\n| ablation (epochs 10) | MS-GODE AP | Fine-tune AP | MS/FT | mode acc |\n|---|---|---|---|---|")
    for r in abl:
        print(f"| {r['ablation']} | {r['ms-gode AP-MSE']:.4f} | {r['finetune AP-MSE']:.4f} | "
              f"{r['ms-gode AP-MSE'] / r['finetune AP-MSE']:.2f} | "
              f"{' / '.join(f'{a:.2f}' for a in r['mode accuracy'])} |")



def bio_ladder(out: Path, t0: float) -> None:
    """The bio sequence at the repro's data size (20 simulations per config, 40 frames): budgets and causes."""
    common = {"sequence": "bio", "n_frames": 40}
    rows = []
    for name, kw in (("epochs 4", {"epochs": 4}), ("epochs 8", {"epochs": 8}), ("epochs 16", {"epochs": 16}),
                     ("epochs 8, rk4 step 1/30", {"epochs": 8, "step_size": 1.0 / 30.0}),
                     ("epochs 8, 40 simulations", {"epochs": 8, "n_sims": 40})):
        res = run(["ms-gode", "finetune"], **{"n_sims": 20, **common, **kw})
        rows.append({"rung": name, **{f"{m} {k}": v[k] for m, v in res.items() for k in ("AP-MSE", "AF-MSE")},
                     "ms-gode task1 after task1": res["ms-gode"]["acc"][0][0],
                     "finetune task1 after task1": res["finetune"]["acc"][0][0],
                     "mode accuracy": res["ms-gode"]["mode accuracy"]})
        print(json.dumps(rows[-1]), flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "ladder_bio.json").write_text(json.dumps({"rows": rows, "seconds": time.perf_counter() - t0}, indent=1))
    print("| setting | MS-GODE AP | Fine-tune AP | MS / FT | task 1 after task 1 (MS / FT) | mode acc |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['rung']} | {r['ms-gode AP-MSE']:.4f} | {r['finetune AP-MSE']:.4f} | "
              f"{r['ms-gode AP-MSE'] / r['finetune AP-MSE']:.2f} | {r['ms-gode task1 after task1']:.4f} / "
              f"{r['finetune task1 after task1']:.4f} | {' / '.join(f'{a:.2f}' for a in r['mode accuracy'])} |")


if __name__ == "__main__":
    main()
