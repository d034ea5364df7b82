"""The repro rung's calibration on the balanced generator over every calibration seed measured so far, joined from
the files ``iclr25 claims teochat --rung repro --calibrate --seeds ...`` wrote (no measurement here):

    python benchmarks/calibrate_repro_balanced.py            # prints the table, writes nothing
    python benchmarks/calibrate_repro_balanced.py --write    # writes the two files below
    python benchmarks/calibrate_repro_balanced.py --out DIR  # writes them into DIR instead
    python benchmarks/calibrate_repro_balanced.py --markdown # EVIDENCE.md's table of the joined calibration

- ``benchmarks/calibration-repro-balanced-seeds-105-110.json``: every repro claim over seeds 105-110;
- ``claims-calibration-repro.json``: the entries of the claims decided only at the repro rung (what
  ``--calibrate --only`` calibrates there; the region temporal QA pair is decided at the test rung too and
  calibrated by ``claims-calibration.json``).

Each claim's references and improvements are recomputed against the registry as it is now: a claim whose
reference is a fixed threshold (no baseline) is rebased on the registry's threshold, so a tolerance set from these
seeds is checked against the same values (``repro-single-image-detection-parity``: the smallest tolerance in
steps of 0.01 whose every-seed rule passes at three new seeds with probability >= 95 % is printed).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from iclr25.teochat.claims import REGISTRY
from iclr25.utils.claims import CalibrationReport, max_margin

HERE = Path(__file__).resolve().parent
PKG = HERE.parent
SOURCES = ("calibration-repro-balanced-seeds-105-107.json", "calibration-repro-balanced-seeds-108-110.json")
OUT_ALL = HERE / "calibration-repro-balanced-seeds-105-110.json"
PARITY = "repro-single-image-detection-parity"


def _joined() -> tuple[list[dict], list[int], list[str]]:
    files = [json.loads((HERE / s).read_text(encoding="utf-8")) for s in SOURCES]
    if len({f["version"] for f in files}) != 1 or len({f["n_decide"] for f in files}) != 1:
        raise SystemExit("the calibration files differ in version or n_decide")
    seeds = sorted(s for f in files for s in f["seeds"])
    if len(set(seeds)) != len(seeds):
        raise SystemExit(f"the calibration files share seeds: {seeds}")
    entries = []
    for cid in REGISTRY.claims_at("repro"):
        reg = REGISTRY.claims[cid]
        parts = [next(e for e in f["claims"] if e["id"] == cid) for f in files]
        rows = sorted((s, v, r, a) for p in parts for s, v, r, a in
                      zip(p["seeds"], p["values"], p["references"], p["alive_per_seed"], strict=True))
        seeds_c, values, refs, alive = (list(x) for x in zip(*rows, strict=True))
        if reg.baseline is None:  # a fixed threshold: rebased on the registry's
            refs = [reg.threshold] * len(values)
        sign = 1.0 if reg.direction == "higher" else -1.0
        imp = [sign * (v - r) for v, r in zip(values, refs, strict=True)]
        mm = max_margin(reg.rule, imp, files[0]["n_decide"])
        entries.append({"id": cid, "kind": reg.kind, "rule": reg.rule, "direction": reg.direction,
                        "margin": reg.margin, "expect": reg.expect, "seed_free": reg.seed_free, "seeds": seeds_c,
                        "values": values, "references": refs, "alive_per_seed": alive, "improvements": imp,
                        "mean": statistics.fmean(imp), "sd": statistics.stdev(imp), "max_margin": mm,
                        "ok": reg.expect == "fails" or reg.margin < mm})
    return entries, seeds, [f["created"] for f in files]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="write the two calibration files in place")
    ap.add_argument("--out", type=Path, default=None, help="write the two calibration files into this folder")
    ap.add_argument("--markdown", action="store_true", help="print EVIDENCE.md's table and exit")
    args = ap.parse_args()
    entries, seeds, created = _joined()
    n = 3
    if args.markdown:
        _markdown(entries, seeds)
        return
    for e in entries:
        print(f"{e['id']:45s} {e['expect']:5s} margin {e['margin']:<5g} max margin {e['max_margin']:+.3f} "
              f"{'ok' if e['ok'] else 'NOT CALIBRATED'}")
    par = next(e for e in entries if e["id"] == PARITY)
    gaps = par["values"]
    tol = next(t / 100 for t in range(1, 51) if max_margin("every_seed", [g + t / 100 for g in gaps], n) > 0)
    print(f"{PARITY}: gaps {', '.join(f'{g:+.3f}' for g in gaps)}; smallest tolerance (0.01 steps) calibrated at "
          f"{n} new seeds: {tol:.2f}; the registry's threshold {REGISTRY.claims[PARITY].threshold}")
    if not args.write and args.out is None:
        return
    out_all, out_pkg = (OUT_ALL, PKG) if args.out is None else (args.out / OUT_ALL.name, args.out)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
    version = json.loads((HERE / SOURCES[0]).read_text(encoding="utf-8"))["version"]
    cmd = "python benchmarks/calibrate_repro_balanced.py --write (joins " + ", ".join(
        f"{s} of {c}" for s, c in zip(SOURCES, created, strict=True)) + ")"
    full = CalibrationReport("iclr25-teochat", version, "repro", tuple(seeds), n, entries, command=cmd)
    full.save(out_all)
    at_test = set(REGISTRY.claims_at("test"))
    only = CalibrationReport("iclr25-teochat", version, "repro", tuple(seeds), n,
                             [e for e in entries if e["id"] not in at_test], command=cmd)
    only.save(out_pkg)
    print(f"wrote {out_all} and {out_pkg / 'claims-calibration-repro.json'}")


def _markdown(entries: list[dict], seeds: list[int]) -> None:
    print(f"| claim | expect | margin | threshold or reference | values at {' / '.join(map(str, seeds))} | "
          "max margin | calibrated |")
    print("|---|---|---|---|---|---|---|")
    for e in entries:
        reg = REGISTRY.claims[e["id"]]
        ref = f"threshold {reg.threshold:g}" if reg.baseline is None else \
            "reference " + " / ".join(f"{r:.3f}" for r in e["references"])
        ok = "yes" if e["ok"] and e["expect"] == "holds" else ("**no**" if not e["ok"] else "declared fail")
        print(f"| {e['id']} | {e['expect']} | {e['margin']:g} | {ref} | "
              f"{' / '.join(f'{v:+.3f}' if reg.baseline is None else f'{v:.3f}' for v in e['values'])} | "
              f"{e['max_margin']:+.3f} | {ok} |")


if __name__ == "__main__":
    main()
