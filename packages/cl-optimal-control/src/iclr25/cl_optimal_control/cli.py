"""Command line of ``iclr25 cl-optimal-control``: ``demo``, ``solve``, ``simulate``, ``repro``."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iclr25.utils import cli as ucli
from iclr25.utils.device import add_device_argument
from iclr25.utils.guards import check_size
from iclr25.utils.outputs import add_output
from iclr25.utils.seeding import check_seed

# The commands import JAX when they run, so that `--help` answers without loading it.


DESCRIPTION = """Optimal task-selection protocols for continual learning (Mori, Sarao Mannelli & Mignacco, ICLR 2025).

  demo                          the optimal protocol at gamma = 0.5 vs the heuristics, ODE and a finite-N check
  solve --gamma G --out F.json  solve the control problem (Pontryagin or direct), write the schedule as JSON
  simulate F.json               run a schedule file in finite-N online SGD, compare with the ODE
  simulate --data X.npz         the optimal protocol at your two tasks' measured gamma vs heuristics, in SGD
  repro                         reduced-scale reproduction (forgetting vs gamma, schedules, SGD, digits, casadi)

Schedule file (JSON, written by `solve`): {"schedule": {"u": [[u_old, u_new], ...], "eta_factor": [...]},
"problem": {Problem fields}}; a bare {"u": [[...], ...]} is read with the default problem.
Problem file (JSON): any fields of Problem, e.g. {"gamma": 0.3, "alpha_1": 4, "alpha_f": 20, "n_intervals": 40}.
"""
DEMO_HELP = "the optimal protocol vs the heuristics (at most 60 s)"
REPRO_HELP = "the reduced-scale reproduction (at most 10 min)"


def _problem_from_args(args: argparse.Namespace) -> Any:
    from iclr25.utils.io import DataFileError, read_json  # noqa: PLC0415

    from .model import Problem  # noqa: PLC0415

    base: dict[str, Any] = {}
    if getattr(args, "problem", None) is not None:
        spec = read_json(args.problem, what="problem file")
        if not isinstance(spec, dict):
            raise DataFileError(args.problem, "expected a JSON object with Problem fields")
        base = dict(spec)
    for flag, field in (("gamma", "gamma"), ("alpha_1", "alpha_1"), ("alpha_f", "alpha_f"), ("eta", "eta"),
                        ("eta_max", "eta_max"), ("noise", "noise"), ("n_intervals", "n_intervals"),
                        ("n_hidden", "n_hidden"), ("dt", "dt")):
        value = getattr(args, flag, None)
        if value is not None:
            base[field] = value
    try:
        return Problem.from_dict(base)
    except (TypeError, ValueError) as exc:
        where = f"{args.problem}: " if getattr(args, "problem", None) is not None else ""
        raise ValueError(f"{where}{exc}") from exc


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo  # noqa: PLC0415 - keeps --help fast

    run = run_demo(args.out, seed=check_seed(args.seed), device=args.device)
    print(run.to_markdown())
    return 0


def cmd_repro(args: argparse.Namespace) -> int:
    from .repro import run_repro  # noqa: PLC0415

    run = run_repro(args.out, seed=check_seed(args.seed), quick=args.quick, device=args.device)
    print(run.to_markdown())
    return 0


def cmd_solve(args: argparse.Namespace) -> int:
    """Solve min_u J = mean_t eps_t(alpha_f) on the exact ODEs and write the optimal schedule (JSON). Flags
    override the --problem file, which overrides the defaults of Problem."""
    from iclr25.utils.results import RunResult  # noqa: PLC0415

    problem = _problem_from_args(args)
    run = RunResult.start("iclr25-cl-optimal-control", "solve", seed=None,
                          config={"problem": problem.to_dict(), "method": args.method,
                                  "control_eta": args.control_eta})
    import numpy as np  # noqa: PLC0415

    from iclr25.utils.device import describe_device  # noqa: PLC0415

    from .control import heuristics, solve  # noqa: PLC0415
    from .ode import resolve_device  # noqa: PLC0415
    from .schedule import save_schedule  # noqa: PLC0415

    dev = resolve_device(args.device)
    run.machine["device"] = describe_device(dev)
    res = solve(problem, args.method, control_eta=args.control_eta, device=dev)
    if not (math.isfinite(res.cost) and np.isfinite(res.schedule.u).all()
            and np.isfinite(res.schedule.eta_factor).all()):
        other = "direct" if args.method == "pmp" else "pmp"
        raise ValueError(f"the {args.method} solver ended with a non-finite cost or schedule (J = {res.cost}); "
                         f"nothing written to --out {args.out}: try --method {other} or a smaller --eta")
    heur = heuristics(problem, device=dev)
    best_name, (_, best) = min(heur.items(), key=lambda kv: kv[1][1])
    save_schedule(args.out, res.schedule, problem, cost=res.cost, method=args.method,
                  heuristics={k: J for k, (_, J) in heur.items()}, device=run.machine["device"])
    run.add("optimal cost J", res.cost, peer=best, peer_name=best_name, higher_is_better=False)
    run.add("sequential cost J", heur["sequential"][1], higher_is_better=False)
    run.add("iterations", res.n_iter)
    run.add("stationarity (share of intervals at the H minimiser)", res.stationarity, higher_is_better=True)
    run.add("solve time", res.wall_time_s, unit="s", timing=True)
    print(run.finish().to_markdown())
    print(f"wrote {args.out}")
    return 0


def cmd_simulate(args: argparse.Namespace) -> int:
    """Run the schedule of a JSON file (from `solve`) in online SGD at input dimension N over several seeds;
    write results.json and sgd_vs_ode.png."""
    from iclr25.utils.results import RunResult  # noqa: PLC0415

    from .schedule import load_schedule  # noqa: PLC0415

    if args.data is not None:
        return _simulate_data(args)
    if args.schedule is None:
        raise ValueError("simulate needs a schedule file (from `solve`) or --data X.npz")
    if args.problem is not None:
        raise ValueError("--problem applies to --data; a schedule file carries its own problem")
    if args.n is None:
        args.n = 2000
    if args.n < 8 or args.n > 10 ** 6:
        raise ValueError(f"--n must be in [8, 1000000], got {args.n}")
    if args.seeds < 1 or args.seeds > 10 ** 4:
        raise ValueError(f"--seeds must be in [1, 10000], got {args.seeds}")
    if args.ewc < 0 or not math.isfinite(args.ewc):
        raise ValueError(f"--ewc must be a non-negative number, got {args.ewc}")
    schedule, problem = load_schedule(args.schedule)
    if problem is None:
        from .model import Problem  # noqa: PLC0415

        problem = Problem(n_intervals=schedule.n_intervals)
    try:
        schedule.check(problem)
    except ValueError as exc:
        raise ValueError(f"{args.schedule}: {exc}") from exc
    # rough cost of online SGD: alpha_f * N steps, each O(seeds * K * N) (measured: N = 4000, alpha = 4,
    # 10 seeds in about 5 s), and the students' weights in memory
    steps = problem.alpha_f * args.n
    width = args.seeds * problem.n_hidden * args.n
    check_size(f"--n {args.n} with --seeds {args.seeds} (alpha_f = {problem.alpha_f:g})",
               bytes_needed=8.0 * (4 * width + problem.n_tasks * args.n),
               seconds_needed=steps * (2e-5 + 5e-9 * width), force=args.force)
    run = RunResult.start("iclr25-cl-optimal-control", "simulate", seed=args.seed,
                          config={"schedule_file": str(args.schedule), "n": args.n, "seeds": args.seeds,
                                  "ewc": args.ewc, "problem": problem.to_dict()})
    import numpy as np  # noqa: PLC0415

    from iclr25.utils.device import describe_device  # noqa: PLC0415

    from .ode import integrate, resolve_device  # noqa: PLC0415
    from .sgd import simulate  # noqa: PLC0415

    dev = resolve_device(args.device)
    run.machine["device"] = describe_device(dev) + " (the ODE; SGD is numpy on the CPU)"
    traj = integrate(problem, schedule, device=dev)
    sim = simulate(problem, schedule, n=args.n, n_seeds=args.seeds, seed=args.seed, ewc=args.ewc)
    ode = np.stack([np.interp(sim.alpha, traj.alpha, traj.errors[:, t]) for t in range(problem.n_tasks)], 1)
    final = sim.final_cost
    if not (np.isfinite(sim.mean).all() and np.isfinite(final).all()):
        raise ValueError(f"online SGD diverged at --n {args.n} (non-finite errors); nothing written to --out "
                         f"{args.out}: {args.schedule} may ask for a learning rate too large for this N")
    run.add("SGD final mean error", float(final.mean()), peer=traj.cost, peer_name="ODE", higher_is_better=False)
    run.add("SGD final mean error (std over seeds)", float(final.std()))
    run.add("max |SGD mean - ODE| / peak error", float(np.abs(sim.mean - ode).max() / traj.errors.max()),
            higher_is_better=False)
    for t in range(problem.n_tasks):
        run.add(f"SGD final error task {t + 1}", float(sim.mean[-1, t]), peer=float(traj.errors[-1, t]),
                peer_name="ODE", higher_is_better=False)
    from .figures import plot_sgd_vs_ode  # noqa: PLC0415

    out = Path(args.out)
    fig = plot_sgd_vs_ode(out / "sgd_vs_ode.png", traj, sim, title=f"{schedule.name}, N={args.n}")
    run.add_figure(fig, relative_to=out)
    return run.publish(out)


def _simulate_data(args: argparse.Namespace) -> int:
    """``simulate --data X.npz``: gamma measured on the user's two tasks, the optimal protocol solved on the ODE at
    that gamma, then theory vs sequential vs the best constant mix in online SGD on the data (as for digits)."""
    from iclr25.utils.results import RunResult  # noqa: PLC0415

    if args.schedule is not None:
        raise ValueError("--data solves the protocol at the data's measured gamma: drop the schedule file")
    if args.n is not None:
        raise ValueError("--data fixes N to the number of features: drop --n")
    if args.seeds < 1 or args.seeds > 10 ** 4:
        raise ValueError(f"--seeds must be in [1, 10000], got {args.seeds}")
    if args.ewc != 0:
        raise ValueError("--ewc applies to the teacher-student simulation, not to --data")
    from .userdata import read_tasks  # noqa: PLC0415

    base = _problem_from_args(args)  # --problem FILE: the other Problem fields; gamma is measured
    tasks, used = read_tasks(args.data, seed=args.seed, force=args.force)
    print(f"--data {used}")
    problem = base.replace(gamma=tasks.gamma)
    d = tasks.X_train.shape[1]
    grid = 11
    steps = problem.alpha_f * d * (grid + 2)  # the theory schedule, sequential and the constant-mix grid
    width = args.seeds * problem.n_hidden * d
    check_size(f"--data {args.data} (N = {d}) with --seeds {args.seeds}", bytes_needed=8.0 * 4 * width,
               seconds_needed=steps * (2e-5 + 5e-9 * width), force=args.force)
    run = RunResult.start("iclr25-cl-optimal-control", "simulate", seed=args.seed,
                          config={"data": str(args.data), "n_features": d, "n_train": int(tasks.X_train.shape[0]),
                                  "n_test": int(tasks.X_test.shape[0]), "seeds": args.seeds,
                                  "gamma_measured": tasks.gamma, "gamma_raw": tasks.gamma_raw,
                                  "problem": problem.to_dict(), "constant_mix_grid": grid})
    from iclr25.utils.device import describe_device  # noqa: PLC0415

    from .digits import compare_protocols  # noqa: PLC0415
    from .ode import resolve_device  # noqa: PLC0415
    from .schedule import save_schedule  # noqa: PLC0415

    dev = resolve_device(args.device)
    run.machine["device"] = describe_device(dev) + " (the ODE; SGD is numpy on the CPU)"
    res = compare_protocols(tasks, problem=problem, n_seeds=args.seeds, seed=args.seed, grid=grid, device=dev)
    seq = res.errors["sequential"]
    for k, v in res.errors.items():
        run.add(f"test error {k}", v, higher_is_better=False)
        run.add(f"test error {k} (std over seeds)", res.errors_std[k])
    run.add("theory / sequential test error", res.errors["theory (optimal on the ODE)"] / seq if seq else float("nan"),
            higher_is_better=False)
    run.add("best constant replay fraction", res.best_mix)
    run.add("theory replay share", res.theory_schedule.replay_fraction())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    save_schedule(out / "schedule.json", res.theory_schedule, problem, gamma_measured=tasks.gamma,
                  data=str(args.data))
    print(f"wrote {out / 'schedule.json'} (the optimal protocol at gamma = {tasks.gamma:.3f})")
    return run.publish(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub, d, r = ucli.method_commands("cl-optimal-control", DESCRIPTION, demo=cmd_demo, demo_help=DEMO_HELP,
                                             repro=cmd_repro, repro_help=REPRO_HELP, quick=True, jax_cache="ICLR25_CLOC_JAX_CACHE")

    s = ucli.add_command(sub, "solve", cmd_solve, overwrite=True, help="solve the optimal-control problem, write the schedule as JSON")
    s.add_argument("--problem", type=Path, default=None, help="JSON file with Problem fields (optional)")
    s.add_argument("--gamma", type=float, default=None, help="task similarity in [0, 1] (default 0.5)")
    s.add_argument("--alpha-1", dest="alpha_1", type=float, default=None, help="end of the task-1 phase (4)")
    s.add_argument("--alpha-f", dest="alpha_f", type=float, default=None, help="final time (20)")
    s.add_argument("--eta", type=float, default=None, help="learning rate (3)")
    s.add_argument("--eta-max", dest="eta_max", type=float, default=None, help="bound of a controlled rate (3)")
    s.add_argument("--noise", type=float, default=None, help="label-noise std (0)")
    s.add_argument("--n-intervals", dest="n_intervals", type=int, default=None, help="control intervals (40)")
    s.add_argument("--n-hidden", dest="n_hidden", type=int, default=None, help="student width K (2)")
    s.add_argument("--dt", type=float, default=None, help="Euler step (0.1)")
    s.add_argument("--method", choices=("pmp", "direct"), default="pmp",
                   help="pmp: Pontryagin forward-backward sweep (default); direct: Adam through the ODE")
    s.add_argument("--control-eta", action="store_true", help="also optimise the learning rate")
    add_output(s, "--out", kind="file", default="schedule.json", suffixes=(".json",),
               help="schedule file written (JSON: the schedule, the problem, the costs)")

    m = ucli.add_command(sub, "simulate", cmd_simulate, seed=True, overwrite="write over a previous run in --out", force=True, help="run a schedule file in finite-N online SGD, compare with the ODE")
    m.add_argument("schedule", type=Path, nargs="?", default=None, help="schedule JSON file (from `solve`)")
    m.add_argument("--data", type=Path, default=None,
                   help="your two tasks as .npz (features (n, d); labels (n, 2) of ±1, or (n,) classes with task_a "
                        "and task_b; optional test mask): the protocol is solved at their measured gamma")
    m.add_argument("--n", type=int, default=None, help="input dimension N (default 2000; with --data: d)")
    m.add_argument("--problem", type=Path, default=None,
                   help="with --data: JSON file with Problem fields (alpha_1, alpha_f, eta, ...; gamma is measured)")
    m.add_argument("--seeds", type=int, default=10, help="number of independent runs (default 10)")
    m.add_argument("--ewc", type=float, default=0.0, help="EWC strength on the control window (default 0)")
    add_output(m, "--out", kind="folder", default="results/cl-optimal-control-simulate",
               run_files=("results.json", "sgd_vs_ode.png", "schedule.json"),
               help="folder for results.json and sgd_vs_ode.png (with --data: results.json and schedule.json)")
    for p in (d, r, s, m):  # where JAX computes the ODEs and the solvers (SGD is numpy on the CPU)
        add_device_argument(p)
    return ucli.run_main(parser, argv)
