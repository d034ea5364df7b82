"""Over-squashing diagnostics: spectral gap of the normalised Laplacian and effective resistance."""

from __future__ import annotations

from typing import Any

import numpy as np

from .graph import as_edge_index

__all__ = ["spectral_gap", "effective_resistance"]


def _adjacency(edge_index: Any, n_nodes: int | None) -> tuple[np.ndarray, int]:
    ei, n = as_edge_index(edge_index, n_nodes)
    A = np.zeros((n, n))
    A[ei[0], ei[1]] = 1.0
    return A, n


def spectral_gap(edge_index: Any, *, n_nodes: int | None = None) -> float:
    """Second-smallest eigenvalue :math:`\\lambda_2` of :math:`L = I - D^{-1/2} A D^{-1/2}`.

    A larger gap means a better-connected graph (Cheeger: :math:`\\lambda_2/2 \\le h_G`); 0 for a
    disconnected graph. Dense: meant for graphs of up to a few thousand nodes.

    References
    ----------
    Yu et al., PIORF, ICLR 2025, Sec. 2 (over-squashing and the Cheeger constant); Chung (1997).
    """
    A, n = _adjacency(edge_index, n_nodes)
    deg = A.sum(axis=1)
    d = np.divide(1.0, np.sqrt(deg), out=np.zeros(n), where=deg > 0)
    L = np.eye(n) - d[:, None] * A * d[None, :]
    from scipy.linalg import eigh

    vals = eigh(L, eigvals_only=True, subset_by_index=[0, 1])
    return float(max(vals[1], 0.0))


def effective_resistance(edge_index: Any, sources: Any, *, n_nodes: int | None = None) -> float:
    """Mean effective resistance from the ``sources`` to every node.

    .. math::

        \\bar R = \\frac{1}{|S|N}\\sum_{s\\in S}\\sum_{v} (e_s - e_v)^\\top L^{+} (e_s - e_v)
        = \\frac{1}{|S|}\\sum_{s\\in S} L^{+}_{ss} + \\frac{\\operatorname{tr} L^{+}}{N}

    with the combinatorial Laplacian :math:`L = D - A` of a connected graph. Lower means less
    over-squashing between the sources and the rest (Black et al., ICML 2023).

    References
    ----------
    Black, Wan, Nayyeri, Wang, "Understanding oversquashing in GNNs through the lens of effective
    resistance", ICML 2023, Sec. 3.
    """
    A, n = _adjacency(edge_index, n_nodes)
    S = np.asarray(sources)
    if S.ndim != 1 or S.size == 0 or not np.issubdtype(S.dtype, np.integer):
        raise ValueError(f"sources must be a non-empty 1-D integer array of node ids, got {S!r}")
    if S.min() < 0 or S.max() >= n:
        raise ValueError(f"sources must be node ids in [0, {n}), got range [{S.min()}, {S.max()}]")
    L = np.diag(A.sum(axis=1)) - A
    J = np.full((n, n), 1.0 / n)
    from scipy.linalg import LinAlgError, cho_factor, cho_solve

    try:
        Lp = cho_solve(cho_factor(L + J), np.eye(n)) - J  # L^+ of a connected graph
    except LinAlgError as exc:
        raise ValueError("edge_index must describe a connected graph for effective resistance") from exc
    return float(np.mean(np.diag(Lp)[S]) + np.trace(Lp) / n)
