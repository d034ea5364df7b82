"""A small benchmark harness: warm-up, repeats, median/min/max, and side-by-side ratios of two callables
measured alternately in the same run (so that drift of the machine affects both equally).

Every package's ``benchmarks/`` uses it and writes its table with :func:`to_run_result`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["cache_dir", "Measurement", "Comparison", "measure", "compare", "format_table", "to_run_result", "peer_env",
           "benchmark_parser", "write_record", "speed_record", "speed_table", "cpu_model", "blas_info"]


@dataclasses.dataclass(frozen=True)
class Measurement:
    """Seconds per call of one callable over ``repeats`` timed calls."""

    name: str
    times: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def min(self) -> float:
        return min(self.times)

    @property
    def max(self) -> float:
        return max(self.times)


@dataclasses.dataclass(frozen=True)
class Comparison:
    """Two measurements taken alternately; ``ratio`` = median(peer) / median(ours), i.e. our speed-up."""

    ours: Measurement
    peer: Measurement

    @property
    def speedup(self) -> float:
        return self.peer.median / self.ours.median if self.ours.median > 0 else float("inf")


def _check(warmup: int, repeats: int) -> None:
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be an integer >= 0, got {warmup!r}")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be an integer >= 1, got {repeats!r}")


def _time_once(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def measure(fn: Callable[[], Any], *, name: str | None = None, warmup: int = 1, repeats: int = 5) -> Measurement:
    """Call ``fn`` ``warmup`` times untimed, then ``repeats`` times timed.

    Examples
    --------
    >>> m = measure(lambda: sum(range(100)), repeats=3)
    >>> len(m.times), m.min <= m.median <= m.max
    (3, True)
    """
    _check(warmup, repeats)
    for _ in range(warmup):
        fn()
    return Measurement(name or getattr(fn, "__name__", "fn"), tuple(_time_once(fn) for _ in range(repeats)))


def compare(ours: Callable[[], Any], peer: Callable[[], Any], *, names: tuple[str, str] = ("ours", "peer"),
            warmup: int = 1, repeats: int = 5) -> Comparison:
    """Time two callables alternately (ours, peer, ours, peer, ...) after warming both up."""
    _check(warmup, repeats)
    for _ in range(warmup):
        ours()
        peer()
    t_ours, t_peer = [], []
    for i in range(repeats):
        # alternate which goes first so that neither always runs on a warmer cache
        if i % 2 == 0:
            t_ours.append(_time_once(ours))
            t_peer.append(_time_once(peer))
        else:
            t_peer.append(_time_once(peer))
            t_ours.append(_time_once(ours))
    return Comparison(Measurement(names[0], tuple(t_ours)), Measurement(names[1], tuple(t_peer)))


def format_table(rows: Sequence[Measurement | Comparison]) -> str:
    """A Markdown table of measurements and comparisons (seconds; speed-up for comparisons)."""
    lines = ["| case | median s | min s | max s | peer | peer median s | speed-up |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        if isinstance(r, Comparison):
            o, p = r.ours, r.peer
            lines.append(f"| {o.name} | {o.median:.4g} | {o.min:.4g} | {o.max:.4g} | {p.name} | {p.median:.4g} "
                         f"| {r.speedup:.3g}× |")
        else:
            lines.append(f"| {r.name} | {r.median:.4g} | {r.min:.4g} | {r.max:.4g} | | | |")
    return "\n".join(lines) + "\n"


def to_run_result(package: str, rows: Sequence[Measurement | Comparison], *, command: str = "bench",
                  config: dict[str, Any] | None = None, seed: int | None = 0, t0: float | None = None):
    """Collect measurements into a :class:`~iclr25.utils.results.RunResult` (timing metrics, seconds).

    Its ``wall_time_s`` is the benchmark's, never this conversion's: from ``t0`` (a ``time.perf_counter()``
    taken when the benchmark began) when given, else from the command's start inside a command line
    (:func:`iclr25.utils.cli.run_main`), else the sum of every timed call in ``rows`` (a lower bound: warm-up
    calls and set-up are not in it).

    >>> m = Measurement("solve", (0.5, 0.25, 0.25))
    >>> to_run_result("iclr25-utils", [m]).wall_time_s
    1.0
    """
    from . import results
    from .results import RunResult

    run = RunResult.start(package, command, seed=seed, config=config)
    for r in rows:
        if isinstance(r, Comparison):
            run.add(f"{r.ours.name} s", r.ours.median, peer=r.peer.median, peer_name=r.peer.name, unit="s",
                    higher_is_better=False, timing=True)
        else:
            run.add(f"{r.name} s", r.median, unit="s", higher_is_better=False, timing=True)
    if t0 is not None:
        run.wall_time_s = time.perf_counter() - t0
    elif results._COMMAND_T0 is not None:
        run.finish()
    else:
        run.wall_time_s = sum(sum(m.times) for r in rows
                              for m in ((r.ours, r.peer) if isinstance(r, Comparison) else (r,)))
    return run


def cache_dir(name: str) -> Path:
    """The user's cache folder for ``name`` (a peer's venv, a generated data set): ``$XDG_CACHE_HOME/iclr25/<name>``,
    or ``~/.cache/iclr25/<name>``; never a fixed folder of one machine. Not created here.

    >>> import os
    >>> os.environ["XDG_CACHE_HOME"] = "/x/cache"
    >>> cache_dir("hestia-venv").as_posix()
    '/x/cache/iclr25/hestia-venv'
    >>> del os.environ["XDG_CACHE_HOME"]
    """
    if not name or "/" in name or name in (".", ".."):
        raise ValueError(f"name must be one folder name, got {name!r}")
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "iclr25" / name


def peer_env(path: str | os.PathLike[str], requirements: Sequence[str], *, no_deps: Sequence[str] = (),
             python: str | None = None) -> Path:
    """A throwaway virtual environment for a peer that cannot share the workspace's lock (it pins old
    numpy/scipy, or drags in a heavy tree); returns its Python. Built once with uv, reused when present.

    ``no_deps`` are installed with ``--no-deps`` (packages wanted only for data they ship). Benchmarks run
    the peer in that Python as a subprocess and time it there.
    """
    venv = Path(path)
    py = venv / "bin" / "python"
    stamp = venv / ".iclr25-requirements"
    wanted = "\n".join([*requirements, "--no-deps", *no_deps])
    if py.exists() and stamp.exists() and stamp.read_text() == wanted:
        return py
    uv = shutil.which("uv")
    if uv is None:
        raise RuntimeError("peer_env needs uv on PATH (pip install uv) to build the peer's environment")
    subprocess.run([uv, "venv", "-q", "--clear", "--python", python or sys.executable, str(venv)], check=True)
    if requirements:
        subprocess.run([uv, "pip", "install", "-q", "--python", str(py), *requirements], check=True)
    if no_deps:
        subprocess.run([uv, "pip", "install", "-q", "--python", str(py), "--no-deps", *no_deps], check=True)
    stamp.write_text(wanted)
    return py


def benchmark_parser(description: str | None, *, out: str = ".", raw: bool = False) -> argparse.ArgumentParser:
    """The parser a ``benchmarks/`` script starts from, with ``--out DIR`` (default ``out``): ``make bench``
    runs every script as ``SCRIPT --out DIR``. ``raw`` keeps the description's line breaks.

    >>> benchmark_parser("a benchmark", out="results/x").parse_args([]).out
    PosixPath('results/x')
    """
    ap = argparse.ArgumentParser(description=description,
                                 formatter_class=argparse.RawDescriptionHelpFormatter if raw else
                                 argparse.HelpFormatter)
    ap.add_argument("--out", type=Path, default=Path(out), help=f"output folder (default: {out})")
    return ap


def write_record(path: str | os.PathLike[str], record: dict[str, Any], *, load_start: float | None = None) -> Path:
    """Write a benchmark's JSON record atomically, with the load average at its start (``load_start``, taken by
    the caller before the work) and at its end, and the UTC date: a timing is read beside the load it was
    taken at."""
    from ._atomic import atomic_write  # noqa: PLC0415

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    full = {**record, "load_start": load_start, "load_end": os.getloadavg()[0],
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    with atomic_write(path) as f:
        json.dump(full, f, indent=1)
    return path


def cpu_model() -> str:
    """The processor's model name (``/proc/cpuinfo``; ``platform.processor()`` elsewhere)."""
    import platform  # noqa: PLC0415

    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def blas_info() -> str:
    """numpy's BLAS library and the kernel it picked for this CPU (``threadpoolctl`` where installed, e.g.
    ``openblas 0.3.27 SkylakeX``), else the BLAS numpy was built with; ``"unknown"`` without numpy."""
    try:
        import numpy as np  # noqa: PLC0415
    except ImportError:
        return "unknown"
    try:
        from threadpoolctl import threadpool_info  # noqa: PLC0415

        for lib in threadpool_info():
            if lib.get("user_api") == "blas":
                return " ".join(str(lib[k]) for k in ("internal_api", "version", "architecture") if lib.get(k))
    except ImportError:
        pass
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{blas.get('name', 'blas')} {blas.get('version', '')}".strip()
    except Exception:  # noqa: BLE001 - an old numpy prints its config instead of returning it
        return "unknown"


