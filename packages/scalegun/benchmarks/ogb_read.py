"""Peak memory of reading an OGB node-property folder (``raw/*.csv.gz``, ``split/``) into the mapped CSR folder,
against the folder's size on disk, at two edge counts (memory should not grow with the edges).

    python benchmarks/ogb_read.py --out benchmarks --sizes 1000000 10000000

The folders are generated here in OGB's layout (Chung-Lu-like random edges written as ``u,v`` lines, n = m / 10
nodes, 8 features, 5 classes, a ``split/time`` split), under ``--work`` (default: a temporary folder, deleted at
the end). Each conversion runs in a fresh Python process: its peak RSS (``VmHWM``) after the imports is
compared with its RSS before the conversion. Writes ``ogb-read-<date>.json`` to ``--out``.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from iclr25.utils.bench import benchmark_parser, write_record

CHILD = r"""
import json, sys, time
from pathlib import Path
from iclr25.scalegun import readers
from iclr25.utils.memory import current_rss_bytes, peak_rss_bytes, reset_peak_rss
before = current_rss_bytes(); reset_peak_rss(); t0 = time.perf_counter()
s = readers.convert(Path(sys.argv[1]), Path(sys.argv[2]))
print(json.dumps({"rss_before": before, "peak_rss": peak_rss_bytes(), "seconds": time.perf_counter() - t0, **s}))
"""


def _gz(path: Path, rows: np.ndarray, fmt: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", compresslevel=1) as f:
        for s in range(0, len(rows), 1 << 20):
            np.savetxt(f, rows[s:s + (1 << 20)], fmt=fmt, delimiter=",")


def generate(root: Path, m: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    n = m // 10
    w = rng.pareto(2.5, n) + 1.0  # power-law expected degrees
    p = w / w.sum()
    raw = root / "raw"
    raw.mkdir(parents=True)
    with gzip.open(raw / "edge.csv.gz", "wt", compresslevel=1) as f:
        for s in range(0, m, 1 << 20):
            k = min(1 << 20, m - s)
            np.savetxt(f, np.stack([rng.choice(n, k, p=p), rng.choice(n, k, p=p)], axis=1), fmt="%d", delimiter=",")
    _gz(raw / "num-node-list.csv.gz", np.array([[n]]), "%d")
    _gz(raw / "num-edge-list.csv.gz", np.array([[m]]), "%d")
    _gz(raw / "node-feat.csv.gz", rng.normal(size=(n, 8)).astype(np.float32), "%.6f")
    _gz(raw / "node-label.csv.gz", rng.integers(0, 5, (n, 1)), "%d")
    perm = rng.permutation(n)
    for name, ids in zip(("train", "valid", "test"), np.split(perm, [n // 10, n // 5]), strict=True):
        _gz(root / "split" / "time" / f"{name}.csv.gz", ids[:, None], "%d")


def _du(path: Path) -> int:
    return sum(q.stat().st_size for q in path.rglob("*") if q.is_file())


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], out="results/scalegun-ogb-read")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000], help="edge counts")
    ap.add_argument("--work", type=Path, default=None, help="where the folders are generated (default: temporary)")
    args = ap.parse_args()
    load_start = os.getloadavg()[0]
    work = args.work or Path(tempfile.mkdtemp(prefix="ogb-read-"))
    rows = []
    try:
        for m in args.sizes:
            src, dst = work / f"ogb-m{m}", work / f"conv-m{m}"
            t0 = time.perf_counter()
            if not (src / "raw" / "edge.csv.gz").is_file():
                generate(src, m)
            gen_s = time.perf_counter() - t0
            proc = subprocess.run([sys.executable, "-c", CHILD, str(src), str(dst)], capture_output=True, text=True,
                                  check=True)
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            row = {"edges_in_file": m, "nodes": r["n_nodes"], "undirected_edges": r["n_undirected_edges"],
                   "features": r["n_features"], "raw_folder_bytes_on_disk": _du(src),
                   "edge_csv_gz_bytes": (src / "raw" / "edge.csv.gz").stat().st_size,
                   "converted_folder_bytes": _du(dst), "rss_before_bytes": r["rss_before"],
                   "peak_rss_bytes": r["peak_rss"], "peak_rss_above_start_bytes": r["peak_rss"] - r["rss_before"],
                   "convert_seconds": round(r["seconds"], 2), "generate_seconds": round(gen_s, 2)}
            row["peak_rss_over_raw_on_disk"] = round(row["peak_rss_bytes"] / row["raw_folder_bytes_on_disk"], 3)
            rows.append(row)
            print(json.dumps(row))
            shutil.rmtree(dst, ignore_errors=True)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    out = args.out / f"ogb-read-{time.strftime('%Y-%m-%d', time.gmtime())}.json"
    write_record(out, {"benchmark": "ogb_read", "rows": rows, "python": sys.version.split()[0]},
                 load_start=load_start)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
