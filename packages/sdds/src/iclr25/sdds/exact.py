"""Exact ground truth: Ising free energy, internal energy and entropy per spin; exact and greedy MIS.

References: Sanokowski et al., ICLR 2025, Sec. 5.2 (exact values of the finite periodic lattice, which the
paper takes from Kaufman's formula; here a transfer matrix gives the same numbers to machine precision) and
Sec. 5.1 (Gurobi optimum of the CO benchmarks; here HiGHS through ``scipy.optimize.milp``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .energy import Energy
from .graphs import lattice_edges

__all__ = ["ExactIsing", "exact_ising", "exact_enumeration", "exact_mis", "greedy_mis", "BETA_CRITICAL"]

#: Inverse critical temperature of the infinite square-lattice Ising model, 1/2 ln(1 + sqrt 2).
BETA_CRITICAL = 0.5 * np.log1p(np.sqrt(2.0))


@dataclasses.dataclass(frozen=True)
class ExactIsing:
    """Exact thermodynamics of a finite system, per spin: F = -ln Z / (beta N), U = <E>/N, S = beta (U - F)."""

    log_z: float
    free_energy: float
    internal_energy: float
    entropy: float


def _check_beta(beta: Any) -> float:
    if isinstance(beta, bool) or not isinstance(beta, (int, float, np.floating, np.integer)):
        raise TypeError(f"beta must be a real number, got {type(beta).__name__}")
    b = float(beta)
    if not np.isfinite(b) or b <= 0:
        raise ValueError(f"beta (inverse temperature) must be finite and > 0, got {beta}")
    return b


def exact_ising(L: int, beta: float) -> ExactIsing:
    r"""Exact F, U, S per spin of the ferromagnetic Ising model on the periodic L x L lattice.

    Row-to-row transfer matrix :math:`T_{s s'} = \exp(\beta[\tfrac12 H(s) + \tfrac12 H(s') + s \cdot s'])`
    with :math:`H(s) = \sum_i s_i s_{i+1}` (periodic): :math:`Z = \mathrm{Tr}\, T^L = \sum_k \lambda_k^L`, and
    :math:`\partial_\beta \ln Z = L \sum_k \lambda_k^{L-1} v_k^\top T' v_k / Z` (exact for any orthonormal
    eigenbasis of the symmetric T).

    Parameters
    ----------
    L : int
        Lattice side, 3 <= L <= 12 (the transfer matrix has 2^L rows).
    beta : float
        Inverse temperature, > 0.

    Returns
    -------
    ExactIsing
        ``log_z`` (total), and free energy, internal energy, entropy per spin.

    References: Sanokowski et al., ICLR 2025, Sec. 5.2; Kaufman, Phys. Rev. 76, 1232 (1949).

    Examples
    --------
    >>> round(exact_ising(4, 0.44068679350977147).free_energy, 6)
    -2.201381
    """
    lattice_edges(L)  # validates L
    if L > 12:
        raise ValueError(f"L must be <= 12 for the exact transfer matrix (2^L states per row), got {L}")
    b = _check_beta(beta)
    states = 1 - 2 * ((np.arange(2**L)[:, None] >> np.arange(L)[None, :]) & 1)  # (2^L, L) spins
    h_row = np.sum(states * np.roll(states, -1, axis=1), axis=1).astype(np.float64)
    inter = (states @ states.T).astype(np.float64)
    e_mat = 0.5 * h_row[:, None] + 0.5 * h_row[None, :] + inter  # minus the energy per row pair
    shift = e_mat.max()  # scale out the largest entry so that high beta does not overflow
    T = np.exp(b * (e_mat - shift))
    lam, vec = np.linalg.eigh(T)
    lam_max = np.max(np.abs(lam))
    r = lam / lam_max
    z_scaled = np.sum(r**L)
    log_z = L * (np.log(lam_max) + b * shift) + np.log(z_scaled)
    # dT/dbeta = (e_mat - shift) * T; the shift adds -L*shift*Z, restored below
    dT = (e_mat - shift) * T
    diag = np.einsum("ik,ij,jk->k", vec, dT, vec) / lam_max
    dlogz = L * np.sum(r ** (L - 1) * diag) / z_scaled + L * shift
    n = L * L
    U = -dlogz / n
    F = -log_z / (b * n)
    return ExactIsing(float(log_z), float(F), float(U), float(b * (U - F)))


def exact_enumeration(energy: Energy, beta: float, *, index: int = 0) -> ExactIsing:
    """Brute-force F, U, S per variable of any energy with N <= 22 variables (enumerates all 2^N states)."""
    b = _check_beta(beta)
    n = energy.n_nodes
    if n > 22:
        raise ValueError(f"exact_enumeration needs N <= 22 variables, the energy has {n}")
    log_terms, energies = [], []
    chunk = 1 << min(n, 16)
    for start in range(0, 2**n, chunk):
        ids = np.arange(start, min(start + chunk, 2**n))
        x = ((ids[:, None] >> np.arange(n)[None, :]) & 1).astype(np.float32)
        e = energy(x, index)
        energies.append(e)
        log_terms.append(-b * e)
    e_all = np.concatenate(energies)
    lt = np.concatenate(log_terms)
    m = lt.max()
    w = np.exp(lt - m)
    log_z = m + np.log(w.sum())
    U = float(np.sum(w * e_all) / w.sum()) / n
    F = -log_z / (b * n)
    return ExactIsing(float(log_z), float(F), U, float(b * (U - F)))


def exact_mis(n_nodes: int, edges: Any, *, time_limit: float = 60.0) -> np.ndarray:
    r"""A maximum independent set by integer programming (HiGHS via ``scipy.optimize.milp``).

    .. math:: \max \sum_i x_i \quad \text{s.t.}\quad x_i + x_j \le 1 \;\forall (ij) \in \mathcal{E},\; x \in \{0,1\}^N

    Returns the 0/1 indicator of the set (N,). Raises ``RuntimeError`` if HiGHS does not prove optimality
    within ``time_limit`` seconds.
    """
    if isinstance(n_nodes, bool) or not isinstance(n_nodes, (int, np.integer)) or n_nodes < 1:
        raise ValueError(f"n_nodes must be a positive integer, got {n_nodes!r}")
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    if e.size and (e.min() < 0 or e.max() >= n_nodes):
        raise ValueError(f"edges must be node ids in [0, {n_nodes}), got [{e.min()}, {e.max()}]")
    import scipy.optimize  # noqa: PLC0415 - takes ~0.8 s to import; only exact_mis needs it
    import scipy.sparse  # noqa: PLC0415

    c = -np.ones(n_nodes)
    cons = []
    if len(e):
        rows = np.repeat(np.arange(len(e)), 2)
        A = scipy.sparse.csr_array((np.ones(2 * len(e)), (rows, e.ravel())), shape=(len(e), n_nodes))
        cons.append(scipy.optimize.LinearConstraint(A, -np.inf, 1.0))
    res = scipy.optimize.milp(c, constraints=cons, integrality=np.ones(n_nodes),
                              bounds=scipy.optimize.Bounds(0, 1), options={"time_limit": time_limit})
    if res.status != 0:
        raise RuntimeError(f"MILP did not prove optimality: {res.message}")
    return np.round(res.x).astype(np.int8)


def greedy_mis(n_nodes: int, edges: Any) -> np.ndarray:
    """Min-degree greedy MIS: repeatedly take a node of least remaining degree and delete its neighbours."""
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    adj = [set() for _ in range(n_nodes)]
    for u, v in e:
        adj[u].add(v)
        adj[v].add(u)
    alive = set(range(n_nodes))
    chosen = np.zeros(n_nodes, np.int8)
    while alive:
        u = min(alive, key=lambda k: (len(adj[k] & alive), k))
        chosen[u] = 1
        alive -= adj[u] | {u}
    return chosen
