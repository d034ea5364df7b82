"""The conformance suite every package runs in one line (like scikit-learn's ``parametrize_with_checks``).

In ``packages/<slug>/tests/test_conformance.py``::

    from pathlib import Path
    from iclr25.utils.testing import parametrize_with_checks

    @parametrize_with_checks("pgw", root=Path(__file__).parents[1])
    def test_conformance(check):
        check()

The checks: ``__version__`` equals the installed metadata and ``__all__`` names exist; ``iclr25 <slug> --help``
and ``python -m iclr25.<module> --help`` work, and ``--help`` imports neither torch nor jax; ``demo`` finishes
inside its budget and writes a ``results.json`` that loads back, with the figures it lists and a wall time that
covers the whole command; the demo declares a headline metric with its baseline and direction, and the headline
holds or the run says in one line why not; ``--out`` naming an existing file or a previous run is refused before
any work, with nothing touched; the same seed gives the same metrics twice (timing metrics excepted); the
README's Quickstart block and ``examples/quickstart.py`` run.

The demo's budget is load-proof: it is met when the smaller of the demo's wall time and its process's CPU time
(user + system, children included) is within the budget. On a quiet machine wall time is what a user waits;
on a loaded one wall time grows while CPU time does not, so an unchanged demo does not fail under load.

With ``file_commands`` (the argv of each subcommand that reads a user's file, ``{file}`` standing for the
input path and ``{out}`` for an output path), every such command is given a missing, an empty and a garbage
file, and must exit 2 with one line on stderr naming the file, no traceback, and nothing written::

    @parametrize_with_checks("pgw", root=..., file_commands=[["distance", "{file}.npy", "{file}.npy"],
                                                           ["pairwise", "{file}.npy", "--out", "{out}.npy"]])
"""

from __future__ import annotations

import atexit
import functools
import importlib
import importlib.metadata
import json
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .results import RunResult

if TYPE_CHECKING:
    from .claims import ClaimRegistry

__all__ = ["package_checks", "one_error_line", "parametrize_with_checks", "readme_quickstart", "run_python", "help_probe",
           "check_file_inputs", "check_out_policy", "check_demo_headline", "children_cpu_seconds",
           "StubChatServer", "stub_chat_server", "deny_writes", "check_paper_rung", "check_numpy_lint"]

DEMO_BUDGET_S = 60.0
#: Modules that ``iclr25 <slug> --help`` must not import (seconds of start-up each).
HEAVY_MODULES = ("torch", "jax", "tensorflow")
_DEMO_CACHE: dict[tuple[str, int], tuple[RunResult, float, Path]] = {}
#: CPU seconds (user + system) of each cached demo process, by (slug, seed).
_DEMO_CPU: dict[tuple[str, int], float] = {}
_TEMP_DIRS: list[Path] = []
#: Seconds of a demo process that its recorded wall time may leave out (interpreter start-up, light imports).
WALL_SLACK_S = 2.0


def _temp_dir(prefix: str) -> Path:
    """A temporary folder removed when the test process exits (the suite leaves nothing in /tmp)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    if not _TEMP_DIRS:
        atexit.register(lambda: [shutil.rmtree(p, ignore_errors=True) for p in _TEMP_DIRS])
    _TEMP_DIRS.append(path)
    return path


def one_error_line(stderr: str) -> str:
    """The one non-blank line of a command's ``stderr``; fails the test when there are more, or a traceback.

    >>> one_error_line("iclr25 toy: error: --n must be an integer >= 1, got 0\\n")
    'iclr25 toy: error: --n must be an integer >= 1, got 0'
    """
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def run_python(args: list[str], *, cwd: Path | None = None, timeout: float = 600.0,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``sys.executable ARGS`` quietly (``ICLR25_QUIET=1``, Agg backend) and capture its output."""
    full_env = {**os.environ, "ICLR25_QUIET": "1", "MPLBACKEND": "Agg", **(env or {})}
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=full_env, check=False)


