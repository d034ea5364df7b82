"""``iclr25 overtraining repro``: the reduced-scale reproduction of the paper's synthetic-model claims, 5 seeds.

Parts: hidden progress after E₀; the overlap ladder (late gains shrink at high odour overlap) and an ablation\nof its likely causes (label base rate, training-set size, how overlap is raised, laziness); weight decay
and laziness controls; overtraining reversal / non-reversal / new-target shifts with the kernel alignments;
the linear max-margin theory; the recording pipeline against its ground truth; peers (scikit-learn SVC margins
as the reference for ours, LogisticRegression on fixed features as the no-feature-learning baseline) and the
monitor's overhead per epoch. Writes ``results.json``, ``repro.md`` (the README tables) and figures.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import numpy as np

from iclr25.utils.io import atomic_write
from iclr25.utils.io import naming_write_errors as writing
from iclr25.utils.results import RunResult

PACKAGE = "iclr25-overtraining"
SEEDS = 5


def _mean(rows, key):
    v = np.array([r[key] for r in rows], dtype=np.float64)
    return float(np.nanmean(v)) if np.any(np.isfinite(v)) else float("nan")


def repro(args: argparse.Namespace) -> int:
    """Run the reproduction (the parts of the module doc, in order) over ``args.seeds`` seeds from
    ``args.seed`` (default 5) and the claims registry's ``repro`` rung; write ``args.out``."""
    from iclr25.utils.progress import progress
    from iclr25.utils.seeding import seed_everything

    from .experiments import DEFAULT_CONFIG, DEFAULT_TASK

    seed_everything(args.seed)
    out: Path = args.out
    seeds = [args.seed + s for s in range(getattr(args, "seeds", SEEDS))]
    run = RunResult.start(PACKAGE, "repro", seed=args.seed,
                          config={"seeds": seeds, "task": DEFAULT_TASK, "train": vars(DEFAULT_CONFIG), "factor": 20})
    from .network import device_name

    run.machine["device"] = device_name(getattr(args, "device", None))  # every run below trains there
    md: list[str] = [f"Seeds {seeds}; task {DEFAULT_TASK}; network {vars(DEFAULT_CONFIG)}.", ""]
    steps = {"progress": _step_progress, "overlap": _step_overlap, "controls": _step_controls,
             "shifts": _step_shifts, "linear": _step_linear, "recordings": _step_recordings, "peers": _step_peers}
    hps: list = []      # the hidden-progress runs of the first step, reused by the peers
    for step in progress(list(steps), desc="repro"):
        steps[step](run, md, seeds, out, hps)
    _claims_and_write(run, md, out)
    return 0


def _step_progress(run: RunResult, md: list[str], seeds: list[int], out: Path, hps: list) -> None:
    """Step of :func:`repro`: hidden progress after E0 (rich regime, overlap 0.3) per seed; fills ``hps``."""
    from .experiments import hidden_progress
    from .figures import progress_figure, table

    rows_hp = []
    for s in seeds:
        hp = hidden_progress(seed=s)
        hps.append(hp)
        rows_hp.append({"seed": s, "E0": hp.E0, "train acc min [E0, 20E0]": hp.train_acc_min_after_E0,
                        "margin E0": hp.margin_E0, "margin 20E0": hp.margin_end,
                        "margin ratio": hp.margin_ratio, "Spearman(epoch, margin)": hp.margin_spearman,
                        "FLD ratio": hp.fld_end / hp.fld_E0, "held-out E0": hp.test_acc_E0,
                        "held-out 20E0": hp.test_acc_end, "held-out gain": hp.test_gain,
                        "flips wrong->right": hp.n_flips})
    cols = list(rows_hp[0])
    md += ["### Hidden progress after E0 (rich regime, overlap 0.3)", "", table(rows_hp, cols), ""]
    run.add("mean margin ratio 20*E0 / E0 (claim >= 1.5)", _mean(rows_hp, "margin ratio"))
    run.add("min over seeds of the margin ratio", min(r["margin ratio"] for r in rows_hp))
    run.add("mean held-out gain E0 -> 20*E0 (claim >= 0.05)", _mean(rows_hp, "held-out gain"))
    run.add("seeds with >= 1 held-out flip wrong -> right (claim >= 4 of 5)",
            sum(r["flips wrong->right"] >= 1 for r in rows_hp), unit=f"of {len(seeds)}")
    run.add("min training accuracy in [E0, 20*E0] over seeds",
            min(r["train acc min [E0, 20E0]"] for r in rows_hp))
    run.add_figure(progress_figure(hps, out / "hidden_progress.png",
                                   title="5 seeds: margin and held-out accuracy grow with behaviour flat"),
                   relative_to=out)


