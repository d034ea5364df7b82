"""What the exact and the entropic solvers share: the result type, the tensor product, the initial plan and
the scalar validators. Both ``solver`` and ``entropic`` import from here, so neither imports the other at
import time (``solver`` calls into ``entropic`` for ``method="entropic"``; ``entropic`` never needs ``solver``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

__all__ = ["PGWResult", "tensor_product", "default_init"]


@dataclasses.dataclass(frozen=True)
class PGWResult:
    """The result of one PGW solve.

    Attributes
    ----------
    distance : float
        The metric, ``sqrt(max(0, transport_cost + penalty))``.
    transport_cost : float
        :math:`\\sum (C_1[i,i'] - C_2[j,j'])^2 \\gamma_{ij}\\gamma_{i'j'}`.
    penalty : float
        :math:`\\lambda(|p|^2 + |q|^2 - 2|\\gamma|^2)`.
    plan : numpy.ndarray
        The partial transport plan :math:`\\gamma` (n, m).
    mass : float
        Transported mass :math:`|\\gamma|`.
    n_iter : int
        Frank-Wolfe iterations of the best start.
    converged : bool
        Whether the best start stopped on its tolerance (rather than on ``max_iter``).
    method : str
        The solver used.
    """

    distance: float
    transport_cost: float
    penalty: float
    plan: np.ndarray
    mass: float
    n_iter: int
    converged: bool
    method: str = "fw-v1"

    @property
    def objective(self) -> float:
        """The PGW objective (transport cost + penalty), i.e. ``distance**2`` when non-negative."""
        return self.transport_cost + self.penalty


def tensor_product(C1: np.ndarray, C2: np.ndarray, G: np.ndarray, *, C1sq: np.ndarray | None = None,
                   C2sq: np.ndarray | None = None) -> np.ndarray:
    """The tensor product :math:`(L\\circ G)_{ij} = \\sum_{i'j'} (C_1[i,i'] - C_2[j,j'])^2 G_{i'j'}`.

    .. math:: L\\circ G = C_1^{2} (G1) 1^T + 1 (G^T 1)^T C_2^{2} - 2 C_1 G C_2

    for symmetric C1, C2, in O(n^2 m + n m^2) instead of O(n^2 m^2).

    References: paper Sec. 4, Proposition on the tensor product (Peyré et al. 2016, Prop. 1).
    """
    C1sq = C1 * C1 if C1sq is None else C1sq
    C2sq = C2 * C2 if C2sq is None else C2sq
    return ((C1sq @ G.sum(1))[:, None] + (C2sq @ G.sum(0))[None, :]) - 2.0 * ((C1 @ G) @ C2)


def default_init(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The paper's initial plan :math:`G_0 = p q^T \\min(|p|,|q|) / (|p||q|)` (feasible, mass min(|p|,|q|))."""
    mp, mq = p.sum(), q.sum()
    return np.outer(p, q) * (min(mp, mq) / (mp * mq))


def _check_int(x: Any, name: str, low: int) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{name} must be an integer >= {low}, got {type(x).__name__}")
    if x < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {x}")
    return int(x)


def _check_pos(x: Any, name: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a positive real number, got {type(x).__name__}")
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {x}")
    return float(x)
