"""Where the flop model puts 2x for sparse W: weights per row m (and m / k) needed at each sketch size.

    python benchmarks/sparse_model.py [--k 128] [--sizes 1.5 2 4 8] [--steps 30 26 16 9] [--n 16000]
        [--densities 0.01 0.05 0.1 0.2] [--out DIR]

Pure arithmetic on ``costmodel.half_step_flops`` (measures nothing, runs in well under a second). ``--steps``
gives the CG steps to use for each sketch size (measure them with ``benchmarks/cells.py``). Printed: the model's
speed-up at ``n`` for each density and sketch size, the row length ``m`` from which it reaches 2x (``m = n ·
density`` with ``two_x_threshold``), and its limit as ``m → ∞``, ``(k + 3) / (4 steps + 8)``: with more than
``(k - 13) / 8`` steps no row length gives 2x.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from iclr25.weighted_lowrank.costmodel import flop_ratio, two_x_threshold


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k", type=int, default=128)
    ap.add_argument("--n", type=int, default=16000)
    ap.add_argument("--sizes", type=float, nargs="+", default=[1.5, 2.0, 4.0, 8.0])
    ap.add_argument("--steps", type=int, nargs="+", default=[30, 26, 16, 9])
    ap.add_argument("--densities", type=float, nargs="+", default=[0.01, 0.05, 0.10, 0.20])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    if len(args.steps) != len(args.sizes):
        ap.error("--steps needs one value per --sizes value")
    k, n = args.k, args.n
    head = " | ".join(f"{d:g}" for d in args.densities)
    lines = [f"| s | CG steps | model speed-up at n = {n}, density {head} | 2x from m = (m / k) | limit m → ∞ |",
             "|---|---|" + "---|" * len(args.densities) + "---|---|"]
    rows = []
    for c, st in zip(args.sizes, args.steps):
        s = int(round(c * k))
        ratios = [flop_ratio(n, n, k, nnz=int(round(d * n * n)), steps=st, sketch_size=s) for d in args.densities]
        # m per row at which 2x starts: the square size at density 1e-3 times 1e-3 (any small density gives
        # the same m: the per-row terms dominate once n >> m)
        n2 = two_x_threshold(k, density=1e-3, steps=st, sketch_size=s, max_n=1 << 30)
        m2 = None if n2 is None else int(round(n2 * 1e-3))
        limit = (k + 3) / (4 * st + 8)
        rows.append({"s": s, "s_over_k": c, "steps": st, "ratios": ratios, "two_x_m": m2, "limit": limit})
        where = "never" if m2 is None else f"{m2} ({m2 / k:.0f})"
        lines.append(f"| {c:g}k | {st} | " + " | ".join(f"{r:.2f}×" for r in ratios) + f" | {where} | {limit:.2f}× |")
    table = "\n".join(lines)
    print(table)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "sparse_model.json").write_text(json.dumps({"k": k, "n": n, "densities": args.densities,
                                                                "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
