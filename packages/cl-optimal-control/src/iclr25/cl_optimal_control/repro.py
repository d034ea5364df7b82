"""``iclr25 cl-optimal-control repro``: the reduced-scale reproduction behind the README "Results".

1. Forgetting ``eps_1(alpha_f) - eps_1(alpha_1)`` against gamma under sequential training, for control windows
   of length 2, 4, 8 and 16 (Maslow's hammer: maximum inside (0, 1)), and under the optimal protocol.
2. Optimal protocols for gamma = 0.2, 0.5, 0.8 (figure): cost against the tuned heuristics, Pontryagin against
   the direct method, with and without learning-rate control; a ladder over the window length.
3. Finite-N: the optimal protocol and the heuristics in online SGD (N = 2000, 20 seeds); ODE-SGD gap vs N.
4. Digits: the theory schedule against sequential training and the best constant mix (10 seeds).
5. Peer: CasADi + IPOPT on the same direct problem: cost and solve time against ours.
6. The claims registry decided over seeds 0-4 (``--quick``: the test rung, seeds 0-2): ``OUT/claims.json``.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.device import describe_device, device_scope
from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult

from .control import heuristics, solve
from .figures import plot_forgetting, plot_schedules, plot_sgd_vs_ode
from .model import Problem, initial_state
from .ode import integrate, integrate_gammas, resolve_device
from .schedule import sequential
from .sgd import simulate


def _log(msg: str) -> None:
    print(f"[repro {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def run_repro(out: str | os.PathLike[str], *, seed: int = 0, quick: bool = False,
              device: str | None = None) -> RunResult:
    """Run the reduced-scale reproduction (parts 1-6 of the module doc) into ``out``: the figures,
    ``tables.json``, ``tables.md``, ``claims.json`` and ``results.json``. ``quick``: a much smaller run.
    ``device``: where JAX computes the ODEs and solvers (``None``: ``$ICLR25_DEVICE``, else ``auto``); SGD and
    the digits' training are numpy on the CPU."""
    dev = resolve_device(device)  # an absent device fails here, before any work
    with device_scope(device):
        return _repro(Path(out), seed, quick, dev)


def _repro(out: Path, seed: int, quick: bool, dev: object) -> RunResult:
    run = RunResult.start("iclr25-cl-optimal-control", "repro", seed=seed, config={"quick": quick})
    run.machine["device"] = describe_device(dev)
    tables: dict[str, Any] = {}
    base = Problem()
    _forgetting_vs_gamma(run, tables, out, base, seed=seed, quick=quick)
    solved = _optimal_schedules(run, tables, out, base, seed=seed)
    _window_ladder(tables, base, seed=seed, quick=quick)
    _finite_n_sgd(run, tables, out, solved[0.5], seed=seed, quick=quick)
    _ode_vs_sgd(run, tables, base, seed=seed, quick=quick)
    _digits(run, tables, seed=seed, quick=quick)
    _casadi_peer(run, tables, solved[0.5][0], seed=seed)
    _claims(tables, out, quick=quick)
    with atomic_write(out / "tables.json") as f:
        f.write(json.dumps(tables, indent=1) + "\n")
    with atomic_write(out / "tables.md") as f:
        f.write(_markdown(tables))
    run.finish().save(out / "results.json")
    return run


