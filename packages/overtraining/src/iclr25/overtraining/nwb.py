"""Recordings from Neurodata Without Borders (NWB) files: one file per recording day (session), read with
``pynwb`` (the ``nwb`` extra: ``pip install 'iclr25-overtraining[nwb]'``).

Each file must hold a trials table (``start_time``, ``stop_time`` and a label column) and the responses of the
same neurons on every day, as either

- the ``units`` table: the response of unit u on trial t is its spike count in ``[start_time, stop_time)``;
- a ``TimeSeries`` (for example a ``RoiResponseSeries`` of calcium imaging), named by its path in the file
  (``"responses"`` in ``acquisition``, or ``"ophys/Fluorescence/RoiResponseSeries"`` in ``processing``): the
  response is the mean of the samples whose timestamps fall in ``[start_time, stop_time)``.

The result is the same :class:`~iclr25.overtraining.recordings.Recordings` that the ``.npz`` reader returns,
so :func:`~iclr25.overtraining.recordings.analyze_recordings` runs on it unchanged. The days default to the
sessions' start times (days since the first session) and must increase in the order the files are given.

References: Rübel et al., "The Neurodata Without Borders ecosystem for neurophysiological data science",
eLife 2022 (the NWB format); Kumar et al., ICLR 2025, Sec. 3 (the analysis).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from .recordings import Recordings, check_recordings

__all__ = ["load_nwb", "save_nwb"]

_INSTALL_HINT = "reading and writing NWB files needs pynwb: pip install 'iclr25-overtraining[nwb]'"


def _pynwb() -> Any:
    try:
        import pynwb  # noqa: PLC0415 - an optional extra
    except ImportError as exc:
        raise ImportError(f"{_INSTALL_HINT} ({exc})") from None
    return pynwb


def _file_error(path: Path, msg: str) -> Exception:
    from iclr25.utils.io import DataFileError

    return DataFileError(path, msg)


def _check_path(path: Path) -> None:
    from iclr25.utils.io import existing_file

    existing_file(path, None, "NWB")
    with open(path, "rb") as f:
        head = f.read(8)
    if head != b"\x89HDF\r\n\x1a\n":
        raise _file_error(path, "not an NWB (HDF5) file")


def _time_series(nwb: Any, name: str, path: Path) -> Any:
    parts = [p for p in name.split("/") if p]
    if len(parts) == 1 and parts[0] in nwb.acquisition:
        return nwb.acquisition[parts[0]]
    obj: Any = None
    if parts and parts[0] in nwb.processing:
        obj = nwb.processing[parts[0]]
        for p in parts[1:]:
            try:
                obj = obj[p]
            except (KeyError, TypeError):
                obj = None
                break
    if obj is None or not hasattr(obj, "data"):
        known = sorted(nwb.acquisition) + [f"{m}/..." for m in sorted(nwb.processing)]
        raise _file_error(path, f"no time series {name!r} (responses=): the file has {known or 'none'}; "
                                "use 'units' for spike counts")
    return obj


def _responses(nwb: Any, source: str, starts: np.ndarray, stops: np.ndarray, path: Path) -> np.ndarray:
    if source == "units":
        if nwb.units is None or len(nwb.units) == 0:
            raise _file_error(path, "has no units table (responses='units'); name a time series instead")
        R = np.empty((len(starts), len(nwb.units)))
        for u in range(len(nwb.units)):
            st = np.sort(np.asarray(nwb.units["spike_times"][u], dtype=float))
            R[:, u] = np.searchsorted(st, stops, side="left") - np.searchsorted(st, starts, side="left")
        return R
    ts = _time_series(nwb, source, path)
    data = np.asarray(ts.data[:], dtype=float)
    if data.ndim == 1:
        data = data[:, None]
    if data.ndim != 2:
        raise _file_error(path, f"time series {source!r} must be (time, neurons), got shape {data.shape}")
    if ts.timestamps is not None:
        t = np.asarray(ts.timestamps[:], dtype=float)
    else:
        t = float(ts.starting_time or 0.0) + np.arange(len(data)) / float(ts.rate)
    order = np.argsort(t, kind="stable")
    t, data = t[order], data[order]
    lo = np.searchsorted(t, starts, side="left")
    hi = np.searchsorted(t, stops, side="left")
    empty = np.flatnonzero(hi <= lo)
    if empty.size:
        raise _file_error(path, f"trial {int(empty[0])} [{starts[empty[0]]:g}, {stops[empty[0]]:g}) has no samples of "
                                f"time series {source!r}")
    return np.stack([data[a:b].mean(axis=0) for a, b in zip(lo, hi)])


def _column(trials: Any, name: str | None, path: Path, what: str) -> np.ndarray | None:
    if name is None:
        return None
    if name not in trials.colnames:
        raise _file_error(path, f"the trials table has no column {name!r} ({what}); it has "
                                f"{list(trials.colnames)}")
    return np.asarray(trials[name][:])


def load_nwb(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], *, responses: str = "units",
             label_column: str = "label", stimulus_column: str | None = None, probe_column: str | None = None,
             behaviour_column: str | None = None, days: Sequence[float] | None = None,
             n_trials: int | None = None) -> Recordings:
    """Read one NWB file per recording day into :class:`Recordings` (days × trials × neurons).

    Args:
        paths: the NWB files, in recording order (a single path is one day).
        responses: ``"units"`` (spike counts per trial window) or the path of a ``TimeSeries`` in the file
            (mean over each trial window).
        label_column: trials column with the trial's class, ±1, 0/1 or boolean.
        stimulus_column: optional trials column of integer stimulus ids.
        probe_column: optional trials column flagging held-out stimuli (never used to fit decoders).
        behaviour_column: optional trials column, 1 = correct choice.
        days: one number per file (default: days since the first session's ``session_start_time``).
        n_trials: keep the first ``n_trials`` trials of every day (needed when days have different trial
            counts; the default requires equal counts).

    Errors name the file (and the trial or column) and what was expected.
    """
    files = _check_load_args(paths, days, n_trials)
    pynwb = _pynwb()
    per_day: list[dict[str, Any]] = []
    starts_at: list[datetime] = []
    for p in files:
        day, start = _read_day(pynwb, p, responses, label_column, stimulus_column, probe_column, behaviour_column)
        per_day.append(day)
        starts_at.append(start)
    T = _common_trials(files, per_day, n_trials)
    if days is None:
        t0 = starts_at[0]
        d_arr = np.array([(s - t0).total_seconds() / 86400.0 for s in starts_at])
    else:
        d_arr = np.asarray(days, dtype=float)
    return _stack_days(files, per_day, T, d_arr)


def _check_load_args(paths: Any, days: Sequence[float] | None, n_trials: int | None) -> list[Path]:
    """Step of :func:`load_nwb`: the files as paths, each checked to be an HDF5 file, and the options."""
    files = [Path(paths)] if isinstance(paths, (str, os.PathLike)) else [Path(p) for p in paths]
    if not files:
        raise ValueError("paths must name at least one NWB file, got none")
    if n_trials is not None and (isinstance(n_trials, bool) or not isinstance(n_trials, int) or n_trials < 2):
        raise ValueError(f"n_trials must be an integer >= 2, got {n_trials!r}")
    if days is not None and len(days) != len(files):
        raise ValueError(f"days must give one number per file ({len(files)}), got {len(days)}")
    for p in files:
        _check_path(p)
    return files


def _read_day(pynwb: Any, p: Path, responses: str, label_column: str, stimulus_column: str | None,
              probe_column: str | None, behaviour_column: str | None) -> tuple[dict[str, Any], datetime]:
    """Step of :func:`load_nwb`: one file's trial responses and trials columns (None for a column not asked
    for), with the labels as int8 ±1, and the session's start time."""
    try:
        io = pynwb.NWBHDF5IO(str(p), "r")
        nwb = io.read()
    except Exception as exc:  # noqa: BLE001 - h5py/hdmf raise many kinds; the user needs the file's name
        raise _file_error(p, f"cannot be read as NWB ({type(exc).__name__}: {exc})") from None
    try:
        trials = nwb.trials
        if trials is None or len(trials) == 0:
            raise _file_error(p, "has no trials table (start_time, stop_time, label)")
        starts = np.asarray(trials["start_time"][:], dtype=float)
        stops = np.asarray(trials["stop_time"][:], dtype=float)
        if np.any(stops <= starts):
            i = int(np.flatnonzero(stops <= starts)[0])
            raise _file_error(p, f"trial {i} has stop_time {stops[i]:g} <= start_time {starts[i]:g}")
        day = {"responses": _responses(nwb, responses, starts, stops, p),
               "labels": _column(trials, label_column, p, "label_column"),
               "stimulus": _column(trials, stimulus_column, p, "stimulus_column"),
               "probe": _column(trials, probe_column, p, "probe_column"),
               "behaviour": _column(trials, behaviour_column, p, "behaviour_column")}
        start = nwb.session_start_time
    finally:
        io.close()
    day["labels"] = _pm_one_labels(day["labels"], p, label_column)
    return day, start


