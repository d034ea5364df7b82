"""Time per conformer: DMT-mini (ancestral 50 steps, DDIM 20 steps; untrained weights time the same as trained)
beside RDKit ETKDGv3 and ETKDGv3 + MMFF94, on the same molecules and the same number of conformers.

    python benchmarks/conformer_speed.py [--out DIR] [--threads N] [--molecules 8] [--k 8]

Writes DIR/results.json and prints the table (alternating timing, ``iclr25.utils.bench.compare``).
"""

from __future__ import annotations

import torch

from iclr25.next_mol import etkdg_conformers, graphs_of, load_moses, make_dmt, prepare_many, sample_conformers
from iclr25.utils.bench import benchmark_parser, compare, format_table, to_run_result


def main() -> None:
    parser = benchmark_parser(__doc__, out="results/next-mol-bench", raw=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--molecules", type=int, default=8)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    mols = prepare_many(load_moses("test", args.molecules, seed=0, max_heavy_atoms=18))
    graphs = graphs_of(mols)
    dmt = make_dmt(hidden=96, n_heads=4, pos_std=1.9)
    n_conf = args.molecules * args.k

    def dmt_run(steps: int, sampler: str):
        return lambda: sample_conformers(dmt, graphs, args.k, steps=steps, sampler=sampler, batch_size=128)

    def rdkit_run(mmff: bool):
        return lambda: [etkdg_conformers(m, args.k, mmff=mmff) for m in mols]

    rows = [compare(dmt_run(50, "ancestral"), rdkit_run(False), names=("DMT-mini ancestral 50", "ETKDG"),
                    repeats=args.repeats, warmup=1),
            compare(dmt_run(20, "ddim"), rdkit_run(True), names=("DMT-mini DDIM 20", "ETKDG+MMFF"),
                    repeats=args.repeats, warmup=1)]
    print(f"{args.molecules} molecules x {args.k} conformers = {n_conf} conformers per call")
    print(format_table(rows))
    for r in rows:
        print(f"{r.ours.name}: {1000 * r.ours.median / n_conf:.1f} ms/conformer; "
              f"{r.peer.name}: {1000 * r.peer.median / n_conf:.1f} ms/conformer")
    run = to_run_result("iclr25-next-mol", rows, config=vars(args) | {"out": str(args.out)})
    run.save(args.out / "results.json")


if __name__ == "__main__":
    main()
