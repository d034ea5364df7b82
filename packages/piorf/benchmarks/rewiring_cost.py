"""Preprocessing cost of PIORF (one Ollivier-Ricci pass) vs BORF (ten) and the other baselines, and the
training-step overhead of PIORF's per-step rewiring against plain MGN.

    python benchmarks/rewiring_cost.py --out results/piorf-bench
"""

from __future__ import annotations

import numpy as np
import torch

from iclr25.piorf import BASELINES, TrainConfig, channel_mesh, cylinder_flow, ollivier_ricci, rewire, train
from iclr25.utils.bench import benchmark_parser, compare, format_table, to_run_result


def main() -> None:
    ap = benchmark_parser(__doc__, out="results/piorf-bench", raw=True)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    mesh = channel_mesh(22.0, 4.2, (4.0, 2.0), 0.5, h_min=0.12, h_max=0.45, grade=3.0)
    vel = np.random.default_rng(0).normal(size=(mesh.n_nodes, 2))
    ollivier_ricci(mesh.edge_index)  # import POT outside the timings

    def piorf():
        return rewire(mesh.edge_index, ollivier_ricci(mesh.edge_index).node, vel)

    rows = [compare(piorf, lambda f=f: f(mesh.edge_index), names=(f"PIORF preprocessing ({mesh.n_nodes} nodes)",
                                                                    name.upper()), warmup=0, repeats=args.repeats)
            for name, f in BASELINES.items()]
    ds = cylinder_flow(10, 100)
    tr, _ = ds.split(2)
    cfg = TrainConfig(steps=100)
    # each model is trained twice, alternating; the second (warm) time of each is kept
    steps = {m: train(tr, rewiring=m, config=cfg).step_seconds for m in ("none", "piorf", "none", "piorf")}
    print(format_table(rows))
    print(f"train step: MGN {steps['none']:.4f} s, MGN+PIORF {steps['piorf']:.4f} s, "
          f"overhead {steps['piorf'] / steps['none']:.3f}x")
    run = to_run_result("iclr25-piorf", rows, command="bench rewiring_cost")
    run.add("train step s MGN+PIORF", steps["piorf"], peer=steps["none"], peer_name="MGN", unit="s", timing=True)
    args.out.mkdir(parents=True, exist_ok=True)
    run.save(args.out / "rewiring_cost.json")


if __name__ == "__main__":
    main()
