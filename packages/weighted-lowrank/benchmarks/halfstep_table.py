"""The half-step timing table: exact (Z built once) against the sketched solver, dense and sparse W.

    python benchmarks/halfstep_table.py --out results/halfstep-table [--ns 4000 8000 16000]
        [--ks 64 128 192 256] [--density 0.05] [--measure dense:4000:64,128 ...] [--threads 1] [--repeats 3]

For every cell (n = d, k, dense W ~ U(0.5, 1.5) or a W with a random ``density`` pattern and U(0.5, 1.5)
weights on it) ONE half-step (all n row regressions against a factor near the truth, as in the middle of a
run) of each solver is timed ``--repeats`` times, the two alternating, and the medians kept, with BLAS on
``--threads`` threads for both. The cells named by ``--measure``
(``kind:n:k,k,...``) are measured; the other cells are PREDICTED: flops of the model
divided by the GFLOP/s each solver reached on the measured compute-bound cells of the same weight kind (k >= 128),
with the median measured step count. Printed: the table (measured and predicted ratio beside the pure flop-model
ratio), the log-log slope in k over the measured compute-bound cells of each n, and where the flop model puts 2x.
"""

from __future__ import annotations

import gc
import json
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from iclr25.utils.bench import benchmark_parser
from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult
from iclr25.weighted_lowrank.costmodel import flop_ratio, half_step_flops, two_x_threshold
from iclr25.weighted_lowrank.experiments import loglog_slope
from iclr25.weighted_lowrank.regression import SolverConfig, solve_exact, solve_sketch
from iclr25.weighted_lowrank.weights import as_weighted_matrix

DEFAULT_MEASURE = ["dense:4000:64,128,192,256", "dense:8000:64,128,192", "sparse:4000:64", "sparse:8000:64,128",
                   "sparse:16000:128"]
COMPUTE_BOUND_K = 128  # cells with k >= this are the compute-bound ones the rates and slopes are fitted on


