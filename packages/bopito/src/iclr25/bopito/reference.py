"""The exact reference: a grid discretisation of the overdamped-Langevin generator by the square-root
approximation (SqRA), its spectrum and the exact propagator ``P(N) = expm(Q N Δt)``.

.. math::

    Q_{ij} = \\frac{D}{\\Delta x^2}\\sqrt{\\pi_j / \\pi_i}\\quad (i, j \\text{ grid neighbours}),\\qquad
    Q_{ii} = -\\sum_{j \\ne i} Q_{ij},\\qquad \\pi_i \\propto e^{-V(x_i)/k_BT},\\quad D = k_BT/(m\\gamma).

``Q`` is reversible with respect to ``π``, so ``S = diag(√π) Q diag(1/√π)`` is symmetric; its eigenpairs
``(q_k, v_k)`` give every lag at once: ``P(N) = diag(1/√π) V e^{q N Δt} V^T diag(√π)`` (checked against
``scipy.linalg.expm`` in the tests), eigenvalues per frame ``λ_k = e^{q_k Δt}`` and implied timescales
``t_k = -1/(q_k Δt)`` frames, and the exact normalised correlation function of an observable ``f``:

.. math::

    C(N) = \\frac{E_\\pi[\\tilde f(x_0) \\tilde f(x_N)]}{E_\\pi[\\tilde f^2]}
         = \\frac{\\sum_{k\\ge 2} λ_k^N (v_k^T(\\sqrt{π}\\tilde f))^2}{\\sum_{k\\ge 2}(v_k^T(\\sqrt{π}\\tilde f))^2}.

References: Lie, Fackeldey & Weber, "A square root approximation of transition rates for a Markov state
model", SIAM J. Matrix Anal. Appl. 34 (2013); Donati et al., J. Chem. Phys. 149 (2018) (SqRA on grids);
BoPITO (ICLR 2025), Sec. 5.1 (Prinz eigenvalues and timescales).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np
from scipy import sparse

from iclr25.utils.seeding import check_seed

from .systems import Potential, get_system

__all__ = ["ExactReference", "exact_reference", "sqra_generator", "wasserstein1"]


def sqra_generator(energy: np.ndarray, spacing: tuple[float, ...], *, kT: float = 1.0,
                   friction: float = 1.0) -> sparse.csr_matrix:
    """The SqRA rate matrix of a potential sampled on a regular grid (``energy`` of shape ``(n_1, ..., n_d)``).

    Rows sum to zero; states are the grid cells in C order. See the module docstring for the formula.
    """
    energy = np.asarray(energy, dtype=np.float64)
    if energy.ndim != len(spacing):
        raise ValueError(f"spacing must have one entry per grid axis ({energy.ndim}), got {len(spacing)}")
    D = kT / friction
    n = energy.size
    idx = np.arange(n).reshape(energy.shape)
    rows, cols, vals = [], [], []
    for axis, dx in enumerate(spacing):
        a = np.take(idx, np.arange(energy.shape[axis] - 1), axis=axis).ravel()
        b = np.take(idx, np.arange(1, energy.shape[axis]), axis=axis).ravel()
        ea, eb = energy.ravel()[a], energy.ravel()[b]
        # sqrt(pi_j / pi_i) = exp(-(V_j - V_i) / (2 kT))
        rows += [a, b]
        cols += [b, a]
        vals += [D / dx**2 * np.exp(-(eb - ea) / (2 * kT)), D / dx**2 * np.exp(-(ea - eb) / (2 * kT))]
    r, c, v = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
    Q = sparse.coo_matrix((v, (r, c)), shape=(n, n)).tocsr()
    Q = Q - sparse.diags(np.asarray(Q.sum(axis=1)).ravel())
    return Q.tocsr()


def wasserstein1(samples: Any, edges: np.ndarray, probs: np.ndarray) -> float:
    """1-D Wasserstein-1 distance between ``samples`` and a histogram density (cell ``edges``, masses
    ``probs``, uniform inside each cell): ``W1 = ∫ |F_samples(x) - F_ref(x)| dx``, integrated exactly between
    the merged breakpoints."""
    s = np.sort(np.asarray(samples, dtype=np.float64).ravel())
    if s.size == 0 or not np.all(np.isfinite(s)):
        raise ValueError("samples must be a non-empty finite array")
    edges = np.asarray(edges, dtype=np.float64)
    cdf_edges = np.concatenate([[0.0], np.cumsum(probs)])
    cdf_edges /= cdf_edges[-1]
    pts = np.unique(np.concatenate([edges, np.clip(s, edges[0] - 10, edges[-1] + 10)]))
    pts = np.concatenate([[min(pts[0], edges[0])], pts, [max(pts[-1], edges[-1])]])
    mids = 0.5 * (pts[1:] + pts[:-1])
    f_ref = np.interp(mids, edges, cdf_edges, left=0.0, right=1.0)
    f_s = np.searchsorted(s, mids, side="right") / s.size
    # F_ref is linear inside a cell; |F_s - F_ref| at the midpoint is exact unless the sign flips inside
    return float(np.sum(np.abs(f_s - f_ref) * np.diff(pts)))


@dataclasses.dataclass(frozen=True, eq=False)
class ExactReference:
    """Exact thermodynamics and kinetics of a potential on a grid (see the module docstring).

    Attributes: ``axes`` (cell centres per axis), ``edges`` (cell edges per axis), ``pi`` (Boltzmann mass per
    cell, C order), ``rates`` (generator eigenvalues ``q_k``, descending, ``q_1 = 0``), ``modes`` (symmetric
    eigenvectors, columns), ``frame_dt``.
    """

    system: str
    axes: tuple[np.ndarray, ...]
    edges: tuple[np.ndarray, ...]
    pi: np.ndarray
    rates: np.ndarray
    modes: np.ndarray
    frame_dt: float
    kT: float

    @property
    def dim(self) -> int:
        return len(self.axes)

    @property
    def points(self) -> np.ndarray:
        """Cell centres, ``(n_cells, dim)`` in C order."""
        mesh = np.meshgrid(*self.axes, indexing="ij")
        return np.stack([m.ravel() for m in mesh], axis=-1)

    @property
    def eigenvalues(self) -> np.ndarray:
        """Transfer-operator eigenvalues per frame, ``λ_k = exp(q_k Δt)`` (``λ_1 = 1``)."""
        return np.exp(self.rates * self.frame_dt)

    @property
    def timescales(self) -> np.ndarray:
        """Implied timescales in frames, ``-1 / (q_k Δt)`` for k >= 2."""
        return -1.0 / (self.rates[1:] * self.frame_dt)

    def density(self) -> np.ndarray:
        """Boltzmann density on the grid (mass per cell divided by the cell volume)."""
        vol = math.prod(float(e[1] - e[0]) for e in self.edges)
        return self.pi.reshape(tuple(len(a) for a in self.axes)) / vol

    def propagator(self, lag: float) -> np.ndarray:
        """The exact transition matrix ``P(lag) = expm(Q lag Δt)`` between cells (rows sum to 1)."""
        lag = _check_lag(lag)
        s = np.sqrt(self.pi)
        w = np.exp(self.rates * lag * self.frame_dt)
        return (self.modes * w) @ self.modes.T * (s[None, :] / s[:, None])

    def _observable(self, observable: Any) -> np.ndarray:
        if observable is None:
            return self.points[:, 0]
        f = np.asarray(observable, dtype=np.float64)
        if f.shape != self.pi.shape:
            raise ValueError(f"observable must hold one value per grid cell ({self.pi.size}), got {f.shape}")
        return f

    def correlation(self, lags: Any, observable: Any = None) -> np.ndarray:
        """Exact normalised correlation ``C(N)`` at each lag (frames) for ``observable`` (default: first
        coordinate), with ``x_0`` drawn from equilibrium."""
        lags = np.atleast_1d(np.asarray(lags, dtype=np.float64))
        for lag in lags:
            _check_lag(lag)
        f = self._observable(observable)
        ft = f - self.pi @ f
        c = (self.modes.T @ (np.sqrt(self.pi) * ft)) ** 2
        c[0] = 0.0
        lam = np.exp(np.outer(lags, self.rates) * self.frame_dt)
        return lam @ c / c.sum()

    def _cells_of(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64).reshape(-1, self.dim)
        idx = []
        for d in range(self.dim):
            e = self.edges[d]
            idx.append(np.clip(np.searchsorted(e, x[:, d]) - 1, 0, len(e) - 2))
        return np.ravel_multi_index(idx, tuple(len(a) for a in self.axes))

    def sample_boltzmann(self, n: int, *, seed: int = 0) -> np.ndarray:
        """``n`` exact samples of the (grid) Boltzmann distribution, ``(n, dim)``."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be an integer >= 1, got {n!r}")
        rng = np.random.default_rng(check_seed(seed))
        cdf = np.cumsum(self.pi)
        cells = np.minimum(np.searchsorted(cdf / cdf[-1], rng.random(int(n))), self.pi.size - 1)
        sub = np.unravel_index(cells, tuple(len(a) for a in self.axes))
        out = np.empty((int(n), self.dim))
        for d in range(self.dim):
            out[:, d] = self.edges[d][sub[d]] + (self.edges[d][1] - self.edges[d][0]) * rng.random(int(n))
        return out

    def sample_transition(self, x0: Any, lag: float, *, seed: int = 0) -> np.ndarray:
        """One exact sample of ``x_N ~ p(x_N | x_0, N)`` for each row of ``x0`` ``(m, dim)`` (or ``(m,)``)."""
        x0 = np.asarray(x0, dtype=np.float64).reshape(-1, self.dim)
        rng = np.random.default_rng(check_seed(seed))
        cells = self._cells_of(x0)
        P = self.propagator(lag)
        uniq, inv = np.unique(cells, return_inverse=True)
        cdf = np.cumsum(np.clip(P[uniq], 0.0, None), axis=1)
        cdf /= cdf[:, -1:]
        u = rng.random(len(cells))
        to = np.array([np.searchsorted(cdf[i], uu) for i, uu in zip(inv, u, strict=True)])
        to = np.minimum(to, self.pi.size - 1)
        sub = np.unravel_index(to, tuple(len(a) for a in self.axes))
        out = np.empty((len(cells), self.dim))
        for d in range(self.dim):
            out[:, d] = self.edges[d][sub[d]] + (self.edges[d][1] - self.edges[d][0]) * rng.random(len(cells))
        return out

    def sample_trajectories(self, n_traj: int, n_frames: int, *, seed: int = 0) -> np.ndarray:
        """Trajectories of the exact grid dynamics, ``(n_traj, n_frames, dim)``: a Markov chain on the cells with
        the exact one-frame propagator ``P(1)``, started from Boltzmann samples, each frame placed uniformly in
        its cell. Far cheaper than Euler-Maruyama (one step per frame instead of 500), with the same
        eigenvalues as the reference; the claims tests train on it, ``repro`` trains on simulated MD."""
        for v, name in ((n_traj, "n_traj"), (n_frames, "n_frames")):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        rng = np.random.default_rng(check_seed(seed))
        cdf = np.cumsum(np.clip(self.propagator(1), 0.0, None), axis=1)
        cdf /= cdf[:, -1:]
        shape = tuple(len(a) for a in self.axes)
        cells = self._cells_of(self.sample_boltzmann(int(n_traj), seed=seed + 1))
        out = np.empty((int(n_traj), int(n_frames), self.dim))
        for f in range(int(n_frames)):
            sub = np.unravel_index(cells, shape)
            for d in range(self.dim):
                e = self.edges[d]
                out[:, f, d] = e[sub[d]] + (e[1] - e[0]) * rng.random(len(cells))
            u = rng.random(len(cells))
            cells = np.minimum((cdf[cells] < u[:, None]).sum(axis=1), self.pi.size - 1)
        return out

    def w1_to_boltzmann(self, samples: Any, axis: int = 0) -> float:
        """W1 between samples (``(n,)`` or ``(n, dim)``) and the Boltzmann marginal along ``axis``."""
        s = np.asarray(samples, dtype=np.float64)
        s = s.reshape(-1, self.dim)[:, axis] if s.ndim > 1 or self.dim == 1 else s
        marg = self.pi.reshape(tuple(len(a) for a in self.axes))
        marg = marg.sum(axis=tuple(d for d in range(self.dim) if d != axis)) if self.dim > 1 else marg
        return wasserstein1(s, self.edges[axis], marg)


