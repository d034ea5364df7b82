"""Command line of ``iclr25 llm-regret``: ``demo``, ``run``, ``train-regret-loss`` and ``repro``."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from iclr25.utils.cli import (
    add_force_argument,
    add_run_command,
    method_parser,
    positive_float,
    positive_int,
    run_main,
)
from iclr25.utils.guards import check_out, check_size

PACKAGE = "iclr25-llm-regret"
AGENT_NAMES = ("hedge", "ftrl_l2", "ftpl", "ftl", "uniform", "exp3", "llm")
#: the same tuple as iclr25.llm_regret.llm.ON_PARSE_FAILURE (not imported: --help stays light)
ON_PARSE_FAILURE = ("retry", "uniform", "stop")
#: options of --agent llm only, with the defaults they take there
LLM_DEFAULTS = {"endpoint": None, "model": None, "api_key_env": None, "timeout": 60.0, "http_retries": 2,
                "max_tokens": 512, "temperature": 0.0, "hf_path": None, "replay": None, "transcript": None,
                "feedback": "full", "on_parse_failure": "retry", "parse_retries": 1, "max_parse_failure_rate": 0.1}


def demo(args: argparse.Namespace) -> int:
    from . import commands

    return commands.demo(args)


def repro(args: argparse.Namespace) -> int:
    from . import commands

    return commands.repro(args)


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
    check_size(f"--steps {args.steps} --T {args.T} --d {args.d} --N {args.N}", bytes_needed=bytes_needed,
               seconds_needed=args.steps * per_step, force=args.force)


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


def run(args: argparse.Namespace) -> int:
    check_llm_options(args)
    if args.out is not None:
        check_out(args.out, inputs=[p for p in (args.losses, args.replay) if p is not None],
                  overwrite=args.overwrite)
    check_run_sizes(args)
    from . import commands

    return commands.run(args)


def train(args: argparse.Namespace) -> int:
    check_out(args.out, overwrite=args.overwrite, run_files=("results.json", "model.pt"))
    check_train_sizes(args)
    from . import commands

    return commands.train(args)


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub = method_parser("llm-regret", "Regret of learning agents (LLMs included) in online learning and "
                                "repeated games, and the regret-loss (Park et al., ICLR 2025).")
    add_run_command(sub, "demo", demo, help="regret statistics, a game and a regret-loss model (under 30 s)",
                    default_out="results/llm-regret")
    add_run_command(sub, "repro", repro, help="the reduced-scale reproduction (at most 10 min)",
                    default_out="results/llm-regret-repro")
    r = sub.add_parser("run", help="run one agent on a loss family or on your own losses",
                       description="Run one agent and print the paper's regret statistics (Regret/T, trend-test "
                                   "p-value, log-log slope with a bootstrap interval).")
    src = r.add_mutually_exclusive_group()
    src.add_argument("--env", default="alternating",
                     help="loss family: gaussian, uniform, linear_trend, sine_trend, alternating (default)")
    src.add_argument("--losses", type=Path, help="your own losses: .npy (or .npz with one array) of shape (T, d) "
                                                 "or (n_seeds, T, d), values in [0, 1]")
    r.add_argument("--agent", default="hedge", choices=AGENT_NAMES, help="agent (default hedge)")
    r.add_argument("--T", type=positive_int("--T"), default=None,
                   help="rounds of generated losses (default 200; not with --losses)")
    r.add_argument("--d", type=positive_int("--d"), default=None,
                   help="actions of generated losses (default 2; not with --losses)")
    r.add_argument("--seeds", type=positive_int("--seeds"), default=None,
                   help="independent runs on generated losses (default 50; 1 for llm; not with --losses)")
    r.add_argument("--stride", type=positive_int("--stride"), default=1, help="stride of the trend test (default 1)")
    r.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    llm = r.add_argument_group("llm agent", "options of --agent llm")
    llm.add_argument("--endpoint", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
    llm.add_argument("--model", help="the served model name (with --endpoint)")
    llm.add_argument("--api-key-env", metavar="VAR",
                     help="name of the environment variable holding the endpoint's API key, sent as a bearer token "
                          "(the key itself is never a command-line argument); default: no key")
    llm.add_argument("--timeout", type=positive_float("--timeout"), default=None,
                     help="seconds to wait for each answer of --endpoint before failing (default 60)")
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
    llm.add_argument("--transcript", type=Path, help="write every prompt and answer here (.jsonl)")
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
    r.add_argument("--out", type=Path, help="folder for results.json (default: none)")
    r.add_argument("--json", action="store_true", help="print the statistics as JSON")
    r.add_argument("--overwrite", action="store_true", help="write over a previous run in --out")
    add_force_argument(r)
    r.set_defaults(func=run)
    t = sub.add_parser("train-regret-loss", help="train a model with the regret-loss",
                       description="Minimise the regret-loss L(θ, k, N) with Adam and report the model's structure "
                                   "(linear self-attention) and regret against tuned Hedge.")
    t.add_argument("--model", default="lsa", choices=("lsa", "transformer"), help="default lsa")
    t.add_argument("--head", default="ball", choices=("ball", "simplex"),
                   help="ball: the theorem's setting (default); simplex: probability vectors")
    t.add_argument("--d", type=positive_int("--d"), default=2, help="actions (default 2)")
    t.add_argument("--T", type=positive_int("--T"), default=10, help="rounds per sequence (default 10)")
    t.add_argument("--steps", type=positive_int("--steps"), default=1500, help="Adam steps (default 1500)")
    t.add_argument("--N", type=positive_int("--N"), default=1, help="sequences per sample (default 1)")
    t.add_argument("--k", type=float, default=0.0, help="softmax sharpness of the max-surrogate (default 0)")
    t.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    t.add_argument("--out", type=Path, default=Path("results/llm-regret-train"),
                   help="folder for results.json and model.pt (default results/llm-regret-train)")
    t.add_argument("--overwrite", action="store_true", help="write over a previous run in --out")
    add_force_argument(t)
    t.set_defaults(func=train)
    return run_main(parser, argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
