"""AutoDock Vina as RxnFlow's oracle on T4 lysozyme L99A (issue 63): the CPU time of one oracle call, and the
scores of the bound ligand (p-xylene), two small aromatics and RxnFlow-space molecules (random synthesis on the
built-in library, <= 2 blocks), one CPU thread.

The receptor and the bound ligand are the files that ``openmmtools``' wheel ships
(``openmmtools/data/T4-lysozyme-L99A-implicit``: ``receptor.pdb`` with hydrogens, ``ligand.mol2``; MIT), bundled
with the package since 0.6.0 (``iclr25/rxnflow/data/t4l_l99a``); the ``docking`` extra is all it needs:

    python benchmarks/vina_oracle.py --out docs        # writes docs/vina_t4l.json
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import tempfile
import time
from pathlib import Path

SMALL = {"p-xylene (bound ligand)": "Cc1ccc(C)cc1", "benzene": "c1ccccc1", "toluene": "Cc1ccccc1"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("docs"), help="folder for vina_t4l.json (default docs)")
    ap.add_argument("--exhaustiveness", type=int, default=1, help="Vina exhaustiveness (default 1)")
    ap.add_argument("--n-products", type=int, default=8, help="random-synthesis molecules to dock (default 8)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    from iclr25.rxnflow import RxnFlow, SynthesisSpace, builtin_blocks, builtin_templates, random_synthesis
    from iclr25.rxnflow.docking import VinaOracle, receptor_pdbqt, t4_lysozyme
    from iclr25.utils.io import atomic_write

    target = t4_lysozyme()
    t0 = time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        rec = receptor_pdbqt(target.receptor_pdb, Path(tmp) / "receptor.pdbqt")
        prep_s = time.process_time() - t0
        oracle = VinaOracle(rec, target.center, target.size, exhaustiveness=args.exhaustiveness, seed=args.seed)
        space = SynthesisSpace(builtin_blocks(300, seed=0), builtin_templates(), max_len=2, allow_dead=True)
        products = [s.smiles for s in random_synthesis(RxnFlow(space, "qed", seed=args.seed), 4 * args.n_products,
                                                       seed=args.seed) if s.valid]
        products = list(dict.fromkeys(products))[:args.n_products]
        rows = []
        for name, smi in [*SMALL.items(), *((f"random synthesis {i}", s) for i, s in enumerate(products))]:
            v = oracle.score(smi)
            rows.append({"name": name, "smiles": smi, "vina_kcal_mol": v, "cpu_s": oracle.cpu_per_call[-1]})
    per = [r["cpu_s"] for r in rows]
    res = {"target": target.name, "source": target.source, "center": target.center, "size": target.size,
           "receptor_prep_cpu_s": prep_s, "maps_cpu_s": oracle.setup_cpu_s, "exhaustiveness": args.exhaustiveness,
           "seed": args.seed, "threads": 1, "rows": rows, "cpu_s_per_call_mean": sum(per) / len(per),
           "cpu_s_per_call_max": max(per),
           "versions": {p: importlib.metadata.version(p) for p in ("vina", "meeko", "rdkit", "iclr25-rxnflow")},
           "machine": {"cpu": platform.processor() or platform.machine(), "load": os.getloadavg()},
           "date": time.strftime("%Y-%m-%d", time.gmtime()),
           "command": f"python benchmarks/vina_oracle.py --out DIR --exhaustiveness {args.exhaustiveness} "
                      f"--n-products {args.n_products} --seed {args.seed}"}
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out / "vina_t4l.json") as f:
        json.dump(res, f, indent=1)
    for r in rows:
        print(f"{r['name']:<28s} {r['vina_kcal_mol']!s:>8} kcal/mol  {r['cpu_s']:.2f} s CPU  {r['smiles']}")
    print(f"mean {res['cpu_s_per_call_mean']:.2f} s CPU per oracle call (exhaustiveness {args.exhaustiveness}); "
          f"maps {oracle.setup_cpu_s:.2f} s once; wrote {args.out / 'vina_t4l.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
