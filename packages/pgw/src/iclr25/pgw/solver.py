"""The exact Partial Gromov-Wasserstein distance ``pgw`` (both Frank-Wolfe variants of the paper, POT's
network simplex as the oracle; the loop, oracles and problem live in :mod:`iclr25.pgw.frank_wolfe`), and
``pgw_pairwise`` for distance matrices.

.. math::

    \\mathrm{PGW}_\\lambda = \\min_{\\gamma \\in \\Gamma_\\le(p, q)}
        \\sum_{i,i',j,j'} (C_1[i,i'] - C_2[j,j'])^2 \\gamma_{ij}\\gamma_{i'j'}
        + \\lambda (|p|^2 + |q|^2 - 2 |\\gamma|^2),

with :math:`\\Gamma_\\le(p,q) = \\{\\gamma \\ge 0: \\gamma 1 \\le p, \\gamma^T 1 \\le q\\}`. The reported
metric is :math:`\\sqrt{\\max(0, \\text{transport} + \\text{penalty})}`.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from iclr25.utils.seeding import check_seed

from .entropic import DEFAULT_EPSILON, DEFAULT_MAX_ITER, DEFAULT_TOL, entropic_pgw, entropic_pgw_pairs
from .frank_wolfe import (
    MAX_ITER,
    ORACLES,
    TOL,
    PGWProblem,
    PGWResult,
    default_init,
    frank_wolfe,
    single_threaded_blas,
    tensor_product,
)
from .space import MMSpace, as_int, as_lam, as_masses, as_matrix, as_positive

__all__ = ["PGWResult", "pgw", "pgw_distance", "pgw_pairwise", "pgw_objective", "pairwise_matrix", "METHODS",
           "check_method_options", "check_n_jobs"]

METHODS = ("fw-v1", "fw-v2", "entropic")


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


def check_method_options(method: str, *, n_init: Any = None, seed: Any = None, epsilon: Any = None,
                         max_iter: Any = None, tol: Any = None, exact_only: dict[str, Any] | None = None,
                         entropic_only: dict[str, Any] | None = None) -> dict[str, Any]:
    """The options of ``method`` with their defaults filled in; an option the method does not use is an error.

    ``n_init`` and ``seed`` (random starts) belong to the exact methods, ``epsilon`` to ``"entropic"``;
    ``exact_only`` / ``entropic_only`` name further options of the caller (``None`` = not given).
    ``max_iter`` and ``tol`` mean the same for every method (see
    :mod:`iclr25.pgw.frank_wolfe`); their defaults are 1000 / 1e-9 (exact) and 100 / 1e-5 (entropic).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if method == "entropic":
        unused = [k for k, v in {"n_init": n_init, "seed": seed, **(exact_only or {})}.items() if v is not None]
        if unused:
            raise ValueError(f"{unused[0]} is not used by method='entropic' (one deterministic start from G0); "
                             f"leave it out, or use method='fw-v1' / 'fw-v2'")
        return {"epsilon": as_positive(DEFAULT_EPSILON if epsilon is None else epsilon, "epsilon"),
                "max_iter": as_int(DEFAULT_MAX_ITER if max_iter is None else max_iter, "max_iter", 1),
                "tol": as_positive(DEFAULT_TOL if tol is None else tol, "tol")}
    unused = [k for k, v in {"epsilon": epsilon, **(entropic_only or {})}.items() if v is not None]
    if unused:
        raise ValueError(f"{unused[0]} is only used by method='entropic', got method={method!r}; leave it out")
    return {"n_init": as_int(1 if n_init is None else n_init, "n_init", 1),
            "seed": check_seed(0 if seed is None else seed),
            "max_iter": as_int(MAX_ITER if max_iter is None else max_iter, "max_iter", 1),
            "tol": as_positive(TOL if tol is None else tol, "tol")}


