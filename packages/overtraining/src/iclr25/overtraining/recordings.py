"""Synthetic "recordings" with known ground truth, their ``.npz`` format, and the analysis pipeline that a user
runs on real recordings (days × trials × neurons).

The generator trains the network of :mod:`iclr25.overtraining.network`, treats log-spaced checkpoints as
recording days, and records a random subset of m hidden units ("cells") on repeated trials:

    r_{d,t} = φ_d(x_{s(d,t)})[cells] · gain_d + ε,  ε ~ N(0, (noise · rms_d)²),
    behaviour: P(correct) = ε_lapse/2 + (1 − ε_lapse) · s(β f_d(x)),

with rms_d the RMS rate of day d (so the noise is relative), s the logistic sigmoid. Behaviour saturates near
1 − ε_lapse/2 while the representation keeps changing. The ground truth (noise-free margins, flips of a
decoder fitted to noise-free responses) is stored beside the arrays.

The analysis, per day (Kumar et al. Sec. 3): cross-validated linear decoding accuracy (StratifiedKFold,
logistic regression), the normalised SVM margin of trial-averaged responses to the training stimuli, Fisher's
discriminant, the margin's trend over days (Spearman ρ with a one-sided permutation p-value), held-out (probe)
accuracy of a decoder fitted to the training stimuli, and wrong→right flips of the probe stimuli.

References: Kumar et al., ICLR 2025, Sec. 3 (reanalysis of Berners-Lee et al. 2023, posterior piriform cortex).
"""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from .geometry import (
    ExampleFlips,
    example_flips,
    fisher_discriminant,
    fisher_ridge_share,
    normalised_margin,
    signed_margin,
)

__all__ = ["Recordings", "simulate_recordings", "save_recordings", "load_recordings", "check_recordings",
           "AnalysisResult", "TrendTest", "analyze_recordings", "margin_trend", "analysis_report"]


@dataclasses.dataclass(frozen=True)
class Recordings:
    """Population recordings: ``responses`` (n_days, n_trials, n_neurons), ``labels`` (n_days, n_trials) in
    {−1, +1}, ``days`` (n_days,) strictly increasing, ``stimulus`` (n_days, n_trials) integer stimulus ids,
    ``probe`` (n_days, n_trials) bool (held-out stimuli, not used to fit decoders), ``behaviour``
    (n_days, n_trials) 1 = correct choice, and ``truth``: ground truth of generated data (empty for real data)."""

    responses: np.ndarray
    labels: np.ndarray
    days: np.ndarray
    stimulus: np.ndarray
    probe: np.ndarray
    behaviour: np.ndarray | None = None
    truth: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        check_recordings(self.responses, self.labels, self.days, self.stimulus, self.probe, self.behaviour)


def _fail(msg: str, source: str | None) -> ValueError:
    return ValueError(f"{source}: {msg}" if source else msg)


def check_recordings(responses: Any, labels: Any, days: Any, stimulus: Any = None, probe: Any = None,
                     behaviour: Any = None, *, source: str | None = None) -> None:
    """Validate the arrays of a recording (shapes, finiteness, labels, days strictly increasing)."""
    R = np.asarray(responses)
    if R.ndim != 3 or min(R.shape) < 1:
        raise _fail(f"responses must be an (n_days, n_trials, n_neurons) array, got shape {R.shape}", source)
    if not np.issubdtype(R.dtype, np.number) or not np.all(np.isfinite(R)):
        raise _fail("responses must be finite numbers (no NaN or inf)", source)
    D, T, _ = R.shape
    L = np.asarray(labels)
    if L.shape != (D, T):
        raise _fail(f"labels must have shape (n_days, n_trials) = {(D, T)} to match responses, got {L.shape}", source)
    if not np.issubdtype(L.dtype, np.number) or not np.all(np.isin(L, (-1, 1))):
        raise _fail("labels must hold -1 and +1 only", source)
    d = np.asarray(days)
    if d.shape != (D,):
        raise _fail(f"days must have shape ({D},), one per day of responses, got {d.shape}", source)
    if not np.issubdtype(d.dtype, np.number) or not np.all(np.isfinite(d)):
        raise _fail("days must be finite numbers", source)
    if D > 1 and np.any(np.diff(d) <= 0):
        i = int(np.flatnonzero(np.diff(d) <= 0)[0])
        raise _fail(f"days must be strictly increasing (in recording order), but day {day_label(d[i + 1])} "
                    f"follows {day_label(d[i])} at position {i + 1}", source)
    for name, arr in (("stimulus", stimulus), ("probe", probe), ("behaviour", behaviour)):
        if arr is not None and np.asarray(arr).shape != (D, T):
            raise _fail(f"{name} must have shape (n_days, n_trials) = {(D, T)}, got {np.asarray(arr).shape}",
                        source)
    if stimulus is not None and not np.issubdtype(np.asarray(stimulus).dtype, np.integer):
        raise _fail("stimulus must hold integer stimulus ids", source)


