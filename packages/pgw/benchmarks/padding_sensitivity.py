"""How much the entropic distance of one pair depends on how far it is padded (zero-mass points), in float32
and in float64: data set II, the first K shapes (as ``profile_entropic_pairwise.py``), the given pairs.

    python benchmarks/padding_sensitivity.py --shapes 24 --pairs 1,18 0,3 1,14 [--x64] [--out DIR]

Columns: the pair alone (``pgw(..., method="entropic")``, unpadded), padded to a multiple of 32 (the buckets
the K = 24 run of ``profile_entropic_pairwise.py`` ends with after merging) and padded
to 128 points (``entropic_pgw_pairs``). Padding changes no value in exact arithmetic; in floating point it
changes the order of the sums, and Frank-Wolfe at a small epsilon can follow the difference into another
local optimum.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", type=int, default=24)
    ap.add_argument("--pairs", nargs="+", default=["1,18", "0,3", "1,14"])
    ap.add_argument("--x64", action="store_true")
    ap.add_argument("--out", type=Path, default=None,
                    help="also write the table to DIR/padding_sensitivity-float32.md (or -float64)")
    args = ap.parse_args()
    import jax

    jax.config.update("jax_enable_x64", args.x64)
    from iclr25.pgw import datasets, default_lam, mm_space, pgw
    from iclr25.pgw.entropic import entropic_pgw_pairs

    data = datasets.shapes_ii(math.ceil(args.shapes / 6), seed=0)
    spaces = [mm_space(X, mass=1 / 74) for X in data.points[: args.shapes]]
    lam = default_lam(spaces)
    pairs = [tuple(int(v) for v in p.split(",")) for p in args.pairs]
    b32 = entropic_pgw_pairs(spaces, pairs, lam, pad_multiple=32, min_group_pairs=1, batch_size=1)
    b128 = entropic_pgw_pairs(spaces, pairs, lam, pad_multiple=128, min_group_pairs=1, batch_size=1)
    bits = "64" if args.x64 else "32"
    lines = [f"float{bits}: pair (sizes) | alone | buckets of 32 (64/96/128, as the K = 24 run) | padded to 128"]
    print(lines[0])
    for (i, j), x, y in zip(pairs, b32, b128):
        one = pgw(spaces[i].C, spaces[j].C, spaces[i].p, spaces[j].p, lam, method="entropic").distance
        lines.append(f"({i},{j}) ({spaces[i].n},{spaces[j].n}) | {one:.6f} | {x:.6f} | {y:.6f}")
        print(lines[-1], flush=True)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"padding_sensitivity-float{bits}.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
