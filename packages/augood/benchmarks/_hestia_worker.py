"""Runs inside the throwaway ``hestia-good`` environment made by ``vs_hestia.py`` (never imports iclr25).

    python _hestia_worker.py parity WORKDIR   # reads WORKDIR/parity_in.npz, writes WORKDIR/hestia_parity.json
    python _hestia_worker.py speed WORKDIR    # reads WORKDIR/speed_*.csv, prints one JSON line
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd


def _peak_mb() -> float:
    """Peak resident memory of this process image (VmHWM; ru_maxrss would include the parent's at fork)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def parity(work: Path) -> None:
    from hestia.dataset_generator import HestiaGenerator, SimArguments
    from hestia.partition import ccpart

    z = np.load(work / "parity_in.npz", allow_pickle=False)
    data = pd.DataFrame({"smiles": list(z["train_smiles"])})
    target = pd.DataFrame({"smiles": list(z["deploy_smiles"])})
    thresholds = z["thresholds"]
    n = len(data)
    # our similarity matrix (both triangles), handed to hestia as its sparse long table
    sim_df = pd.DataFrame({"query": z["rows"].astype(np.uint32), "target": z["cols"].astype(np.uint32),
                           "metric": z["vals"].astype(np.float32)})
    out: dict[str, object] = {"ccpart": {}}
    for t in z["cc_thresholds"]:
        train, test, valid, _ = ccpart(data, sim_df=sim_df, threshold=float(t), test_size=0.2, valid_size=0.1)
        out["ccpart"][f"{t:.2f}"] = {"train": sorted(int(i) for i in train), "valid": sorted(int(i) for i in valid),
                                     "test": sorted(int(i) for i in test)}
    # AU-GOOD through the maintained API (hestia computes its own RDKit ECFP4-2048 Tanimoto table)
    gen = HestiaGenerator(data, verbose=False)
    args = SimArguments(data_type="small molecule", field_name="smiles", min_threshold=float(z["min_threshold"]),
                        fingerprint="ecfp", bits=2048, radius=2, sim_function="tanimoto", threads=1, verbose=0)
    gen.calculate_partitions(sim_args=args, sim_df=sim_df, min_threshold=0.3, threshold_step=0.05,
                             test_size=0.2, valid_size=0.1, verbose=0)
    gen.sim_args = args  # a sweep on a given sim_df stores no similarity arguments for calculate_augood
    rnd = gen.partitions["random"]
    results = {float(t): float(p) for t, p in zip(thresholds, z["perf"], strict=True)}
    _, au, w = gen.calculate_augood(results, target.copy(), "smiles", return_weights=True)
    out["augood"] = float(au)
    out["augood_weights"] = [float(v) for v in w]
    models = {str(k): z[f"model_{k}"] for k in z["model_names"]}
    out["compare_models"] = HestiaGenerator.compare_models(models).tolist()
    out["random_partition"] = {"train": [int(i) for i in rnd["train"]], "valid": [int(i) for i in rnd["valid"]],
                               "test": [int(i) for i in rnd["test"]], "n": n}
    (work / "hestia_parity.json").write_text(json.dumps(out))


def speed(work: Path, min_threshold: float) -> None:
    from hestia.dataset_generator import HestiaGenerator, SimArguments

    data = pd.read_csv(work / "speed_data.csv")
    target = pd.read_csv(work / "speed_deploy.csv")
    base = _peak_mb()
    t0 = time.perf_counter()
    gen = HestiaGenerator(data, verbose=False)
    args = SimArguments(data_type="small molecule", field_name="smiles", min_threshold=min_threshold,
                        fingerprint="ecfp", bits=2048, radius=2, sim_function="tanimoto", threads=1, verbose=0)
    gen.calculate_partitions(sim_args=args, min_threshold=min_threshold, threshold_step=0.05, test_size=0.2,
                             valid_size=0.1, verbose=0)
    thresholds = [k for k in gen.partitions if k != "random"]
    results = {t: 0.3 + 0.5 * t for t in thresholds}
    _, au = gen.calculate_augood(results, target, "smiles")
    seconds = time.perf_counter() - t0
    print(json.dumps({"seconds": seconds, "peak_mb": _peak_mb(), "import_mb": base, "augood": float(au),
                      "n_thresholds": len(thresholds)}))


if __name__ == "__main__":
    mode, work = sys.argv[1], Path(sys.argv[2])
    if mode == "parity":
        parity(work)
    else:
        speed(work, float(sys.argv[3]))