def _overlap_row(seeds: list[int], label: str, task_kwargs: dict, config=None) -> dict:
    """One row of the overlap ladder: hidden progress over ``seeds`` on the task with ``task_kwargs``."""
    from .experiments import DEFAULT_TASK, hidden_progress
    from .task import make_odour_task

    res = []
    for s in seeds:
        try:
            res.append(hidden_progress(task_kwargs, config, seed=s))
        except ValueError:  # never reached training accuracy 1
            pass
    if not res:
        return {"setting": label, "overlap n/k": float("nan"), "seeds done": 0}
    task = make_odour_task(**(DEFAULT_TASK | task_kwargs), seed=seeds[0])
    acc0 = float(np.mean([h.test_acc_E0 for h in res]))
    gain = float(np.mean([h.test_gain for h in res]))
    return {"setting": label, "overlap n/k": task.overlap,
            "P(y=+1) test": float(np.mean(task.y_test > 0)), "seeds done": len(res),
            "E0 (mean)": float(np.mean([h.E0 for h in res])), "held-out E0": acc0,
            "held-out gain": gain,
            "gain / headroom": gain / (1 - acc0) if acc0 < 1 else float("nan"),
            "gain SE": float(np.std([h.test_gain for h in res], ddof=1) / np.sqrt(len(res)))
            if len(res) > 1 else float("nan"),
            "margin ratio": float(np.mean([h.margin_ratio for h in res])),
            "flips": float(np.mean([h.n_flips for h in res]))}


def _step_overlap(run: RunResult, md: list[str], seeds: list[int], out: Path, hps: list) -> None:
    """Step of :func:`repro`: the overlap ladder and the ablation of its likely causes."""
    from .experiments import DEFAULT_CONFIG
    from .figures import table

    ladder = [_overlap_row(seeds, f"n = {n}", {"n_components": n}) for n in (2, 3, 6, 9, 12, 16)]
    cols = list(max(ladder, key=len))
    md += ["### Overlap ladder", "", f"k = 20 odorants, n components per mixture; {len(seeds)} seeds each; a "
           "setting whose network never reaches training accuracy 1 within the epoch cap shows 0 seeds done. "
           "The claim `late-gain-shrinks-at-high-overlap` is decided per seed in the claims below.", "",
           table(ladder, cols), ""]
    by_n = {r["setting"]: r for r in ladder}
    g = {n: by_n[f"n = {n}"]["held-out gain"] for n in (3, 6, 12)}
    run.add("held-out gain at overlap 0.6 / at 0.3 (claim < 0.5)", g[12] / g[6] if g[6] else None)
    run.add("held-out gain at overlap 0.15", g[3])
    run.add("held-out gain at overlap 0.6", g[12])
    # ablation of the likely causes: the label base rate, the training-set size, the way overlap is raised
    abl = [_overlap_row(seeds, "n = 3, 80 train mixtures", {"n_components": 3, "n_train": 80}),
           _overlap_row(seeds, "n = 12, 80 train mixtures", {"n_components": 12, "n_train": 80}),
           _overlap_row(seeds, "k = 10, n = 3 (overlap 0.3 from fewer odorants)",
                        {"n_odorants": 10, "n_components": 3}),
           _overlap_row(seeds, "k = 10, n = 6 (overlap 0.6 from fewer odorants)",
                        {"n_odorants": 10, "n_components": 6}),
           _overlap_row(seeds, "n = 12, lazier alpha = 4", {"n_components": 12},
                        dataclasses.replace(DEFAULT_CONFIG, alpha=4.0)),
           _overlap_row(seeds, "n = 3, lazier alpha = 4", {"n_components": 3},
                        dataclasses.replace(DEFAULT_CONFIG, alpha=4.0))]
    md += ["### Overlap claim: ablation of its likely causes (5 seeds each)", "",
           table(abl, cols), ""]


