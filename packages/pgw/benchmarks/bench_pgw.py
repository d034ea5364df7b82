"""Side-by-side runs against POT on the same problems (never part of the default test run).

    python benchmarks/bench_pgw.py --out results/pgw-bench [--sizes 100 300 500] [--repeats 3]

1. Exact PGW (fw-v1) against POT's mass-constrained partial GW per pair, with MPGW's mass at
   min(|p|, |q|) (the paper's run-time setting) and at the mass PGW transports (the same problem), at
   lam = max C^2 / 5 (paper) and max C^2 / 50 (mass dropped); n and m = n + 10 uniform points in the
   unit square, mass 1/m per point. Objectives compared at equal mass.
2. Our JAX entropic PGW (one vmapped batch) against the same solver on the same problem written as a Python
   loop over POT's ``sinkhorn_log``, same absolute epsilon; distances compared pair by pair.

Both sides of each row run in this process, alternating, after a warm-up. Single-threaded (BLAS, XLA)
unless ``--threads`` says otherwise. Writes ``bench.json`` (the results schema).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("results/pgw-bench"))
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 500])
    ap.add_argument("--lam-fractions", type=float, nargs="+", default=[0.2, 0.02])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--pairs", type=int, default=16, help="entropic: pairs in the batch")
    ap.add_argument("--points", type=int, nargs=2, default=[40, 50], help="entropic: n and m")
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1e-2, 1e-3])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t = str(args.threads)
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[k] = t
    os.environ["XLA_FLAGS"] = f"--xla_cpu_multi_thread_eigen={'true' if args.threads > 1 else 'false'}"
    os.environ.setdefault("POT_BACKEND_DISABLE_PYTORCH", "1")

    from iclr25.pgw.benchmarking import entropic_like_for_like, exact_vs_mpgw
    from iclr25.utils.results import RunResult

    t0 = time.perf_counter()
    run = RunResult.start("iclr25-pgw", "bench", seed=args.seed, config=vars(args) | {"out": str(args.out)})
    load0 = os.getloadavg()[0]
    print("| n | lam | PGW mass / min mass | PGW s | MPGW(min mass) s | ratio | MPGW(PGW mass) s | ratio | "
          "objective rel. diff |\n|---|---|---|---|---|---|---|---|---|")
    for r in exact_vs_mpgw(args.sizes, lam_fractions=tuple(args.lam_fractions), seed=args.seed,
                           repeats=args.repeats):
        rel = (r.pgw_objective - r.mpgw_objective_at_pgw_mass) / abs(r.mpgw_objective_at_pgw_mass)
        a, b = r.at_min_mass, r.at_pgw_mass
        print(f"| {r.n} | {r.lam_fraction:g} max C² | {r.pgw_mass:.4f} / {r.min_mass:.4f} | {a.ours.median:.4f} | "
              f"{a.peer.median:.4f} | {a.peer.median / a.ours.median:.2f} | {b.peer.median:.4f} | "
              f"{b.peer.median / b.ours.median:.2f} | {rel:+.2e} |", flush=True)
        tag = f"n={r.n}, lam={r.lam_fraction:g} max C^2"
        run.add(f"exact PGW vs POT MPGW at min mass, {tag}", a.ours.median, peer=a.peer.median,
                peer_name="POT MPGW", unit="s", higher_is_better=False, timing=True)
        run.add(f"exact PGW vs POT MPGW at PGW's mass, {tag}", b.ours.median, peer=b.peer.median,
                peer_name="POT MPGW", unit="s", higher_is_better=False, timing=True)
        run.add(f"objective at equal mass, {tag}", r.pgw_objective, peer=r.mpgw_objective_at_pgw_mass,
                peer_name="POT MPGW + penalty", higher_is_better=False)
    print("\n| epsilon | pairs | JAX vmap s | POT loop s | speed-up | median rel. diff | max rel. diff |\n"
          "|---|---|---|---|---|---|---|")
    for eps in args.epsilons:
        e = entropic_like_for_like(n_pairs=args.pairs, n_points=tuple(args.points), epsilon=eps,
                                   repeats=args.repeats, seed=args.seed)
        c = e.comparison
        print(f"| {eps:g} | {e.n_pairs} x {e.n_points} | {c.ours.median:.4f} | {c.peer.median:.4f} | "
              f"{c.peer.median / c.ours.median:.1f} | {e.rel_diff_median:.2e} | {e.rel_diff_max:.2e} |", flush=True)
        run.add(f"entropic PGW eps={eps:g}: JAX vmap vs POT sinkhorn_log loop", c.ours.median,
                peer=c.peer.median, peer_name="POT loop", unit="s", higher_is_better=False, timing=True)
        run.add(f"entropic PGW eps={eps:g}: max relative distance difference", e.rel_diff_max,
                higher_is_better=False)
    args.out.mkdir(parents=True, exist_ok=True)
    run.finish().save(args.out / "bench.json")
    print(f"\nwrote {args.out / 'bench.json'} in {time.perf_counter() - t0:.1f} s; load {load0:.2f} -> "
          f"{os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
