"""The exact Partial Gromov-Wasserstein solvers: two Frank-Wolfe variants with POT's network simplex
(``ot.emd``) as the linear minimisation oracle on the dummy-extended problem and an exact line search.

Notation (paper, Sec. 3-4). For mm-spaces (C1, p) with n points and (C2, q) with m points,

.. math::

    \\mathrm{PGW}_\\lambda = \\min_{\\gamma \\in \\Gamma_\\le(p, q)}
        \\sum_{i,i',j,j'} (C_1[i,i'] - C_2[j,j'])^2 \\gamma_{ij}\\gamma_{i'j'}
        + \\lambda (|p|^2 + |q|^2 - 2 |\\gamma|^2),

with :math:`\\Gamma_\\le(p,q) = \\{\\gamma \\ge 0: \\gamma 1 \\le p, \\gamma^T 1 \\le q\\}`. Writing
:math:`\\tilde M = L - 2\\lambda` (L the 4-way squared-difference tensor), the objective is
:math:`\\langle \\tilde M\\circ\\gamma, \\gamma\\rangle + \\lambda(|p|^2+|q|^2)` with the tensor product

.. math::

    (\\tilde M\\circ\\gamma) = C_1^{2}(\\gamma 1) 1^T + 1 (\\gamma^T 1)^T C_2^{2}
        - 2 C_1 \\gamma C_2 - 2\\lambda|\\gamma|,

computed in O(n^2 m + n m^2) (``C^2`` elementwise). The reported metric is
:math:`\\sqrt{\\max(0, \\text{transport} + \\text{penalty})}`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
from typing import Any

import numpy as np

from iclr25.utils.seeding import check_seed

from ._core import PGWResult, _check_int, _check_pos, default_init, tensor_product
from .entropic import DEFAULT_MAX_ITER, DEFAULT_TOL, entropic_pgw, entropic_pgw_pairs
from .space import MMSpace, as_lam, as_masses, as_matrix

__all__ = ["PGWResult", "pgw", "pgw_distance", "pgw_pairwise", "tensor_product", "pgw_objective",
           "default_init"]

METHODS = ("fw-v1", "fw-v2", "entropic")
_EMD_MAX_ITER = 1_000_000


# ---------------------------------------------------------------------------------------- building blocks
def pgw_objective(C1: Any, C2: Any, p: Any, q: Any, lam: float, plan: Any) -> tuple[float, float]:
    """Transport term and penalty of a partial plan: ``(sum L G G, lam (|p|^2 + |q|^2 - 2 |G|^2))``.

    References: paper Eq. (PGW), the objective of Sec. 3.
    """
    C1, C2 = as_matrix(C1, "C1"), as_matrix(C2, "C2")
    p, q = as_masses(p, C1.shape[0], "p"), as_masses(q, C2.shape[0], "q")
    lam = as_lam(lam)
    G = _check_plan(plan, p, q, "plan")
    transport = float(np.sum(tensor_product(C1, C2, G) * G))
    return transport, lam * (p.sum() ** 2 + q.sum() ** 2 - 2.0 * G.sum() ** 2)


def _random_init(p: np.ndarray, q: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random feasible partial plan: ``p q^T`` with random positive weights, scaled into the constraints."""
    R = np.outer(p, q) * rng.exponential(size=(p.size, q.size)) ** 2
    r, c = R.sum(1), R.sum(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = min(np.min(np.where(r > 0, p / r, np.inf)), np.min(np.where(c > 0, q / c, np.inf)))
    return R * s if np.isfinite(s) else default_init(p, q)


def _check_plan(G: Any, p: np.ndarray, q: np.ndarray, name: str) -> np.ndarray:
    G = np.asarray(G)
    if not (np.issubdtype(G.dtype, np.floating) or np.issubdtype(G.dtype, np.integer)):
        raise TypeError(f"{name} must be a real array, got dtype {G.dtype}")
    G = np.array(G, dtype=np.float64)
    if G.shape != (p.size, q.size):
        raise ValueError(f"{name} must have shape {(p.size, q.size)} (len(p), len(q)), got {G.shape}")
    if not np.all(np.isfinite(G)) or G.min() < 0:
        raise ValueError(f"{name} must be finite and non-negative")
    tol = 1e-8 * max(p.sum(), q.sum())
    if np.any(G.sum(1) > p + tol) or np.any(G.sum(0) > q + tol):
        raise ValueError(f"{name} must satisfy {name} 1 <= p and {name}^T 1 <= q (a partial plan)")
    return G


def _line_search(a: float, b: float) -> float:
    """Minimiser over [0, 1] of the quadratic :math:`a\\alpha^2 + b\\alpha` (exact line search).

    References: paper Algorithm 1, line search (Sec. 4.1).
    """
    if a > 0:
        return min(1.0, max(0.0, -b / (2.0 * a)))
    return 1.0 if a + b < 0 else 0.0


# ------------------------------------------------------------------------------------------ Frank-Wolfe
@dataclasses.dataclass(frozen=True)
class _Problem:
    C1: np.ndarray
    C2: np.ndarray
    p: np.ndarray
    q: np.ndarray
    lam: float

    @functools.cached_property
    def C1sq(self) -> np.ndarray:
        return self.C1 * self.C1

    @functools.cached_property
    def C2sq(self) -> np.ndarray:
        return self.C2 * self.C2

    @property
    def const(self) -> float:
        return self.lam * (self.p.sum() ** 2 + self.q.sum() ** 2)

    def L(self, G: np.ndarray) -> np.ndarray:
        return tensor_product(self.C1, self.C2, G, C1sq=self.C1sq, C2sq=self.C2sq)

    def terms(self, G: np.ndarray) -> tuple[float, float]:
        """Transport term and penalty of the plan ``G``."""
        return float(np.sum(self.L(G) * G)), self.const - 2.0 * self.lam * float(G.sum()) ** 2


def _converged(gap: float, objective: float, const: float, tol: float) -> bool:
    # the FW gap bounds the first-order decrease still available; relative to the objective, with a
    # floor proportional to lam (|p|^2 + |q|^2) so that a zero distance can still be reached
    return gap <= tol * max(abs(objective), 1e-12 * const)


def _fw_v1(P: _Problem, G0: np.ndarray, max_iter: int, tol: float) -> tuple[np.ndarray, int, bool]:
    """Algorithm 1: Frank-Wolfe on Gamma_<=(p, q); the LMO is a balanced EMD on the dummy-extended LP.

    The oracle :math:`\\min_{\\gamma'\\in\\Gamma_\\le}\\langle G, \\gamma'\\rangle` equals a balanced OT between
    :math:`\\hat p = [p; |q|]` and :math:`\\hat q = [q; |p|]` with cost ``[[G, 0], [0, 0]]``; the dummy row and
    column are dropped afterwards.
    """
    import ot  # POT (and the array backends it probes) loads on first solve, not on import

    n, m = G0.shape
    p_ext = np.append(P.p, P.q.sum())
    q_ext = np.append(P.q, P.p.sum())
    cost = np.zeros((n + 1, m + 1))
    G = G0.copy()
    LG = P.L(G)
    mass = G.sum()
    for it in range(1, max_iter + 1):
        grad = LG - 2.0 * P.lam * mass  # half the gradient, (M~ o G)
        cost[:n, :m] = grad
        S = ot.emd(p_ext, q_ext, cost, numItermax=_EMD_MAX_ITER, center_dual=False, check_marginals=False)[:n, :m]
        delta = S - G
        Ldelta = P.L(delta)
        dmass = delta.sum()
        a = float(np.sum(Ldelta * delta)) - 2.0 * P.lam * dmass**2
        b = 2.0 * float(np.sum(grad * delta))
        objective = float(np.sum(LG * G)) - 2.0 * P.lam * mass**2 + P.const
        if _converged(-b, objective, P.const, tol):
            return G, it, True
        alpha = _line_search(a, b)
        if alpha == 0.0:
            return G, it, True
        G = G + alpha * delta
        LG = LG + alpha * Ldelta  # L o G is linear in G: no second tensor product per iteration
        mass = mass + alpha * dmass
    return G, max_iter, False


def _fw_v2(P: _Problem, G0: np.ndarray, max_iter: int, tol: float) -> tuple[np.ndarray, int, bool]:
    """Algorithm 2: Frank-Wolfe on the extended balanced problem over :math:`\\Gamma(\\hat p, \\hat q)`.

    The plan :math:`\\hat\\gamma` is (n+1, m+1); the extended objective has tensor
    :math:`\\hat M = \\tilde M` on the n x m block and 0 wherever a dummy index appears, so its gradient is
    :math:`2\\tilde M\\circ\\gamma` on the block and 0 on the dummy row and column, and the LMO is a plain EMD.
    """
    import ot

    n, m = G0.shape
    p_ext = np.append(P.p, P.q.sum())
    q_ext = np.append(P.q, P.p.sum())
    # the extended plan whose block is G0: the dummies take what the block leaves of each marginal
    Gh = np.zeros((n + 1, m + 1))
    Gh[:n, :m] = G0
    Gh[:n, m] = P.p - G0.sum(1)
    Gh[n, :m] = P.q - G0.sum(0)
    Gh[n, m] = G0.sum()
    grad_h = np.zeros((n + 1, m + 1))
    LG = P.L(Gh[:n, :m])
    for it in range(1, max_iter + 1):
        block = Gh[:n, :m]
        mass = block.sum()
        grad_h[:n, :m] = 2.0 * (LG - 2.0 * P.lam * mass)
        Sh = ot.emd(p_ext, q_ext, grad_h, numItermax=_EMD_MAX_ITER, center_dual=False,
                    check_marginals=False)
        Dh = Sh - Gh
        delta = Dh[:n, :m]
        Ldelta = P.L(delta)
        dmass = delta.sum()
        a = float(np.sum(Ldelta * delta)) - 2.0 * P.lam * dmass**2
        b = float(np.sum(grad_h * Dh))
        objective = float(np.sum(LG * block)) - 2.0 * P.lam * mass**2 + P.const
        if _converged(-b, objective, P.const, tol):
            return Gh[:n, :m].copy(), it, True
        alpha = _line_search(a, b)
        if alpha == 0.0:
            return Gh[:n, :m].copy(), it, True
        Gh = Gh + alpha * Dh
        LG = LG + alpha * Ldelta
    return Gh[:n, :m].copy(), max_iter, False


def _iter_defaults(method: str, max_iter: Any, tol: Any) -> tuple[int, float]:
    if method == "entropic":
        max_iter = DEFAULT_MAX_ITER if max_iter is None else max_iter
        tol = DEFAULT_TOL if tol is None else tol
    else:
        max_iter = 1000 if max_iter is None else max_iter
        tol = 1e-9 if tol is None else tol
    return _check_int(max_iter, "max_iter", 1), _check_pos(tol, "tol")


def _result(P: _Problem, G: np.ndarray, n_iter: int, converged: bool, method: str) -> PGWResult:
    transport, penalty = P.terms(G)
    G.setflags(write=False)
    return PGWResult(math.sqrt(max(0.0, transport + penalty)), transport, penalty, G, float(G.sum()), n_iter,
                     converged, method)


def pgw(C1: Any, C2: Any, p: Any, q: Any, lam: float, *, method: str = "fw-v1", G0: Any = None,
        n_init: int = 1, max_iter: int | None = None, tol: float | None = None, epsilon: float = 1e-3,
        seed: int = 0) -> PGWResult:
    """The Partial Gromov-Wasserstein distance between (C1, p) and (C2, q).

    .. math::

        \\mathrm{PGW}_\\lambda = \\min_{\\gamma\\in\\Gamma_\\le(p,q)}
            \\langle L\\circ\\gamma, \\gamma\\rangle + \\lambda(|p|^2 + |q|^2 - 2|\\gamma|^2),
        \\qquad d = \\sqrt{\\mathrm{PGW}_\\lambda}

    Parameters
    ----------
    C1, C2 : array_like, (n, n) and (m, m)
        Symmetric non-negative distance matrices (numpy or JAX arrays).
    p, q : array_like, (n,) and (m,)
        Non-negative masses; their totals may differ.
    lam : float
        Penalty :math:`\\lambda > 0`. A point pair is matched only if its distortion is below
        :math:`2\\lambda`; with equal masses and :math:`2\\lambda` above every squared distance PGW is GW.
    method : {"fw-v1", "fw-v2", "entropic"}
        Frank-Wolfe on the partial polytope (Algorithm 1), on the dummy-extended balanced polytope
        (Algorithm 2; the same iterates), or the JAX entropic solver (Sinkhorn oracle, see
        :func:`iclr25.pgw.entropic_pgw_batch`).
    G0 : array_like (n, m), optional
        Initial partial plan. Default :math:`pq^T\\min(|p|,|q|)/(|p||q|)` for both FW variants.
    n_init : int
        Number of starts: the first from ``G0``, the others random feasible plans (seeded); the start with
        the lowest objective wins. FW is a local solver, so more starts give tighter metric behaviour.
    max_iter : int, optional
        Frank-Wolfe iterations per start (default 1000; 100 for ``"entropic"``).
    tol : float, optional
        Stop when the Frank-Wolfe gap (entropic: the decrease of a step) is below ``tol`` times the
        objective (default 1e-9; 1e-5 for ``"entropic"``).
    epsilon : float
        Entropic regularisation, relative to the cost scale (only for ``method="entropic"``).
    seed : int
        Seed of the random starts.

    Returns
    -------
    PGWResult

    References: paper Algorithms 1 and 2 (Frank-Wolfe for PGW), Sec. 4; the metric property, Sec. 3.

    Examples
    --------
    >>> import numpy as np
    >>> C = np.array([[0.0, 1.0], [1.0, 0.0]])
    >>> r = pgw(C, C, np.ones(2), np.ones(2), lam=1.0)
    >>> round(r.distance, 6), round(r.mass, 6)
    (0.0, 2.0)
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    C1, C2 = as_matrix(C1, "C1"), as_matrix(C2, "C2")
    p, q = as_masses(p, C1.shape[0], "p"), as_masses(q, C2.shape[0], "q")
    lam = as_lam(lam)
    n_init = _check_int(n_init, "n_init", 1)
    max_iter, tol = _iter_defaults(method, max_iter, tol)
    seed = check_seed(seed)
    G0 = default_init(p, q) if G0 is None else _check_plan(G0, p, q, "G0")
    if method == "entropic":
        return entropic_pgw(C1, C2, p, q, lam, epsilon=epsilon, max_iter=max_iter, tol=tol, G0=G0)
    P = _Problem(C1, C2, p, q, lam)
    solve = _fw_v1 if method == "fw-v1" else _fw_v2
    rng = np.random.default_rng(seed)
    best: PGWResult | None = None
    for k in range(n_init):
        start = G0 if k == 0 else _random_init(p, q, rng)
        G, it, conv = solve(P, start, max_iter, tol)
        res = _result(P, G, it, conv, method)
        if best is None or res.objective < best.objective:
            best = res
    assert best is not None
    return best


def pgw_distance(C1: Any, C2: Any, p: Any, q: Any, lam: float, **kwargs: Any) -> float:
    """The PGW metric :math:`\\sqrt{\\mathrm{PGW}_\\lambda}` only; same arguments as :func:`pgw`.

    References: paper Sec. 3 (PGW is a metric).
    """
    return pgw(C1, C2, p, q, lam, **kwargs).distance


# ------------------------------------------------------------------------------------------- pairwise
def _as_space(s: Any, i: int) -> MMSpace:
    if isinstance(s, MMSpace):
        return s
    if isinstance(s, (tuple, list)) and len(s) == 2:
        try:
            return MMSpace(*s)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"spaces[{i}]: {exc}") from exc
    raise TypeError(f"spaces[{i}] must be an MMSpace or a (C, p) pair, got {type(s).__name__}")


def single_threaded_blas():
    """A context in which BLAS runs on one thread: the matrices of one pair are small (about 100 x 100),
    so extra BLAS threads only contend with the parallel workers (measured 3-10x slower on 2 busy cores)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def _distance_chunk(task: tuple[Any, dict[str, Any], list[tuple[int, int]], list[MMSpace]]) -> list[float]:
    f, kw, pairs, spaces = task
    with single_threaded_blas():
        return [f(spaces[i].C, spaces[j].C, spaces[i].p, spaces[j].p, **kw).distance for i, j in pairs]


#: Seconds it takes to start one batch of local worker processes and import numpy, scipy and POT in them
#: (loky; 2.1 s measured on a 2-core machine at load 1.7-1.9). Work shorter than this per extra worker stays in
#: this process: parallel would be slower than serial.
WORKER_START_S = 2.0
#: Seconds of pairs timed in this process before the rest of the work is estimated.
_PROBE_S = 0.3
_LOCAL_BACKENDS = (None, "loky", "multiprocessing")


def _workers(n_jobs: int) -> int:
    return (os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)


def _pair_cost(spaces: list[MMSpace], i: int, j: int) -> float:
    # one Frank-Wolfe iteration costs O(n^2 m + n m^2) (tensor product) plus the EMD on (n+1) x (m+1)
    n, m = spaces[i].n, spaces[j].n
    return float(n * m * (n + m))


def pairwise_matrix(f: Any, spaces: list[MMSpace], *, n_jobs: int = 1, backend: str | None = None,
                    desc: str | None = None, stats: dict[str, Any] | None = None, **kw: Any) -> np.ndarray:
    """The symmetric matrix ``D[i, j] = f(C_i, C_j, p_i, p_j, **kw).distance`` over all pairs ``i < j``
    (zero diagonal), through :func:`iclr25.utils.parallel.parallel_map` with one-thread BLAS per worker.

    With ``n_jobs != 1`` on a local backend (``None``, ``"loky"``, ``"multiprocessing"``) the first pairs run
    in this process for about 0.3 s (after one untimed warm-up pair); from their time and the sizes of the remaining pairs the remaining
    serial work ``R`` is estimated, and worker processes are started only when they pay for themselves:
    ``R > WORKER_START_S * w / (w - 1)`` for ``w`` workers (parallel time ``S + R/w`` below serial time ``R``).
    Otherwise the rest also runs here, so asking for workers is never slower than serial. Cluster backends
    (``"dask"``, ``"ray"``) always receive the pairs. The remaining pairs go out in ``4 w`` chunks, strided
    over the pairs sorted by size so that every chunk carries a similar amount of work.

    ``f`` must be picklable (a module-level function) for process and cluster backends. ``stats``, when
    given, is filled with ``pairs``, ``in_process`` (pairs computed here), ``workers`` (used for the rest,
    1 when none were started) and ``estimated_rest_s``.
    """
    import time

    from iclr25.utils.parallel import parallel_map
    from iclr25.utils.progress import progress

    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"n_jobs must be a positive integer or -1, got {n_jobs!r}")
    k = len(spaces)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    D = np.zeros((k, k))
    info: dict[str, Any] = {"pairs": len(pairs), "in_process": 0, "workers": 1, "estimated_rest_s": 0.0}
    if stats is not None:
        stats.update(info)
    if not pairs:
        return D
    if n_jobs == 1 and backend is None:
        out = parallel_map(_distance_chunk, [(f, kw, [pair], spaces) for pair in pairs], n_jobs=1, desc=desc)
        for (i, j), (v,) in zip(pairs, out):
            D[i, j] = D[j, i] = v
        info["in_process"] = len(pairs)
        if stats is not None:
            stats.update(info)
        return D
    # largest pairs first: the probe then over- rather than under-estimates, and chunks balance better
    pairs.sort(key=lambda ij: -_pair_cost(spaces, *ij))
    w = _workers(n_jobs)
    rest = pairs
    if backend in _LOCAL_BACKENDS:
        costs = [_pair_cost(spaces, i, j) for i, j in pairs]
        total_cost = sum(costs)
        done_cost, n_done, estimate = 0.0, 0, 0.0
        with progress(total=len(pairs), desc=desc) as bar, single_threaded_blas():
            for (i, j), c in zip(pairs, costs):
                D[i, j] = D[j, i] = f(spaces[i].C, spaces[j].C, spaces[i].p, spaces[j].p, **kw).distance
                n_done += 1
                bar.update(1)
                if n_done == 1:  # the first pair pays the solver's imports: warm-up, not timed
                    t0 = time.perf_counter()
                    continue
                done_cost += c
                elapsed = time.perf_counter() - t0
                if n_done == len(pairs):
                    break
                estimate = elapsed / done_cost * (total_cost - done_cost - costs[0])
                if elapsed >= _PROBE_S and (w < 2 or estimate > WORKER_START_S * w / (w - 1)):
                    break
            info["estimated_rest_s"] = estimate if n_done < len(pairs) else 0.0
            if w < 2:  # one worker: nothing to gain from a process; finish here
                for (i, j) in pairs[n_done:]:
                    D[i, j] = D[j, i] = f(spaces[i].C, spaces[j].C, spaces[i].p, spaces[j].p, **kw).distance
                    bar.update(1)
                n_done = len(pairs)
        info["in_process"] = n_done
        rest = pairs[n_done:]
    if rest:
        n_chunks = min(len(rest), 4 * w)
        chunks = [rest[c::n_chunks] for c in range(n_chunks)]
        out = parallel_map(_distance_chunk, [(f, kw, c, spaces) for c in chunks], n_jobs=n_jobs,
                           backend=backend, desc=desc)
        for chunk, vals in zip(chunks, out):
            for (i, j), v in zip(chunk, vals):
                D[i, j] = D[j, i] = v
        info["workers"] = w
    if stats is not None:
        stats.update(info)
    return D


