"""Query latency and recall@10 of the index backends on 100k clustered 64-d vectors (faiss HNSW vs flat, with
hnswlib and numpy beside them). Writes JSON and prints a Markdown table.

    python benchmarks/index_bench.py [--n 100000] [--out benchmarks/index_bench.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from iclr25.mmed_rag import VectorIndex
from iclr25.utils.bench import measure


def data(n: int, n_q: int, dim: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A mixture of 200 Gaussian clusters (embeddings are clustered; uniform noise is HNSW's worst case)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((200, dim)).astype(np.float32)
    lab = rng.integers(0, 200, n + n_q)
    x = centres[lab] + 0.6 * rng.standard_normal((n + n_q, dim)).astype(np.float32)
    return x[:n], x[n:]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("index_bench.json"))
    args = ap.parse_args()
    import faiss

    faiss.omp_set_num_threads(1)
    db, q = data(args.n, args.queries, args.dim)
    rows = []
    exact = None
    for backend, kw in (("faiss-flat", {}), ("numpy", {}), ("faiss-hnsw", {"m": 16, "ef_search": 64}),
                        ("hnswlib", {"m": 16, "ef_search": 64})):
        t0 = time.perf_counter()
        idx = VectorIndex(args.dim, backend=backend, ef_construction=100, **kw).add(db)
        build = time.perf_counter() - t0
        res = idx.search(q, 10)
        if exact is None:
            exact = res.ids
        m = measure(lambda idx=idx: idx.search(q, 10), repeats=3)
        recall = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(exact, res.ids, strict=True)]))
        rows.append({"backend": backend, **kw, "build_s": build, "query_ms": 1e3 * m.median / len(q),
                     "recall@10": recall})
    print("| backend | params | build s | ms / query | recall@10 vs flat |\n|---|---|---|---|---|")
    for r in rows:
        params = ", ".join(f"{k}={r[k]}" for k in ("m", "ef_search") if k in r)
        print(f"| {r['backend']} | {params} | {r['build_s']:.2f} | {r['query_ms']:.4f} | {r['recall@10']:.3f} |")
    args.out.write_text(json.dumps({"n": args.n, "queries": args.queries, "dim": args.dim, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
