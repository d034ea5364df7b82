"""Built-in molecules: a fixed random subset of the MOSES benchmark (ZINC clean leads), shipped in this package.

``moses_train.smi.gz`` holds 20,000 SMILES drawn from MOSES ``train.csv.gz`` (1,584,663 rows) and
``moses_test.smi.gz`` 2,000 drawn from ``test.csv.gz`` (176,074 rows), both with ``random.Random(0).sample``
from the files inside the ``molsets`` 0.3.1 wheel (MIT licence; data from Polykovskiy et al., 2020). Nothing is
downloaded at run time. With ``source="molsets"`` the full sets are read from an installed ``molsets``
distribution (``pip install --no-deps molsets``) without importing it: its dependencies are stale.
"""

from __future__ import annotations

import gzip
import importlib.resources
import importlib.util
from pathlib import Path

import numpy as np

__all__ = ["load_moses", "MOSES_SPLITS"]

MOSES_SPLITS = ("train", "test")


def _molsets_file(split: str) -> Path:
    spec = importlib.util.find_spec("moses")  # locates the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("source='molsets' needs the molsets wheel: pip install --no-deps molsets")
    path = Path(next(iter(spec.submodule_search_locations))) / "dataset" / "data" / f"{split}.csv.gz"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the installed molsets has no MOSES {split} file")
    return path


def load_moses(split: str = "train", n: int | None = None, *, seed: int = 0, source: str = "bundled",
               max_heavy_atoms: int | None = None) -> list[str]:
    """SMILES of the MOSES ``split`` ("train" or "test"); ``n`` of them drawn without replacement with ``seed``
    (all, in file order, when ``n`` is None). ``max_heavy_atoms`` keeps molecules with at most that many heavy
    atoms (counted by RDKit) before drawing.
    """
    if split not in MOSES_SPLITS:
        raise ValueError(f"split must be one of {MOSES_SPLITS}, got {split!r}")
    if source == "bundled":
        raw = importlib.resources.files(__package__).joinpath("data", f"moses_{split}.smi.gz").read_bytes()
        smiles = gzip.decompress(raw).decode().split()
    elif source == "molsets":
        lines = gzip.decompress(_molsets_file(split).read_bytes()).decode().split()
        smiles = lines[1:] if lines and lines[0].upper() == "SMILES" else lines
    else:
        raise ValueError(f"source must be 'bundled' or 'molsets', got {source!r}")
    if max_heavy_atoms is not None:
        from rdkit import Chem  # noqa: PLC0415

        if max_heavy_atoms < 1:
            raise ValueError(f"max_heavy_atoms must be >= 1, got {max_heavy_atoms}")
        smiles = [s for s in smiles if (m := Chem.MolFromSmiles(s)) is not None
                  and m.GetNumHeavyAtoms() <= max_heavy_atoms]
    return draw(smiles, n, seed, what=f"MOSES {split} molecules")


def draw(items: list, n: int | None, seed: int, *, what: str) -> list:
    """``n`` of ``items`` drawn without replacement with ``seed`` (all, in order, when ``n`` is None); ``what``
    names the items in the error for an ``n`` that is not a positive integer or is more than there are."""
    if n is None:
        return items
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if n > len(items):
        raise ValueError(f"n={n} is more than the {len(items)} {what} available")
    idx = np.random.default_rng(seed).choice(len(items), size=n, replace=False)
    return [items[i] for i in idx]
