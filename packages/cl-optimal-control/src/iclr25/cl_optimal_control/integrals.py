"""Gaussian integrals of the erf activation that close the online-SGD order-parameter equations.

The activation is ``g(z) = erf(z / sqrt(2))`` with ``g'(z) = sqrt(2/pi) exp(-z^2/2)``. For jointly Gaussian,
centred local fields with covariance ``C`` the averages that enter the equations have closed forms
(Saad & Solla 1995; Biehl & Schwarze 1995):

.. math::

    I_2(a,b) = E[g(x_a) g(x_b)] = \\frac{2}{\\pi} \\arcsin \\frac{C_{ab}}{\\sqrt{(1+C_{aa})(1+C_{bb})}}

    I_3(a,b,c) = E[g'(x_a) x_b g(x_c)] = \\frac{2}{\\pi} \\frac{C_{bc}(1+C_{aa}) - C_{ab}C_{ac}}
                 {(1+C_{aa}) \\sqrt{(1+C_{aa})(1+C_{cc}) - C_{ac}^2}}

    I_4(a,b,c,d) = E[g'(x_a) g'(x_b) g(x_c) g(x_d)] = \\frac{4}{\\pi^2} \\Lambda_4^{-1/2}
                   \\arcsin \\frac{\\Lambda_0}{\\sqrt{\\Lambda_1 \\Lambda_2}}

    J_2(a,b) = E[g'(x_a) g'(x_b)] = \\frac{2}{\\pi} \\left[(1+C_{aa})(1+C_{bb}) - C_{ab}^2\\right]^{-1/2}

with the Lambdas of Saad & Solla (1995), eq. (A.6). The functions below evaluate each of them for *all*
index tuples at once, as dense tensors over the fields (students first, then teachers), so that the drift of
the order parameters is a handful of ``einsum`` calls. They run under ``jax.numpy`` (default) or ``numpy``
(pass ``xp=numpy``) so the finite-N simulator can use them without JAX.

``gauss_hermite_*`` give the same averages for any activation by tensor-product Gauss-Hermite quadrature;
they check the closed forms and serve activations without one (ReLU, tanh).

References: Saad & Solla, Phys. Rev. E 52, 4225 (1995), appendix; Mori, Sarao Mannelli & Mignacco,
ICLR 2025 (arXiv 2409.18061), section 2 and appendix A.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["erf_i2", "erf_i3", "erf_i4", "erf_j2", "gauss_hermite_expectation"]

_2PI = 2.0 / math.pi
_4PI2 = 4.0 / math.pi ** 2


def _jnp():
    import jax.numpy as jnp  # noqa: PLC0415 - numpy users never pay for JAX

    return jnp


def erf_i2(C: Any, *, xp: Any = None) -> Any:
    """``I2[a, b] = E[g(x_a) g(x_b)]`` for every pair of fields, shape ``(D, D)``."""
    xp = xp or _jnp()
    d1 = 1.0 + xp.diagonal(C)
    return _2PI * xp.arcsin(C / xp.sqrt(d1[:, None] * d1[None, :]))


def erf_i3(C: Any, n_first: int, *, xp: Any = None) -> Any:
    """``I3[a, b, c] = E[g'(x_a) x_b g(x_c)]`` for ``a < n_first`` and all ``b, c``: shape ``(n_first, D, D)``."""
    xp = xp or _jnp()
    d1 = 1.0 + xp.diagonal(C)
    da = d1[:n_first, None, None]
    Ca = C[:n_first]                       # (A, D): C_ab as [a, b], C_ac as [a, c]
    lam3 = da[:, :, 0] * d1[None, :] - Ca ** 2          # (A, D) over (a, c)
    num = C[None, :, :] * da - Ca[:, :, None] * Ca[:, None, :]   # (A, D_b, D_c)
    return _2PI * num / (da * xp.sqrt(lam3)[:, None, :])


def erf_i4(C: Any, n_first: int, *, xp: Any = None) -> Any:
    """``I4[a, b, c, d] = E[g'(x_a) g'(x_b) g(x_c) g(x_d)]`` for ``a, b < n_first``: shape ``(A, A, D, D)``."""
    xp = xp or _jnp()
    A = n_first
    d1 = 1.0 + xp.diagonal(C)
    C11 = d1[:A, None, None, None]
    C22 = d1[None, :A, None, None]
    C33 = d1[None, None, :, None]
    C44 = d1[None, None, None, :]
    C12 = C[:A, :A][:, :, None, None]
    C13 = C[:A][:, None, :, None]
    C14 = C[:A][:, None, None, :]
    C23 = C[:A][None, :, :, None]
    C24 = C[:A][None, :, None, :]
    C34 = C[None, None, :, :]
    lam4 = C11 * C22 - C12 ** 2
    lam0 = lam4 * C34 - C23 * C24 * C11 - C13 * C14 * C22 + C12 * C13 * C24 + C12 * C14 * C23
    lam1 = lam4 * C33 - C23 ** 2 * C11 - C13 ** 2 * C22 + 2.0 * C12 * C13 * C23
    lam2 = lam4 * C44 - C24 ** 2 * C11 - C14 ** 2 * C22 + 2.0 * C12 * C14 * C24
    # clip guards the arcsin against round-off just past +-1 (exactly collinear fields)
    arg = xp.clip(lam0 / xp.sqrt(lam1 * lam2), -1.0, 1.0)
    return _4PI2 * xp.arcsin(arg) / xp.sqrt(lam4)


def erf_j2(C: Any, n_first: int, *, xp: Any = None) -> Any:
    """``J2[a, b] = E[g'(x_a) g'(x_b)]`` for ``a, b < n_first``: shape ``(A, A)`` (the label-noise term)."""
    xp = xp or _jnp()
    d1 = 1.0 + xp.diagonal(C)[:n_first]
    Cs = C[:n_first, :n_first]
    return _2PI / xp.sqrt(d1[:, None] * d1[None, :] - Cs ** 2)


def gauss_hermite_expectation(fn: Callable[..., np.ndarray], C: Any, *, n_nodes: int = 24) -> float:
    """``E[fn(x_1, ..., x_m)]`` for ``x ~ N(0, C)`` by tensor-product Gauss-Hermite quadrature (numpy).

    ``C`` is the ``m x m`` covariance of the fields that ``fn`` takes (``m <= 4``); the nodes are mapped
    through the Cholesky factor (an eigen-decomposition for a singular ``C``). With 24 nodes per axis the
    erf integrals are exact to about 1e-8.
    """
    C = np.asarray(C, dtype=np.float64)
    if C.ndim != 2 or C.shape[0] != C.shape[1] or not 1 <= C.shape[0] <= 4:
        raise ValueError(f"C must be a square covariance of 1 to 4 fields, got shape {C.shape}")
    if not np.all(np.isfinite(C)):
        raise ValueError("C must be finite")
    m = C.shape[0]
    evals, evecs = np.linalg.eigh((C + C.T) / 2)
    if evals.min() < -1e-9 * max(1.0, evals.max()):
        raise ValueError("C must be positive semi-definite")
    L = evecs * np.sqrt(np.clip(evals, 0.0, None))
    z, w = np.polynomial.hermite_e.hermegauss(n_nodes)   # weight exp(-z^2/2)
    w = w / math.sqrt(2 * math.pi)
    grid = np.array(list(itertools.product(range(n_nodes), repeat=m)))
    Z = z[grid]                                          # (n^m, m)
    W = np.prod(w[grid], axis=1)
    X = Z @ L.T
    return float(np.sum(W * fn(*X.T)))
