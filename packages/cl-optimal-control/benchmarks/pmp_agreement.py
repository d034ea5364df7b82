"""Why the Pontryagin sweep and the direct method disagree (claim ``pmp-matches-direct``, a declared fail): a
ladder over the solvers' budgets and an ablation of the Pontryagin stopping rule, on the default problem (gamma =
0.5, window 16) at the calibration seeds 100-109.

Per seed: the shipped Pontryagin solution (``solve(p, "pmp")``: the damped sweep, then the extended method of
successive approximations, which stops after 5 accepted steps that move ``u`` by less than 1e-4 or lower ``J`` by
less than ``tol``), the same solution continued by the extended method with that small-step stop removed (it
stops only when no step along ``-H`` lowers ``J``) for budgets of 250, 1000 and 4000 more iterations, and the
direct method (Adam) at 500 steps (shipped) and 2000 steps. Gaps are ``J / J_direct(500) - 1``. Writes
``pmp_agreement.json`` (per seed) and ``pmp_agreement.md`` (the table).

Run: ``python benchmarks/pmp_agreement.py [--seeds 100,...,109] [--out DIR]``.
"""

import json
import statistics

import numpy as np

from iclr25.cl_optimal_control import Problem, solve
from iclr25.cl_optimal_control.control import _project_simplex, _Setup, _stationarity, evaluate
from iclr25.cl_optimal_control.schedule import Schedule
from iclr25.utils.bench import benchmark_parser
from iclr25.utils.io import atomic_write

BUDGETS = (250, 1000, 4000)  # extra iterations of the extended method after the shipped stop


def continue_emsa(setup: _Setup, u: np.ndarray, eta_f: np.ndarray, budgets: tuple[int, ...]
                  ) -> dict[int, tuple[np.ndarray, int]]:
    """The extended method of successive approximations of :func:`iclr25.cl_optimal_control.control._pmp`
    (the same step and acceptance rule), without the small-step stop: the schedule after each budget."""
    J, A, B = setup.hamiltonian(u, eta_f)
    sig, it, out = 1.0, 0, {}
    for budget in budgets:
        while it < budget and sig >= 1e-8:
            it += 1
            e = (setup.problem.eta * eta_f)[:, None]
            H = e * A + e ** 2 * B
            spread = float(np.max(H.max(axis=1) - H.min(axis=1)))
            if spread <= 0:
                break
            u_try = _project_simplex(u - (sig / spread) * H)
            J_try, A_try, B_try = setup.hamiltonian(u_try, eta_f)
            if J_try < J:
                u, J, A, B = u_try, J_try, A_try, B_try
                sig = min(1.5 * sig, 1e3)
            else:
                sig *= 0.5
        out[budget] = (u.copy(), it)
    return out


def main() -> None:
    ap = benchmark_parser(__doc__.split("\n\n")[0], out="results/cl-optimal-control-agreement")
    ap.add_argument("--seeds", default=",".join(map(str, range(100, 110))))
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    p = Problem()
    rows = []
    for seed in seeds:
        pmp = solve(p, "pmp", seed=seed, show_progress=False)
        d500 = solve(p, "direct", seed=seed, show_progress=False)
        d2000 = solve(p, "direct", seed=seed, show_progress=False, max_iter=2000)
        ref = d500.cost
        row = {"seed": seed, "J direct 500": ref, "J direct 2000 / J direct 500 - 1": d2000.cost / ref - 1,
               "direct 2000 iterations": d2000.n_iter, "J pmp / J direct 500 - 1": pmp.cost / ref - 1,
               "pmp iterations": pmp.n_iter, "pmp stationarity": pmp.stationarity,
               "|J_PMP - J_direct| / min (the claim)": abs(pmp.cost - ref) / min(pmp.cost, ref)}
        setup = _Setup(p, seed, None)
        eta_f = pmp.schedule.eta_factor
        for budget, (u, it) in continue_emsa(setup, pmp.schedule.u, eta_f, BUDGETS).items():
            J = evaluate(p, Schedule(u=u / u.sum(axis=1, keepdims=True), eta_factor=eta_f), seed=seed)
            row[f"continued {budget}: J / J direct 500 - 1"] = J / ref - 1
            row[f"continued {budget}: stationarity"] = _stationarity(setup, u, eta_f, False)
            row[f"continued {budget}: iterations run"] = it
        rows.append(row)
        print(json.dumps(row), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out / "pmp_agreement.json") as f:  # a run cut short leaves no half-written table
        f.write(json.dumps(rows, indent=1) + "\n")
    seed_list = ", ".join(map(str, seeds))
    lines = [f"Seeds {seed_list}; gap = J / J_direct(500 Adam steps) - 1 (negative: below the direct method's J); "
             "stationarity = share of intervals minimising the Hamiltonian.", "",
             "| solver (budget) | gap per seed | mean gap | seeds within 1 % | mean stationarity |",
             "|---|---|---|---|---|"]

    def line(name: str, gaps: list[float], stat: list[float] | None) -> str:
        return (f"| {name} | {', '.join(format(100 * g, '+.2f') for g in gaps)} % | "
                f"{100 * statistics.fmean(gaps):+.2f} % | {sum(abs(g) < 0.01 for g in gaps)} of {len(gaps)} | "
                f"{statistics.fmean(stat):.2f} |" if stat else
                f"| {name} | {', '.join(format(100 * g, '+.2f') for g in gaps)} % | "
                f"{100 * statistics.fmean(gaps):+.2f} % | {sum(abs(g) < 0.01 for g in gaps)} of {len(gaps)} | – |")

    lines.append(line("Pontryagin, shipped stop", [r["J pmp / J direct 500 - 1"] for r in rows],
                      [r["pmp stationarity"] for r in rows]))
    for b in BUDGETS:
        lines.append(line(f"Pontryagin + {b} iterations without the small-step stop",
                          [r[f"continued {b}: J / J direct 500 - 1"] for r in rows],
                          [r[f"continued {b}: stationarity"] for r in rows]))
    lines.append(line("direct, 2000 Adam steps", [r["J direct 2000 / J direct 500 - 1"] for r in rows], None))
    with atomic_write(args.out / "pmp_agreement.md") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
