"""Synthetic orientation maps with known statistics: narrow-band Gaussian random fields (ρ = π) and analytic
fields with pinwheels at chosen places (the ground truth the :mod:`maps` metrics are tested against).

References:
    Wolf & Geisel (1998) Nature 395:73; Schnabel, Kaschube, Wolf (2008) (narrow-band fields have π pinwheels
    per Λ²); Kaschube et al. (2010) Science 330:1113.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from iclr25.utils.seeding import check_seed

__all__ = ["gaussian_random_field", "analytic_pinwheel_field", "salt_and_pepper_map"]


def gaussian_random_field(size: int, wavelength: float, *, bandwidth: float = 0.05, seed: int = 0) -> np.ndarray:
    """A complex isotropic Gaussian random field on a ``size`` × ``size`` torus with a ring spectrum.

    .. math:: \\hat z(\\mathbf k) = \\xi(\\mathbf k)\\,\\mathbb 1[\\,\\big||\\mathbf k| - k_0\\big| \\le
              \\tfrac{b}{2} k_0], \\quad k_0 = 1/\\Lambda,\\ \\xi \\sim \\mathcal{CN}(0, 1)

    ``wavelength`` Λ in lattice units; ``bandwidth`` b is the relative ring width. Its pinwheel density tends to
    π per Λ² as b → 0 (ρΛ² = π⟨k²⟩/⟨k⟩²).

    References: Wolf & Geisel (1998); paper note §5 check 1.
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 8:
        raise ValueError(f"size must be an integer >= 8, got {size!r}")
    if not (np.isfinite(wavelength) and 2.0 < wavelength < size):
        raise ValueError(f"wavelength must be a number in (2, size={size}) lattice units, got {wavelength}")
    if not (np.isfinite(bandwidth) and 0 < bandwidth < 1):
        raise ValueError(f"bandwidth must be in (0, 1), got {bandwidth}")
    rng = np.random.default_rng(check_seed(seed))
    k0 = 1.0 / wavelength
    ky = np.fft.fftfreq(size)[:, None]
    kx = np.fft.fftfreq(size)[None, :]
    k = np.sqrt(kx ** 2 + ky ** 2)
    ring = np.abs(k - k0) <= 0.5 * bandwidth * k0
    if ring.sum() < 8:  # a too-narrow ring on a small lattice: at least the nearest shell
        ring = np.abs(k - k0) <= 0.5 / size
    xi = rng.normal(size=(size, size)) + 1j * rng.normal(size=(size, size))
    z = np.fft.ifft2(xi * ring)
    return z / np.sqrt(np.mean(np.abs(z) ** 2))


def analytic_pinwheel_field(shape: tuple[int, int], centres: Any, charges: Any) -> np.ndarray:
    """``z(x) = Π_k ((x − p_k)/|x − p_k|)^{q_k}`` on the lattice (complex conjugate for q_k = −1).

    ``centres`` are ``(row, col)`` points (place them off the lattice sites), ``charges`` ±1. The field has
    exactly these phase singularities (non-periodic lattice).
    """
    H, W = (int(shape[0]), int(shape[1]))
    P = np.asarray(centres, dtype=np.float64).reshape(-1, 2)
    q = np.asarray(charges).ravel()
    if q.size != P.shape[0] or not np.all(np.isin(q, (-1, 1))):
        raise ValueError(f"charges must be ±1, one per centre ({P.shape[0]}), got {q.tolist()}")
    y, x = np.mgrid[0:H, 0:W].astype(np.float64)
    z = np.ones((H, W), dtype=np.complex128)
    for (r, c), s in zip(P, q, strict=True):  # a handful of centres
        w = (x - c) + 1j * (y - r)
        w = w / np.maximum(np.abs(w), 1e-12)
        z = z * (w if s > 0 else np.conj(w))
    return z


def salt_and_pepper_map(size: int, *, seed: int = 0) -> np.ndarray:
    """A map of independent uniform orientations in [0, π) (the random, 'salt-and-pepper' reference)."""
    rng = np.random.default_rng(check_seed(seed))
    return rng.uniform(0, np.pi, size=(size, size))