def speed_record(rows: Sequence[dict[str, Any]], *, command: str, repeats: int, note: str = "") -> dict[str, Any]:
    """A side-by-side speed table for :func:`write_record` (which adds the load and the date) and
    :func:`speed_table`: ``rows`` of ``{"case", "ours", "ours_s", "peer", "peer_s"}`` (seconds, medians of
    ``repeats`` alternating runs), with this machine's processor, cores and BLAS kernel. The ratio is never
    stored: :func:`speed_table` computes ``peer_s / ours_s`` from the times, so a README's ratio cannot drift
    from them (``make speed-tables`` regenerates the README blocks; ``make contract`` checks them)."""
    keys = ("case", "ours", "ours_s", "peer", "peer_s")
    for r in rows:
        missing = [k for k in keys if k not in r]
        if missing:
            raise ValueError(f"speed_record: a row lacks {missing}: {r!r}")
        if not (float(r["ours_s"]) > 0 and float(r["peer_s"]) > 0):
            raise ValueError(f"speed_record: times must be > 0 seconds: {r!r}")
    return {"kind": "speed-table", "command": command, "repeats": int(repeats), "note": note,
            "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "blas": blas_info()},
            "rows": [{k: r[k] for k in keys} | {k: v for k, v in r.items() if k not in keys} for r in rows]}


