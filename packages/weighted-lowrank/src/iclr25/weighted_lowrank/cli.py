"""Command line of ``iclr25 weighted-lowrank``: ``demo``, ``fit`` and ``repro``."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from iclr25.utils.cli import add_run_command, method_parser, run_main
from iclr25.utils.io import atomic_write, save_npz
from iclr25.utils.plotting import savefig, subplots
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import seed_everything

from . import experiments
from .altmin import INITS, weighted_low_rank
from .datasets import planted
from .matrix_io import read_matrix
from .regression import REFINEMENTS, SOLVERS
from .sketch import SKETCHES

PACKAGE = "iclr25-weighted-lowrank"


def _plot_errors(ax, curves: dict[str, list[float]], title: str, *, ylabel: bool = True) -> None:
    from matplotlib.ticker import MaxNLocator

    for label, errs in curves.items():
        ax.semilogy(range(1, len(errs) + 1), np.maximum(errs, 1e-17), marker="o", ms=3, label=label)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # rounds are whole numbers: no 2.5 / 7.5 ticks
    ax.set_xlabel("round")
    if ylabel:
        ax.set_ylabel("recovery error ‖M* − XYᵀ‖_F / ‖M*‖_F")
    ax.set_title(title, fontsize=9)
    ax.legend()


# ------------------------------------------------------------------------------------------------ demo
def demo(args: argparse.Namespace) -> int:
    seed_everything(args.seed)
    n, d, k, n_iter = 300, 240, 6, 15
    config = {"n": n, "d": d, "k": k, "n_iter": n_iter, "weights": "dense U(0.5,1.5)", "noise": 1e-3,
              "sketch": "countsketch", "sketch_size": min(8 * k, d)}
    run = RunResult.start(PACKAGE, "demo", seed=args.seed, config=config)
    curves: dict[str, dict[str, list[float]]] = {}
    finals: dict[str, dict[str, float]] = {}
    for noise in (0.0, 1e-3):
        prob = planted(n, d, k, noise=noise, seed=args.seed)
        for solver in ("exact", "sketch"):
            res = weighted_low_rank(prob.M, prob.W, k, solver=solver, n_iter=n_iter, truth=prob.truth,
                                    seed=args.seed)
            curves.setdefault(f"noise {noise:g}", {})[solver] = res.recovery_errors.tolist()
            finals[f"{solver} {noise:g}"] = {"error": float(res.recovery_errors[-1]),
                                             "first": float(res.recovery_errors[0]),
                                             "sec": float(np.median(res.round_seconds))}
    e0, s0 = finals["exact 0"], finals["sketch 0"]
    e1, s1 = finals["exact 0.001"], finals["sketch 0.001"]
    # the headline: the sketched alternating minimisation recovers the planted matrix, against the trivial
    # reference of the rank-k SVD of W o M (LLR16's starting point, no alternating minimisation)
    U, sv, Vt = np.linalg.svd(prob.W * prob.M, full_matrices=False)
    svd_err = float(np.linalg.norm(prob.truth - (U[:, :k] * sv[:k]) @ Vt[:k]) / np.linalg.norm(prob.truth))
    run.add("noisy: final recovery error, sketch solver (vs SVD of W o M)", s1["error"], peer=svd_err,
            peer_name="rank-k SVD of W o M (no alternating minimisation)", higher_is_better=False, headline=True)
    run.add("noisy: final recovery error, sketch solver", s1["error"], peer=e1["error"],
            peer_name="exact solver (LLR16)", higher_is_better=False)
    run.add("noiseless: final recovery error, sketch solver", s0["error"], peer=e0["error"],
            peer_name="exact solver (LLR16)", higher_is_better=False)
    run.add("noiseless: orders of magnitude of error decay, sketch", math.log10(s0["first"] / max(s0["error"], 1e-300)),
            peer=math.log10(e0["first"] / max(e0["error"], 1e-300)), peer_name="exact solver (LLR16)",
            higher_is_better=True)
    run.add("noisy: seconds per round, sketch", s1["sec"], peer=e1["sec"], peer_name="exact solver (LLR16)",
            unit="s", higher_is_better=False, timing=True)
    fig, axes = subplots(1, 2, size=(4.2, 3.3))
    for i, (ax, (title, c)) in enumerate(zip(axes, curves.items(), strict=True)):
        _plot_errors(ax, c, f"n={n}, d={d}, k={k}, dense W, {title}", ylabel=i == 0)
    run.add_figure(savefig(fig, args.out / "error_per_round.png"), relative_to=args.out)
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    return 0


# ------------------------------------------------------------------------------------------------- fit
def _check_fit_options(args: argparse.Namespace) -> None:
    """Every option of ``fit``, before the files are read; messages name the flag."""
    if not str(args.out).lower().endswith(".npz"):
        raise ValueError(f"--out must name a .npz file, got {str(args.out)!r}")
    if not args.out.parent.is_dir():
        raise FileNotFoundError(f"--out {str(args.out)!r}: no such folder {str(args.out.parent)!r}")
    for flag, value, low in (("--k", args.k, 1), ("--n-iter", args.n_iter, 1), ("--refine-steps", args.refine_steps, 0),
                             ("--seed", args.seed, 0)):
        if value < low:
            raise ValueError(f"{flag} must be an integer >= {low}, got {value}")
    if args.sketch_size is not None and args.sketch_size < 1:
        raise ValueError(f"--sketch-size must be an integer >= 1, got {args.sketch_size}")
    for flag, value in (("--tol", args.tol), ("--reg", args.reg)):
        if not (math.isfinite(value) and value >= 0):
            raise ValueError(f"{flag} must be a finite number >= 0, got {value}")


def fit(args: argparse.Namespace) -> int:
    _check_fit_options(args)
    M = read_matrix(args.M, "M")
    W = None if args.W is None else read_matrix(args.W, "W")
    n, d = M.shape
    if args.k > min(n, d):
        raise ValueError(f"--k must satisfy 1 <= k <= min(n, d) = {min(n, d)} for M of shape {M.shape} "
                         f"({args.M}), got {args.k}")
    if W is not None and W.shape != M.shape:
        raise ValueError(f"{args.W}: W must have the shape of M {M.shape}, got {W.shape}")
    res = weighted_low_rank(M, W, args.k, solver=args.solver, n_iter=args.n_iter, tol=args.tol, sketch=args.sketch,
                            sketch_size=args.sketch_size, refine=args.refine, refine_steps=args.refine_steps,
                            init=args.init, reg=args.reg, seed=args.seed)
    save_npz(args.out, X=res.X, Y=res.Y, objective=res.objectives,
             relative_residual=np.array([h.relative_residual for h in res.history]), seconds=res.round_seconds)
    last = res.history[-1]
    print(f"rank {args.k}, {res.n_iter} rounds ({args.solver}): relative weighted residual "
          f"{last.relative_residual:.4g}; wrote X ({res.X.shape}), Y ({res.Y.shape}) to {args.out}")
    return 0


# ----------------------------------------------------------------------------------------------- repro
def repro(args: argparse.Namespace) -> int:
    seed_everything(args.seed)
    out: Path = args.out
    n_scale = 1000 if args.quick else 4000
    ks = (8, 16, 32) if args.quick else (16, 32, 64, 128)
    config = {"convergence": "n=d=1000, k=16, 15 rounds", "scaling": f"n=d={n_scale}, k in {list(ks)}",
              "masks": "n=d=1000, k=10, p=0.3 and 0.1", "robustness": "n=d=600, k=8, refine=gd"}
    run = RunResult.start(PACKAGE, "repro", seed=args.seed, config=config)
    lines: list[str] = []

    # 1-2. geometric convergence and parity
    conv = {
        "dense, noiseless": experiments.convergence(1000, 16, noise=0.0, seed=args.seed),
        "dense, noise 1e-3": experiments.convergence(1000, 16, noise=1e-3, seed=args.seed),
        "mask p=0.3, noise 1e-3": experiments.convergence(1000, 16, weights="mask", noise=1e-3, seed=args.seed),
    }
    lines += ["| problem (n=d=1000, k=16) | exact: error r1 → r15 | sketch: error r1 → r15 | sketch / exact |",
              "|---|---|---|---|"]
    for name, c in conv.items():
        e, s = c["exact"]["errors"], c["sketch"]["errors"]
        lines.append(f"| {name} | {e[0]:.2e} → {e[-1]:.2e} | {s[0]:.2e} → {s[-1]:.2e} | {s[-1] / e[-1]:.3f} |")
        run.add(f"{name}: final error sketch", s[-1], peer=e[-1], peer_name="exact", higher_is_better=False)
    # 3. robustness to the solver tolerance
    rob = experiments.robustness(seed=args.seed)
    lines += ["", "| solver tolerance ε₀ (refine=gd) | final error | abs(error − exact) | refinement steps |",
              "|---|---|---|---|"]
    for tol, r in rob["tol"].items():
        lines.append(f"| {tol:g} | {r['error']:.4e} | {abs(r['error'] - rob['exact']):.2e} | {r['steps']} |")
        run.add(f"tol {tol:g}: |error - exact|", abs(r["error"] - rob["exact"]), higher_is_better=False)
    lines.append(f"| exact solver | {rob['exact']:.4e} | 0 | 0 |")
    # 4. scaling in k
    sc = experiments.scaling(n_scale, ks, rounds=1, seed=args.seed)
    lines += ["", f"| k (n=d={n_scale}) | exact s/round | sketch s/round | pcg s/round | speed-up sketch | "
                  "GFLOP exact | GFLOP sketch | steps sketch | error exact | error sketch |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in sc["rows"]:
        e, s, pc = r["exact"], r["sketch"], r["pcg"]
        lines.append(f"| {r['k']} | {e['seconds']:.3f} | {s['seconds']:.3f} | {pc['seconds']:.3f} | "
                     f"{e['seconds'] / s['seconds']:.2f}× | {e['gflop']:.1f} | {s['gflop']:.1f} | {s['steps']} | "
                     f"{e['error']:.3e} | {s['error']:.3e} |")
        run.add(f"k={r['k']}: seconds per round, sketch", s["seconds"], peer=e["seconds"], peer_name="exact",
                unit="s", higher_is_better=False, timing=True)
    lines.append(f"\nlog-log slope in k: exact {sc['slope_exact']:.2f}, sketch {sc['slope_sketch']:.2f}, "
                 f"pcg {sc['slope_pcg']:.2f} (difference exact − sketch {sc['slope_exact'] - sc['slope_sketch']:.2f})")
    run.add("log-log slope in k, sketch", sc["slope_sketch"], peer=sc["slope_exact"], peer_name="exact",
            higher_is_better=False, timing=True)
    # 5. masks against the peers
    lines += ["", "| mask (n=d=1000, k=10) | sketch error / s | exact error / s | SVD(W∘M) error / s | "
                  "SoftImpute error / s |", "|---|---|---|---|---|"]
    notes = []
    for p in (0.3, 0.1):
        mk = experiments.masks(1000, 10, p=p, seed=args.seed, peer_python=args.peer_python)
        si = mk["softimpute"]
        si_txt = "–" if si["error"] is None else f"{si['error']:.3e} / {si['seconds']:.2f}"
        notes.append(si["note"])
        lines.append(f"| p={p} | {mk['sketch']['error']:.3e} / {mk['sketch']['seconds']:.2f} | "
                     f"{mk['exact']['error']:.3e} / {mk['exact']['seconds']:.2f} | "
                     f"{mk['svd']['error']:.3e} / {mk['svd']['seconds']:.2f} | {si_txt} |")
        run.add(f"mask p={p}: error sketch", mk["sketch"]["error"], peer=si["error"], peer_name="SoftImpute",
                higher_is_better=False)
    lines.append(f"\nSoftImpute: {notes[0]}")

    fig, axes = subplots(1, 4, size=(3.6, 3.2))
    for i, (ax, (name, c)) in enumerate(zip(axes[:3], conv.items(), strict=True)):
        _plot_errors(ax, {s: c[s]["errors"] for s in ("exact", "sketch")}, f"n=d=1000, k=16, {name}",
                     ylabel=i == 0)
    ax = axes[3]
    kk = [r["k"] for r in sc["rows"]]
    for solver in ("exact", "sketch", "pcg"):
        ax.loglog(kk, [r[solver]["seconds"] for r in sc["rows"]], marker="o", label=solver)
    ax.set_xticks(kk, [str(x) for x in kk])
    ax.minorticks_off()
    ax.set_xlabel("k")
    ax.set_ylabel("seconds per round")
    ax.set_title(f"n=d={n_scale}, dense W", fontsize=9)
    ax.legend()
    run.add_figure(savefig(fig, out / "repro.png"), relative_to=out)
    table = "\n".join(lines)
    run.notes = table
    run.finish().save(out / "results.json")
    with atomic_write(out / "table.md") as fh:
        fh.write(table + "\n")
    print(table)
    from .claims import REGISTRY  # noqa: PLC0415

    report = REGISTRY.run("repro", command="iclr25 weighted-lowrank repro")
    report.save(out / "claims.json")
    for r in report.results:
        print(f"claim {r.claim.id}: {r.verdict} (expected: {r.claim.expect})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub = method_parser(
        "weighted-lowrank",
        "Weighted low-rank approximation min ‖W∘(M − XYᵀ)‖_F by robust alternating minimisation with the "
        "sketched high-accuracy regression solver (Song, Ye, Yin, Zhang, ICLR 2025).")
    add_run_command(sub, "demo", demo, help="both solvers on a planted problem (a few seconds)",
                    default_out="results/weighted-lowrank")
    f = sub.add_parser("fit", help="fit M ≈ X Yᵀ under weights W from your own files",
                       description="Fit a rank-k weighted low-rank approximation. M: .npy (dense; NaN allowed "
                                   "where W = 0). W: .npy (dense, non-negative) or .npz (scipy.sparse.save_npz, "
                                   "e.g. a 0/1 mask); omit for all ones. Writes X (n×k, orthonormal), Y (d×k), "
                                   "and the per-round objective to the .npz named by --out.")
    f.add_argument("M", type=Path, help="data matrix, .npy (or .npz with one array)")
    f.add_argument("W", type=Path, nargs="?", default=None, help="weights, .npy or sparse .npz (default: all ones)")
    f.add_argument("--k", type=int, required=True, help="target rank")
    f.add_argument("--out", type=Path, default=Path("factors.npz"), help="output .npz (default: factors.npz)")
    f.add_argument("--solver", choices=SOLVERS, default="sketch", help="row-regression solver (default: sketch)")
    f.add_argument("--sketch", choices=SKETCHES, default="countsketch", help="sketch (default: countsketch)")
    f.add_argument("--sketch-size", type=int, default=None, help="sketch rows s (default: 8k, at most the row length)")
    f.add_argument("--refine", choices=REFINEMENTS, default="cg", help="refinement iteration (default: cg)")
    f.add_argument("--refine-steps", type=int, default=30, help="most refinement steps (default: 30)")
    f.add_argument("--tol", type=float, default=1e-6, help="solver tolerance (default: 1e-6)")
    f.add_argument("--n-iter", type=int, default=15, help="alternating rounds (default: 15)")
    f.add_argument("--init", choices=INITS, default="svd", help="initialisation (default: svd)")
    f.add_argument("--reg", type=float, default=0.0, help="ridge parameter (default: 0)")
    f.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    f.set_defaults(func=fit)
    r = add_run_command(sub, "repro", repro, help="the reduced-scale reproduction (a few minutes)",
                        default_out="results/weighted-lowrank-repro")
    r.add_argument("--quick", action="store_true", help="small scaling sweep (n=1000, k<=32) for a smoke test")
    r.add_argument("--peer-python", default=None,
                   help="a Python interpreter with fancyimpute installed, for the SoftImpute peer "
                        "(default: this one, or $ICLR25_FANCYIMPUTE_PYTHON)")
    return run_main(parser, argv)