def _ok(proc: subprocess.CompletedProcess[str], what: str) -> None:
    assert proc.returncode == 0, (
        f"{what} exited with {proc.returncode}\n--- stdout ---\n{proc.stdout[-3000:]}\n"
        f"--- stderr ---\n{proc.stderr[-3000:]}"
    )


def _module(slug: str) -> str:
    return slug.replace("-", "_")


def check_version(slug: str) -> None:
    mod = importlib.import_module(f"iclr25.{_module(slug)}")
    installed = importlib.metadata.version(f"iclr25-{slug}")
    assert getattr(mod, "__version__", None) == installed, (
        f"iclr25.{_module(slug)}.__version__ = {getattr(mod, '__version__', None)!r}, metadata says {installed!r}"
    )


def check_public_api(slug: str) -> None:
    mod = importlib.import_module(f"iclr25.{_module(slug)}")
    names = getattr(mod, "__all__", None)
    assert isinstance(names, (list, tuple)) and names, f"iclr25.{_module(slug)} has no non-empty __all__"
    missing = [n for n in names if not hasattr(mod, n)]
    assert not missing, f"__all__ names missing from iclr25.{_module(slug)}: {missing}"


def check_help(slug: str) -> None:
    script = Path(sys.executable).parent / "iclr25"
    if script.exists():
        proc = subprocess.run([str(script), slug, "--help"], capture_output=True, text=True, timeout=120,
                              check=False)
    else:  # an interpreter without the console script (e.g. run from a source tree)
        proc = run_python(["-m", "iclr25.utils.cli", slug, "--help"], timeout=120)
    _ok(proc, f"iclr25 {slug} --help")
    for cmd in ("demo", "repro"):
        assert cmd in proc.stdout, f"iclr25 {slug} --help does not mention the {cmd!r} command"
    _ok(run_python(["-m", f"iclr25.{_module(slug)}", "--help"], timeout=120),
        f"python -m iclr25.{_module(slug)} --help")


_HELP_PROBE = """
import json, sys, time
t0 = time.perf_counter()
from iclr25.utils.cli import main
try:
    main([sys.argv[1], "--help"])
except SystemExit:
    pass
heavy = [m for m in json.loads(sys.argv[2]) if m in sys.modules]
print("ICLR25-PROBE " + json.dumps({"heavy": heavy, "seconds": time.perf_counter() - t0}))
"""


def help_probe(slug: str) -> dict:
    """Run ``iclr25 <slug> --help`` in a fresh interpreter: the heavy modules it imported and its seconds."""
    proc = run_python(["-c", _HELP_PROBE, slug, json.dumps(HEAVY_MODULES)], timeout=120)
    _ok(proc, f"iclr25 {slug} --help (import probe)")
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("ICLR25-PROBE ")][-1]
    return json.loads(line.removeprefix("ICLR25-PROBE "))


def check_help_light(slug: str) -> None:
    probe = help_probe(slug)
    assert not probe["heavy"], (
        f"iclr25 {slug} --help imported {probe['heavy']} ({probe['seconds']:.1f} s): import heavy backends "
        "inside the commands that use them (or lazily in __init__.py), not at module level")