def _step_controls(run: RunResult, md: list[str], seeds: list[int], out: Path, hps: list) -> None:
    """Step of :func:`repro`: weight decay, SGD and laziness controls of the late gain."""
    from .experiments import DEFAULT_CONFIG, hidden_progress
    from .figures import table

    rows = []
    for name, cfg in (("rich, lambda = 0", DEFAULT_CONFIG),
                      ("weight decay 1e-3", dataclasses.replace(DEFAULT_CONFIG, weight_decay=1e-3)),
                      ("weight decay 1e-2", dataclasses.replace(DEFAULT_CONFIG, weight_decay=1e-2)),
                      ("weight decay 3e-2", dataclasses.replace(DEFAULT_CONFIG, weight_decay=3e-2)),
                      ("SGD, batch 8", dataclasses.replace(DEFAULT_CONFIG, batch_size=8, lr=0.01)),
                      ("lazier, alpha = 4", dataclasses.replace(DEFAULT_CONFIG, alpha=4.0))):
        res = []
        for s in seeds:
            try:
                res.append(hidden_progress(config=cfg, seed=s))
            except ValueError:      # never reached training accuracy 1
                pass
        if not res:
            rows.append({"setting": name, "E0 (mean)": None, "margin ratio": None, "held-out gain": None,
                         "flips": None})
            continue
        rows.append({"setting": name, "E0 (mean)": float(np.mean([h.E0 for h in res])),
                     "margin ratio": float(np.mean([h.margin_ratio for h in res])),
                     "held-out gain": float(np.mean([h.test_gain for h in res])),
                     "flips": float(np.mean([h.n_flips for h in res]))})
    md += ["### Controls: weight decay, SGD, laziness (5 seeds each)", "", table(rows, list(rows[0])), ""]
    base = rows[0]["held-out gain"]
    wd = rows[3]["held-out gain"]
    run.add("late gain with weight decay 3e-2 / without (claim < 1)",
            wd / base if base and wd is not None else None)
    run.add("margin ratio with weight decay 3e-2", rows[3]["margin ratio"])


def _step_shifts(run: RunResult, md: list[str], seeds: list[int], out: Path, hps: list) -> None:
    """Step of :func:`repro`: task changes after overtraining vs stopping at the plateau, with the kernel
    alignments, and the reversal ladder (:func:`_reversal_ladder`)."""
    from .experiments import DEFAULT_CONFIG, DEFAULT_TASK
    from .figures import table
    from .protocols import overtraining_shift
    from .task import PROTOCOLS, make_odour_task

    rows = []
    for proto in PROTOCOLS:
        res = [overtraining_shift(make_odour_task(**DEFAULT_TASK, seed=s), DEFAULT_CONFIG, protocol=proto,
                                  seed=s) for s in seeds]
        r = {"protocol": proto,
             "epochs plateau-stopped": float(np.mean([x.epochs_plateau for x in res])),
             "epochs overtrained": float(np.mean([x.epochs_overtrained for x in res])),
             "ratio (mean of seeds)": float(np.nanmean([x.ratio for x in res])),
             "A(K0)": float(np.mean([x.alignment_initial for x in res])),
             "A(K plateau)": float(np.mean([x.alignment_plateau for x in res])),
             "A(K over)": float(np.mean([x.alignment_overtrained for x in res])),
             "seeds with A ordered": sum(x.alignment_overtrained > x.alignment_plateau > x.alignment_initial
                                         for x in res)}
        rows.append(r)
    md += ["### Task changes after overtraining (20*E0) vs stopping at the plateau (E0); epochs to 100 % "
           "training accuracy on the new labels", "", table(rows, list(rows[0])), ""]
    ladder = _reversal_ladder(seeds)
    md += ["### Reversal: ladder of overtraining budgets x ablations", "",
           table(ladder, list(ladder[0])), ""]
    run.add("reversal with the readout reset to a0, 20*E0: ratio", ladder[-3]["ratio of means"])
    run.add("reversal with the norm matched to the plateau copy, 20*E0: ratio", ladder[-2]["ratio of means"])
    run.add("reversal, features frozen (readout only), 20*E0: ratio (claim <= 0.7)",
            ladder[-1]["ratio of means"])
    run.add("reversal: epochs overtrained / plateau-stopped (claim <= 0.7)", rows[0]["ratio (mean of seeds)"])
    run.add("seeds with A(K over) > A(K plateau) > A(K0)", rows[0]["seeds with A ordered"])


