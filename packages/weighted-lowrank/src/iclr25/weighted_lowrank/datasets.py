"""Planted weighted low-rank problems (the LLR16 model the paper analyses), with the truth for recovery error.

``M = M* + N`` with ``M* = U Σ V^T`` of rank ``k`` (``U``, ``V`` uniformly random orthonormal, hence incoherent
with high probability; ``Σ`` geometric from ``cond`` down to 1, scaled so that entries are O(1)) and Gaussian
noise ``N`` of standard deviation ``noise · max|M*|``. Weights:

- ``"dense"``: ``W_ij ~ U(0.5, 1.5)``, so ``‖W - J‖_2 = O(sqrt(n))`` (the spectral-gap assumption);
- ``"mask"``: matrix completion, ``W = B / p`` with ``B_ij ~ Bernoulli(p)`` (``E[W] = J``, LLR16's
  normalisation; the minimiser is that of the 0/1 mask), stored as scipy.sparse CSR by default.
- ``"block"``: the documented failure mode, weights that break the spectral gap (a large block of
  the matrix weighted 0.01, the rest 1).

References: Li, Liang, Risteski (ICML 2016), Section 2 (model and assumptions); Song, Ye, Yin, Zhang
(ICLR 2025), Section 2.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

from iclr25.utils.seeding import check_seed

__all__ = ["PlantedProblem", "planted", "WEIGHTS"]

WEIGHTS = ("dense", "mask", "block")


@dataclasses.dataclass(frozen=True)
class PlantedProblem:
    """A planted problem: observe ``M`` under weights ``W``, recover ``truth = U diag(sigma) V^T``."""

    M: np.ndarray
    W: np.ndarray | sp.csr_array
    truth: np.ndarray
    U: np.ndarray
    V: np.ndarray
    sigma: np.ndarray
    noise_std: float

    @property
    def k(self) -> int:
        return int(self.sigma.shape[0])

    def recovery_error(self, estimate: np.ndarray) -> float:
        """``‖M* - estimate‖_F / ‖M*‖_F``."""
        return float(np.linalg.norm(self.truth - estimate) / np.linalg.norm(self.truth))


def _int(x: object, name: str, lo: int) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(x).__name__}")
    if x < lo:
        raise ValueError(f"{name} must be >= {lo}, got {x}")
    return int(x)


def planted(n: int, d: int, k: int, *, weights: str = "dense", noise: float = 1e-3, p: float = 0.3,
            cond: float = 10.0, sparse: bool = True, seed: int = 0) -> PlantedProblem:
    """A random rank-``k`` matrix observed with noise under dense spectral-gap weights or a random mask.

    .. math::  M = U Σ V^T + N, \\quad N_{ij} \\sim \\mathcal N(0, (\\text{noise} \\cdot \\max|M^*|)^2)

    Parameters
    ----------
    n, d : int
        Shape of ``M``.
    k : int
        Rank of the truth, ``1 <= k <= min(n, d)``.
    weights : {"dense", "mask", "block"}
        Weight model (see the module docstring).
    noise : float
        Noise level relative to ``max|M*|`` (0: noiseless).
    p : float
        Observation probability of ``"mask"``.
    cond : float
        Condition number of ``Σ`` (>= 1).
    sparse : bool
        Return the ``"mask"`` weights as scipy.sparse CSR (else a dense array).
    seed : int

    Returns
    -------
    PlantedProblem

    Examples
    --------
    >>> prob = planted(50, 40, 3, seed=1)
    >>> prob.M.shape, prob.W.shape, prob.k
    ((50, 40), (50, 40), 3)

    References: LLR16 Section 2; the note's reproduction plan (Section 5).
    """
    n, d, k = _int(n, "n", 1), _int(d, "d", 1), _int(k, "k", 1)
    if k > min(n, d):
        raise ValueError(f"k must be <= min(n, d) = {min(n, d)}, got {k}")
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}, got {weights!r}")
    for name, value, lo in (("noise", noise, 0.0), ("cond", cond, 1.0)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not np.isfinite(value) \
                or value < lo:
            raise ValueError(f"{name} must be a finite number >= {lo}, got {value!r}")
    if isinstance(p, bool) or not isinstance(p, (int, float, np.floating)) or not 0 < p <= 1:
        raise ValueError(f"p must be in (0, 1], got {p!r}")
    rng = np.random.default_rng(check_seed(seed))
    U = np.linalg.qr(rng.standard_normal((n, k)))[0]
    V = np.linalg.qr(rng.standard_normal((d, k)))[0]
    sigma = np.geomspace(float(cond), 1.0, k) * np.sqrt(n * d / k) / float(cond) ** 0.5
    truth = (U * sigma) @ V.T
    std = float(noise) * float(np.max(np.abs(truth)))
    M = truth + std * rng.standard_normal((n, d)) if std > 0 else truth.copy()
    if weights == "dense":
        W: np.ndarray | sp.csr_array = rng.uniform(0.5, 1.5, size=(n, d))
    elif weights == "block":
        W = np.ones((n, d))
        W[: n // 2, : d // 2] = 0.01
    else:
        mask = rng.random((n, d)) < p
        W = sp.csr_array(mask / p) if sparse else mask / p
    return PlantedProblem(M=M, W=W, truth=truth, U=U, V=V, sigma=sigma, noise_std=std)