def children_cpu_seconds() -> float:
    """User + system CPU seconds of this process's finished children (and theirs) so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _demo_argv(slug: str, seed: int, out: Path) -> list[str]:
    return [sys.executable, "-m", f"iclr25.{_module(slug)}", "demo", "--out", str(out), "--seed", str(seed)]


def _start_demo(slug: str, seed: int) -> tuple[subprocess.Popen, Path, float, Path]:
    out = _temp_dir(f"iclr25-{slug}-demo-")
    logs = _temp_dir(f"iclr25-{slug}-demo-log-")
    env = {**os.environ, "ICLR25_QUIET": "1", "MPLBACKEND": "Agg"}
    with open(logs / "stdout", "w") as so, open(logs / "stderr", "w") as se:
        proc = subprocess.Popen(_demo_argv(slug, seed, out), cwd=out, env=env, stdout=so, stderr=se, text=True)
    return proc, out, time.perf_counter(), logs


def _finish_demo(slug: str, proc: subprocess.Popen, out: Path, t0: float,
                 logs: Path) -> tuple[RunResult, float, float]:
    """Wait for one demo process: its own wall and CPU seconds (``os.wait4``: this process's rusage alone)."""
    deadline = t0 + 10 * DEMO_BUDGET_S
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            pid, status, ru = os.wait4(proc.pid, 0)
            break
        time.sleep(0.05)
    elapsed = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    done = subprocess.CompletedProcess(proc.args, proc.returncode, (logs / "stdout").read_text(),
                                       (logs / "stderr").read_text())
    _ok(done, f"iclr25 {slug} demo")
    return RunResult.load(out / "results.json"), elapsed, ru.ru_utime + ru.ru_stime


#: The second run of each slug's seed-0 demo, for the determinism check (run beside the first).
_DEMO_SECOND: dict[str, RunResult] = {}


def _run_demo(slug: str, seed: int, *, cache: bool = True) -> tuple[RunResult, float, Path]:
    """Run the demo; the first seed-0 run of a slug starts the determinism check's second run beside it (two
    processes at once: on two cores the suite's wall time pays for one demo, not two; each run's own wall and
    CPU time are measured alone). ``ICLR25_SERIAL_DEMOS=1`` runs them one after the other."""
    pair = cache and seed == 0 and slug not in _DEMO_SECOND and not os.environ.get("ICLR25_SERIAL_DEMOS")
    first = _start_demo(slug, seed)
    second = _start_demo(slug, seed) if pair else None
    try:
        run, elapsed, cpu = _finish_demo(slug, *first)
    finally:
        if second is not None:
            try:
                _DEMO_SECOND[slug] = _finish_demo(slug, *second)[0]
            except AssertionError:
                pass  # reported by the determinism check when it reruns
    if cache:
        _DEMO_CACHE[(slug, seed)] = (run, elapsed, first[1])
        _DEMO_CPU[(slug, seed)] = cpu
    return run, elapsed, first[1]


def check_demo(slug: str, budget_s: float = DEMO_BUDGET_S) -> None:
    if (slug, 0) not in _DEMO_CACHE:
        _run_demo(slug, 0)
    run, elapsed, out = _DEMO_CACHE[(slug, 0)]
    cpu = _DEMO_CPU.get((slug, 0), elapsed)
    assert min(elapsed, cpu) <= budget_s, (
        f"iclr25 {slug} demo took {elapsed:.1f} s wall and {cpu:.1f} s CPU, both over its {budget_s:.0f} s budget")
    assert run.package == f"iclr25-{slug}", f"results.json names package {run.package!r}"
    assert run.command == "demo", f"results.json names command {run.command!r}"
    assert run.seed == 0, f"results.json records seed {run.seed!r}, the demo ran with 0"
    assert run.metrics, "results.json has no metrics"
    for fig in run.figures:
        assert (out / fig).is_file(), f"results.json lists figure {fig!r}, which was not written"
    # the recorded wall time covers the command (interpreter start-up and light imports aside)
    assert run.wall_time_s is not None, "results.json records no wall_time_s"
    assert run.wall_time_s <= elapsed + 0.5, (
        f"results.json records {run.wall_time_s:.2f} s, longer than the whole process ({elapsed:.2f} s)")
    assert run.wall_time_s >= 0.5 * elapsed - WALL_SLACK_S, (
        f"results.json records {run.wall_time_s:.2f} s for a demo that took {elapsed:.2f} s: start the RunResult "
        "at the start of the command (run_main starts its clock) and finish() it at the end")


def check_demo_headline(slug: str) -> None:
    """The demo declares at least one headline metric (baseline and direction), each standing for a ``main``
    claim of the package's registry (``claim=``); each holds, or the run carries ``headline_note``, the one line
    saying why not (a headline whose run failed its own sanity check never holds)."""
    run = (_DEMO_CACHE.get((slug, 0)) or _run_demo(slug, 0))[0]
    heads = run.headlines
    assert heads, (f"iclr25 {slug} demo declares no headline metric: run.add(name, value, peer=baseline, "
                   "peer_name=..., higher_is_better=..., headline=True)")
    nameless = [m.name for m in heads if not m.claim]
    assert not nameless, (f"iclr25 {slug} demo: headline {nameless} names no main claim: run.add(..., headline=True, "
                          "claim='<the id of the registry's main claim it stands for>')")
    try:
        registry = importlib.import_module(f"iclr25.{slug.replace('-', '_')}.claims").REGISTRY
    except ModuleNotFoundError:
        registry = None
    if registry is not None:
        for m in heads:
            c = registry.claims.get(m.claim)
            assert c is not None and c.kind == "main", (
                f"iclr25 {slug} demo: headline {m.name!r} stands for claim {m.claim!r}, which is not a main claim "
                f"of the registry (main claims: {[k for k, v in registry.claims.items() if v.kind == 'main']})")
    failing = [m.name for m in heads if not m.holds]
    assert not failing or run.headline_note.strip(), (
        f"iclr25 {slug} demo: headline {failing} does not beat its baseline and the run says nothing about it "
        f"(set run.headline_note): {run.headline_summary()}")
    assert "\n" not in run.headline_note, "headline_note must be one line"


_OUT_DRIVER = """
import contextlib, io, json, sys
from iclr25.utils.cli import main
results = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main(argv)
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    results.append({"rc": rc, "stderr": err.getvalue()})
print("ICLR25-OUT " + json.dumps(results))
"""


def check_out_policy(slug: str) -> None:
    """``demo``/``repro`` with ``--out`` naming an existing file, or a folder that holds a previous run: exit 2
    before any work, one line naming ``--out``, and the user's files untouched (nothing deleted or renamed)."""
    root = _temp_dir(f"iclr25-{slug}-out-")
    user_file = root / "notes.txt"
    user_file.write_text("mine")
    run_dir = root / "previous"
    run_dir.mkdir()
    (run_dir / "results.json").write_text("{}")
    (run_dir / "mine.txt").write_text("keep me")
    before = {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    argvs = [[slug, cmd, "--out", str(target)] for cmd in ("demo", "repro") for target in (user_file, run_dir)]
    t0 = time.perf_counter()
    proc = run_python(["-c", _OUT_DRIVER, json.dumps(argvs)], cwd=root, timeout=300)
    elapsed = time.perf_counter() - t0
    _ok(proc, f"iclr25 {slug} --out checks")
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("ICLR25-OUT ")][-1]
    problems = []
    for argv, res in zip(argvs, json.loads(line.removeprefix("ICLR25-OUT ")), strict=True):
        lines = [ln for ln in res["stderr"].splitlines() if ln.strip()]
        if res["rc"] != 2 or len(lines) != 1 or "--out" not in lines[0] or "Traceback" in res["stderr"]:
            problems.append(f"iclr25 {' '.join(argv[:2])} --out {Path(argv[3]).name}: exit {res['rc']!r}, "
                            f"stderr {res['stderr'][-400:]!r} (expected exit 2 and one line naming --out)")
    after = {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    if after != before:
        problems.append(f"the user's files changed: before {sorted(map(str, before))}, after {sorted(map(str, after))}")
    assert not problems, "\n".join(problems)
    assert elapsed < 120, f"refusing four bad --out values took {elapsed:.0f} s: check --out before the work"


def check_demo_deterministic(slug: str) -> None:
    first = (_DEMO_CACHE.get((slug, 0)) or _run_demo(slug, 0))[0]
    second = _DEMO_SECOND.pop(slug, None) or _run_demo(slug, 0, cache=False)[0]
    a, b = first.comparable_metrics(), second.comparable_metrics()
    assert a.keys() == b.keys(), f"metric names differ between two runs: {sorted(a)} vs {sorted(b)}"
    diff = {k: (a[k], b[k]) for k in a
            if not (a[k] == b[k] or (a[k] is not None and b[k] is not None
                                     and math.isclose(a[k], b[k], rel_tol=1e-6, abs_tol=1e-9)))}
    assert not diff, f"same seed, different metrics (first, second): {diff}"


def readme_quickstart(readme: Path) -> str:
    """The first ```python block of the README's ``## Quickstart`` section."""
    text = readme.read_text(encoding="utf-8")
    m = re.search(r"^## Quickstart\s*$(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    assert m, f"{readme} has no '## Quickstart' section"
    block = re.search(r"```python\n(.*?)```", m.group(1), flags=re.S)
    assert block, f"{readme}: the Quickstart section has no ```python block"
    return block.group(1)


def check_readme_quickstart(slug: str, root: Path) -> None:
    code = readme_quickstart(root / "README.md")
    n_lines = len([ln for ln in code.splitlines() if ln.strip()])
    assert n_lines <= 15, f"README Quickstart has {n_lines} lines of code; the contract allows 15"
    with tempfile.TemporaryDirectory() as tmp:
        _ok(run_python(["-c", code], cwd=Path(tmp), timeout=300), "README Quickstart")


def check_example(slug: str, root: Path) -> None:
    import jupytext

    path = root / "examples" / "quickstart.py"
    nb = jupytext.read(path, fmt="py:percent")
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert len(code_cells) >= 2, f"{path} is not a jupytext percent notebook with at least 2 code cells"
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(path, Path(tmp) / path.name)
        _ok(run_python([path.name], cwd=Path(tmp), timeout=300), str(path))


_GARBAGE = b"\x89\x00\xffnot a data file\x1b[0m {[(<\n\xfe\xfd 1,2,x;;\n\x00\x00PK-not-a-zip\n"

_FUZZ_DRIVER = """
import contextlib, io, json, sys, traceback
from iclr25.utils.cli import main
results = []
for argv in json.loads(sys.argv[1]):
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            rc = main(argv)
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            rc = "uncaught exception"
            traceback.print_exc()
    results.append({"rc": rc, "stderr": err.getvalue()})
print("ICLR25-FUZZ " + json.dumps(results))
"""


def _fill(template: list[str], base: Path) -> list[str]:
    return [tok.replace("{file}", str(base / "input")).replace("{out}", str(base / "out")) for tok in template]


def check_file_inputs(slug: str, file_commands: list[list[str]]) -> None:
    """Each command that reads a user's file, given a missing, an empty and a garbage file: exit status 2,
    one line on stderr naming the file, no traceback, no output and no stray (temporary) files left."""
    root = _temp_dir(f"iclr25-{slug}-files-")
    cwd = root / "cwd"
    cwd.mkdir()
    cases, argvs = [], []
    for i, template in enumerate(file_commands):
        if not any("{file}" in tok for tok in template):
            raise ValueError(f"file_commands[{i}] = {template} has no '{{file}}' placeholder")
        for kind in ("missing", "empty", "garbage"):
            base = root / f"{i}-{kind}"
            base.mkdir()
            argv = _fill(template, base)
            inputs = sorted({Path(tok.split("=", 1)[-1]) for tok, t in zip(argv, template, strict=True)
                             if "{file}" in t})
            if kind != "missing":
                for f in inputs:
                    f.write_bytes(b"" if kind == "empty" else _GARBAGE)
            cases.append((template, kind, base, inputs))
            argvs.append([slug, *argv])
    proc = run_python(["-c", _FUZZ_DRIVER, json.dumps(argvs)], cwd=cwd, timeout=600)
    _ok(proc, f"iclr25 {slug} file-input checks")
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("ICLR25-FUZZ ")][-1]
    problems = []
    for (template, kind, base, inputs), res in zip(cases, json.loads(line.removeprefix("ICLR25-FUZZ ")),
                                                   strict=True):
        what = f"iclr25 {slug} {' '.join(template)} with a {kind} file"
        lines = [ln for ln in res["stderr"].splitlines() if ln.strip()]
        if res["rc"] != 2:
            problems.append(f"{what}: exit status {res['rc']!r}, expected 2; stderr: {res['stderr'][-600:]!r}")
        elif "Traceback" in res["stderr"] or len(lines) != 1:
            problems.append(f"{what}: expected one line on stderr, got {len(lines)}: {res['stderr'][-600:]!r}")
        elif not any(f.name in lines[0] for f in inputs):
            problems.append(f"{what}: the message does not name the file ({inputs[0].name}): {lines[0]!r}")
        left = sorted(p.name for p in base.iterdir() if p not in inputs)
        if left:
            problems.append(f"{what}: left {left} behind (a failed command must write nothing)")
    stray = sorted(p.name for p in cwd.iterdir())
    if stray:
        problems.append(f"the commands wrote {stray} into the working folder")
    assert not problems, "\n".join(problems)


def package_checks(slug: str, *, root: Path, demo_budget_s: float = DEMO_BUDGET_S,
                   file_commands: list[list[str]] | None = None) -> list[tuple[str, Callable[[], None]]]:
    """The named checks of one package, each a callable of no arguments."""
    root = Path(root)
    checks = [
        ("version", functools.partial(check_version, slug)),
        ("public_api", functools.partial(check_public_api, slug)),
        ("help", functools.partial(check_help, slug)),
        ("help_light", functools.partial(check_help_light, slug)),
        ("demo", functools.partial(check_demo, slug, demo_budget_s)),
        ("demo_headline", functools.partial(check_demo_headline, slug)),
        ("out_policy", functools.partial(check_out_policy, slug)),
        ("demo_deterministic", functools.partial(check_demo_deterministic, slug)),
        ("readme_quickstart", functools.partial(check_readme_quickstart, slug, root)),
        ("example", functools.partial(check_example, slug, root)),
    ]
    if file_commands:
        checks.append(("file_inputs", functools.partial(check_file_inputs, slug, [list(c) for c in file_commands])))
    return checks


def parametrize_with_checks(slug: str, *, root: Path, demo_budget_s: float = DEMO_BUDGET_S,
                            file_commands: list[list[str]] | None = None):
    """A ``pytest.mark.parametrize`` over :func:`package_checks`, ids named after the checks."""
    import pytest

    checks = package_checks(slug, root=root, demo_budget_s=demo_budget_s, file_commands=file_commands)
    return pytest.mark.parametrize("check", [c for _, c in checks], ids=[n for n, _ in checks])


def check_paper_rung(registry: ClaimRegistry, *, rung: str = "paper", claim_ids: list[str] | None = None) -> dict[str, float]:
    """The paper rung of a package's registry cannot rot (issue 59): it has a cost (``RungCost``) that
    ``--estimate`` prints, and its measuring code runs once at the rung's first seed in a smoke run
    (``ICLR25_SMOKE=1``, as ``iclr25 claims NAME --rung paper --smoke``), every claim decided there (or the
    ``claim_ids``) giving a finite value. Returns the values by claim id."""
    cost = registry.costs.get(rung)
    assert cost is not None, f"{registry.package}: rung {rung!r} has no RungCost (--estimate has nothing to print)"
    assert cost.explain(rung, len(registry.rung_seeds(rung))).startswith(f"rung {rung!r}: ")
    ids = claim_ids if claim_ids is not None else registry.claims_at(rung)
    assert ids, f"{registry.package}: no claim is decided at rung {rung!r}"
    seed = registry.rung_seeds(rung)[0]
    before = os.environ.get("ICLR25_SMOKE")
    os.environ["ICLR25_SMOKE"] = "1"
    try:
        values = {}
        for cid in ids:
            m = registry.measure(cid, seed, rung)
            values[cid] = float(getattr(m, "value", m))
    finally:
        if before is None:
            os.environ.pop("ICLR25_SMOKE", None)
        else:
            os.environ["ICLR25_SMOKE"] = before
    bad = {cid: v for cid, v in values.items() if not math.isfinite(v)}
    assert not bad, f"{registry.package}: the smoke run of rung {rung!r} gave non-finite values {bad}"
    return values


_NUMPY_CALL = re.compile(r"\.numpy\(\)")


def check_numpy_lint(src: str | os.PathLike[str]) -> None:
    """A package's lint that a torch tensor reaches numpy only through ``.cpu()`` (issue 59): ``x.numpy()`` fails
    for a tensor on a GPU, ``x.cpu().numpy()`` works on every device (numpy arrays and memory maps have no
    ``.numpy()``, so the rule costs nothing there). Scans every ``*.py`` under ``src`` (sub-packages too) and
    fails listing ``file:line: code`` for each offending call.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "ok.py").write_text("y = x.detach().cpu().numpy()\\n")
    >>> check_numpy_lint(d)
    >>> _ = (d / "bad.py").write_text("y = x.numpy()\\n")
    >>> check_numpy_lint(d)
    Traceback (most recent call last):
    ...
    AssertionError: .numpy() on a tensor that may be on the device (use .cpu().numpy()):
    bad.py:1: y = x.numpy()
    """
    root = Path(src)
    if not root.is_dir():
        raise AssertionError(f"check_numpy_lint: {root} is not a folder")
    bad = [f"{p.relative_to(root)}:{i}: {line.strip()}" for p in sorted(root.rglob("*.py"))
           for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
           for m in _NUMPY_CALL.finditer(line) if not line[:m.start()].endswith(".cpu()")]
    if bad:
        raise AssertionError(".numpy() on a tensor that may be on the device (use .cpu().numpy()):\n" + "\n".join(bad))


def check_adam_matches_torch(steps: int = 25) -> None:
    """:class:`iclr25.utils.optim.Adam` equals ``torch.optim.Adam`` and ``torch.optim.AdamW`` bit for bit on the
    CPU: two parameter groups (one with its own learning rate and weight decay), a ``LambdaLR`` schedule, a
    parameter that gets no gradient at some steps, ``steps`` updates. A torch package's suite calls it in one line
    (it imports ``torch.optim``, about 2 s of CPU, so once per suite)."""
    import torch  # noqa: PLC0415

    from .optim import Adam  # noqa: PLC0415

    def lam(k: int) -> float:
        return 1.0 / (1 + 0.1 * k)

    for decoupled in (False, True):
        gen = torch.Generator().manual_seed(0)
        shapes = [(5, 3), (3,), (4, 2, 2)]
        init = [torch.randn(s, generator=gen, dtype=torch.float64) for s in shapes]
        ours = [torch.nn.Parameter(t.clone()) for t in init]
        ref = [torch.nn.Parameter(t.clone()) for t in init]

        def groups(ps: list) -> list[dict]:
            return [{"params": ps[:2]}, {"params": ps[2:], "lr": 3e-2, "weight_decay": 0.0}]

        cls = torch.optim.AdamW if decoupled else torch.optim.Adam
        opt_ref = cls(groups(ref), lr=1e-2, betas=(0.9, 0.98), eps=1e-7, weight_decay=0.05, foreach=True)
        sched = torch.optim.lr_scheduler.LambdaLR(opt_ref, lam)
        opt = Adam(groups(ours), lr=1e-2, betas=(0.9, 0.98), eps=1e-7, weight_decay=0.05, decoupled=decoupled,
                   lr_lambda=lam)
        for k in range(steps):
            x = torch.randn(5, generator=gen, dtype=torch.float64)
            for ps, o in ((ours, opt), (ref, opt_ref)):
                o.zero_grad()
                use = ps if k % 3 else ps[:2]  # the last parameter has no gradient every third step
                loss = sum(((x[: p.shape[0]].reshape(-1, *([1] * (p.dim() - 1))) * p) ** 2).sum().sin() for p in use)
                loss.backward()
                o.step()
            sched.step()
        for a, b in zip(ours, ref, strict=True):
            if not torch.equal(a.detach(), b.detach()):
                raise AssertionError(f"iclr25.utils.optim.Adam(decoupled={decoupled}) differs from "
                                     f"{cls.__name__}: max |diff| {(a - b).abs().max().item():.3g}")


def deny_writes(monkeypatch, folder) -> None:
    """Make the output checks of :mod:`iclr25.utils.outputs` see ``folder`` as not writable, also as root (root
    writes into a mode-0555 folder, so a chmod alone cannot test "an output below a read-only folder")."""
    import iclr25.utils.outputs as outputs  # noqa: PLC0415

    real = os.access
    target = os.path.realpath(folder)
    monkeypatch.setattr(outputs.os, "access",
                        lambda p, mode, **kw: False if os.path.realpath(p) == target else real(p, mode, **kw))


class StubChatServer:
    """A stub OpenAI-compatible ``/chat/completions`` server on 127.0.0.1 for a package's endpoint tests.

    ``url`` is its API base (``http://127.0.0.1:PORT/v1``); ``requests`` holds each request received as
    ``{"path", "auth", "body"}`` (``auth`` the ``Authorization`` header or ``None``, ``body`` the parsed JSON),
    so a test can check what the client sent. ``answer`` is the reply's text, or a function of the request body;
    the first ``fail_first`` requests get HTTP 503; each answer waits ``delay`` seconds (for ``--timeout``).
    ``redirect``: answer every request with ``302 Found`` to this URL (a client must not follow it with its key);
    ``drip``: send the answer one byte every ``drip`` seconds (a client's ``--timeout`` must still end it).
    """

    def __init__(self, answer="ok", *, fail_first: int = 0, delay: float = 0.0, redirect: str | None = None,
                 drip: float = 0.0) -> None:
        import threading  # noqa: PLC0415
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer  # noqa: PLC0415

        self.answer, self.fail_first, self.delay = answer, fail_first, delay
        self.redirect, self.drip = redirect, drip
        self.requests: list[dict] = []
        self.closed = False
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the http.server API
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")
                stub.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                time.sleep(stub.delay)
                try:
                    if stub.redirect:
                        self.send_response(302)
                        self.send_header("Location", stub.redirect)
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    if len(stub.requests) <= stub.fail_first:
                        self.send_response(503)
                        self.end_headers()
                        return
                    text = stub.answer(body) if callable(stub.answer) else stub.answer
                    out = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    if stub.drip:
                        for i in range(len(out)):
                            if stub.closed:
                                return
                            self.wfile.write(out[i:i + 1])
                            self.wfile.flush()
                            time.sleep(stub.drip)
                    else:
                        self.wfile.write(out)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its --timeout)

            def log_message(self, *args):
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def close(self) -> None:
        self.closed = True
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> StubChatServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def stub_chat_server(answer="ok", *, fail_first: int = 0, delay: float = 0.0, redirect: str | None = None,
                     drip: float = 0.0) -> StubChatServer:
    """A running :class:`StubChatServer` (use it in a ``with`` block or as a fixture that calls ``close()``)."""
    return StubChatServer(answer, fail_first=fail_first, delay=delay, redirect=redirect, drip=drip)

