"""Measure single half-step cells, one solver or both, and append them to a JSON-lines file.

    python benchmarks/cells.py --out DIR --cell dense:16000:128 [--cell ...] [--solvers exact sketch]
        [--sizes 4] [--tols 1e-6] [--density 0.05] [--threads 1]

The problems are those of ``halfstep_table.py`` (same seeds, so a cell measured in two jobs is the same
problem). Each measured (cell, solver, s, tol) is one line of ``DIR/cells.jsonl``: seconds, CG steps and, for
the sketched solver, ``‖X − X_exact‖_F / ‖X_exact‖_F`` against the exact solution of the same job or of an
earlier job (``DIR/exact-<kind>-<n>-<k>-<density>.npy``). Long sweeps are split into several such jobs;
``halfstep_table.py --from-cells`` merges the lines into the table.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
from halfstep_table import problem  # noqa: E402

from iclr25.weighted_lowrank.regression import SolverConfig, solve_exact, solve_sketch  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--cell", action="append", default=None,
                    help="kind:n:k (kind dense or sparse); repeatable (default: dense:2000:64, a few seconds)")
    ap.add_argument("--solvers", nargs="+", default=["exact", "sketch"], choices=["exact", "sketch"])
    ap.add_argument("--sizes", type=float, nargs="+", default=[4.0], help="sketch sizes s = c*k (c values)")
    ap.add_argument("--tols", type=float, nargs="+", default=[1e-6])
    ap.add_argument("--density", type=float, default=0.05)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    args.cell = args.cell or ["dense:2000:64"]
    args.out.mkdir(parents=True, exist_ok=True)
    for spec in args.cell:
        kind, n, k = spec.split(":")
        n, k = int(n), int(k)
        t0 = time.perf_counter()
        A, F = problem(n, k, kind, args.density)
        nnz = int(A.w.nnz) if A.sparse else n * n
        base = {"n": n, "k": k, "W": kind, "density": args.density if kind != "dense" else 1.0, "nnz": nnz,
                "setup_s": time.perf_counter() - t0, "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())}
        ref_file = args.out / f"exact-{kind}-{n}-{k}-{base['density']:g}.npy"
        ref = None
        with threadpool_limits(args.threads, user_api="blas"):
            if "exact" in args.solvers:
                t0 = time.perf_counter()
                ref = solve_exact(A, F).X
                rec = base | {"solver": "exact", "seconds": time.perf_counter() - t0, "steps": 0}
                np.save(ref_file, ref)
                _emit(args.out, rec)
            elif ref_file.exists():
                ref = np.load(ref_file)
            if "sketch" in args.solvers:
                for c in args.sizes:
                    for tol in args.tols:
                        s = int(round(c * k))
                        t0 = time.perf_counter()
                        res = solve_sketch(A, F, SolverConfig("sketch", sketch_size=s, tol=tol),
                                           np.random.default_rng(1))
                        rec = base | {"solver": "sketch", "s": s, "s_over_k": c, "tol": tol,
                                      "seconds": time.perf_counter() - t0, "steps": int(res.steps),
                                      "rel_gradient": float(res.rel_gradient),
                                      "sketched_rows": int(np.sum(A.row_nnz(slice(0, n)) > s)) if A.sparse else n}
                        if ref is not None:
                            rec["rel_error"] = float(np.linalg.norm(res.X - ref) / np.linalg.norm(ref))
                        _emit(args.out, rec)
                        del res
                        gc.collect()
        del A, F, ref
        gc.collect()


def _emit(out: Path, rec: dict) -> None:
    print(json.dumps(rec), flush=True)
    with open(out / "cells.jsonl", "a") as fh:
        fh.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