def pgw(C1: Any, C2: Any, p: Any, q: Any, lam: float, *, method: str = "fw-v1", G0: Any = None,
        n_init: int | None = None, max_iter: int | None = None, tol: float | None = None,
        epsilon: float | None = None, seed: int | None = None, device: Any = None) -> PGWResult:
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
        Initial partial plan. Default :math:`pq^T\\min(|p|,|q|)/(|p||q|)` for every method.
    n_init : int, optional
        Exact methods only (default 1): number of starts, the first from ``G0``, the others random feasible
        plans (seeded); the start with the lowest objective wins. FW is a local solver, so more starts give
        tighter metric behaviour.
    max_iter : int, optional
        Frank-Wolfe iterations (oracle calls) per start, for every method: default 1000 (exact), 100
        (entropic).
    tol : float, optional
        For every method: stop once the Frank-Wolfe gap :math:`-\\langle\\nabla f(\\gamma), S-\\gamma\\rangle`
        is at most ``tol`` times the objective, or the line search returns a zero step. Default 1e-9
        (exact), 1e-5 (entropic).
    epsilon : float, optional
        ``method="entropic"`` only (default 1e-3): entropic regularisation relative to the cost scale.
    seed : int, optional
        Exact methods only (default 0): seed of the random starts.
    device : str or jax.Device, optional
        ``method="entropic"`` only: where the JAX solver runs (``None``: ``$ICLR25_DEVICE`` or ``auto``, a GPU
        with a CUDA jaxlib, else the CPU; see :func:`iclr25.pgw.entropic.resolve_device`). The exact methods run
        on the CPU (POT's network-simplex oracle has no GPU version).

    Returns
    -------
    PGWResult

    Raises
    ------
    ValueError
        For an option that ``method`` does not use (``n_init`` or ``seed`` with ``"entropic"``, ``epsilon``
        with ``"fw-v1"`` or ``"fw-v2"``), naming it.

    References: paper Algorithms 1 and 2 (Frank-Wolfe for PGW), Sec. 4; the metric property, Sec. 3.

    Examples
    --------
    >>> import numpy as np
    >>> C = np.array([[0.0, 1.0], [1.0, 0.0]])
    >>> r = pgw(C, C, np.ones(2), np.ones(2), lam=1.0)
    >>> round(r.distance, 6), round(r.mass, 6)
    (0.0, 2.0)
    """
    opts = check_method_options(method, n_init=n_init, seed=seed, epsilon=epsilon, max_iter=max_iter, tol=tol,
                                entropic_only={"device": device})
    C1, C2 = as_matrix(C1, "C1"), as_matrix(C2, "C2")
    p, q = as_masses(p, C1.shape[0], "p"), as_masses(q, C2.shape[0], "q")
    lam = as_lam(lam)
    G0 = default_init(p, q) if G0 is None else _check_plan(G0, p, q, "G0")
    if method == "entropic":
        return entropic_pgw(C1, C2, p, q, lam, G0=G0, device=device, **opts)
    P = PGWProblem(C1, C2, p, q, lam)
    oracle = ORACLES[method](p, q)
    rng = np.random.default_rng(opts["seed"])
    best: PGWResult | None = None
    for k in range(opts["n_init"]):
        start = G0 if k == 0 else _random_init(p, q, rng)
        res = P.result(frank_wolfe(P, start, oracle, max_iter=opts["max_iter"], tol=opts["tol"]), method)
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


def check_n_jobs(n_jobs: int, name: str = "n_jobs") -> int:
    """A worker count: a positive integer, or -1 for all cores; the message names ``name`` (a flag such as
    ``"--n-jobs"`` on the command line).

    >>> check_n_jobs(-1)
    -1
    """
    if n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"{name} must be a positive integer or -1 (all cores), got {n_jobs}")
    return n_jobs


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
        _serial_pairs(f, kw, pairs, spaces, D, desc)
        info["in_process"] = len(pairs)
    else:
        # largest pairs first: the probe then over- rather than under-estimates, and chunks balance better
        pairs.sort(key=lambda ij: -_pair_cost(spaces, *ij))
        w = _workers(n_jobs)
        rest = pairs
        if backend in _LOCAL_BACKENDS:
            n_done, info["estimated_rest_s"] = _probe_in_process(f, kw, pairs, spaces, D, w, desc)
            info["in_process"] = n_done
            rest = pairs[n_done:]
        if rest:
            _fan_out(f, kw, rest, spaces, D, w, n_jobs, backend, desc)
            info["workers"] = w
    if stats is not None:
        stats.update(info)
    return D


def _serial_pairs(f: Any, kw: dict[str, Any], pairs: list[tuple[int, int]], spaces: list[MMSpace], D: np.ndarray,
                  desc: str | None) -> None:
    """Step of :func:`pairwise_matrix` for ``n_jobs=1`` without a backend: every pair here, filling ``D``."""
    from iclr25.utils.parallel import parallel_map

    out = parallel_map(_distance_chunk, [(f, kw, [pair], spaces) for pair in pairs], n_jobs=1, desc=desc)
    for (i, j), (v,) in zip(pairs, out):
        D[i, j] = D[j, i] = v


def _probe_in_process(f: Any, kw: dict[str, Any], pairs: list[tuple[int, int]], spaces: list[MMSpace],
                      D: np.ndarray, w: int, desc: str | None) -> tuple[int, float]:
    """Step of :func:`pairwise_matrix` on a local backend: compute pairs (sorted largest first) here, filling
    ``D``, until about ``_PROBE_S`` seconds (after one untimed warm-up pair) show that ``w`` workers would pay
    for their start; with one worker, finish every pair here. Returns the pairs done here and the estimated
    serial time of the rest when it was stopped (0 when every pair was done by the probe)."""
    import time

    from iclr25.utils.progress import progress

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
        estimated_rest_s = estimate if n_done < len(pairs) else 0.0
        if w < 2:  # one worker: nothing to gain from a process; finish here
            for (i, j) in pairs[n_done:]:
                D[i, j] = D[j, i] = f(spaces[i].C, spaces[j].C, spaces[i].p, spaces[j].p, **kw).distance
                bar.update(1)
            n_done = len(pairs)
    return n_done, estimated_rest_s


def _fan_out(f: Any, kw: dict[str, Any], rest: list[tuple[int, int]], spaces: list[MMSpace], D: np.ndarray, w: int,
             n_jobs: int, backend: str | None, desc: str | None) -> None:
    """Step of :func:`pairwise_matrix`: the remaining pairs to ``parallel_map`` in ``4 w`` chunks, strided over
    the pairs sorted by size so that every chunk carries a similar amount of work; fills ``D``."""
    from iclr25.utils.parallel import parallel_map

    n_chunks = min(len(rest), 4 * w)
    chunks = [rest[c::n_chunks] for c in range(n_chunks)]
    out = parallel_map(_distance_chunk, [(f, kw, c, spaces) for c in chunks], n_jobs=n_jobs,
                       backend=backend, desc=desc)
    for chunk, vals in zip(chunks, out):
        for (i, j), v in zip(chunk, vals):
            D[i, j] = D[j, i] = v


def pgw_pairwise(spaces: Any, lam: float, *, method: str = "fw-v1", n_jobs: int | None = None,
                 backend: str | None = None, n_init: int | None = None, max_iter: int | None = None,
                 tol: float | None = None, epsilon: float | None = None, seed: int | None = None,
                 batch_size: int | None = None, stats: dict[str, Any] | None = None, device: Any = None
                 ) -> np.ndarray:
    """The symmetric matrix of PGW distances between all pairs of mm-spaces (zero diagonal).

    Exact methods run pair by pair through :func:`iclr25.utils.parallel.parallel_map` (``n_jobs``
    workers, ``backend`` ``None``/"loky"/"dask"/"ray"/..., so a Dask or Ray cluster can take it); with
    ``n_jobs != 1`` worker processes are started only when the work pays for their start-up (see
    :func:`pairwise_matrix`), so asking for workers is never slower than serial.

    ``method="entropic"`` runs all pairs in fixed-size ``jit(vmap)`` batches of ``batch_size`` slots
    (default 64; see :func:`iclr25.pgw.entropic.entropic_pgw_pairs`): spaces are bucketed by size and padded
    with zero-mass points only up to their bucket (a multiple of 16 points; this leaves PGW unchanged), each
    bucket's distances go to the device once, one compilation serves each pair of buckets, and a slot is
    refilled with the next pair as soon as its pair has converged, so a batch never waits for its slowest
    pair. Each pair runs the iterations of ``pgw(..., method="entropic")`` on the pair alone; in float32 the
    padding changes the rounding, which at a small epsilon can lead Frank-Wolfe to another local optimum
    (README), while with ``jax_enable_x64`` the distances agree.

    Parameters
    ----------
    spaces : sequence of MMSpace or (C, p)
    lam : float
        Penalty, shared by all pairs.
    method, n_init, max_iter, tol, epsilon, seed
        As in :func:`pgw`; an option that ``method`` does not use raises ``ValueError``.
    n_jobs, backend
        Exact methods only: workers (default 1; -1 all cores) and the ``parallel_map`` backend.
    batch_size : int, optional
        ``method="entropic"`` only: pairs per vmapped batch (default 64).
    device : str or jax.Device, optional
        ``method="entropic"`` only: where the JAX solver runs (as in :func:`pgw`); exact pairs run on CPU
        cores, here or on a cluster (``backend``).
    stats : dict, optional
        Filled with how the pairs ran. Exact: ``pairs``, ``in_process``, ``workers``, ``estimated_rest_s``;
        entropic: ``pairs``, ``batches`` (size groups), ``batch_size``, ``padded_size`` (largest bucket),
        ``buckets``, ``ticks``, ``slot_use``, ``pad_use`` (see :func:`~iclr25.pgw.entropic.entropic_pgw_pairs`).

    Returns
    -------
    numpy.ndarray (k, k)

    References: paper Sec. 5 (shape retrieval with PGW distance matrices).
    """
    opts = check_method_options(method, n_init=n_init, seed=seed, epsilon=epsilon, max_iter=max_iter, tol=tol,
                                exact_only={"n_jobs": n_jobs, "backend": backend},
                                entropic_only={"batch_size": batch_size, "device": device})
    if isinstance(spaces, (str, bytes)) or not hasattr(spaces, "__len__"):
        raise TypeError(f"spaces must be a sequence of MMSpace or (C, p) pairs, got {type(spaces).__name__}")
    spaces = [_as_space(s, i) for i, s in enumerate(spaces)]
    if len(spaces) == 0:
        raise ValueError("spaces must hold at least one mm-space, got none")
    lam = as_lam(lam)
    if method != "entropic":
        return pairwise_matrix(pgw, spaces, n_jobs=1 if n_jobs is None else n_jobs, backend=backend,
                               desc="PGW pairs", stats=stats, lam=lam, method=method, **opts)
    batch_size = as_int(64 if batch_size is None else batch_size, "batch_size", 1)
    k = len(spaces)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    D = np.zeros((k, k))
    info: dict[str, Any] = {"pairs": len(pairs), "batches": 0, "batch_size": batch_size, "padded_size": 0}
    if pairs:
        idx = np.array(pairs)
        D[idx[:, 0], idx[:, 1]] = D[idx[:, 1], idx[:, 0]] = entropic_pgw_pairs(
            spaces, pairs, lam, batch_size=batch_size, stats=info, device=device, **opts)
    if stats is not None:
        stats.update(info)
    return D
