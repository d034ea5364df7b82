"""The claims registry: each package declares its paper's claims once, and tests, ``repro``, README tables and the
documentation site's dashboard are all made from that one declaration.

A :class:`Claim` says what the paper states (and its number), which metric we measure, what it is compared
with (a baseline measured in the same call, or a fixed threshold), which direction is better, and the decision
rule over seeds:

- ``"every_seed"``: the claim holds when it holds at every seed (``value`` beats the reference by more than
  ``margin`` at each one);
- ``"mean_ci"``: the claim holds when the 95 % Student-t interval of the mean improvement over seeds lies
  entirely above ``margin``.

A package keeps its claims in ``iclr25.<module>.claims`` as ``REGISTRY``, a :class:`ClaimRegistry`. A measuring
function takes ``(seed, rung)`` and returns, for each claim it measures, a :class:`Measurement` (or a bare
number when the claim compares with a threshold). One function may measure several claims (one trained model,
several claims): it runs once per seed and rung.

::

    REGISTRY = ClaimRegistry("iclr25-sdds")

    @REGISTRY.measures(
        Claim("fkl-free-energy", statement="SN-NIS estimates F far better than the variational bound",
              paper="rel. error < 1e-4 (L = 16)", metric="relative free-energy error",
              baseline="variational bound", direction="lower", rule="every_seed", kind="main"))
    def _fkl(seed: int, rung: str) -> dict[str, Measurement]:
        ...
        return {"fkl-free-energy": Measurement(rel_error, reference=rel_error_of_bound)}

In ``tests/test_claims.py``::

    from iclr25.sdds.claims import REGISTRY
    test_claim = REGISTRY.pytest_test(rung="test")

``iclr25 claims NAME --rung repro --out DIR`` (or a package's ``repro``) writes ``claims.json``: every claim, every
seed, the values, the verdict, the version, the date and the machine's load. :func:`render_table` turns a
``claims.json`` into the README's claims table, between the markers :data:`TABLE_BEGIN` and :data:`TABLE_END`;
``make claims-table`` rewrites the tables and ``make test`` fails when a README differs from its ``claims.json``.

This module uses the standard library only (the repository's checks import it without numpy).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import os
import platform
import statistics
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["Claim", "Measurement", "ClaimResult", "ClaimsReport", "ClaimRegistry", "decide", "render_table",
           "replace_table", "TABLE_BEGIN", "TABLE_END", "CLAIMS_FILE", "CALIBRATION_FILE", "FRESH_FILE", "KINDS",
           "t_quantile_975", "load_report", "max_margin", "kind_counts", "by_kind", "fresh_seeds", "check_report",
           "CalibrationReport", "calibration_file", "load_calibration", "RungCost", "smoke_run"]

SCHEMA_VERSION = 2
CLAIMS_FILE = "claims.json"
CALIBRATION_FILE = "claims-calibration.json"
FRESH_FILE = "claims-fresh.json"
KINDS = ("main", "secondary", "sanity")
#: the seeds a registry calibrates its margins on, per rung, unless it names its own
DEFAULT_CALIBRATION = tuple(range(100, 110))
#: the probability with which a claim whose effect is as large as the calibration seeds show must pass
POWER = 0.95
TABLE_BEGIN = "<!-- claims-table:begin (generated from claims.json by `make claims-table`; do not edit) -->"
TABLE_END = "<!-- claims-table:end -->"
RULES = ("every_seed", "mean_ci")
DIRECTIONS = ("higher", "lower")
EXPECT = ("holds", "fails")

# two-sided 95 % Student-t quantiles t_{0.975, df}, df = 1..30 (beyond: the normal 1.96 is within 2 %)
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042)


def t_quantile_975(df: int) -> float:
    """The 97.5 % quantile of Student's t with ``df`` degrees of freedom (the half-width factor of a 95 % CI).

    >>> t_quantile_975(2)
    4.303
    """
    if df < 1:
        raise ValueError(f"df must be >= 1, got {df}")
    return _T975[df - 1] if df <= len(_T975) else 1.96


@dataclasses.dataclass(frozen=True)
class Claim:
    """One claim of a paper, as a package checks it.

    Parameters
    ----------
    id:
        Short, stable identifier (``"cot-beats-no-cot"``); the README row and test id.
    statement:
        What the paper states, in one sentence.
    paper:
        The paper's own number or setting, as text (``"+26.2 % RMSE"``); ``""`` when the paper gives none.
    metric:
        What we measure per seed (``"month-parity accuracy, test people"``).
    direction:
        ``"higher"`` or ``"lower"``: which way the metric is better.
    baseline:
        Name of the reference measured in the same call (a peer, a trivial predictor); the measuring function
        returns it as ``Measurement.reference``. Exactly one of ``baseline`` and ``threshold`` is given.
    threshold:
        A fixed bound the metric must beat instead of a baseline.
    margin:
        How much better than the reference the value must be (metric units, ``>= 0``).
    rule:
        ``"every_seed"`` or ``"mean_ci"`` (see the module's docstring).
    min_seeds:
        Fewest seeds a verdict may rest on (at least 3).
    expect:
        ``"holds"`` for a claim that reproduces at the package's rungs; ``"fails"`` for one that does not (the
        test then checks that it still fails, so a change that fixes it is noticed, and ``ladder`` says where
        the scale ladder and the ablation of its causes are).
    ladder:
        Where the scale ladder / ablation of a claim that does not reproduce is (a README anchor or a file).
    note:
        One line on how the threshold and margin were chosen (from which spread over which seeds).
    rungs:
        The rungs the claim is decided at (default: every rung of the registry); an expensive claim can be
        left to ``"repro"`` so the default test suite stays within its budget.
    kind:
        ``"main"`` (a headline of the paper's abstract), ``"secondary"`` (a claim in the paper's body) or
        ``"sanity"`` (a precondition: trained vs untrained, vs a random or constant reference, true by
        construction). Tables and the dashboard lead with main claims and count kinds separately.
    seed_free:
        ``True`` for a claim whose value cannot depend on the seed (a deterministic computation): it is decided
        once, at the rung's first seed, and the tables say so, instead of repeating one measurement.
    """

    id: str
    statement: str
    metric: str
    direction: str
    paper: str = ""
    baseline: str | None = None
    threshold: float | None = None
    margin: float = 0.0
    rule: str = "every_seed"
    min_seeds: int = 3
    expect: str = "holds"
    ladder: str = ""
    note: str = ""
    rungs: tuple[str, ...] | None = None
    kind: str = ""
    seed_free: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id or any(c.isspace() for c in self.id):
            raise ValueError(f"Claim id must be a non-empty string without spaces, got {self.id!r}")
        if self.direction not in DIRECTIONS:
            raise ValueError(f"claim {self.id!r}: direction must be one of {DIRECTIONS}, got {self.direction!r}")
        if self.rule not in RULES:
            raise ValueError(f"claim {self.id!r}: rule must be one of {RULES}, got {self.rule!r}")
        if self.expect not in EXPECT:
            raise ValueError(f"claim {self.id!r}: expect must be one of {EXPECT}, got {self.expect!r}")
        if (self.baseline is None) == (self.threshold is None):
            raise ValueError(f"claim {self.id!r}: give exactly one of baseline= (a name) and threshold= (a number)")
        if self.threshold is not None and not math.isfinite(self.threshold):
            raise ValueError(f"claim {self.id!r}: threshold must be finite, got {self.threshold!r}")
        if not (isinstance(self.margin, (int, float)) and math.isfinite(self.margin) and self.margin >= 0):
            raise ValueError(f"claim {self.id!r}: margin must be a finite number >= 0, got {self.margin!r}")
        if not isinstance(self.min_seeds, int) or self.min_seeds < 3:
            raise ValueError(f"claim {self.id!r}: min_seeds must be an integer >= 3, got {self.min_seeds!r}")
        if self.rungs is not None and (isinstance(self.rungs, str) or not self.rungs):
            raise ValueError(f"claim {self.id!r}: rungs must be a non-empty tuple of rung names, got {self.rungs!r}")
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id!r}: kind must be one of {KINDS} (main: a headline of the paper's "
                             f"abstract), got {self.kind!r}")
        if not isinstance(self.seed_free, bool):
            raise ValueError(f"claim {self.id!r}: seed_free must be True or False, got {self.seed_free!r}")
        if self.expect == "fails" and not self.ladder:
            raise ValueError(f"claim {self.id!r}: a claim expected to fail names its ladder/ablation (ladder=)")

    @property
    def seeds_needed(self) -> int:
        """How many seeds a verdict rests on: 1 for a seed-free claim, else ``min_seeds``."""
        return 1 if self.seed_free else self.min_seeds

    @property
    def reference_name(self) -> str:
        return self.baseline if self.baseline is not None else f"threshold {_fmt(self.threshold)}"

    def improvement(self, value: float, reference: float) -> float:
        """How much better ``value`` is than ``reference`` (positive = better, in the metric's units)."""
        return value - reference if self.direction == "higher" else reference - value


@dataclasses.dataclass(frozen=True)
class Measurement:
    """One seed's value of a claim's metric and, for a baseline claim, the baseline's value in the same call.

    ``alive=False`` says the run failed its own sanity check at this seed (an effective sample size below its
    reliability bound, a NaN loss, a model that answers one constant): that seed never holds, and a claim
    expected to fail is not evidence while any seed is not alive.
    """

    value: float
    reference: float | None = None
    extra: Mapping[str, float] = dataclasses.field(default_factory=dict)
    alive: bool = True


def _as_measurement(claim: Claim, m: Measurement | float) -> Measurement:
    if not isinstance(m, Measurement):
        m = Measurement(float(m))
    if claim.baseline is not None and m.reference is None:
        raise ValueError(f"claim {claim.id!r} compares with {claim.baseline!r}: return Measurement(value, "
                         "reference=<the baseline's value>)")
    ref = claim.threshold if claim.threshold is not None else m.reference
    return Measurement(float(m.value), float(ref), dict(m.extra), bool(m.alive))


@dataclasses.dataclass(frozen=True)
class ClaimResult:
    """A claim decided over seeds: per-seed values and references, the improvements, the verdict."""

    claim: Claim
    seeds: tuple[int, ...]
    values: tuple[float, ...]
    references: tuple[float, ...]
    holds: bool
    mean_improvement: float
    ci: tuple[float, float]
    holds_per_seed: tuple[bool, ...]
    rung: str = ""
    extras: tuple[Mapping[str, float], ...] = ()
    alive_per_seed: tuple[bool, ...] = ()

    @property
    def verdict(self) -> str:
        return "holds" if self.holds else "does not hold"

    @property
    def dead_reason(self) -> str:
        """Why the measurement is not evidence of anything (``""`` when it is alive): a value that is not finite,
        a seed whose run failed its own sanity check, or a value equal to its reference at every seed (a method
        that returns the trivial answer)."""
        bad = [s for s, v in zip(self.seeds, self.values, strict=True) if not math.isfinite(v)]
        if bad:
            return f"the value is not finite at seed(s) {bad}"
        dead = [s for s, a in zip(self.seeds, self.alive_per_seed, strict=False) if not a]
        if dead:
            return f"the run failed its own sanity check at seed(s) {dead}"
        if all(v == r or abs(v - r) <= 1e-12 * max(abs(v), abs(r), 1.0)
               for v, r in zip(self.values, self.references, strict=True)):
            return f"the value equals the {self.claim.reference_name} at every seed"
        return ""

    @property
    def alive(self) -> bool:
        """The pipeline produced a measurement (see :attr:`dead_reason`)."""
        return not self.dead_reason

    @property
    def as_expected(self) -> bool:
        return self.holds == (self.claim.expect == "holds")

    def explain(self) -> str:
        """A few lines: the claim, each seed's value against its reference, the rule and the verdict."""
        c = self.claim
        rows = [f"claim {c.id!r} [{c.kind}] ({c.rule}, {c.direction} is better, margin {_fmt(c.margin)}, rung "
                f"{self.rung!r}{', seed-free' if c.seed_free else ''}): {self.verdict}; expected: {c.expect}"]
        for s, v, r, ok in zip(self.seeds, self.values, self.references, self.holds_per_seed, strict=True):
            rows.append(f"  seed {s}: {c.metric} = {_fmt(v)} vs {c.reference_name} = {_fmt(r)} "
                        f"({'holds' if ok else 'fails'})")
        rows.append(f"  mean improvement {_fmt(self.mean_improvement)}, 95 % CI [{_fmt(self.ci[0])}, "
                    f"{_fmt(self.ci[1])}]")
        if self.dead_reason:
            rows.append(f"  not alive: {self.dead_reason}")
        return "\n".join(rows)

    def to_dict(self) -> dict[str, Any]:
        c = self.claim
        return {
            "id": c.id, "kind": c.kind, "seed_free": c.seed_free, "statement": c.statement, "paper": c.paper,
            "metric": c.metric,
            "direction": c.direction, "baseline": c.baseline, "threshold": c.threshold, "margin": c.margin,
            "rule": c.rule, "expect": c.expect, "ladder": c.ladder, "note": c.note, "rung": self.rung,
            "seeds": list(self.seeds), "values": [_json_float(v) for v in self.values],
            "references": [_json_float(r) for r in self.references],
            "holds_per_seed": list(self.holds_per_seed), "mean_improvement": _json_float(self.mean_improvement),
            "ci95": [_json_float(self.ci[0]), _json_float(self.ci[1])], "verdict": self.verdict,
            "alive_per_seed": list(self.alive_per_seed), "alive": self.alive, "dead_reason": self.dead_reason,
            **({"extra": [{k: _json_float(float(v)) for k, v in e.items()} for e in self.extras]}
               if any(self.extras) else {}),
        }


def _json_float(x: float) -> float | None:
    return x if math.isfinite(x) else None


def decide(claim: Claim, measurements: Mapping[int, Measurement | float], *, rung: str = "") -> ClaimResult:
    """Decide ``claim`` from one measurement per seed (``{seed: Measurement}``) by its rule.

    A non-finite value, or a measurement that is not ``alive``, counts as a failure at that seed (a non-finite
    one makes the mean's interval undefined). A seed-free claim is decided from one measurement: its interval
    is the value itself.

    >>> c = Claim("x", statement="s", metric="acc", direction="higher", threshold=0.5, rule="every_seed",
    ...           kind="main")
    >>> decide(c, {0: 0.9, 1: 0.8, 2: 0.7}).holds
    True
    >>> decide(c, {0: 0.9, 1: 0.8, 2: 0.4}).holds
    False
    """
    if len(measurements) < claim.seeds_needed:
        raise ValueError(f"claim {claim.id!r} needs at least {claim.seeds_needed} seeds, got {len(measurements)}")
    seeds = tuple(sorted(measurements))
    ms = [_as_measurement(claim, measurements[s]) for s in seeds]
    alive = tuple(m.alive for m in ms)
    values = tuple(m.value for m in ms)
    refs = tuple(float(m.reference) for m in ms)  # type: ignore[arg-type]
    imp = [claim.improvement(v, r) for v, r in zip(values, refs, strict=True)]
    finite = all(math.isfinite(d) for d in imp)
    per_seed = tuple(bool(math.isfinite(d) and d > claim.margin and a) for d, a in zip(imp, alive, strict=True))
    if finite:
        mean = statistics.fmean(imp)
        half = t_quantile_975(len(imp) - 1) * statistics.stdev(imp) / math.sqrt(len(imp)) if len(imp) > 1 else 0.0
        ci = (mean - half, mean + half)
    else:
        mean, ci = math.nan, (math.nan, math.nan)
    if claim.rule == "every_seed" or len(imp) == 1:
        holds = all(per_seed)
    else:
        holds = bool(finite and all(alive) and ci[0] > claim.margin)
    return ClaimResult(claim, seeds, values, refs, holds, mean, ci, per_seed, rung,
                       tuple(dict(m.extra) for m in ms), alive)


@dataclasses.dataclass
class ClaimsReport:
    """Every claim of one package decided at one rung: what ``claims.json`` holds."""

    package: str
    version: str
    rung: str
    results: list[ClaimResult]
    created: str = dataclasses.field(
        default_factory=lambda: _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"))
    load: tuple[float, float, float] | None = dataclasses.field(default_factory=lambda: _loadavg())
    command: str = ""
    seeds_from: str = "rung"

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA_VERSION, "package": self.package, "version": self.version, "rung": self.rung,
                "created": self.created, "command": self.command, "seeds_from": self.seeds_from,
                "load_at_start": None if self.load is None else list(self.load),
                "machine": {"platform": platform.platform(), "cpu": _cpu_model(), "cpu_count": os.cpu_count(),
                            "python": platform.python_version()},
                "claims": [r.to_dict() for r in self.results]}

    def save(self, path: str | os.PathLike[str], *, name: str = CLAIMS_FILE) -> Path:
        """Write ``claims.json`` (or ``name`` in a folder) atomically, as strict JSON."""
        return _save_json(path, name, self.to_dict())

    def publish(self, path: str | os.PathLike[str]) -> Path:
        """:meth:`save`, then print each claim's one-line explanation and the path written (what a ``repro``
        command shows at its end)."""
        written = self.save(path)
        for r in self.results:
            print(r.explain())
        print(f"wrote {written}")
        return written

    def unexpected(self) -> list[ClaimResult]:
        return [r for r in self.results if not r.as_expected]


def _save_json(path: str | os.PathLike[str], name: str, data: Mapping[str, Any]) -> Path:
    """``data`` written atomically as strict JSON to ``path`` (a ``.json`` file) or to ``path / name``."""
    from ._atomic import atomic_write  # noqa: PLC0415 - keep the module importable by path

    path = Path(path)
    if path.is_dir() or path.suffix != ".json":
        path = path / name
    with atomic_write(path) as f:
        f.write(json.dumps(data, indent=2, allow_nan=False) + "\n")
    return path


#: environment variables a worker of :meth:`ClaimRegistry.prefetch` takes from the process that asked
_PASSED_ENV = ("ICLR25_SMOKE", "ICLR25_DEVICE", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "XLA_FLAGS", "ICLR25_QUIET")


def _passed_env() -> dict[str, str]:
    return {k: os.environ[k] for k in _PASSED_ENV if k in os.environ}


def _registry_module(registry: ClaimRegistry) -> str:
    """The module whose ``REGISTRY`` is ``registry`` (``iclr25.<slug>.claims`` for a package's)."""
    import sys  # noqa: PLC0415

    name = "iclr25." + registry.package.removeprefix("iclr25-").replace("-", "_") + ".claims"
    mod = sys.modules.get(name)
    if mod is None or getattr(mod, "REGISTRY", None) is not registry:
        for mname, m in list(sys.modules.items()):
            if getattr(m, "REGISTRY", None) is registry:
                return mname
        raise ValueError(f"{registry.package}: prefetch needs the registry as a module-level REGISTRY (e.g. {name})")
    return name


def _measure_task(task: tuple) -> Mapping[str, Any]:
    """One (measuring function, seed) of :meth:`ClaimRegistry.prefetch`, in a worker process."""
    import importlib  # noqa: PLC0415

    module, cid, seed, rung, env = task
    os.environ.update(env)
    registry = importlib.import_module(module).REGISTRY
    fn = registry._measure_of[cid]  # noqa: SLF001
    registry.measure(cid, seed, rung)
    key = (id(fn), seed, rung, smoke_run(), os.environ.get("ICLR25_DEVICE", ""))
    return registry._cache[key]  # noqa: SLF001


def smoke_run() -> bool:
    """True inside ``iclr25 claims NAME --rung R --smoke``: the rung's code path runs for one step at one seed on
    the CPU (a test that the paper rung cannot rot); measuring code shrinks its steps and sizes when it is set."""
    return os.environ.get("ICLR25_SMOKE", "") == "1"


def calibration_file(rung: str) -> str:
    """The calibration file of ``rung``: ``claims-calibration.json`` for the ``test`` rung (the default suite's),
    ``claims-calibration-<rung>.json`` for claims calibrated at another rung (those decided only there).

    >>> calibration_file("test"), calibration_file("repro")
    ('claims-calibration.json', 'claims-calibration-repro.json')
    """
    return CALIBRATION_FILE if rung == "test" else f"claims-calibration-{rung}.json"


def load_calibration(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a calibration file (strict JSON) as one calibration dict. The ``calibration-repro`` files of
    iclr25-utils <= 0.9 (a list of one-claim reports, written by per-package ``benchmarks/calibrate_repro.py``)
    are read as one report with every claim, its seeds the union of theirs."""
    data = json.loads(Path(path).read_text(encoding="utf-8"), parse_constant=_reject_constant)
    if isinstance(data, dict) and data.get("kind") == "calibration-repro" and isinstance(data.get("reports"), list):
        reps = data["reports"]
        if not reps:
            raise ValueError(f"{path}: an empty calibration file")
        first = reps[0]
        data = {**first, "seeds": sorted({s for r in reps for s in r.get("seeds", [])}),
                "claims": [e for r in reps for e in r.get("claims", [])],
                "n_decide": first.get("n_decide"), "legacy": "calibration-repro"}
        if any(r.get("n_decide") != first.get("n_decide") for r in reps):
            raise ValueError(f"{path}: its reports were calibrated for different numbers of decision seeds")
    return data


def _cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else :func:`platform.processor`), or ``""``."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _loadavg() -> tuple[float, float, float] | None:
    try:
        return os.getloadavg()
    except OSError:
        return None


MeasureFn = Callable[[int, str], Mapping[str, Measurement | float]]


@dataclasses.dataclass(frozen=True)
class RungCost:
    """What one seed of a rung costs where it is meant to run: the ``paper`` rung's estimate (issue 59).

    ``gpu_hours`` per seed on ``hardware``, peak accelerator memory ``memory_gb``, ``what`` the configuration
    (the paper's model size, steps and data, as it reports them) and ``data`` what the rung reads (a path the user
    provides, a dataset in a wheel). ``iclr25 claims NAME --rung paper --estimate`` prints it; a rung with an
    estimate is refused on a machine without an accelerator unless ``--force``.

    A method whose paper configuration is CPU work (numpy, scipy) gives ``gpu_hours=0`` and ``cpu_hours`` (core-
    hours per seed) instead; ``memory_gb`` is then the peak RAM, and the rung is refused unless ``--force`` on
    any machine (it is the paper's scale, not a quick check).

    Examples
    --------
    >>> RungCost(0, 8, "a 32-core CPU node", "the paper's 1M-image similarity", cpu_hours=40).explain("paper", 3)
    "rung 'paper': the paper's 1M-image similarity; about 40 CPU core-hours per seed (120 for its 3 seed(s)) on a 32-core CPU node, peak memory about 8 GB (estimated)"
    """

    gpu_hours: float
    memory_gb: float
    hardware: str
    what: str
    data: str = ""
    measured: bool = False  #: True when the figures were measured on ``hardware``, False for an estimate
    cpu_hours: float = 0.0  #: CPU core-hours per seed, for a rung that needs no accelerator (``gpu_hours=0``)

    def __post_init__(self) -> None:
        for name in ("gpu_hours", "memory_gb", "cpu_hours"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise ValueError(f"RungCost.{name} must be a number >= 0, got {v!r}")
        if self.memory_gb <= 0:
            raise ValueError(f"RungCost.memory_gb must be a positive number, got {self.memory_gb!r}")
        if (self.gpu_hours > 0) == (self.cpu_hours > 0):
            raise ValueError("RungCost: give gpu_hours > 0 (a rung for an accelerator) or gpu_hours=0 and "
                             f"cpu_hours > 0 (a CPU rung), got gpu_hours={self.gpu_hours!r}, "
                             f"cpu_hours={self.cpu_hours!r}")
        if not self.hardware or not self.what:
            raise ValueError("RungCost needs the hardware and what the rung runs")

    @property
    def needs_accelerator(self) -> bool:
        """Whether the rung is meant for an accelerator (``gpu_hours > 0``) rather than CPU cores."""
        return self.gpu_hours > 0

    def explain(self, rung: str, n_seeds: int) -> str:
        how = "measured" if self.measured else "estimated"
        hours, unit, mem = ((self.gpu_hours, "GPU-hours", "accelerator memory") if self.needs_accelerator else
                            (self.cpu_hours, "CPU core-hours", "memory"))
        return (f"rung {rung!r}: {self.what}; about {hours:g} {unit} per seed ({hours * n_seeds:g} for its "
                f"{n_seeds} seed(s)) on {self.hardware}, peak {mem} about {self.memory_gb:g} GB ({how})"
                + (f"; data: {self.data}" if self.data else ""))


class ClaimRegistry:
    """A package's claims and the functions that measure them.

    ``seeds`` maps a rung name to the seeds it decides on (default: ``{"test": (0, 1, 2), "repro": (0, 1, 2, 3,
    4)}``). ``calibration`` maps a rung to the seeds its margins and thresholds are set on (default: 100-109 for
    every rung); they must be disjoint from the rung's decision seeds, so that a verdict never rests on a seed
    its margin was tuned on.
    """

    def __init__(self, package: str, *, seeds: Mapping[str, Sequence[int]] | None = None,
                 calibration: Mapping[str, Sequence[int]] | None = None,
                 costs: Mapping[str, RungCost] | None = None) -> None:
        self.package = package
        self.seeds = {k: tuple(v) for k, v in (seeds or {"test": (0, 1, 2), "repro": (0, 1, 2, 3, 4)}).items()}
        cal = calibration if calibration is not None else {r: DEFAULT_CALIBRATION for r in self.seeds}
        self.calibration = {k: tuple(v) for k, v in cal.items()}
        for rung, cs in self.calibration.items():
            if rung not in self.seeds:
                raise ValueError(f"{package}: calibration seeds for unknown rung {rung!r}; rungs: {sorted(self.seeds)}")
            overlap = sorted(set(cs) & set(self.seeds[rung]))
            if overlap:
                raise ValueError(f"{package}: the calibration seeds of rung {rung!r} overlap its decision seeds "
                                 f"{overlap}; a verdict must not rest on a seed its margin was set on")
        self.costs = dict(costs or {})
        for rung, cost in self.costs.items():
            if rung not in self.seeds:
                raise ValueError(f"{package}: a cost for unknown rung {rung!r}; rungs: {sorted(self.seeds)}")
            if not isinstance(cost, RungCost):
                raise TypeError(f"{package}: the cost of rung {rung!r} must be a RungCost")
        self.claims: dict[str, Claim] = {}
        self._measure_of: dict[str, MeasureFn] = {}
        self._cache: dict[tuple[int, int, str, bool, str], Mapping[str, Measurement | float]] = {}

    def measures(self, *claims: Claim) -> Callable[[MeasureFn], MeasureFn]:
        """Register ``claims`` as measured by the decorated function ``fn(seed, rung) -> {claim_id: value}``."""
        def register(fn: MeasureFn) -> MeasureFn:
            for c in claims:
                if c.id in self.claims:
                    raise ValueError(f"{self.package}: claim {c.id!r} is registered twice")
                self.claims[c.id] = c
                self._measure_of[c.id] = fn
            return fn
        return register

    def claims_at(self, rung: str) -> list[str]:
        """The ids of the claims decided at ``rung`` (those whose ``rungs`` name it, or that name none)."""
        self.rung_seeds(rung)
        return [cid for cid, c in self.claims.items() if c.rungs is None or rung in c.rungs]

    def rung_seeds(self, rung: str) -> tuple[int, ...]:
        if rung not in self.seeds:
            raise ValueError(f"{self.package}: unknown rung {rung!r}; rungs: {sorted(self.seeds)}")
        return self.seeds[rung]

    def calibration_seeds(self, rung: str) -> tuple[int, ...]:
        """The seeds ``rung``'s margins are set on (:meth:`calibrate`)."""
        self.rung_seeds(rung)
        return self.calibration.get(rung, DEFAULT_CALIBRATION)

    def fresh_seeds(self, rung: str, *, version: str | None = None, date: str | None = None) -> tuple[int, ...]:
        """As many new seeds (>= 1000) as ``rung`` decides on, drawn from the package, its version and the date
        (UTC, ``YYYY-MM-DD``): a verdict at seeds nobody tuned on, the same for everyone on one day."""
        return fresh_seeds(self.package, version or self.version(), date or _today(), len(self.rung_seeds(rung)))

    def version(self) -> str:
        import importlib.metadata  # noqa: PLC0415

        try:
            return importlib.metadata.version(self.package)
        except importlib.metadata.PackageNotFoundError:
            return "unknown"

    def measure(self, claim_id: str, seed: int, rung: str) -> Measurement | float:
        fn = self._measure_of[claim_id]
        # a smoke run (one step) and another device measure something else: never served from the same cache entry
        key = (id(fn), seed, rung, smoke_run(), os.environ.get("ICLR25_DEVICE", ""))
        if key not in self._cache:
            out = fn(seed, rung)
            missing = [c for c, f in self._measure_of.items() if f is fn and c not in out]
            if missing:
                raise ValueError(f"{fn.__name__}(seed={seed}, rung={rung!r}) returned no value for {missing}")
            self._cache[key] = out
        return self._cache[key][claim_id]

    def decide(self, claim_id: str, rung: str, seeds: Iterable[int] | None = None) -> ClaimResult:
        """Decide one claim at ``rung`` (its own seeds unless ``seeds``; a seed-free claim at the first only)."""
        if claim_id not in self.claims:
            raise KeyError(f"{self.package} has no claim {claim_id!r}; claims: {sorted(self.claims)}")
        seeds = tuple(self.rung_seeds(rung) if seeds is None else seeds)
        if self.claims[claim_id].seed_free:
            seeds = seeds[:1]
        return decide(self.claims[claim_id], {s: self.measure(claim_id, s, rung) for s in seeds}, rung=rung)

    def prefetch(self, rung: str, seeds: Iterable[int], *, claim_ids: Iterable[str] | None = None,
                 backend: str | None = None, n_jobs: int = -1) -> int:
        """Measure the (measuring function, seed) pairs the claims ``claim_ids`` (default: the rung's) need at
        ``seeds`` in parallel, on ``backend`` (:func:`iclr25.utils.parallel.parallel_map`: ``None``/``"loky"``
        local processes, ``"dask"`` a running ``distributed.Client``, ``"ray"``), and keep them in the cache that
        :meth:`run`, :meth:`decide` and :meth:`calibrate` read; a seed-free claim at the first seed only. Each task
        imports this registry's module again in its worker, so the registry must be a module-level ``REGISTRY``.
        Returns the number of tasks run."""
        from .parallel import parallel_map  # noqa: PLC0415

        seeds = tuple(seeds)
        ids = list(claim_ids) if claim_ids is not None else self.claims_at(rung)
        module = _registry_module(self)
        todo: dict[tuple[int, int], str] = {}
        for cid in ids:
            fn = self._measure_of[cid]
            for seed in seeds[:1] if self.claims[cid].seed_free else seeds:
                key = (id(fn), seed, rung, smoke_run(), os.environ.get("ICLR25_DEVICE", ""))
                if key not in self._cache:
                    todo.setdefault((id(fn), seed), cid)
        tasks = [(module, cid, seed, rung, _passed_env()) for (_, seed), cid in todo.items()]
        outs = parallel_map(_measure_task, tasks, n_jobs=n_jobs, backend=backend,
                            desc=f"{self.package} {rung}: seeds")
        for (_, cid, seed, rung_, _), out in zip(tasks, outs, strict=True):
            fn = self._measure_of[cid]
            self._cache[(id(fn), seed, rung_, smoke_run(), os.environ.get("ICLR25_DEVICE", ""))] = out
        return len(tasks)

    def run(self, rung: str, seeds: Iterable[int] | None = None, *, command: str = "",
            seeds_from: str = "") -> ClaimsReport:
        """Decide every claim at ``rung``; the report ``claims.json`` (or ``claims-fresh.json``) is written from.

        ``seeds_from`` records where the seeds came from (``"rung"``, ``"fresh"`` or ``"given"``)."""
        seeds = None if seeds is None else tuple(seeds)
        results = [self.decide(cid, rung, seeds) for cid in self.claims_at(rung)]
        return ClaimsReport(self.package, self.version(), rung, results, command=command,
                            seeds_from=seeds_from or ("rung" if seeds is None else "given"))

    def calibrate(self, rung: str = "test", seeds: Iterable[int] | None = None, *, only: Iterable[str] | None = None,
                  command: str = "") -> CalibrationReport:
        """Measure every claim decided at ``rung`` (or the ``only`` ones) at its calibration seeds and say, per
        claim, the largest margin with which it passes its rule at the rung's decision seeds with probability
        >= 95 % (:func:`max_margin`). With ``only``, :meth:`CalibrationReport.merged` keeps the other claims of
        an existing file, so expensive claims can be calibrated one at a time."""
        ids = self.claims_at(rung)
        if only is not None:
            only = list(dict.fromkeys(only))
            bad = [cid for cid in only if cid not in ids]
            if bad or not only:
                raise ValueError(f"--only: {bad or 'no claim'} not decided at rung {rung!r}; claims there: {ids}")
            ids = only
        seeds = tuple(self.calibration_seeds(rung) if seeds is None else seeds)
        overlap = sorted(set(seeds) & set(self.rung_seeds(rung)))
        if overlap:
            raise ValueError(f"--seeds: calibration seeds {overlap} are decision seeds of rung {rung!r}")
        if len(seeds) < 3:
            raise ValueError(f"--seeds: calibrate on at least 3 seeds (10 where the rung allows), got {len(seeds)}")
        n_decide = len(self.rung_seeds(rung))
        entries = []
        for cid in ids:
            c = self.claims[cid]
            entry: dict[str, Any] = {"id": cid, "kind": c.kind, "rule": c.rule, "direction": c.direction,
                                     "margin": c.margin, "expect": c.expect, "seed_free": c.seed_free}
            if c.seed_free:
                entries.append({**entry, "seeds": [], "max_margin": None, "ok": True,
                                "why": "seed-free: decided once, nothing to calibrate"})
                continue
            # the calibration seeds only estimate the per-seed improvement: a claim decided at many seeds
            # (min_seeds) is calibrated on as few as 3
            res = decide(dataclasses.replace(c, min_seeds=3), {s: self.measure(cid, s, rung) for s in seeds}, rung=rung)
            imp = [c.improvement(v, r) for v, r in zip(res.values, res.references, strict=True)]
            usable = all(math.isfinite(d) for d in imp) and all(res.alive_per_seed)
            mm = max_margin(c.rule, imp, n_decide) if usable else None
            entries.append({**entry, "seeds": list(res.seeds), "values": [_json_float(v) for v in res.values],
                            "references": [_json_float(r) for r in res.references],
                            "alive_per_seed": list(res.alive_per_seed),
                            "improvements": [_json_float(d) for d in imp],
                            "mean": _json_float(statistics.fmean(imp)) if usable else None,
                            "sd": _json_float(statistics.stdev(imp)) if usable else None,
                            "max_margin": None if mm is None else _json_float(mm),
                            "ok": _calibration_ok(c.expect, c.margin, mm)})
        return CalibrationReport(self.package, self.version(), rung, seeds, n_decide, entries, command=command)

    def pytest_test(self, rung: str = "test") -> Callable[[str], None]:
        """A test function parametrised over the claims: each decided at ``rung`` must match its ``expect``, and a
        claim expected to fail must still be alive (finite, sane, not equal to its reference at every seed)."""
        import pytest  # noqa: PLC0415

        @pytest.mark.parametrize("claim_id", self.claims_at(rung))
        def test_claim(claim_id: str) -> None:
            result = self.decide(claim_id, rung)
            assert result.as_expected, result.explain()
            assert result.claim.expect == "holds" or result.alive, (
                f"claim {claim_id!r} is declared to fail, but its measurement is not alive: {result.dead_reason}; "
                "a broken pipeline must not pass as a declared fail\n" + result.explain())

        return test_claim

    def committed_problems(self, folder: str | os.PathLike[str]) -> list[str]:
        """What is wrong with the package's committed ``claims.json`` and ``claims-calibration.json`` in ``folder``
        against this registry and the installed version (empty when nothing is)."""
        folder = Path(folder)
        path = folder / CLAIMS_FILE
        if not path.is_file():
            return [f"{path}: missing; write it with the package's repro"]
        try:
            data = load_report(path)
        except ValueError as exc:
            return [str(exc)]
        probs = [f"{path.name}: {p}" for p in check_report(data, version=self.version())]
        rung = data.get("rung", "")
        if rung in self.seeds:
            ids = [c["id"] for c in data["claims"]]
            want = self.claims_at(rung)
            if sorted(ids) != sorted(want):
                probs.append(f"{path.name}: claims {sorted(ids)} at rung {rung!r}, but the registry decides "
                             f"{sorted(want)} there; regenerate it")
            for c in data["claims"]:
                reg = self.claims.get(c["id"])
                if reg is None:
                    continue
                for field in ("kind", "margin", "rule", "expect", "direction", "threshold", "baseline", "seed_free"):
                    if c.get(field) != getattr(reg, field):
                        probs.append(f"{path.name}: claim {c['id']!r} has {field} {c.get(field)!r}, the registry "
                                     f"{getattr(reg, field)!r}; regenerate it")
        slug = self.package.removeprefix("iclr25-")
        cal_path = folder / CALIBRATION_FILE
        if not cal_path.is_file():
            probs.append(f"{cal_path}: missing; write it with `iclr25 claims {slug} --calibrate --out <package "
                         "folder>`")
            return probs
        for rung in ["test", *sorted(r for r in self.seeds if r != "test")]:
            path = folder / calibration_file(rung)
            if not path.is_file():
                continue
            try:
                cal = load_calibration(path)
            except ValueError as exc:
                probs.append(f"{path.name}: {exc}")
                continue
            probs += [f"{path.name}: {p}" for p in check_calibration(cal)]
            entries = {e["id"]: e for e in cal.get("claims", [])}
            cal_rung = cal.get("rung", rung)
            want = self.claims_at(cal_rung) if cal_rung in self.seeds else []
            if cal_rung == "test":  # the test rung calibrates every claim the default suite decides
                missing = [cid for cid in want if cid not in entries]
            else:  # another rung's file calibrates the claims not decided at the test rung (--only)
                missing = []
            for cid in missing:
                probs.append(f"{path.name}: claim {cid!r} was not calibrated; rerun --calibrate")
            for cid in want:
                reg, e = self.claims[cid], entries.get(cid)
                if e is None:
                    continue
                if (e.get("margin"), e.get("rule"), e.get("expect")) != (reg.margin, reg.rule, reg.expect):
                    probs.append(f"{path.name}: claim {cid!r} was calibrated with margin {e.get('margin')!r}, rule "
                                 f"{e.get('rule')!r}, expect {e.get('expect')!r}; the registry has {reg.margin!r}, "
                                 f"{reg.rule!r}, {reg.expect!r}: rerun --calibrate")
        return probs

    def uncalibrated(self, folder: str | os.PathLike[str]) -> list[str]:
        """The claims of the committed ``claims.json``'s rung that are expected to hold, depend on the seed, are not
        decided at the ``test`` rung (so ``claims-calibration.json`` does not cover them) and appear in no
        ``claims-calibration-<rung>.json``: their margins were not set on calibration seeds. Each line says the
        command that calibrates it (:meth:`pytest_committed_test` warns about them)."""
        folder = Path(folder)
        slug = self.package.removeprefix("iclr25-")
        try:
            rung = load_report(folder / CLAIMS_FILE).get("rung", "")
        except (OSError, ValueError):
            return []
        if rung not in self.seeds or "test" not in self.seeds:
            return []
        calibrated: set[str] = set()
        for r in self.seeds:
            path = folder / calibration_file(r)
            if r != "test" and path.is_file():
                try:
                    calibrated |= {e.get("id") for e in load_calibration(path).get("claims", [])}
                except ValueError:
                    pass
        at_test = set(self.claims_at("test"))
        return [f"claim {cid!r} is decided only at rung {rung!r} and its margin was not set on calibration seeds: "
                f"`iclr25 claims {slug} --calibrate --rung {rung} --only {cid} --out <package folder>`"
                for cid in self.claims_at(rung)
                if cid not in calibrated and cid not in at_test and not self.claims[cid].seed_free
                and self.claims[cid].expect == "holds"]

    def pytest_committed_test(self, folder: str | os.PathLike[str]) -> Callable[[], None]:
        """A test that the committed ``claims.json`` and ``claims-calibration.json`` in ``folder`` (the package's
        folder) agree with this registry and the installed version (:meth:`committed_problems`)."""
        def test_committed_claims() -> None:
            probs = self.committed_problems(folder)
            assert not probs, "\n".join(probs)
            for line in self.uncalibrated(folder):
                warnings.warn(line, UserWarning, stacklevel=1)

        return test_committed_claims


def _today() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d")


def fresh_seeds(package: str, version: str, date: str, n: int) -> tuple[int, ...]:
    """``n`` distinct seeds in [1000, 10**6) drawn from ``package``, ``version`` and ``date``.

    >>> fresh_seeds("iclr25-x", "0.1.0", "2026-12-05", 3) == fresh_seeds("iclr25-x", "0.1.0", "2026-12-05", 3)
    True
    >>> min(fresh_seeds("iclr25-x", "0.1.0", "2026-12-05", 5)) >= 1000
    True
    """
    import hashlib  # noqa: PLC0415
    import random  # noqa: PLC0415

    digest = hashlib.sha256(f"{package} {version} {date}".encode()).digest()
    return tuple(sorted(random.Random(int.from_bytes(digest[:8], "big")).sample(range(1000, 10**6), n)))


def max_margin(rule: str, improvements: Sequence[float], n_decide: int, *, power: float = POWER) -> float:
    """The largest margin with which a claim passes ``rule`` at ``n_decide`` new seeds with probability ``power``,
    when the per-seed improvement is normal with the mean and sd of ``improvements`` (the calibration seeds).

    ``"every_seed"``: each seed must clear the margin, so each must with probability ``power ** (1 / n)``:
    the margin is the mean minus that normal quantile times the sd. ``"mean_ci"``: the margin is the 5 %
    quantile of the 95 % interval's lower end over 20,000 simulated sets of ``n`` seeds (fixed random stream).
    The calibration seeds' own sampling error is not added: use >= 10 of them.

    >>> round(max_margin("every_seed", [1.0, 1.2, 0.8, 1.1, 0.9], 3), 3)
    0.665
    >>> max_margin("every_seed", [0.5, 0.5, 0.5], 3)
    0.5
    """
    import random  # noqa: PLC0415

    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    imp = [float(d) for d in improvements]
    if len(imp) < 2 or not all(math.isfinite(d) for d in imp):
        raise ValueError("max_margin needs >= 2 finite improvements")
    mu, sd = statistics.fmean(imp), statistics.stdev(imp)
    if sd == 0 or n_decide == 1:
        return mu - (statistics.NormalDist().inv_cdf(power) * sd if sd else 0.0)
    if rule == "every_seed":
        return mu - statistics.NormalDist().inv_cdf(power ** (1.0 / n_decide)) * sd
    rng = random.Random(0)
    t = t_quantile_975(n_decide - 1)
    lows = []
    gauss, n, root_n = rng.gauss, n_decide, math.sqrt(n_decide)
    for _ in range(20_000):
        xs = [gauss(mu, sd) for _ in range(n)]
        m = sum(xs) / n
        s = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
        lows.append(m - t * s / root_n)
    lows.sort()
    return lows[int((1.0 - power) * len(lows))]


def _calibration_ok(expect: str, margin: float, mm: float | None) -> bool:
    """A claim expected to hold is calibrated when its margin is below :func:`max_margin` (a declared fail always
    is: the calibration only shows how far it is from holding)."""
    if expect == "fails":
        return True
    return mm is not None and margin < mm


@dataclasses.dataclass
class CalibrationReport:
    """The margins a registry's claims can carry, from the calibration seeds: what ``claims-calibration.json`` holds."""

    package: str
    version: str
    rung: str
    seeds: tuple[int, ...]
    n_decide: int
    claims: list[dict[str, Any]]
    command: str = ""
    created: str = dataclasses.field(
        default_factory=lambda: _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"))

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA_VERSION, "kind": "calibration", "package": self.package, "version": self.version,
                "rung": self.rung, "created": self.created, "command": self.command, "seeds": list(self.seeds),
                "n_decide": self.n_decide, "power": POWER, "claims": self.claims}

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the rung's calibration file (:func:`calibration_file`: in a folder, or at a ``.json`` path)
        atomically, as strict JSON."""
        return _save_json(path, calibration_file(self.rung), self.to_dict())

    def merged(self, previous: Mapping[str, Any] | None, keep: Iterable[str]) -> CalibrationReport:
        """This report plus the entries of ``previous`` (a loaded calibration file of the same package and rung)
        for the claims in ``keep`` that this report did not measure; the seeds are the union. Each entry keeps
        its own seeds, values and max margin, so the file is still checked entry by entry.

        A claim measured here *and* in ``previous`` at other seeds, by the same version with the same rule,
        direction, margin and expect, is extended: its seeds, values and improvements are joined and its mean,
        sd and max margin recomputed over all of them (calibration seeds 100-104 in one session, 105-109 in the
        next, without measuring the first ones again). At shared seeds, or after any change, the new entry
        replaces the old one."""
        if not previous or previous.get("rung") != self.rung or previous.get("package") != self.package \
                or previous.get("n_decide") != self.n_decide:
            return self
        mine = {e["id"] for e in self.claims}
        keep = set(keep) - mine
        old = [e for e in previous.get("claims", []) if e.get("id") in keep]
        before = {e.get("id"): e for e in previous.get("claims", [])} if previous.get("version") == self.version \
            else {}
        claims = [self._extended(e, before.get(e["id"])) for e in self.claims]
        if not old and claims == self.claims:
            return self
        seeds = tuple(sorted({s for e in old + claims for s in e.get("seeds", [])} | set(self.seeds)))
        return dataclasses.replace(self, seeds=seeds, claims=old + claims)

    def _extended(self, new: dict[str, Any], prev: Mapping[str, Any] | None) -> dict[str, Any]:
        fields = ("kind", "rule", "direction", "margin", "expect", "seed_free")
        if (prev is None or new.get("seed_free") or any(prev.get(f) != new.get(f) for f in fields)
                or new.get("mean") is None or prev.get("mean") is None
                or set(prev.get("seeds", [])) & set(new.get("seeds", []))):
            return new
        cols = ("seeds", "values", "references", "alive_per_seed", "improvements")
        rows = sorted([*zip(*(prev[c] for c in cols), strict=True), *zip(*(new[c] for c in cols), strict=True)])
        joined = {c: [r[i] for r in rows] for i, c in enumerate(cols)}
        imp = [float(d) for d in joined["improvements"]]
        mm = max_margin(new["rule"], imp, self.n_decide)
        return {**new, **joined, "mean": _json_float(statistics.fmean(imp)), "sd": _json_float(statistics.stdev(imp)),
                "max_margin": _json_float(mm), "ok": _calibration_ok(new["expect"], new["margin"], mm)}

    def explain(self) -> str:
        rows = [f"calibration of {self.package} {self.version} at rung {self.rung!r}, seeds "
                f"{', '.join(map(str, self.seeds))}; max margin = passes at {self.n_decide} new seeds with "
                f"probability >= {POWER:.0%}"]
        for e in self.claims:
            if e.get("seed_free"):
                rows.append(f"  {e['id']} [{e['kind']}]: seed-free")
                continue
            rows.append(f"  {e['id']} [{e['kind']}] ({e['rule']}, expect {e['expect']}): improvement mean "
                        f"{_fmt(e['mean'])} sd {_fmt(e['sd'])}; max margin {_fmt(e['max_margin'])}, margin "
                        f"{_fmt(e['margin'])}: {'ok' if e['ok'] else 'NOT CALIBRATED'}")
        return "\n".join(rows)

    def uncalibrated(self) -> list[str]:
        return [e["id"] for e in self.claims if not e["ok"]]


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def check_report(data: Mapping[str, Any], *, version: str | None = None) -> list[str]:
    """What is wrong with a loaded ``claims.json`` (empty when nothing is): the schema, each claim's kind and seed
    count, every verdict, per-seed verdict and interval recomputed from the stored values (a value edited by hand
    with its verdict kept is caught), each verdict equal to the claim's ``expect``, a declared fail that is alive,
    the rung (``claims.json`` is written by ``repro``, not at the ``test`` rung) and, when given, the version.
    """
    probs: list[str] = []
    if data.get("schema") != SCHEMA_VERSION:
        return [f"schema {data.get('schema')!r}, expected {SCHEMA_VERSION}: regenerate it with the package's repro"]
    if version is not None and data.get("version") != version:
        probs.append(f"written by version {data.get('version')!r}, the package is {version!r}: regenerate it with "
                     "the package's repro")
    if data.get("rung") == "test":
        probs.append("written at the test rung; claims.json comes from the package's repro")
    if data.get("seeds_from") not in (None, "rung"):
        probs.append(f"decided at {data.get('seeds_from')} seeds, not the rung's own")
    for c in data.get("claims", []):
        cid = c.get("id")
        try:
            claim = Claim(cid, statement=c["statement"], metric=c["metric"], direction=c["direction"],
                          paper=c.get("paper", ""), baseline=c.get("baseline"), threshold=c.get("threshold"),
                          margin=c["margin"], rule=c["rule"], expect=c["expect"], ladder=c.get("ladder", ""),
                          kind=c.get("kind", ""), seed_free=c.get("seed_free", False), min_seeds=3)
        except (KeyError, TypeError, ValueError) as exc:
            probs.append(f"claim {cid!r}: {exc}")
            continue
        vals = [math.nan if v is None else float(v) for v in c.get("values", [])]
        refs = [math.nan if v is None else float(v) for v in c.get("references", [])]
        seeds = c.get("seeds", [])
        alive = c.get("alive_per_seed") or [True] * len(seeds)
        if not (len(vals) == len(refs) == len(seeds) == len(alive)):
            probs.append(f"claim {cid!r}: seeds, values, references and alive_per_seed differ in length")
            continue
        if len(seeds) < claim.seeds_needed:
            probs.append(f"claim {cid!r} rests on {len(seeds)} seed(s) (< {claim.seeds_needed})")
            continue
        ms = {s: Measurement(v, None if claim.threshold is not None else r, alive=a)
              for s, v, r, a in zip(seeds, vals, refs, alive, strict=True)}
        if claim.baseline is not None and any(math.isnan(r) for r in refs):
            probs.append(f"claim {cid!r}: a reference is missing")
            continue
        res = decide(claim, ms, rung=c.get("rung", ""))
        if res.verdict != c.get("verdict") or list(res.holds_per_seed) != c.get("holds_per_seed") \
                or not _close(_json_float(res.mean_improvement), c.get("mean_improvement")) \
                or not all(_close(_json_float(a), b) for a, b in zip(res.ci, c.get("ci95", [None, None]), strict=False)):
            probs.append(f"claim {cid!r}: the stored verdict ({c.get('verdict')!r}, per seed {c.get('holds_per_seed')}) "
                         f"is not what its values give ({res.verdict!r}, per seed {list(res.holds_per_seed)}); "
                         "claims.json is never edited by hand")
            continue
        if not res.as_expected:
            probs.append(f"claim {cid!r}: {res.verdict}, but the registry expects it {claim.expect}")
        if claim.expect == "fails" and not res.alive:
            probs.append(f"claim {cid!r} is a declared fail that is not alive: {res.dead_reason}")
    return probs


def check_calibration(data: Mapping[str, Any]) -> list[str]:
    """What is wrong with a loaded ``claims-calibration.json``: each max margin recomputed from the stored
    improvements, and every claim expected to hold calibrated (its margin below the max margin)."""
    probs: list[str] = []
    if data.get("schema") != SCHEMA_VERSION or data.get("kind") != "calibration":
        return [f"not a calibration file of schema {SCHEMA_VERSION}"]
    n = int(data.get("n_decide", 0))
    if len(data.get("seeds", [])) < 3:
        probs.append(f"calibrated on {len(data.get('seeds', []))} seeds (< 3)")
    for e in data.get("claims", []):
        if e.get("seed_free"):
            continue
        imp = e.get("improvements") or []
        mm = None
        if imp and all(d is not None for d in imp) and all(e.get("alive_per_seed", [True])) and n >= 1:
            mm = max_margin(e["rule"], imp, n)
        if not _close(mm, e.get("max_margin")):
            probs.append(f"claim {e.get('id')!r}: stored max_margin {e.get('max_margin')!r} is not what its "
                         f"improvements give ({mm!r}); the file is never edited by hand")
        elif not _calibration_ok(e.get("expect", "holds"), e.get("margin", 0.0), mm):
            probs.append(f"claim {e.get('id')!r}: margin {e.get('margin')!r} is not below the calibrated max margin "
                         f"{_fmt(mm)} (expected to hold at {n} new seeds with probability >= {POWER:.0%})")
    return probs


# ------------------------------------------------------------------------------------------ tables
def load_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a ``claims.json`` (strict JSON), checking its schema and that every claim has >= 3 seeds."""
    path = Path(path)
    data = json.loads(path.read_text(encoding="utf-8"), parse_constant=_reject_constant)
    if not isinstance(data, dict) or data.get("schema") not in (1, SCHEMA_VERSION) \
            or not isinstance(data.get("claims"), list):
        raise ValueError(f"{path}: not a claims.json of schema {SCHEMA_VERSION}")
    for c in data["claims"]:
        need = 1 if c.get("seed_free") else 3
        if len(c.get("seeds", [])) < need:
            raise ValueError(f"{path}: claim {c.get('id')!r} rests on {len(c.get('seeds', []))} seeds (< {need})")
    return data


def _reject_constant(name: str) -> None:
    raise ValueError(f"claims.json holds {name}, which is not strict JSON")


def _fmt(x: float | None) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    if x == 0 or 1e-3 <= abs(x) < 1e5:
        return f"{x:.4g}"
    return f"{x:.3e}"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def kind_counts(claims: Sequence[Mapping[str, Any]]) -> str:
    """``"main: 2 of 3 hold; secondary: 1 of 1; sanity: 2 of 2"`` for a list of claims of ``claims.json``."""
    parts = []
    for kind in (*KINDS, ""):
        cs = [c for c in claims if c.get("kind", "") == kind]
        if cs:
            n_hold = sum(c["verdict"] == "holds" for c in cs)
            parts.append(f"{kind or 'no kind'}: {n_hold} of {len(cs)}" + (" hold" if not parts else ""))
    return "; ".join(parts)


def by_kind(claims: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Claims sorted main first, then secondary, then sanity (the registry's order within a kind)."""
    order = {k: i for i, k in enumerate(KINDS)}
    return sorted(claims, key=lambda c: order.get(c.get("kind", ""), len(KINDS)))


def render_table(report: Mapping[str, Any], *, kinds: Sequence[str] | None = None,
                 ladder_link: Callable[[str], str] | None = None, more: str = "") -> str:
    """The README's claims table made from a loaded ``claims.json``: main claims first, kinds counted apart.

    ``kinds`` keeps only those kinds' rows (a short README shows its ``main`` claims; the head still counts every
    kind, and ``more`` says where the rest are); ``ladder_link`` maps a claim's ``ladder`` to the link written
    (a ladder that moved from the README to the package's EVIDENCE.md)."""
    c0 = by_kind(report["claims"])
    rungs = sorted({c.get("rung", report.get("rung", "")) for c in c0})
    load = report.get("load_at_start")
    head = (f"Claims of `{report['package']} {report['version']}`, rung `{'`, `'.join(rungs)}`, "
            f"{report['created'][:10]}" + (f", load {load[0]:.2f} at start" if load else "")
            + (f", `{report['command']}`" if report.get("command") else "") + ". "
            + f"**{kind_counts(c0)}.**" + (f" {more}" if more else ""))
    lines = [head, "", "| kind | claim | verdict | paper | metric | ours (per seed) | reference (per seed) | rule |",
             "|---|---|---|---|---|---|---|---|"]
    for c in c0:
        if kinds is not None and c.get("kind") not in kinds:
            continue
        arrow = "↑" if c["direction"] == "higher" else "↓"
        ref_name = c["baseline"] if c.get("baseline") is not None else "threshold"
        per = ", ".join(_fmt(v) for v in c["values"])
        refs = ", ".join(_fmt(v) for v in c["references"])
        seeds = (f"seed-free: decided once, seed {c['seeds'][0]}" if c.get("seed_free")
                 else f"seeds {', '.join(str(s) for s in c['seeds'])}")
        rule = ("every seed" if c["rule"] == "every_seed" else "95 % CI of mean") + \
            (f", margin {_fmt(c['margin'])}" if c.get("margin") else "")
        verdict = c["verdict"] + (" (expected)" if c.get("expect") == "fails" and c["verdict"] != "holds" else "") \
            + (f" ([ladder]({ladder_link(c['ladder']) if ladder_link else c['ladder']}))" if c.get("ladder") else "")
        if c.get("dead_reason"):
            verdict += f"; not alive: {c['dead_reason']}"
        lines.append("| " + " | ".join(_cell(x) for x in (
            c.get("kind") or "–", f"**{c['id']}**: {c['statement']}", verdict, c.get("paper") or "–",
            f"{c['metric']} {arrow}", f"{per} ({seeds})", f"{ref_name}: {refs}", rule)) + " |")
    return "\n".join(lines) + "\n"


def replace_table(readme_text: str, table: str) -> str:
    """``readme_text`` with the text between :data:`TABLE_BEGIN` and :data:`TABLE_END` replaced by ``table``."""
    begin, end = readme_text.find(TABLE_BEGIN), readme_text.find(TABLE_END)
    if begin < 0 or end < begin:
        raise ValueError(f"the README has no claims-table markers ({TABLE_BEGIN!r} ... {TABLE_END!r})")
    return readme_text[:begin + len(TABLE_BEGIN)] + "\n" + table + readme_text[end:]
