"""The schema of one run (``results.json``) shared by every package's ``demo``, ``repro`` and benchmarks.

A :class:`RunResult` records what ran (package, version, command, seed, config), what it measured
(:class:`Metric` values, each optionally beside a peer's value with their ratio), how long it took, where
(machine and platform) and with which library versions. ``save`` writes atomically, ``load`` validates,
``to_markdown`` renders the table that package READMEs paste.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import importlib.metadata
import json
import math
import os
import platform
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ._atomic import atomic_write
from .io import DataFileError, read_json

SCHEMA_VERSION = 1

#: Libraries whose versions are recorded when installed.
TRACKED_LIBRARIES = (
    "numpy", "scipy", "torch", "jax", "jaxlib", "pot", "networkx", "rdkit", "scikit-learn", "flax", "optax",
    "equinox", "matplotlib", "joblib",
)


#: ``time.perf_counter()`` when the running command began (set by :func:`iclr25.utils.cli.run_main`), so that
#: a run's wall time covers the whole command and not only the part after :meth:`RunResult.start`.
_COMMAND_T0: float | None = None


def mark_command_start(t0: float | None = None, *, clear: bool = False) -> None:
    """Record that a command began now (or at ``t0``); later :meth:`RunResult.start` calls time from there.
    ``clear=True`` forgets it (``run_main`` does so when its command ends)."""
    global _COMMAND_T0
    _COMMAND_T0 = None if clear else (time.perf_counter() if t0 is None else t0)


class ResultsError(ValueError):
    """A ``results.json`` file is missing a field, has a field of the wrong type, or is not JSON."""


def _finite_or_none(x: Any, name: str) -> float | None:
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float)) and not hasattr(x, "__float__"):
        raise TypeError(f"{name} must be a real number or None, got {type(x).__name__}")
    value = float(x)
    if math.isnan(value):
        return None  # JSON has no NaN; a NaN metric is recorded as missing
    return value


@dataclasses.dataclass(frozen=True)
class Metric:
    """One measured number, optionally beside the same number measured for a peer method.

    ``ratio`` is ``value / peer`` (``None`` without a peer or when the peer is 0).
    ``timing=True`` marks numbers that depend on the machine's speed (seconds, speed-ups): they are left
    out when two runs with the same seed are compared. ``headline=True`` marks the number a demo is there to
    show: it needs a peer (the baseline) and a direction, and :attr:`holds` says whether it beats the baseline.
    A headline names the package's ``main`` claim it stands for (``claim=``, the registry id); ``sane=False``
    says the run failed its own sanity check (an effective sample size too small to trust, a NaN loss): such a
    headline never holds.
    """

    name: str
    value: float | None
    peer: float | None = None
    peer_name: str | None = None
    unit: str = ""
    higher_is_better: bool | None = None
    timing: bool = False
    headline: bool = False
    claim: str = ""
    sane: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"Metric name must be a non-empty string, got {self.name!r}")
        object.__setattr__(self, "value", _finite_or_none(self.value, f"metric {self.name!r} value"))
        object.__setattr__(self, "peer", _finite_or_none(self.peer, f"metric {self.name!r} peer"))
        if self.headline and (not self.peer_name or self.higher_is_better is None):
            raise ValueError(f"headline metric {self.name!r} needs its baseline (peer=, peer_name=) and its "
                             "direction (higher_is_better=)")

    @property
    def holds(self) -> bool | None:
        """Whether the value beats its peer in the metric's direction (``None`` without peer or direction; never
        when the run failed its own sanity check)."""
        if self.value is None or self.peer is None or self.higher_is_better is None:
            return None
        if not self.sane:
            return False
        return self.value > self.peer if self.higher_is_better else self.value < self.peer

    @property
    def ratio(self) -> float | None:
        if self.value is None or self.peer is None or self.peer == 0:
            return None
        return self.value / self.peer

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["ratio"] = self.ratio
        if self.headline:
            d["holds"] = self.holds
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Metric:
        if not isinstance(d, Mapping) or "name" not in d or "value" not in d:
            raise ResultsError(f"a metric must be an object with 'name' and 'value', got {d!r}")
        fields = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in fields})


def machine_info() -> dict[str, Any]:
    """Platform, processor count and Python version of this machine."""
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
    }


def library_versions(extra: Iterable[str] = ()) -> dict[str, str]:
    """Versions of the tracked libraries (and ``extra`` ones) that are installed."""
    out: dict[str, str] = {}
    for name in (*TRACKED_LIBRARIES, *extra):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def _package_version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "schema": int,
    "package": str,
    "version": str,
    "command": str,
    "seed": (int, type(None)),
    "config": dict,
    "metrics": list,
    "wall_time_s": (int, float, type(None)),
    "machine": dict,
    "versions": dict,
    "figures": list,
    "created": str,
}


@dataclasses.dataclass
class RunResult:
    """What one run of a command did and measured.

    Build one with :meth:`start`, add metrics with :meth:`add`, then :meth:`finish` and :meth:`save`.

    Examples
    --------
    >>> run = RunResult.start("iclr25-utils", "demo", seed=0, config={"n": 10})
    >>> _ = run.add("error", 0.12, peer=0.24, peer_name="baseline", higher_is_better=False)
    >>> round(run.metric("error").ratio, 2)
    0.5
    """

    package: str
    version: str
    command: str
    seed: int | None = None
    config: dict[str, Any] = dataclasses.field(default_factory=dict)
    metrics: list[Metric] = dataclasses.field(default_factory=list)
    wall_time_s: float | None = None
    machine: dict[str, Any] = dataclasses.field(default_factory=machine_info)
    versions: dict[str, str] = dataclasses.field(default_factory=library_versions)
    figures: list[str] = dataclasses.field(default_factory=list)
    notes: str = ""
    #: One line saying why a headline metric does not beat its baseline (empty when every headline holds).
    headline_note: str = ""
    created: str = dataclasses.field(
        default_factory=lambda: _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    )
    _t0: float | None = dataclasses.field(default=None, repr=False, compare=False)

    @classmethod
    def start(cls, package: str, command: str, *, seed: int | None = 0,
              config: Mapping[str, Any] | None = None) -> RunResult:
        """Begin a run of ``command`` of the distribution ``package`` and start its clock.

        Inside a command line (:func:`iclr25.utils.cli.run_main`) the clock starts when the command began, so
        ``wall_time_s`` covers argument checks, data loading and imports done before this call.
        """
        run = cls(package=package, version=_package_version(package), command=command, seed=seed,
                  config=dict(config or {}))
        run._t0 = _COMMAND_T0 if _COMMAND_T0 is not None else time.perf_counter()
        return run

    def add(self, name: str, value: float | None, *, peer: float | None = None, peer_name: str | None = None,
            unit: str = "", higher_is_better: bool | None = None, timing: bool = False,
            headline: bool = False, claim: str = "", sane: bool = True) -> Metric:
        """Record a metric; a second metric of the same name replaces the first.

        ``headline=True`` declares the demo's headline: ``peer``/``peer_name`` are its baseline (the strongest
        the package has, never an untrained, random or constant reference alone), ``higher_is_better`` its
        direction, ``claim`` the id of the registry's ``main`` claim it stands for, and ``sane=False`` marks a
        run that failed its own sanity check (it never holds).
        """
        metric = Metric(name, value, peer=peer, peer_name=peer_name, unit=unit,
                        higher_is_better=higher_is_better, timing=timing, headline=headline, claim=claim,
                        sane=sane)
        self.metrics = [m for m in self.metrics if m.name != name] + [metric]
        return metric

    @property
    def headlines(self) -> list[Metric]:
        """The metrics declared as the run's headline."""
        return [m for m in self.metrics if m.headline]

    def headline_summary(self) -> str:
        """One line per headline: ours vs the baseline with the direction and the verdict, then the note.

        >>> run = RunResult.start("iclr25-utils", "demo")
        >>> _ = run.add("accuracy", 0.9, peer=0.5, peer_name="answer prior", higher_is_better=True, headline=True)
        >>> run.headline_summary()
        'headline: accuracy ↑ 0.9 vs answer prior 0.5: holds'
        """
        lines = []
        for m in self.headlines:
            arrow = "↑" if m.higher_is_better else "↓"
            verdict = "holds" if m.holds else "DOES NOT HOLD"
            if not m.sane:
                verdict = "FAILED ITS OWN SANITY CHECK (not a result)"
            lines.append(f"headline: {m.name} {arrow} {_fmt(m.value)}{' ' + m.unit if m.unit else ''} vs "
                         f"{m.peer_name or 'baseline'} {_fmt(m.peer)}: {verdict}"
                         + (f" (main claim `{m.claim}`)" if m.claim else ""))
        if self.headline_note:
            lines.append(f"headline note: {self.headline_note}")
        return "\n".join(lines)

    def metric(self, name: str) -> Metric:
        for m in self.metrics:
            if m.name == name:
                return m
        raise KeyError(f"no metric named {name!r}; have {[m.name for m in self.metrics]}")

    def add_figure(self, path: str | os.PathLike[str], *, relative_to: str | os.PathLike[str] | None = None) -> None:
        """Record a figure, by default relative to the folder of ``results.json``."""
        p = Path(path)
        if relative_to is not None:
            p = p.relative_to(Path(relative_to))
        self.figures.append(p.as_posix())

    def finish(self) -> RunResult:
        """Stop the clock started by :meth:`start`."""
        if self._t0 is not None:
            self.wall_time_s = time.perf_counter() - self._t0
        return self

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA_VERSION,
            "package": self.package,
            "version": self.version,
            "command": self.command,
            "seed": self.seed,
            "config": self.config,
            "metrics": [m.to_dict() for m in self.metrics],
            "wall_time_s": self.wall_time_s,
            "machine": self.machine,
            "versions": self.versions,
            "figures": list(self.figures),
            "notes": self.notes,
            "headline_note": self.headline_note,
            "created": self.created,
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the run as JSON atomically (a temporary file renamed onto ``path``)."""
        text = json.dumps(self.to_dict(), indent=2, sort_keys=False, allow_nan=False, default=_json_default)
        path = Path(path)
        with atomic_write(path) as f:
            f.write(text + "\n")
        return path

    def publish(self, out: str | os.PathLike[str]) -> int:
        """End a command's run: :meth:`finish`, :meth:`save` to ``out/results.json``, print :meth:`to_markdown`.

        Returns 0, the command's exit status, so a handler ends with ``return run.publish(args.out)``.
        """
        self.finish().save(Path(out) / "results.json")
        print(self.to_markdown())
        return 0

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str = "results") -> RunResult:
        if not isinstance(d, Mapping):
            raise ResultsError(f"{source}: expected a JSON object, got {type(d).__name__}")
        for key, types in _REQUIRED.items():
            if key not in d:
                raise ResultsError(f"{source}: missing field {key!r}")
            if not isinstance(d[key], types) or (types is int and isinstance(d[key], bool)):
                raise ResultsError(f"{source}: field {key!r} has type {type(d[key]).__name__}")
        if d["schema"] != SCHEMA_VERSION:
            raise ResultsError(f"{source}: schema {d['schema']} is not the supported {SCHEMA_VERSION}")
        try:
            metrics = [Metric.from_dict(m) for m in d["metrics"]]
        except (TypeError, ResultsError) as exc:
            raise ResultsError(f"{source}: bad metric: {exc}") from exc
        return cls(package=d["package"], version=d["version"], command=d["command"], seed=d["seed"],
                   config=dict(d["config"]), metrics=metrics, wall_time_s=d["wall_time_s"],
                   machine=dict(d["machine"]), versions=dict(d["versions"]), figures=list(d["figures"]),
                   notes=str(d.get("notes", "")), headline_note=str(d.get("headline_note", "")),
                   created=d["created"])

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> RunResult:
        """Read and validate a ``results.json``; errors name the path and the problem."""
        try:
            data = read_json(path, what="results file")
        except DataFileError as exc:
            raise ResultsError(str(exc)) from exc
        return cls.from_dict(data, source=str(path))

    def comparable_metrics(self) -> dict[str, float | None]:
        """The metrics that must be equal for equal seeds (timing metrics left out)."""
        return {m.name: m.value for m in self.metrics if not m.timing}

    def to_markdown(self, *, header: bool = True) -> str:
        """The metrics as a Markdown table, with a line saying what ran, when and where."""
        has_peer = any(m.peer is not None for m in self.metrics)
        cols = ["metric", "value"] + (["peer", "peer value", "ratio"] if has_peer else [])
        lines = []
        if header and self.headlines:
            lines += [self.headline_summary(), ""]
        if header:
            lines.append(
                f"`{self.package} {self.version}` · `{self.command}` · seed {self.seed} · "
                f"{_fmt(self.wall_time_s)} s · {self.created[:10]} · "
                f"{self.machine.get('cpu_count', '?')} CPUs, {self.machine.get('platform', '?')}"
            )
            lines.append("")
        lines.append("| " + " | ".join(cols) + " |")
        lines.append("|" + "|".join("---" for _ in cols) + "|")
        for m in self.metrics:
            arrow = {True: " ↑", False: " ↓", None: ""}[m.higher_is_better]
            row = [f"{m.name}{arrow}", _fmt(m.value) + (f" {m.unit}" if m.unit else "")]
            if has_peer:
                row += [m.peer_name or "", _fmt(m.peer), _fmt(m.ratio)]
            lines.append("| " + " | ".join(cell(c) for c in row) + " |")
        return "\n".join(lines) + "\n"


def cell(text: str) -> str:
    """``text`` made safe for a Markdown table cell (a metric named ``|x - y|`` must not split the row)."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _fmt(x: float | None) -> str:
    if x is None:
        return "–"
    if x == 0 or 1e-3 <= abs(x) < 1e5:
        return f"{x:.4g}"
    return f"{x:.3e}"


def _json_default(obj: Any) -> Any:
    """Make numpy scalars and arrays, paths and tuples JSON-serialisable."""
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")
