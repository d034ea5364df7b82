"""Which all-vs-all Tanimoto kernel is fastest on ECFP4-2048? (The issue asks to measure and pick.)

    python benchmarks/similarity_kernels.py --out results/augood-bench [--n 3000]

- ours: ``similarity_matrix`` (blocked exact kernel, CSR output of the pairs >= ``--threshold``);
- RDKit ``BulkTanimotoSimilarity``, one query row at a time (what the reference library does), keeping the
  same pairs (the threshold costs it one comparison per pair);
- bit-packed ``uint64`` popcount in numpy (``np.bitwise_count`` of ANDed words, blocked), same pairs.
Fingerprints are computed once beforehand in each kernel's own representation. All three are checked to keep
the same pairs with the same values. ``--threshold 0`` stores every pair (0.5's default; issue 65: the script
crashed at its defaults once ``similarity_matrix`` kept only the pairs >= 0.30).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np


def _molecules(n: int) -> list[str]:
    from iclr25.augood import load_dataset, load_deployment_set

    smiles = list(load_deployment_set("chembl_samples")) + list(load_deployment_set("chembl_drugs"))
    smiles += list(load_dataset("solubility").smiles)
    if n > len(smiles):
        raise ValueError(f"--n must be at most {len(smiles)} (the built-in molecules), got {n}")
    return smiles[:n]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=Path("results/augood-bench"))
    p.add_argument("--n", type=int, default=3000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threshold", type=float, default=0.30,
                   help="keep the pairs with similarity >= this (default 0.30, similarity_matrix's default)")
    args = p.parse_args(argv)
    if not 0.0 <= args.threshold <= 1.0:
        p.error(f"--threshold must be in [0, 1], got {args.threshold}")

    from rdkit import Chem, DataStructs
    from rdkit.Chem import rdFingerprintGenerator

    from iclr25.augood import fingerprints, similarity_matrix
    from iclr25.utils.bench import compare, format_table, to_run_result

    smiles = _molecules(args.n)
    fp = fingerprints(smiles)
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
    bitvects = [gen.GetFingerprint(Chem.MolFromSmiles(s)) for s in smiles]
    packed = np.packbits(fp.toarray().astype(np.uint8), axis=1, bitorder="little").view(np.uint64)
    counts = np.bitwise_count(packed).sum(axis=1).astype(np.float32)

    lam = args.threshold

    def ours():
        return similarity_matrix(fp, min_threshold=lam)

    def rdkit_bulk():
        out = np.empty((len(bitvects), len(bitvects)), dtype=np.float32)
        for i, f in enumerate(bitvects):
            out[i] = DataStructs.BulkTanimotoSimilarity(f, bitvects)
        out[out < lam] = 0.0
        return out

    def popcount():
        n = packed.shape[0]
        out = np.empty((n, n), dtype=np.float32)
        step = max(1, (1 << 22) // (n * packed.shape[1]))
        for i in range(0, n, step):
            inter = np.bitwise_count(packed[i:i + step, None, :] & packed[None, :, :]).sum(-1, dtype=np.int32)
            with np.errstate(invalid="ignore"):
                out[i:i + step] = inter / (counts[i:i + step, None] + counts[None, :] - inter)
        out = np.nan_to_num(out)
        out[out < lam] = 0.0
        return out

    ref = rdkit_bulk()
    np.fill_diagonal(ref, 0.0)
    pc = popcount()
    np.fill_diagonal(pc, 0.0)
    assert np.abs(ours().toarray() - ref).max() < 1e-6 and np.abs(pc - ref).max() < 1e-6

    rows = [compare(ours, rdkit_bulk, names=("ours (similarity_matrix)", "RDKit BulkTanimoto"),
                    repeats=args.repeats),
            compare(ours, popcount, names=("ours (similarity_matrix)", "numpy uint64 popcount"),
                    repeats=args.repeats)]
    table = format_table(rows)
    print(f"All-vs-all ECFP4-2048 Tanimoto, {args.n} molecules ({args.n ** 2:,} pairs, kept >= {lam}):\n")
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    run = to_run_result("iclr25-augood", rows, command="bench similarity_kernels",
                        config={"n": args.n, "threshold": lam})
    run.save(args.out / "similarity_kernels.json")
    (args.out / "similarity_kernels.md").write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