def _reversal_ladder(seeds: list[int]) -> list[dict]:
    """The reversal claim across a ladder of overtraining budgets, with the readout kept or reset."""
    from .experiments import DEFAULT_CONFIG, DEFAULT_TASK
    from .protocols import overtraining_shift
    from .task import make_odour_task

    ladder = []
    max_ep = 5000

    def ep(x, cap=max_ep):
        return cap if x is None else x

    for factor in (2, 5, 20):
        for reset, match, ro in ((False, False, False), (True, False, False), (False, True, False),
                                 (False, False, True)):
            res = [overtraining_shift(make_odour_task(**DEFAULT_TASK, seed=s), DEFAULT_CONFIG,
                                      protocol="reversal", overtrain_factor=factor, reset_readout=reset,
                                      match_norm=match, readout_only=ro, max_epochs=max_ep, seed=s)
                   for s in seeds]
            censored = sum(x.epochs_plateau is None or x.epochs_overtrained is None for x in res)
            ladder.append({"overtraining": f"{factor}*E0",
                           "ablation": "readout reset to a0" if reset else
                           ("norm matched to plateau" if match else
                            ("features frozen, readout only" if ro else "none")),
                           "epochs plateau": float(np.mean([ep(x.epochs_plateau) for x in res])),
                           "epochs overtrained": float(np.mean([ep(x.epochs_overtrained) for x in res])),
                           "ratio of means": float(np.mean([ep(x.epochs_overtrained) for x in res])
                                                   / np.mean([ep(x.epochs_plateau) for x in res])),
                           f"runs not done by {max_ep} (counted as {max_ep})": censored,
                           "A(K over)": float(np.mean([x.alignment_overtrained for x in res]))})
    return ladder


def _step_linear(run: RunResult, md: list[str], seeds: list[int], out: Path, hps: list) -> None:
    """Step of :func:`repro`: linear logistic regression on separable data against the max-margin theory."""
    from .experiments import linear_max_margin
    from .figures import table

    rows = []
    for s in seeds:
        lin = linear_max_margin(100_000, n=40, d=5, seed=s)
        tl = lin["t_loss"][lin["steps"] >= 1000]
        rows.append({"seed": s, "cos at 1e2": float(lin["cosine"][np.searchsorted(lin["steps"], 100)]),
                     "cos at 1e5": float(lin["cosine"][-1]), "max/min t*loss, t in [1e3, 1e5]":
                     float(tl.max() / tl.min())})
    md += ["### Linear logistic regression on separable data (40 points, d = 5, GD lr 1)", "",
           table(rows, list(rows[0])), ""]
    run.add("linear: min cos(w_t, w_SVM) at 1e5 steps (claim > 0.99)", min(r["cos at 1e5"] for r in rows))


def _step_recordings(run: RunResult, md: list[str], seeds: list[int], out: Path, hps: list) -> None:
    """Step of :func:`repro`: the recording pipeline against the ground truth of generated recordings."""
    from .figures import table
    from .geometry import example_flips
    from .recordings import analyze_recordings, simulate_recordings

    rows = []
    for s in seeds:
        for learning in (True, False):
            rec = simulate_recordings(n_days=12, trials_per_stimulus=8, learning=learning, seed=s)
            res = analyze_recordings(rec, cv=4, n_permutations=1000, seed=s)
            tf = set(example_flips(rec.truth["probe_correct"], start=res.reference_day).indices.tolist())
            got = set(res.flips.indices.tolist()) if res.flips is not None else set()
            ok = np.isfinite(res.margin) & np.isfinite(rec.truth["margin"])
            rows.append({"seed": s, "learning": learning, "margin rho": res.margin_trend.rho,
                         "margin p": res.margin_trend.p_value,
                         "corr(margin, true margin)": float(np.corrcoef(res.margin[ok],
                                                                        rec.truth["margin"][ok])[0, 1])
                         if ok.sum() > 2 else float("nan"),
                         "decoding first -> last": f"{res.decoding_accuracy[0]:.2f} -> "
                                                   f"{res.decoding_accuracy[-1]:.2f}",
                         "behaviour after ref (min)": float(res.behaviour[res.reference_day:].min()),
                         "true flips": len(tf), "recovered": len(got), "in common": len(got & tf)})
    md += ["### Recording pipeline vs ground truth (12 days, 16 cells, 8 trials/stimulus, noise 0.3)", "",
           table(rows, list(rows[0])), ""]
    learn = [r for r in rows if r["learning"]]
    run.add("recordings: seeds with margin trend p < 0.05 (learning)", sum(r["margin p"] < 0.05 for r in learn))
    run.add("recordings: seeds with margin trend p < 0.05 (frozen null)",
            sum(r["margin p"] < 0.05 for r in rows if not r["learning"]))