def _orth(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    return np.linalg.qr(rng.standard_normal((n, k)))[0]


def problem(n: int, k: int, kind: str, density: float, seed: int = 0):
    """``(A, F)``: a planted rank-k ``M = U Σ V^T + N`` (``N`` of standard deviation ``1e-3 max|M*|``, as in
    :func:`~iclr25.weighted_lowrank.planted`) under dense or sparse weights, and the factor
    ``F = QR(V + 1e-3 G)`` (``G`` standard normal), one round away from the truth (as ``benchmarks/scaling.py``
    and the issue's measurements)."""
    rng = np.random.default_rng(seed)
    U, V = _orth(rng, n, k), _orth(rng, n, k)
    sig = np.geomspace(10.0, 1.0, k) * n / np.sqrt(k)  # entries O(1)
    F = np.linalg.qr(V + 1e-3 * rng.standard_normal(V.shape))[0]
    if kind == "dense":
        M = (U * sig) @ V.T
        M += 1e-3 * np.max(np.abs(M)) * rng.standard_normal(M.shape)
        W = rng.uniform(0.5, 1.5, (n, n))
        A = as_weighted_matrix(M, W)
        del M, W
        return A, F
    rows, cols = [], []
    for i in range(n):  # a Bernoulli(density) pattern, row by row (no n x n temporaries)
        c = np.flatnonzero(rng.random(n) < density)
        rows.append(np.full(c.size, i))
        cols.append(c)
    r, c = np.concatenate(rows), np.concatenate(cols)
    vals = np.empty(r.size)
    step = max(1, (1 << 24) // k)
    Us = U * sig
    for a in range(0, r.size, step):
        vals[a:a + step] = np.einsum("ij,ij->i", Us[r[a:a + step]], V[c[a:a + step]])
    vals += 1e-3 * np.max(np.abs(vals)) * rng.standard_normal(r.size)
    W = sp.csr_array((rng.uniform(0.5, 1.5, r.size), (r, c)), shape=(n, n))
    M = sp.csr_array((vals, (r, c)), shape=(n, n))
    return as_weighted_matrix(M, W), F


def time_cell(n: int, k: int, kind: str, density: float, threads: int, repeats: int = 3) -> dict:
    """One half-step of each solver on one problem, ``repeats`` times each, the two sides alternating (sketch
    first on even repeats, exact first on odd ones); the times are medians (issue 65: 0.5 timed each once, the
    sketch always first)."""
    A, F = problem(n, k, kind, density)
    nnz = A.w.nnz if A.sparse else n * n
    out: dict = {"n": n, "k": k, "W": kind, "nnz": int(nnz), "status": "measured", "repeats": repeats}
    times: dict[str, list[float]] = {"sketch": [], "exact": []}
    with threadpool_limits(threads, user_api="blas"):
        for i in range(repeats):
            for side in (("sketch", "exact") if i % 2 == 0 else ("exact", "sketch")):
                t0 = time.perf_counter()
                if side == "sketch":
                    res = solve_sketch(A, F, SolverConfig("sketch", sketch_size=4 * k), np.random.default_rng(1))
                else:
                    ex = solve_exact(A, F)
                times[side].append(time.perf_counter() - t0)
    out["sketch_s"] = float(np.median(times["sketch"]))
    out["exact_s"] = float(np.median(times["exact"]))
    out["sketch_runs_s"], out["exact_runs_s"] = times["sketch"], times["exact"]
    out["steps"] = int(res.steps)
    out["max_abs_diff"] = float(np.max(np.abs(res.X - ex.X)) / max(np.max(np.abs(ex.X)), 1e-300))
    del A, res, ex
    gc.collect()
    return out


def load_cells(files: list[Path], density: float) -> dict:
    """Measured cells keyed by ``(W, n, k)`` from table runs (a JSON list of cells) and from ``cells.py``
    (JSON lines, one solver each: only ``s = 4k``, ``tol = 1e-6`` sketch lines and sparse lines of ``density``
    enter the table). Later files override earlier ones, solver by solver."""
    done: dict = {}
    for f in files:
        if f.suffix == ".jsonl":
            for line in f.read_text().splitlines():
                r = json.loads(line)
                if r["W"] != "dense" and abs(r.get("density", density) - density) > 1e-12:
                    continue
                if r["solver"] == "sketch" and (r.get("s") != 4 * r["k"] or r.get("tol") != 1e-6):
                    continue
                c = done.setdefault((r["W"], r["n"], r["k"]), {"n": r["n"], "k": r["k"], "W": r["W"],
                                                               "nnz": r["nnz"], "status": "measured"})
                if r["solver"] == "exact":
                    c["exact_s"] = r["seconds"]
                else:
                    c["sketch_s"], c["steps"] = r["seconds"], r["steps"]
                    if "rel_error" in r:
                        c["rel_error"] = r["rel_error"]
        else:
            for c in json.loads(f.read_text()):
                done[(c["W"], c["n"], c["k"])] = dict(c)
    # a cell with only one solver measured is not a measured ratio
    return {key: c for key, c in done.items() if "exact_s" in c and "sketch_s" in c}


def main() -> None:
    ap = benchmark_parser(__doc__, out="results/halfstep-table", raw=True)
    ap.add_argument("--ns", type=int, nargs="+", default=[4000, 8000, 16000])
    ap.add_argument("--ks", type=int, nargs="+", default=[64, 128, 192, 256])
    ap.add_argument("--density", type=float, default=0.05)
    ap.add_argument("--measure", nargs="+", default=DEFAULT_MEASURE,
                    help="cells to measure, kind:n:k1,k2,... (default: %(default)s)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3, help="alternating runs per side and cell, medians (default 3)")
    ap.add_argument("--kinds", nargs="+", default=["dense", "sparse"])
    ap.add_argument("--from-cells", type=Path, nargs="+", default=None,
                    help="rebuild the table from the cells-partial.json of earlier runs and/or the cells.jsonl "
                         "of benchmarks/cells.py (later files win; measures nothing)")
    args = ap.parse_args()
    done = load_cells(args.from_cells or [], args.density)
    run = RunResult.start("iclr25-weighted-lowrank", "bench-halfstep-table", seed=0, config=vars(args) | {
        "out": str(args.out)})
    measure = set()
    for item in args.measure:
        kind, n, ks = item.split(":")
        measure |= {(kind, int(n), int(k)) for k in ks.split(",")}
    cells = []
    for kind in args.kinds:
        for n in args.ns:
            for k in args.ks:
                nnz = n * n if kind == "dense" else int(round(args.density * n * n))
                if (kind, n, k) in done:
                    cell = done[(kind, n, k)]
                elif (kind, n, k) in measure and not args.from_cells:
                    t0 = time.perf_counter()
                    cell = time_cell(n, k, kind, args.density, args.threads, args.repeats)
                    print(f"measured {kind} n={n} k={k}: exact {cell['exact_s']:.2f} s, sketch {cell['sketch_s']:.2f} s, "
                          f"steps {cell['steps']} (cell {time.perf_counter() - t0:.1f} s)", flush=True)
                    with atomic_write(args.out / "cells-partial.json") as fh:  # survives a killed run
                        json.dump([c for c in cells if c["status"] == "measured"] + [cell], fh, indent=1)
                else:
                    cell = {"n": n, "k": k, "W": kind, "nnz": nnz, "status": "predicted"}
                cells.append(cell)
    # rates (GFLOP/s) from the measured compute-bound cells of each kind; for the sketched solver only from
    # cells it really sketched (sparse rows with at most s weights are solved exactly: "fallback" cells)
    def fallback(c: dict) -> bool:
        return c["W"] != "dense" and c["nnz"] <= c["n"] * 4 * c["k"]

    rates: dict = {}
    for kind in args.kinds:
        meas = [c for c in cells if c["W"] == kind and c["status"] == "measured"]
        if not meas:
            continue
        sketched = [c for c in meas if not fallback(c)]
        fit_e = [c for c in meas if c["k"] >= COMPUTE_BOUND_K] or meas
        fit_s = [c for c in sketched if c["k"] >= COMPUTE_BOUND_K] or sketched
        r = {"exact_gflops": float(np.median([half_step_flops(c["n"], c["n"], c["k"], nnz=c["nnz"], solver="exact")
                                              / c["exact_s"] for c in fit_e])) / 1e9}
        if fit_s:
            r["steps"] = int(np.median([c["steps"] for c in sketched]))
            r["sketch_gflops"] = float(np.median([half_step_flops(c["n"], c["n"], c["k"], nnz=c["nnz"], solver="sketch",
                                                                  steps=c["steps"], sketch_size=4 * c["k"])
                                                  / c["sketch_s"]
                                                  for c in fit_s])) / 1e9
        fb = [c["exact_s"] / c["sketch_s"] for c in meas if fallback(c)]
        if fb:
            r["fallback_speedup"] = float(np.median(fb))
        rates[kind] = r
    lines = ["| n = d | k | W | exact s | sketch s | speed-up | flop model | steps | |",
             "|---|---|---|---|---|---|---|---|---|"]
    for c in cells:
        r = rates.get(c["W"], {})
        steps = c.get("steps", 0 if fallback(c) else r.get("steps", 14))
        c["flop_ratio"] = flop_ratio(c["n"], c["n"], c["k"], nnz=c["nnz"], steps=steps, sketch_size=4 * c["k"])
        if c["status"] == "predicted" and "exact_gflops" in r:
            c["exact_s"] = half_step_flops(c["n"], c["n"], c["k"], nnz=c["nnz"], solver="exact") / (
                r["exact_gflops"] * 1e9)
            if fallback(c) and "fallback_speedup" in r:
                c["sketch_s"] = c["exact_s"] / r["fallback_speedup"]
            elif not fallback(c) and "sketch_gflops" in r:
                c["sketch_s"] = half_step_flops(c["n"], c["n"], c["k"], nnz=c["nnz"], solver="sketch",
                                                steps=steps, sketch_size=4 * c["k"]) / (r["sketch_gflops"] * 1e9)
            else:
                del c["exact_s"]
            c["steps"] = steps
        if "exact_s" not in c or "sketch_s" not in c:
            continue
        c["speedup"] = c["exact_s"] / c["sketch_s"]
        mark = "" if c["status"] == "measured" else "*"
        lines.append(f"| {c['n']} | {c['k']} | {c['W']} | {c['exact_s']:.2f}{mark} | {c['sketch_s']:.2f}{mark} | "
                     f"{c['speedup']:.2f}×{mark} | {c['flop_ratio']:.2f}× | {c['steps']} | {c['status']} |")
        if c["status"] == "measured":
            run.add(f"{c['W']} n={c['n']} k={c['k']}: seconds per half-step, sketch", c["sketch_s"], peer=c["exact_s"],
                    peer_name="exact (Z once)", unit="s", higher_is_better=False, timing=True)
    lines.append("\n`*` predicted: flop model / GFLOP/s fitted on the measured cells with k >= "
                 f"{COMPUTE_BOUND_K} of the same W (sketch: on the cells it sketched), with their median step count; "
                 "sparse cells with at most s = 4k weights a row are solved exactly by both solvers, their predicted "
                 "speed-up is the measured one of such cells "
                 f"({json.dumps({k: {a: round(b, 2) for a, b in v.items()} for k, v in rates.items()})}).")
    for kind in args.kinds:
        for n in args.ns:
            meas = [c for c in cells if c["W"] == kind and c["n"] == n and c["status"] == "measured"
                    and c["k"] >= COMPUTE_BOUND_K]
            if len(meas) >= 2:
                ks = [c["k"] for c in meas]
                se = loglog_slope(ks, [c["exact_s"] for c in meas])
                ss = loglog_slope(ks, [c["sketch_s"] for c in meas])
                lines.append(f"log-log slope in k ({kind}, n={n}, measured k in {ks}): exact {se:.2f}, sketch {ss:.2f}, "
                             f"difference {se - ss:.2f}")
                run.add(f"{kind} n={n}: log-log slope in k, sketch", ss, peer=se, peer_name="exact",
                        higher_is_better=False, timing=True)
    st = rates.get("dense", {}).get("steps", 14)
    st_sparse = rates.get("sparse", {}).get("steps", st)
    def where(n2: int | None) -> str:
        return "never (the ratio's limit in n is below 2x)" if n2 is None else f"n = {n2}"

    for k in args.ks:
        lines.append(f"flop model, {st} steps, s = 4k, k = {k}: 2x from {where(two_x_threshold(k, steps=st, sketch_size=4 * k))} (dense), "
                     f"from {where(two_x_threshold(k, density=args.density, steps=st_sparse, sketch_size=4 * k))} (density {args.density:g}, "
                     f"{st_sparse} steps)")
    table = "\n".join(lines)
    print(table)
    run.notes = table
    run.finish().save(args.out / "results.json")
    with atomic_write(args.out / "table.md") as fh:
        fh.write(table + "\n")
    with atomic_write(args.out / "cells.json") as fh:
        json.dump({"cells": cells, "rates": rates}, fh, indent=1)


if __name__ == "__main__":
    main()
