"""Command line of ``iclr25 {{slug}}``: a table of its commands (``demo``, ``repro``, ``run``)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from iclr25.utils import cli as ucli
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import seed_everything

from .method import example


def demo(args: argparse.Namespace) -> int:
    rng = seed_everything(args.seed)
    run = RunResult.start("iclr25-{{slug}}", "demo", seed=args.seed, config={"n": 100})
    x = rng.normal(size=100)
    run.add("mean of 100 normals", example(x))
    # the headline beside its trivial reference: the error of the mean vs the error of one sample
    run.add("|error| of the mean", abs(example(x)), peer=float(abs(x).mean()), peer_name="one sample (mean |x_i|)",
            higher_is_better=False, headline=True)
    return run.publish(args.out)  # saves results.json; the table's first line says whether the headline holds


def run_cmd(args: argparse.Namespace) -> int:
    rng = seed_everything(args.seed)
    print(example(rng.normal(size=args.n)))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub = ucli.method_parser("{{slug}}", "{{title}}")
    ucli.add_run_command(sub, "demo", demo, help="the method on built-in data (at most 60 s)",
                         default_out="results/{{slug}}")
    # named, not imported: the reproduction's imports stay out of --help
    ucli.add_run_command(sub, "repro", "iclr25.{{module}}.repro:run_repro",
                         help="the reduced-scale reproduction (at most 10 min)", default_out="results/{{slug}}-repro")
    r = ucli.add_command(sub, "run", run_cmd, help="the method on your own data", seed=True)
    r.add_argument("--n", type=ucli.positive_int("--n"), default=100, help="sample size (default 100)")
    return ucli.run_main(parser, argv)


__all__ = ["main"]
