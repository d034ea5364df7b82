"""What the subcommands of ``iclr25 llm-regret`` do (kept apart from ``cli.py`` so that ``--help`` stays light)."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from iclr25.utils.cli import set_torch_threads
from iclr25.utils.io import atomic_write, read_array
from iclr25.utils.plotting import savefig, subplots
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import seed_everything

from . import experiments
from .agents import make_agent
from .environments import FAMILIES, check_losses, loss_sequences
from .online import run_online
from .stats import regret_statistics

PACKAGE = "iclr25-llm-regret"


def _fmt(x) -> str:
    if isinstance(x, str):
        return x
    if isinstance(x, bool):
        return "yes" if x else "NO"
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, (int, np.integer)):
        return str(x)
    return f"{x:.3g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.2e}"


def table(rows: list[dict], cols: list[str]) -> str:
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(_fmt(r.get(c)) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def _regret_figure(curves: dict, families, agents, path: Path, T: int) -> Path:
    fig, axes = subplots(1, len(families), size=(3.0, 2.6))
    axes = np.atleast_1d(axes)
    t = np.arange(1, T + 1)
    for ax, fam in zip(axes, families, strict=True):
        for name in agents:
            ax.plot(t, curves[(fam, name)] / t, label=name, lw=1.2)
        ax.set_title(fam, fontsize=9)
        ax.set_xlabel("round t")
        ax.set_xscale("log")
    axes[0].set_ylabel("Regret_t / t (mean over seeds)")
    axes[-1].legend(fontsize=7)
    return savefig(fig, path)


# ------------------------------------------------------------------------------------------------ demo
def demo(args: argparse.Namespace) -> int:
    seed_everything(args.seed)
    set_torch_threads(1)  # the models are tiny: one thread is fastest on a shared 2-core machine
    T, d, n_seeds = 200, 2, 50
    run = RunResult.start(PACKAGE, "demo", seed=args.seed,
                          config={"T": T, "d": d, "n_seeds": n_seeds, "families": list(FAMILIES),
                                  "game": "rock-paper-scissors, Hedge self-play, T=2000",
                                  "regret_loss": "linear self-attention, d=2, T=10, 400 steps"})
    rows, curves = experiments.statistics_table(T=T, d=d, n_seeds=n_seeds, seed=args.seed, n_boot=50)
    games = experiments.game_rows(T=2000, n_games=1, seed=args.seed)[:1]
    lsa = experiments.lsa_rows(ds=(2,), seeds=(args.seed,), steps=400)
    by = {(r["family"], r["agent"]): r for r in rows}
    alt, hedge_u = by[("alternating", "ftl")], by[("uniform", "hedge")]
    run.add("FTL on the alternating sequence: Regret/T", alt["regret_over_T"], higher_is_better=False)
    run.add("FTL on the alternating sequence: log-log slope", alt["beta"])
    run.add("Hedge on uniform losses: Regret/T", hedge_u["regret_over_T"], peer=by[("uniform", "uniform")]
            ["regret_over_T"], peer_name="uniform policy", higher_is_better=False, headline=True)
    run.add("Hedge, worst trend-test p over families", max(by[(f, "hedge")]["p"] for f in FAMILIES),
            higher_is_better=False)
    run.add("Hedge self-play, rock-paper-scissors: abs(value - Nash value)", games[0]["abs_error"],
            higher_is_better=False)
    run.add("regret-loss LSA: relative distance of bV to -cI", lsa[0]["rel_distance"], higher_is_better=False)
    run.add_figure(_regret_figure(curves, ("uniform", "sine_trend", "alternating"),
                                  ("hedge", "ftpl", "ftl", "uniform"), args.out / "regret_curves.png", T),
                   relative_to=args.out)
    run.finish().save(args.out / "results.json")
    print(table(rows, ["family", "agent", "regret_over_T", "p", "beta", "beta_low", "beta_high"]))
    print()
    print(run.to_markdown())
    return 0


# ------------------------------------------------------------------------------------------------- run
def _api_key(args) -> str | None:
    import os

    if args.api_key_env is None:
        return None
    if not args.api_key_env.replace("_", "").isalnum():
        raise ValueError(f"--api-key-env must name an environment variable (letters, digits, _), got "
                         f"{args.api_key_env!r}")
    key = os.environ.get(args.api_key_env, "")
    if not key:
        raise ValueError(f"--api-key-env {args.api_key_env}: that environment variable is not set or empty")
    return key


def _llm_generate(args):
    from .llm import HFCausalLM, OpenAIChat, replay_transcript

    chosen = [x for x in (args.endpoint, args.hf_path, args.replay) if x is not None]
    if len(chosen) != 1:
        raise ValueError("--agent llm needs exactly one of --endpoint URL (with --model), --hf-path DIR or "
                         "--replay FILE.jsonl")
    if args.endpoint is None and args.api_key_env is not None:
        raise ValueError("--api-key-env is for --endpoint only")
    if args.endpoint is not None:
        if not args.model:
            raise ValueError("--endpoint needs --model NAME (the served model)")
        return OpenAIChat(args.endpoint, args.model, api_key=_api_key(args), timeout=args.timeout,
                          max_tokens=args.max_tokens, temperature=args.temperature, retries=args.http_retries)
    if args.hf_path is not None:
        return HFCausalLM(args.hf_path, max_new_tokens=args.max_tokens, temperature=args.temperature,
                          seed=args.seed)
    return replay_transcript(args.replay)


def run(args: argparse.Namespace) -> int:
    from .agents import Uniform
    from .stats import no_regret_verdict

    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k != "func"}
    result = RunResult.start(PACKAGE, "run", seed=args.seed, config=config)
    if args.losses is not None:
        raw = read_array(args.losses, what="--losses file")
        try:
            L = check_losses(raw, B=1.0, name=f"--losses {args.losses}")
        except (ValueError, TypeError) as exc:
            raise ValueError(str(exc)) from None
        source = str(args.losses)
    else:
        if args.env not in FAMILIES:
            raise ValueError(f"--env must be one of {', '.join(FAMILIES)}, got {args.env!r}")
        T = 200 if args.T is None else args.T
        d = 2 if args.d is None else args.d
        n_seeds = 1 if args.agent == "llm" else (50 if args.seeds is None else args.seeds)
        L = loss_sequences(args.env, T=T, d=d, n_seeds=n_seeds, seed=args.seed)
        source = args.env
    result.config.update(T=int(L.shape[1]), d=int(L.shape[2]), seeds=int(L.shape[0]))  # what ran, file or not
    if L.shape[1] < 3:
        raise ValueError(f"the statistics need at least 3 rounds, got T = {L.shape[1]}")
    if args.stride >= L.shape[1]:
        raise ValueError(f"--stride must be below T = {L.shape[1]}, got {args.stride}")
    if args.agent == "llm":
        from .llm import LLMAgent

        agent = LLMAgent(_llm_generate(args), transcript=args.transcript, feedback=args.feedback,
                         on_parse_failure=args.on_parse_failure, parse_retries=args.parse_retries)
    else:
        agent = make_agent(args.agent)
    out = run_online(agent, L, seed=args.seed)
    st = regret_statistics(out.regret, stride=args.stride, seed=args.seed)
    unif = regret_statistics(run_online(Uniform(), L, seed=args.seed).regret, n_boot=0).regret_over_T
    stats = {"losses": source, "agent": args.agent, "feedback": out.feedback, "n_seeds": int(L.shape[0]),
             "T": int(L.shape[1]), "d": int(L.shape[2]), "regret_over_T": st.regret_over_T,
             "uniform_regret_over_T": unif, "trend_p": st.trend.p_value, "stride": args.stride, "beta": st.slope.beta,
             "beta_low": st.slope.low, "beta_high": st.slope.high}
    rate = None
    if args.agent == "llm":
        rate = agent.parse_failure_rate
        stats |= {"llm_calls": agent.calls, "parse_failures": agent.parse_failures, "parse_failure_rate": rate,
                  "parse_retries_made": agent.retried}
        if out.feedback == "full":  # the paper's Sec. 4 model fitted to what the model played
            from .quantal import fit_quantal_response

            fit = fit_quantal_response(out.losses, out.policies)
            stats |= {"quantal_scale": fit.scale, "quantal_mse": fit.mse, "quantal_mse_uniform": fit.mse_uniform,
                      "quantal_mse_ftl": fit.mse_ftl}
    verdict = no_regret_verdict(st, parse_failure_rate=rate,
                                max_parse_failure_rate=args.max_parse_failure_rate if args.agent == "llm" else 0.1)
    stats |= {"verdict": verdict.label, "no_regret": verdict.no_regret, "verdict_reason": verdict.reason}
    for k in ("regret_over_T", "trend_p", "beta"):
        result.add(k, stats[k], **({"peer": unif, "peer_name": "uniform policy", "higher_is_better": False}
                                   if k == "regret_over_T" else {}))
    if rate is not None:
        result.add("parse_failure_rate", rate, higher_is_better=False)
        result.config["parse_failure_examples"] = agent.failure_examples
    result.notes = f"verdict: {verdict.label} ({verdict.reason})"
    if args.out is not None:
        result.finish().save(args.out / "results.json")
    if args.json:
        print(json.dumps(stats))
    else:
        print(table([stats], [k for k in stats if k != "verdict_reason"]))
        print(f"verdict: {verdict.label} ({verdict.reason})")
        for ex in getattr(agent, "failure_examples", []):
            print(f"unparsed answer, round {ex['round']}: {ex['answer'][:100]!r} ({ex['reason']})")
    return 0


# ----------------------------------------------------------------------------------------------- train
def train(args: argparse.Namespace) -> int:
    import torch

    from .regret_loss import RegretLossConfig, lsa_structure, train_regret_loss

    if not math.isfinite(args.k) or args.k < 0:
        raise ValueError(f"--k must be a finite number >= 0, got {args.k}")
    set_torch_threads(1)
    cfg = RegretLossConfig(d=args.d, T=args.T, model=args.model, head=args.head, N=args.N, k=args.k,
                           steps=args.steps, distribution="gaussian" if args.head == "ball" else "uniform_box",
                           h="square" if args.head == "ball" else "relu2")
    result = RunResult.start(PACKAGE, "train-regret-loss", seed=args.seed, config=vars(cfg) | {})
    res = train_regret_loss(cfg, seed=args.seed)
    result.add("final regret-loss", float(res.losses[-20:].mean()), higher_is_better=False)
    if args.model == "lsa":
        st = lsa_structure(res.model)
        result.add("relative distance of bV to -cI", st.rel_distance, higher_is_better=False)
        result.add("|w|/|b|", st.w_over_b, higher_is_better=False)
        result.add("|v_c|/|V|", st.vc_over_V, higher_is_better=False)
        result.add("c", st.c)
    args.out.mkdir(parents=True, exist_ok=True)
    from iclr25.utils.io import atomic_path

    with atomic_path(args.out / "model.pt") as tmp:
        torch.save(res.model.state_dict(), tmp)
    result.finish().save(args.out / "results.json")
    print(result.to_markdown())
    return 0


# ----------------------------------------------------------------------------------------------- repro
def repro(args: argparse.Namespace) -> int:
    from iclr25.utils.progress import progress

    seed_everything(args.seed)
    set_torch_threads(1)
    out: Path = args.out
    run = RunResult.start(PACKAGE, "repro", seed=args.seed, config={"seeds": 50})
    parts: list[str] = []
    steps = list(progress(["stats", "ladder", "bandit", "games", "cce", "lsa", "simplex"], desc="repro"))
    rows, curves = [], {}
    for step in steps:
        if step == "stats":
            for d in (2, 5):
                r, c = experiments.statistics_table(T=200, d=d, n_seeds=50, seed=args.seed)
                rows += r
                if d == 2:
                    curves = c
            parts += ["## Regret statistics, T = 200, 50 seeds (mean curve; β̂₀ with a 95% bootstrap interval)", "",
                      table(rows, ["family", "agent", "d", "regret_over_T", "p", "p_stride2", "beta", "beta_low",
                                   "beta_high", "within_bound"]), ""]
        elif step == "ladder":
            ladder = []
            for T in (25, 200, 1000):
                r, _ = experiments.statistics_table(T=T, d=2, n_seeds=50, seed=args.seed, families=("alternating", "sine_trend"),
                                                    agents={k: v for k, v in experiments.default_agents().items()
                                                            if k in ("hedge", "ftpl", "ftl")}, n_boot=100)
                ladder += r
            parts += ["## Horizon ladder (d = 2): FTL stays linear on the alternating sequence", "",
                      table(ladder, ["family", "agent", "T", "regret_over_T", "p", "p_stride2", "beta"]), ""]
        elif step == "bandit":
            b = experiments.bandit_rows(seed=args.seed)
            parts += ["## Bandit feedback (uniform family, d = 3, T = 2000, 20 seeds)", "",
                      table(b, ["agent", "T", "regret_over_T", "p", "beta", "beta_low", "beta_high"]), ""]
        elif step == "games":
            g = experiments.game_rows(seed=args.seed)
            parts += ["## Hedge self-play in zero-sum games, T = 2000 (value of the averaged play vs nashpy)", "",
                      table(g, ["game", "value_play", "value_nashpy", "value_lp", "abs_error", "duality_gap",
                                "regret_bound_gap"]), ""]
        elif step == "cce":
            cc = experiments.cce_rows(seed=args.seed)
            parts += ["## General-sum 3-player game: CCE gap of the averaged play = max_i Regret_i / T", "",
                      table(cc, ["game", "T", "cce_gap", "max_regret_over_T", "difference"]), ""]
        elif step == "lsa":
            lsa = experiments.lsa_rows()
            lsa += experiments.lsa_rows(ds=(5,), seeds=(0,), steps=4500)  # the d = 5 budget ladder
            aniso = experiments.lsa_rows(ds=(2,), seeds=(0,), cov=((1.0, 0.0), (0.0, 4.0)))[0]
            A = np.array(aniso["A"])
            inv = np.diag([1.0, 0.25])
            parts += ["## Regret-loss, single-layer linear self-attention (N = 1, h = x², ℓ ~ N(0, I), T = 10)", "",
                      table(lsa, ["d", "seed", "steps", "c", "rel_distance", "w_over_b", "vc_over_V", "loss", "best_scalar_c",
                                  "loss_best_c"]), "",
                      f"Anisotropic Σ = diag(1, 4), d = 2: bV = {np.array2string(A, precision=3)}; "
                      f"bV / bV[0,0] = {np.array2string(A / A[0, 0], precision=3)} (Σ⁻¹ / Σ⁻¹[0,0] = "
                      f"{np.array2string(inv, precision=3)}); extras ‖w‖/|b| = {aniso['w_over_b']:.3g}", ""]
        elif step == "simplex":
            sx = experiments.simplex_rows(seed=args.seed)
            parts += ["## Regret-loss with the simplex head (uniform box losses, d = 2, T = 25) against tuned Hedge", "",
                      table(sx, ["model", "N", "k", "steps", "test_regret", "ratio", "worst_of_N",
                                 "alt_regret_over_T"]), ""]
    by = {(r["family"], r["agent"], r["d"]): r for r in rows}
    run.add("FTL alternating Regret/T (d=2)", by[("alternating", "ftl", 2)]["regret_over_T"])
    run.add("FTL alternating slope (d=2)", by[("alternating", "ftl", 2)]["beta"])
    run.add("Hedge worst p over families", max(r["p"] for r in rows if r["agent"] == "hedge"))
    run.add("Hedge worst slope over families", max(r["beta"] for r in rows if r["agent"] == "hedge"))
    run.add("LSA worst relative distance (d=2)", max(r["rel_distance"] for r in lsa if r["d"] == 2))
    run.add("regret-loss / tuned Hedge (best model)", min(r["ratio"] for r in sx[2:]))
    run.add_figure(_regret_figure(curves, ("uniform", "sine_trend", "alternating"), ("hedge", "ftpl", "ftl", "uniform"),
                                  out / "regret_curves.png", 200), relative_to=out)
    from .claims import REGISTRY

    report = REGISTRY.run("repro", command="iclr25 llm-regret repro")
    report.save(out / "claims.json")
    parts += ["## Claims (seeds " + ", ".join(str(s) for s in REGISTRY.rung_seeds("repro")) + ")", ""]
    parts += [r.explain() for r in report.results] + [""]
    text = "\n".join(parts)
    with atomic_write(out / "table.md") as f:
        f.write(text + "\n")
    run.finish().save(out / "results.json")
    print(text)
    return 0
