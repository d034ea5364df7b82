"""One rung past the ``qm9`` claims rung's ladder (issue 63): the claim's seed-0 setup (same QM9 draw, same
DMT-mini recipe) trained for more steps, scored on the way, against ETKDG and ETKDG + MMFF94:

    python benchmarks/qm9_longer.py --out docs/qm9/ladder_longer.json

``benchmarks/qm9_rung_tables.py`` adds it to ``docs/qm9/ladder.md``. One seed only (about 3 CPU-minutes).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import torch

from iclr25.utils.io import atomic_write


def main() -> None:
    from iclr25.next_mol import __version__
    from iclr25.next_mol.claims import QM9_LADDER, QM9_STEPS
    from iclr25.next_mol.qm9 import QM9_RECIPE, load_qm9, qm9_experiment

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=2 * QM9_STEPS)
    args = ap.parse_args()
    torch.set_num_threads(1)
    t0 = time.process_time()
    res = qm9_experiment(load_qm9(), seed=args.seed, recipe={**QM9_RECIPE, "steps": args.steps},
                         ladder=[*QM9_LADDER, QM9_STEPS], shipped=False, device="cpu")
    doc = {"command": f"python benchmarks/qm9_longer.py --out {args.out} --seed {args.seed} --steps {args.steps}",
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "version": __version__,
           "machine": platform.platform(), "torch_threads": 1, "cpu_seconds": time.process_time() - t0,
           "seed": args.seed, "n_train": res["n_train"], "n_test": res["n_test"],
           "ladder": {k: v["mat_r"] for k, v in res["ladder"].items()},
           "etkdg": res["methods"]["RDKit ETKDG"]["mat_r"],
           "etkdg_mmff": res["methods"]["RDKit ETKDG + MMFF94"]["mat_r"]}
    print(json.dumps(doc))
    with atomic_write(args.out) as f:
        f.write(json.dumps(doc, indent=1, allow_nan=False) + "\n")


if __name__ == "__main__":
    main()
