"""Probing a network: full-field gratings → orientation preference map (OPM) and selectivity; natural-image
responses for sparseness; clean-vs-noisy responses for robustness.

References:
    Zhong et al. (2025) ICLR (OPM from gratings, sparseness, robustness to noise); paper note §2 "Metrics".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from .maps import OrientationTuning, orientation_tuning
from .network import SESNN, NetworkConfig, sample_patches

__all__ = ["grating_patches", "preferred_period", "OrientationMap", "measure_orientation_map", "image_responses",
           "noise_reliability"]


#: grating periods (pixels) tried when no period is given; the one that drives the most spikes is used
PERIODS = (3.0, 4.0, 6.0, 8.0, 12.0)


def grating_patches(cfg: NetworkConfig, orientations: Any, phases: Any, period: float) -> np.ndarray:
    """Full-field sinusoidal gratings of unit pixel variance cut into every E neuron's patch.

    .. math:: g(\\mathbf r) = \\sqrt 2 \\cos\\!\\big(\\tfrac{2\\pi}{\\lambda}(c\\cos\\theta + r\\sin\\theta)+\\phi\\big)

    on the unwrapped retinal pixel coordinates (row r, column c). Returns ``(n_orient · n_phase, n_e, patch²)``
    ordered orientation-major.
    """
    th = np.asarray(orientations, dtype=np.float64).ravel()
    ph = np.asarray(phases, dtype=np.float64).ravel()
    if not (np.isfinite(period) and period >= 2.0):
        raise ValueError(f"period must be a number >= 2 pixels, got {period}")
    n, P, s = cfg.n_side, cfg.patch, cfg.stride
    r, c = np.mgrid[0:n, 0:n]
    dr, dc = np.mgrid[0:P, 0:P]
    rows = s * r.ravel()[:, None] + dr.ravel()[None, :]
    cols = s * c.ravel()[:, None] + dc.ravel()[None, :]
    k = 2 * np.pi / period
    arg = k * (cols[None] * np.cos(th)[:, None, None] + rows[None] * np.sin(th)[:, None, None])
    g = np.sqrt(2.0) * np.cos(arg[:, None] + ph[None, :, None, None])
    return g.reshape(th.size * ph.size, n * n, P * P).astype(np.float32)


def preferred_period(Q: np.ndarray, patch: int) -> float:
    """The spatial period (pixels) at the peak of the mean power spectrum of the receptive fields ``Q``."""
    F = np.abs(np.fft.fft2(Q.reshape(-1, patch, patch), s=(32, 32))) ** 2
    Pm = F.mean(0)
    f = np.fft.fftfreq(32)
    fr = np.sqrt(f[:, None] ** 2 + f[None, :] ** 2)
    bins = np.rint(fr * 32).astype(int)
    prof = np.bincount(bins.ravel(), weights=Pm.ravel()) / np.maximum(np.bincount(bins.ravel()), 1)
    prof[0] = 0.0
    kpk = max(int(np.argmax(prof[: 17])), 1)
    return float(np.clip(32.0 / kpk, 2.0, 2.0 * patch))


@dataclasses.dataclass(frozen=True)
class OrientationMap:
    """An OPM measured with gratings: ``tuning`` (maps of shape (n_side, n_side)), the grating ``period``, the
    ``orientations`` used and the mean spike counts ``responses`` (n_orient, n_side, n_side)."""

    tuning: OrientationTuning
    period: float
    orientations: np.ndarray
    responses: np.ndarray

    @property
    def theta(self) -> np.ndarray:
        return self.tuning.theta

    @property
    def osi(self) -> np.ndarray:
        return self.tuning.osi

    @property
    def z(self) -> np.ndarray:
        return self.tuning.z


def measure_orientation_map(net: SESNN, *, n_orientations: int = 8, n_phases: int = 4, period: float | None = None,
                            n_steps: int | None = None) -> OrientationMap:
    """Present ``n_orientations × n_phases`` gratings (plasticity off) at each period of :data:`PERIODS` (or
    ``period``), keep the period that drives the most spikes, average spike counts over phases, and
    take the vector-sum preferred orientation and OSI of every E neuron (:func:`maps.orientation_tuning`)."""
    if isinstance(n_orientations, bool) or not isinstance(n_orientations, int) or n_orientations < 4:
        raise ValueError(f"n_orientations must be an integer >= 4, got {n_orientations!r}")
    if isinstance(n_phases, bool) or not isinstance(n_phases, int) or n_phases < 1:
        raise ValueError(f"n_phases must be an integer >= 1, got {n_phases!r}")
    cfg = net.cfg
    th = np.arange(n_orientations) * np.pi / n_orientations
    ph = np.arange(n_phases) * 2 * np.pi / n_phases
    periods = PERIODS if period is None else (float(period),)
    best = None
    for lam in periods:  # the population's preferred spatial frequency: the period with the most spikes
        g = grating_patches(cfg, th, ph, lam)
        counts = net.simulate(g, n_steps=n_steps).counts_e.astype(np.float64)
        R = counts.reshape(n_orientations, n_phases, cfg.n_side, cfg.n_side).mean(1)
        if best is None or R.mean() > best[1].mean():
            best = (lam, R)
    lam, R = best
    return OrientationMap(orientation_tuning(R, th), lam, th, R)


def image_responses(net: SESNN, images: Sequence[np.ndarray], n: int, *, seed: int = 0,
                    noise_std: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """E spike counts ``(n, n_e)`` to ``n`` random natural-image crops, and the same crops with additive
    Gaussian pixel noise of std ``noise_std`` (SNR = 1/noise_std² for unit-variance whitened images)."""
    rng = np.random.default_rng([seed, 7])
    x = sample_patches(images, net.cfg, n, rng)
    clean = net.simulate(x).counts_e.astype(np.float64)
    if noise_std <= 0:
        return clean, clean
    xn = x + rng.normal(scale=noise_std, size=x.shape).astype(np.float32)
    return clean, net.simulate(xn).counts_e.astype(np.float64)


def noise_reliability(net: SESNN, images: Sequence[np.ndarray], n: int = 50, *, snr: float = 1.0,
                      seed: int = 0) -> float:
    """Population response reliability under noise (:func:`maps.response_reliability`) at signal-to-noise
    ratio ``snr`` (signal variance / noise variance), on ``n`` natural-image crops."""
    from .maps import response_reliability

    if not (np.isfinite(snr) and snr > 0):
        raise ValueError(f"snr must be a finite number > 0, got {snr}")
    clean, noisy = image_responses(net, images, n, seed=seed, noise_std=float(1.0 / np.sqrt(snr)))
    return response_reliability(clean, noisy)
