"""The paper's speed headline measured: one half-step's CPU time against ``k`` over a ladder of row lengths ``n``.

For every ``n`` of the ladder, ``rows`` regressions of length ``n`` (dense ``U(0.5, 1.5)`` weights, so
``‖W‖_0 = rows · n`` is fixed while ``k`` varies) are solved by the exact (LLR16) and the sketched solver at each
``k``, ``repeats`` times each with the two sides alternating (sketch first on even repeats), on one BLAS thread;
the medians of the CPU times are kept. Per ``n``: the log-log slope of time against ``k`` of each solver (the
exponent: 2 for ``‖W‖_0 k^2``, 1 for ``‖W‖_0 k``), and per cell the achieved GFLOP/s of each half-step (the flop
model of :mod:`~iclr25.weighted_lowrank.costmodel`, with the measured refinement steps) against the float64 GEMM
peak measured in the same run (:func:`gemm_peak_gflops`). The crossover is the smallest ``n`` of the ladder from
which the sketch is faster at the largest ``k`` (None when it never is).

References: Song, Ye, Yin, Zhang (ICLR 2025), abstract and Theorem 1.2 (``‖W‖_0 k`` per half-step against
LLR16's ``‖W‖_0 k^2``).
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from .costmodel import DEFAULT_SKETCH_FACTOR, half_step_flops

__all__ = ["gemm_peak_gflops", "cost_ladder", "blas_kernel", "LADDER_ROWS", "LADDER_NS", "LADDER_KS"]

#: The ladder of the repro-rung claims: 256 regressions of each length n (‖W‖_0 = 256 n) at k = 32, 64, 128.
LADDER_ROWS, LADDER_NS, LADDER_KS = 256, (2000, 4000, 8000, 16000), (32, 64, 128)


def gemm_peak_gflops(size: int = 1500, repeats: int = 3) -> float:
    """float64 GEMM rate on one BLAS thread (median of ``repeats`` ``size``³ products): the roofline's peak."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((size, size)), rng.standard_normal((size, size))
    times = []
    with threadpool_limits(1, user_api="blas"):
        a @ b  # warm-up
        for _ in range(repeats):
            t0 = time.perf_counter()
            a @ b
            times.append(time.perf_counter() - t0)
    return 2.0 * size**3 / float(np.median(times)) / 1e9


def blas_kernel() -> str:
    """The BLAS library and its kernel (e.g. ``openblas 0.3.29 SkylakeX``)."""
    for info in threadpool_info():
        if info.get("user_api") == "blas":
            return f"{info.get('internal_api')} {info.get('version')} {info.get('architecture', '')}".strip()
    return "unknown"


def _slope(ks: Any, ts: Any) -> float:
    x, y = np.log(np.asarray(ks, float)), np.log(np.asarray(ts, float))
    return float(np.polyfit(x, y, 1)[0])


