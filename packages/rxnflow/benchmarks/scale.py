"""Per-step cost of one trajectory-balance step against the number of blocks and ρ (synthetic fingerprints).

Each configuration runs in a fresh process (peak RSS is per process). Writes ``scale.json``.
Run: ``/work/tools/heavy .venvs/rxnflow/bin/python packages/rxnflow/benchmarks/scale.py [OUT.json]``.

The full-softmax reference here is the same TB step on the whole action space (ρ = 1); the issue's peer,
torchgfn 2.4.1, runs in its own environment (it pins numpy<2): see ``torchgfn_peer.py``.
"""

import json
import sys

from iclr25.rxnflow.reproduction import _scale_row
from iclr25.utils.io import atomic_write

rows = []
for n_blocks in (1000, 10000, 50000):
    for rho in (0.01, 0.02, 0.1, 1.0):
        r = _scale_row(n_blocks, rho, 10)
        rows.append(r)
        print(json.dumps(r), flush=True)
out = sys.argv[1] if len(sys.argv) > 1 else "scale.json"
with atomic_write(out) as f:
    json.dump(rows, f, indent=1)
