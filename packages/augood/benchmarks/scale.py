"""Scale benchmark: similarity + CCPart sweep + AU-GOOD end to end on 10k, 100k and 1M MOSES molecules.

    python benchmarks/scale.py prepare --cache DIR [--sizes 10000,100000,1000000] [--moses PATH]
    python benchmarks/scale.py run --cache DIR --out DIR [--sizes ...] [--n-jobs 2] [--hestia]

``prepare`` (not timed) reads MOSES SMILES straight from the ``molsets`` wheel (a zip; molsets is never
imported or installed: its dependencies are not needed) or from an installed ``moses/dataset/data`` folder:
``n`` molecules drawn (seed 0) from ``train.csv.gz`` and 2,000 deployment molecules from ``test.csv.gz``, and
caches their ECFP4-2048 fingerprints (``fp_<n>.npz``; the fingerprinting time is recorded).

``run`` times, in a fresh process per case, from the cached fingerprints:
similarity (exact blocked kernel, or MinHash LSH + exact Tanimoto for ``approx`` cases) + ``ccpart_sweep``
over the grid + AU-GOOD of the 2,000 deployment molecules (exact tiled ``max_similarity``), and records the
peak RSS of the process tree (the process and its worker processes, sampled every 0.2 s, and the process's own
VmHWM) and the stored pairs. Cases (size, path, grid):

* 10k and 100k, exact, λ = 0.30 … 0.95 (14 thresholds, pairs >= 0.30 stored);
* 100k, approximate, the same grid as 1M, with its recall against the exact pairs of all 100k rows;
* 1M, approximate, λ = ``--grid-1m`` (default 0.60 … 0.95), recall on ``--recall-queries`` sampled rows
  (exact Tanimoto of those rows against all 1M).

``--hestia`` also runs ``hestia-good`` 1.2.2 at 10k in its own venv (``vs_hestia.py``'s worker; it starts from
SMILES, so ours is timed from SMILES too in that row).
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

from iclr25.utils.bench import cache_dir
from iclr25.utils.memory import peak_rss_bytes

HERE = Path(__file__).resolve().parent
N_DEPLOY = 2000
_DATA = "moses/dataset/data/"


def _peak_mb() -> float:
    return peak_rss_bytes() / 2**20


class TreeMemory:
    """Peak resident memory of this process and all its descendants (loky/Dask workers), sampled every 0.2 s
    from /proc, beside this process's own VmHWM."""

    def __init__(self) -> None:
        import threading

        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    @staticmethod
    def _tree_rss_mb() -> float:
        import os

        me = os.getpid()
        parent: dict[int, int] = {}
        rss: dict[int, float] = {}
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                fields = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()
                parent[int(d)] = int(fields[1])
                rss[int(d)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE") / 2**20
            except (OSError, IndexError, ValueError):
                continue
        total = 0.0
        for pid, mb in rss.items():
            p = pid
            while p and p != me and p in parent:
                p = parent[p]
            if p == me:
                total += mb
        return total

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._tree_rss_mb())
            self._stop.wait(0.2)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return max(self.peak, _peak_mb())


def read_moses(source: Path, name: str) -> list[str]:
    """SMILES of ``name`` (train.csv.gz / test.csv.gz) from the molsets wheel or an installed data folder."""
    if source.suffix == ".whl":
        with zipfile.ZipFile(source) as z:
            raw = gzip.decompress(z.read(_DATA + name))
    else:
        folder = source if (source / name).exists() else source / _DATA
        raw = gzip.decompress((folder / name).read_bytes())
    return raw.decode().split()[1:]  # header "SMILES"


def prepare(args: argparse.Namespace) -> None:
    import scipy.sparse as sp

    from iclr25.augood import fingerprints

    args.cache.mkdir(parents=True, exist_ok=True)
    train, test = read_moses(args.moses, "train.csv.gz"), read_moses(args.moses, "test.csv.gz")
    largest = max(args.sizes)
    pick = np.random.default_rng(0).choice(len(train), largest, replace=False)  # nested: n=10k ⊂ 100k ⊂ 1M
    deploy = [test[i] for i in np.sort(np.random.default_rng(1).choice(len(test), N_DEPLOY, replace=False))]
    t0 = time.perf_counter()
    fp_all = fingerprints([train[i] for i in pick])
    seconds = time.perf_counter() - t0
    sp.save_npz(args.cache / "deploy.npz", fingerprints(deploy))
    meta = {"fingerprint seconds (all)": seconds, "n_fingerprinted": largest, "moses": str(args.moses)}
    for n in args.sizes:
        sp.save_npz(args.cache / f"fp_{n}.npz", fp_all[:n])
        if n <= 20_000:
            (args.cache / f"smiles_{n}.csv").write_text("smiles\n" + "\n".join(train[i] for i in pick[:n]) + "\n")
    (args.cache / "deploy.csv").write_text("smiles\n" + "\n".join(deploy) + "\n")
    (args.cache / "prepare.json").write_text(json.dumps(meta, indent=1))
    print(json.dumps(meta))


