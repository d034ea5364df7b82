"""Matrix completion beside fancyimpute's SoftImpute and the truncated SVD of W∘M.

    python benchmarks/softimpute.py --out results/bench-softimpute [--n 1000] [--k 10] [--p 0.3 0.1]

fancyimpute 0.7.0 (2021) calls ``check_array(force_all_finite=...)``, which scikit-learn removed in 1.8, and
pulls in cvxpy/cvxopt/nose; so it is NOT a dependency of this package. This script installs it with
``scikit-learn==1.5.2`` into a throwaway environment under /tmp (``uv`` needed) and runs it there on the same
observed entries.
"""

from __future__ import annotations

import shutil

from iclr25.utils.bench import benchmark_parser, cache_dir, peer_env
from iclr25.utils.results import RunResult
from iclr25.weighted_lowrank.experiments import masks

VENV = cache_dir("weighted-lowrank-fancyimpute-venv")  # the user's cache folder, not a fixed machine path


def peer_python() -> str | None:
    if shutil.which("uv") is None:
        return None
    return str(peer_env(VENV, ["fancyimpute==0.7.0", "scikit-learn==1.5.2"]))


def main() -> None:
    ap = benchmark_parser(__doc__, out="results/bench-softimpute", raw=True)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--p", type=float, nargs="+", default=[0.3, 0.1])
    args = ap.parse_args()
    python = peer_python()
    run = RunResult.start("iclr25-weighted-lowrank", "bench-softimpute", seed=0,
                          config={"n": args.n, "k": args.k, "p": args.p})
    print(f"| p (n=d={args.n}, k={args.k}) | solver | recovery error | seconds |")
    print("|---|---|---|---|")
    for p in args.p:
        res = masks(args.n, args.k, p=p, peer_python=python)
        for name in ("sketch", "exact", "svd", "softimpute"):
            r = res[name]
            err = "–" if r["error"] is None else f"{r['error']:.3e}"
            sec = "–" if r["seconds"] is None else f"{r['seconds']:.2f}"
            print(f"| {p} | {name} | {err} | {sec} |" + (f" {r['note']}" if "note" in r else ""))
        si = res["softimpute"]
        run.add(f"p={p}: recovery error, sketch", res["sketch"]["error"], peer=si["error"], peer_name="SoftImpute",
                higher_is_better=False)
        run.add(f"p={p}: seconds, sketch", res["sketch"]["seconds"], peer=si["seconds"], peer_name="SoftImpute",
                unit="s", higher_is_better=False, timing=True)
    run.finish().save(args.out / "results.json")


if __name__ == "__main__":
    main()
