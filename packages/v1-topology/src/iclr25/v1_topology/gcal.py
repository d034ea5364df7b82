"""A rate-based GCAL baseline (Stevens, Law, Antolík & Bednar 2013), the "non-spiking map model" of the
reviews, on the same torus, patches and images as the spiking network.

Per image: ON/OFF channels ``x⁺ = max(x, 0)``, ``x⁻ = max(−x, 0)`` of the whitened patch with divisive
contrast-gain control; V1 settles for ``n_settle`` steps

.. math:: r \\leftarrow \\big[\\gamma_A A x + \\gamma_E E r - \\gamma_I I r - \\theta\\big]_+

then Hebbian learning with divisive normalisation per projection, ``w_ij ← (w_ij + α r_i x_j) / Σ_j (…)``
(afferent and lateral inhibitory), and homeostatic thresholds ``θ ← θ + β(ā − μ)`` with a smoothed ``ā``.

References: Stevens et al. (2013) J. Neurosci. 33:15747 (GCAL); paper note §6 (baseline).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from iclr25.utils.progress import progress
from iclr25.utils.seeding import check_seed

from .maps import orientation_tuning
from .network import NetworkConfig, distance_matrices, patch_indices, sample_patches
from .probe import grating_patches

__all__ = ["GCALConfig", "GCAL"]


@dataclasses.dataclass(frozen=True)
class GCALConfig:
    """GCAL constants (Stevens et al. 2013 Table 1, rescaled to the 32×32 torus)."""

    gamma_a: float = 1.5
    gamma_e: float = 1.7
    gamma_i: float = 1.4
    sigma_e: float = 1.0
    r_i: float = 4.0
    alpha_a: float = 0.1
    alpha_i: float = 0.3
    beta: float = 0.01
    mu: float = 0.024
    smoothing: float = 0.991
    n_settle: int = 16
    gain_k: float = 0.11


class GCAL:
    """GCAL map model on the sheet geometry of ``net_cfg`` (``n_side``, ``patch``, ``stride``)."""

    def __init__(self, net_cfg: NetworkConfig, cfg: GCALConfig | None = None, *, seed: int = 0):
        self.net_cfg = net_cfg
        self.cfg = GCALConfig() if cfg is None else cfg
        rng = np.random.default_rng([check_seed(seed), 11])
        n, P2 = net_cfg.n_e, net_cfg.patch ** 2
        A = rng.uniform(size=(n, 2 * P2))
        self.A = A / A.sum(1, keepdims=True)
        d = distance_matrices(net_cfg)["ee"]
        E = np.exp(-d ** 2 / (2 * self.cfg.sigma_e ** 2)) * (d <= 3 * self.cfg.sigma_e)
        np.fill_diagonal(E, 0.0)
        self.E = E / E.sum(1, keepdims=True)
        self.mask_i = (d <= self.cfg.r_i) & (d > 0)
        I = self.mask_i * rng.uniform(size=d.shape)
        self.I = I / I.sum(1, keepdims=True)
        self.theta = np.zeros(n)
        self.avg = np.full(n, self.cfg.mu)
        self._idx = patch_indices(net_cfg)

    def _lgn(self, x: np.ndarray) -> np.ndarray:
        on, off = np.maximum(x, 0), np.maximum(-x, 0)
        lgn = np.concatenate([on, off], axis=-1)
        return lgn / (self.cfg.gain_k + lgn.mean(-1, keepdims=True))

    def respond(self, x: np.ndarray) -> np.ndarray:
        """Settled V1 activity ``(B, n_e)`` for patches ``(B, n_e, patch²)``."""
        c = self.cfg
        aff = c.gamma_a * np.einsum("nk,bnk->bn", self.A, self._lgn(x.astype(np.float64)), optimize=True)
        r = np.maximum(aff - self.theta, 0)
        for _ in range(c.n_settle):  # settling steps, batched over images
            r = np.maximum(aff + c.gamma_e * r @ self.E.T - c.gamma_i * r @ self.I.T - self.theta, 0)
        return r

    def train(self, images: Sequence[np.ndarray], n_samples: int, *, batch: int = 20, seed: int = 0) -> GCAL:
        """Hebbian learning with divisive normalisation on ``n_samples`` image crops (mini-batches of ``batch``)."""
        c = self.cfg
        rng = np.random.default_rng([check_seed(seed), 12])
        for _ in progress(range(max(1, n_samples // batch)), desc="GCAL"):
            x = sample_patches(images, self.net_cfg, batch, rng, self._idx)
            r = self.respond(x)
            lgn = self._lgn(x.astype(np.float64))
            A = self.A + c.alpha_a * np.einsum("bn,bnk->nk", r, lgn, optimize=True) / batch
            self.A = A / A.sum(1, keepdims=True)
            Iw = self.I + c.alpha_i * self.mask_i * (r.T @ r) / batch
            self.I = Iw / np.maximum(Iw.sum(1, keepdims=True), 1e-12)
            for row in r:  # homeostasis follows each image in turn (GCAL's smoothed average)
                self.avg = c.smoothing * self.avg + (1 - c.smoothing) * row
                self.theta = self.theta + c.beta * (self.avg - c.mu)
        return self

    def orientation_map(self, *, n_orientations: int = 8, n_phases: int = 4, period: float | None = None):
        """Vector-sum tuning (:func:`maps.orientation_tuning`) of the settled responses to gratings, at the
        period of :data:`probe.PERIODS` that drives the most activity (or ``period``)."""
        from .probe import PERIODS

        th = np.arange(n_orientations) * np.pi / n_orientations
        n = self.net_cfg.n_side
        best = None
        for lam in PERIODS if period is None else (float(period),):
            g = grating_patches(self.net_cfg, th, np.arange(n_phases) * 2 * np.pi / n_phases, lam)
            R = self.respond(g).reshape(n_orientations, n_phases, n, n).mean(1)
            if best is None or R.mean() > best.mean():
                best = R
        return orientation_tuning(best, th)
