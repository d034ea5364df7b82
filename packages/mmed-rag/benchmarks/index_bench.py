"""Query latency and recall@10 of the index backends on 100k clustered 64-d vectors (faiss HNSW vs flat, with
hnswlib and numpy beside them; :func:`iclr25.mmed_rag.index.benchmark_backends`). Writes JSON and prints a
Markdown table. ``repro`` runs the faiss pair of this benchmark itself.

    python benchmarks/index_bench.py [--n 100000] [--out benchmarks/index_bench.json --overwrite]

``--out`` is a ``.json`` file or a folder (``make bench``: ``FOLDER/index_bench.json``), checked before the work
(an existing file is replaced only with ``--overwrite``) and written atomically.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from iclr25.mmed_rag.index import benchmark_backends
from iclr25.utils.io import atomic_write
from iclr25.utils.outputs import OutputError, add_output, check_outputs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--dim", type=int, default=64)
    add_output(ap, "--out", kind="file", default=Path(__file__).with_name("index_bench.json"),
               help="the JSON file, or a folder for index_bench.json")
    args = ap.parse_args()
    if args.out.suffix != ".json":  # make bench passes a folder
        args.out = args.out / "index_bench.json"
    try:
        check_outputs(args)
    except OutputError as exc:
        ap.error(str(exc))
    rows = benchmark_backends(("faiss-flat", "numpy", "faiss-hnsw", "hnswlib"), n=args.n, n_queries=args.queries,
                              dim=args.dim)
    print("| backend | params | build s | ms / query | recall@10 vs flat |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['backend']} | {r['params']} | {r['build_s']:.2f} | {r['query_ms']:.4f} | {r['recall@10']:.3f} |")
    with atomic_write(args.out) as f:
        f.write(json.dumps({"n": args.n, "queries": args.queries, "dim": args.dim, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
