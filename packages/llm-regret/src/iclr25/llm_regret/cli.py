"""Command line of ``iclr25 llm-regret``: ``demo``, ``run``, ``train-regret-loss`` and ``repro``."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from iclr25.utils import cli as ucli
from iclr25.utils.guards import check_size
from iclr25.utils.outputs import add_output

DESCRIPTION = ("Regret of learning agents (LLMs included) in online learning and repeated games, and the "
               "regret-loss (Park et al., ICLR 2025).")
DEMO_HELP = "regret statistics, a game and a regret-loss model (under 30 s)"
REPRO_HELP = "the reduced-scale reproduction (at most 10 min)"

PACKAGE = "iclr25-llm-regret"
AGENT_NAMES = ("hedge", "ftrl_l2", "ftpl", "ftl", "uniform", "exp3", "llm")
#: the same tuple as iclr25.llm_regret.llm.ON_PARSE_FAILURE (not imported: --help stays light)
ON_PARSE_FAILURE = ("retry", "uniform", "stop")
#: options of --agent llm only, with the defaults they take there
LLM_DEFAULTS = {"endpoint": None, "model": None, "api_key_env": None, "timeout": 60.0, "http_retries": 2,
                "max_tokens": 512, "temperature": 0.0, "hf_path": None, "replay": None, "transcript": None,
                "feedback": "full", "on_parse_failure": "retry", "parse_retries": 1, "max_parse_failure_rate": 0.1,
                "dtype": None, "device_map": None}


def _on_device(args: argparse.Namespace, result) -> None:
    """``--device`` resolved before any work (an absent one is one line naming it), recorded in ``result``'s run
    record when given."""
    from iclr25.utils.device import describe_device, torch_device

    dev = torch_device(args.device)
    if result is not None:
        result.machine["device"] = describe_device(dev)


def demo(args: argparse.Namespace) -> int:
    from iclr25.utils.device import device_scope

    from .demo import demo as run_demo

    _on_device(args, None)
    with device_scope(args.device):  # every model below trains there (device=None)
        return run_demo(args)


def repro(args: argparse.Namespace) -> int:
    from iclr25.utils.device import device_scope

    from .repro import repro as run_repro

    _on_device(args, None)
    with device_scope(args.device):  # every model below, and the claims' measuring code, trains there
        return run_repro(args)


#: rough cost of one round of one run (numpy, vectorised over runs), and of one LLM call
_ROUND_S, _CELL_S, _LLM_CALL_S = 2e-5, 2e-8, 0.5


def check_run_sizes(args: argparse.Namespace) -> None:
    """Refuse, before any work or heavy import, what ``run`` cannot do: flags that a --losses file makes
    meaningless, and sizes whose memory or time cannot fit on this machine (unless --force)."""
    if args.losses is not None:
        given = [f for f, v in (("--T", args.T), ("--d", args.d), ("--seeds", args.seeds)) if v is not None]
        if given:
            raise ValueError(f"{' and '.join(given)} {'sets' if len(given) == 1 else 'set'} the size of generated losses; with --losses the rounds, "
                             "actions and runs come from the file's shape (T, d) or (n_seeds, T, d); drop "
                             f"{' and '.join(given)}")
        return
    T = 200 if args.T is None else args.T
    d = 2 if args.d is None else args.d
    seeds = 1 if args.agent == "llm" else (50 if args.seeds is None else args.seeds)
    cells = float(T) * d * seeds
    # losses, policies and their running sums, float64; the regret curves and their statistics
    bytes_needed = 8.0 * (6 * cells + 4 * float(T) * seeds)
    seconds = T * (_LLM_CALL_S if args.agent == "llm" else _ROUND_S) + cells * _CELL_S
    check_size(f"--T {T} --d {d} --seeds {seeds}", bytes_needed=bytes_needed, seconds_needed=seconds,
               force=args.force)


def check_train_sizes(args: argparse.Namespace) -> None:
    """Refuse a ``train-regret-loss`` request whose memory or time cannot fit (unless --force)."""
    batch = 1024  # the training batch of RegretLossConfig
    cells = float(batch) * args.N * args.T * args.d
    per_step = 1e-3 + cells * (1e-6 if args.model == "transformer" else 1e-7)
    width = 64 if args.model == "transformer" else args.d
    bytes_needed = 8.0 * 12 * float(batch) * args.N * args.T * (args.d + width)
    from iclr25.utils.device import on_accelerator  # noqa: PLC0415

    # a GPU run is not judged by the CPU-time estimate, only by memory (an absent one is refused later)
    gpu = on_accelerator(getattr(args, "device", None))
    check_size(f"--steps {args.steps} --T {args.T} --d {args.d} --N {args.N}", bytes_needed=bytes_needed,
               seconds_needed=args.steps * per_step, force=args.force, on_accelerator=gpu)


def check_llm_options(args: argparse.Namespace) -> None:
    """Options of --agent llm are refused with other agents; with llm, unset ones take their defaults."""
    given = [k for k in LLM_DEFAULTS if getattr(args, k, None) is not None]
    if args.agent != "llm":
        if given:
            raise ValueError(f"{', '.join('--' + k.replace('_', '-') for k in given)}: "
                             f"{'is an option' if len(given) == 1 else 'are options'} of --agent llm only")
        return
    for k, v in LLM_DEFAULTS.items():
        if getattr(args, k, None) is None:
            setattr(args, k, v)
    # checked here rather than by argparse types: a bad value is one line naming the flag, not a usage block
    for k, kind, ok, what in (("http_retries", int, lambda v: v >= 0, "an integer >= 0"),
                              ("parse_retries", int, lambda v: v >= 0, "an integer >= 0"),
                              ("max_tokens", int, lambda v: v >= 1, "an integer >= 1"),
                              ("temperature", float, lambda v: math.isfinite(v) and v >= 0, "a finite number >= 0"),
                              ("max_parse_failure_rate", float, lambda v: 0 <= v <= 1, "a fraction in [0, 1]")):
        raw = getattr(args, k)
        try:
            val = kind(raw)
        except (TypeError, ValueError):
            val = None
        if val is None or not ok(val):
            raise ValueError(f"--{k.replace('_', '-')} must be {what}, got {raw!r}")
        setattr(args, k, val)


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
    if args.hf_path is None and (args.dtype is not None or args.device_map is not None):
        raise ValueError(f"{'--dtype' if args.dtype is not None else '--device-map'} is for --hf-path (a model run "
                         "here); an --endpoint serves its own model")
    if args.hf_path is not None:
        return HFCausalLM(args.hf_path, max_new_tokens=args.max_tokens, temperature=args.temperature,
                          seed=args.seed, device=args.device, dtype=args.dtype, device_map=args.device_map)
    return replay_transcript(args.replay)


def _losses(args: argparse.Namespace):
    """The losses of ``run`` (n_seeds, T, d) and their source: the user's --losses file or a generated family."""
    from iclr25.utils.io import read_array

    from .environments import FAMILIES, check_losses, loss_sequences

    if args.losses is not None:
        raw = read_array(args.losses, what="--losses file")
        try:
            L = check_losses(raw, B=1.0, name=f"--losses {args.losses}")
        except (ValueError, TypeError) as exc:
            raise ValueError(str(exc)) from None
        return L, str(args.losses)
    if args.env not in FAMILIES:
        raise ValueError(f"--env must be one of {', '.join(FAMILIES)}, got {args.env!r}")
    T = 200 if args.T is None else args.T
    d = 2 if args.d is None else args.d
    n_seeds = 1 if args.agent == "llm" else (50 if args.seeds is None else args.seeds)
    return loss_sequences(args.env, T=T, d=d, n_seeds=n_seeds, seed=args.seed), args.env


