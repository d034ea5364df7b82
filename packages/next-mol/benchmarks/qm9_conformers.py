"""DMT-mini against RDKit ETKDG and ETKDG + MMFF94 on QM9's DFT geometries (issue 63), per seed:

    pip install 'iclr25-next-mol[qm9]'   # the qm9pack wheel (MIT) holds QM9 with its DFT geometries
    python benchmarks/qm9_conformers.py --out benchmarks/qm9_conformers.json --md docs/qm9_conformers.md

Per seed: DMT-mini (the shipped checkpoint's architecture and optimiser, ``QM9_RECIPE``) trained on the DFT
geometries of 2,000 QM9 molecules, then scored with ETKDG, ETKDG + MMFF94 and the shipped MOSES-trained DMT-mini
on the DFT geometry of 40 held-out molecules (MAT-R, COV-R at 0.5 A, 2K = 2 conformers per molecule, 50 sampler
steps), with a ladder over its training steps; and the issue's sanity check: 4 conformers of the first 39 QM9
molecules (``head -40 qm9_part1.csv``) through ``predict_conformers`` (what ``iclr25 next-mol conformers`` runs),
with the shipped model and with the QM9-trained one.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
import torch

from iclr25.utils.io import atomic_write

METHODS = ("DMT-mini (QM9 DFT)", "DMT-mini (shipped, MOSES)", "RDKit ETKDG", "RDKit ETKDG + MMFF94")


def markdown(doc: dict) -> str:
    r = doc["recipe"]
    lines = [f"# next-mol on QM9 DFT geometries\n\nWritten by `{doc['command']}` ({doc['date']}, iclr25-next-mol "
             f"{doc['version']}; data: qm9pack {doc['qm9pack']}). DMT-mini ({r['hidden']} hidden, {r['n_blocks']} "
             f"blocks) trained {r['steps']} steps on the DFT geometries of {r['n_train']} QM9 molecules; "
             f"{r['n_test']} held-out molecules, their DFT geometry as the one reference, 2 conformers each, "
             f"{r['sample_steps']} sampler steps, COV-R at {r['delta']} A. Lower MAT-R is better.\n",
             "| seed | " + " | ".join(f"{m} MAT-R / COV-R" for m in METHODS) + " |",
             "|---|" + "---|" * len(METHODS)]
    for s in doc["seeds"]:
        lines.append(f"| {s['seed']} | " + " | ".join(
            f"{s['methods'][m]['mat_r']:.3f} / {s['methods'][m]['cov_r']:.2f}" for m in METHODS) + " |")
    lines.append("\nFraction of conformers passing the package's bond-length/clash check (held-out molecules):\n")
    lines.append("| seed | " + " | ".join(METHODS) + " | DFT references |")
    lines.append("|---|" + "---|" * (len(METHODS) + 1))
    for s in doc["seeds"]:
        lines.append(f"| {s['seed']} | " + " | ".join(f"{s['methods'][m]['sane']:.2f}" for m in METHODS)
                     + f" | {s['dft_reference_sane']:.2f} |")
    lines.append("\nLadder: the QM9 DMT-mini's held-out MAT-R (A) over its training steps (ETKDG beside it):\n")
    steps = list(doc["seeds"][0]["ladder"])
    lines.append("| seed | " + " | ".join(f"{k} steps" for k in steps) + " | ETKDG | ETKDG + MMFF94 |")
    lines.append("|---|" + "---|" * (len(steps) + 2))
    for s in doc["seeds"]:
        lines.append(f"| {s['seed']} | " + " | ".join(f"{s['ladder'][k]['mat_r']:.3f}" for k in steps)
                     + f" | {s['methods']['RDKit ETKDG']['mat_r']:.3f}"
                     f" | {s['methods']['RDKit ETKDG + MMFF94']['mat_r']:.3f} |")
    if doc["seeds"][0].get("issue_molecules"):
        lines.append("\nThe issue's check, 4 conformers of each of the first 39 QM9 molecules (`iclr25 next-mol "
                     "conformers` on `head -40 qm9_part1.csv`): conformers failing the bond-length/clash check, "
                     "and by number of heavy atoms (1 / 2 / 3 / 4 / >= 5):\n")
        lines.append("| seed | shipped DMT-mini (before) | DMT-mini trained on QM9 DFT (after) |")
        lines.append("|---|---|---|")
        for s in doc["seeds"]:
            cells = []
            for k in ("shipped", "qm9"):
                v = s["issue_molecules"][k]
                by = " / ".join(f"{v['fail_by_heavy_atoms'].get(g, [0, 0])[0]}"
                                for g in ("1", "2", "3", "4", ">=5"))
                cells.append(f"{v['fail']} of {v['of']} ({by})")
            lines.append(f"| {s['seed']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    from importlib.metadata import version

    from iclr25.next_mol import __version__
    from iclr25.next_mol.qm9 import ISSUE_MOLECULES, QM9_RECIPE, load_qm9, qm9_experiment, qm9_files

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--md", type=Path)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--ladder", default="250,500,1000")
    ap.add_argument("--steps", type=int, default=QM9_RECIPE["steps"])
    ap.add_argument("--n-train", type=int, default=QM9_RECIPE["n_train"])
    ap.add_argument("--n-test", type=int, default=QM9_RECIPE["n_test"])
    args = ap.parse_args()
    torch.set_num_threads(1)
    recipe = {**QM9_RECIPE, "steps": args.steps, "n_train": args.n_train, "n_test": args.n_test}
    records = load_qm9()
    first = {r.index: r for r in load_qm9(paths=[qm9_files()[0]]) if r.index <= ISSUE_MOLECULES}
    issue = [first[i] for i in sorted(first)]
    ladder = [int(x) for x in args.ladder.split(",") if x]
    seeds = []
    for seed in (int(s) for s in args.seeds.split(",")):
        res = qm9_experiment(records, seed=seed, recipe=recipe, ladder=ladder, issue_records=issue, device="cpu")
        print(json.dumps({"seed": seed, **{m: res["methods"][m]["mat_r"] for m in METHODS},
                          "issue": res["issue_molecules"]}), flush=True)
        seeds.append(res)
    doc = {"command": "python benchmarks/qm9_conformers.py " + " ".join(
               f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if v is not None),
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "version": __version__,
           "qm9pack": version("qm9pack"), "machine": platform.platform(), "torch_threads": 1,
           "recipe": recipe, "seeds": seeds,
           "mean": {m: {k: float(np.mean([s["methods"][m][k] for s in seeds])) for k in ("mat_r", "cov_r", "sane")}
                    for m in METHODS}}
    with atomic_write(args.out) as f:
        f.write(json.dumps(doc, indent=1, allow_nan=False) + "\n")
    if args.md:
        with atomic_write(args.md) as f:
            f.write(markdown(doc))


if __name__ == "__main__":
    main()
