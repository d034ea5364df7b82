"""``iclr25 {{slug}} repro``: the reduced-scale reproduction of the paper's claims (at most 10 minutes).

Replace the body with the package's experiments; write ``results.json``, the figures and ``claims.json``
(``REGISTRY.run("repro").save(args.out)`` once ``claims.py`` declares the paper's claims).
"""

from __future__ import annotations

import argparse

from iclr25.utils.results import RunResult
from iclr25.utils.seeding import seed_everything

from .method import example


def run_repro(args: argparse.Namespace) -> int:
    """Run the reproduction into ``args.out`` (checked by the command line before any work)."""
    run = RunResult.start("iclr25-{{slug}}", "repro", seed=args.seed, config={"n": 10_000})
    x = seed_everything(args.seed).normal(size=10_000)
    run.add("|error| of the mean", abs(example(x)), peer=float(abs(x).mean()), peer_name="one sample (mean |x_i|)",
            higher_is_better=False, headline=True, claim="mean-beats-one-sample")  # your main claim's id
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    return 0