def _agent(args: argparse.Namespace):
    if args.agent == "llm":
        from .llm import LLMAgent

        return LLMAgent(_llm_generate(args), transcript=args.transcript, feedback=args.feedback,
                        on_parse_failure=args.on_parse_failure, parse_retries=args.parse_retries)
    from .agents import make_agent

    return make_agent(args.agent)


def _llm_statistics(agent, out) -> dict:
    """What an LLM agent adds to the statistics: calls, parse failures and, with full feedback, the paper's
    Sec. 4 quantal-response model fitted to what it played."""
    stats = {"llm_calls": agent.calls, "parse_failures": agent.parse_failures,
             "parse_failure_rate": agent.parse_failure_rate, "parse_retries_made": agent.retried}
    if out.feedback == "full":
        from .quantal import fit_quantal_response

        fit = fit_quantal_response(out.losses, out.policies)
        stats |= {"quantal_scale": fit.scale, "quantal_mse": fit.mse, "quantal_mse_uniform": fit.mse_uniform,
                  "quantal_mse_ftl": fit.mse_ftl}
    return stats


def _print_run(args: argparse.Namespace, stats: dict, verdict, agent) -> None:
    import json

    from .figures import table

    if args.json:
        print(json.dumps(stats))
        return
    print(table([stats], [k for k in stats if k != "verdict_reason"]))
    print(f"verdict: {verdict.label} ({verdict.reason})")
    for ex in getattr(agent, "failure_examples", []):
        print(f"unparsed answer, round {ex['round']}: {ex['answer'][:100]!r} ({ex['reason']})")


