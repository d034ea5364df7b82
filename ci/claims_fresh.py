#!/usr/bin/env python3
"""Re-decide every package's claims at fresh seeds: ``make claims-fresh [PKG=slug] [RUNG=test]``.

For each package with a claims registry, in its own environment (synced as ``make test`` does), runs
``iclr25 claims <slug> --fresh --rung RUNG --out packages/<slug> --overwrite``: the claims decided at new seeds
(>= 1000, drawn from the date and the package's version), written to ``packages/<slug>/claims-fresh.json``, which
the documentation site's dashboard shows beside the committed verdict. Then prints, per package, how many fresh
verdicts equal the claim's expected (and committed) verdict, and names every claim whose verdict changed; such a
claim is re-examined (a larger rung, more seeds, a mean-interval rule), never given a looser bound after the fact.
Exit 1 when any verdict changed or a package's claims failed to run. Outside the ``make test`` gate.

With ``--side-rungs`` (``make claims-fresh SIDE=1``) every side rung too: a rung of the registry other than
``test``, ``repro`` and ``paper`` whose report is committed below the package (``docs/<rung>/claims.json``, e.g.
knowledge-manipulation's ``cot``, mmed-rag's ``retrieval``) is re-decided at fresh seeds into a
``claims-fresh.json`` beside that report. Reports of another system at the repro rung (bopito's ``docs/prinz``)
are made by their own commands and are not re-run here.

Usage: ``python ci/claims_fresh.py [SLUG ...] [--rung test] [--side-rungs] [--json build/claims-fresh.json]``
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
from run_package_tests import chosen_slugs, sync_one, venv_for  # noqa: E402


def slugs_with_registry(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "packages").iterdir()
                  if (p / "src" / "iclr25" / p.name.replace("-", "_") / "claims.py").is_file())


#: rungs whose committed report is the package's own claims.json (or another system's, made by its own command)
MAIN_RUNGS = ("test", "repro", "paper")


def side_rungs(root: Path, slug: str) -> list[tuple[str, Path]]:
    """``(rung, folder)`` of each committed side-rung report of ``slug`` (schema 2, a rung not in MAIN_RUNGS)."""
    import claims_table  # noqa: PLC0415

    return [(data["rung"], path.parent) for path, data in claims_table.side_reports(root / "packages" / slug)
            if data.get("rung") and data["rung"] not in MAIN_RUNGS]


def run_one(root: Path, slug: str, rung: str, out: Path | None = None, *, sync: bool = True) -> dict:
    if sync:
        proc, _ = sync_one(root, slug)
        if proc.returncode != 0:
            return {"slug": slug, "rung": rung, "status": "sync failed", "differs": [], "n": 0, "same": 0}
    out = out or root / "packages" / slug
    t0 = time.perf_counter()
    cmd = [str(venv_for(root, slug) / "bin" / "iclr25"), "claims", slug, "--fresh", "--rung", rung,
           "--out", str(out), "--overwrite"]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    path = out / "claims-fresh.json"
    if proc.returncode not in (0, 1) or not path.is_file() or "wrote " not in proc.stdout:
        err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"slug": slug, "rung": rung, "status": f"failed: {err}", "differs": [], "n": 0, "same": 0,
                "wall_s": wall}
    fresh = json.loads(path.read_text(encoding="utf-8"))
    differs = [c["id"] for c in fresh["claims"] if (c["verdict"] == "holds") != (c.get("expect") == "holds")]
    dead = [c["id"] for c in fresh["claims"] if c.get("expect") == "fails" and not c.get("alive", True)]
    return {"slug": slug, "rung": rung, "status": "ok" if not differs and not dead else "verdict changed",
            "seeds": fresh["claims"][0]["seeds"] if fresh["claims"] else [], "version": fresh["version"],
            "n": len(fresh["claims"]), "same": len(fresh["claims"]) - len(differs), "differs": differs,
            "dead": dead, "wall_s": round(wall, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("slugs", nargs="*")
    ap.add_argument("--rung", default="test", help="the rung to re-decide (default: test)")
    ap.add_argument("--side-rungs", action="store_true",
                    help="also every side rung with a committed report (docs/<rung>/claims.json)")
    ap.add_argument("--json", type=Path, default=ROOT / "build" / "claims-fresh.json")
    args = ap.parse_args(argv)
    slugs = chosen_slugs(args.slugs, slugs_with_registry(ROOT), prog="claims_fresh", what="no claims registry in")
    if slugs is None:
        return 2
    rows = []
    for slug in slugs:
        print(f"== {slug}: iclr25 claims {slug} --fresh --rung {args.rung}", flush=True)
        rows.append(run_one(ROOT, slug, args.rung))
        for rung, folder in side_rungs(ROOT, slug) if args.side_rungs else []:
            print(f"== {slug}: iclr25 claims {slug} --fresh --rung {rung} --out {folder.relative_to(ROOT)}",
                  flush=True)
            rows.append(run_one(ROOT, slug, rung, folder, sync=False))
    print("\n| package | rung | version | fresh seeds | verdict = expected | changed | status |\n"
          "|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['slug']} | {r['rung']} | {r.get('version', '')} | {', '.join(map(str, r.get('seeds', [])))} | "
              f"{r['same']} of {r['n']} | {', '.join(r['differs'] + [f'{d} (not alive)' for d in r.get('dead', [])]) or '–'} "
              f"| {r['status']} |")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"rung": args.rung, "side_rungs": args.side_rungs, "packages": rows},
                                    indent=2) + "\n")
    print(f"wrote {args.json}")
    return 0 if all(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