def _check_lag(lag: Any) -> float:
    if isinstance(lag, bool) or not isinstance(lag, (int, float, np.integer, np.floating)) or not (
            math.isfinite(float(lag)) and float(lag) >= 0):
        raise ValueError(f"lag must be a non-negative number of frames, got {lag!r}")
    return float(lag)


@functools.lru_cache(maxsize=8)
def _cached(name: str, n_grid: int, kT: float, friction: float, frame_dt: float, box: tuple) -> ExactReference:
    pot = get_system(name)
    edges = tuple(np.linspace(lo, hi, n_grid + 1) for lo, hi in box)
    axes = tuple(0.5 * (e[1:] + e[:-1]) for e in edges)
    mesh = np.meshgrid(*axes, indexing="ij")
    pts = np.stack([m.ravel() for m in mesh], axis=-1)
    energy = pot.energy(pts).reshape(tuple(len(a) for a in axes))
    Q = sqra_generator(energy, tuple(float(e[1] - e[0]) for e in edges), kT=kT, friction=friction)
    logpi = -(energy.ravel() - energy.min()) / kT
    pi = np.exp(logpi)
    pi /= pi.sum()
    s = np.sqrt(pi)
    S = (Q.toarray() * s[:, None]) / s[None, :]
    S = 0.5 * (S + S.T)
    rates, modes = np.linalg.eigh(S)
    order = np.argsort(rates)[::-1]
    rates, modes = rates[order], modes[:, order]
    rates[0] = 0.0
    return ExactReference(pot.name, axes, edges, pi, rates, modes, frame_dt, kT)