def _run(args: argparse.Namespace) -> int:
    from iclr25.utils.results import RunResult

    from .agents import Uniform
    from .online import run_online
    from .stats import no_regret_verdict, regret_statistics

    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()
              if k != "func" and not k.startswith("_")}
    result = RunResult.start(PACKAGE, "run", seed=args.seed, config=config)
    L, source = _losses(args)
    result.config.update(T=int(L.shape[1]), d=int(L.shape[2]), seeds=int(L.shape[0]))  # what ran, file or not
    if L.shape[1] < 3:
        raise ValueError(f"the statistics need at least 3 rounds, got T = {L.shape[1]}")
    if args.stride >= L.shape[1]:
        raise ValueError(f"--stride must be below T = {L.shape[1]}, got {args.stride}")
    agent = _agent(args)
    gen = getattr(agent, "generate", None)
    if hasattr(type(gen), "input_device"):  # a --hf-path model (HFCausalLM): where it runs
        from iclr25.utils.device import describe_device

        result.machine["device"] = describe_device(gen.input_device)
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
        stats |= _llm_statistics(agent, out)
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
    _print_run(args, stats, verdict, agent)
    return 0


def _train(args: argparse.Namespace) -> int:
    import torch

    from iclr25.utils.cli import set_torch_threads
    from iclr25.utils.io import atomic_path
    from iclr25.utils.results import RunResult

    from .regret_loss import RegretLossConfig, lsa_structure, train_regret_loss

    if not math.isfinite(args.k) or args.k < 0:
        raise ValueError(f"--k must be a finite number >= 0, got {args.k}")
    set_torch_threads(1)
    from iclr25.utils.device import describe_device, torch_device

    dev = torch_device(args.device)
    cfg = RegretLossConfig(d=args.d, T=args.T, model=args.model, head=args.head, N=args.N, k=args.k,
                           steps=args.steps, distribution="gaussian" if args.head == "ball" else "uniform_box",
                           h="square" if args.head == "ball" else "relu2")
    result = RunResult.start(PACKAGE, "train-regret-loss", seed=args.seed, config=vars(cfg) | {})
    result.machine["device"] = describe_device(dev)
    res = train_regret_loss(cfg, seed=args.seed, device=dev)
    result.add("final regret-loss", float(res.losses[-20:].mean()), higher_is_better=False)
    if args.model == "lsa":
        st = lsa_structure(res.model)
        result.add("relative distance of bV to -cI", st.rel_distance, higher_is_better=False)
        result.add("|w|/|b|", st.w_over_b, higher_is_better=False)
        result.add("|v_c|/|V|", st.vc_over_V, higher_is_better=False)
        result.add("c", st.c)
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_path(args.out / "model.pt") as tmp:
        torch.save({k: v.cpu() for k, v in res.model.state_dict().items()}, tmp)  # CPU weights on any device
    result.finish().save(args.out / "results.json")
    print(result.to_markdown())
    return 0


def run(args: argparse.Namespace) -> int:
    """Run one agent and print the paper's regret statistics (Regret/T, trend-test p-value, log-log slope with
    a bootstrap interval)."""
    check_llm_options(args)  # --out and --transcript were checked by run_main before this (add_output)
    check_run_sizes(args)
    return _run(args)


def train(args: argparse.Namespace) -> int:
    """Minimise the regret-loss L(θ, k, N) with Adam and report the model's structure (linear self-attention)
    and regret against tuned Hedge."""
    check_train_sizes(args)  # --out was checked by run_main before this (add_output)
    return _train(args)


