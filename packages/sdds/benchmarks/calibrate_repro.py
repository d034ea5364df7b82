"""Calibrate the margins of the repro-only claims on seeds disjoint from the decision seeds.

``iclr25 claims sdds --calibrate --rung repro`` would measure every repro claim at 10 seeds (the autoregressive comparison and the MIS trainings cost minutes per seed); this measures
only the claims named (default: sn-nis-beats-the-variational-bound:100-109, mis-beats-the-no-model-decode:100-104) with :meth:`ClaimRegistry.calibrate` (max_margin: the largest
margin with which the claim passes its rule at the rung's decision seeds with probability >= 95 %, normal model of
the per-seed improvement) and writes ``claims-calibration-repro.json`` in ``--out``::

    python benchmarks/calibrate_repro.py --out packages/sdds
"""

from __future__ import annotations

import json

from iclr25.sdds.claims import REGISTRY
from iclr25.utils.bench import benchmark_parser
from iclr25.utils.claims import ClaimRegistry
from iclr25.utils.io import atomic_write

DEFAULT = ['sn-nis-beats-the-variational-bound:100-109', 'mis-beats-the-no-model-decode:100-104']


def main() -> None:
    p = benchmark_parser(__doc__, out="results/sdds-calibration", raw=True)
    p.add_argument("--claim", action="append", help="CLAIM_ID:FIRST-LAST, the claim and its calibration seeds")
    args = p.parse_args()
    reports = []
    for spec in args.claim or DEFAULT:
        cid, seeds = spec.rsplit(":", 1)
        first, last = map(int, seeds.split("-"))
        sub = ClaimRegistry(REGISTRY.package, seeds=REGISTRY.seeds)
        sub.measures(REGISTRY.claims[cid])(lambda seed, rung, cid=cid: {cid: REGISTRY.measure(cid, seed, rung)})
        sub.version = REGISTRY.version  # type: ignore[method-assign]
        rep = sub.calibrate("repro", range(first, last + 1), command=f"benchmarks/calibrate_repro.py --claim {spec}")
        print(rep.explain(), flush=True)
        reports.append(rep.to_dict())
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out / "claims-calibration-repro.json") as f:
        f.write(json.dumps({"kind": "calibration-repro", "reports": reports}, indent=2, allow_nan=False) + "\n")


if __name__ == "__main__":
    main()
