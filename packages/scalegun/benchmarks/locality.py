"""Why a 5,000-edge batch is not 20x faster than retraining here, and at what size it would be.

Part 1, measured (``--graphs``): on each graph folder (memory-mapped), for ``--batch`` random edges (5,000,
uniform over edges like the benchmark's requests; ``--seeds`` draws), the nodes a lazy push touches per
level under the default ``r_max`` (which pushes every nonzero residue of a two-hop ball):
level 0 pushes the endpoints ``S0``, level 1 their closed neighbourhood ``N1``, and level 2 receives on
``N2``; ``W0`` and ``W1`` are the stored entries those pushes read (the sum of their degrees), against
``nnz`` for one level of a full propagation. A level whose pushed rows exceed 1/8 of the nodes runs as one
full sparse matmul (``propagation._DENSE_FRACTION``).

Part 2, model: the same quantities for a Chung-Lu graph from its degree sequence alone (endpoints drawn in
proportion to degree, each node adjacent to a set of degree mass ``M`` with probability
``1 - exp(-d M / 2m)``), checked against part 1, then evaluated for the generator's family (exponent 2.5,
average degree as measured) up to 10^9 nodes on a rank grid (no graph is built).

Part 3, prediction: update time per batch = ``(a E + b R) * reprop``, with ``E`` the stored entries the
pushes read per entry of a re-propagation (a dense level reads all of them) and ``R`` the rows written at
levels 1 and 2 per node (``a, b`` fitted on the ladder's 1-, 500- and 5,000-edge requests), plus the Newton
step, against retraining, with ``reprop``, ``retrain`` and ``newton`` extrapolated by the power
laws fitted to the ladder (``--ladder`` JSON files of ``benchmarks/scale.py``). Also with the Newton step
scaled to a training fraction of ``--paper-train-frac`` (papers100M: 1.2M of 111M nodes), and for a
lighter tail (degree exponent 3 instead of 2.5).

    python benchmarks/locality.py --graphs ~/.cache/iclr25/scalegun-graphs/powerlaw-m{1000000,3000000,10000000} \
        --ladder benchmarks/scale-2026-12-01.json --out results/scalegun-locality
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from scipy.optimize import nnls

from iclr25.scalegun import load_graph_files
from iclr25.utils.io import atomic_write

DENSE = 0.125


def _closed_neighbourhood(indptr: np.ndarray, indices: np.ndarray, rows: np.ndarray) -> np.ndarray:
    lo, hi = indptr[rows], indptr[rows + 1]
    take = np.repeat(lo - np.cumsum(np.r_[0, (hi - lo)[:-1]]), hi - lo) + np.arange(int((hi - lo).sum()))
    return np.union1d(rows, np.asarray(indices[take]))  # the self loops are stored: closed neighbourhood


def measure(folder: str, batch: int, seed: int) -> dict:
    g = load_graph_files(folder, mmap=True)
    A = g.adj
    indptr = np.asarray(A.indptr, dtype=np.int64)
    n, nnz = A.n_nodes, A.nnz
    deg = np.diff(indptr)  # with the self loop, as the push uses it
    rng = np.random.default_rng(seed)
    picked: set = set()
    src, dst = [], []
    while len(picked) < batch:  # uniform over undirected edges: uniform stored non-loop entries, deduplicated
        pos = rng.integers(0, nnz, 4 * batch)
        rows = np.searchsorted(indptr, pos, side="right") - 1
        cols = np.asarray(A.indices[pos], dtype=np.int64)
        for u, v in zip(np.minimum(rows, cols)[rows != cols].tolist(), np.maximum(rows, cols)[rows != cols].tolist(),
                        strict=True):
            if (u, v) not in picked and len(picked) < batch:
                picked.add((u, v))
                src.append(u)
                dst.append(v)
    S0 = np.unique(np.r_[src, dst])
    N1 = _closed_neighbourhood(indptr, A.indices, S0)
    N2 = _closed_neighbourhood(indptr, A.indices, N1)
    return dict(graph=folder, seed=seed, nodes=n, edges=A.n_edges, nnz=nnz, batch=batch, f0=len(S0) / n,
                f1=len(N1) / n, f2=len(N2) / n, w0=float(deg[S0].sum()) / nnz, w1=float(deg[N1].sum()) / nnz,
                dense1=bool(len(N1) > DENSE * n), deg_mean=float(deg.mean() - 1))


def model(d: np.ndarray, count: np.ndarray, batch: int) -> dict:
    """Expected fractions for degrees ``d`` (self loop excluded) with multiplicities ``count``."""
    n, mass = float(count.sum()), float((count * d).sum())  # mass = 2m
    p0 = 1.0 - np.exp(-2.0 * batch * d / mass)
    m0 = float((count * d * p0).sum())
    p1 = 1.0 - (1.0 - p0) * np.exp(-d * m0 / mass)
    m1 = float((count * d * p1).sum())
    p2 = 1.0 - (1.0 - p1) * np.exp(-d * m1 / mass)
    nnz = mass + n
    return dict(f0=float((count * p0).sum()) / n, f1=float((count * p1).sum()) / n, f2=float((count * p2).sum()) / n,
                w0=float((count * (d + 1) * p0).sum()) / nnz, w1=float((count * (d + 1) * p1).sum()) / nnz)


def family_degrees(n: float, mean_degree: float, exponent: float = 2.5, bins: int = 4000) -> tuple:
    """Chung-Lu expected distinct degrees of the generator's family on a geometric rank grid: weight
    ``w_r = r^(-1/(exponent-1))``, ``2m = n * mean_degree`` endpoint draws; distinct neighbours
    ``sum_j 1 - exp(-2m p_r p_j)`` (duplicates merged, as the generator does)."""
    edges = np.unique(np.round(np.geomspace(1, n + 1, bins)))
    r = 0.5 * (edges[:-1] + edges[1:])
    count = np.diff(edges)
    w = r ** (-1.0 / (exponent - 1.0))
    p = w / float((count * w).sum())
    two_m = n * mean_degree
    draws = two_m * p
    # distinct neighbours: pairs (r, j) with expected multiplicity 2m p_r p_j (each direction counted once)
    d = np.concatenate([(1.0 - np.exp(-two_m * np.outer(p[i:i + 256], p))) @ count for i in range(0, len(p), 256)])
    scale = mean_degree / (float((count * d).sum()) / n)  # match the measured mean degree after merging
    return d * scale, count, float(draws.max())


def fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    b, a = np.polyfit(np.log(x), np.log(y), 1)
    return float(a), float(b)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="*", default=[])
    ap.add_argument("--measured", type=Path, default=None,
                    help="JSON lines of measured rows from an earlier run (instead of measuring --graphs again)")
    ap.add_argument("--bins", type=int, default=1500, help="rank-grid bins of the family model")
    ap.add_argument("--ladder", nargs="+", type=Path, required=True, help="scale.py cells.json files")
    ap.add_argument("--batch", type=int, default=5000)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--paper-train-frac", type=float, default=1.2e6 / 1.11e8)
    ap.add_argument("--out", type=Path, default=Path("results/scalegun-locality"))
    args = ap.parse_args()

    rows = [json.loads(line) for line in args.measured.read_text().splitlines()] if args.measured else []
    for folder in args.graphs:
        ms = [measure(folder, args.batch, s) for s in range(args.seeds)]
        row = {k: (float(np.mean([m[k] for m in ms])) if isinstance(ms[0][k], float) else ms[0][k]) for k in ms[0]}
        g = load_graph_files(folder, mmap=True)
        deg = np.diff(np.asarray(g.adj.indptr, dtype=np.int64)) - 1
        vals, cnt = np.unique(deg, return_counts=True)
        row["model_measured_degrees"] = model(vals.astype(float), cnt.astype(float), args.batch)
        d, c, _ = family_degrees(row["nodes"], row["deg_mean"], bins=args.bins)
        row["model_family"] = model(d, c, args.batch)
        rows.append(row)
        print(json.dumps(row))

    cells = []
    for p in args.ladder:
        if not p.is_file():
            print(f"{p}: missing, left out of the ladder")
            continue
        cells += json.loads(p.read_text())["cells"]
    cells = sorted({c["edges"]: c for c in cells}.values(), key=lambda c: c["edges"])
    n = np.array([c["nodes"] for c in cells], float)
    laws = {k: fit(n, np.array([f(c) for c in cells])) for k, f in {
        "reprop": lambda c: c["repropagation_s"], "retrain": lambda c: c["retrain_s"],
        "newton_batch": lambda c: c["batches"]["5000"]["newton_s"]}.items()}
    # calibration: update time / one re-propagation = a * E + b * R, with E the stored entries the pushes read
    # (a dense level reads nnz) per re-propagated entry (2 levels x nnz), R the rows written at levels 1 and 2
    # per node; a, b >= 0 by relative least squares over the ladder's 500- and 5,000-edge requests (a single
    # edge's work is heavy-tailed, a hub endpoint costs far more than the median request, so the expectation
    # does not describe the measured median; a batch averages over its endpoints)
    mean_deg = float(np.mean([r["deg_mean"] for r in rows]))

    def features(m: dict) -> tuple[float, float]:
        e = sum(0.5 if f > DENSE else w / 2 for f, w in ((m["f0"], m["w0"]), (m["f1"], m["w1"])))
        return e, m["f1"] + m["f2"]

    X, y = [], []
    for c in cells:
        d, cnt, _ = family_degrees(c["nodes"], mean_deg, bins=args.bins)
        for b in ("500", "5000"):
            if b in c["batches"]:
                X.append(features(model(d, cnt, int(b))))
                y.append(c["batches"][b]["update_s"] / c["repropagation_s"])
    coef, _ = nnls(np.array(X) / np.array(y)[:, None], np.ones(len(y)))
    resid = (np.array(X) @ coef / np.array(y)).tolist()

    def predict(nodes: float, train_scale: float = 1.0, exponent: float = 2.5) -> dict:
        d, cnt, _ = family_degrees(nodes, mean_deg, exponent, bins=args.bins)
        m = model(d, cnt, args.batch)
        rp = np.exp(laws["reprop"][0]) * nodes ** laws["reprop"][1]
        rt = np.exp(laws["retrain"][0]) * nodes ** laws["retrain"][1]
        nt = train_scale * np.exp(laws["newton_batch"][0]) * nodes ** laws["newton_batch"][1]
        up = float(np.dot(coef, features(m))) * rp
        return dict(nodes=nodes, **m, update_s=up, newton_s=nt, retrain_s=rt, speedup=rt / (up + nt),
                    speedup_no_newton=rt / up)

    train_scale = args.paper_train_frac / 0.1
    ladder = [predict(float(v)) for v in np.geomspace(1e5, 1e9, 17)]
    ladder_paper = [predict(float(v), train_scale) for v in np.geomspace(1e5, 1e9, 17)]
    ladder_exp3 = [predict(float(v), train_scale, 3.0) for v in np.geomspace(1e5, 1e9, 17)]
    first = next((p["nodes"] for p in ladder if p["speedup"] >= 20), None)
    first_paper = next((p["nodes"] for p in ladder_paper if p["speedup"] >= 20), None)
    first_exp3 = next((p["nodes"] for p in ladder_exp3 if p["speedup"] >= 20), None)
    summary = dict(laws=laws, cost_entries=float(coef[0]), cost_rows=float(coef[1]), calibration_ratio=resid,
                   mean_degree=mean_deg, first_nodes_20x_exponent3_paper_train=first_exp3,
                   first_nodes_20x=first, first_nodes_20x_paper_train=first_paper, train_scale=train_scale,
                   newton_cap_10M=cells[-1]["retrain_s"] / cells[-1]["batches"]["5000"]["newton_s"])
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out / "locality.json") as f:
        f.write(json.dumps(dict(measured=rows, predicted=ladder, predicted_paper_train=ladder_paper,
                                predicted_exponent3_paper_train=ladder_exp3,
                                summary=summary), indent=1) + "\n")
    lines = ["| edges | nodes | endpoints / n | N1 / n | N2 / n | W0 / nnz | W1 / nnz | level 1 dense | "
             "model N1 / n (degrees) | model N2 / n (degrees) | model N1 / n (family) | model N2 / n (family) |",
             "|" + "---|" * 12]
    for r in rows:
        a, b = r["model_measured_degrees"], r["model_family"]
        lines.append(f"| {r['edges']:,} | {r['nodes']:,} | {r['f0']:.4f} | {r['f1']:.3f} | {r['f2']:.3f} | "
                     f"{r['w0']:.3f} | {r['w1']:.3f} | {r['dense1']} | {a['f1']:.3f} | {a['f2']:.3f} | "
                     f"{b['f1']:.3f} | {b['f2']:.3f} |")
    lines += ["", "| nodes | N1 / n | N2 / n | W1 / nnz | update s | Newton s | retrain s | speed-up | "
              "without Newton | speed-up, paper's train fraction | N2 / n, exponent 3 | speed-up, exponent 3, "
              "paper's train fraction |", "|" + "---|" * 12]
    for p, q, r in zip(ladder, ladder_paper, ladder_exp3, strict=True):
        lines.append(f"| {p['nodes']:.2e} | {p['f1']:.3f} | {p['f2']:.3f} | {p['w1']:.3f} | {p['update_s']:.3g} | "
                     f"{p['newton_s']:.3g} | {p['retrain_s']:.3g} | {p['speedup']:.1f}x | "
                     f"{p['speedup_no_newton']:.1f}x | {q['speedup']:.1f}x | {r['f2']:.3f} | {r['speedup']:.1f}x |")
    text = "\n".join(lines) + "\n"
    with atomic_write(args.out / "table.md") as f:
        f.write(text)
    print(text)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
