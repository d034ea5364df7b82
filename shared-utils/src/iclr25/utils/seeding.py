"""Seeding: one call seeds Python, numpy and (when importable) torch, and hands back a numpy Generator."""

from __future__ import annotations

import os
import random
import sys
from typing import Any

import numpy as np

__all__ = ["seed_everything", "jax_key", "check_seed"]


def check_seed(seed: Any, name: str = "seed") -> int:
    """Validate a seed: a non-negative Python or numpy integer (bools are refused)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{name} must be a non-negative integer, got {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {seed}")
    return int(seed)


def seed_everything(seed: int = 0) -> np.random.Generator:
    """Seed Python's ``random``, numpy's legacy global state and torch (if it is already importable).

    Returns a fresh ``np.random.Generator`` seeded with ``seed``: pass it on rather than using global state.

    Examples
    --------
    >>> rng = seed_everything(3)
    >>> float(rng.random()) == float(np.random.default_rng(3).random())
    True
    """
    seed = check_seed(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 - seeding legacy global state is the point
    os.environ.setdefault("PYTHONHASHSEED", str(seed))
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch  # noqa: PLC0415 - optional dependency
        except ImportError:
            torch = None
    if torch is not None:
        torch.manual_seed(seed)
    return np.random.default_rng(seed)


def jax_key(seed: int = 0):
    """A ``jax.random.key`` for ``seed`` (needs jax)."""
    seed = check_seed(seed)
    import jax  # noqa: PLC0415 - optional dependency

    return jax.random.key(seed)