def _pm_one_labels(labels: Any, p: Path, label_column: str | None) -> np.ndarray:
    """Step of :func:`load_nwb`: one day's labels as int8 ±1 (from ±1, 0/1 or booleans)."""
    lab = np.asarray(labels)
    if lab.dtype == bool:
        lab = lab.astype(np.int64)
    if not np.issubdtype(lab.dtype, np.number):
        raise _file_error(p, f"label column {label_column!r} must hold -1/+1, 0/1 or booleans, got {lab.dtype}")
    if np.all(np.isin(lab, (0, 1))) and not np.all(np.isin(lab, (-1, 1))):
        lab = 2 * lab - 1
    if not np.all(np.isin(lab, (-1, 1))):
        raise _file_error(p, f"label column {label_column!r} must hold -1/+1, 0/1 or booleans, got values "
                             f"{sorted(set(np.unique(lab).tolist()))[:6]}")
    return lab.astype(np.int8)


def _common_trials(files: list[Path], per_day: list[dict[str, Any]], n_trials: int | None) -> int:
    """Step of :func:`load_nwb`: the trials kept per day (all, equal on every day, or the first ``n_trials``),
    after checking that every day has them and records the same neurons."""
    counts = [len(d["labels"]) for d in per_day]
    T = n_trials if n_trials is not None else counts[0]
    for p, c in zip(files, counts):
        if n_trials is None and c != T:
            raise _file_error(p, f"has {c} trials but {files[0]} has {T}; pass n_trials= (--nwb-trials) to keep the "
                                 "first n trials of every day")
        if c < T:
            raise _file_error(p, f"has {c} trials, fewer than n_trials = {T}")
    neurons = [d["responses"].shape[1] for d in per_day]
    for p, n in zip(files, neurons):
        if n != neurons[0]:
            raise _file_error(p, f"has {n} neurons but {files[0]} has {neurons[0]}: every day must record the same "
                                 "neurons")
    return T


