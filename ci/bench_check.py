#!/usr/bin/env python3
"""Every benchmark script a README points at starts from a clone: ``SCRIPT --help`` in the package's own
environment (``.venvs/<slug>``, as ``make test`` or ``make bench`` builds it) exits 0 within a minute and names
``--out``. Workers and helper modules (``benchmarks/_*.py``) are not run.

Usage: ``python3 ci/bench_check.py [SLUG ...]`` (``make bench-check``). Exits 1 if any script fails.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def check(slug: str) -> list[str]:
    bench = ROOT / "packages" / slug / "benchmarks"
    python = ROOT / ".venvs" / slug / "bin" / "python"
    problems = []
    for script in sorted(bench.glob("[!_]*.py")) if bench.is_dir() else []:
        rel = script.relative_to(ROOT)
        if not python.exists():
            problems.append(f"{rel}: no environment {python.relative_to(ROOT)} (run make test PKG={slug} first)")
            continue
        t0 = time.perf_counter()
        try:
            proc = subprocess.run([str(python), script.name, "--help"], cwd=bench, capture_output=True, text=True,
                                  timeout=60, env={**os.environ, "MPLBACKEND": "Agg"}, check=False)
        except subprocess.TimeoutExpired:
            problems.append(f"{rel} --help: still running after 60 s (does it parse its arguments first?)")
            continue
        took = time.perf_counter() - t0
        if proc.returncode != 0:
            problems.append(f"{rel} --help: exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
        elif "--out" not in proc.stdout:
            problems.append(f"{rel} --help does not mention --out (make bench runs SCRIPT --out DIR)")
        else:
            print(f"ok {rel} ({took:.1f} s)", flush=True)
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("slugs", nargs="*")
    args = ap.parse_args(argv)
    slugs = args.slugs or sorted(p.name for p in (ROOT / "packages").iterdir() if p.is_dir())
    problems = [p for slug in slugs for p in check(slug)]
    for p in problems:
        print(p)
    print(f"bench-check: {len(slugs)} package(s), {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
