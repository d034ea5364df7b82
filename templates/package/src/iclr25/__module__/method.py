"""The method (replace this placeholder with one module per concept of the paper)."""

from __future__ import annotations

import numpy as np


def example(x: object) -> float:
    """Mean of a non-empty, finite 1-D array.

    Examples
    --------
    >>> example([1.0, 2.0, 3.0])
    2.0
    """
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"x must be a non-empty 1-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("x must be finite (no NaN or inf)")
    return float(arr.mean())
