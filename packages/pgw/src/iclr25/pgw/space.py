"""Metric measure spaces (mm-spaces): a distance matrix ``C`` with a non-negative mass ``p`` on its points.

The validators here are shared by every solver so that bad input fails the same way everywhere, with a
message that names the argument and what was expected.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from scipy.spatial.distance import cdist

__all__ = ["MMSpace", "mm_space", "default_lam", "as_matrix", "as_masses", "as_lam", "as_int", "as_positive",
           "point_masses", "as_real_array"]

_METRICS = ("euclidean", "sqeuclidean", "cityblock", "chebyshev")


def _as_float_array(x: Any, name: str) -> np.ndarray:
    """A float64 numpy copy of a numpy/JAX/list input; non-numeric or complex input is a TypeError."""
    if x is None:
        raise TypeError(f"{name} must be an array of real numbers, got None")
    try:
        arr = np.asarray(x)
    except Exception as exc:  # noqa: BLE001 - any conversion failure is a type problem of the input
        raise TypeError(f"{name} must be an array of real numbers ({exc})") from exc
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
        raise TypeError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"{name} must be real, got complex dtype {arr.dtype}")
    if arr.dtype == np.bool_:
        raise TypeError(f"{name} must be an array of real numbers, got booleans")
    return np.array(arr, dtype=np.float64)


def as_real_array(x: Any, name: str) -> np.ndarray:
    """``x`` as a float64 numpy copy; complex, boolean or non-numeric input is a ``TypeError`` naming ``name``
    (a complex array is never cast to its real part).

    >>> as_real_array([1, 2], "lams").dtype
    dtype('float64')
    >>> as_real_array([1j], "lams")
    Traceback (most recent call last):
    TypeError: lams must be real, got complex dtype complex128
    """
    return _as_float_array(x, name)


def as_matrix(C: Any, name: str = "C") -> np.ndarray:
    """Validate a distance matrix: square, finite, symmetric, non-negative; returns float64.

    Raises
    ------
    TypeError
        For non-numeric input.
    ValueError
        For a non-square, empty, non-finite, asymmetric or negative matrix.
    """
    C = _as_float_array(C, name)
    if C.ndim != 2 or C.shape[0] != C.shape[1]:
        raise ValueError(f"{name} must be a square (n, n) distance matrix, got shape {C.shape}")
    if C.shape[0] == 0:
        raise ValueError(f"{name} must have at least one point, got shape {C.shape}")
    if not np.all(np.isfinite(C)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    scale = max(float(np.abs(C).max()), 1.0)
    if not np.allclose(C, C.T, rtol=0.0, atol=1e-9 * scale):
        raise ValueError(f"{name} must be symmetric (max |{name} - {name}.T| = {np.abs(C - C.T).max():.3g})")
    if C.min() < 0:
        raise ValueError(f"{name} must be non-negative, got a minimum of {C.min():.3g}")
    return 0.5 * (C + C.T)


def as_masses(p: Any, n: int, name: str = "p") -> np.ndarray:
    """Validate a mass vector of length ``n``: finite, non-negative, with a positive total."""
    p = _as_float_array(p, name)
    if p.ndim != 1:
        raise ValueError(f"{name} must be a 1-D mass vector, got shape {p.shape}")
    if p.shape[0] != n:
        raise ValueError(f"{name} must have one mass per point ({n}), got length {p.shape[0]}")
    if not np.all(np.isfinite(p)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    if p.min() < 0:
        raise ValueError(f"{name} must be non-negative, got a minimum of {p.min():.3g}")
    if p.sum() <= 0:
        raise ValueError(f"{name} must have a positive total mass, got {p.sum():.3g}")
    return p


def as_lam(lam: Any, name: str = "lam") -> float:
    """Validate the PGW penalty: a finite real number > 0."""
    if isinstance(lam, bool) or not isinstance(lam, (int, float, np.integer, np.floating)):
        try:
            arr = np.asarray(lam)
        except Exception as exc:  # noqa: BLE001
            raise TypeError(f"{name} must be a real number, got {type(lam).__name__}") from exc
        if arr.shape != () or not np.issubdtype(arr.dtype, np.number) or np.iscomplexobj(arr):
            raise TypeError(f"{name} must be a real number, got {type(lam).__name__}")
        lam = arr.item()
    lam = float(lam)
    if not np.isfinite(lam) or lam <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {lam}")
    return lam


def as_int(x: Any, name: str, low: int) -> int:
    """Validate an integer option ``>= low`` (booleans are rejected)."""
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{name} must be an integer >= {low}, got {type(x).__name__}")
    if x < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {x}")
    return int(x)


def as_positive(x: Any, name: str) -> float:
    """Validate a finite real option ``> 0``."""
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a positive real number, got {type(x).__name__}")
    if not np.isfinite(x) or x <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {x}")
    return float(x)


@dataclasses.dataclass(frozen=True)
class MMSpace:
    """A metric measure space: distances ``C`` (n, n) and masses ``p`` (n,).

    The total mass ``p.sum()`` is not normalised: PGW compares spaces of different total mass.
    """

    C: np.ndarray
    p: np.ndarray

    def __post_init__(self) -> None:
        C = as_matrix(self.C, "C")
        p = as_masses(self.p, C.shape[0], "p")
        C.setflags(write=False)
        p.setflags(write=False)
        object.__setattr__(self, "C", C)
        object.__setattr__(self, "p", p)

    @property
    def n(self) -> int:
        """Number of points."""
        return int(self.C.shape[0])

    @property
    def mass(self) -> float:
        """Total mass ``|p|``."""
        return float(self.p.sum())


def mm_space(X: Any, mass: Any = None, metric: str = "euclidean") -> MMSpace:
    """A point cloud as a metric measure space.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Points (numpy or JAX array).
    mass : float or array_like of shape (n,), optional
        Mass per point. Default: one unit per point, so clouds of different sizes have different total
        masses (the unbalanced setting of the paper). A scalar gives every point that mass.
    metric : {"euclidean", "sqeuclidean", "cityblock", "chebyshev"}
        Ground distance; the paper uses Euclidean distances.

    Returns
    -------
    MMSpace
        ``C[i, j] = d(x_i, x_j)`` and ``p``.

    Examples
    --------
    >>> s = mm_space([[0.0, 0.0], [3.0, 4.0]])
    >>> float(s.C[0, 1]), s.mass
    (5.0, 2.0)
    """
    X = _as_float_array(X, "X")
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must be an (n_points, dim) array with n_points >= 1, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X must be finite (no NaN or inf)")
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {_METRICS}, got {metric!r}")
    C = cdist(X, X, metric=metric)
    n = X.shape[0]
    return MMSpace(C, np.ones(n) if mass is None else point_masses(mass, n))


def point_masses(mass: Any, n: int) -> np.ndarray:
    """``n`` point masses from ``mass``: a scalar is the mass of every point, an (n,) array is checked."""
    m = _as_float_array(mass, "mass")
    return as_masses(np.full(n, float(m)) if m.ndim == 0 else m, n, "mass")


def default_lam(spaces: Any, fraction: float = 0.2) -> float:
    """The paper's penalty rule :math:`\\lambda = f \\max_s \\max C_s^2` with ``f = fraction`` (1/5).

    A pair of points is matched only when its distortion is below :math:`2\\lambda`, so the fraction sets how
    much distortion PGW tolerates before it drops mass.

    References: paper Sec. 5 (shape retrieval experiments).

    Examples
    --------
    >>> default_lam([mm_space([[0.0], [2.0]])])
    0.8
    """
    if isinstance(spaces, MMSpace):
        spaces = [spaces]
    if not hasattr(spaces, "__len__") or len(spaces) == 0:
        raise ValueError("spaces must be a non-empty sequence of MMSpace")
    if not all(isinstance(s, MMSpace) for s in spaces):
        raise TypeError("spaces must hold MMSpace objects (see mm_space)")
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction < np.inf:
        raise ValueError(f"fraction must be a finite number > 0, got {fraction!r}")
    top = max(float(s.C.max()) for s in spaces)
    if top <= 0:
        raise ValueError("spaces must not all be single points (max distance 0)")
    return float(fraction) * top**2
