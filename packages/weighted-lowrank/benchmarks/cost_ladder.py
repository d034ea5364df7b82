"""The paper's speed headline on this machine: one half-step's CPU time against k over a ladder of row lengths n.

    python benchmarks/cost_ladder.py --out benchmarks/measured [--seed 0] [--rows 256] [--ns 2000 4000 8000 16000]
        [--ks 32 64 128] [--repeats 3]

For every n, ``--rows`` regressions of length n (dense weights, ‖W‖_0 = rows · n fixed while k varies) are solved
by the exact (LLR16) and the sketched solver at every k, ``--repeats`` times each, the two sides alternating, on
ONE BLAS thread (CPU seconds, medians): :func:`iclr25.weighted_lowrank.costladder.cost_ladder`, the same
measurement as the repro-rung claims ``cost-exponent-in-k-ladder`` and ``sketch-faster-past-crossover``.

Writes ``OUT/cost_ladder.json`` (``iclr25.utils.bench.speed_record`` + ``write_record``: machine, BLAS kernel, load,
date, command; one row per n at the largest k, with both log-log slopes in k and the achieved GFLOP/s of both
half-steps against the float64 GEMM peak measured in the same run; every cell under ``"ladder"``). The README's
speed block is generated from it by ``make speed-tables``. ``--evidence`` measures nothing: it rewrites the
Evidence page's per-seed ladder table from the committed ``claims.json``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from iclr25.utils.bench import benchmark_parser, speed_record, speed_table, write_record
from iclr25.utils.io import atomic_write
from iclr25.weighted_lowrank.costladder import (
    LADDER_KS,
    LADDER_NS,
    LADDER_ROWS,
    cost_ladder,
    replace_block,
    seeds_table,
)


def write_evidence() -> None:
    """EVIDENCE.md's per-seed ladder table (the repro-rung claims' extras in claims.json)."""
    pkg = Path(__file__).resolve().parents[1]
    report = json.loads((pkg / "claims.json").read_text(encoding="utf-8"))
    doc = pkg / "EVIDENCE.md"
    with atomic_write(doc) as fh:
        fh.write(replace_block(doc.read_text(encoding="utf-8"), seeds_table(report)))
    print(f"rewrote the per-seed ladder table in {doc}")


def main() -> None:
    ap = benchmark_parser(__doc__, out="results/bench-cost-ladder", raw=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rows", type=int, default=LADDER_ROWS)
    ap.add_argument("--ns", type=int, nargs="+", default=list(LADDER_NS))
    ap.add_argument("--ks", type=int, nargs="+", default=list(LADDER_KS))
    ap.add_argument("--repeats", type=int, default=3, help="alternating runs per side and cell, medians (default 3)")
    ap.add_argument("--evidence", action="store_true",
                    help="measure nothing: rewrite EVIDENCE.md's per-seed ladder table from the committed claims.json")
    args = ap.parse_args()
    if args.evidence:
        write_evidence()
        return
    load_start = os.getloadavg()[0]
    lad = cost_ladder(seed=args.seed, rows=args.rows, ns=tuple(args.ns), ks=tuple(args.ks), repeats=args.repeats)
    kmax, peak = args.ks[-1], lad["peak_gflops"]
    rows = []
    for n in args.ns:
        c = next(c for c in lad["cells"] if c["n"] == n and c["k"] == kmax)
        sl = lad["slopes"][str(n)]
        rows.append({"case": f"n = {n}, k = {kmax}; slope in k {sl['sketch']:.2f} / {sl['exact']:.2f}; "
                             f"GFLOP/s {c['sketch_gflops']:.1f} / {c['exact_gflops']:.1f}",
                     "ours": "sketch", "ours_s": c["sketch_s"], "peer": "exact (LLR16)", "peer_s": c["exact_s"],
                     "slope_sketch": sl["sketch"], "slope_exact": sl["exact"], "sketch_gflops": c["sketch_gflops"],
                     "exact_gflops": c["exact_gflops"], "steps": c["steps"]})
    cross = lad["crossover_n"]
    note = (f"Sketch / exact: log-log slope of CPU s over k = {', '.join(map(str, args.ks))} and GFLOP/s (flop model) "
            f"of one half-step, {args.rows} rows of length n, 1 BLAS thread, seed {args.seed}; float64 GEMM peak "
            f"{peak:.1f} GFLOP/s in the same run. Crossover (sketch faster at k = {kmax} from here on): "
            + (f"n = {cross}." if cross is not None else "none in the ladder."))
    command = "python benchmarks/cost_ladder.py " + " ".join(sys.argv[1:])
    record = speed_record(rows, command=command.strip(), repeats=args.repeats, note=note)
    record["ladder"] = lad
    path = write_record(args.out / "cost_ladder.json", record, load_start=load_start)
    print(speed_table({**record, "load_start": load_start, "load_end": os.getloadavg()[0], "date": "now"}))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
