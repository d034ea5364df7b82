#!/usr/bin/env python3
"""Run one package's ``repro`` twice, serially and on a cluster backend, and check that the claims agree.

    python3 ci/backend_check.py SLUG [--backend dask] [--workers 2] [--json ci/reports/backend-check.json]

The package's environment is ``.venvs/<slug>`` (``make test PKG=<slug>`` builds it) with the backend's extra
installed there (``uv pip install --python .venvs/<slug>/bin/python "dask[distributed]"``). Both runs write into a
temporary folder; their ``claims.json`` are compared claim by claim: per-seed values, references, per-seed
verdicts and the verdict must be equal (values to ``--rtol``; claims whose metric is a time are compared by
verdict only, since two runs never time the same). The result is one entry per package in the JSON file (other
packages' entries are kept); exit 1 when anything differs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMED = ("second", "time", "speed", "faster", "wall", " s ", "ms ")


def _is_timed(claim: dict) -> bool:
    text = f" {claim.get('metric', '')} {claim.get('id', '')} ".lower()
    return any(w in text for w in TIMED)


def _close(a: object, b: object, rtol: float) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, rtol) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= rtol * max(abs(a), abs(b), 1e-12)
    return a == b


def compare(serial: dict, cluster: dict, *, rtol: float = 1e-9) -> list[dict]:
    """Claim-by-claim comparison of two ``claims.json`` documents: one row per claim with ``equal`` and, where not,
    the first field that differs."""
    by_id = {c["id"]: c for c in cluster.get("claims", [])}
    rows = []
    for c in serial.get("claims", []):
        d = by_id.pop(c["id"], None)
        if d is None:
            rows.append({"id": c["id"], "equal": False, "differs": "missing on the cluster run"})
            continue
        fields = ("verdict", "holds_per_seed") if _is_timed(c) else ("seeds", "values", "references",
                                                                     "holds_per_seed", "verdict")
        bad = next((f for f in fields if not _close(c.get(f), d.get(f), rtol)), None)
        row = {"id": c["id"], "kind": c.get("kind"), "compared": list(fields), "verdict": c.get("verdict"),
               "values_serial": c.get("values"), "values_cluster": d.get("values"), "equal": bad is None}
        if bad is not None:
            row["differs"] = bad
        rows.append(row)
    rows += [{"id": cid, "equal": False, "differs": "missing on the serial run"} for cid in by_id]
    return rows


def _run(cmd: list[str], env: dict) -> tuple[int, float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc.returncode, wall, cpu, (proc.stdout + proc.stderr)[-2000:]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("slug")
    ap.add_argument("--backend", choices=("dask", "ray"), default="dask")
    ap.add_argument("--workers", type=int, default=2, help="workers of the local cluster (default 2)")
    ap.add_argument("--rtol", type=float, default=1e-9, help="relative tolerance on values (default 1e-9)")
    ap.add_argument("--json", type=Path, default=ROOT / "ci" / "reports" / "backend-check.json")
    args = ap.parse_args(argv)
    exe = ROOT / ".venvs" / args.slug / "bin" / "iclr25"
    if not exe.is_file():
        print(f"backend_check: error: slug: no environment at {exe.parent.parent} (make test PKG={args.slug})",
              file=sys.stderr)
        return 2
    env = {**os.environ, "ICLR25_QUIET": "1", "MPLBACKEND": "Agg"}
    env.pop("VIRTUAL_ENV", None)
    extra = {"dask": "distributed", "ray": "ray"}[args.backend]
    probe = subprocess.run([str(exe.parent / "python"), "-c", f"import joblib, {extra}"], capture_output=True,
                           check=False)
    if probe.returncode != 0:  # checked before the serial run, which takes minutes
        print(f"backend_check: error: --backend {args.backend}: joblib or {extra} is not installed in "
              f"{exe.parent.parent} (uv pip install --python {exe.parent / 'python'} 'iclr25-utils[{extra}]')",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="backend-check-") as tmp:
        runs = {}
        # the cluster run first: it is the one that fails on a missing or broken backend
        for name, extra in ((args.backend, ["--backend", args.backend, "--workers", str(args.workers)]),
                            ("serial", [])):
            out = Path(tmp) / name
            cmd = [str(exe), args.slug, "repro", "--out", str(out), *extra]
            rc, wall, cpu, tail = _run(cmd, env)
            print(f"{args.slug} repro {' '.join(extra) or '(serial)'}: exit {rc}, {wall:.1f} s wall, {cpu:.1f} s CPU",
                  flush=True)
            if rc != 0 or not (out / "claims.json").is_file():
                print(tail, file=sys.stderr)
                print(f"backend_check: error: the {name} run failed (exit {rc}) or wrote no claims.json",
                      file=sys.stderr)
                return 1
            runs[name] = {"command": " ".join(["iclr25", *cmd[1:3], "--out", "DIR", *extra]), "wall_s": round(wall, 1),
                          "cpu_s": round(cpu, 1), "claims": json.loads((out / "claims.json").read_text())}
    rows = compare(runs["serial"]["claims"], runs[args.backend]["claims"], rtol=args.rtol)
    ok = all(r["equal"] for r in rows)
    entry = {"package": runs["serial"]["claims"].get("package"), "version": runs["serial"]["claims"].get("version"),
             "backend": args.backend, "workers": args.workers, "rtol": args.rtol,
             "date": datetime.now(UTC).isoformat(timespec="seconds"), "load_at_start": list(os.getloadavg()),
             "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
             "runs": {k: {kk: v for kk, v in r.items() if kk != "claims"} for k, r in runs.items()},
             "claims": rows, "equal": ok}
    doc = json.loads(args.json.read_text()) if args.json.is_file() else {}
    doc[args.slug] = entry
    args.json.parent.mkdir(parents=True, exist_ok=True)
    tmp_json = args.json.with_suffix(".tmp")
    tmp_json.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    tmp_json.replace(args.json)
    n_eq = sum(r["equal"] for r in rows)
    print(f"{args.slug}: {n_eq} of {len(rows)} claims equal between the serial and the {args.backend} run -> "
          f"{args.json.relative_to(ROOT) if args.json.is_relative_to(ROOT) else args.json}")
    for r in rows:
        if not r["equal"]:
            print(f"  {r['id']}: differs in {r['differs']}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
