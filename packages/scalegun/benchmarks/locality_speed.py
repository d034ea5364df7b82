"""The speed record of the 5,000-edge batch against retraining on citation-like graphs, for the generated
``speed-table`` blocks (``make speed-tables``): one row per size and seed, from the ladder's JSON
(``benchmarks/locality_ladder.py``, calibration seeds) and the ``locality`` rung's decision seeds
(``docs/locality/claims.json``, written by ``iclr25 claims scalegun --rung locality``), with the 25M-edge decision
of 0.6.0 (``benchmarks/locality-25M-2026-12-06.json``, the same command when the rung was 25M edges) as a ladder
rung between them. No timing is taken here; the times, load and date are those of the runs, named in the note.

    python benchmarks/locality_speed.py --ladder benchmarks/locality-ladder-2026-12-05.json \\
        --at-25m benchmarks/locality-25M-2026-12-06.json --claims docs/locality/claims.json \\
        --out benchmarks/locality-speed.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from iclr25.utils.bench import speed_record, write_record

CLAIM = "batch-5000-faster-than-retraining-citation"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ladder", type=Path, default=Path(__file__).parent / "locality-ladder-2026-12-05.json")
    ap.add_argument("--at-25m", type=Path, default=Path(__file__).parent / "locality-25M-2026-12-06.json",
                    help="the rung's decision file from when it was 25M edges (its rows are a ladder rung)")
    ap.add_argument("--claims", type=Path, default=Path(__file__).parents[1] / "docs/locality/claims.json")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    lad = json.loads(args.ladder.read_text())
    rep = json.loads(args.claims.read_text())
    rows = []
    for c in lad["cells"]:
        rows.append({"case": f"{c['edges']:,} edges, seed {c['seed']} (calibration)", "ours": "ScaleGUN, 5,000-edge batch",
                     "ours_s": c["batch_s"], "peer": "retraining", "peer_s": c["retrain_s"],
                     "N2_frac": c["N2_frac"], "rss_growth_bytes_per_edge": c["rss_growth_bytes_per_edge"]})
    at25 = json.loads(args.at_25m.read_text())
    for tag, r in (("25M rung of 0.6.0", at25), ("decision", rep)):
        claim = next(c for c in r["claims"] if c["id"] == CLAIM)
        for seed, ex in zip(claim["seeds"], claim["extra"], strict=True):
            rows.append({"case": f"{int(ex['edges']):,} edges, seed {seed} ({tag})", "ours": "ScaleGUN, 5,000-edge batch",
                         "ours_s": ex["batch_s"], "peer": "retraining", "peer_s": ex["retrain_s"],
                         "N2_frac": ex["N2_frac"], "rss_growth_bytes_per_edge": ex["rss_growth_bytes_per_edge"]})
    rec = speed_record(rows, command=f"python benchmarks/locality_speed.py --ladder {args.ladder} --at-25m {args.at_25m} "
                               f"--claims {args.claims}",
                       repeats=1, note=(
                           "CPU seconds; one 5,000-edge request against the median of 2 retrainings per row (the "
                           "sides run one after the other in one process, not alternated); ladder rows from "
                           f"{args.ladder.name} ({lad['result'].get('created', '?')}), 25M rows from {args.at_25m.name} "
                           f"({at25.get('created', '?')}, load at start {at25.get('load_at_start')}), decision rows from "
                           f"{args.claims} ({rep.get('created', '?')}, load at start {rep.get('load_at_start')})"))
    write_record(args.out, rec, load_start=None)
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
