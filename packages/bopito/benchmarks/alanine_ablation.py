"""Ablation of the alanine-dipeptide kinetics and interpolation claims (the Evidence page, "Alanine ablation"): the
measures of ``repro --system alanine`` at one ladder rung (100 short trajectories, seeds 0, 1, 2), re-run with
one cause changed at a time (training steps, network width, DDIM steps per transition), beside the MSM peer.

    python benchmarks/alanine_ablation.py --out docs/alanine-ablation --readme EVIDENCE.md

Writes ``details.json`` and ``table.md`` to ``--out`` (and, with ``--readme``, the table between the file's
``<!-- alanine-ablation:begin/end -->`` markers). About 8 minutes on one core; not part of the tests.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import torch

from iclr25.bopito.alanine import load_shipped
from iclr25.bopito.alanine_experiment import ALANINE_SCALES, run_ablation
from iclr25.bopito.repro import alanine_ablation_table, write_details_and_tables
from iclr25.utils.bench import benchmark_parser


def main() -> None:
    ap = benchmark_parser(__doc__, out="results/bopito-alanine-ablation", raw=True)
    ap.add_argument("--readme", type=Path, default=None, help="also write the table into this file (the package's EVIDENCE.md)")
    args = ap.parse_args()
    if args.out.is_file():
        raise SystemExit(f"--out {args.out} is a file; give a folder")
    torch.set_num_threads(1)
    load0, t0, c0 = os.getloadavg(), time.time(), time.process_time()
    res = run_ablation(load_shipped(), (0, 1, 2), ALANINE_SCALES["alanine"], desc=True)
    res["run"] = {"command": "python benchmarks/alanine_ablation.py", "date": time.strftime("%Y-%m-%d", time.gmtime()),
                  "load_at_start": list(load0), "wall_s": time.time() - t0, "cpu_s": time.process_time() - c0}
    args.out.mkdir(parents=True, exist_ok=True)
    print(write_details_and_tables(args.out, res, alanine_ablation_table, "table.md", args.readme,
                                   "alanine-ablation"))


if __name__ == "__main__":
    main()