def pgw_pairwise(spaces: Any, lam: float, *, method: str = "fw-v1", n_jobs: int = 1,
                 backend: str | None = None, n_init: int = 1, max_iter: int | None = None,
                 tol: float | None = None, epsilon: float = 1e-3, seed: int = 0,
                 stats: dict[str, Any] | None = None) -> np.ndarray:
    """The symmetric matrix of PGW distances between all pairs of mm-spaces (zero diagonal).

    Exact methods run pair by pair through :func:`iclr25.utils.parallel.parallel_map` (``n_jobs``
    workers, ``backend`` ``None``/"loky"/"dask"/"ray"/..., so a Dask or Ray cluster can take it).
    ``method="entropic"`` runs all pairs in vmapped JAX batches instead (spaces are padded with zero-mass
    points to a common size, which leaves PGW unchanged).

    With ``n_jobs != 1`` worker processes are started only when the work pays for their start-up (see
    :func:`pairwise_matrix`): a small matrix is computed in this process, so asking for workers is never
    slower than serial.

    Parameters
    ----------
    spaces : sequence of MMSpace or (C, p)
    lam : float
        Penalty, shared by all pairs.
    stats : dict, optional
        Filled with how the pairs ran (exact methods): ``pairs``, ``in_process``, ``workers``,
        ``estimated_rest_s``.

    Returns
    -------
    numpy.ndarray (k, k)

    References: paper Sec. 5 (shape retrieval with PGW distance matrices).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if isinstance(spaces, (str, bytes)) or not hasattr(spaces, "__len__"):
        raise TypeError(f"spaces must be a sequence of MMSpace or (C, p) pairs, got {type(spaces).__name__}")
    spaces = [_as_space(s, i) for i, s in enumerate(spaces)]
    if len(spaces) == 0:
        raise ValueError("spaces must hold at least one mm-space, got none")
    lam = as_lam(lam)
    max_iter, tol = _iter_defaults(method, max_iter, tol)
    if method != "entropic":
        return pairwise_matrix(pgw, spaces, n_jobs=n_jobs, backend=backend, desc="PGW pairs", stats=stats,
                               lam=lam, method=method, n_init=n_init, max_iter=max_iter, tol=tol, seed=seed)
    k = len(spaces)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    D = np.zeros((k, k))
    if pairs:
        idx = np.array(pairs)
        D[idx[:, 0], idx[:, 1]] = D[idx[:, 1], idx[:, 0]] = entropic_pgw_pairs(
            spaces, pairs, lam, epsilon=epsilon, max_iter=max_iter, tol=tol)
    return D
