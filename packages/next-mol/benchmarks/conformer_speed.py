"""Time per conformer: DMT-mini (ancestral 50 steps, DDIM 20 steps; untrained weights time the same as trained)
beside RDKit ETKDGv3 and ETKDGv3 + MMFF94 on the same molecules and the same number of conformers, and DMT-mini
sampling with the molecules batched together (size-sorted batches, ``sample_conformers(graphs, ...)``) beside the
same sampler called one molecule at a time (issue 65).

    python benchmarks/conformer_speed.py [--out benchmarks] [--threads 1] [--molecules 8] [--k 8] [--repeats 3]

Each row: one untimed call of each side, then ``--repeats`` timed calls alternating the two sides
(``iclr25.utils.bench.compare``), medians, divided by the number of conformers per call. Writes one speed record,
``DIR/conformer_speed.json`` (``iclr25.utils.bench.speed_record``: CPU, BLAS kernel, load, date);
``make speed-tables`` renders it into the README and EVIDENCE.md blocks.
"""

from __future__ import annotations

import os
import sys
import time


def main() -> int:
    from iclr25.utils.bench import benchmark_parser

    parser = benchmark_parser(__doc__, out="benchmarks", raw=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--molecules", type=int, default=8)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for name, v in (("--threads", args.threads), ("--molecules", args.molecules), ("--k", args.k),
                    ("--repeats", args.repeats)):
        if v < 1:
            parser.error(f"{name} must be >= 1, got {v}")
    args.out.mkdir(parents=True, exist_ok=True)

    import torch

    from iclr25.next_mol import (
        etkdg_conformers,
        graphs_of,
        load_moses,
        make_dmt,
        prepare_many,
        sample_conformers,
    )
    from iclr25.utils.bench import compare, speed_record, write_record

    torch.set_num_threads(args.threads)
    load0 = os.getloadavg()[0]
    t_start = time.perf_counter()
    mols = prepare_many(load_moses("test", args.molecules, seed=0, max_heavy_atoms=18))
    graphs = graphs_of(mols)
    dmt = make_dmt(hidden=96, n_heads=4, pos_std=1.9)
    n_conf = args.molecules * args.k

    def dmt_run(steps: int, sampler: str):
        return lambda: sample_conformers(dmt, graphs, args.k, steps=steps, sampler=sampler, batch_size=128)

    def dmt_one_at_a_time(steps: int, sampler: str):
        return lambda: [sample_conformers(dmt, [g], args.k, steps=steps, sampler=sampler, batch_size=128)
                        for g in graphs]

    def rdkit_run(mmff: bool):
        return lambda: [etkdg_conformers(m, args.k, mmff=mmff) for m in mols]

    cases = [("DMT-mini ancestral 50 vs RDKit", dmt_run(50, "ancestral"), "DMT-mini, 50 ancestral steps",
              rdkit_run(False), "ETKDGv3"),
             ("DMT-mini DDIM 20 vs RDKit + force field", dmt_run(20, "ddim"), "DMT-mini, 20 DDIM steps",
              rdkit_run(True), "ETKDGv3 + MMFF94"),
             ("DMT-mini ancestral 50, batching", dmt_run(50, "ancestral"), "molecules batched together",
              dmt_one_at_a_time(50, "ancestral"), "one molecule per call")]
    rows = []
    for case, ours, ours_name, peer, peer_name in cases:
        c = compare(ours, peer, names=(ours_name, peer_name), repeats=args.repeats, warmup=1)
        rows.append({"case": f"{case}, per conformer", "ours": ours_name, "ours_s": c.ours.median / n_conf,
                     "peer": peer_name, "peer_s": c.peer.median / n_conf,
                     "ours_times_s": list(c.ours.times), "peer_times_s": list(c.peer.times)})
        print(f"{case}: {1000 * rows[-1]['ours_s']:.1f} ms vs {1000 * rows[-1]['peer_s']:.1f} ms per conformer",
              flush=True)
    command = "python benchmarks/conformer_speed.py --out benchmarks" + "".join(
        f" {flag} {value}" for flag, value, default in (("--threads", args.threads, 1),
                                                        ("--molecules", args.molecules, 8), ("--k", args.k, 8),
                                                        ("--repeats", args.repeats, 3)) if value != default)
    note = (f"{args.molecules} MOSES test molecules (at most 18 heavy atoms) × {args.k} conformers = {n_conf} per "
            f"call, {args.threads} thread(s), torch {torch.__version__}; DMT-mini untrained (hidden 96, 4 heads; "
            "the same time as trained); RDKit conformers with hydrogens. Times are per conformer.")
    record = speed_record(rows, command=command, repeats=args.repeats, note=note)
    record["wall_s"] = time.perf_counter() - t_start
    path = write_record(args.out / "conformer_speed.json", record, load_start=load0)
    print(f"wrote {path}; load {load0:.2f} -> {os.getloadavg()[0]:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
