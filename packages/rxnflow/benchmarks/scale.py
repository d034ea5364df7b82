"""Per-step cost of one trajectory-balance step against the number of blocks and ρ (synthetic fingerprints).

Each configuration runs in a fresh process (peak RSS is per process). Writes ``scale.json``.
Run from a clone (on a quiet machine: ``make bench PKG=rxnflow`` runs it through ``ci/quiet_run.py``)::

    python packages/rxnflow/benchmarks/scale.py --out results/rxnflow-bench

The full-softmax reference here is the same TB step on the whole action space (ρ = 1); the issue's peer,
torchgfn 2.4.1, runs in its own environment (it pins numpy<2): see ``torchgfn_peer.py``.
"""

import argparse
import json
from pathlib import Path

from iclr25.rxnflow.repro import _scale_row
from iclr25.utils.io import atomic_write


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("results/rxnflow-bench"),
                    help="folder for scale.json (created when missing; default: results/rxnflow-bench)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for n_blocks in (1000, 10000, 50000):
        for rho in (0.01, 0.02, 0.1, 1.0):
            r = _scale_row(n_blocks, rho, 10)
            rows.append(r)
            print(json.dumps(r), flush=True)
    with atomic_write(args.out / "scale.json") as f:
        json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