def _step_peers(run: RunResult, md: list[str], seeds: list[int], out: Path, hps: list) -> None:
    """Step of :func:`repro`: the peers (:func:`_peers`) on the first seed's hidden-progress run."""
    from .figures import table

    rows = _peers(hps[0])
    md += ["### Peers", "", table(rows, list(rows[0])), ""]
    for r in rows:
        if r.get("metric") == "max |margin ours - SVC| over checkpoints":
            run.add("max |our margin - sklearn SVC margin| on hidden features", r["value"],
                    higher_is_better=False)
        if r.get("metric") == "monitor time / GD epoch time":
            run.add("monitor overhead: one call / one GD epoch", r["value"], timing=True)


def _claims_and_write(run: RunResult, md: list[str], out: Path) -> None:
    """Step of :func:`repro`: the claims over the ``repro`` rung's seeds, then ``claims.json``, ``repro.md`` and
    ``results.json``, and the tables on stdout."""
    from .claims import REGISTRY

    report = REGISTRY.run("repro", command="iclr25 overtraining repro")
    md += ["### Claims over seeds " + ", ".join(str(s) for s in REGISTRY.rung_seeds("repro")), ""]
    md += [r.explain() for r in report.results] + [""]
    md_text = "\n".join(md)
    out.mkdir(parents=True, exist_ok=True)
    with writing(out / "claims.json"):
        report.save(out / "claims.json")
    with writing(out / "repro.md"), atomic_write(out / "repro.md") as f:
        f.write(md_text + "\n")
    with writing(out / "results.json"):
        run.finish().save(out / "results.json")
    print(md_text)
    print(run.to_markdown())


def _peers(hp) -> list[dict]:
    """scikit-learn SVC margins vs ours on the hidden features of every checkpoint; the fixed-feature logistic
    baseline; the monitor's overhead per epoch."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import SVC

    from .experiments import DEFAULT_CONFIG, DEFAULT_TASK
    from .geometry import normalised_margin, rms_normalise
    from .monitor import HiddenProgressMonitor
    from .network import hidden, loss_and_grad
    from .task import make_odour_task

    task = make_odour_task(**DEFAULT_TASK, seed=0)
    diffs = []
    for c in hp.run.checkpoints:
        H = rms_normalise(hidden(c.params, task.X_train))
        if not np.isfinite(c.margin):
            continue
        ref = SVC(kernel="linear", C=1e8, tol=1e-12).fit(H, task.y_train)
        diffs.append(abs(normalised_margin(H, task.y_train) - 1.0 / np.linalg.norm(ref.coef_)))
    p0 = hp.run.checkpoints[0].params
    H0 = hidden(p0, task.X_train)
    Ht0 = hidden(p0, task.X_test)
    lr = LogisticRegression(C=1e4, max_iter=5000).fit(H0, task.y_train)
    end = hp.run.at(hp.end_epoch)
    mon = HiddenProgressMonitor(task.X_train, task.y_train, task.X_test, task.y_test)
    t0 = time.perf_counter()
    for _ in range(20):
        mon(0, end.params)
    t_mon = (time.perf_counter() - t0) / 20
    t0 = time.perf_counter()
    for _ in range(200):
        loss_and_grad(end.params, task.X_train, task.y_train)
    t_ep = (time.perf_counter() - t0) / 200
    return [
        {"metric": "max |margin ours - SVC| over checkpoints", "value": float(max(diffs)),
         "peer": f"sklearn SVC(linear, C=1e8, tol=1e-12), {len(diffs)} checkpoints"},
        {"metric": "fixed random features + LogisticRegression(C=1e4): held-out acc", "value":
         float(lr.score(Ht0, task.y_test)), "peer": "no feature learning (hidden margin constant by construction)"},
        {"metric": "trained network at 20*E0: held-out acc", "value": end.test_acc, "peer": "ours"},
        {"metric": "monitor time / GD epoch time", "value": t_mon / t_ep,
         "peer": f"monitor {t_mon * 1e3:.1f} ms, epoch {t_ep * 1e3:.2f} ms (width {DEFAULT_CONFIG.width})"},
    ]
