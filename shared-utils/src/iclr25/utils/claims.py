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
              baseline="variational bound", direction="lower", rule="every_seed"))
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
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["Claim", "Measurement", "ClaimResult", "ClaimsReport", "ClaimRegistry", "decide", "render_table",
           "replace_table", "TABLE_BEGIN", "TABLE_END", "CLAIMS_FILE", "t_quantile_975", "load_report"]

SCHEMA_VERSION = 1
CLAIMS_FILE = "claims.json"
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
        if self.expect == "fails" and not self.ladder:
            raise ValueError(f"claim {self.id!r}: a claim expected to fail names its ladder/ablation (ladder=)")

    @property
    def reference_name(self) -> str:
        return self.baseline if self.baseline is not None else f"threshold {_fmt(self.threshold)}"

    def improvement(self, value: float, reference: float) -> float:
        """How much better ``value`` is than ``reference`` (positive = better, in the metric's units)."""
        return value - reference if self.direction == "higher" else reference - value


@dataclasses.dataclass(frozen=True)
class Measurement:
    """One seed's value of a claim's metric and, for a baseline claim, the baseline's value in the same call."""

    value: float
    reference: float | None = None
    extra: Mapping[str, float] = dataclasses.field(default_factory=dict)


def _as_measurement(claim: Claim, m: Measurement | float) -> Measurement:
    if not isinstance(m, Measurement):
        m = Measurement(float(m))
    if claim.baseline is not None and m.reference is None:
        raise ValueError(f"claim {claim.id!r} compares with {claim.baseline!r}: return Measurement(value, "
                         "reference=<the baseline's value>)")
    ref = claim.threshold if claim.threshold is not None else m.reference
    return Measurement(float(m.value), float(ref), dict(m.extra))


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

    @property
    def verdict(self) -> str:
        return "holds" if self.holds else "does not hold"

    @property
    def as_expected(self) -> bool:
        return self.holds == (self.claim.expect == "holds")

    def explain(self) -> str:
        """A few lines: the claim, each seed's value against its reference, the rule and the verdict."""
        c = self.claim
        rows = [f"claim {c.id!r} ({c.rule}, {c.direction} is better, margin {_fmt(c.margin)}, rung {self.rung!r}): "
                f"{self.verdict}; expected: {c.expect}"]
        for s, v, r, ok in zip(self.seeds, self.values, self.references, self.holds_per_seed, strict=True):
            rows.append(f"  seed {s}: {c.metric} = {_fmt(v)} vs {c.reference_name} = {_fmt(r)} "
                        f"({'holds' if ok else 'fails'})")
        rows.append(f"  mean improvement {_fmt(self.mean_improvement)}, 95 % CI [{_fmt(self.ci[0])}, "
                    f"{_fmt(self.ci[1])}]")
        return "\n".join(rows)

    def to_dict(self) -> dict[str, Any]:
        c = self.claim
        return {
            "id": c.id, "statement": c.statement, "paper": c.paper, "metric": c.metric,
            "direction": c.direction, "baseline": c.baseline, "threshold": c.threshold, "margin": c.margin,
            "rule": c.rule, "expect": c.expect, "ladder": c.ladder, "note": c.note, "rung": self.rung,
            "seeds": list(self.seeds), "values": [_json_float(v) for v in self.values],
            "references": [_json_float(r) for r in self.references],
            "holds_per_seed": list(self.holds_per_seed), "mean_improvement": _json_float(self.mean_improvement),
            "ci95": [_json_float(self.ci[0]), _json_float(self.ci[1])], "verdict": self.verdict,
            **({"extra": [{k: _json_float(float(v)) for k, v in e.items()} for e in self.extras]}
               if any(self.extras) else {}),
        }


def _json_float(x: float) -> float | None:
    return x if math.isfinite(x) else None


