"""Where the time of ``pgw_pairwise(method="entropic")`` goes: padding and lock-step against bucketing and
refilled slots, on the same data set II shapes, each configuration in a fresh process (one compilation per
size group included, one thread: BLAS and XLA).

    python benchmarks/profile_entropic_pairwise.py --shapes 12 [--old-src DIR] [--out DIR]

Configurations (``entropic_pgw_pairs`` options):
- ``one-bucket``: every space padded to the largest size (multiple of 128 here: 128 points), slots refilled;
- ``buckets``: padded only to a multiple of 16 (the default), slots refilled;
- ``buckets, batch 8``: the same with 8 slots per group;
- ``old`` (with ``--old-src``, a ``src`` folder of an earlier version, e.g. ``git archive 40fe9e2``): that
  version's ``pgw_pairwise`` (0.2.0 before refill: one padded size, vmapped batches in lock-step).
Each row also reports the share of slot-ticks that did a pair's work (``slot_use``) and the share of padded
cells that are real (``pad_use``); the distances are compared with those of the first configuration.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

CONFIGS = {"one-bucket": {"pad_multiple": 128, "batch_size": 64},
           "buckets": {"pad_multiple": 16, "batch_size": 64},
           "buckets, batch 8": {"pad_multiple": 16, "batch_size": 8}}


def child(name: str, k: int) -> dict:
    import numpy as np

    from iclr25.pgw import datasets, default_lam, mm_space, pgw_pairwise

    data = datasets.shapes_ii(math.ceil(k / 6), seed=0)
    spaces = [mm_space(X, mass=1 / 74) for X in data.points[:k]]
    lam = default_lam(spaces)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    stats: dict = {}
    t0 = time.perf_counter()
    if name == "old":
        D = pgw_pairwise(spaces, lam, method="entropic", batch_size=64, stats=stats)
        vals = D[tuple(np.array(pairs).T)]
    else:
        from iclr25.pgw.entropic import entropic_pgw_pairs

        vals = entropic_pgw_pairs(spaces, pairs, lam, stats=stats, **CONFIGS[name])
    secs = time.perf_counter() - t0
    return {"config": name, "shapes": k, "pairs": len(pairs), "seconds": secs, "stats": stats,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "values": list(map(float, vals))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", type=int, default=12)
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS) + ["old"])
    ap.add_argument("--old-src", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.shapes)))
        return 0
    import numpy as np

    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               XLA_FLAGS="--xla_cpu_multi_thread_eigen=false", POT_BACKEND_DISABLE_PYTORCH="1",
               POT_BACKEND_DISABLE_JAX="1")
    configs = list(args.configs) + (["old"] if args.old_src is not None and "old" not in args.configs else [])
    load0 = os.getloadavg()[0]
    rows = []
    for name in configs:
        e = dict(env, PYTHONPATH=str(args.old_src)) if name == "old" else env
        proc = subprocess.run([sys.executable, __file__, "--child", name, "--shapes", str(args.shapes)], env=e,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            return 1
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        ref = np.array(rows[0]["values"]) if rows else np.array(r["values"])
        rel = np.abs(np.array(r["values"]) - ref) / ref
        r["rel_diff_vs_first"] = [float(np.median(rel)), float(rel.max())]
        s = r["stats"]
        print(f"{name:18s} K={r['shapes']} pairs={r['pairs']}  {r['seconds']:7.2f} s  "
              f"{1e3 * r['seconds'] / r['pairs']:7.1f} ms/pair  slot_use {s.get('slot_use', float('nan')):.2f}  "
              f"pad_use {s.get('pad_use', float('nan')):.2f}  groups {s.get('batches')}  compile "
              f"{s.get('compile_s', float('nan')):.1f} s  peak RSS "
              f"{r['peak_rss_mb']:.0f} MB  rel. diff vs first: median {np.median(rel):.2g}, "
              f"max {rel.max():.2g}", flush=True)
        rows.append(r)
    print(f"load {load0:.2f} -> {os.getloadavg()[0]:.2f}")
    if args.out is not None:
        from iclr25.utils.bench import write_record

        write_record(args.out / "profile_entropic.json", {"rows": rows}, load_start=load0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
