#!/usr/bin/env python3
"""Re-decide every package's claims at fresh seeds: ``make claims-fresh [PKG=slug] [RUNG=test]``.

For each package with a claims registry, in its own environment (synced as ``make test`` does), runs
``iclr25 claims <slug> --fresh --rung RUNG --out packages/<slug> --overwrite``: the claims decided at new seeds
(>= 1000, drawn from the date and the package's version), written to ``packages/<slug>/claims-fresh.json``, which
the documentation site's dashboard shows beside the committed verdict. Then prints, per package, how many fresh
verdicts equal the claim's expected (and committed) verdict, and names every claim whose verdict changed; such a
claim is re-examined (a larger rung, more seeds, a mean-interval rule), never given a looser bound after the fact.
Exit 1 when any verdict changed or a package's claims failed to run. Outside the ``make test`` gate.

Usage: ``python ci/claims_fresh.py [SLUG ...] [--rung test] [--json build/claims-fresh.json]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "ci"))
from run_package_tests import sync_one, venv_for  # noqa: E402


def slugs_with_registry(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "packages").iterdir()
                  if (p / "src" / "iclr25" / p.name.replace("-", "_") / "claims.py").is_file())


def run_one(root: Path, slug: str, rung: str) -> dict:
    proc, _ = sync_one(root, slug)
    if proc.returncode != 0:
        return {"slug": slug, "status": "sync failed", "differs": [], "n": 0, "same": 0}
    t0 = time.perf_counter()
    cmd = [str(venv_for(root, slug) / "bin" / "iclr25"), "claims", slug, "--fresh", "--rung", rung,
           "--out", str(root / "packages" / slug), "--overwrite"]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    path = root / "packages" / slug / "claims-fresh.json"
    if proc.returncode not in (0, 1) or not path.is_file() or "wrote " not in proc.stdout:
        err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"slug": slug, "status": f"failed: {err}", "differs": [], "n": 0, "same": 0, "wall_s": wall}
    fresh = json.loads(path.read_text(encoding="utf-8"))
    differs = [c["id"] for c in fresh["claims"] if (c["verdict"] == "holds") != (c.get("expect") == "holds")]
    dead = [c["id"] for c in fresh["claims"] if c.get("expect") == "fails" and not c.get("alive", True)]
    return {"slug": slug, "status": "ok" if not differs and not dead else "verdict changed",
            "seeds": fresh["claims"][0]["seeds"] if fresh["claims"] else [], "version": fresh["version"],
            "n": len(fresh["claims"]), "same": len(fresh["claims"]) - len(differs), "differs": differs,
            "dead": dead, "wall_s": round(wall, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("slugs", nargs="*")
    ap.add_argument("--rung", default="test", help="the rung to re-decide (default: test)")
    ap.add_argument("--json", type=Path, default=ROOT / "build" / "claims-fresh.json")
    args = ap.parse_args(argv)
    known = slugs_with_registry(ROOT)
    bad = [s for s in args.slugs if s not in known]
    if bad:
        print(f"claims_fresh: error: no claims registry in {bad}; packages with one: {known}", file=sys.stderr)
        return 2
    rows = []
    for slug in args.slugs or known:
        print(f"== {slug}: iclr25 claims {slug} --fresh --rung {args.rung}", flush=True)
        rows.append(run_one(ROOT, slug, args.rung))
    print("\n| package | version | fresh seeds | verdict = expected | changed | status |\n|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['slug']} | {r.get('version', '')} | {', '.join(map(str, r.get('seeds', [])))} | "
              f"{r['same']} of {r['n']} | {', '.join(r['differs'] + [f'{d} (not alive)' for d in r.get('dead', [])]) or '–'} "
              f"| {r['status']} |")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"rung": args.rung, "packages": rows}, indent=2) + "\n")
    print(f"wrote {args.json}")
    return 0 if all(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
