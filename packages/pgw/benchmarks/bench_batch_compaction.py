"""The batched entropic solver before and after it drops finished pairs (issue 65): ``entropic_pgw_batch`` with
``schedule="lockstep"`` (0.5.0: one ``jit(vmap(...))`` call, every pair runs as many Sinkhorn blocks per step as
the slowest one and finished pairs run on) against ``schedule="compact"`` (slots on their own schedules,
finished pairs dropped every ``sync_every`` ticks, queued pairs refilled, the busy slots compacted into powers
of two).

    python benchmarks/bench_batch_compaction.py --out packages/pgw/benchmarks [--seeds 0 1 2]
        [--epsilons 1e-3 1e-2] [--pairs 16] [--points 40 50] [--repeats 3]

Problems as in the like-for-like benchmark against POT (``benchmarking.entropic_like_for_like``): ``--pairs``
pairs of uniform clouds in the unit square, n and m points, mass 1/m, lam = max C^2 / 5. Each row (epsilon,
seed) runs both schedules in this process: one untimed call of each (it compiles; its seconds are kept, and its
stats give the Sinkhorn blocks: useful = those of the pairs' own solves, executed = lanes or slots times steps),
then ``--repeats`` timed calls alternating (``iclr25.utils.bench.compare``), medians. One thread (BLAS, XLA).
Writes one speed record per epsilon, ``batch_compaction_eps<eps>.json`` (``iclr25.utils.bench.speed_record``:
CPU, BLAS kernel, load, date); ``make speed-tables`` renders them into the README and EVIDENCE.md blocks.
"""

from __future__ import annotations

import functools
import os
import sys
import time


def main() -> int:
    from iclr25.utils.bench import benchmark_parser

    ap = benchmark_parser(__doc__, out="results/pgw-compaction", raw=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1e-3, 1e-2])
    ap.add_argument("--pairs", type=int, default=16)
    ap.add_argument("--points", type=int, nargs=2, default=[40, 50])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[k] = "1"
    os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false"

    import jax
    import numpy as np

    from iclr25.pgw import default_lam, entropic_pgw_batch, mm_space
    from iclr25.utils.bench import compare, speed_record, write_record

    n, m = args.points
    command = "python benchmarks/bench_batch_compaction.py --out packages/pgw/benchmarks" + "".join(
        f" {flag} {' '.join(map(str, value)) if isinstance(value, list) else value}"
        for flag, value, default in (("--seeds", args.seeds, [0, 1, 2]), ("--epsilons", args.epsilons, [1e-3, 1e-2]),
                                     ("--pairs", args.pairs, 16), ("--points", args.points, [40, 50]),
                                     ("--repeats", args.repeats, 3)) if value != default)
    for eps in args.epsilons:
        load0 = os.getloadavg()[0]
        t_start = time.perf_counter()
        rows = []
        for seed in args.seeds:
            rng = np.random.default_rng(seed)
            A = [mm_space(rng.uniform(size=(n, 2)), mass=1.0 / m) for _ in range(args.pairs)]
            B = [mm_space(rng.uniform(size=(m, 2)), mass=1.0 / m) for _ in range(args.pairs)]
            lam = default_lam(A + B, 0.2)
            batch = (np.stack([a.C for a in A]), np.stack([b.C for b in B]), np.stack([a.p for a in A]),
                     np.stack([b.p for b in B]), lam)
            side: dict[str, dict] = {}
            results = {}
            for schedule in ("lockstep", "compact"):
                st: dict = {}
                t0 = time.perf_counter()
                results[schedule] = entropic_pgw_batch(*batch, epsilon=eps, schedule=schedule, stats=st)
                side[schedule] = {"first_call_s": time.perf_counter() - t0,
                                  **{k: v for k, v in st.items() if k != "pair_blocks"}}
            side["compact"]["pair_blocks"] = st["pair_blocks"]
            c = compare(functools.partial(entropic_pgw_batch, *batch, epsilon=eps, schedule="compact"),
                        functools.partial(entropic_pgw_batch, *batch, epsilon=eps, schedule="lockstep"),
                        names=("compact", "lockstep"), warmup=0, repeats=args.repeats)
            side["compact"]["times_s"], side["lockstep"]["times_s"] = list(c.ours.times), list(c.peer.times)
            d_c, d_l = results["compact"].distance, results["lockstep"].distance
            rel = np.abs(d_c - d_l) / np.maximum(d_l, 1e-300)
            before, after = side["lockstep"], side["compact"]
            rows.append({"case": f"ε = {eps:g}, seed {seed}",
                         "ours": f"compact, {100 * after['useful_share']:.0f} % useful",
                         "ours_s": c.ours.median,
                         "peer": f"lock-step, {100 * before['useful_share']:.0f} %", "peer_s": c.peer.median,
                         "before": before, "after": after,
                         "distance_rel_diff_median": float(np.median(rel)),
                         "distance_rel_diff_max": float(rel.max()),
                         "same_steps": int(np.sum(results["compact"].n_iter == results["lockstep"].n_iter))})
            print(f"eps {eps:g} seed {seed}: useful share {before['useful_share']:.3f} -> "
                  f"{after['useful_share']:.3f}, s per batch {c.peer.median:.3f} -> {c.ours.median:.3f} "
                  f"({c.speedup:.2f}x), slots {after['slot_counts']}, first calls {before['first_call_s']:.1f} / "
                  f"{after['first_call_s']:.1f} s, rel. diff max {rel.max():.1e}, same steps "
                  f"{rows[-1]['same_steps']}/{args.pairs}", flush=True)
        fc_b = [r["before"]["first_call_s"] for r in rows]
        fc_a = [r["after"]["first_call_s"] for r in rows]
        note = (f"{args.pairs} pairs of {n} × {m} points, one thread, JAX {jax.__version__}, float32; useful = share "
                f"of executed Sinkhorn blocks that the pairs' own solves need. First calls (compiling): lock-step "
                f"{min(fc_b):.1f}-{max(fc_b):.1f} s, compact {min(fc_a):.1f}-{max(fc_a):.1f} s. Distances differ by "
                f"float32 rounding (at most {max(r['distance_rel_diff_max'] for r in rows):.0e} relative).")
        record = speed_record(rows, command=command, repeats=args.repeats, note=note)
        record["wall_s"] = time.perf_counter() - t_start
        path = write_record(args.out / f"batch_compaction_eps{eps:g}.json", record, load_start=load0)
        print(f"wrote {path}; load {load0:.2f} -> {os.getloadavg()[0]:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