def _forgetting_vs_gamma(run: RunResult, tables: dict[str, Any], out: Path, base: Problem, *, seed: int,
                         quick: bool) -> None:
    """Part 1: forgetting against gamma, sequential training for four window lengths and the optimal protocol."""
    _log("forgetting vs gamma")
    gammas = np.linspace(0.0, 1.0, 6 if quick else 11)
    forg: dict[str, list[float]] = {}
    for L in (2.0, 4.0, 8.0, 16.0):
        p = base.replace(alpha_f=base.alpha_1 + L, n_intervals=10)
        E = integrate_gammas(p, sequential(p), gammas, seed=seed)
        forg[f"sequential, window {L:g}"] = (E[:, -1, 0] - E[:, p.n_first_steps, 0]).tolist()
    opt_forg = []
    for g in gammas:
        r = solve(base.replace(gamma=float(g)), "pmp", seed=seed, show_progress=False, max_iter=150 if quick else 400)
        i1 = base.n_first_steps
        opt_forg.append(float(r.trajectory.errors[-1, 0] - r.trajectory.errors[i1, 0]))
    forg["optimal, window 16"] = opt_forg
    tables["forgetting"] = {"gamma": gammas.tolist(), **forg}
    run.add_figure(plot_forgetting(out / "forgetting_vs_gamma.png", gammas, forg), relative_to=out)
    f4 = np.asarray(forg["sequential, window 4"])
    k = int(np.argmax(f4))
    run.add("forgetting (seq., window 4): argmax gamma", float(gammas[k]))
    run.add("forgetting (seq., window 4): max / max(endpoints)", float(f4[k] / max(f4[0], f4[-1])))


