"""All-vs-all ECFP4-2048 Tanimoto at a threshold: ``similarity_matrix`` vs RDKit's ``BulkTanimotoSimilarity`` and
a bit-packed popcount kernel, all three building the same sparse output (issue 65).

    python benchmarks/similarity_kernels.py [--out benchmarks] [--n N] [--repeats 3] [--threshold 0.30]

- ours: ``similarity_matrix(fp, min_threshold=λ)`` from precomputed fingerprints (the memory estimate included);
- RDKit: ``BulkTanimotoSimilarity(fps[i], fps[i+1:])`` for every i (the upper triangle: the cheapest way to use it),
  the pairs >= λ (compared in float32, as ours) kept per row with ``np.flatnonzero``, then the same symmetric CSR;
- numpy popcount: fingerprints packed into ``uint64`` words, ``np.bitwise_count`` of ANDed words in blocks of the
  upper triangle, the same threshold and CSR.

Fingerprints are computed once beforehand in each kernel's own representation; only the similarity is timed. The
three results are checked to be identical (same pairs, same float32 values) before timing. The sides alternate
(``iclr25.utils.bench.compare``), medians of ``--repeats``. The molecules are the built-in ones (5,217 at most:
2,000 ChEMBL samples, 1,935 ChEMBL drugs, 1,282 solubility); the time per 10k² similarity (a self-join of 10,000
molecules, 5·10⁷ unordered pairs) is the measured time scaled by (10,000 / n)², said so in the record.

Also recorded: a cProfile split of one call of ours (where its time goes), its pairs per second against the
machine's copy bandwidth measured here (one thread), and the load and date (``write_record``). Writes
``similarity_kernels.json`` (``--name`` to change) under ``--out``; EVIDENCE.md's speed table is generated from it
(``make speed-tables``).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shlex
import sys
import time
from pathlib import Path

import numpy as np


def _molecules(n: int | None) -> list[str]:
    from iclr25.augood import load_dataset, load_deployment_set

    smiles = list(load_deployment_set("chembl_samples")) + list(load_deployment_set("chembl_drugs"))
    smiles += list(load_dataset("solubility").smiles)
    if n is not None and n > len(smiles):
        raise ValueError(f"--n must be at most {len(smiles)} (the built-in molecules), got {n}")
    return smiles[:n] if n else smiles


def copy_bandwidth(nbytes: int = 1 << 27, repeats: int = 5) -> float:
    """This thread's copy bandwidth in GB/s (bytes read + bytes written, median of ``repeats`` copies)."""
    src = np.ones(nbytes // 8, dtype=np.float64)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        times.append(time.perf_counter() - t0)
    return 2 * nbytes / float(np.median(times)) / 1e9


def _symmetric(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n: int):
    import scipy.sparse as sp

    out = sp.coo_matrix((np.concatenate([vals, vals]), (np.concatenate([rows, cols]), np.concatenate([cols, rows]))),
                        shape=(n, n)).tocsr()
    out.sort_indices()
    return out


def _profile_split(fp, lam: float) -> dict[str, float]:
    """Seconds of the steps of one ``similarity_matrix(fp, min_threshold=lam)``, each step called as the function
    calls it; inside the all-pairs kernel, the parts from cProfile (C functions by their own time)."""
    from iclr25.augood import allpairs, similarity

    def timed(fn, *a):
        t0 = time.perf_counter()
        out = fn(*a)
        return out, time.perf_counter() - t0

    (q, _), t_check = timed(similarity._fingerprint_pair, fp, None, "ecfp4", 2048)
    _, t_est = timed(similarity.estimate_entries, q, None, "tanimoto", lam)
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    pairs = list(prof.runcall(allpairs.all_pairs, q, None, "tanimoto", lam))
    t_kernel = time.perf_counter() - t0
    _, t_csr = timed(similarity.symmetric_csr, pairs, q.shape[0])
    stats = pstats.Stats(prof).stats  # {(file, line, name): (cc, nc, tottime, cumtime, callers)}

    def tot(name: str) -> float:  # a C function's key is "<built-in method ...name>"
        return sum(v[2] for k, v in stats.items() if name in k[2])

    def cum(name: str) -> float:
        return sum(v[3] for k, v in stats.items() if k[2] == name)

    kernel = {
        "intersection product (scipy csr_matvecs)": tot("csr_matvecs"),
        "dense target tiles": cum("_dense_tile"),
        "candidates (bound + nonzero)": cum("_candidates") or tot("nonzero"),
    }
    kernel["rest of the kernel (exact check of candidates, slicing, Python)"] = max(0.0, t_kernel - sum(kernel.values()))
    parts = {"input check": t_check, "memory estimate (256 sampled rows)": t_est, **kernel,
             "CSR assembly": t_csr}
    parts["total"] = sum(parts.values())
    return {k: round(v, 5) for k, v in parts.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent,
                   help="folder for the JSON record (default: this benchmarks/ folder)")
    p.add_argument("--name", default="similarity_kernels.json", help="file name of the record")
    p.add_argument("--n", type=int, default=None, help="molecules (default: all 5,217 built-in ones)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threshold", type=float, default=0.30,
                   help="keep the pairs with similarity >= this (default 0.30, similarity_matrix's default)")
    p.add_argument("--label", default="similarity_matrix", help="our side's name in the table")
    p.add_argument("--no-popcount", action="store_true", help="leave out the numpy popcount kernel")
    args = p.parse_args(argv)
    if not 0.0 <= args.threshold <= 1.0:
        p.error(f"--threshold must be in [0, 1], got {args.threshold}")
    if args.repeats < 3:
        p.error("--repeats must be at least 3 (medians of >= 3 alternating runs)")
    load_start = os.getloadavg()[0]
    t_start = time.perf_counter()

    from rdkit import Chem, DataStructs
    from rdkit.Chem import rdFingerprintGenerator

    from iclr25.augood import fingerprints, similarity_matrix
    from iclr25.utils.bench import compare, speed_record, write_record

    smiles = _molecules(args.n)
    n = len(smiles)
    fp = fingerprints(smiles)
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
    bitvects = [gen.GetFingerprint(Chem.MolFromSmiles(s)) for s in smiles]
    packed = np.packbits(fp.toarray().astype(np.uint8), axis=1, bitorder="little").view(np.uint64)
    counts = np.bitwise_count(packed).sum(axis=1).astype(np.float32)
    lam = float(args.threshold)
    lam32 = np.float32(lam)

    def ours():
        return similarity_matrix(fp, min_threshold=lam)

    def rdkit_bulk():
        rows, cols, vals = [], [], []
        for i in range(n - 1):
            s = np.asarray(DataStructs.BulkTanimotoSimilarity(bitvects[i], bitvects[i + 1:]), dtype=np.float32)
            j = np.flatnonzero((s >= lam32) & (s > 0))
            rows.append(np.full(j.size, i, dtype=np.int32))
            cols.append((j + i + 1).astype(np.int32))
            vals.append(s[j])
        return _symmetric(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), n)

    def popcount():
        rows, cols, vals = [], [], []
        step = 64
        for i0 in range(0, n - 1, step):
            i1 = min(n, i0 + step)
            tgt = packed[i0 + 1:]
            inter = np.bitwise_count(packed[i0:i1, None, :] & tgt[None, :, :]).sum(-1, dtype=np.int32)
            with np.errstate(invalid="ignore", divide="ignore"):
                s = (inter / (counts[i0:i1, None] + counts[None, i0 + 1:] - inter)).astype(np.float32)
            r, c = np.nonzero((s >= lam32) & (s > 0) & (np.arange(i0 + 1, n)[None, :] > np.arange(i0, i1)[:, None]))
            rows.append((r + i0).astype(np.int32))
            cols.append((c + i0 + 1).astype(np.int32))
            vals.append(s[r, c])
        return _symmetric(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), n)

    # the same pairs and the same float32 values from all three
    ref = rdkit_bulk()
    mine = ours()
    assert mine.nnz == ref.nnz and (mine != ref).nnz == 0 and np.array_equal(mine.indices, ref.indices), \
        "similarity_matrix differs from RDKit"
    if not args.no_popcount:
        assert (popcount() != ref).nnz == 0, "the popcount kernel differs from RDKit"

    split = _profile_split(fp, lam)
    bandwidth = copy_bandwidth()
    cmp_rdkit = compare(ours, rdkit_bulk, names=("ours", "rdkit"), repeats=args.repeats)
    cmps = {"RDKit BulkTanimotoSimilarity (upper triangle, row by row)": cmp_rdkit}
    if not args.no_popcount:
        cmps["numpy uint64 popcount (np.bitwise_count, blocked)"] = compare(ours, popcount, names=("ours", "pc"),
                                                                            repeats=args.repeats)
    pairs = n * (n - 1) / 2
    scale = (10_000 / n) ** 2
    t_ours = cmp_rdkit.ours.median
    rows = []
    for peer, c in cmps.items():
        rows.append({"case": f"Tanimoto ≥ {lam:g}, per 10k² (n = {n:,}, × {scale:.3g})",
                     "ours": args.label, "ours_s": round(c.ours.median * scale, 4),
                     "peer": peer, "peer_s": round(c.peer.median * scale, 4),
                     "measured_ours_s": list(c.ours.times), "measured_peer_s": list(c.peer.times)})
    # roofline: each computed pair's count is written once and read once (uint8) and its mask written and read
    # (bool): 4 bytes per pair through memory at the least for this blocked design
    pairs_per_s = pairs / t_ours
    roofline = {
        "copy_bandwidth_GBps_one_thread": round(bandwidth, 2),
        "pairs_per_s": round(pairs_per_s, 0),
        "ns_per_pair": round(1e9 / pairs_per_s, 3),
        "bytes_per_pair_model": 4,
        "mean_on_bits": round(float(np.diff(fp.indptr).mean()), 2),
        "achieved_GBps": round(4 * pairs_per_s / 1e9, 3),
        "fraction_of_copy_bandwidth": round(4 * pairs_per_s / 1e9 / bandwidth, 4),
        "what": "unordered pairs n(n-1)/2 per second of similarity_matrix; bytes = 4 per pair (uint8 count written "
                "and read, bool candidate mask written and read), the least memory traffic of the blocked "
                "sparse x dense design, against np.copyto's read + write bandwidth on one thread",
    }
    note = (f"ECFP4-2048, {n:,} built-in molecules ({pairs:,.0f} unordered pairs, {mine.nnz:,} stored entries), "
            f"times scaled by (10,000/n)² = {scale:.3g} to a 10k² self-join (both sides do O(n²) work); the {len(cmps) + 1} "
            f"outputs are identical. Roofline: ours {1e9 / pairs_per_s:.2f} ns per pair = "
            f"{4 * pairs_per_s / 1e9:.2f} GB/s at 4 B per pair, "
            f"{100 * 4 * pairs_per_s / 1e9 / bandwidth:.0f} % of this thread's copy bandwidth "
            f"({bandwidth:.1f} GB/s).")
    shown = [a for a in (argv if argv is not None else sys.argv[1:])]
    record = speed_record(rows, command=" ".join(["python benchmarks/similarity_kernels.py",
                                                  *(shlex.quote(a) for a in shown)]),
                          repeats=args.repeats, note=note)
    import numpy
    import rdkit
    import scipy

    import iclr25.augood as augood_pkg

    record.update({
        "n": n, "threshold": lam, "pairs": pairs, "stored_entries": int(mine.nnz),
        "scale_to_10k2": scale, "roofline": roofline, "profile_split_s": split,
        "versions": {"iclr25-augood": getattr(augood_pkg, "__version__", "?"), "numpy": numpy.__version__,
                     "scipy": scipy.__version__, "rdkit": rdkit.__version__},
        "wall_s": round(time.perf_counter() - t_start, 2),
    })
    path = write_record(args.out / args.name, record, load_start=load_start)
    from iclr25.utils.bench import speed_table

    print(speed_table({**record, "load_start": load_start, "load_end": os.getloadavg()[0], "date": "now"}))
    print("profile split (s):", split)
    print("roofline:", roofline)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