def cost_ladder(*, seed: int = 0, rows: int = LADDER_ROWS, ns: tuple[int, ...] = LADDER_NS,
                ks: tuple[int, ...] = LADDER_KS, repeats: int = 3, peak_size: int = 1500) -> dict[str, Any]:
    """Time one half-step of both solvers on every ``(n, k)`` cell (see the module docstring).

    Returns a dict with ``cells`` (per cell: median CPU seconds of each solver, every run, refinement steps,
    GFLOP/s, agreement of the two solutions), ``slopes`` (per ``n``: exact and sketch), ``speedup`` (per ``n`` at
    the largest ``k``), ``crossover_n``, ``peak_gflops``, ``load`` (1-minute load average at start and end) and
    ``blas``. ``peak_size`` is the order of the GEMM that measures the peak.
    """
    from .regression import weighted_regression

    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    if len(set(ks)) < 2:
        raise ValueError(f"ks must hold at least two different ranks (a slope in k), got {ks}")
    load0 = os.getloadavg()[0]
    peak = gemm_peak_gflops(peak_size)
    rng = np.random.default_rng(seed)
    cells = []
    with threadpool_limits(1, user_api="blas"):
        for n in ns:
            W = rng.uniform(0.5, 1.5, size=(rows, n))
            for k in ks:
                F = np.linalg.qr(rng.normal(size=(n, k)))[0] * np.sqrt(n)
                M = rng.normal(size=(rows, k)) @ F.T + 0.1 * rng.normal(size=(rows, n))
                runs: dict[str, list[float]] = {"exact": [], "sketch": []}
                X: dict[str, Any] = {}
                for r in range(repeats):
                    for solver in (("sketch", "exact") if r % 2 == 0 else ("exact", "sketch")):
                        t0 = time.process_time()
                        X[solver] = weighted_regression(M, W, F, solver=solver, seed=seed + r)
                        runs[solver].append(time.process_time() - t0)
                steps = X["sketch"].steps
                med = {s: float(np.median(v)) for s, v in runs.items()}
                flops = {"exact": half_step_flops(rows, n, k, solver="exact"),
                         "sketch": half_step_flops(rows, n, k, solver="sketch", steps=steps,
                                                   sketch_size=min(DEFAULT_SKETCH_FACTOR * k, n))}
                diff = float(np.linalg.norm(X["sketch"].X - X["exact"].X) / np.linalg.norm(X["exact"].X))
                cells.append({"n": n, "k": k, "rows": rows, "exact_s": med["exact"], "sketch_s": med["sketch"],
                              "exact_runs_s": runs["exact"], "sketch_runs_s": runs["sketch"], "steps": int(steps),
                              "exact_gflops": flops["exact"] / med["exact"] / 1e9,
                              "sketch_gflops": flops["sketch"] / med["sketch"] / 1e9,
                              "speedup": med["exact"] / med["sketch"], "relative_difference": diff})
            del W
    slopes, speedup = {}, {}
    for n in ns:
        row = [c for c in cells if c["n"] == n]
        slopes[str(n)] = {s: _slope([c["k"] for c in row], [c[f"{s}_s"] for c in row]) for s in ("exact", "sketch")}
        speedup[str(n)] = row[-1]["speedup"]
    wins = [n for n in ns if speedup[str(n)] > 1.0]
    # the crossover: from this n on (every larger n of the ladder too) the sketch is faster at the largest k
    crossover = next((n for i, n in enumerate(ns) if all(speedup[str(m)] > 1.0 for m in ns[i:])), None)
    return {"rows": rows, "ns": list(ns), "ks": list(ks), "repeats": repeats, "seed": seed, "cells": cells,
            "slopes": slopes, "speedup": speedup, "crossover_n": crossover, "sketch_wins_at": wins,
            "peak_gflops": peak, "load": [load0, os.getloadavg()[0]], "blas": blas_kernel(),
            "max_relative_difference": max(c["relative_difference"] for c in cells),
            "timing": "CPU seconds (process_time), 1 BLAS thread, median of the alternating repeats"}



#: The Evidence page's block with the per-seed ladder of the committed ``claims.json``.
SEEDS_BEGIN = "<!-- cost-ladder-seeds:begin (generated from claims.json by `python benchmarks/cost_ladder.py --evidence`) -->"
SEEDS_END = "<!-- cost-ladder-seeds:end -->"


def seeds_table(report: dict[str, Any], claim: str = "cost-exponent-in-k-ladder") -> str:
    """Markdown: per seed and row length n, both log-log slopes in k, the speed-up at the largest k and both
    GFLOP/s there, from the extras of ``claim`` in a claims report (``claims.json``); then per seed the
    crossover n, the measured GEMM peak and the load."""
    entry = next(c for c in report["claims"] if c["id"] == claim)
    lines = ["| seed | n | slope in k, sketch | slope in k, exact | exact / sketch (k = 128) | GFLOP/s sketch / exact "
             "(k = 128) |", "|---|---|---|---|---|---|"]
    tail = []
    for seed, e in zip(entry["seeds"], entry["extra"], strict=True):
        ns = sorted({int(key.removeprefix("slope_exact_n")) for key in e if key.startswith("slope_exact_n")})
        kmax = max(int(key.rsplit("_k", 1)[1]) for key in e if key.startswith("speedup_n"))
        for n in ns:
            lines.append(f"| {seed} | {n} | {e[f'slope_sketch_n{n}']:.2f} | {e[f'slope_exact_n{n}']:.2f} | "
                         f"{e[f'speedup_n{n}_k{kmax}']:.2f} | {e[f'gflops_sketch_n{n}_k{kmax}']:.1f} / "
                         f"{e[f'gflops_exact_n{n}_k{kmax}']:.1f} |")
        cross = e.get("crossover_n")
        tail.append(f"seed {seed}: crossover " + (f"n = {int(cross)}" if cross is not None else "none")
                    + f", GEMM peak {e['peak_gflops']:.1f} GFLOP/s, load {e['load_start']:.2f} → {e['load_end']:.2f}")
    return ("\n".join(lines) + f"\n\n`{report.get('command', '')}`, version {report.get('version', '?')}, "
            f"{report.get('created', '?')}; " + "; ".join(tail) + ".")


def replace_block(text: str, body: str) -> str:
    """``text`` with the body between :data:`SEEDS_BEGIN` and :data:`SEEDS_END` replaced by ``body``."""
    a = text.index(SEEDS_BEGIN) + len(SEEDS_BEGIN)
    b = text.index(SEEDS_END, a)
    return text[:a] + "\n" + body + "\n" + text[b:]
