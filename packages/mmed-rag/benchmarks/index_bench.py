"""Query latency and recall@10 of the index backends on 100k clustered 64-d vectors (faiss HNSW vs flat, with
hnswlib and numpy beside them; :func:`iclr25.mmed_rag.index.benchmark_backends`). Writes JSON and prints a
Markdown table. ``repro`` runs the faiss pair of this benchmark itself.

    python benchmarks/index_bench.py [--n 100000] [--out benchmarks/index_bench.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from iclr25.mmed_rag.index import benchmark_backends


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("index_bench.json"))
    args = ap.parse_args()
    rows = benchmark_backends(("faiss-flat", "numpy", "faiss-hnsw", "hnswlib"), n=args.n, n_queries=args.queries,
                              dim=args.dim)
    print("| backend | params | build s | ms / query | recall@10 vs flat |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['backend']} | {r['params']} | {r['build_s']:.2f} | {r['query_ms']:.4f} | {r['recall@10']:.3f} |")
    out = args.out if args.out.suffix == ".json" else args.out / "index_bench.json"  # make bench passes a folder
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"n": args.n, "queries": args.queries, "dim": args.dim, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
