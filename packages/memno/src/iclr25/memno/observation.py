"""Lossy observation operators: what the model sees of a full-resolution solution.

The paper's setting is partial observability: the solution is known only on a coarse grid (sub-sampling, so
aliasing is part of the observation), optionally low-pass filtered, and/or corrupted by Gaussian noise.
"""

from __future__ import annotations

import numpy as np

__all__ = ["subsample", "fourier_truncate", "add_noise"]


def _as_field(u: np.ndarray, name: str = "u") -> np.ndarray:
    arr = np.asarray(u)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name} must be a real array, got dtype {arr.dtype}")
    if arr.ndim < 1 or arr.shape[-1] == 0:
        raise ValueError(f"{name} must have a non-empty last (space) axis, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr.astype(np.float64, copy=False)


def subsample(u: np.ndarray, resolution: int) -> np.ndarray:
    """Point values on a coarse grid: ``u[..., ::n_x // resolution]``.

    The coarse grid keeps every ``n_x / resolution``-th point, so modes above the coarse Nyquist frequency alias
    onto resolved ones (the lossy observation of the paper, §5: sub-sampling a 512-point ground truth).
    """
    arr = _as_field(u)
    n_x = arr.shape[-1]
    if isinstance(resolution, bool) or not isinstance(resolution, (int, np.integer)) or resolution < 1:
        raise ValueError(f"resolution must be a positive integer, got {resolution!r}")
    if resolution > n_x or n_x % resolution:
        raise ValueError(f"resolution must divide the grid size {n_x}, got {resolution}")
    return arr[..., :: n_x // resolution]


def fourier_truncate(u: np.ndarray, n_modes: int, *, resolution: int | None = None) -> np.ndarray:
    """Keep the Fourier modes ``|m| < n_modes`` (sharp low-pass), evaluated on ``resolution`` points.

    Unlike :func:`subsample` this observation has no aliasing: it is the projection ``P u`` of Mori-Zwanzig
    theory onto the resolved modes.
    """
    arr = _as_field(u)
    n_x = arr.shape[-1]
    resolution = n_x if resolution is None else resolution
    if isinstance(n_modes, bool) or not isinstance(n_modes, (int, np.integer)) or n_modes < 1:
        raise ValueError(f"n_modes must be a positive integer, got {n_modes!r}")
    if isinstance(resolution, bool) or not isinstance(resolution, (int, np.integer)) or resolution < 2 * n_modes - 1:
        raise ValueError(f"resolution must be an integer >= 2*n_modes-1 = {2 * n_modes - 1}, got {resolution!r}")
    coeffs = np.fft.rfft(arr, axis=-1)[..., :n_modes]
    out = np.zeros(arr.shape[:-1] + (resolution // 2 + 1,), dtype=complex)
    out[..., :n_modes] = coeffs * (resolution / n_x)
    return np.fft.irfft(out, n=resolution, axis=-1)


def add_noise(u: np.ndarray, noise: float, *, seed: int = 0) -> np.ndarray:
    """``u + σ ε`` with ``ε ~ N(0, 1)`` i.i.d. and ``σ = noise · std(u)`` (std over the whole array)."""
    arr = _as_field(u)
    if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not np.isfinite(noise) or noise < 0:
        raise ValueError(f"noise must be a finite number >= 0 (a fraction of std(u)), got {noise!r}")
    if noise == 0:
        return arr.copy()
    rng = np.random.default_rng(seed)
    return arr + noise * float(arr.std()) * rng.standard_normal(arr.shape)
