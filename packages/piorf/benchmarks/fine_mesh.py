"""Issue 28's fine-mesh regime: MGN vs MGN+PIORF on ~2.1k-node meshes (as CylinderFlow's ~1.9k) at 4 blocks.

The flows are the repro's (same 12 lattice-Boltzmann trajectories, Re set by the inflow speed, 8 train / 4
test); only the mesh they are interpolated onto is finer: edge length 0.6 lattice units at the cylinder and 2.6
far away (the repro's is 1.2 and 4.5), about 2.1k nodes instead of 720, so the bottleneck-to-partner distance
in hops is about twice as long. Model: 4 message-passing blocks of width 32, 3000 Adam steps, one torch thread.

One model per call, so each can be its own short job; its row is written to ``OUT/<method>-s<seed>.json``
(atomically; an existing file is not recomputed), and ``--tables`` pairs whatever seeds are there:

    python benchmarks/fine_mesh.py --data                      # generate and cache the 12 trajectories
    python benchmarks/fine_mesh.py --method none --seed 0      # MGN, seed 0
    python benchmarks/fine_mesh.py --method piorf --seed 0     # MGN+PIORF (feature-difference), seed 0
    python benchmarks/fine_mesh.py --tables                    # OUT/tables.md and the paired test
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from iclr25.piorf.repro import (
    FINE_MESH,
    HORIZONS,
    PAPER_BEST_IMPROVEMENT,
    method_table,
    repro_data,
    run_job,
    trivial_rows,
)
from iclr25.utils.bench import benchmark_parser
from iclr25.utils.io import atomic_write

MESH_SIZE = FINE_MESH["mesh_size"]
FINE = {**FINE_MESH, "mesh_size": list(MESH_SIZE)}


def run_one(out: Path, method: str, seed: int) -> dict:
    path = out / f"{method}-s{seed}.json"
    if path.is_file():
        row = json.loads(path.read_text())
        print(f"{path} exists: @16 {row[f'rmse_{max(HORIZONS)}']:.1f} (not recomputed)")
        return row
    row = run_job({"method": method, "seed": seed, **FINE})
    with atomic_write(path) as f:
        json.dump(row, f, indent=1)
    print(f"{row['label']} seed {seed} on {row['n_nodes']:.0f}-node meshes: 1-step {row['rmse_1step']:.1f}, "
          f"@16 {row[f'rmse_{max(HORIZONS)}']:.1f}, final loss {row['final_loss']:.3f}, {row['wall_s']:.0f} s "
          f"({1e3 * row['step_s']:.1f} ms/step)")
    return row


def tables(out: Path) -> str:
    from iclr25.piorf import paired_test

    rows = [json.loads(p.read_text()) for p in sorted(out.glob("*-s*.json"))]
    tpath = out / "trivial.json"
    if tpath.is_file():
        trivial = json.loads(tpath.read_text())
    else:
        tr, te = repro_data(mesh_size=MESH_SIZE)
        trivial = trivial_rows(te)
        with atomic_write(tpath) as f:
            json.dump({"trivial": trivial, "n_nodes": [t.n_nodes for t in (*tr, *te)]}, f, indent=1)
        trivial = {"trivial": trivial}
    text = [method_table(rows, trivial["trivial"], extra=("rmse_50_frame0",)), ""]
    H = f"rmse_{max(HORIZONS)}"
    a = {r["seed"]: r for r in rows if r["method"] == "none"}
    b = {r["seed"]: r for r in rows if r["method"] == "piorf"}
    seeds = sorted(set(a) & set(b))
    if len(seeds) >= 2:
        pt = paired_test([a[s][H] for s in seeds], [b[s][H] for s in seeds])
        text.append(f"PIORF vs MGN, RMSE@{max(HORIZONS)}, seeds {seeds}: {pt.improvement:+.1f} % ± "
                    f"{pt.improvement_std:.1f} ({pt.wins}/{pt.n} better), paired t = {pt.t:.2f}, p = {pt.p_t:.4f}, "
                    f"sign test p = {pt.p_sign:.3f} (paper's best: {PAPER_BEST_IMPROVEMENT} %)")
    for s in seeds:
        text.append(f"seed {s}: MGN {a[s][H]:.1f}, PIORF {b[s][H]:.1f} "
                    f"({100 * (a[s][H] - b[s][H]) / a[s][H]:+.1f} %); wall {a[s]['wall_s']:.0f} / {b[s]['wall_s']:.0f} s")
    if rows:
        text.append(f"mean nodes per test mesh {np.mean([r['n_nodes'] for r in rows]):.0f}")
    s = "\n".join(text)
    with atomic_write(out / "tables.md") as f:
        f.write(s + "\n")
    return s


def main() -> None:
    ap = benchmark_parser(__doc__, out="results/piorf-2k", raw=True)
    ap.add_argument("--method", choices=("none", "piorf"))
    ap.add_argument("--seed", type=int)
    ap.add_argument("--data", action="store_true", help="only generate and cache the data")
    ap.add_argument("--tables", action="store_true", help="only write OUT/tables.md from the finished rows")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if args.data:
        tr, te = repro_data(show_progress=True, mesh_size=MESH_SIZE)
        print(f"nodes per mesh: {[t.n_nodes for t in (*tr, *te)]}")
    elif args.tables:
        print(tables(args.out))
    else:
        if args.method is None or args.seed is None or args.seed < 0:
            ap.error("give --method and --seed >= 0 (or --data, or --tables)")
        run_one(args.out, args.method, args.seed)
    print(f"wall {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
