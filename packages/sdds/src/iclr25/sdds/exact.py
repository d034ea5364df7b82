"""Exact ground truth: Ising free energy, internal energy and entropy per spin; exact and greedy MIS.

References: Sanokowski et al., ICLR 2025, Sec. 5.2 (exact values of the finite periodic lattice, which the
paper takes from Kaufman's formula, as here; a row transfer matrix cross-checks it) and
Sec. 5.1 (Gurobi optimum of the CO benchmarks; here HiGHS through ``scipy.optimize.milp``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .energy import Energy
from .graphs import lattice_edges

__all__ = ["ExactIsing", "exact_ising", "exact_ising_transfer", "exact_enumeration", "exact_mis", "greedy_mis", "BETA_CRITICAL"]

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


def _log_2cosh(x: np.ndarray) -> np.ndarray:
    a = np.abs(x)
    return a + np.log1p(np.exp(-2.0 * a))


def _log_2sinh(x: np.ndarray) -> np.ndarray:
    """log(2 sinh x) for x > 0, without overflow."""
    return x + np.log1p(-np.exp(-2.0 * x))


def exact_ising(L: int, beta: float) -> ExactIsing:
    r"""Exact F, U, S per spin of the ferromagnetic Ising model on the periodic L x L lattice (Kaufman).

    Kaufman's closed form for the finite periodic m x n lattice (here m = n = L, K = beta):

    .. math::
        Z = \tfrac12 (2 \sinh 2K)^{mn/2} \sum_{i=1}^{4} Z_i,\quad
        Z_{1,2} = \prod_{r=0}^{n-1} 2 \{\cosh, \sinh\}(\tfrac m2 \gamma_{2r+1}),\quad
        Z_{3,4} = \prod_{r=0}^{n-1} 2 \{\cosh, \sinh\}(\tfrac m2 \gamma_{2r}),

    with :math:`\cosh \gamma_k = \cosh 2K \coth 2K - \cos(\pi k / n)` (k >= 1) and
    :math:`\gamma_0 = 2K + \ln \tanh K` (negative above T_c, zero at K_c); U = -d ln Z / d beta / N from the
    analytic derivative of every factor. O(L) work, so any L; equal to the row transfer matrix
    (:func:`exact_ising_transfer`, L <= 12) and to enumeration to machine precision (tested).

    Parameters
    ----------
    L : int
        Lattice side, >= 3.
    beta : float
        Inverse temperature, > 0.

    Returns
    -------
    ExactIsing
        ``log_z`` (total), and free energy, internal energy, entropy per spin.

    References: Sanokowski et al., ICLR 2025, Sec. 5.2; Kaufman, Phys. Rev. 76, 1232 (1949); Beale,
    Phys. Rev. Lett. 76, 78 (1996), Eq. 1-3.

    Examples
    --------
    >>> round(exact_ising(4, 0.44068679350977147).free_energy, 6)
    -2.201381
    """
    lattice_edges(L)  # validates L
    K = _check_beta(beta)
    m = n = int(L)
    k = np.arange(2 * n)
    c = np.cosh(2 * K) / np.tanh(2 * K)
    dc = 2 * np.cosh(2 * K) * (1 - 1 / np.sinh(2 * K) ** 2)  # d c / dK
    gamma, dgamma = np.empty(2 * n), np.empty(2 * n)
    gamma[1:] = np.arccosh(c - np.cos(np.pi * k[1:] / n))  # k >= 1: c - cos > 1, so gamma > 0
    dgamma[1:] = dc / np.sinh(gamma[1:])
    gamma[0] = 2 * K + np.log(np.tanh(K))
    dgamma[0] = 2 + 2 / np.sinh(2 * K)
    h = m / 2
    g_odd, d_odd = h * gamma[1::2], h * dgamma[1::2]
    g_even, d_even = h * gamma[2::2], h * dgamma[2::2]  # r >= 1; the r = 0 factor (gamma_0) apart
    a0, d0 = h * gamma[0], h * dgamma[0]
    # log Z_i and d log Z_i / dK of Z_1..Z_3 (positive) and of P = prod_{r>=1} 2 sinh(h gamma_2r) in
    # Z_4 = 2 sinh(a0) P, whose sign is that of gamma_0 (and which vanishes at K_c)
    logs = np.array([_log_2cosh(g_odd).sum(), _log_2sinh(g_odd).sum(),
                     _log_2cosh(g_even).sum() + _log_2cosh(a0), _log_2sinh(g_even).sum()])
    dlogs = np.array([(np.tanh(g_odd) * d_odd).sum(), (d_odd / np.tanh(g_odd)).sum(),
                      (np.tanh(g_even) * d_even).sum() + np.tanh(a0) * d0, (d_even / np.tanh(g_even)).sum()])
    top = max(logs.max(), logs[3] + (_log_2sinh(abs(a0)) if a0 else -np.inf))
    scale = np.exp(logs - top)
    total, dtotal = float(np.sum(scale[:3])), float(np.sum(scale[:3] * dlogs[:3]))
    if a0 != 0:  # Z_4 = sign(a0) exp(log 2 sinh|a0| + log P)
        z4 = np.sign(a0) * np.exp(_log_2sinh(abs(a0)) + logs[3] - top)
        total += z4
        dtotal += z4 * (d0 / np.tanh(a0) + dlogs[3])
    else:  # at K_c exactly: Z_4 = 0, d Z_4 / dK = 2 d0 P
        dtotal += 2 * d0 * scale[3]
    N = m * n
    log_z = np.log(0.5) + 0.5 * N * np.log(2 * np.sinh(2 * K)) + top + np.log(total)
    dlogz = N / np.tanh(2 * K) + dtotal / total
    U = -dlogz / N
    F = -log_z / (K * N)
    return ExactIsing(float(log_z), float(F), float(U), float(K * (U - F)))


def exact_ising_transfer(L: int, beta: float) -> ExactIsing:
    r"""The same values as :func:`exact_ising` from the row-to-row transfer matrix (a cross-check, L <= 12).

    :math:`T_{s s'} = \exp(\beta[\tfrac12 H(s) + \tfrac12 H(s') + s \cdot s'])` with
    :math:`H(s) = \sum_i s_i s_{i+1}` (periodic): :math:`Z = \mathrm{Tr}\, T^L = \sum_k \lambda_k^L`, and
    :math:`\partial_\beta \ln Z = L \sum_k \lambda_k^{L-1} v_k^\top T' v_k / Z` (exact for any orthonormal
    eigenbasis of the symmetric T). Dense 2^L x 2^L eigendecomposition: about 100 s at L = 12.

    References: Kaufman, Phys. Rev. 76, 1232 (1949) (the transfer-matrix method).
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