def main(argv: Sequence[str] | None = None) -> int:
    from iclr25.utils.device import add_device_argument

    parser, sub, dp, rp = ucli.method_commands("llm-regret", DESCRIPTION, demo=demo, demo_help=DEMO_HELP,
                                             repro=repro, repro_help=REPRO_HELP, demo_files=("regret_curves.png",),
                                             repro_files=("regret_curves.png", "table.md", "claims.json"))
    r = ucli.add_command(sub, "run", run, seed=True, overwrite="write over a previous run in --out and an existing --transcript file", force=True, help="run one agent on a loss family or on your own losses")
    src = r.add_mutually_exclusive_group()
    src.add_argument("--env", default="alternating",
                     help="loss family: gaussian, uniform, linear_trend, sine_trend, alternating (default)")
    src.add_argument("--losses", type=Path, help="your own losses: .npy (or .npz with one array) of shape (T, d) "
                                                 "or (n_seeds, T, d), values in [0, 1]")
    r.add_argument("--agent", default="hedge", choices=AGENT_NAMES, help="agent (default hedge)")
    r.add_argument("--T", type=ucli.positive_int("--T"), default=None,
                   help="rounds of generated losses (default 200; not with --losses)")
    r.add_argument("--d", type=ucli.positive_int("--d"), default=None,
                   help="actions of generated losses (default 2; not with --losses)")
    r.add_argument("--seeds", type=ucli.positive_int("--seeds"), default=None,
                   help="independent runs on generated losses (default 50; 1 for llm; not with --losses)")
    r.add_argument("--stride", type=ucli.positive_int("--stride"), default=1, help="stride of the trend test (default 1)")
    llm = r.add_argument_group("llm agent", "options of --agent llm")
    llm.add_argument("--endpoint", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
    llm.add_argument("--model", help="the served model name (with --endpoint)")
    llm.add_argument("--api-key-env", metavar="VAR",
                     help="name of the environment variable holding the endpoint's API key, sent as a bearer token "
                          "(the key itself is never a command-line argument); default: no key")
    llm.add_argument("--timeout", type=ucli.positive_float("--timeout"), default=None,
                     help="seconds each request to --endpoint may take in all before failing (default 60)")
    llm.add_argument("--http-retries", default=None,
                     help="retries of a refused connection, HTTP 429 or 5xx, with backoff 1, 2, 4 ... s (default 2); "
                          "a --timeout is not retried")
    llm.add_argument("--max-tokens", default=None,
                     help="longest answer in tokens (default 512: room for models that reason first)")
    llm.add_argument("--temperature", default=None,
                     help="sampling temperature (default 0: greedy)")
    llm.add_argument("--hf-path", type=Path, help="a local Hugging Face causal LM folder (needs the hf extra); its "
                                                  "chat template is used when the tokenizer has one")
    llm.add_argument("--replay", type=Path, help="answer from a recorded transcript (.jsonl) instead")
    add_output(r, "--transcript", kind="file", group=llm, metavar="FILE",
               help="write every prompt and answer here (JSON lines, rewritten after each round); never the "
                    "API key")
    llm.add_argument("--feedback", choices=("full", "bandit"), default=None,
                     help="full: every past loss vector in the prompt (default); bandit: only the drawn action's loss")
    llm.add_argument("--on-parse-failure", choices=ON_PARSE_FAILURE, default=None,
                     help="an answer that holds no distribution: retry (ask again with the parse error, default), "
                          "uniform (play uniform, counted) or stop (end the run)")
    llm.add_argument("--parse-retries", default=None,
                     help="retries per round with --on-parse-failure retry (default 1)")
    llm.add_argument("--max-parse-failure-rate", default=None,
                     help="above this fraction of unreadable rounds the verdict is 'undecided', never "
                          "'no-regret' (default 0.1)")
    # where a --hf-path model runs (the other agents are numpy), its weights' type, and accelerate's placement
    add_device_argument(llm, dtype=True)
    llm.add_argument("--device-map", choices=("auto",), default=None,
                     help="auto: spread a --hf-path model too large for one GPU over the visible GPUs (and the CPU); "
                          "needs accelerate (pip install accelerate); overrides --device")
    add_output(r, "--out", kind="folder", run_files=("results.json",),
               help="folder for results.json (default: none, nothing written)")
    r.add_argument("--json", action="store_true", help="print the statistics as JSON")
    t = ucli.add_command(sub, "train-regret-loss", train, seed=True, overwrite="write over a previous run in --out", force=True, help="train a model with the regret-loss")
    t.add_argument("--model", default="lsa", choices=("lsa", "transformer"), help="default lsa")
    t.add_argument("--head", default="ball", choices=("ball", "simplex"),
                   help="ball: the theorem's setting (default); simplex: probability vectors")
    t.add_argument("--d", type=ucli.positive_int("--d"), default=2, help="actions (default 2)")
    t.add_argument("--T", type=ucli.positive_int("--T"), default=10, help="rounds per sequence (default 10)")
    t.add_argument("--steps", type=ucli.positive_int("--steps"), default=1500, help="Adam steps (default 1500)")
    t.add_argument("--N", type=ucli.positive_int("--N"), default=1, help="sequences per sample (default 1)")
    t.add_argument("--k", type=float, default=0.0, help="softmax sharpness of the max-surrogate (default 0)")
    add_output(t, "--out", kind="folder", default="results/llm-regret-train", run_files=("results.json", "model.pt"),
               help="folder for results.json and model.pt (the trained weights, a torch state dict)")
    for p in (dp, rp, t):  # the regret-loss models train there (float64); the online agents are numpy
        add_device_argument(p)
    return ucli.run_main(parser, argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