def exact_reference(system: str | Potential = "prinz", *, n_grid: int | None = None, kT: float = 1.0,
                    friction: float = 1.0, frame_dt: float | None = None) -> ExactReference:
    """The SqRA reference of a system on its box (default 800 cells for 1-D, 40 per axis for 2-D).

    ``frame_dt`` defaults to the system's ``h * steps_per_frame`` (5e-3 for Prinz).

    Examples
    --------
    >>> ref = exact_reference("prinz")
    >>> round(float(ref.timescales[0]), 0)
    167.0
    """
    pot = get_system(system)
    if pot.name not in {"prinz", "triple-well-2d"}:
        raise ValueError(f"system must be one of the built-in systems, got {pot.name!r}")
    if n_grid is None:
        n_grid = 800 if pot.dim == 1 else 40
    if isinstance(n_grid, bool) or not isinstance(n_grid, (int, np.integer)) or not 10 <= n_grid <= (
            4000 if pot.dim == 1 else 60):
        raise ValueError(f"n_grid must be an integer in [10, {4000 if pot.dim == 1 else 60}], got {n_grid!r}")
    for v, name in ((kT, "kT"), (friction, "friction")):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be a positive number, got {v!r}")
    frame_dt = pot.h * pot.steps_per_frame if frame_dt is None else frame_dt
    if not (isinstance(frame_dt, (int, float)) and math.isfinite(frame_dt) and frame_dt > 0):
        raise ValueError(f"frame_dt must be a positive number, got {frame_dt!r}")
    return _cached(pot.name, int(n_grid), float(kT), float(friction), float(frame_dt), pot.box)
