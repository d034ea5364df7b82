"""One claim's calibration over the seeds of several ``iclr25 claims --calibrate`` runs (issue 58).

Kept as the record of how ``claims-calibration-long.json`` (0.7.0) was made. Since iclr25-utils 0.13,
``iclr25 claims ms-gode --calibrate --only ID --seeds NEW --out DIR`` joins new seeds to the claim's entry itself
(same version, rule, margin; ``CalibrationReport.merged``), which gives the same entry.

    python benchmarks/merge_calibration.py --rung long --only near-zero-forgetting FILE1 FILE2 ... --out DIR

``iclr25 claims ms-gode --calibrate --only ID --out DIR`` keeps the *other* claims of an existing calibration file
but replaces this claim's entry, so calibration seeds measured in two runs (100-104 last session, 105-109 in the
next) cannot reach one file without measuring the first ones again (about 140 s CPU a seed at ``long``). This
script reads the runs' files (each written by that command, unchanged), checks that they calibrate the same
package, rung and claim with the registry's current margin, rule, direction and expect (the values and references
do not depend on the rule), and builds the entry exactly as ``ClaimRegistry.calibrate`` does: the per-seed
measurements decided by ``iclr25.utils.claims.decide``, the improvements, and ``max_margin`` at the rung's number
of decision seeds. It writes DIR/claims-calibration-RUNG.json (merged with the file's other claims, as the CLI
does) and prints the explanation; exit 1 when the margin is not calibrated (the file is written either way only
with ``--write-uncalibrated``, for the record).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import sys
from pathlib import Path

from iclr25.ms_gode.claims import REGISTRY
from iclr25.utils.claims import (
    CalibrationReport,
    Measurement,
    _calibration_ok,
    _json_float,
    calibration_file,
    decide,
    load_calibration,
    max_margin,
)


def merged_entry(files: list[Path], rung: str, cid: str) -> tuple[dict, list[int], list[str]]:
    c = REGISTRY.claims[cid]
    per_seed: dict[int, Measurement] = {}
    commands = []
    for f in files:
        cal = load_calibration(f)
        if cal.get("package") != REGISTRY.package or cal.get("rung") != rung:
            raise SystemExit(f"{f}: package {cal.get('package')!r}, rung {cal.get('rung')!r}: not "
                             f"{REGISTRY.package} at {rung!r}")
        (e,) = [e for e in cal["claims"] if e["id"] == cid]
        if e["direction"] != c.direction or e["expect"] != c.expect:
            raise SystemExit(f"{f}: {cid} has direction {e['direction']!r}, expect {e['expect']!r}; the registry "
                             f"{c.direction!r}, {c.expect!r}")
        for s, v, r, a in zip(e["seeds"], e["values"], e["references"], e["alive_per_seed"], strict=True):
            if s in per_seed:
                raise SystemExit(f"{f}: seed {s} is in two files")
            per_seed[s] = Measurement(v, reference=r, alive=a)
        commands.append(cal.get("command", ""))
    overlap = sorted(set(per_seed) & set(REGISTRY.rung_seeds(rung)))
    if overlap:
        raise SystemExit(f"calibration seeds {overlap} are decision seeds of rung {rung!r}")
    n_decide = len(REGISTRY.rung_seeds(rung))
    # as ClaimRegistry.calibrate builds its entry
    res = decide(dataclasses.replace(c, min_seeds=3), per_seed, rung=rung)
    imp = [c.improvement(v, r) for v, r in zip(res.values, res.references, strict=True)]
    usable = all(math.isfinite(d) for d in imp) and all(res.alive_per_seed)
    mm = max_margin(c.rule, imp, n_decide) if usable else None
    entry = {"id": cid, "kind": c.kind, "rule": c.rule, "direction": c.direction, "margin": c.margin,
             "expect": c.expect, "seed_free": c.seed_free, "seeds": list(res.seeds),
             "values": [_json_float(v) for v in res.values], "references": [_json_float(r) for r in res.references],
             "alive_per_seed": list(res.alive_per_seed), "improvements": [_json_float(d) for d in imp],
             "mean": _json_float(statistics.fmean(imp)) if usable else None,
             "sd": _json_float(statistics.stdev(imp)) if usable else None,
             "max_margin": None if mm is None else _json_float(mm), "ok": _calibration_ok(c.expect, c.margin, mm)}
    return entry, list(res.seeds), commands


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", type=Path, nargs="+", help="calibration files written by `iclr25 claims --calibrate`")
    ap.add_argument("--rung", required=True)
    ap.add_argument("--only", required=True, help="the claim id")
    ap.add_argument("--out", type=Path, required=True, help="the folder of claims-calibration-RUNG.json")
    ap.add_argument("--write-uncalibrated", action="store_true")
    args = ap.parse_args()
    entry, seeds, commands = merged_entry(args.files, args.rung, args.only)
    command = ("python benchmarks/merge_calibration.py --rung " + args.rung + " --only " + args.only + " "
               + " ".join(str(f) for f in args.files) + " (seeds measured by: " + "; ".join(commands) + ")")
    cal = CalibrationReport(REGISTRY.package, REGISTRY.version(), args.rung, tuple(seeds),
                            len(REGISTRY.rung_seeds(args.rung)), [entry], command=command)
    path = args.out / calibration_file(args.rung)
    if path.is_file():
        cal = cal.merged(load_calibration(path), REGISTRY.claims_at(args.rung))
    print(cal.explain())
    if entry["ok"] or args.write_uncalibrated:
        print(f"wrote {cal.save(path)}")
    if not entry["ok"]:
        print(f"margin not calibrated (not below the max margin): {args.only}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
