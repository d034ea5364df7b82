"""The phases of the optimal protocol (claims ``focus-on-new-task`` and ``final-revision``, declared fails)
across budgets: a ladder over the control window (8, 16, 32 at alpha_1 = 4) and over the task-1 training budget
alpha_1 (4, 8, 16; window 16), and an ablation over the size of the student's initial heads (``init_head`` 1,
0.3, 0.1), at seeds 0-4, Pontryagin sweep (the test rung's solver). Per setting: how many seeds start with a focus
phase (u_1 < 0.1 over the first fifth of the window) and end with a revision phase (u_1 > 0.5 over the last
tenth), and task 1's error at alpha_1 (how well the old task is learned when the window opens). Writes
``focus_ladder.json`` (per seed) and ``focus_ladder.md`` (the README's table).

Run: ``python benchmarks/focus_ladder.py [--seeds 0,1,2,3,4] [--out DIR]``.
"""

import json
import statistics

from iclr25.cl_optimal_control import Problem, solve
from iclr25.cl_optimal_control.control import heuristics
from iclr25.utils.bench import benchmark_parser
from iclr25.utils.io import atomic_write

#: (part, alpha_1, init_head, window); the default problem is (4, 1, 16)
SETTINGS = (("window", 4.0, 1.0, 8.0), ("default", 4.0, 1.0, 16.0), ("window", 4.0, 1.0, 32.0),
            ("task-1 budget", 8.0, 1.0, 16.0), ("task-1 budget", 16.0, 1.0, 16.0),
            ("initial heads", 4.0, 0.3, 16.0), ("initial heads", 4.0, 0.1, 16.0))


def main() -> None:
    ap = benchmark_parser(__doc__.split("\n\n")[0], out="results/cl-optimal-control-focus")
    ap.add_argument("--seeds", default="0,1,2,3,4")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    rows = []
    for part, a1, head, window in SETTINGS:
        p = Problem(alpha_1=a1, alpha_f=a1 + window, init_head=head)
        for seed in seeds:
            best_h = min(J for _, J in heuristics(p, seed=seed).values())
            r = solve(p, "pmp", seed=seed, show_progress=False)
            u = r.schedule.u[:, 0]
            n5, n10 = len(u) // 5, len(u) // 10
            rows.append({"part": part, "alpha_1": a1, "init_head": head, "window": window, "seed": seed,
                         "eps_1 at alpha_1": float(r.trajectory.errors[p.n_first_steps, 0]),
                         "u_1 first fifth": float(u[:n5].mean()), "u_1 rest": float(u[n5:].mean()),
                         "u_1 last tenth": float(u[-n10:].mean()), "u_1 last interval": float(u[-1]), "J / best heuristic": r.cost / best_h,
                         "stationarity": r.stationarity})
            print(json.dumps(rows[-1]), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out / "focus_ladder.json") as f:  # a run cut short leaves no half-written table
        f.write(json.dumps(rows, indent=1) + "\n")
    seed_list = ", ".join(map(str, seeds))
    lines = [f"| setting | alpha_1 | init_head | window | focus first (u_1 < 0.1, first fifth) | u_1 first fifth "
             f"(seeds {seed_list}) | revision last (u_1 > 0.5, last tenth) | u_1 last tenth (seeds {seed_list}) | "
             "task-1 error at alpha_1 (mean) | J / best heuristic (mean) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for part, a1, head, window in SETTINGS:
        rs = [r for r in rows if (r["alpha_1"], r["init_head"], r["window"]) == (a1, head, window)]
        lines.append(f"| {part} | {a1:g} | {head:g} | {window:g} | "
                     f"{sum(r['u_1 first fifth'] < 0.1 for r in rs)} of {len(rs)} | "
                     f"{', '.join(format(r['u_1 first fifth'], '.2f') for r in rs)} | "
                     f"{sum(r['u_1 last tenth'] > 0.5 for r in rs)} of {len(rs)} | "
                     f"{', '.join(format(r['u_1 last tenth'], '.2f') for r in rs)} | "
                     f"{statistics.fmean(r['eps_1 at alpha_1'] for r in rs):.4f} | "
                     f"{statistics.fmean(r['J / best heuristic'] for r in rs):.3f} |")
    with atomic_write(args.out / "focus_ladder.md") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
