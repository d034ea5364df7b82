"""Reading ``M`` and ``W`` from the user's files (the fitted factors are written with ``iclr25.utils.io.save_npz``)."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from iclr25.utils.io import DataFileError, read_array, read_npz

__all__ = ["read_matrix"]

FORMATS = (".npy", ".npz")


def read_matrix(path: str | os.PathLike[str], what: str) -> np.ndarray | sp.csr_array:
    """A 2-D matrix from ``.npy`` (dense) or ``.npz`` (``scipy.sparse.save_npz``, or one array in an ``np.savez``).

    Raises
    ------
    FileNotFoundError
        No such file.
    DataFileError (a ValueError)
        Unsupported suffix, empty or corrupt file, not 2-D, not numeric.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{what} path must be a str or os.PathLike, got {type(path).__name__}")
    p = Path(path)
    if p.suffix.lower() not in FORMATS:
        raise DataFileError(p, f"unsupported {what} format {p.suffix or '(no suffix)'!r}; expected .npy or .npz")
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file")
    if not p.is_file() or p.stat().st_size == 0:
        raise DataFileError(p, f"{what} file is empty or not a regular file")
    try:
        # the shared readers check the NumPy header first: a text file named .npy is reported as such
        if p.suffix.lower() == ".npy":
            arr: Any = read_array(p, what=what)
        else:
            z = read_npz(p, what=what)
            if "format" in z and "shape" in z:
                arr = sp.csr_array(sp.load_npz(p))
            elif len(z) == 1:
                arr = next(iter(z.values()))
            else:
                raise DataFileError(p, f"{what} .npz must hold one array or a scipy.sparse matrix, "
                                       f"found arrays {sorted(z)}")
    except DataFileError as exc:
        raise DataFileError(p, f"cannot read {what}: {exc.problem}") from exc
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as exc:
        raise DataFileError(p, f"cannot read {what}: {exc}") from exc
    if arr.ndim != 2:
        raise DataFileError(p, f"{what} must be a 2-D matrix, got shape {arr.shape}")
    if not sp.issparse(arr) and not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise DataFileError(p, f"{what} must be numeric, got dtype {arr.dtype}")
    return arr
