"""What the subcommands of ``iclr25 overtraining`` do (kept apart from ``cli.py`` so that ``--help`` stays light)."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import seed_everything

from .figures import analysis_figure, progress_figure, table

PACKAGE = "iclr25-overtraining"


# ------------------------------------------------------------------------------------------------ demo
def demo(args: argparse.Namespace) -> int:
    from .experiments import DEFAULT_CONFIG, DEFAULT_TASK, hidden_progress, linear_max_margin

    seed_everything(args.seed)
    run = RunResult.start(PACKAGE, "demo", seed=args.seed,
                          config={"task": DEFAULT_TASK, "train": vars(DEFAULT_CONFIG), "factor": 20,
                                  "linear_check": "GD on the logistic loss, 40 separable points in 2-D, 1e5 steps"})
    hp = hidden_progress(seed=args.seed)
    lin = linear_max_margin(100_000, seed=args.seed)
    run.add("E0 (first epoch with training accuracy 1)", hp.E0)
    run.add("normalised hidden margin at 20*E0", hp.margin_end, peer=hp.margin_E0,
            peer_name="margin at E0 (behaviour already at ceiling)", higher_is_better=True, headline=True)
    run.add("normalised hidden margin at 20*E0 / at E0", hp.margin_ratio, higher_is_better=True)
    run.add("held-out accuracy gain E0 -> 20*E0", hp.test_gain, higher_is_better=True)
    run.add("held-out examples flipping wrong -> right after E0", hp.n_flips)
    run.add("min training accuracy in [E0, 20*E0]", hp.train_acc_min_after_E0)
    run.add("Fisher discriminant at 20*E0 / at E0", hp.fld_end / hp.fld_E0)
    run.add("linear logistic GD: cos(w_t, w_SVM) at 1e5 steps", float(lin["cosine"][-1]), higher_is_better=True)
    t_loss = lin["t_loss"][lin["steps"] >= 1000]
    run.add("linear logistic GD: max/min of t*loss(t) over t in [1e3, 1e5]", float(t_loss.max() / t_loss.min()))
    run.add_figure(progress_figure([hp], args.out / "hidden_progress.png",
                                   title="hidden progress after behaviour saturates (E0 dotted, 20*E0 dashed)"),
                   relative_to=args.out)
    run.finish().save(args.out / "results.json")
    rows = [{"epoch": c.epoch, "train_acc": c.train_acc, "test_acc": c.test_acc, "margin": c.margin, "fld": c.fld,
             "alignment": c.alignment} for c in hp.run.checkpoints if c.epoch <= hp.end_epoch][::3]
    print(table(rows, ["epoch", "train_acc", "test_acc", "margin", "fld", "alignment"]))
    print()
    print(run.to_markdown())
    return 0


# -------------------------------------------------------------------------------------------- simulate
def simulate(args: argparse.Namespace) -> int:
    from .recordings import save_recordings, simulate_recordings

    out: Path = args.out
    if args.format == "npz" and out.suffix.lower() != ".npz":
        raise ValueError(f"--out must name a .npz file, got {str(out)!r}")
    if args.format == "nwb":
        if out.suffix.lower() in (".npz", ".nwb") or out.is_file():
            raise ValueError(f"--out must name a folder for the NWB files (--format nwb), got {str(out)!r}")
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
        save_recordings(out, rec)
    D, T, N = rec.responses.shape
    print(f"wrote {out}: {D} days x {T} trials x {N} neurons (days = epochs {rec.days.tolist()}, "
          f"E0 = {int(rec.truth['E0'])})")
    return 0


# --------------------------------------------------------------------------------------------- analyze
def _finite(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def analysis_report(res) -> dict:
    """The content of ``analysis.json``: strict JSON, every missing number ``null`` with its reason beside it."""
    sep = set(res.non_separable_days)
    per_day = []
    for i, row in enumerate(res.table()):
        why = {}
        if i in sep:
            why["margin"] = ("classes not linearly separable on this day (hard-margin SVM has no solution); "
                             "signed_margin holds the soft-margin SVM's signed margin")
        if not math.isfinite(row["probe_accuracy"]):
            why["probe_accuracy"] = "no probe (held-out) stimuli in the recording"
        if not math.isfinite(row["behaviour"]):
            why["behaviour"] = "behaviour not recorded"
        for k, v in row.items():
            if not math.isfinite(v) and k not in why:
                why[k] = "not computable on this day"
        kind = {"margin_kind": "soft (not separable)" if i in sep else "hard"}
        per_day.append({k: _finite(v) for k, v in row.items()} | kind | ({"null_reasons": why} if why else {}))

    def trend(t, used, note):
        d = {"rho": _finite(t.rho), "p_value": _finite(t.p_value), "n_permutations": t.n_permutations,
             "day_indices": list(used), "days": [_finite(res.days[i]) for i in used]}
        return d | ({"null_reason": note} if note else {})

    return {"days": [_finite(x) for x in res.days], "reference_day": res.reference_day, "per_day": per_day,
            "non_separable_day_indices": list(res.non_separable_days),
            "non_separable_days": [_finite(res.days[i]) for i in res.non_separable_days],
            "margin_trend": trend(res.margin_trend, res.margin_trend_days, res.margin_trend_note)
            | {"measure": res.margin_trend_measure},
            "decoding_trend": trend(res.decoding_trend, res.decoding_trend_days, res.decoding_trend_note),
            "flips": None if res.flips is None else
            {"stimuli": res.probe_stimuli[res.flips.indices].tolist(),
             "flip_day_index": res.flips.flip_at.tolist(),
             "right_to_wrong": res.probe_stimuli[res.flips.right_to_wrong].tolist()},
            "notes": res.notes()}


def analyze(args: argparse.Namespace) -> int:
    from .recordings import analyze_recordings, load_recordings

    paths = list(args.recordings)
    nwb_opts = {"responses": args.nwb_responses, "label_column": args.nwb_label_column,
                "stimulus_column": args.nwb_stimulus_column, "probe_column": args.nwb_probe_column,
                "behaviour_column": args.nwb_behaviour_column, "n_trials": args.nwb_trials}
    is_nwb = [p.suffix.lower() == ".nwb" for p in paths]
    config = {"recordings": [str(p) for p in paths] if len(paths) > 1 else str(paths[0]), "cv": args.cv,
              "permutations": args.permutations, "reference_day": args.reference_day}
    if any(is_nwb):
        config["nwb"] = nwb_opts
    run = RunResult.start(PACKAGE, "analyze", seed=args.seed, config=config)
    if any(is_nwb):
        if not all(is_nwb):
            bad = next(p for p, b in zip(paths, is_nwb) if not b)
            raise ValueError(f"{bad}: NWB input is one .nwb file per day; do not mix it with other files")
        from .nwb import load_nwb

        rec = load_nwb(paths, **nwb_opts)
    else:
        if len(paths) > 1:
            raise ValueError(f"{paths[1]}: a .npz recording holds every day; give one .npz file (or .nwb files)")
        rec = load_recordings(paths[0])
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
    with atomic_write(args.out / "analysis.json") as f:
        f.write(json.dumps(report, indent=2, allow_nan=False) + "\n")
    run.add_figure(analysis_figure(res, args.out / "analysis.png"), relative_to=args.out)
    run.finish().save(args.out / "results.json")
    print(table(res.table(), ["day", "behaviour", "decoding_accuracy", "probe_accuracy", "margin", "signed_margin",
                              "fld", "fld_ridge_share"]))
    for line in notes:
        print(f"note: {line}")
    print()
    print(run.to_markdown())
    return 0


# ----------------------------------------------------------------------------------------------- repro
def repro(args: argparse.Namespace) -> int:
    from .repro import repro as run_repro

    return run_repro(args)
