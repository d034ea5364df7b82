"""``pgw_pairwise`` for many shapes: the entropic path (fixed-size ``jit(vmap)`` batches over device-resident
padded spaces) against the exact path through ``iclr25.utils.parallel_map`` on a Dask cluster.

    python benchmarks/bench_pairwise_many.py --exact-shapes 25 50 100 --entropic-shapes 6 12 18
        [--workers 1] [--batch-sizes 8 64] [--out DIR]

Shapes: data set II (mass 1/74 per point, lam = max C^2 / 5), the first K of ``shapes_ii(ceil(K / 6))``.
Each (K, path, batch size) runs in a fresh child process, the paths alternating per K (ascending), so that the peak resident
memory (``iclr25.utils.memory.peak_rss_bytes``, ``VmHWM``; for Dask the client plus every worker) belongs to
that path alone. The entropic time includes its compilations (one per pair of size buckets); the exact time
excludes starting the Dask cluster (timed apart). One thread per process (BLAS, XLA) and ``--workers`` Dask workers of one thread.
The last lines extrapolate each path to ``--target`` shapes by the number of pairs (K (K - 1) / 2).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path


def _spaces(k: int):
    from iclr25.pgw import datasets, default_lam, mm_space

    data = datasets.shapes_ii(math.ceil(k / 6), seed=0)
    spaces = [mm_space(X, mass=1 / 74) for X in data.points[:k]]
    return spaces, default_lam(spaces)


def _peak_mb() -> float:
    from iclr25.utils.memory import peak_rss_bytes

    return peak_rss_bytes() / 2**20


def child(path: str, k: int, workers: int, batch_size: int, sample: int = 0) -> dict:
    import numpy as np

    from iclr25.pgw import pgw_pairwise

    spaces, lam = _spaces(k)
    out: dict = {"path": path, "shapes": k, "pairs": k * (k - 1) // 2}
    if path == "entropic":
        # the time includes the compilations (one per pair of size buckets: a warm-up call would cost
        # whole batches of pairs, seconds to minutes on CPU)
        stats: dict = {}
        t0 = time.perf_counter()
        D = pgw_pairwise(spaces, lam, method="entropic", batch_size=batch_size, stats=stats)
        out["seconds"] = time.perf_counter() - t0
        out["stats"] = stats
        out["peak_rss_mb"] = _peak_mb()
    elif path == "entropic-sample":
        # a uniform sample of the K shapes' pairs, in the buckets of the full set of pairs: no merging of small
        # groups (min_group_pairs=1), which the full set does not need either (its groups hold thousands of
        # pairs); the sample's groups are small, so their slots idle at the end (slot use is reported)
        from iclr25.pgw.entropic import entropic_pgw_pairs

        rng = np.random.default_rng(0)
        all_pairs = np.array([(i, j) for i in range(k) for j in range(i + 1, k)])
        pairs = all_pairs[np.sort(rng.choice(len(all_pairs), size=min(sample, len(all_pairs)), replace=False))]
        stats = {}
        t0 = time.perf_counter()
        vals = entropic_pgw_pairs(spaces, [tuple(p) for p in pairs], lam, batch_size=batch_size, min_group_pairs=1,
                                  stats=stats)
        out["seconds"] = time.perf_counter() - t0
        out["sampled_pairs"] = len(pairs)
        out["stats"] = stats
        out["peak_rss_mb"] = _peak_mb()
        out["D_upper"] = vals.tolist()
        out["pairs_idx"] = pairs.tolist()
        return out
    else:
        from distributed import Client, LocalCluster

        t0 = time.perf_counter()
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                               env={"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
        client = Client(cluster)
        client.run(lambda: __import__("ot"))  # import POT in the workers before timing
        out["cluster_start_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        D = pgw_pairwise(spaces, lam, n_jobs=workers, backend="dask")
        out["seconds"] = time.perf_counter() - t0
        worker_mb = client.run(_peak_mb)
        out["peak_rss_client_mb"] = _peak_mb()
        out["peak_rss_workers_mb"] = sorted(worker_mb.values())
        out["peak_rss_mb"] = out["peak_rss_client_mb"] + sum(worker_mb.values())
        client.close()
        cluster.close()
    iu = np.triu_indices(k, 1)
    out["D_upper"] = D[iu].tolist()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exact-shapes", type=int, nargs="*", default=[25, 50, 100])
    ap.add_argument("--entropic-shapes", type=int, nargs="*", default=[6, 12, 18])
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[64], help="entropic batch sizes to time")
    ap.add_argument("--target", type=int, default=500)
    ap.add_argument("--sample-pairs", type=int, default=0,
                    help="also time the entropic path on this many random pairs of the --target shapes (their "
                         "buckets); extrapolated as compilation + per-pair time x all pairs")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--child", nargs=2, metavar=("PATH", "K"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               XLA_FLAGS="--xla_cpu_multi_thread_eigen=false", POT_BACKEND_DISABLE_PYTORCH="1",
               POT_BACKEND_DISABLE_JAX="1")
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), args.workers, args.batch_size,
                               args.sample_pairs)))
        return 0
    import numpy as np

    load0 = os.getloadavg()[0]
    runs = sorted({(k, "exact", 0) for k in args.exact_shapes}
                  | {(k, "entropic", b) for k in args.entropic_shapes for b in args.batch_sizes}
                  | ({(args.target, "entropic-sample", b) for b in args.batch_sizes} if args.sample_pairs else set()),
                  key=lambda r: (r[0], r[1] != "entropic", r[2]))
    rows = []
    for k, path, bs in runs:
        proc = subprocess.run([sys.executable, __file__, "--child", path, str(k), "--workers", str(args.workers),
                               "--batch-size", str(bs or args.batch_size), "--sample-pairs", str(args.sample_pairs)],
                              env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            return 1
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        r["batch_size"] = bs
        rows.append(r)
        if path == "entropic-sample":
            st = r["stats"]
            per = (r["seconds"] - st["compile_s"]) / r["sampled_pairs"]
            r["extrapolated_s"] = st["compile_s"] + per * r["pairs"]
            print(f"K={k:4d} entropic, {r['sampled_pairs']} sampled pairs of {r['pairs']}: {r['seconds']:.2f} s "
                  f"({st['compile_s']:.1f} s compiling {st['batches']} size groups), {1e3 * per:.1f} ms/pair -> "
                  f"all pairs ~{r['extrapolated_s']:.0f} s ({r['extrapolated_s'] / 3600:.2f} h); slot use "
                  f"{st['slot_use']:.2f}, padding use {st['pad_use']:.2f}, peak RSS {r['peak_rss_mb']:.0f} MB",
                  flush=True)
            for x in [x for x in rows if x["shapes"] == k and x["path"] == "exact"]:
                i, j = np.array(r["pairs_idx"]).T
                exact = np.array(x["D_upper"])[i * k - i * (i + 1) // 2 + j - i - 1]
                rel = np.abs(np.array(r["D_upper"]) - exact) / np.maximum(exact, 1e-300)
                r["rel_diff_vs_exact"] = [float(np.median(rel)), float(rel.max())]
                print(f"K={k:4d} entropic sample vs exact distances: median rel. diff {np.median(rel):.3g}, "
                      f"max {rel.max():.3g}", flush=True)
            rows.append(r)
            continue
        if path == "entropic":
            st = r["stats"]
            extra = (f"batch {bs}, {st['batches']} size groups ({st['compile_s']:.1f} s compiling, included), "
                     f"slot use {st['slot_use']:.2f}, padding use {st['pad_use']:.2f}")
        else:
            extra = (f"{args.workers} worker(s), cluster start {r['cluster_start_s']:.1f} s, client "
                     f"{r['peak_rss_client_mb']:.0f} MB")
        print(f"K={k:4d} {path:8s} pairs={r['pairs']:6d}  {r['seconds']:8.2f} s  "
              f"{1e3 * r['seconds'] / r['pairs']:7.2f} ms/pair  peak RSS {r['peak_rss_mb']:7.0f} MB  ({extra})",
              flush=True)
        if path == "exact":  # runs after the entropic ones of the same K
            for e in [x for x in rows if x["shapes"] == k and x["path"] == "entropic"]:
                a, b = np.array(e["D_upper"]), np.array(r["D_upper"])
                rel = np.abs(a - b) / np.maximum(b, 1e-300)
                e["rel_diff_vs_exact"] = [float(np.median(rel)), float(rel.max())]
                print(f"K={k:4d} entropic (batch {e['batch_size']}) vs exact distances: median rel. diff "
                      f"{np.median(rel):.3g}, max {rel.max():.3g}", flush=True)
    target_pairs = args.target * (args.target - 1) // 2
    for path, bs in sorted({(r["path"], r["batch_size"]) for r in rows if r["path"] != "entropic-sample"}):
        last = [r for r in rows if r["path"] == path and r["batch_size"] == bs][-1]
        est = last["seconds"] / last["pairs"] * target_pairs
        how = f"1 XLA thread, batch {bs}" if path == "entropic" else f"{args.workers} Dask worker(s)"
        print(f"extrapolated to K={args.target} ({target_pairs} pairs) from K={last['shapes']}: {path} "
              f"~{est:.0f} s ({est / 3600:.2f} h) on {how}")
    print(f"load {load0:.2f} -> {os.getloadavg()[0]:.2f}")
    if args.out is not None:
        from iclr25.utils.bench import write_record

        for r in rows:
            r.pop("D_upper", None)
            r.pop("pairs_idx", None)
        write_record(args.out / "pairwise_many.json", {"rows": rows}, load_start=load0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