def decide(claim: Claim, measurements: Mapping[int, Measurement | float], *, rung: str = "") -> ClaimResult:
    """Decide ``claim`` from one measurement per seed (``{seed: Measurement}``) by its rule.

    A non-finite value counts as a failure at that seed (and makes the mean's interval undefined).

    >>> c = Claim("x", statement="s", metric="acc", direction="higher", threshold=0.5, rule="every_seed")
    >>> decide(c, {0: 0.9, 1: 0.8, 2: 0.7}).holds
    True
    >>> decide(c, {0: 0.9, 1: 0.8, 2: 0.4}).holds
    False
    """
    if len(measurements) < claim.min_seeds:
        raise ValueError(f"claim {claim.id!r} needs at least {claim.min_seeds} seeds, got {len(measurements)}")
    seeds = tuple(sorted(measurements))
    ms = [_as_measurement(claim, measurements[s]) for s in seeds]
    values = tuple(m.value for m in ms)
    refs = tuple(float(m.reference) for m in ms)  # type: ignore[arg-type]
    imp = [claim.improvement(v, r) for v, r in zip(values, refs, strict=True)]
    finite = all(math.isfinite(d) for d in imp)
    per_seed = tuple(bool(math.isfinite(d) and d > claim.margin) for d in imp)
    if finite:
        mean = statistics.fmean(imp)
        half = t_quantile_975(len(imp) - 1) * statistics.stdev(imp) / math.sqrt(len(imp))
        ci = (mean - half, mean + half)
    else:
        mean, ci = math.nan, (math.nan, math.nan)
    holds = all(per_seed) if claim.rule == "every_seed" else bool(finite and ci[0] > claim.margin)
    return ClaimResult(claim, seeds, values, refs, holds, mean, ci, per_seed, rung,
                       tuple(dict(m.extra) for m in ms))


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

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA_VERSION, "package": self.package, "version": self.version, "rung": self.rung,
                "created": self.created, "command": self.command,
                "load_at_start": None if self.load is None else list(self.load),
                "machine": {"platform": platform.platform(), "cpu": _cpu_model(), "cpu_count": os.cpu_count(),
                            "python": platform.python_version()},
                "claims": [r.to_dict() for r in self.results]}

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write ``claims.json`` atomically, as strict JSON."""
        from ._atomic import atomic_write  # noqa: PLC0415 - keep the module importable by path

        path = Path(path)
        if path.is_dir() or path.suffix != ".json":
            path = path / CLAIMS_FILE
        with atomic_write(path) as f:
            f.write(json.dumps(self.to_dict(), indent=2, allow_nan=False) + "\n")
        return path

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


class ClaimRegistry:
    """A package's claims and the functions that measure them.

    ``seeds`` maps a rung name to the seeds it runs (default: ``{"test": (0, 1, 2), "repro": (0, 1, 2, 3, 4)}``).
    """

    def __init__(self, package: str, *, seeds: Mapping[str, Sequence[int]] | None = None) -> None:
        self.package = package
        self.seeds = {k: tuple(v) for k, v in (seeds or {"test": (0, 1, 2), "repro": (0, 1, 2, 3, 4)}).items()}
        self.claims: dict[str, Claim] = {}
        self._measure_of: dict[str, MeasureFn] = {}
        self._cache: dict[tuple[int, int, str], Mapping[str, Measurement | float]] = {}

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

    def measure(self, claim_id: str, seed: int, rung: str) -> Measurement | float:
        fn = self._measure_of[claim_id]
        key = (id(fn), seed, rung)
        if key not in self._cache:
            out = fn(seed, rung)
            missing = [c for c, f in self._measure_of.items() if f is fn and c not in out]
            if missing:
                raise ValueError(f"{fn.__name__}(seed={seed}, rung={rung!r}) returned no value for {missing}")
            self._cache[key] = out
        return self._cache[key][claim_id]

    def decide(self, claim_id: str, rung: str, seeds: Iterable[int] | None = None) -> ClaimResult:
        if claim_id not in self.claims:
            raise KeyError(f"{self.package} has no claim {claim_id!r}; claims: {sorted(self.claims)}")
        seeds = tuple(self.rung_seeds(rung) if seeds is None else seeds)
        return decide(self.claims[claim_id], {s: self.measure(claim_id, s, rung) for s in seeds}, rung=rung)

    def run(self, rung: str, seeds: Iterable[int] | None = None, *, command: str = "") -> ClaimsReport:
        """Decide every claim at ``rung``; the report ``claims.json`` is written from."""
        import importlib.metadata  # noqa: PLC0415

        try:
            version = importlib.metadata.version(self.package)
        except importlib.metadata.PackageNotFoundError:
            version = "unknown"
        seeds = None if seeds is None else tuple(seeds)
        results = [self.decide(cid, rung, seeds) for cid in self.claims_at(rung)]
        return ClaimsReport(self.package, version, rung, results, command=command)

    def pytest_test(self, rung: str = "test") -> Callable[[str], None]:
        """A test function parametrised over the claims: each decided at ``rung`` must match its ``expect``."""
        import pytest  # noqa: PLC0415

        @pytest.mark.parametrize("claim_id", self.claims_at(rung))
        def test_claim(claim_id: str) -> None:
            result = self.decide(claim_id, rung)
            assert result.as_expected, result.explain()

        return test_claim


# ------------------------------------------------------------------------------------------ tables
def load_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a ``claims.json`` (strict JSON), checking its schema and that every claim has >= 3 seeds."""
    path = Path(path)
    data = json.loads(path.read_text(encoding="utf-8"), parse_constant=_reject_constant)
    if not isinstance(data, dict) or data.get("schema") != SCHEMA_VERSION or not isinstance(data.get("claims"), list):
        raise ValueError(f"{path}: not a claims.json of schema {SCHEMA_VERSION}")
    for c in data["claims"]:
        if len(c.get("seeds", [])) < 3:
            raise ValueError(f"{path}: claim {c.get('id')!r} rests on {len(c.get('seeds', []))} seeds (< 3)")
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


