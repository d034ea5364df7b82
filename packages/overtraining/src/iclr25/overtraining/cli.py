"""Command line of ``iclr25 overtraining``: ``demo``, ``simulate``, ``analyze`` and ``repro``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from iclr25.utils.cli import add_run_command, method_parser, run_main


def _int_at_least(name: str, low: int):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"{name} must be >= {low}, got {v}")
        return v
    return parse


def _command(name: str):
    def handler(args: argparse.Namespace) -> int:
        from . import commands

        return getattr(commands, name)(args)
    return handler


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub = method_parser("overtraining", "Hidden progress during overtraining: the hidden-layer margin keeps "
                                "growing after behaviour saturates (Kumar et al., ICLR 2025).")
    add_run_command(sub, "demo", _command("demo"), help="train the odour-task network past E0 and show the hidden "
                    "progress (under 30 s)", default_out="results/overtraining")
    rp = add_run_command(sub, "repro", _command("repro"), help="the reduced-scale reproduction, 5 seeds (at most "
                         "10 min)", default_out="results/overtraining-repro")
    rp.add_argument("--seeds", type=_int_at_least("--seeds", 1), default=5, help="seeds per setting (default 5)")
    s = sub.add_parser("simulate", help="generate synthetic recordings (days x trials x neurons) as .npz",
                       description="Train the network, treat log-spaced checkpoints up to 20*E0 as recording days and "
                                   "record noisy hidden units. Writes a .npz with responses (days, trials, neurons), "
                                   "labels (+-1), days, stimulus, probe, behaviour and truth_* ground truth.")
    s.add_argument("--out", type=Path, required=True, help="output .npz file")
    s.add_argument("--days", type=_int_at_least("--days", 3), default=12, help="recording days (default 12)")
    s.add_argument("--neurons", type=_int_at_least("--neurons", 2), default=16,
                   help="recorded cells, at most the width 128 (default 16)")
    s.add_argument("--trials", type=_int_at_least("--trials", 1), default=4,
                   help="trials per stimulus per day (default 4)")
    s.add_argument("--noise", type=float, default=0.3, help="trial noise relative to the RMS rate (default 0.3)")
    s.add_argument("--no-learning", action="store_true",
                   help="freeze the representation at E0 (a null control without hidden progress)")
    s.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    s.set_defaults(func=_command("simulate"))
    a = sub.add_parser("analyze", help="per-day decoding, margin trend and flips of a recording (.npz)",
                       description="Analyse recordings: a .npz with responses (days, trials, neurons), labels "
                                   "(days, trials; +-1 or 0/1), days (strictly increasing); optional stimulus "
                                   "(integer ids), probe (bool, held-out stimuli) and behaviour (1 = correct).")
    a.add_argument("recordings", type=Path, help="the recordings .npz")
    a.add_argument("--out", type=Path, default=Path("results/overtraining-analysis"),
                   help="folder for results.json, analysis.json and analysis.png (default results/overtraining-analysis)")
    a.add_argument("--cv", type=_int_at_least("--cv", 2), default=5, help="cross-validation folds (default 5)")
    a.add_argument("--permutations", type=_int_at_least("--permutations", 1), default=2000,
                   help="permutations of the trend test (default 2000)")
    a.add_argument("--reference-day", type=int, default=None,
                   help="day index flips are counted from (default: first day at the behavioural plateau)")
    a.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    a.set_defaults(func=_command("analyze"))
    return run_main(parser, argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
