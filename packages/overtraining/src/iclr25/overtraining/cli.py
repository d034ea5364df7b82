"""Command line of ``iclr25 overtraining``: ``demo``, ``simulate``, ``analyze`` and ``repro``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from iclr25.utils import cli as ucli
from iclr25.utils.guards import check_size
from iclr25.utils.io import naming_write_errors as writing
from iclr25.utils.outputs import add_output, check_output_path

DESCRIPTION = ("Hidden progress during overtraining: the hidden-layer margin keeps growing after behaviour "
               "saturates (Kumar et al., ICLR 2025).")
DEMO_HELP = "train the odour-task network past E0 and show the hidden progress (under 30 s)"
REPRO_HELP = "the reduced-scale reproduction, 5 seeds (at most 10 min)"
#: the ``--help`` description of a command whose handler has no docstring to read here
DESCRIPTIONS = {
    "simulate": ("Train the network, treat log-spaced checkpoints up to 20*E0 as recording days and "
                 "record noisy hidden units. Writes a .npz with responses (days, trials, neurons), labels "
                 "(+-1), days, stimulus, probe, behaviour and truth_* ground truth; or, with --format "
                 "nwb, one NWB file per day (needs the nwb extra)."),
    "analyze": ("Analyse recordings: a .npz with responses (days, trials, neurons), labels (days, trials; "
                "+-1 or 0/1), days (strictly increasing); optional stimulus (integer ids), probe (bool, "
                "held-out stimuli) and behaviour (1 = correct). Or one NWB file per day, in recording "
                "order (needs the nwb extra): a trials table with a label column, and the units table "
                "(spike counts per trial) or a named time series (mean per trial) as responses."),
}

PACKAGE = "iclr25-overtraining"
#: what ``analyze --out DIR`` writes at the top of DIR (a previous analysis is any of them)
ANALYZE_FILES = ("results.json", "analysis.json", "analysis.png")


def nwb_day_files(days: int) -> tuple[str, ...]:
    """The files ``simulate --format nwb --out DIR`` writes into DIR: one per recording day."""
    return tuple(f"day_{d:03d}.nwb" for d in range(days))


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
    """The handler of subcommand ``name``: the checks before any work, then the command, imported on use (so that
    ``--help`` stays light): ``demo`` in demo.py, ``repro`` in repro.py, ``simulate`` and ``analyze`` below."""
    def handler(args: argparse.Namespace) -> int:
        _check_before_work(name, args)
        from iclr25.utils.device import device_scope

        if name != "analyze":  # an absent --device: one line naming it, before any work (analyze is numpy only)
            from .network import accelerator

            accelerator(args.device)
        # every device=None below (the network's GD, the claims' measuring code) resolves to --device
        with writing(args.out), device_scope(getattr(args, "device", None)):
            if name == "demo":
                from .demo import demo

                return demo(args)
            if name == "repro":
                from .repro import repro

                return repro(args)
            return {"simulate": _simulate, "analyze": _analyze}[name](args)
    return handler


#: stimuli per recording day of ``simulate`` (training + probe) and seconds of one repro seed (measured ~60-100 s)
_STIMULI, _REPRO_SEED_S = 80, 120.0


def _check_before_work(name: str, args: argparse.Namespace) -> None:
    """--out and the sizes, checked before any work or heavy import (exit 2 with one line; --force skips sizes)."""
    force = getattr(args, "force", False)
    if name == "simulate":
        if args.format == "nwb":  # --out was checked as a folder; here every day file it will hold
            check_output_path(args.out, flag="--out", kind="folder", overwrite=args.overwrite,
                              run_files=nwb_day_files(args.days))
            if args.out.suffix.lower() in (".npz", ".nwb"):
                raise ValueError(f"--out must name a folder for the NWB files (--format nwb), got {str(args.out)!r}")
        cells = float(args.days) * args.trials * _STIMULI * args.neurons
        check_size(f"--days {args.days} --trials {args.trials} --neurons {args.neurons}",
                   bytes_needed=8.0 * 4 * cells + 8.0 * 128 * 80 * args.days, seconds_needed=5.0 + cells * 1e-6
                   + args.days * 0.05, force=force)
    elif name == "analyze":
        # the permutation null of the trend tests: (permutations x days) ranks, a few copies, for 2 trends
        check_size(f"--permutations {args.permutations}", bytes_needed=8.0 * 6 * args.permutations * 64,
                   seconds_needed=2 * args.permutations * 64 * 5e-8, force=force)
    elif name == "repro":
        check_size(f"--seeds {args.seeds}", seconds_needed=args.seeds * _REPRO_SEED_S, force=force)


def _simulate(args: argparse.Namespace) -> int:
    """``simulate``: synthetic recordings with known ground truth, as one .npz or one NWB file per day."""
    import math

    from .recordings import save_recordings, simulate_recordings

    out: Path = args.out
    if args.format == "nwb":
        from .nwb import _pynwb

        _pynwb()  # fail before training when the extra is missing
    if not (math.isfinite(args.noise) and 0 <= args.noise < 100):
        raise ValueError(f"--noise must be a number in [0, 100), got {args.noise}")
    if args.neurons > 128:
        raise ValueError(f"--neurons must be at most the network width 128, got {args.neurons}")
    rec = simulate_recordings(n_days=args.days, n_neurons=args.neurons, trials_per_stimulus=args.trials,
                              noise=args.noise, learning=not args.no_learning, seed=args.seed)
    if args.format == "nwb":
        from .nwb import save_nwb

        save_nwb(out, rec)
    else:
        with writing(out):
            save_recordings(out, rec)
    D, T, N = rec.responses.shape
    print(f"wrote {out}: {D} days x {T} trials x {N} neurons (days = epochs {rec.days.tolist()}, "
          f"E0 = {int(rec.truth['E0'])})")
    return 0


def _nwb_options(args: argparse.Namespace) -> dict:
    return {"responses": args.nwb_responses, "label_column": args.nwb_label_column,
            "stimulus_column": args.nwb_stimulus_column, "probe_column": args.nwb_probe_column,
            "behaviour_column": args.nwb_behaviour_column, "n_trials": args.nwb_trials}


def _analysis_config(args: argparse.Namespace) -> dict:
    """What ``analyze`` records as its configuration (the NWB options only for NWB input)."""
    paths = list(args.recordings)
    config = {"recordings": [str(p) for p in paths] if len(paths) > 1 else str(paths[0]), "cv": args.cv,
              "permutations": args.permutations, "reference_day": args.reference_day}
    if any(p.suffix.lower() == ".nwb" for p in paths):
        config["nwb"] = _nwb_options(args)
    return config


def _read_recordings(args: argparse.Namespace):
    """The recordings of ``analyze``: one .npz holding every day, or one NWB file per day."""
    paths = list(args.recordings)
    is_nwb = [p.suffix.lower() == ".nwb" for p in paths]
    if any(is_nwb):
        if not all(is_nwb):
            bad = next(p for p, b in zip(paths, is_nwb) if not b)
            raise ValueError(f"{bad}: NWB input is one .nwb file per day; do not mix it with other files")
        from .nwb import load_nwb

        return load_nwb(paths, **_nwb_options(args))
    if len(paths) > 1:
        raise ValueError(f"{paths[1]}: a .npz recording holds every day; give one .npz file (or .nwb files)")
    from .recordings import load_recordings

    return load_recordings(paths[0])


def _analyze(args: argparse.Namespace) -> int:
    """``analyze``: per-day decoding, margin trend and flips of a user's recordings; writes results.json,
    analysis.json (strict JSON) and analysis.png into --out."""
    import json

    from iclr25.utils.io import atomic_write
    from iclr25.utils.results import RunResult

    from .figures import analysis_figure, table
    from .recordings import analysis_report, analyze_recordings

    run = RunResult.start(PACKAGE, "analyze", seed=args.seed, config=_analysis_config(args))
    rec = _read_recordings(args)
    nd = len(rec.days)
    if args.reference_day is not None and not 0 <= args.reference_day < nd - 1:
        raise ValueError(f"--reference-day must be a day index in [0, {nd - 2}], got {args.reference_day}")
    res = analyze_recordings(rec, cv=args.cv, reference_day=args.reference_day, n_permutations=args.permutations,
                             seed=args.seed)
    run.add("margin trend: Spearman rho(day, margin) from the reference day", res.margin_trend.rho)
    run.add("margin trend: permutation p-value", res.margin_trend.p_value, higher_is_better=False)
    run.add("decoding trend: Spearman rho", res.decoding_trend.rho)
    run.add("decoding trend: permutation p-value", res.decoding_trend.p_value, higher_is_better=False)
    run.add("decoding accuracy, last day - reference day",
            float(res.decoding_accuracy[-1] - res.decoding_accuracy[res.reference_day]))
    run.add("probe stimuli flipping wrong -> right", res.flips.n if res.flips is not None else None)
    report = analysis_report(res)
    notes = res.notes()
    run.notes = " ".join(notes)
    args.out.mkdir(parents=True, exist_ok=True)
    with writing(args.out / "analysis.json"), atomic_write(args.out / "analysis.json") as f:
        f.write(json.dumps(report, indent=2, allow_nan=False) + "\n")
    with writing(args.out / "analysis.png"):
        run.add_figure(analysis_figure(res, args.out / "analysis.png"), relative_to=args.out)
    with writing(args.out / "results.json"):
        run.finish().save(args.out / "results.json")
    print(table(res.table(), ["day", "behaviour", "decoding_accuracy", "probe_accuracy", "margin", "signed_margin",
                              "fld", "fld_ridge_share"]))
    for line in notes:
        print(f"note: {line}")
    print()
    print(run.to_markdown())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    from iclr25.utils.device import add_device_argument

    parser, sub, dp, rp = ucli.method_commands("overtraining", DESCRIPTION, demo=_command("demo"), demo_help=DEMO_HELP,
                                              repro=_command("repro"), repro_help=REPRO_HELP)
    rp.add_argument("--seeds", type=_int_at_least("--seeds", 1), default=5, help="seeds per setting (default 5)")
    ucli.add_force_argument(rp)
    s = ucli.add_command(sub, "simulate", _command("simulate"), seed=True, overwrite="replace an existing --out file (or NWB folder)", force=True, help="generate synthetic recordings (days x trials x neurons) as .npz or NWB",
                         description=DESCRIPTIONS["simulate"])
    add_output(s, "--out", kind="file", required=True, suffixes=(".npz",), run_files=nwb_day_files(1),
               folder_if=lambda a: a.format == "nwb",
               help="the recordings written: an .npz file, or with --format nwb a folder of day_000.nwb, ... "
                    "(a previous run's day files there are written over only with --overwrite)")
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
    a = ucli.add_command(sub, "analyze", _command("analyze"), seed=True, overwrite="write over a previous analysis in --out", force=True, help="per-day decoding, margin trend and flips of a recording (.npz or NWB)",
                         description=DESCRIPTIONS["analyze"])
    a.add_argument("recordings", type=Path, nargs="+", help="the recordings .npz, or NWB files (one per day)")
    add_output(a, "--out", kind="folder", default="results/overtraining-analysis", run_files=ANALYZE_FILES,
               help="folder for results.json, analysis.json and analysis.png")
    a.add_argument("--cv", type=_int_at_least("--cv", 2), default=5, help="cross-validation folds (default 5)")
    a.add_argument("--permutations", type=_int_at_least("--permutations", 1), default=2000,
                   help="permutations of the trend test (default 2000)")
    a.add_argument("--reference-day", type=int, default=None,
                   help="day index flips are counted from (default: first day at the behavioural plateau)")
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
    for p in (dp, rp, s):  # where the network trains: numpy on the CPU, torch float64 on a GPU (analyze: numpy only)
        add_device_argument(p)
    return ucli.run_main(parser, argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