def _stack_days(files: list[Path], per_day: list[dict[str, Any]], T: int, d_arr: np.ndarray) -> Recordings:
    """Step of :func:`load_nwb`: the days' first ``T`` trials stacked into checked :class:`Recordings`."""

    def stack(key: str, dtype: Any) -> np.ndarray | None:
        vals = [d[key] for d in per_day]
        if all(v is None for v in vals):
            return None
        for p, v in zip(files, vals):
            if v is None:
                raise _file_error(p, f"lacks the {key} column that other days have")
        return np.stack([np.asarray(v)[:T] for v in vals]).astype(dtype)

    R = np.stack([d["responses"][:T] for d in per_day])
    labels = stack("labels", np.int8)
    stim = stack("stimulus", np.int64)
    probe = stack("probe", bool)
    beh = stack("behaviour", np.int8)
    src = ", ".join(str(p) for p in files[:3]) + (" ..." if len(files) > 3 else "")
    check_recordings(R, labels, d_arr, stim, probe, beh, source=src)
    if stim is None:
        stim = np.tile(np.arange(T, dtype=np.int64), (len(files), 1))
    if probe is None:
        probe = np.zeros((len(files), T), dtype=bool)
    return Recordings(responses=R, labels=labels, days=d_arr, stimulus=stim, probe=probe, behaviour=beh)


def save_nwb(folder: str | os.PathLike[str], rec: Recordings, *, start: datetime | None = None,
             trial_s: float = 1.0) -> list[Path]:
    """Write ``rec`` as one NWB file per day, ``folder/day_000.nwb``, ...: a trials table (``label``,
    ``stimulus``, ``probe``, ``behaviour``) and the responses as a ``TimeSeries`` ``"responses"`` with one sample
    per trial at the trial's midpoint, so :func:`load_nwb` with ``responses="responses"`` reads them back
    exactly. Session start times are ``start`` + ``days`` (in days). Each file is written atomically."""
    pynwb = _pynwb()
    from iclr25.utils.io import atomic_path
    from iclr25.utils.io import naming_write_errors as writing

    out = Path(folder)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out must name a folder for the NWB files, got the file {str(out)!r}")
    out.mkdir(parents=True, exist_ok=True)
    t0 = start or datetime(2025, 1, 1, tzinfo=UTC)
    written = []
    D, T, _ = rec.responses.shape
    for d in range(D):
        nwb = pynwb.NWBFile(session_description=f"iclr25-overtraining recording, day index {d}",
                            identifier=f"iclr25-overtraining-day-{d}",
                            session_start_time=t0 + timedelta(days=float(rec.days[d])))
        for col, doc in (("label", "trial class, -1 or +1"), ("stimulus", "stimulus id"),
                         ("probe", "held-out stimulus (not used to fit decoders)"),
                         ("behaviour", "1 = correct choice")):
            if col != "behaviour" or rec.behaviour is not None:
                nwb.add_trial_column(col, doc)
        for t in range(T):
            row = {"start_time": t * trial_s, "stop_time": (t + 0.5) * trial_s, "label": int(rec.labels[d, t]),
                   "stimulus": int(rec.stimulus[d, t]), "probe": bool(rec.probe[d, t])}
            if rec.behaviour is not None:
                row["behaviour"] = int(rec.behaviour[d, t])
            nwb.add_trial(**row)
        nwb.add_acquisition(pynwb.TimeSeries(name="responses", data=np.asarray(rec.responses[d], dtype=float),
                                             unit="a.u.", timestamps=(np.arange(T) + 0.25) * trial_s,
                                             description="trial responses (trials x neurons)"))
        target = out / f"day_{d:03d}.nwb"
        with writing(target), atomic_path(target) as tmp:
            with pynwb.NWBHDF5IO(str(tmp), "w") as io:
                io.write(nwb)
        written.append(target)
    return written
