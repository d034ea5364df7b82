"""``iclr25 pgw pairwise DIR --n-jobs 1`` against ``--n-jobs 2`` on the README's 12-shape example (data set II,
2 shapes per class), each the whole command in a fresh process, alternating, median of ``--repeats``.

The 0.1.x chunking (always 8 strided chunks on 2 workers) is timed in-process beside the current rule
(workers start only when the estimated remaining work pays for their start-up).

Usage: python benchmarks/bench_pairwise_jobs.py [--repeats 3] [--n-per-class 2] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def old_chunking(spaces, lam, n_jobs):
    """The 0.1.1 path: 4 * n_jobs strided chunks sent to parallel_map whatever the amount of work."""
    from iclr25.pgw.solver import _distance_chunk, pgw
    from iclr25.utils.parallel import parallel_map

    k = len(spaces)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    n_chunks = min(len(pairs), 4 * n_jobs)
    chunks = [pairs[c::n_chunks] for c in range(n_chunks)]
    kw = dict(lam=lam, method="fw-v1", n_init=1, max_iter=1000, tol=1e-9, seed=0)
    return parallel_map(_distance_chunk, [(pgw, kw, c, spaces) for c in chunks], n_jobs=n_jobs)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n-per-class", type=int, default=2)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    os.environ.setdefault("POT_BACKEND_DISABLE_PYTORCH", "1")
    os.environ.setdefault("POT_BACKEND_DISABLE_JAX", "1")
    from iclr25.pgw import datasets, default_lam, mm_space
    from iclr25.utils.io import write_points

    data = datasets.shapes_ii(n_per_class=args.n_per_class, seed=0)
    tmp = Path(tempfile.mkdtemp(prefix="pgw-bench-"))
    folder = tmp / "shapes"
    folder.mkdir()
    for k, X in enumerate(data.points):
        write_points(folder / f"shape{k:03d}.npy", X)
    times: dict[str, list[float]] = {"--n-jobs 1": [], "--n-jobs 2": []}
    for _ in range(args.repeats):
        for flag in times:
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "iclr25.pgw", "pairwise", str(folder), "--out",
                                   str(tmp / "D.npy"), *flag.split()], capture_output=True, text=True, check=True)
            times[flag].append(time.perf_counter() - t0)
            last = proc.stdout.strip()
    spaces = [mm_space(X) for X in data.points]
    lam = default_lam(spaces)
    old = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        old_chunking(spaces, lam, 2)
        old.append(time.perf_counter() - t0)
    k = len(data.points)
    print(f"{k} shapes, {k * (k - 1) // 2} pairs, median of {args.repeats} (whole command, fresh process):")
    for flag, t in times.items():
        print(f"  pairwise {flag}: {statistics.median(t):.2f} s  ({', '.join(f'{x:.2f}' for x in t)})")
    print(f"  last --n-jobs 2 run: {last}")
    print(f"  0.1.1 chunking on 2 workers, matrix only (in-process, pool started each call the first time): "
          f"{statistics.median(old):.2f} s ({', '.join(f'{x:.2f}' for x in old)})")
    print(f"  load average now: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
