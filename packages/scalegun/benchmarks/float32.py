"""The certificate impact of ``dtype="float32"``, measured (:func:`iclr25.scalegun.experiments.float32_comparison`)
on power-law graphs of ``--nodes`` nodes (10 edges per node, F = 64, 5 classes): float32's and float64's
embedding error against the exact float64 embeddings after ``--requests`` single-edge removals, the rounding
term float32's bound adds, its propagation-error term with that term and with the measured error, the
audited gradient residual, and the smallest epsilon at which float32 would certify either way.

    python benchmarks/float32.py --nodes 1000 10000 100000 --out results/scalegun-float32
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from iclr25.scalegun import datasets
from iclr25.scalegun.experiments import float32_comparison
from iclr25.utils.io import atomic_write


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--requests", type=int, default=10)
    ap.add_argument("--out", type=Path, default=Path("results/scalegun-float32"))
    args = ap.parse_args()
    rows = []
    for n in args.nodes:
        g = datasets.powerlaw(n, 10 * n, 64, 5, seed=0, signal=0.3)
        rows.append(float32_comparison(g, n_requests=args.requests, seed=0))
        print(json.dumps(rows[-1]), flush=True)
    lines = ["| nodes | edges | float64 error | float32 error | float32 - float64 | float32 rounding term | float32 approx. term "
             "(with the term) | float32 approx. term (measured error) | float64 approx. term | budget | "
             "float32 audited residual | float32 bound | epsilon needed (term) | epsilon needed (measured) |",
             "|" + "---|" * 14]
    for r in rows:
        lines.append(f"| {r['nodes']:,} | {r['edges']:,} | {r['err64']:.1e} | {r['err32']:.1e} | {r['rounding']:.1e} | "
                     f"{r['allowance32']:.1e} | {r['approx32']:.2e} | {r['approx32_measured']:.1e} | "
                     f"{r['approx64']:.1e} | {r['budget']:.3f} | {r['true32']:.1e} | {r['bound32']:.2e} | "
                     f"{r['epsilon32']:.3g} | {r['epsilon32_measured']:.2g} |")
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out / "float32.json") as f:
        f.write(json.dumps(rows, indent=1) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
