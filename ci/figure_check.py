#!/usr/bin/env python3
"""Every demo's figures say what they show: ``make figure-check [PKG=slug]``.

Runs each package's ``demo`` in its own environment (``.venvs/<slug>``, as ``make test`` builds it) with
``$ICLR25_FIGURE_LOG`` set, so that ``iclr25.utils.plotting.savefig`` records each saved figure's problems
(:func:`iclr25.utils.plotting.figure_problems`: no title, an unlabelled axis, colour that carries a value without a
colour bar). Prints a table per package and the problems, writes ``build/figure-check.json``, exits 1 when any
figure has a problem (issue 66). Outside the ``make test`` gate: it runs every demo (several minutes).

Usage: ``python ci/figure_check.py [SLUG ...] [--json build/figure-check.json]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "ci"))
from run_package_tests import chosen_slugs  # noqa: E402


def check(slug: str) -> dict:
    exe = ROOT / ".venvs" / slug / "bin" / "iclr25"
    if not exe.exists():
        return {"slug": slug, "status": f"no environment .venvs/{slug} (run make test PKG={slug} first)",
                "figures": 0, "problems": []}
    with tempfile.TemporaryDirectory(prefix=f"iclr25-figures-{slug}-") as tmp:
        log = Path(tmp) / "figures.log"
        env = {**os.environ, "ICLR25_FIGURE_LOG": str(log), "MPLBACKEND": "Agg", "ICLR25_QUIET": "1"}
        t0 = time.perf_counter()
        proc = subprocess.run([str(exe), slug, "demo", "--out", str(Path(tmp) / "demo")], cwd=tmp, env=env,
                              capture_output=True, text=True, timeout=900, check=False)
        wall = time.perf_counter() - t0
        figures = sorted(p.name for p in (Path(tmp) / "demo").rglob("*.png"))
        problems = log.read_text(encoding="utf-8").splitlines() if log.is_file() else []
    status = "ok" if proc.returncode == 0 and not problems else (
        f"demo failed (exit {proc.returncode})" if proc.returncode else "figure problems")
    return {"slug": slug, "status": status, "figures": len(figures), "problems": problems, "wall_s": round(wall, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("slugs", nargs="*")
    ap.add_argument("--json", type=Path, default=ROOT / "build" / "figure-check.json")
    args = ap.parse_args(argv)
    known = sorted(p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").is_file())
    slugs = chosen_slugs(args.slugs, known, prog="figure_check", what="no package")
    if slugs is None:
        return 2
    rows = []
    for slug in slugs:
        print(f"== {slug}: iclr25 {slug} demo (figures checked)", flush=True)
        rows.append(check(slug))
    print("\n| package | demo figures | problems | status |\n|---|---|---|---|")
    for r in rows:
        print(f"| {r['slug']} | {r['figures']} | {len(r['problems'])} | {r['status']} |")
    for r in rows:
        for line in r["problems"]:
            print(f"packages/{r['slug']}: {line}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(rows, indent=1) + "\n")
    print(f"wrote {args.json}")
    return 0 if all(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