def day_label(x: Any) -> str:
    """A day value as a user wrote it (``49``, ``2.5``), never a numpy repr such as ``np.int64(49)``."""
    v = float(x)
    return str(int(v)) if v.is_integer() else f"{v:g}"


def simulate_recordings(*, n_days: int = 12, n_neurons: int = 16, trials_per_stimulus: int = 4,
                        n_train_stimuli: int = 40, n_probe_stimuli: int = 40, noise: float = 0.3,
                        lapse: float = 0.03, beta: float = 4.0, learning: bool = True, task_kwargs=None,
                        config=None, overtrain_factor: int = 20, seed: int = 0, device: Any = None) -> Recordings:
    """Generate recordings from the trained network (see the module docstring).

    Days are log-spaced checkpoints from epoch 1 to ``overtrain_factor``·E₀ (E₀: first epoch with training
    accuracy 1). ``learning=False`` freezes the representation at E₀ on every day (a null control: no hidden
    progress to find). The ground truth in ``truth``: ``epoch``, ``margin`` (noise-free, all recorded cells),
    ``probe_correct`` (n_days, n_probe) of a logistic decoder fitted each day on noise-free training responses,
    ``E0``, ``cells``. ``device``: where the network trains (:func:`~iclr25.overtraining.network.train_mlp`); the
    recordings are drawn on the CPU from its checkpoints.
    """
    from .experiments import DEFAULT_CONFIG, DEFAULT_TASK
    from .network import forward, hidden, init_mlp, train_mlp
    from .task import make_odour_task

    for name, v, low in (("n_days", n_days, 3), ("n_neurons", n_neurons, 2),
                         ("trials_per_stimulus", trials_per_stimulus, 1), ("n_train_stimuli", n_train_stimuli, 4),
                         ("n_probe_stimuli", n_probe_stimuli, 2), ("overtrain_factor", overtrain_factor, 2)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
    if not (isinstance(noise, (int, float)) and 0 <= noise < 100):
        raise ValueError(f"noise must be a number in [0, 100), got {noise!r}")
    if not (isinstance(lapse, (int, float)) and 0 <= lapse < 1):
        raise ValueError(f"lapse must be a number in [0, 1), got {lapse!r}")
    cfg = config or DEFAULT_CONFIG
    if n_neurons > cfg.width:
        raise ValueError(f"n_neurons must be at most the network width {cfg.width}, got {n_neurons}")
    task = make_odour_task(**(DEFAULT_TASK | {"n_train": n_train_stimuli, "n_test": n_probe_stimuli} | (task_kwargs or {})),
                           seed=seed)
    rng = np.random.default_rng(seed + 1)
    p0 = init_mlp(task.X_train.shape[1], cfg.width, alpha=cfg.alpha, activation=cfg.activation, seed=seed)
    from .protocols import epochs_to_learn

    E0 = epochs_to_learn(p0, task.X_train, task.y_train, cfg, criterion=1.0, max_epochs=cfg.n_epochs, device=device)
    if E0 is None:
        raise ValueError(f"the network did not reach training accuracy 1 within {cfg.n_epochs} epochs; raise n_epochs")
    E0 = max(E0, 1)
    last = E0 * overtrain_factor
    epochs = np.unique(np.round(np.logspace(0, math.log10(last), n_days)).astype(int))
    while len(epochs) < n_days:  # small E0: fill with the next integers
        epochs = np.unique(np.concatenate([epochs, [epochs[-1] + 1]]))
    if not learning:
        epochs_eff = np.minimum(epochs, E0)
    else:
        epochs_eff = epochs
    run = train_mlp(task.X_train, task.y_train, task.X_test, task.y_test,
                    dataclasses.replace(cfg, n_epochs=int(max(last, epochs_eff.max()))), init=p0, seed=seed,
                    epochs=np.unique(epochs_eff), measure=False, device=device)
    by_epoch = {c.epoch: c.params for c in run.checkpoints}
    cells = np.sort(rng.choice(cfg.width, n_neurons, replace=False))
    X = np.concatenate([task.X_train, task.X_test])
    y = np.concatenate([task.y_train, task.y_test])
    is_probe = np.concatenate([np.zeros(len(task.y_train), bool), np.ones(len(task.y_test), bool)])
    S = len(y)
    stim = np.tile(np.repeat(np.arange(S), trials_per_stimulus), (len(epochs), 1))
    for d in range(len(epochs)):
        rng.shuffle(stim[d])
    R = np.empty((len(epochs), stim.shape[1], n_neurons))
    beh = np.empty(stim.shape, dtype=np.int8)
    margins, probe_correct = [], []
    from sklearn.linear_model import LogisticRegression

    for d, ee in enumerate(epochs_eff):
        p = by_epoch[int(ee)]
        rates = hidden(p, X)[:, cells]
        rms = float(np.sqrt(np.mean(rates ** 2))) or 1.0
        R[d] = rates[stim[d]] + noise * rms * rng.standard_normal((stim.shape[1], n_neurons))
        f = forward(p, X)[stim[d]]
        pc = lapse / 2 + (1 - lapse) / (1 + np.exp(-beta * y[stim[d]] * f))
        beh[d] = rng.random(stim.shape[1]) < pc
        tr = ~is_probe
        margins.append(normalised_margin(rates[tr], y[tr], require_separable=False))
        clf = LogisticRegression(C=1.0, max_iter=2000).fit(rates[tr] / rms, y[tr])
        probe_correct.append(clf.predict(rates[is_probe] / rms) == y[is_probe])
    truth = {"epoch": epochs.astype(np.int64), "margin": np.array(margins), "probe_correct": np.array(probe_correct),
             "E0": np.array(E0), "cells": cells, "learning": np.array(bool(learning))}
    labels = y[stim].astype(np.int8)
    return Recordings(responses=R, labels=labels, days=epochs.astype(np.int64), stimulus=stim.astype(np.int64),
                      probe=is_probe[stim], behaviour=beh, truth=truth)


def save_recordings(path: str | os.PathLike[str], rec: Recordings) -> Path:
    """Write ``rec`` as ``.npz`` (atomically): arrays ``responses``, ``labels``, ``days``, ``stimulus``, ``probe``,
    ``behaviour`` and ``truth_<name>`` for the ground truth."""
    from iclr25.utils.io import save_npz

    p = Path(path)
    if p.suffix.lower() != ".npz":
        raise ValueError(f"--out must name a .npz file, got {str(path)!r}")
    arrays = {"responses": rec.responses, "labels": rec.labels, "days": rec.days, "stimulus": rec.stimulus,
              "probe": rec.probe}
    if rec.behaviour is not None:
        arrays["behaviour"] = rec.behaviour
    arrays |= {f"truth_{k}": v for k, v in rec.truth.items()}
    return save_npz(p, **arrays)


def load_recordings(path: str | os.PathLike[str]) -> Recordings:
    """Read a ``.npz`` recording. Required arrays: ``responses`` (days, trials, neurons), ``labels`` (days, trials,
    ±1 or 0/1), ``days`` (days,). Optional: ``stimulus`` (days, trials) integer ids (default: no stimulus
    identity, so no probe flips), ``probe`` (days, trials) bool, ``behaviour``. Errors name the file."""
    from iclr25.utils.io import DataFileError, read_npz

    z = read_npz(path, required=("responses", "labels", "days"), what="recordings file")
    src = str(path)
    labels = z["labels"]
    if np.issubdtype(np.asarray(labels).dtype, np.number) and np.all(np.isin(labels, (0, 1))) \
            and not np.all(np.isin(labels, (-1, 1))):
        labels = 2 * labels.astype(np.int64) - 1
    R, days = z["responses"], z["days"]
    if R.ndim == 3:
        shape = R.shape[:2]
    else:
        shape = (0, 0)
    stimulus = z.get("stimulus")
    if stimulus is None:
        stimulus = np.tile(np.arange(shape[1], dtype=np.int64), (shape[0], 1))
    probe = z.get("probe")
    if probe is None:
        probe = np.zeros(shape, dtype=bool)
    try:
        check_recordings(R, labels, days, stimulus, probe, z.get("behaviour"), source=src)
    except ValueError as exc:
        raise DataFileError(path, str(exc).removeprefix(f"{src}: ")) from None
    truth = {k.removeprefix("truth_"): v for k, v in z.items() if k.startswith("truth_")}
    return Recordings(responses=R.astype(np.float64), labels=labels.astype(np.int8), days=days,
                      stimulus=stimulus.astype(np.int64), probe=probe.astype(bool), behaviour=z.get("behaviour"),
                      truth=truth)


@dataclasses.dataclass(frozen=True)
class TrendTest:
    """Spearman ρ between day and a per-day quantity, with a one-sided permutation p-value (H₁: ρ > 0)."""

    rho: float
    p_value: float
    n_permutations: int


def _spearman(x: np.ndarray, Y: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    rx = rankdata(x)
    rY = rankdata(Y, axis=-1)
    rx = (rx - rx.mean()) / rx.std()
    rY = (rY - rY.mean(-1, keepdims=True)) / rY.std(-1, keepdims=True)
    return (rY * rx).mean(-1)


def margin_trend(days: Any, values: Any, *, n_permutations: int = 2000, seed: int = 0) -> TrendTest:
    """Spearman ρ(day, value) and p = (1 + #{π : ρ_π ≥ ρ}) / (1 + n_permutations) over permutations of the days.
    Days with a ``nan`` value (e.g. a non-separable day) are left out."""
    d = np.asarray(days, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    ok = np.isfinite(v)
    d, v = d[ok], v[ok]
    if len(v) < 3:
        raise ValueError(f"a trend needs at least 3 days with a value, got {len(v)}")
    if isinstance(n_permutations, bool) or not isinstance(n_permutations, int) or n_permutations < 1:
        raise ValueError(f"n_permutations must be an integer >= 1, got {n_permutations!r}")
    if np.all(v == v[0]):
        return TrendTest(0.0, 1.0, n_permutations)
    rho = float(_spearman(d, v[None])[0])
    rng = np.random.default_rng(seed)
    perm = np.argsort(rng.random((n_permutations, len(v))), axis=1)
    null = _spearman(d, v[perm])
    return TrendTest(rho, float((1 + np.sum(null >= rho - 1e-12)) / (1 + n_permutations)), n_permutations)


@dataclasses.dataclass(frozen=True)
class AnalysisResult:
    """Per-day results of :func:`analyze_recordings` (arrays of length n_days) and their summaries."""

    days: np.ndarray
    decoding_accuracy: np.ndarray      # cross-validated, all trials of training stimuli
    margin: np.ndarray                 # normalised hard SVM margin of trial-averaged training-stimulus responses
    #                                    (nan on a day whose classes are not linearly separable)
    fld: np.ndarray
    probe_accuracy: np.ndarray         # decoder fitted on training stimuli, tested on probe trials (nan: none)
    behaviour: np.ndarray              # fraction of correct choices (nan: not recorded)
    margin_trend: TrendTest
    decoding_trend: TrendTest
    probe_correct: np.ndarray          # (n_days, n_probe_stimuli) trial-averaged probe stimuli decoded right
    probe_stimuli: np.ndarray
    flips: ExampleFlips | None         # probe stimuli wrong on the reference day that become right for good
    reference_day: int
    #: day indices whose trial-averaged training-stimulus responses are not linearly separable (margin nan)
    non_separable_days: tuple[int, ...] = ()
    #: day indices each trend was computed on (from the reference day, days with a value)
    margin_trend_days: tuple[int, ...] = ()
    decoding_trend_days: tuple[int, ...] = ()
    #: why a trend is nan ("" when it was computed)
    margin_trend_note: str = ""
    decoding_trend_note: str = ""
    #: the margin on every day: the hard margin where separable, the soft-margin SVM's signed margin (<= 0)
    #: where not (:func:`signed_margin`); the margin trend is computed on it
    signed_margin: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    #: what the margin trend was computed on (names the soft-margin days when there are any)
    margin_trend_measure: str = "normalised hard SVM margin"
    #: per day, the share of the Fisher discriminant set by its ridge (:func:`fisher_ridge_share`)
    fld_ridge_share: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    #: how the reference day was chosen
    reference_note: str = ""

    def notes(self) -> list[str]:
        """One line per thing a reader must know: days left out of the margin trend and trends not computed."""
        out = []
        if self.reference_note:
            out.append(self.reference_note)
        if self.non_separable_days:
            out.append(f"{len(self.non_separable_days)} of {len(self.days)} day(s) not linearly separable (no hard "
                       f"margin): day(s) {', '.join(day_label(self.days[i]) for i in self.non_separable_days)}; "
                       f"their signed soft-margin value (<= 0) stands in, and the margin trend "
                       f"({self.margin_trend_measure}) uses day(s) "
                       f"{', '.join(day_label(self.days[i]) for i in self.margin_trend_days) or 'none'}")
        dominated = [i for i, s in enumerate(self.fld_ridge_share) if s > 0.5]
        if dominated:
            out.append(f"Fisher discriminant dominated by its ridge (share > 0.5: more neurons than stimuli per "
                       f"class) on {len(dominated)} of {len(self.days)} day(s); read fld there as a ridge-scaled "
                       f"value, not a separation (fld_ridge_share per day)")
        for name, note in (("margin", self.margin_trend_note), ("decoding", self.decoding_trend_note)):
            if note:
                out.append(f"{name} trend not computed: {note}")
        return out

    def table(self) -> list[dict[str, float]]:
        sm = self.signed_margin if len(self.signed_margin) else np.full(len(self.days), np.nan)
        rs = self.fld_ridge_share if len(self.fld_ridge_share) else np.full(len(self.days), np.nan)
        return [{"day": float(d), "decoding_accuracy": float(a), "margin": float(m), "signed_margin": float(g),
                 "fld": float(f), "fld_ridge_share": float(r), "probe_accuracy": float(p), "behaviour": float(b)}
                for d, a, m, g, f, r, p, b in zip(self.days, self.decoding_accuracy, self.margin, sm, self.fld, rs,
                                                  self.probe_accuracy, self.behaviour, strict=True)]


def _plateau_day(rec: Recordings, beh: np.ndarray) -> tuple[int, str]:
    """The default reference day of :func:`analyze_recordings` and a note when it leaves too few days: the first
    day whose behaviour is within max(0.02, 2 binomial standard errors) of the best day's, or day 0 without
    behaviour."""
    nd = len(rec.days)
    reference_note = ""
    if np.all(np.isfinite(beh)):
        n_tr = np.array([len(b) for b in rec.behaviour], dtype=np.float64)
        best = int(np.argmax(beh))
        tol = max(0.02, 2.0 * math.sqrt(max(beh[best] * (1 - beh[best]), 1e-12) / n_tr[best]))
        reference_day = int(np.flatnonzero(beh >= beh[best] - tol)[0])
        if reference_day > nd - 3:
            reference_note = (f"behaviour reaches its plateau only on day {day_label(rec.days[reference_day])} "
                              f"(index {reference_day} of {nd}): fewer than 3 days after it, so no trend over "
                              "the plateau can be tested; pass --reference-day to choose an earlier day")
            reference_day = min(reference_day, nd - 2)
    else:
        reference_day = 0
    return reference_day, reference_note


def _per_day_measures(rec: Recordings, probe_ids: np.ndarray, *, cv: int, C: float, seed: int) -> tuple:
    """Per day: cross-validated decoding accuracy, hard and signed margin, Fisher discriminant and its ridge share
    of the trial-averaged training stimuli, probe accuracy and, per probe stimulus, whether it is decoded right."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    R, L = rec.responses, rec.labels.astype(np.float64)
    train_mask = ~rec.probe
    dec, mar, smar, fld, fshare, pacc, pcorr = [], [], [], [], [], [], []
    for d in range(len(rec.days)):
        m = train_mask[d]
        Xd, yd = R[d][m], L[d][m]
        scale = float(np.sqrt(np.mean(Xd ** 2))) or 1.0
        Xs = Xd / scale
        folds = StratifiedKFold(cv, shuffle=True, random_state=seed)
        clf = LogisticRegression(C=C, max_iter=2000)
        dec.append(float(np.mean(cross_val_score(clf, Xs, yd, cv=folds))))
        ids = rec.stimulus[d][m]
        uniq = np.unique(ids)
        means = np.stack([Xd[ids == s].mean(0) for s in uniq])
        ym = np.array([yd[ids == s][0] for s in uniq])
        if len(np.unique(ym)) == 2:
            sm = signed_margin(means, ym)
            smar.append(sm.value)
            mar.append(sm.value if sm.separable else float("nan"))
        else:
            smar.append(float("nan"))
            mar.append(float("nan"))
        fld.append(fisher_discriminant(means, ym))
        fshare.append(fisher_ridge_share(means, ym))
        if len(probe_ids):
            clf.fit(Xs, yd)
            pm = rec.probe[d]
            pacc.append(float(np.mean(clf.predict(R[d][pm] / scale) == L[d][pm])))
            pid = rec.stimulus[d][pm]
            row = []
            for s in probe_ids:
                sel = pid == s
                row.append(bool(clf.predict(R[d][pm][sel].mean(0, keepdims=True) / scale)[0] == L[d][pm][sel][0])
                           if sel.any() else False)
            pcorr.append(row)
        else:
            pacc.append(float("nan"))
    return dec, mar, smar, fld, fshare, pacc, pcorr


def analyze_recordings(rec: Recordings, *, cv: int = 5, reference_day: int | None = None,
                       n_permutations: int = 2000, C: float = 1.0, seed: int = 0) -> AnalysisResult:
    """Run the per-day analysis (module docstring) on a :class:`Recordings`.

    ``reference_day`` (an index into ``rec.days``) is where flips and trends are counted from; default: the
    first day on which behaviour is at its plateau (within max(0.02, 2 binomial standard errors) of the best
    day's accuracy), or day 0 without behaviour.

    The margin trend is computed on :func:`signed_margin` of every day from the reference day: the hard margin
    where the trial-averaged classes are separable, the soft-margin SVM's signed margin (<= 0) where they are
    not; those days are named (``non_separable_days``) and the trend says which measure it used. A trend that
    cannot be computed (fewer than 3 days from the reference day) is ``nan`` with the reason.
    """
    if isinstance(cv, bool) or not isinstance(cv, int) or cv < 2:
        raise ValueError(f"cv must be an integer >= 2, got {cv!r}")
    if not (isinstance(C, (int, float)) and C > 0):
        raise ValueError(f"C must be a number > 0, got {C!r}")
    L = rec.labels.astype(np.float64)
    nd = len(rec.days)
    train_mask = ~rec.probe
    for d in range(nd):
        yd = L[d][train_mask[d]]
        counts = [int(np.sum(yd == c)) for c in (-1, 1)]
        if min(counts) < cv:
            raise ValueError(f"day {day_label(rec.days[d])} has {counts[0]} / {counts[1]} non-probe trials of the classes "
                             f"-1 / +1; cv = {cv} folds need at least {cv} of each")
    beh = (np.array([float(np.mean(b)) for b in rec.behaviour]) if rec.behaviour is not None
           else np.full(nd, np.nan))
    reference_note = ""
    if reference_day is None:
        reference_day, reference_note = _plateau_day(rec, beh)
    if isinstance(reference_day, bool) or not isinstance(reference_day, (int, np.integer)) or \
            not 0 <= reference_day < nd - 1:
        raise ValueError(f"reference_day must be a day index in [0, {nd - 2}], got {reference_day!r}")
    probe_ids = np.unique(rec.stimulus[rec.probe])
    dec, mar, smar, fld, fshare, pacc, pcorr = _per_day_measures(rec, probe_ids, cv=cv, C=C, seed=seed)
    days = np.asarray(rec.days)
    pc = np.array(pcorr, dtype=bool) if pcorr else np.zeros((nd, 0), dtype=bool)
    flips = example_flips(pc, start=reference_day) if pc.shape[1] else None
    def trend(values, offset, what):
        v = np.asarray(values, dtype=np.float64)[reference_day:]
        used = tuple(int(reference_day + i) for i in np.flatnonzero(np.isfinite(v)))
        if len(used) < 3:
            ref = day_label(days[reference_day])
            why = (f"needs at least 3 days with a {what} from the reference day (day {ref}, index {reference_day}) "
                   f"on, got {len(used)}; pass --reference-day with an earlier day index to include more days")
            return TrendTest(float("nan"), float("nan"), n_permutations), used, why
        return (margin_trend(days[reference_day:], v, n_permutations=n_permutations, seed=seed + offset), used, "")

    (mt, mdays, mnote), (dt, ddays, dnote) = trend(smar, 0, "margin"), trend(dec, 1, "decoding accuracy")
    non_sep = tuple(int(i) for i in np.flatnonzero(~np.isfinite(np.asarray(mar, dtype=np.float64))
                                                   & np.isfinite(np.asarray(smar, dtype=np.float64))))
    soft_in_trend = [i for i in mdays if i in non_sep]
    measure = ("normalised hard SVM margin" if not soft_in_trend else
               f"signed margin: hard SVM margin on separable days, soft-margin SVM (C = 1e4) signed margin on "
               f"{len(soft_in_trend)} non-separable day(s) "
               f"({', '.join(day_label(days[i]) for i in soft_in_trend)})")
    return AnalysisResult(days=days, decoding_accuracy=np.array(dec), margin=np.array(mar), fld=np.array(fld),
                          probe_accuracy=np.array(pacc), behaviour=beh, margin_trend=mt, decoding_trend=dt,
                          probe_correct=pc, probe_stimuli=probe_ids, flips=flips, reference_day=int(reference_day),
                          non_separable_days=non_sep, margin_trend_days=mdays, decoding_trend_days=ddays,
                          margin_trend_note=mnote, decoding_trend_note=dnote, signed_margin=np.array(smar),
                          margin_trend_measure=measure, fld_ridge_share=np.array(fshare),
                          reference_note=reference_note)


def _finite(x: Any) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def analysis_report(res: AnalysisResult) -> dict:
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
