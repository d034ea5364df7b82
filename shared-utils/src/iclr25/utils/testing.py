"""The conformance suite every package runs in one line (like scikit-learn's ``parametrize_with_checks``).

In ``packages/<slug>/tests/test_conformance.py``::

    from pathlib import Path
    from iclr25.utils.testing import parametrize_with_checks

    @parametrize_with_checks("pgw", root=Path(__file__).parents[1])
    def test_conformance(check):
        check()

The checks: ``__version__`` equals the installed metadata and ``__all__`` names exist; ``iclr25 <slug> --help``
and ``python -m iclr25.<module> --help`` work; ``demo`` finishes inside its budget and writes a
``results.json`` that loads back, with the figures it lists; the same seed gives the same metrics twice
(timing metrics excepted); the README's Quickstart block and ``examples/quickstart.py`` run.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from .results import RunResult

__all__ = ["package_checks", "parametrize_with_checks", "readme_quickstart", "run_python"]

DEMO_BUDGET_S = 60.0
_DEMO_CACHE: dict[tuple[str, int], tuple[RunResult, float, Path]] = {}


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


def _run_demo(slug: str, seed: int, *, cache: bool = True) -> tuple[RunResult, float, Path]:
    out = Path(tempfile.mkdtemp(prefix=f"iclr25-{slug}-demo-"))
    t0 = time.perf_counter()
    proc = run_python(["-m", f"iclr25.{_module(slug)}", "demo", "--out", str(out), "--seed", str(seed)],
                      cwd=out, timeout=10 * DEMO_BUDGET_S)
    elapsed = time.perf_counter() - t0
    _ok(proc, f"iclr25 {slug} demo")
    run = RunResult.load(out / "results.json")
    if cache:
        _DEMO_CACHE[(slug, seed)] = (run, elapsed, out)
    return run, elapsed, out


def check_demo(slug: str, budget_s: float = DEMO_BUDGET_S) -> None:
    run, elapsed, out = _DEMO_CACHE.get((slug, 0)) or _run_demo(slug, 0)
    assert elapsed <= budget_s, f"iclr25 {slug} demo took {elapsed:.1f} s, over its {budget_s:.0f} s budget"
    assert run.package == f"iclr25-{slug}", f"results.json names package {run.package!r}"
    assert run.command == "demo", f"results.json names command {run.command!r}"
    assert run.seed == 0, f"results.json records seed {run.seed!r}, the demo ran with 0"
    assert run.metrics, "results.json has no metrics"
    for fig in run.figures:
        assert (out / fig).is_file(), f"results.json lists figure {fig!r}, which was not written"


def check_demo_deterministic(slug: str) -> None:
    first = (_DEMO_CACHE.get((slug, 0)) or _run_demo(slug, 0))[0]
    second = _run_demo(slug, 0, cache=False)[0]
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


def package_checks(slug: str, *, root: Path, demo_budget_s: float = DEMO_BUDGET_S
                   ) -> list[tuple[str, Callable[[], None]]]:
    """The named checks of one package, each a callable of no arguments."""
    root = Path(root)
    return [
        ("version", functools.partial(check_version, slug)),
        ("public_api", functools.partial(check_public_api, slug)),
        ("help", functools.partial(check_help, slug)),
        ("demo", functools.partial(check_demo, slug, demo_budget_s)),
        ("demo_deterministic", functools.partial(check_demo_deterministic, slug)),
        ("readme_quickstart", functools.partial(check_readme_quickstart, slug, root)),
        ("example", functools.partial(check_example, slug, root)),
    ]


def parametrize_with_checks(slug: str, *, root: Path, demo_budget_s: float = DEMO_BUDGET_S):
    """A ``pytest.mark.parametrize`` over :func:`package_checks`, ids named after the checks."""
    import pytest

    checks = package_checks(slug, root=root, demo_budget_s=demo_budget_s)
    return pytest.mark.parametrize("check", [c for _, c in checks], ids=[n for n, _ in checks])
