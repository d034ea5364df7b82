"""Side by side with the maintained reference library ``hestia-good`` 1.2.2 (its own throwaway venv).

    python benchmarks/vs_hestia.py --out results/augood-bench [--n 10000] [--repeats 3]

1. Parity on the solubility set (1,282 molecules) and ChEMBL drugs, on identical similarity matrices:
   CCPart train/valid/test sets under the same tie order, AU-GOOD in drop mode, compare_models p-values,
   and the reference's random partition checked for row-id overlap.
2. Speed and peak memory of the end-to-end sweep (ECFP4 Tanimoto similarity at min_threshold 0.3,
   CCPart at 14 thresholds 0.30-0.95, AU-GOOD for a 2,000-molecule deployment set) on ``--n`` MOSES
   molecules (read from the molsets wheel), each run in a fresh process, alternating ours and hestia.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from iclr25.utils.bench import benchmark_parser, cache_dir, peer_env
from iclr25.utils.memory import peak_rss_bytes

HERE = Path(__file__).resolve().parent
HESTIA = "hestia-good==1.2.2"


def ensure_venv(venv: Path) -> Path:
    # hestia-good imports networkx without declaring it, and needs rdkit for molecules; the MOSES SMILES ship
    # in the molsets wheel, whose own dependencies (pomegranate, torch) are not needed
    return peer_env(venv, [HESTIA, "networkx", "rdkit"], no_deps=["molsets==0.3.1"])


def moses_smiles(py: Path, n: int, seed: int) -> list[str]:
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    with gzip.open(Path(site) / "moses" / "dataset" / "data" / "test.csv.gz", "rt") as f:
        lines = f.read().split()[1:]
    idx = np.random.default_rng(seed).choice(len(lines), n, replace=False)
    return [lines[i] for i in idx]


# --------------------------------------------------------------------------------------------- parity
def parity(py: Path, work: Path) -> tuple[list[str], dict[str, float]]:
    from iclr25.augood import (
        au_good,
        ccpart,
        compare_models,
        load_dataset,
        load_deployment_set,
        similarity_matrix,
        threshold_grid,
    )

    ds = load_dataset("solubility")
    drugs = list(load_deployment_set("chembl_drugs"))
    smiles = list(ds.smiles)
    sim = similarity_matrix(smiles, min_threshold=0.0)  # every nonzero pair, handed to hestia as its table
    coo = sim.tocoo()
    t = threshold_grid(0.30, 0.95, 0.05)
    rng = np.random.default_rng(0)
    perf = np.round(0.3 + 0.5 * t + rng.normal(0, 0.03, t.size), 6)
    models = {"rf": perf, "ridge": perf - rng.uniform(0, 0.05, t.size), "knn": perf - rng.uniform(0, 0.1, t.size)}
    m = 0.3
    np.savez(work / "parity_in.npz", train_smiles=np.array(smiles), deploy_smiles=np.array(drugs),
             rows=coo.row, cols=coo.col, vals=coo.data, thresholds=t, cc_thresholds=t, perf=perf,
             min_threshold=m, model_names=np.array(list(models)), **{f"model_{k}": v for k, v in models.items()})
    t0 = time.perf_counter()
    subprocess.run([str(py), str(HERE / "_hestia_worker.py"), "parity", str(work)], check=True)
    ref = json.loads((work / "hestia_parity.json").read_text())
    print(f"hestia parity run: {time.perf_counter() - t0:.1f} s", flush=True)

    same = {"train": 0, "valid": 0, "test": 0}
    for key, parts in ref["ccpart"].items():
        ours = ccpart(sim, float(key), test_size=0.2, valid_size=0.1, tie_break="numpy")
        for name in same:
            same[name] += int(getattr(ours, name).tolist() == parts[name])
    k = len(ref["ccpart"])
    # AU-GOOD: hestia's table has the training molecules as queries and groups by query, so its histogram is
    # over training items' best deployment match; ours, deployment items' best training match (the paper's)
    s_train_side = similarity_matrix(smiles, drugs, min_threshold=m)
    s_deploy_side = similarity_matrix(drugs, smiles, min_threshold=m)
    ours_train_side = au_good(perf, s_train_side, t, unmatched="drop")
    ours_drop = au_good(perf, s_deploy_side, t, unmatched="drop")
    ours_default = au_good(perf, s_deploy_side, t)
    diff_au = abs(ours_train_side.value - ref["augood"])
    diff_w = float(np.max(np.abs(ours_train_side.weights - np.array(ref["augood_weights"]))))
    cmp = compare_models(models)
    diff_p = float(np.max(np.abs(cmp.p_values - np.array(ref["compare_models"]))))
    rp = ref["random_partition"]
    test = set(rp["test"])
    overlap = len(test & set(rp["train"])) + len(test & set(rp["valid"]))
    covered = len(set(rp["train"]) | set(rp["valid"]) | test)
    metrics = {"ccpart identical test sets": same["test"] / k, "ccpart identical valid sets": same["valid"] / k,
               "ccpart identical train sets": same["train"] / k,
               "|AU-GOOD ours - hestia| (same orientation, drop)": diff_au,
               "max |weights ours - hestia|": diff_w, "max |p ours - hestia| (compare_models)": diff_p,
               "hestia random partition: test rows also in train/valid": overlap,
               "hestia random partition: distinct rows covered": covered}
    lines = [
        f"Parity on solubility (1,282 molecules; deployment: {len(drugs)} ChEMBL drugs; min_threshold {m}):", "",
        "| check | ours | hestia-good 1.2.2 | agreement |", "|---|---|---|---|",
        f"| CCPart at {k} thresholds, same tie order (`tie_break=\"numpy\"`) | train/valid/test sets | "
        f"`ccpart(sim_df=ours)` | test {same['test']}/{k}, valid {same['valid']}/{k}, train {same['train']}/{k} "
        "identical |",
        f"| AU-GOOD, drop mode, hestia's orientation (training items' best deployment match) | "
        f"{ours_train_side.value:.12f} | {ref['augood']:.12f} | abs. diff {diff_au:.1e}, weights {diff_w:.1e} |",
        f"| AU-GOOD, drop mode, the paper's orientation (deployment items' best training match) | "
        f"{ours_drop.value:.6f} | – | – |",
        f"| AU-GOOD, default (`lowest_bin`) | {ours_default.value:.6f} (dropped mass "
        f"{ours_default.dropped_mass:.3f}) | – | – |",
        f"| compare_models one-sided Wilcoxon p-values (3 models) | matrix | matrix | max abs. diff {diff_p:.1e} |",
        f"| random partition: test rows also in train/valid (row ids) | 0 (tested) | {overlap} | "
        f"hestia covers {covered} of {rp['n']} rows |",
    ]
    return lines, metrics


# ----------------------------------------------------------------------------------------------- speed
def _peak_mb() -> float:
    return peak_rss_bytes() / 2**20


def ours_worker(work: Path, min_threshold: float) -> None:
    from iclr25.augood import au_good, ccpart_sweep, fingerprints, similarity_matrix, threshold_grid
    from iclr25.utils.io import read_smiles

    data, deploy = read_smiles(work / "speed_data.csv"), read_smiles(work / "speed_deploy.csv")
    base = _peak_mb()
    t0 = time.perf_counter()
    fp = fingerprints(data)
    sim = similarity_matrix(fp, min_threshold=min_threshold)
    t = threshold_grid(min_threshold, 0.95, 0.05)
    parts = ccpart_sweep(sim, t, test_size=0.2, valid_size=0.1, tie_break="numpy")
    perf = 0.3 + 0.5 * t
    r = au_good(perf, similarity_matrix(deploy, fp, min_threshold=min_threshold), t, unmatched="drop")
    seconds = time.perf_counter() - t0
    print(json.dumps({"seconds": seconds, "peak_mb": _peak_mb(),
                      "import_mb": base, "augood": r.value, "n_thresholds": len(parts)}))


def _run_json(cmd: list[str]) -> dict:
    proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def speed(py: Path, work: Path, n: int, repeats: int, min_threshold: float):
    from iclr25.utils.bench import Comparison, Measurement

    smiles = moses_smiles(py, n + 2000, seed=0)
    for name, rows in (("speed_data.csv", smiles[:n]), ("speed_deploy.csv", smiles[n:])):
        (work / name).write_text("smiles\n" + "\n".join(rows) + "\n")
    ours_cmd = [sys.executable, str(Path(__file__).resolve()), "--ours-worker", str(work), str(min_threshold)]
    hestia_cmd = [str(py), str(HERE / "_hestia_worker.py"), "speed", str(work), str(min_threshold)]
    runs: dict[str, list[dict]] = {"ours": [], "hestia": []}
    for i in range(repeats):
        order = (("ours", ours_cmd), ("hestia", hestia_cmd)) if i % 2 == 0 else (("hestia", hestia_cmd),
                                                                               ("ours", ours_cmd))
        for name, cmd in order:
            runs[name].append(_run_json(cmd))
            print(f"  {name} run {i + 1}: {runs[name][-1]['seconds']:.2f} s, peak {runs[name][-1]['peak_mb']:.0f} MB",
                  flush=True)
    comp = Comparison(Measurement(f"ours: sweep on {n} molecules", tuple(r["seconds"] for r in runs["ours"])),
                      Measurement("hestia-good 1.2.2", tuple(r["seconds"] for r in runs["hestia"])))
    return comp, runs


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--ours-worker":
        ours_worker(Path(argv[1]), float(argv[2]))
        return 0
    p = benchmark_parser(__doc__, out="results/augood-bench", raw=True)
    p.add_argument("--n", type=int, default=10_000, help="molecules in the speed sweep (default: 10000)")
    p.add_argument("--repeats", type=int, default=3, help="timed runs of each (default: 3)")
    p.add_argument("--venv", type=Path, default=cache_dir("augood-hestia-venv"),
                   help="hestia-good's own venv (default: $XDG_CACHE_HOME/iclr25/augood-hestia-venv)")
    p.add_argument("--skip-parity", action="store_true")
    p.add_argument("--speed-json", type=Path, default=HERE / "vs_hestia.json",
                   help="the speed record EVIDENCE.md's table is generated from (default: benchmarks/vs_hestia.json)")
    args = p.parse_args(argv)
    import os

    from iclr25.utils.bench import format_table, speed_record, to_run_result, write_record

    load_start = os.getloadavg()[0]

    py = ensure_venv(args.venv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="augood-bench-") as tmp:
        work = Path(tmp)
        lines, metrics = ([], {}) if args.skip_parity else parity(py, work)
        comp, runs = speed(py, work, args.n, args.repeats, 0.3)
    run = to_run_result("iclr25-augood", [comp], command="bench vs_hestia",
                        config={"n": args.n, "repeats": args.repeats, "min_threshold": 0.3, "thresholds": 14,
                                "peer": HESTIA})
    for k, v in metrics.items():
        run.add(k, v)
    peak_o = float(np.median([r["peak_mb"] for r in runs["ours"]]))
    peak_h = float(np.median([r["peak_mb"] for r in runs["hestia"]]))
    run.add("peak RSS", peak_o, peer=peak_h, peer_name="hestia-good 1.2.2", unit="MB", higher_is_better=False,
            timing=True)
    run.add("speed-up", comp.speedup, unit="x", higher_is_better=True, timing=True)
    run.save(args.out / "vs_hestia.json")
    rec = speed_record([{"case": f"sweep on {args.n:,} MOSES molecules (similarity ≥ 0.3, CCPart at 14 λ, AU-GOOD "
                                 "of 2,000)", "ours": "augood", "ours_s": round(comp.ours.median, 3),
                         "peer": "hestia-good 1.2.2", "peer_s": round(comp.peer.median, 3),
                         "ours_runs_s": list(comp.ours.times), "peer_runs_s": list(comp.peer.times),
                         "peak_rss_mb": {"ours": peak_o, "peer": peak_h}}],
                       command="python benchmarks/vs_hestia.py" + (f" --n {args.n}" if args.n != 10_000 else ""),
                       repeats=args.repeats, note="Each run a fresh process, both single-threaded (hestia threads=1).")
    write_record(args.speed_json, rec, load_start=load_start)
    table = format_table([comp])
    text = "\n".join([*lines, "", f"End-to-end sweep on {args.n} MOSES molecules (similarity at min_threshold 0.3 + "
                      "CCPart at 14 thresholds + AU-GOOD of 2,000 deployment molecules), fresh process per run:", "",
                      table, f"Peak RSS (median): ours {peak_o:.0f} MB, hestia-good {peak_h:.0f} MB "
                      f"(after imports: ours {np.median([r['import_mb'] for r in runs['ours']]):.0f} MB, "
                      f"hestia {np.median([r['import_mb'] for r in runs['hestia']]):.0f} MB)."])
    (args.out / "vs_hestia.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