def _grid(text: str) -> np.ndarray:
    from iclr25.augood import threshold_grid

    a, b, c = (float(v) for v in text.split(":"))
    return threshold_grid(a, b, c)


def worker(cache: Path, n: int, path: str, grid: str, n_jobs: int, recall_queries: int) -> dict:
    """One timed case in this (fresh) process; prints one JSON line."""
    import scipy.sparse as sp

    from iclr25.augood import au_good, ccpart_sweep, max_similarity, similarity_matrix
    from iclr25.augood.neighbours import approximate_similarity_matrix, pair_recall

    t = _grid(grid)
    fp = sp.load_npz(cache / f"fp_{n}.npz").tocsr()
    deploy = sp.load_npz(cache / "deploy.npz").tocsr()
    base = _peak_mb()
    n_jobs = 1 if n <= 20_000 else n_jobs  # starting worker processes costs more than it saves below ~20k
    out: dict = {"n": n, "path": path, "grid": grid, "n_thresholds": int(t.size), "n_jobs": n_jobs}
    mem = TreeMemory()
    t0 = time.perf_counter()
    if path == "exact":
        sim = similarity_matrix(fp, thresholds=t, n_jobs=n_jobs)
    else:
        sim, plan, checked = approximate_similarity_matrix(fp, thresholds=t, n_jobs=n_jobs, return_plan=True)
        out.update(rows_per_band=plan.rows_per_band, n_bands=plan.n_bands, candidates_checked=checked,
                   design_miss_at_threshold=plan.miss_at_threshold)
    t1 = time.perf_counter()
    parts = ccpart_sweep(sim, t, tie_break="numpy")
    t2 = time.perf_counter()
    s = max_similarity(deploy, fp, n_jobs=n_jobs)
    r = au_good(0.3 + 0.5 * t, s, t)
    t3 = time.perf_counter()
    out.update(similarity_s=t1 - t0, ccpart_s=t2 - t1, augood_s=t3 - t2, total_s=t3 - t0, peak_mb=mem.stop(),
               after_load_mb=base, stored_entries=int(sim.nnz), stored_mb=(sim.data.nbytes + sim.indices.nbytes
                                                                          + sim.indptr.nbytes) / 2**20,
               viable=int(sum(p.viable for p in parts)), augood=r.value,
               test_fraction_lowest=parts[0].test_fraction)
    if path == "approx" and recall_queries:
        t4 = time.perf_counter()
        if recall_queries >= n:
            exact = similarity_matrix(fp, min_threshold=float(t[0]), n_jobs=n_jobs)
            found = sim.multiply(exact) > 0
            out.update(recall=found.nnz / max(exact.nnz, 1), recall_pairs=int(exact.nnz // 2),
                       recall_queries=n)
        else:
            rec, k = pair_recall(sim, fp, float(t[0]), n_queries=recall_queries, n_jobs=n_jobs)
            out.update(recall=rec, recall_pairs=k, recall_queries=recall_queries)
        out["recall_s"] = time.perf_counter() - t4
    print(json.dumps(out), flush=True)
    return out


def ours_from_smiles(cache: Path, n: int) -> dict:
    """The 10k case as hestia runs it: from SMILES, fingerprinting included, one process, exact."""
    from iclr25.augood import (
        au_good,
        ccpart_sweep,
        fingerprints,
        max_similarity,
        similarity_matrix,
        threshold_grid,
    )
    from iclr25.utils.io import read_smiles

    data, deploy = read_smiles(cache / f"smiles_{n}.csv"), read_smiles(cache / "deploy.csv")
    base = _peak_mb()
    t0 = time.perf_counter()
    fp = fingerprints(data)
    t = threshold_grid(0.30, 0.95, 0.05)
    sim = similarity_matrix(fp, thresholds=t)
    ccpart_sweep(sim, t, tie_break="numpy")
    r = au_good(0.3 + 0.5 * t, max_similarity(deploy, fp), t)
    out = {"n": n, "path": "exact, from SMILES", "total_s": time.perf_counter() - t0, "peak_mb": _peak_mb(),
           "after_load_mb": base, "stored_entries": int(sim.nnz), "augood": r.value}
    print(json.dumps(out), flush=True)
    return out


def _sub(argv: list[str], py: str = sys.executable, script: Path | None = None) -> dict:
    proc = subprocess.run([py, str(script or Path(__file__).resolve()), *argv], capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}",
                "argv": argv}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(args: argparse.Namespace) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    cases = []
    for n in args.sizes:
        if n <= 100_000:
            cases.append((n, "exact", "0.30:0.95:0.05", 0))
        if n >= 100_000:
            cases.append((n, "approx", args.grid_1m, n if n <= 100_000 else args.recall_queries))
    rows: list[dict] = []
    t_start = time.perf_counter()
    if args.hestia and 10_000 in args.sizes:
        from vs_hestia import ensure_venv

        py = ensure_venv(args.venv)
        work = args.cache / "hestia10k"
        work.mkdir(exist_ok=True)
        (work / "speed_data.csv").write_text((args.cache / "smiles_10000.csv").read_text())
        (work / "speed_deploy.csv").write_text((args.cache / "deploy.csv").read_text())
        rows.append(_sub(["--from-smiles", str(args.cache), "10000"]))
        h = _sub(["speed", str(work), "0.3"], py=str(py), script=HERE / "_hestia_worker.py")
        h.update(n=10_000, path="hestia-good 1.2.2 (from SMILES)", total_s=h.get("seconds"))
        rows.append(h)
        print(json.dumps(rows[-2:]), flush=True)
    meta = json.loads((args.cache / "prepare.json").read_text()) if (args.cache / "prepare.json").exists() else {}
    for n, path, grid, rq in cases:
        rows.append(_sub(["--worker", str(args.cache), str(n), path, grid, str(args.n_jobs), str(rq)]))
        print(json.dumps(rows[-1]), flush=True)
        # written after every case, so that a run stopped by a time limit keeps what it measured
        (args.out / "scale.json").write_text(json.dumps({"rows": rows, "prepare": meta, "n_jobs": args.n_jobs,
                                                         "wall_s": time.perf_counter() - t_start}, indent=1))
        (args.out / "scale.md").write_text(table(rows) + "\n")
    print(table(rows))