def _optimal_schedules(run: RunResult, tables: dict[str, Any], out: Path, base: Problem, *,
                       seed: int) -> dict[float, Any]:
    """Part 2: optimal protocols for gamma = 0.2, 0.5, 0.8 against the tuned heuristics (PMP, direct, with
    learning-rate control). Returns ``{gamma: (problem, pmp result, heuristics, best schedule)}``."""
    _log("optimal schedules")
    sched_rows, fig_items = [], []
    solved: dict[float, Any] = {}
    for g in (0.2, 0.5, 0.8):
        p = base.replace(gamma=g)
        heur = heuristics(p, seed=seed)
        best_name, (best_s, best_J) = min(heur.items(), key=lambda kv: kv[1][1])
        pmp = solve(p, "pmp", seed=seed, show_progress=False)
        direct = solve(p, "direct", seed=seed, show_progress=False)
        pmp_eta = solve(p, "pmp", control_eta=True, seed=seed, show_progress=False)
        solved[g] = (p, pmp, heur, best_s)
        seq = integrate(p, sequential(p), seed=seed)
        fig_items.append((f"gamma = {g}", p, pmp, seq))
        u = pmp.schedule.u[:, 0]
        n = len(u)
        sched_rows.append({
            "gamma": g, "J sequential": heur["sequential"][1], "J best constant mix": heur["best constant mix"][1],
            "best mix": heur["best constant mix"][0].name, "J best replay at end": heur["best replay at end"][1],
            "J PMP": pmp.cost, "J direct": direct.cost, "J PMP (u and eta)": pmp_eta.cost,
            "PMP/best heuristic": pmp.cost / best_J, "(u, eta)/best heuristic": pmp_eta.cost / best_J,
            "|PMP-direct|/J": abs(pmp.cost - direct.cost) / min(pmp.cost, direct.cost),
            "stationarity PMP": pmp.stationarity, "focus length (u_1<0.05 at start, share of window)":
                float(np.argmax(u > 0.05) / n), "mean u_1 (last 10%)": float(u[-max(1, n // 10):].mean()),
            "PMP s": pmp.wall_time_s, "direct s": direct.wall_time_s, "PMP iters": pmp.n_iter,
        })
        run.add(f"gamma={g}: optimal J / best heuristic J", pmp.cost / best_J, higher_is_better=False)
        run.add(f"gamma={g}: |J_PMP - J_direct| / J", sched_rows[-1]["|PMP-direct|/J"], higher_is_better=False)
    tables["schedules"] = sched_rows
    run.add_figure(plot_schedules(out / "optimal_schedules.png", fig_items), relative_to=out)
    return solved


def _window_ladder(tables: dict[str, Any], base: Problem, *, seed: int, quick: bool) -> None:
    """Part 2, ladder: the 0.9 claim across the window length (and with learning-rate control)."""
    _log("window ladder")
    ladder = []
    for L in (4.0, 8.0, 16.0) if not quick else (4.0, 16.0):
        p = base.replace(alpha_f=base.alpha_1 + L, n_intervals=min(40, int(L / base.dt)))
        heur = heuristics(p, seed=seed)
        best_J = min(J for _, J in heur.values())
        r = solve(p, "pmp", seed=seed, show_progress=False)
        re = solve(p, "pmp", control_eta=True, seed=seed, show_progress=False)
        ladder.append({"window": L, "J seq": heur["sequential"][1], "J best heuristic": best_J, "J opt (u)": r.cost,
                       "opt(u)/best": r.cost / best_J, "J opt (u, eta)": re.cost, "opt(u,eta)/best": re.cost / best_J})
    tables["window ladder"] = ladder


def _finite_n_sgd(run: RunResult, tables: dict[str, Any], out: Path, solved_05: tuple[Any, ...], *, seed: int,
                  quick: bool) -> None:
    """Part 3: the optimal protocol and the heuristics of gamma = 0.5 in online SGD at finite N."""
    _log("finite-N SGD")
    p, pmp, heur, _ = solved_05
    n_sgd, s_sgd = (500, 4) if quick else (2000, 20)
    sgd_rows = {}
    sims = {}
    for name, sched in (("optimal", pmp.schedule), ("best constant mix", heur["best constant mix"][0]),
                        ("best replay at end", heur["best replay at end"][0]), ("sequential", heur["sequential"][0])):
        sim = simulate(p, sched, n=n_sgd, n_seeds=s_sgd, seed=seed, record_every=0.5, x0=initial_state(p, seed=seed))
        sims[name] = sim
        fc = sim.final_cost
        sgd_rows[name] = {"J SGD mean": float(fc.mean()), "J SGD sem": float(fc.std() / np.sqrt(len(fc))),
                          "J ODE": integrate(p, sched, seed=seed).cost}
    best_h = min(v["J SGD mean"] for k, v in sgd_rows.items() if k != "optimal")
    run.add(f"SGD N={n_sgd}: optimal J / best heuristic J", sgd_rows["optimal"]["J SGD mean"] / best_h,
            higher_is_better=False)
    tables["sgd"] = {"n": n_sgd, "seeds": s_sgd, "rows": sgd_rows}
    run.add_figure(plot_sgd_vs_ode(out / "sgd_vs_ode_optimal.png", pmp.trajectory, sims["optimal"],
                                   title=f"optimal, gamma=0.5, N={n_sgd}, {s_sgd} seeds"), relative_to=out)


def _ode_vs_sgd(run: RunResult, tables: dict[str, Any], base: Problem, *, seed: int, quick: bool) -> None:
    """Part 3, gap: mean SGD against the ODE for a constant mix as N grows."""
    gaps = {}
    q = base.replace(alpha_1=2.0, alpha_f=4.0, dt=0.01, n_intervals=20)
    from .schedule import constant_mix  # noqa: PLC0415

    cm = constant_mix(q, 0.3)
    tr = integrate(q, cm, method="rk4", seed=seed)
    for n in (500, 1000, 2000) if quick else (500, 1000, 2000, 4000):
        sim = simulate(q, cm, n=n, n_seeds=10, seed=seed + 1, show_progress=False, x0=initial_state(q, seed=seed))
        ode = np.stack([np.interp(sim.alpha, tr.alpha, tr.errors[:, t]) for t in range(2)], 1)
        gaps[n] = {"max |mean SGD - ODE| / peak": float(np.abs(sim.mean - ode).max() / tr.errors.max()),
                   "per-run RMS gap": float(np.sqrt(np.mean((sim.errors - ode[None]) ** 2)))}
    tables["ode vs sgd"] = gaps
    run.add("ODE vs SGD N=2000: max gap / peak", gaps[2000]["max |mean SGD - ODE| / peak"], higher_is_better=False)


def _digits(run: RunResult, tables: dict[str, Any], *, seed: int, quick: bool) -> None:
    """Part 4: the theory schedule on digits against sequential training and the best constant mix."""
    _log("digits")
    from .digits import run_digits  # noqa: PLC0415

    dig_rows = []
    for shared in ((3,) if quick else (2, 3, 4)):
        d = run_digits(shared, n_seeds=4 if quick else 10, seed=seed)
        dig_rows.append({"shared classes": shared, "gamma (raw)": d.gamma_raw, "gamma": d.gamma,
                         **{f"test error {k}": v for k, v in d.errors.items()},
                         **{f"std {k}": v for k, v in d.errors_std.items()}, "best mix": d.best_mix,
                         "theory replay share": d.theory_schedule.replay_fraction()})
        run.add(f"digits shared={shared}: theory / sequential error",
                d.errors["theory (optimal on the ODE)"] / d.errors["sequential"], higher_is_better=False)
    tables["digits"] = dig_rows


def _casadi_peer(run: RunResult, tables: dict[str, Any], p: Problem, *, seed: int) -> None:
    """Part 5: CasADi + IPOPT on the same direct problem (skipped, with the reason, when not installed)."""
    _log("casadi")
    try:
        from .casadi_peer import solve_casadi  # noqa: PLC0415

        cas = solve_casadi(p, seed=seed)
        t0 = time.perf_counter()
        ours = solve(p, "pmp", seed=seed, show_progress=False)     # warm: compiled above
        t_pmp = time.perf_counter() - t0
        t0 = time.perf_counter()
        ours_d = solve(p, "direct", seed=seed, show_progress=False)
        t_dir = time.perf_counter() - t0
        import casadi  # noqa: PLC0415

        tables["casadi"] = {"casadi": casadi.__version__, "status": cas.status, "J casadi": cas.cost,
                            "J casadi re-evaluated on our ODE": integrate(p, cas.schedule, seed=seed).cost,
                            "J PMP": ours.cost, "J direct": ours_d.cost, "casadi build s": cas.build_time_s,
                            "casadi IPOPT s": cas.solve_time_s, "PMP s (warm)": t_pmp, "direct s (warm)": t_dir}
        run.add("J PMP vs casadi/IPOPT", ours.cost, peer=cas.cost, peer_name=f"casadi {casadi.__version__}",
                higher_is_better=False)
        run.add("PMP solve time (warm)", t_pmp, peer=cas.solve_time_s + cas.build_time_s,
                peer_name="casadi build+solve", unit="s", timing=True)
    except ImportError as exc:
        tables["casadi"] = {"skipped": str(exc)}


def _claims(tables: dict[str, Any], out: Path, *, quick: bool) -> None:
    """Part 6: the claims registry (iclr25.cl_optimal_control.claims) decided over seeds: ``OUT/claims.json``,
    the README's claims table."""
    rung = "test" if quick else "repro"
    _log(f"claims over seeds (rung {rung!r})")
    from .claims import REGISTRY  # noqa: PLC0415

    report = REGISTRY.run(rung, command="iclr25 cl-optimal-control repro" + (" --quick" if quick else ""))
    report.save(out)
    tables["claims"] = {"rung": rung, "explained": [r.explain() for r in report.results]}


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _table(rows: list[dict[str, Any]]) -> str:
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(_fmt(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _markdown(t: dict[str, Any]) -> str:
    parts = []
    fg = t["forgetting"]
    rows = [{"gamma": g, **{k: fg[k][i] for k in fg if k != "gamma"}} for i, g in enumerate(fg["gamma"])]
    parts.append("### Forgetting vs gamma\n\n" + _table(rows))
    parts.append("### Optimal schedules\n\n" + _table(t["schedules"]))
    parts.append("### Window ladder (gamma = 0.5)\n\n" + _table(t["window ladder"]))
    parts.append(f"### Finite-N SGD (N = {t['sgd']['n']}, {t['sgd']['seeds']} seeds, gamma = 0.5)\n\n"
                 + _table([{"protocol": k, **v} for k, v in t["sgd"]["rows"].items()]))
    parts.append("### ODE vs SGD gap\n\n" + _table([{"N": k, **v} for k, v in t["ode vs sgd"].items()]))
    parts.append("### Digits\n\n" + _table(t["digits"]))
    parts.append("### CasADi peer\n\n" + _table([t["casadi"]]))
    if "claims" in t:
        parts.append(f"### Claims over seeds (claims.json, rung `{t['claims']['rung']}`)\n\n```\n"
                     + "\n".join(t["claims"]["explained"]) + "\n```\n")
    return "\n".join(parts)
