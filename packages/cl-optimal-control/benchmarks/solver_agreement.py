"""Pontryagin sweep against the direct method on the default problem at seeds 0-4: cost, Pontryagin's
stationarity, and the schedule statistics the claims read (replay share u_1 over the first fifth, the rest and the
last interval of the window). The ablation behind the README's "The final revision and the two solvers".
Writes ``results/cl-optimal-control-solvers/solvers.json`` and prints a Markdown table.

Run: ``python benchmarks/solver_agreement.py [--seeds 0,1,2,3,4] [--out DIR]``.
"""

import json

from iclr25.cl_optimal_control import Problem, solve
from iclr25.cl_optimal_control.control import heuristics
from iclr25.utils.bench import benchmark_parser
from iclr25.utils.io import atomic_write


def main() -> None:
    ap = benchmark_parser(__doc__.split("\n\n")[0], out="results/cl-optimal-control-solvers")
    ap.add_argument("--seeds", default="0,1,2,3,4")
    args = ap.parse_args()
    p = Problem()
    rows = []
    for seed in (int(s) for s in args.seeds.split(",")):
        best_h = min(J for _, J in heuristics(p, seed=seed).values())
        sols = {m: solve(p, m, seed=seed, show_progress=False) for m in ("pmp", "direct")}
        lo = min(r.cost for r in sols.values())
        for m, r in sols.items():
            u = r.schedule.u[:, 0]
            n5 = len(u) // 5
            rows.append({"seed": seed, "method": m, "J": r.cost, "J / best heuristic": r.cost / best_h,
                         "J / lower J - 1": r.cost / lo - 1, "stationarity": r.stationarity, "iterations": r.n_iter,
                         "u_1 first fifth": float(u[:n5].mean()), "u_1 rest": float(u[n5:].mean()),
                         "u_1 last interval": float(u[-1])})
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out / "solvers.json") as f:  # a run cut short leaves no half-written table
        f.write(json.dumps(rows, indent=1) + "\n")
    cols = list(rows[0])
    print("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in r.values()) + " |")


if __name__ == "__main__":
    main()
