#!/usr/bin/env python3
"""Run each package's tests in an environment that holds only that package, its declared dependencies
(with all its extras) and the test tools of the root ``test`` group, then print a per-package time table.

An import the package forgot to declare fails here. pytest's exit code 5 (no tests collected) counts as a
pass. The budget is load-proof: a suite's time is the smaller of its wall time and the CPU time (user + system)
of pytest and everything it started, so a loaded machine, which stretches wall time but not CPU time, does not
fail a suite that has not changed. Over ``--budget`` seconds it is flagged; over ``--hard-limit`` it fails.

Usage: ``python ci/run_package_tests.py [SLUG ...] [--pytest-args "..."]``
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def chosen_slugs(requested: list[str], known: list[str], *, prog: str, what: str) -> list[str] | None:
    """The packages a ci script runs over: ``requested`` (all ``known`` when empty), or None after one line on
    stderr naming the unknown ones (the caller exits 2)."""
    bad = [s for s in requested if s not in known]
    if bad:
        print(f"{prog}: error: {what} {bad}; known: {known}", file=sys.stderr)
        return None
    return list(requested) or list(known)


def venv_for(root: Path, name: str) -> Path:
    return root / ".venvs" / name


def sync(root: Path, distribution: str, env_dir: Path, *, extra_args: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(env_dir), "UV_PYTHON_DOWNLOADS": "never"}
    # --compile-bytecode: pip compiles on install and uv does not; without it every test subprocess would
    # compile jax or torch from source again, and the test times would measure that
    cmd = ["uv", "sync", "--frozen", "--exact", "--compile-bytecode", "--package", distribution, "--all-extras",
           "--no-default-groups", "--group", "test", *extra_args]
    return subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=False)


def sync_one(root: Path, slug: str) -> tuple[subprocess.CompletedProcess, float]:
    """Build (or bring up to date) the package's own environment; returns the process and its seconds."""
    dist = f"iclr25-{slug}" if slug != "utils" else "iclr25-utils"
    t0 = time.perf_counter()
    proc = sync(root, dist, venv_for(root, slug), extra_args=[])
    return proc, time.perf_counter() - t0


def run_one(root: Path, slug: str, pytest_args: list[str], synced: tuple | None = None) -> dict:
    env_dir = venv_for(root, slug)
    proc, t_sync = synced if synced is not None else sync_one(root, slug)
    if proc.returncode != 0:
        print(proc.stdout + proc.stderr, file=sys.stderr)
        return {"slug": slug, "sync_s": t_sync, "test_s": 0.0, "cpu_s": 0.0, "budget_s": 0.0, "rc": proc.returncode,
                "status": "sync failed"}
    test_dir = root / ("shared-utils" if slug == "utils" else f"packages/{slug}")
    env = {**os.environ, "ICLR25_QUIET": "1", "MPLBACKEND": "Agg"}
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # let the package's own modules keep their bytecode too
    cmd = [str(env_dir / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
           "--durations=10", *pytest_args]
    print(f"\n=== {slug}: {' '.join(cmd[1:])} (in {test_dir.relative_to(root)}) ===", flush=True)
    t0 = time.perf_counter()
    child = subprocess.Popen(cmd, cwd=test_dir, env=env)
    # the suite's own CPU time (its process tree's, from wait4): not the sync running beside it in a thread
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = rc = os.waitstatus_to_exitcode(status)
    t_test, cpu = time.perf_counter() - t0, usage.ru_utime + usage.ru_stime
    status = "passed" if rc == 0 else "no tests" if rc == 5 else f"FAILED (pytest exit {rc})"
    return {"slug": slug, "sync_s": t_sync, "test_s": t_test, "cpu_s": cpu, "budget_s": min(t_test, cpu),
            "rc": 0 if rc in (0, 5) else rc, "status": status}


def run_all(root: Path, slugs: list[str], pytest_args: list[str]) -> list[dict]:
    """Each package's tests in turn, the next package's environment built while the current one's tests run
    (the sync waits on the disk and the network, the tests on the CPU). A suite's CPU time is its own process
    tree's (``os.wait4`` on pytest), so the sync beside it is not counted in its budget."""
    rows: list[dict] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(sync_one, root, slugs[0])
        for i, slug in enumerate(slugs):
            synced = pending.result()
            pending = pool.submit(sync_one, root, slugs[i + 1]) if i + 1 < len(slugs) else None
            rows.append(run_one(root, slug, pytest_args, synced=synced))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("slugs", nargs="*", help="packages to test (default: every folder in packages/)")
    ap.add_argument("--root", type=Path, default=ROOT)
    ap.add_argument("--pytest-args", default="", help="extra arguments for pytest, one string")
    ap.add_argument("--budget", type=float, default=90.0,
                    help="per-package test budget in seconds, min(wall, CPU) (flag)")
    # the 90 s budget is the contract's (flagged in the table); the hard limit only stops a runaway suite. It was
    # 150 s; the 3-seed claims of iclr25-utils 0.5 put implicit-deform at 152 s on a quiet clean clone
    # (2026-12-02), so it is 240 s until the suites over budget are cut (the closing note lists them)
    ap.add_argument("--hard-limit", type=float, default=240.0,
                    help="fail a package whose tests take longer, min(wall, CPU) seconds")
    args = ap.parse_args(argv)
    pkgs_dir = args.root / "packages"
    slugs = args.slugs or sorted(p.name for p in (pkgs_dir.iterdir() if pkgs_dir.is_dir() else [])
                                 if p.is_dir() and not p.name.startswith((".", "_")))
    if not slugs:
        print("no packages under packages/: nothing to test")
        return 0
    rows = run_all(args.root, slugs, shlex.split(args.pytest_args))
    print("\n| package | env sync s | tests wall s | tests CPU s | result |\n|---|---|---|---|---|")
    failed = False
    for r in rows:
        note = r["status"]
        if r["budget_s"] > args.hard_limit:
            note += f"; OVER HARD LIMIT {args.hard_limit:.0f} s"
            failed = True
        elif r["budget_s"] > args.budget:
            note += f"; over the {args.budget:.0f} s budget"
        failed |= r["rc"] != 0
        print(f"| {r['slug']} | {r['sync_s']:.1f} | {r['test_s']:.1f} | {r['cpu_s']:.1f} | {note} |")
    print(f"| total | {sum(r['sync_s'] for r in rows):.1f} | {sum(r['test_s'] for r in rows):.1f} | "
          f"{sum(r['cpu_s'] for r in rows):.1f} | |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