def render_table(report: Mapping[str, Any]) -> str:
    """The README's claims table made from a loaded ``claims.json``."""
    c0 = report["claims"]
    rungs = sorted({c.get("rung", report.get("rung", "")) for c in c0})
    load = report.get("load_at_start")
    head = (f"Claims of `{report['package']} {report['version']}`, rung `{'`, `'.join(rungs)}`, "
            f"{report['created'][:10]}" + (f", load {load[0]:.2f} at start" if load else "")
            + (f", `{report['command']}`" if report.get("command") else "") + ".")
    lines = [head, "", "| claim | paper | metric | ours (per seed) | reference (per seed) | rule | verdict |",
             "|---|---|---|---|---|---|---|"]
    for c in c0:
        arrow = "↑" if c["direction"] == "higher" else "↓"
        ref_name = c["baseline"] if c.get("baseline") is not None else "threshold"
        per = ", ".join(_fmt(v) for v in c["values"])
        refs = ", ".join(_fmt(v) for v in c["references"])
        rule = ("every seed" if c["rule"] == "every_seed" else "95 % CI of mean") + \
            (f", margin {_fmt(c['margin'])}" if c.get("margin") else "")
        verdict = c["verdict"] + (f" ([ladder]({c['ladder']}))" if c.get("ladder") else "")
        lines.append("| " + " | ".join(_cell(x) for x in (
            f"**{c['id']}**: {c['statement']}", c.get("paper") or "–", f"{c['metric']} {arrow}",
            f"{per} (seeds {', '.join(str(s) for s in c['seeds'])})", f"{ref_name}: {refs}", rule, verdict)) + " |")
    return "\n".join(lines) + "\n"


def replace_table(readme_text: str, table: str) -> str:
    """``readme_text`` with the text between :data:`TABLE_BEGIN` and :data:`TABLE_END` replaced by ``table``."""
    begin, end = readme_text.find(TABLE_BEGIN), readme_text.find(TABLE_END)
    if begin < 0 or end < begin:
        raise ValueError(f"the README has no claims-table markers ({TABLE_BEGIN!r} ... {TABLE_END!r})")
    return readme_text[:begin + len(TABLE_BEGIN)] + "\n" + table + readme_text[end:]
