"""``iclr25 llm-regret repro``: the reduced-scale reproduction (at most 10 min on 2 cores): the regret statistics
of the no-regret agents and FTL on the loss families with a horizon ladder, bandit feedback, Hedge self-play in
zero-sum games, the CCE gap of a general-sum game, the regret-loss with linear self-attention and with the
simplex head, and the claims registry. Writes ``table.md`` (the README's "Results"), ``claims.json``,
``results.json`` and ``regret_curves.png``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from iclr25.utils.cli import set_torch_threads
from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import seed_everything

from . import experiments
from .figures import regret_figure, table

PACKAGE = "iclr25-llm-regret"
STEPS = ("stats", "ladder", "bandit", "games", "cce", "lsa", "simplex")


def _statistics(seed: int, found: dict) -> list[str]:
    rows, curves = [], {}
    for d in (2, 5):
        r, c = experiments.statistics_table(T=200, d=d, n_seeds=50, seed=seed)
        rows += r
        if d == 2:
            curves = c
    found.update(rows=rows, curves=curves)
    return ["## Regret statistics, T = 200, 50 seeds (mean curve; β̂₀ with a 95% bootstrap interval)", "",
            table(rows, ["family", "agent", "d", "regret_over_T", "p", "p_stride2", "beta", "beta_low",
                         "beta_high", "within_bound"]), ""]


def _horizon_ladder(seed: int, found: dict) -> list[str]:
    ladder = []
    for T in (25, 200, 1000):
        r, _ = experiments.statistics_table(T=T, d=2, n_seeds=50, seed=seed, families=("alternating", "sine_trend"),
                                            agents={k: v for k, v in experiments.default_agents().items()
                                                    if k in ("hedge", "ftpl", "ftl")}, n_boot=100)
        ladder += r
    return ["## Horizon ladder (d = 2): FTL stays linear on the alternating sequence", "",
            table(ladder, ["family", "agent", "T", "regret_over_T", "p", "p_stride2", "beta"]), ""]


def _bandit(seed: int, found: dict) -> list[str]:
    b = experiments.bandit_rows(seed=seed)
    return ["## Bandit feedback (uniform family, d = 3, T = 2000, 20 seeds)", "",
            table(b, ["agent", "T", "regret_over_T", "p", "beta", "beta_low", "beta_high"]), ""]


def _games(seed: int, found: dict) -> list[str]:
    g = experiments.game_rows(seed=seed)
    return ["## Hedge self-play in zero-sum games, T = 2000 (value of the averaged play vs nashpy)", "",
            table(g, ["game", "value_play", "value_nashpy", "value_lp", "abs_error", "duality_gap",
                      "regret_bound_gap"]), ""]


def _cce(seed: int, found: dict) -> list[str]:
    cc = experiments.cce_rows(seed=seed)
    return ["## General-sum 3-player game: CCE gap of the averaged play = max_i Regret_i / T", "",
            table(cc, ["game", "T", "cce_gap", "max_regret_over_T", "difference"]), ""]


def _lsa(seed: int, found: dict) -> list[str]:
    lsa = experiments.lsa_rows()
    lsa += experiments.lsa_rows(ds=(5,), seeds=(0,), steps=4500)  # the d = 5 budget ladder
    aniso = experiments.lsa_rows(ds=(2,), seeds=(0,), cov=((1.0, 0.0), (0.0, 4.0)))[0]
    found.update(lsa=lsa)
    A = np.array(aniso["A"])
    inv = np.diag([1.0, 0.25])
    return ["## Regret-loss, single-layer linear self-attention (N = 1, h = x², ℓ ~ N(0, I), T = 10)", "",
            table(lsa, ["d", "seed", "steps", "c", "rel_distance", "w_over_b", "vc_over_V", "loss", "best_scalar_c",
                        "loss_best_c"]), "",
            f"Anisotropic Σ = diag(1, 4), d = 2: bV = {np.array2string(A, precision=3)}; "
            f"bV / bV[0,0] = {np.array2string(A / A[0, 0], precision=3)} (Σ⁻¹ / Σ⁻¹[0,0] = "
            f"{np.array2string(inv, precision=3)}); extras ‖w‖/|b| = {aniso['w_over_b']:.3g}", ""]


def _simplex(seed: int, found: dict) -> list[str]:
    sx = experiments.simplex_rows(seed=seed)
    found.update(simplex=sx)
    return ["## Regret-loss with the simplex head (uniform box losses, d = 2, T = 25) against tuned Hedge", "",
            table(sx, ["model", "N", "k", "steps", "test_regret", "ratio", "worst_of_N", "alt_regret_over_T"]), ""]


_PARTS = {"stats": _statistics, "ladder": _horizon_ladder, "bandit": _bandit, "games": _games, "cce": _cce,
          "lsa": _lsa, "simplex": _simplex}


def _headline_metrics(run: RunResult, found: dict) -> None:
    rows, lsa, sx = found["rows"], found["lsa"], found["simplex"]
    by = {(r["family"], r["agent"], r["d"]): r for r in rows}
    run.add("FTL alternating Regret/T (d=2)", by[("alternating", "ftl", 2)]["regret_over_T"])
    run.add("FTL alternating slope (d=2)", by[("alternating", "ftl", 2)]["beta"])
    run.add("Hedge worst p over families", max(r["p"] for r in rows if r["agent"] == "hedge"))
    run.add("Hedge worst slope over families", max(r["beta"] for r in rows if r["agent"] == "hedge"))
    run.add("LSA worst relative distance (d=2)", max(r["rel_distance"] for r in lsa if r["d"] == 2))
    run.add("regret-loss / tuned Hedge (best model)", min(r["ratio"] for r in sx[2:]))


def _claims(out: Path) -> list[str]:
    from .claims import REGISTRY

    report = REGISTRY.run("repro", command="iclr25 llm-regret repro")
    report.save(out / "claims.json")
    return (["## Claims (seeds " + ", ".join(str(s) for s in REGISTRY.rung_seeds("repro")) + ")", ""]
            + [r.explain() for r in report.results] + [""])


def repro(args: argparse.Namespace) -> int:
    """The handler of ``iclr25 llm-regret repro``: every part above in turn, then the claims."""
    from iclr25.utils.progress import progress

    seed_everything(args.seed)
    set_torch_threads(1)
    out: Path = args.out
    run = RunResult.start(PACKAGE, "repro", seed=args.seed, config={"seeds": 50})
    parts: list[str] = []
    found: dict = {}
    for step in progress(list(STEPS), desc="repro"):
        parts += _PARTS[step](args.seed, found)
    _headline_metrics(run, found)
    run.add_figure(regret_figure(found["curves"], ("uniform", "sine_trend", "alternating"),
                                 ("hedge", "ftpl", "ftl", "uniform"), out / "regret_curves.png", 200), relative_to=out)
    parts += _claims(out)
    text = "\n".join(parts)
    with atomic_write(out / "table.md") as f:
        f.write(text + "\n")
    run.finish().save(out / "results.json")
    print(text)
    return 0
