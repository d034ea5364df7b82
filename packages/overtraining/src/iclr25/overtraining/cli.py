"""Command line of ``iclr25 overtraining``: ``demo``, ``simulate``, ``analyze`` and ``repro``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from iclr25.utils.cli import add_force_argument, add_run_command, method_parser, run_main
from iclr25.utils.guards import check_out, check_size


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
        _check_before_work(name, args)
        from . import commands

        return getattr(commands, name)(args)
    return handler


#: stimuli per recording day of ``simulate`` (training + probe) and seconds of one repro seed (measured ~60-100 s)
_STIMULI, _REPRO_SEED_S = 80, 120.0


def _check_before_work(name: str, args: argparse.Namespace) -> None:
    """--out and the sizes, checked before any work or heavy import (exit 2 with one line; --force skips sizes)."""
    force = getattr(args, "force", False)
    if name == "simulate":
        check_out(args.out, overwrite=args.overwrite, kind="folder" if args.format == "nwb" else "file",
                  run_files=("day_000.nwb",))
        cells = float(args.days) * args.trials * _STIMULI * args.neurons
        check_size(f"--days {args.days} --trials {args.trials} --neurons {args.neurons}",
                   bytes_needed=8.0 * 4 * cells + 8.0 * 128 * 80 * args.days, seconds_needed=5.0 + cells * 1e-6
                   + args.days * 0.05, force=force)
    elif name == "analyze":
        check_out(args.out, inputs=args.recordings, overwrite=args.overwrite,
                  run_files=("results.json", "analysis.json"))
        # the permutation null of the trend tests: (permutations x days) ranks, a few copies, for 2 trends
        check_size(f"--permutations {args.permutations}", bytes_needed=8.0 * 6 * args.permutations * 64,
                   seconds_needed=2 * args.permutations * 64 * 5e-8, force=force)
    elif name == "repro":
        check_size(f"--seeds {args.seeds}", seconds_needed=args.seeds * _REPRO_SEED_S, force=force)


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub = method_parser("overtraining", "Hidden progress during overtraining: the hidden-layer margin keeps "
                                "growing after behaviour saturates (Kumar et al., ICLR 2025).")
    add_run_command(sub, "demo", _command("demo"), help="train the odour-task network past E0 and show the hidden "
                    "progress (under 30 s)", default_out="results/overtraining")
    rp = add_run_command(sub, "repro", _command("repro"), help="the reduced-scale reproduction, 5 seeds (at most "
                         "10 min)", default_out="results/overtraining-repro")
    rp.add_argument("--seeds", type=_int_at_least("--seeds", 1), default=5, help="seeds per setting (default 5)")
    add_force_argument(rp)
    s = sub.add_parser("simulate", help="generate synthetic recordings (days x trials x neurons) as .npz or NWB",
                       description="Train the network, treat log-spaced checkpoints up to 20*E0 as recording days and "
                                   "record noisy hidden units. Writes a .npz with responses (days, trials, neurons), "
                                   "labels (+-1), days, stimulus, probe, behaviour and truth_* ground truth; "
                                   "or, with --format nwb, one NWB file per day (needs the nwb extra).")
    s.add_argument("--out", type=Path, required=True, help="output .npz file (or folder, with --format nwb)")
    s.add_argument("--format", choices=("npz", "nwb"), default="npz",
                   help="npz (default) or nwb: DIR/day_000.nwb, ... with a trials table and a 'responses' series")
    s.add_argument("--days", type=_int_at_least("--days", 3), default=12, help="recording days (default 12)")
    s.add_argument("--neurons", type=_int_at_least("--neurons", 2), default=16,
                   help="recorded cells, at most the width 128 (default 16)")
    s.add_argument("--trials", type=_int_at_least("--trials", 1), default=4,
                   help="trials per stimulus per day (default 4)")
    s.add_argument("--noise", type=float, default=0.3, help="trial noise relative to the RMS rate (default 0.3)")
    s.add_argument("--no-learning", action="store_true",
                   help="freeze the representation at E0 (a null control without hidden progress)")
    s.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    s.add_argument("--overwrite", action="store_true", help="replace an existing --out file (or NWB folder)")
    add_force_argument(s)
    s.set_defaults(func=_command("simulate"))
    a = sub.add_parser("analyze", help="per-day decoding, margin trend and flips of a recording (.npz or NWB)",
                       description="Analyse recordings: a .npz with responses (days, trials, neurons), labels "
                                   "(days, trials; +-1 or 0/1), days (strictly increasing); optional stimulus "
                                   "(integer ids), probe (bool, held-out stimuli) and behaviour (1 = correct). "
                                   "Or one NWB file per day, in recording order (needs the nwb extra): a trials "
                                   "table with a label column, and the units table (spike counts per trial) or a "
                                   "named time series (mean per trial) as responses.")
    a.add_argument("recordings", type=Path, nargs="+", help="the recordings .npz, or NWB files (one per day)")
    a.add_argument("--out", type=Path, default=Path("results/overtraining-analysis"),
                   help="folder for results.json, analysis.json and analysis.png (default results/overtraining-analysis)")
    a.add_argument("--cv", type=_int_at_least("--cv", 2), default=5, help="cross-validation folds (default 5)")
    a.add_argument("--permutations", type=_int_at_least("--permutations", 1), default=2000,
                   help="permutations of the trend test (default 2000)")
    a.add_argument("--reference-day", type=int, default=None,
                   help="day index flips are counted from (default: first day at the behavioural plateau)")
    a.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    a.add_argument("--overwrite", action="store_true", help="write over a previous analysis in --out")
    add_force_argument(a)
    nwb = a.add_argument_group("NWB input")
    nwb.add_argument("--nwb-responses", default="units", metavar="SOURCE",
                     help="'units' (spike counts per trial window, default) or a time series path such as "
                          "'responses' or 'ophys/Fluorescence/RoiResponseSeries' (mean per trial window)")
    nwb.add_argument("--nwb-label-column", default="label", metavar="COL",
                     help="trials column with the class: -1/+1, 0/1 or booleans (default label)")
    nwb.add_argument("--nwb-stimulus-column", default=None, metavar="COL", help="trials column of stimulus ids")
    nwb.add_argument("--nwb-probe-column", default=None, metavar="COL",
                     help="trials column flagging held-out stimuli")
    nwb.add_argument("--nwb-behaviour-column", default=None, metavar="COL",
                     help="trials column with 1 = correct choice")
    nwb.add_argument("--nwb-trials", type=_int_at_least("--nwb-trials", 2), default=None, metavar="N",
                     help="keep the first N trials of each day (when days differ in trial counts)")
    a.set_defaults(func=_command("analyze"))
    return run_main(parser, argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
