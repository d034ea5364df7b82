"""Where the mapped path's memory goes, per phase, in bytes per edge: peak RSS growth (``VmHWM`` reset at the
start of each phase, minus the resident size after loading the maps) of building the unlearner, ``fit``, one
5,000-edge request, and the retraining baseline's fit and one request (after the ScaleGUN unlearner is freed),
plus the unlearner's own arrays (``nbytes``). Run it on the code before and after a change (``--label``) with
the same graph folder (``citation_files``; mapped CSR) to measure a cut.

    python benchmarks/memory_per_edge.py GRAPH_DIR --label after --out benchmarks/memory-after.json
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from pathlib import Path

import numpy as np

import iclr25.scalegun as sg_pkg
from iclr25.scalegun import CertifiedUnlearner, load_graph_files
from iclr25.utils.io import atomic_write
from iclr25.utils.memory import current_rss_bytes, peak_rss_bytes, reset_peak_rss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("graph", type=Path)
    ap.add_argument("--label", required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    g = load_graph_files(args.graph, mmap=True)
    m = g.adj.n_edges
    rng = np.random.default_rng(0)
    edges = g.adj.edges()[rng.choice(m, 5001, replace=False)]
    base = current_rss_bytes()
    out = {"label": args.label, "version": sg_pkg.__version__, "graph": str(args.graph.name), "edges": m,
           "nodes": g.adj.n_nodes, "features": int(g.X.shape[1]), "rss_base_bytes": base, "phases": {}}

    def phase(name, fn):
        reset_peak_rss()
        t = time.process_time()
        r = fn()
        out["phases"][name] = {"peak_growth_bytes_per_edge": (peak_rss_bytes() - base) / m,
                               "after_growth_bytes_per_edge": (current_rss_bytes() - base) / m,
                               "cpu_s": time.process_time() - t}
        print(name, out["phases"][name], flush=True)
        return r

    kw = dict(epsilon=1.0, delta=1e-4, sigma=0.1, seed=0, device="cpu")
    u = phase("construct", lambda: CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, **kw))
    phase("fit", u.fit)
    unlearn = u.unlearn_edges
    phase("batch-5000", lambda: unlearn(edges[:5000]))
    out["state_bytes_per_edge"] = u.nbytes() / m
    u = unlearn = None
    gc.collect()
    rt = phase("retrain-fit", lambda: CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, mode="retrain", **kw).fit())
    phase("retrain-request", lambda: rt.unlearn_edges(edges[5000:]))
    out["peak_growth_bytes_per_edge"] = max(p["peak_growth_bytes_per_edge"] for p in out["phases"].values())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out) as f:
        f.write(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