def _secs(x: float) -> str:
    return f"{x:.3g} s" if x >= 1e-3 else f"{x * 1e6:.3g} µs"


def speed_table(record: dict[str, Any]) -> str:
    """The Markdown of a :func:`speed_record` (as written by :func:`write_record`): one row per case with both
    times and ``peer / ours`` (above 1: ours is faster), then one line saying where and when it was measured.

    >>> rec = {"kind": "speed-table", "command": "python benchmarks/x.py", "repeats": 3, "note": "",
    ...        "machine": {"cpu": "CPU", "cores": 2, "blas": "openblas"}, "load_start": 0.5, "load_end": 0.7,
    ...        "date": "2026-12-05 12:00 UTC",
    ...        "rows": [{"case": "n = 10", "ours": "ours", "ours_s": 0.5, "peer": "peer", "peer_s": 1.0}]}
    >>> print(speed_table(rec))
    | case | ours | time | peer | time | peer / ours |
    |---|---|---|---|---|---|
    | n = 10 | ours | 0.5 s | peer | 1 s | **2.00×** |
    <BLANKLINE>
    Medians of 3 alternating runs; CPU, 2 cores, openblas; load 0.50 → 0.70; 2026-12-05 12:00 UTC; `python benchmarks/x.py`.
    """
    if record.get("kind") != "speed-table":
        raise ValueError("speed_table: not a speed record (kind 'speed-table'; see speed_record)")
    lines = ["| case | ours | time | peer | time | peer / ours |", "|---|---|---|---|---|---|"]
    for r in record["rows"]:
        ratio = float(r["peer_s"]) / float(r["ours_s"])
        lines.append(f"| {r['case']} | {r['ours']} | {_secs(float(r['ours_s']))} | {r['peer']} | "
                     f"{_secs(float(r['peer_s']))} | **{ratio:.2f}×** |")
    m = record.get("machine", {})
    load = (f"load {record['load_start']:.2f} → {record['load_end']:.2f}"
            if record.get("load_start") is not None and record.get("load_end") is not None else "load not recorded")
    tail = (f"Medians of {record.get('repeats', '?')} alternating runs; {m.get('cpu', '?')}, {m.get('cores', '?')} "
            f"cores, {m.get('blas', '?')}; {load}; {record.get('date', '?')}; `{record.get('command', '?')}`.")
    if record.get("note"):
        tail += " " + record["note"]
    return "\n".join(lines) + "\n\n" + tail