def table(rows: list[dict]) -> str:
    lines = ["| n | path | grid (thresholds) | similarity s | CCPart sweep s | AU-GOOD s | total s | peak RSS MB | "
             "stored entries (MB) | recall of pairs >= λ_1 |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['argv'][2] if len(r['argv']) > 2 else '?'} | failed: {r['error']} |" + " |" * 8)
            continue

        def f(key, fmt="{:.2f}", r=r):
            return fmt.format(r[key]) if key in r and r[key] is not None else "–"

        rec = (f"{r['recall']:.4f} ({r['recall_pairs']:,} pairs of {r['recall_queries']:,} queries)"
               if "recall" in r else "exact" if r.get("path") == "exact" else "–")
        stored = f"{r['stored_entries']:,} ({r['stored_mb']:.0f})" if "stored_mb" in r else \
            (f"{r['stored_entries']:,}" if "stored_entries" in r else "–")
        plan = f", r={r['rows_per_band']} b={r['n_bands']}" if "rows_per_band" in r else ""
        lines.append(f"| {r['n']:,} | {r['path']}{plan} | {r.get('grid', '0.30:0.95:0.05')} | {f('similarity_s')} | "
                     f"{f('ccpart_s')} | {f('augood_s')} | {f('total_s')} | {f('peak_mb', '{:.0f}')} | {stored} | "
                     f"{rec} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        worker(Path(argv[1]), int(argv[2]), argv[3], argv[4], int(argv[5]), int(argv[6]))
        return 0
    if argv and argv[0] == "--from-smiles":
        ours_from_smiles(Path(argv[1]), int(argv[2]))
        return 0
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("prepare", "run"):
        s = sub.add_parser(name)
        s.add_argument("--cache", type=Path, required=True)
        s.add_argument("--sizes", type=lambda v: [int(x) for x in v.split(",")], default=[10_000, 100_000, 1_000_000])
    sub.choices["prepare"].add_argument("--moses", type=Path, required=True,
                                        help="the molsets-0.3.1 wheel, or a folder holding moses/dataset/data")
    r = sub.choices["run"]
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--n-jobs", type=int, default=1)
    r.add_argument("--grid-1m", default="0.60:0.95:0.05")
    r.add_argument("--recall-queries", type=int, default=1000)
    r.add_argument("--hestia", action="store_true")
    r.add_argument("--venv", type=Path, default=cache_dir("augood-hestia-venv"),
                   help="hestia-good's own venv (default: the user's cache, $XDG_CACHE_HOME/iclr25/augood-hestia-venv)")
    args = p.parse_args(argv)
    prepare(args) if args.cmd == "prepare" else run(args)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    sys.exit(main())
