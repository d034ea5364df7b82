"""Writing samples: SDF with the route as an SD property, JSON, or SMILES."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Sequence
from pathlib import Path

from rdkit import Chem

from iclr25.utils.io import atomic_write

from .routes import verify_route

__all__ = ["write_samples"]


def write_samples(path: str | os.PathLike[str], samples: Sequence) -> tuple[Path, int]:
    """Write samples (``.sdf``: SD properties ``smiles``, ``reward``, ``n_blocks``, ``route`` (JSON),
    ``route_replays``; ``.json``: a list of objects; ``.smi``: ``SMILES reward``). Returns (path, replaying)."""
    p = Path(path)
    suffix = p.suffix.lower()
    rows = []
    for s in samples:
        ok = bool(s.valid and verify_route(s.route))
        rows.append({"smiles": s.smiles, "reward": s.reward, "n_blocks": s.n_blocks, "route": s.route,
                     "route_replays": ok})
    n_ok = sum(r["route_replays"] for r in rows)
    if suffix == ".sdf":
        buf = io.StringIO()
        w = Chem.SDWriter(buf)
        for r in rows:
            if r["smiles"] is None:
                continue
            mol = Chem.MolFromSmiles(r["smiles"])
            mol.SetProp("_Name", r["smiles"])
            mol.SetProp("smiles", r["smiles"])
            mol.SetDoubleProp("reward", float(r["reward"]))
            mol.SetIntProp("n_blocks", int(r["n_blocks"]))
            mol.SetProp("route", json.dumps(r["route"], separators=(",", ":")))
            mol.SetProp("route_replays", str(r["route_replays"]))
            w.write(mol)
        w.close()
        with atomic_write(p) as f:
            f.write(buf.getvalue())
    elif suffix == ".json":
        with atomic_write(p) as f:
            json.dump(rows, f, indent=1)
    elif suffix == ".smi":
        with atomic_write(p) as f:
            f.write("".join(f"{r['smiles']} {r['reward']:.4f}\n" for r in rows if r["smiles"]))
    else:
        raise ValueError(f"{p}: expected a .sdf, .json or .smi output file")
    return p, n_ok
