"""``iclr25 weighted-lowrank repro``: the reduced-scale reproduction — geometric convergence and parity of the
sketched solver with the exact one, robustness to the solver tolerance, time per round against ``k``, and
matrix completion against the truncated SVD of ``W ∘ M`` and SoftImpute; then the claims registry's repro rung.

Each step adds its metrics to the run and returns its rows of the Markdown table (``table.md``, the README's
"Results"); the experiments themselves live in :mod:`.experiments`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import seed_everything

from . import experiments
from .claims import REGISTRY
from .figures import plot_repro

__all__ = ["repro"]

PACKAGE = "iclr25-weighted-lowrank"


def repro(args: argparse.Namespace) -> int:
    """The ``repro`` command (``--quick``: n=1000 and k <= 32 in the scaling step); writes ``results.json``,
    ``table.md``, ``repro.png`` and ``claims.json`` to ``--out``."""
    seed_everything(args.seed)
    out: Path = args.out
    n_scale = 1000 if args.quick else 4000
    ks = (8, 16, 32) if args.quick else (16, 32, 64, 128)
    config = {"convergence": "n=d=1000, k=16, 15 rounds", "scaling": f"n=d={n_scale}, k in {list(ks)}",
              "masks": "n=d=1000, k=10, p=0.3 and 0.1", "robustness": "n=d=600, k=8, refine=gd"}
    run = RunResult.start(PACKAGE, "repro", seed=args.seed, config=config)
    conv, lines = _convergence(run, args.seed)
    lines += _robustness(run, args.seed)
    sc, rows = _scaling(run, n_scale, ks, args.seed)
    lines += rows
    lines += _masks(run, args.seed, args.peer_python)
    run.add_figure(plot_repro(out / "repro.png", conv, sc["rows"], n_scale=n_scale), relative_to=out)
    table = "\n".join(lines)
    run.notes = table
    run.finish().save(out / "results.json")
    with atomic_write(out / "table.md") as fh:
        fh.write(table + "\n")
    print(table)
    _claims(out)
    return 0


def _convergence(run: RunResult, seed: int) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """1-2. Geometric convergence of both solvers and the sketched solver's parity with the exact one."""
    conv = {
        "dense, noiseless": experiments.convergence(1000, 16, noise=0.0, seed=seed),
        "dense, noise 1e-3": experiments.convergence(1000, 16, noise=1e-3, seed=seed),
        "mask p=0.3, noise 1e-3": experiments.convergence(1000, 16, weights="mask", noise=1e-3, seed=seed),
    }
    lines = ["| problem (n=d=1000, k=16) | exact: error r1 → r15 | sketch: error r1 → r15 | sketch / exact |",
             "|---|---|---|---|"]
    for name, c in conv.items():
        e, s = c["exact"]["errors"], c["sketch"]["errors"]
        lines.append(f"| {name} | {e[0]:.2e} → {e[-1]:.2e} | {s[0]:.2e} → {s[-1]:.2e} | {s[-1] / e[-1]:.3f} |")
        run.add(f"{name}: final error sketch", s[-1], peer=e[-1], peer_name="exact", higher_is_better=False)
    return conv, lines


def _robustness(run: RunResult, seed: int) -> list[str]:
    """3. The final error against the solver tolerance ε₀ (refinement by gradient descent)."""
    rob = experiments.robustness(seed=seed)
    lines = ["", "| solver tolerance ε₀ (refine=gd) | final error | abs(error − exact) | refinement steps |",
             "|---|---|---|---|"]
    for tol, r in rob["tol"].items():
        lines.append(f"| {tol:g} | {r['error']:.4e} | {abs(r['error'] - rob['exact']):.2e} | {r['steps']} |")
        run.add(f"tol {tol:g}: |error - exact|", abs(r["error"] - rob["exact"]), higher_is_better=False)
    lines.append(f"| exact solver | {rob['exact']:.4e} | 0 | 0 |")
    return lines


def _scaling(run: RunResult, n_scale: int, ks: tuple[int, ...], seed: int) -> tuple[dict[str, Any], list[str]]:
    """4. Seconds per round against ``k`` at n = d = ``n_scale`` (exact, sketch, pcg), with the flop model and
    the log-log slopes."""
    sc = experiments.scaling(n_scale, ks, rounds=1, seed=seed)
    lines = ["", f"| k (n=d={n_scale}) | exact s/round | sketch s/round | pcg s/round | speed-up sketch | "
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
    return sc, lines


def _masks(run: RunResult, seed: int, peer_python: str | None) -> list[str]:
    """5. Matrix completion at p = 0.3 and 0.1: ours against the SVD of ``W ∘ M`` and SoftImpute (the peer)."""
    lines = ["", "| mask (n=d=1000, k=10) | sketch error / s | exact error / s | SVD(W∘M) error / s | "
                 "SoftImpute error / s |", "|---|---|---|---|---|"]
    notes = []
    for p in (0.3, 0.1):
        mk = experiments.masks(1000, 10, p=p, seed=seed, peer_python=peer_python)
        si = mk["softimpute"]
        si_txt = "–" if si["error"] is None else f"{si['error']:.3e} / {si['seconds']:.2f}"
        notes.append(si["note"])
        lines.append(f"| p={p} | {mk['sketch']['error']:.3e} / {mk['sketch']['seconds']:.2f} | "
                     f"{mk['exact']['error']:.3e} / {mk['exact']['seconds']:.2f} | "
                     f"{mk['svd']['error']:.3e} / {mk['svd']['seconds']:.2f} | {si_txt} |")
        run.add(f"mask p={p}: error sketch", mk["sketch"]["error"], peer=si["error"], peer_name="SoftImpute",
                higher_is_better=False)
    lines.append(f"\nSoftImpute: {notes[0]}")
    return lines


def _claims(out: Path) -> None:
    """The claims registry's repro rung, written to ``claims.json`` (one verdict line per claim)."""
    report = REGISTRY.run("repro", command="iclr25 weighted-lowrank repro")
    report.save(out / "claims.json")
    for r in report.results:
        print(f"claim {r.claim.id}: {r.verdict} (expected: {r.claim.expect})")
