"""Per-request time of ScaleGUN vs CGU (exact re-propagation) vs retraining on power-law graphs.

    python benchmarks/speed.py --out results/scalegun-bench [--sizes 100000 300000] [--requests 30] [--r-max R]

ScaleGUN uses the residue threshold ``repro`` uses: the default rule (``r_max=None``, ``r_max_rule`` picks it from
the graph's size and the budget) unless ``--r-max`` fixes one.

Times single-edge requests with ``iclr25.utils.bench.compare`` (alternating ScaleGUN and CGU calls on
separate unlearners of the same graph), prints the table with the speed ratio and writes ``results.json``.
"""

from __future__ import annotations

import numpy as np

from iclr25.scalegun import CertifiedUnlearner, datasets
from iclr25.utils.bench import benchmark_parser, compare, format_table, to_run_result


def main() -> None:
    ap = benchmark_parser(__doc__, out="results/scalegun-bench", raw=True)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000])
    ap.add_argument("--requests", type=int, default=5, help="timed requests per method and size")
    ap.add_argument("--r-max", type=float, default=None,
                    help="ScaleGUN's residue threshold (default: the rule repro uses, r_max_rule)")
    args = ap.parse_args()
    if args.r_max is not None and not args.r_max > 0:
        ap.error(f"--r-max must be > 0, got {args.r_max}")
    rows = []
    for m in args.sizes:
        g = datasets.powerlaw(m // 10, m, 64, 5, seed=0)
        edges = iter(g.edges[np.random.default_rng(0).permutation(g.n_edges)])
        sg = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, r_max=args.r_max).fit()  # as in repro
        cg = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, mode="cgu").fit()
        rt = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, mode="retrain").fit()
        rows.append(compare(lambda sg=sg, it=edges: sg.unlearn_edges(next(it)[None, :]),
                            lambda cg=cg, it=edges: cg.unlearn_edges(next(it)[None, :]),
                            names=(f"ScaleGUN {m // 1000}k edges", f"CGU {m // 1000}k edges"),
                            warmup=1, repeats=args.requests))
        rows.append(compare(lambda sg=sg, it=edges: sg.unlearn_edges(next(it)[None, :]),
                            lambda rt=rt, it=edges: rt.unlearn_edges(next(it)[None, :]),
                            names=(f"ScaleGUN {m // 1000}k edges ", f"retrain {m // 1000}k edges"),
                            warmup=1, repeats=max(2, args.requests // 2)))
    print(format_table(rows))
    run = to_run_result("iclr25-scalegun", rows, config={"sizes": args.sizes, "requests": args.requests,
                                                             "r_max": args.r_max})
    args.out.mkdir(parents=True, exist_ok=True)
    run.save(args.out / "results.json")


if __name__ == "__main__":
    main()
