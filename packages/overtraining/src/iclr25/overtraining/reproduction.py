"""``iclr25 overtraining repro``: the reduced-scale reproduction (5 seeds)."""

from __future__ import annotations

import argparse

from iclr25.utils.results import RunResult

PACKAGE = "iclr25-overtraining"


def repro(args: argparse.Namespace) -> int:
    from .commands import table
    from .experiments import hidden_progress

    run = RunResult.start(PACKAGE, "repro", seed=args.seed, config={"seeds": 5})
    rows = []
    for s in range(5):
        hp = hidden_progress(seed=args.seed + s)
        rows.append({"seed": args.seed + s, "E0": hp.E0, "margin_ratio": hp.margin_ratio, "test_gain": hp.test_gain,
                     "flips": hp.n_flips})
    run.add("mean margin ratio 20*E0 / E0", sum(r["margin_ratio"] for r in rows) / 5)
    run.add("mean held-out gain", sum(r["test_gain"] for r in rows) / 5)
    run.finish().save(args.out / "results.json")
    print(table(rows, list(rows[0])))
    return 0
