"""Command line of ``iclr25 {{slug}}``: ``demo`` and ``repro``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from iclr25.utils.cli import add_run_command, method_parser, run_main
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
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())  # its first line says whether the headline holds
    return 0


def repro(args: argparse.Namespace) -> int:
    from .repro import run_repro  # noqa: PLC0415 - the reproduction's imports stay out of --help

    return run_repro(args)


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub = method_parser("{{slug}}", "{{title}}")
    add_run_command(sub, "demo", demo, help="the method on built-in data (at most 60 s)",
                    default_out="results/{{slug}}")
    add_run_command(sub, "repro", repro, help="the reduced-scale reproduction (at most 10 min)",
                    default_out="results/{{slug}}-repro")
    return run_main(parser, argv)
