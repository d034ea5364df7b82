"""ScaleGUN at 1M / 3M / 10M edges: time per single-edge request and per 5,000-edge batch (embedding update,
Newton step, total) against re-propagation (CGU's update) and retraining, flushes, budget used, peak RSS
against the memory model, and the growth exponent of the time per request in n.

    python benchmarks/scale.py --prepare --sizes 1000000 3000000 10000000   # generate graphs (cached)
    python benchmarks/scale.py --out results/scalegun-scale --sizes 1000000 3000000 10000000
    python benchmarks/scale.py --out results/scalegun-20M --sizes 20000000 --requests 10   # memory-guarded

Graphs: :func:`iclr25.scalegun.powerlaw_files` (n = m / 10 nodes, F = 64, 5 classes, 10% training nodes),
written once under ``--cache`` (default: the user's cache folder, ``$XDG_CACHE_HOME/iclr25/scalegun-graphs``
or ``~/.cache/iclr25/scalegun-graphs``) and only loaded here. The cells run through
:func:`iclr25.scalegun.sweep` (``iclr25.utils.parallel_map``; ``--backend dask`` for a cluster); the peak RSS
of each cell is the process's ``VmHWM`` after a reset at the start of the cell.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np

from iclr25.scalegun import powerlaw_files, sweep
from iclr25.utils.bench import benchmark_parser, cache_dir
from iclr25.utils.io import atomic_write
from iclr25.utils.memory import available_memory_bytes, current_rss_bytes
from iclr25.utils.results import RunResult

GB = 1e9


def _folder(cache: Path, m: int) -> Path:
    return cache / f"powerlaw-m{m}"


def prepare(cache: Path, sizes: list[int]) -> None:
    for m in sizes:
        d = _folder(cache, m)
        if (d / "graph.npz").is_file():
            print(f"{d}: cached")
            continue
        t0 = time.perf_counter()
        powerlaw_files(d, m // 10, m, 64, 5, seed=0)
        print(f"{d}: written in {time.perf_counter() - t0:.1f} s")


def table(cells: list[dict]) -> str:
    head = ("| edges | nodes | update s (1 edge) | Newton s (1 edge) | total s (1 edge) | re-propagation s (CGU) "
            "| CGU total s | retrain s | update speed-up vs CGU | total speed-up vs retrain (1 edge) "
            "| 5,000-batch update s | 5,000-batch Newton s | 5,000-batch total s | batch speed-up vs retrain "
            "| flushes | max budget used | peak RSS GB | state GB (model) | RSS growth bytes / edge |")
    lines = [head, "|" + "---|" * 19]
    for c in cells:
        one, bat = c["batches"]["1"], c["batches"]["5000"]
        cgu = c["repropagation_s"] + one["newton_s"]
        lines.append(
            f"| {c['edges']:,} | {c['nodes']:,} | {one['update_s']:.3f} | {one['newton_s']:.3f} | "
            f"{one['total_s']:.3f} | {c['repropagation_s']:.2f} | {cgu:.2f} | {c['retrain_s']:.2f} | "
            f"{c['repropagation_s'] / one['update_s']:.0f}x | {c['retrain_s'] / one['total_s']:.0f}x | "
            f"{bat['update_s']:.2f} | {bat['newton_s']:.3f} | {bat['total_s']:.2f} | "
            f"{c['retrain_s'] / bat['total_s']:.1f}x | {c['flushes']} | {max(one['max_budget_used'], bat['max_budget_used']):.3f} | "
            f"{c['peak_rss_bytes'] / GB:.2f} | {c['model_state_bytes'] / GB:.2f} | "
            f"{(c['peak_rss_bytes'] - c['rss_start_bytes']) / c['edges']:.0f} |")
    return "\n".join(lines) + "\n"


def ablation_table(cells: list[dict]) -> str:
    head = ("| r_max (relative) | r_max (absolute) | update s (1 edge) | total s (1 edge) | 5,000-batch update s "
            "| 5,000-batch total s | batch speed-up vs retrain | flushes | retrains | max budget used |")
    lines = [head, "|" + "---|" * 10]
    for c in cells:
        one, bat = c["batches"]["1"], c["batches"]["5000"]
        lines.append(
            f"| {c['r_max']:.2e} | {c['r_max_abs']:.2e} | {one['update_s']:.3f} | {one['total_s']:.3f} | "
            f"{bat['update_s']:.2f} | {bat['total_s']:.2f} | {c['retrain_s'] / bat['total_s']:.1f}x | "
            f"{c['flushes']} | {c['retrains']} | {max(one['max_budget_used'], bat['max_budget_used']):.3f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = benchmark_parser(__doc__, out="results/scalegun-scale", raw=True)
    ap.add_argument("--cache", type=Path, default=cache_dir("scalegun-graphs"),
                    help="folder of the generated graphs (default: %(default)s)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 3_000_000, 10_000_000])
    ap.add_argument("--requests", type=int, default=20, help="single-edge requests per size (default 20)")
    ap.add_argument("--batches", type=int, default=2, help="5,000-edge requests per size (default 2)")
    ap.add_argument("--backend", default=None, help="parallel_map backend (default: this process)")
    ap.add_argument("--ablate-r-max", type=float, nargs="*", default=[],
                    help="relative r_max values to run on the middle size as well (ablation of the threshold; "
                         "the middle size keeps the quiet run short)")
    ap.add_argument("--prepare", action="store_true", help="only generate the graphs into --cache")
    ap.add_argument("--mmap", action="store_true", help="memory-map the graphs and features (MappedGraph)")
    ap.add_argument("--train-keep", type=float, default=1.0,
                    help="fraction of the training nodes kept (ablation of the Newton step's cost; default 1)")
    ap.add_argument("--bytes-per-edge", type=float, default=806.0,
                    help="peak RSS growth per edge of the memory model (default: measured at 10M edges, 0.2.0); "
                         "a size whose prediction exceeds the available memory minus --reserve-gb is refused")
    ap.add_argument("--reserve-gb", type=float, default=2.0)
    args = ap.parse_args()
    if args.prepare:
        prepare(args.cache, args.sizes)
        return
    missing = [m for m in args.sizes if not (_folder(args.cache, m) / "graph.npz").is_file()]
    if missing:
        raise SystemExit(f"no cached graph for sizes {missing}: run with --prepare first")
    free = available_memory_bytes()
    need = args.bytes_per_edge * max(args.sizes) + current_rss_bytes()
    print(f"memory: available {free / GB if free else float('nan'):.1f} GB, predicted peak {need / GB:.1f} GB "
          f"({args.bytes_per_edge:.0f} B/edge x {max(args.sizes):,} edges + this process)", flush=True)
    if free is not None and need > free - args.reserve_gb * GB:
        raise SystemExit(f"refused: the predicted peak {need / GB:.1f} GB exceeds the available "
                         f"{free / GB:.1f} GB minus {args.reserve_gb} GB reserve")
    cfg = dict(sizes=args.sizes, requests=args.requests, batches=args.batches, features=64, classes=5, hops=2,
               epsilon=1.0, delta=1e-4, lam=1e-2, sigma=0.1, r_max="default rule", newton_solver="cg",
               mmap=args.mmap, train_keep=args.train_keep, available_memory_bytes=free)
    run = RunResult.start("iclr25-scalegun", "benchmark-scale", seed=0, config=cfg)
    cells = sweep([str(_folder(args.cache, m)) for m in args.sizes], batches=(1, 500, 5000),
                  requests=(args.requests, args.batches, args.batches), backend=args.backend, mmap=args.mmap,
                  train_keep=args.train_keep)
    ablation = []
    for r in args.ablate_r_max:
        ablation += sweep([str(_folder(args.cache, args.sizes[len(args.sizes) // 2]))], batches=(1, 500, 5000),
                          requests=(args.requests, args.batches, args.batches), backend=args.backend, r_max=r,
                          mmap=args.mmap, train_keep=args.train_keep)
    for c in cells:
        one, bat = c["batches"]["1"], c["batches"]["5000"]
        tag = f"{c['edges'] / 1e6:.1f}M edges"
        run.add(f"{tag}: total per single-edge request", one["total_s"], peer=c["retrain_s"], peer_name="retrain",
                unit="s", higher_is_better=False, timing=True)
        run.add(f"{tag}: update per single-edge request", one["update_s"], peer=c["repropagation_s"],
                peer_name="CGU re-propagation", unit="s", higher_is_better=False, timing=True)
        run.add(f"{tag}: total per 5,000-edge batch", bat["total_s"], peer=c["retrain_s"], peer_name="retrain",
                unit="s", higher_is_better=False, timing=True)
        run.add(f"{tag}: flushes", c["flushes"], higher_is_better=False)
        run.add(f"{tag}: peak RSS", c["peak_rss_bytes"] / GB, unit="GB", higher_is_better=False, timing=True)
    n = np.array([c["nodes"] for c in cells], dtype=float)
    summary = {}
    if len(cells) >= 2:
        for key in ("total_s", "update_s", "newton_s"):
            y = np.array([c["batches"]["1"][key] for c in cells])
            summary[f"exponent_{key}_per_request"] = float(np.polyfit(np.log(n), np.log(y), 1)[0])
        for key in ("1", "500", "5000"):
            summary[f"rows_changed_fraction_{key}"] = [c["batches"][key]["rows_changed_fraction"] for c in cells]
            summary[f"total_s_{key}"] = [c["batches"][key]["total_s"] for c in cells]
        y = np.array([c["batches"]["5000"]["total_s"] for c in cells])
        summary["exponent_total_s_per_batch"] = float(np.polyfit(np.log(n), np.log(y), 1)[0])
        y = np.array([c["retrain_s"] for c in cells])
        summary["exponent_retrain_s"] = float(np.polyfit(np.log(n), np.log(y), 1)[0])
    big = cells[-1]
    per_edge = (big["peak_rss_bytes"] - big["rss_start_bytes"]) / big["edges"]
    summary.update(largest_edges=big["edges"], batch_speedup_vs_retrain=big["retrain_s"] / big["batches"]["5000"]["total_s"],
                   rss_bytes_per_edge=per_edge, predicted_peak_rss_gb_30M=per_edge * 30e6 / GB,
                   model_bytes_per_edge=big["model_state_bytes"] / big["edges"])
    for k, v in summary.items():
        if isinstance(v, (int, float)):
            run.add(k, v)
    run.finish()
    args.out.mkdir(parents=True, exist_ok=True)
    run.save(args.out / "results.json")
    text = table(cells)
    if ablation:
        text += "\nAblation of r_max on the middle graph (relative r_max; the first row is the default rule):\n\n"
        text += ablation_table([cells[len(cells) // 2], *ablation])
    with atomic_write(args.out / "table.md") as f:
        f.write(text)
    with atomic_write(args.out / "cells.json") as f:
        f.write(json.dumps({"cells": cells, "ablation": ablation, "summary": summary}, indent=1, default=float)
                + "\n")
    print(text)
    print(json.dumps({k: (round(v, 3) if isinstance(v, float) and math.isfinite(v) else v)
                      for k, v in summary.items()}, indent=1))


if __name__ == "__main__":
    main()
