"""The repro rung's calibration on the balanced generator over every calibration seed measured so far, joined from
the files ``iclr25 claims teochat --rung repro --calibrate --seeds ...`` wrote (no measurement here):

    python benchmarks/calibrate_repro_balanced.py            # prints the table, writes nothing
    python benchmarks/calibrate_repro_balanced.py --write    # writes ../claims-calibration-repro.json
    python benchmarks/calibrate_repro_balanced.py --out DIR  # writes it into DIR instead
    python benchmarks/calibrate_repro_balanced.py --markdown # EVIDENCE.md's table of the joined calibration

Sources: every repro claim at seeds 105-107 and 108-110, and the region temporal QA pair (its own, cheaper
measurement, ``--only``) at seeds 111-119. Each claim is joined over the files that measured it; a claim whose
reference is a fixed threshold (no baseline) is rebased on the registry's threshold, so a tolerance set from these
seeds is checked against the same values (``repro-single-image-detection-parity``: the smallest tolerance in steps
of 0.01 whose every-seed rule passes at three new seeds with probability >= 95 % is printed).
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
SOURCES = ("calibration-repro-balanced-seeds-105-107.json", "calibration-repro-balanced-seeds-108-110.json",
           "calibration-repro-balanced-rtqa-seeds-111-119.json")
PARITY = "repro-single-image-detection-parity"


def _joined() -> tuple[list[dict], list[int], list[str], int]:
    files = [json.loads((HERE / s).read_text(encoding="utf-8")) for s in SOURCES]
    if len({f["version"] for f in files}) != 1 or len({f["n_decide"] for f in files}) != 1:
        raise SystemExit("the calibration files differ in version or n_decide")
    seeds = sorted({s for f in files for s in f["seeds"]})
    n_decide = files[0]["n_decide"]
    entries = []
    for cid in REGISTRY.claims_at("repro"):
        reg = REGISTRY.claims[cid]
        parts = [e for f in files for e in f["claims"] if e["id"] == cid]
        if len({s for p in parts for s in p["seeds"]}) != sum(len(p["seeds"]) for p in parts):
            raise SystemExit(f"{cid}: the calibration files share seeds")
        rows = sorted((s, v, r, a) for p in parts for s, v, r, a in
                      zip(p["seeds"], p["values"], p["references"], p["alive_per_seed"], strict=True))
        seeds_c, values, refs, alive = (list(x) for x in zip(*rows, strict=True))
        if reg.baseline is None:  # a fixed threshold: rebased on the registry's
            refs = [reg.threshold] * len(values)
        sign = 1.0 if reg.direction == "higher" else -1.0
        imp = [sign * (v - r) for v, r in zip(values, refs, strict=True)]
        mm = max_margin(reg.rule, imp, n_decide)
        entries.append({"id": cid, "kind": reg.kind, "rule": reg.rule, "direction": reg.direction,
                        "margin": reg.margin, "expect": reg.expect, "seed_free": reg.seed_free, "seeds": seeds_c,
                        "values": values, "references": refs, "alive_per_seed": alive, "improvements": imp,
                        "mean": statistics.fmean(imp), "sd": statistics.stdev(imp), "max_margin": mm,
                        "ok": reg.expect == "fails" or reg.margin < mm})
    return entries, seeds, [f["created"] for f in files], n_decide


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="write the two calibration files in place")
    ap.add_argument("--out", type=Path, default=None, help="write the two calibration files into this folder")
    ap.add_argument("--markdown", action="store_true", help="print EVIDENCE.md's table and exit")
    args = ap.parse_args()
    entries, seeds, created, n = _joined()
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
    version = json.loads((HERE / SOURCES[0]).read_text(encoding="utf-8"))["version"]
    cmd = "python benchmarks/calibrate_repro_balanced.py --write (joins " + ", ".join(
        f"{s} of {c}" for s, c in zip(SOURCES, created, strict=True)) + ")"
    out = PKG if args.out is None else args.out
    out.mkdir(parents=True, exist_ok=True)
    path = CalibrationReport("iclr25-teochat", version, "repro", tuple(seeds), n, entries, command=cmd).save(out)
    print(f"wrote {path}")


def _markdown(entries: list[dict], seeds: list[int]) -> None:
    print("| claim | expect | margin | threshold or reference | seeds | improvement mean (sd) | smallest | max margin "
          "| calibrated |")
    print("|---|---|---|---|---|---|---|---|---|")
    for e in entries:
        reg = REGISTRY.claims[e["id"]]
        ref = f"threshold {reg.threshold:g}" if reg.baseline is None else "the baseline, per seed"
        ok = "yes" if e["ok"] and e["expect"] == "holds" else ("**no**" if not e["ok"] else "declared fail")
        ss = e["seeds"]
        span = f"{ss[0]}-{ss[-1]}" if ss == list(range(ss[0], ss[-1] + 1)) else ", ".join(map(str, ss))
        print(f"| {e['id']} | {e['expect']} | {e['margin']:g} | {ref} | {span} | {e['mean']:+.3f} ({e['sd']:.3f}) | "
              f"{min(e['improvements']):+.3f} | {e['max_margin']:+.3f} | {ok} |")


if __name__ == "__main__":
    main()
