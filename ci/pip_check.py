#!/usr/bin/env python3
"""The plain-pip check: install every package the way the README tells a newcomer, with pip alone.

For each backend family (torch, jax, numpy: read from each package's declared dependencies) one fresh
``python -m venv``, then one ``pip install ./shared-utils ./packages/<slug> ...`` with pip's default build
isolation (so the build backend comes from the registry, as it would for any user), then for every package
of the family ``iclr25 <slug> --help`` and ``iclr25 <slug> demo`` on its base install (no extras).

One venv per family rather than per package: pip copies torch into every venv (GBs each). A package whose
base install misses a dependency that a sibling of its family declares is not caught here; the isolated
per-package runner (``run_package_tests.py``, with uv) catches that.

Usage: ``python ci/pip_check.py [SLUG ...] [--no-demo] [--keep]``
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = ("torch", "jax", "numpy")
#: What a CPU-only user installs first (README "Install"); here it is a wheel on the machine's disk.
TORCH_FIRST = os.environ.get("PIP_CHECK_TORCH", "torch==2.13.0")
#: A hang guard only: the demo's 60 s budget is checked, load-proof (min of wall and CPU time), by the
#: conformance suite; here a loaded machine (two heavy jobs beside CI) must not turn a slow demo into a failure.
DEMO_LIMIT_S = 600.0
REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def family(pyproject: Path) -> str:
    deps = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"].get("dependencies", [])
    names = {REQ.match(d).group(1).lower() for d in deps if REQ.match(d)}
    for fam in FAMILIES[:-1]:
        if fam in names:
            return fam
    return "numpy"


def run(cmd: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
        timeout: float = 1800) -> tuple[int, float, str]:
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout, check=False)
        out, rc = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        out, rc = f"timed out after {timeout:.0f} s\n{exc.stdout or ''}{exc.stderr or ''}", 124
    return rc, time.perf_counter() - t0, out


def venv_size_mb(venv: Path) -> float:
    """What a family's install costs on disk (MB): the bytes of every file in the venv (links not followed), so
    the README's install sizes are measured by this check rather than typed."""
    return sum(f.lstat().st_size for f in venv.rglob("*") if f.is_file() and not f.is_symlink()) / 1e6


def check_family(fam: str, slugs: list[str], *, root: Path, python: str, demo: bool, keep: bool) -> list[dict]:
    venv = root / ".venvs" / f"_pip-{fam}"
    shutil.rmtree(venv, ignore_errors=True)
    rows: list[dict] = []
    rc, t, out = run([python, "-m", "venv", str(venv)])
    if rc:
        return [{"slug": s, "family": fam, "step": "venv", "ok": False, "log": out} for s in slugs]
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    t_torch = 0.0
    if fam == "torch" and TORCH_FIRST:
        rc, t_torch, out = run([*pip, TORCH_FIRST])
        if rc:
            return [{"slug": s, "family": fam, "step": f"pip install {TORCH_FIRST}", "ok": False, "log": out}
                    for s in slugs]
    rc, t_install, out = run([*pip, "./shared-utils", *[f"./packages/{s}" for s in slugs]], cwd=root)
    if rc:
        return [{"slug": s, "family": fam, "step": "pip install", "ok": False, "log": out} for s in slugs]
    venv_mb = venv_size_mb(venv)
    print(f"[{fam}] pip install of {len(slugs)} package(s): {t_install:.0f} s"
          + (f" (after {TORCH_FIRST}: {t_torch:.0f} s)" if t_torch else "")
          + f"; the venv holds {venv_mb:.0f} MB", flush=True)
    env = {**os.environ, "ICLR25_QUIET": "1", "MPLBACKEND": "Agg"}
    env.pop("VIRTUAL_ENV", None)
    iclr25 = str(venv / "bin" / "iclr25")
    with tempfile.TemporaryDirectory(prefix="iclr25-pip-check-") as tmp:
        for slug in slugs:
            row = {"slug": slug, "family": fam, "install_s": t_install, "venv_mb": round(venv_mb), "ok": True, "log": ""}
            rc, row["help_s"], out = run([iclr25, slug, "--help"], env=env, cwd=Path(tmp))
            if rc or "demo" not in out:
                row.update(ok=False, step="--help", log=out)
            elif demo:
                out_dir = Path(tmp) / slug
                rc, row["demo_s"], out = run([iclr25, slug, "demo", "--out", str(out_dir)], env=env, cwd=Path(tmp),
                                             timeout=DEMO_LIMIT_S)
                if rc or not (out_dir / "results.json").is_file():
                    row.update(ok=False, step="demo on the base install", log=out)
            rows.append(row)
    if not keep:
        shutil.rmtree(venv, ignore_errors=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("slugs", nargs="*", help="packages to check (default: every folder in packages/)")
    ap.add_argument("--root", type=Path, default=ROOT)
    ap.add_argument("--python", default=sys.executable, help="the interpreter the venvs are made from")
    ap.add_argument("--no-demo", action="store_true", help="only install and --help")
    ap.add_argument("--keep", action="store_true", help="keep the venvs (.venvs/_pip-<family>)")
    ap.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    ap.add_argument("--jobs", type=int, default=2, help="families checked at once (default 2)")
    args = ap.parse_args(argv)
    pkgs = args.root / "packages"
    slugs = args.slugs or sorted(p.name for p in (pkgs.iterdir() if pkgs.is_dir() else [])
                                 if (p / "pyproject.toml").is_file())
    if not slugs:
        print("no packages under packages/: nothing to check")
        return 0
    by_family: dict[str, list[str]] = {}
    for s in slugs:
        by_family.setdefault(family(pkgs / s / "pyproject.toml"), []).append(s)
    # the families are independent venvs: two at a time (the machine has two cores; nothing here is timed
    # against a budget, the per-package runner does that alone)
    fams = [f for f in FAMILIES if f in by_family]
    with ThreadPoolExecutor(max_workers=min(args.jobs, len(fams))) as pool:
        futures = [pool.submit(check_family, fam, by_family[fam], root=args.root, python=args.python,
                               demo=not args.no_demo, keep=args.keep) for fam in fams]
        rows = [row for fut in futures for row in fut.result()]
    print("\n| package | family | pip install s (family) | --help s | base-install demo s | result |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        cells = [f"{r[k]:.1f}" if k in r else "–" for k in ("install_s", "help_s", "demo_s")]
        print(f"| {r['slug']} | {r['family']} | {' | '.join(cells)} | "
              f"{'ok' if r['ok'] else 'FAILED at ' + r['step']} |")
    failed = [r for r in rows if not r["ok"]]
    for r in failed:
        print(f"\n--- {r['slug']}: {r['step']} ---\n{r['log'][-4000:]}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps([{k: v for k, v in r.items() if k != "log"} for r in rows], indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
