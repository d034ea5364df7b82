"""The 5,000-edge batch against retraining on citation-like graphs (ogbn-arxiv's degree, clustering and
locality; :func:`iclr25.scalegun.citation.citation_files`), over a ladder of sizes, on the mapped CSR path.

Per size and seed: the graph is generated into a temporary folder (not timed; its CPU seconds recorded), then
:func:`iclr25.scalegun.citation.locality_cell` times one 5,000-edge ScaleGUN request and the median of 2
retrainings (CPU seconds), measures the batch's two-hop ball (N1 / n, N2 / n) and the peak RSS growth per edge.
At the smallest size the generator's mean degree and average clustering are measured against ogbn-arxiv's.

    python benchmarks/locality_ladder.py --sizes 1000000 3000000 10000000 --seeds 100 101 \\
        --out benchmarks/locality-ladder-2026-12-05.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from iclr25.scalegun.citation import ARXIV, average_clustering, citation_files, locality_cell
from iclr25.scalegun.mapped import MappedGraph
from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 3_000_000, 10_000_000])
    ap.add_argument("--seeds", type=int, nargs="+", default=[100, 101])
    ap.add_argument("--features", type=int, default=16)
    ap.add_argument("--out", type=Path, required=True, help="JSON file to write")
    args = ap.parse_args()
    if args.out.exists() and args.out.is_dir():
        raise SystemExit(f"--out {args.out} is a folder; name a JSON file")
    run = RunResult.start("iclr25-scalegun", "benchmark-locality-ladder", seed=args.seeds[0],
                          config=dict(sizes=args.sizes, seeds=args.seeds, features=args.features, classes=5))
    cells, stats = [], None
    for m in args.sizes:
        n = int(round(2 * m / ARXIV["mean_degree"]))
        for seed in args.seeds:
            with tempfile.TemporaryDirectory(prefix="scalegun-citation-") as d:
                t = time.process_time()
                citation_files(d, n, args.features, 5, seed=seed)
                gen_s = time.process_time() - t
                if stats is None:
                    g = MappedGraph(Path(d) / "csr-mmap")
                    deg = np.diff(np.asarray(g.indptr)) - 1
                    stats = {"nodes": n, "edges": g.n_edges, "mean_degree": float(deg.mean()),
                             "max_degree": int(deg.max()), "clustering_sampled_3000": average_clustering(g, 3000),
                             "arxiv": ARXIV}
                    print("generator:", stats, flush=True)
                c = locality_cell(d, seed)
            c["generate_cpu_s"] = gen_s
            cells.append(c)
            print(f"{c['edges']:,} edges seed {seed}: batch {c['batch_s']:.2f} s, retrain {c['retrain_s']:.2f} s, "
                  f"{c['speedup']:.2f}x, N1/n {c['N1_frac']:.3f}, N2/n {c['N2_frac']:.3f}, "
                  f"{c['rss_growth_bytes_per_edge']:.0f} B/edge", flush=True)
            run.add(f"{c['edges'] / 1e6:.1f}M edges seed {seed}: 5,000-edge batch", c["batch_s"], peer=c["retrain_s"],
                    peer_name="retrain", unit="s", higher_is_better=False, timing=True)
    run.finish()
    with atomic_write(args.out) as f:
        f.write(json.dumps({"result": run.to_dict(),
                            "generator": stats, "cells": cells}, indent=1, default=float) + "\n")


if __name__ == "__main__":
    main()
