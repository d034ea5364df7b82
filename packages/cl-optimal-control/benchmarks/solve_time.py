"""Solve time of the optimal-control problem: our Pontryagin sweep and direct method (JAX, warm) against
CasADi + IPOPT (multiple shooting, the authors' tool for the direct method) on the same Euler-discretised
problem; costs side by side. Writes ``results/cl-optimal-control-bench/results.json``.

Run: ``python benchmarks/solve_time.py [--out DIR]`` (needs the casadi extra).
"""


from iclr25.cl_optimal_control import Problem, solve
from iclr25.cl_optimal_control.casadi_peer import solve_casadi
from iclr25.utils.bench import benchmark_parser, compare, format_table, to_run_result


def main() -> None:
    ap = benchmark_parser(__doc__, out="results/cl-optimal-control-bench")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rows = []
    costs = {}
    for label, problem in (("K=2, T=2, 40 intervals, 160 steps", Problem()),
                           ("K=2, T=2, 200 intervals, 200 steps", Problem(dt=0.08, n_intervals=200))):
        costs[label] = {}

        def ours(problem=problem, label=label):
            costs[label]["pmp"] = solve(problem, "pmp", show_progress=False).cost

        def peer(problem=problem, label=label):
            costs[label]["casadi"] = solve_casadi(problem).cost

        rows.append(compare(ours, peer, names=(f"PMP (JAX) {label}", "casadi/IPOPT"), warmup=1,
                            repeats=args.repeats))
    print(format_table(rows))
    print(costs)
    run = to_run_result("iclr25-cl-optimal-control", rows, config={"costs": costs})
    run.save(args.out / "results.json")


if __name__ == "__main__":
    main()
