"""Command line of ``iclr25 {{slug}}``: a table of its commands (``demo``, ``repro``, ``run``)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from iclr25.utils import cli as ucli
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import seed_everything

from .method import example

DEMO_HELP = "the method on built-in data (at most 60 s)"
REPRO_HELP = "the reduced-scale reproduction (at most 10 min)"


def demo(args: argparse.Namespace) -> int:
    rng = seed_everything(args.seed)
    run = RunResult.start("iclr25-{{slug}}", "demo", seed=args.seed, config={"n": 100})
    x = rng.normal(size=100)
    run.add("mean of 100 normals", example(x))
    # the headline beside its trivial reference: the error of the mean vs the error of one sample
    run.add("|error| of the mean", abs(example(x)), peer=float(abs(x).mean()), peer_name="one sample (mean |x_i|)",
            higher_is_better=False, headline=True, claim="mean-beats-one-sample")  # your main claim's id
    return run.publish(args.out)  # saves results.json; the table's first line says whether the headline holds


def run_cmd(args: argparse.Namespace) -> int:
    """Apply the method to a sample of --n normals and print the result (this docstring is ``run --help``'s
    description)."""
    rng = seed_everything(args.seed)
    print(example(rng.normal(size=args.n)))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    # demo and repro (``--out``, ``--seed``, ``--overwrite``); repro is named, not imported: its imports stay
    # out of --help
    parser, sub, _, _ = ucli.method_commands("{{slug}}", "{{title}}", demo=demo, demo_help=DEMO_HELP,
                                             repro="iclr25.{{module}}.repro:run_repro", repro_help=REPRO_HELP)
    r = ucli.add_command(sub, "run", run_cmd, help="the method on your own data", seed=True)
    r.add_argument("--n", type=ucli.positive_int("--n"), default=100, help="sample size (default 100)")
    return ucli.run_main(parser, argv)


__all__ = ["main"]
