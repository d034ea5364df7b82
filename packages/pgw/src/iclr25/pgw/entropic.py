"""A JAX-native entropic PGW: Frank-Wolfe whose linear minimisation oracle is a log-domain Sinkhorn solve of
the dummy-extended balanced problem, under ``jit`` and ``vmap`` over batches of pairs of equal size.

Each Frank-Wolfe step solves

.. math::

    S = \\arg\\min_{\\hat\\gamma\\in\\Gamma(\\hat p, \\hat q)} \\langle \\hat G, \\hat\\gamma\\rangle
        - \\varepsilon H(\\hat\\gamma), \\qquad
    \\hat G = \\begin{pmatrix} 2\\tilde M\\circ\\gamma & 0 \\\\ 0 & 0 \\end{pmatrix},\\quad
    \\hat p = [p; |q|],\\ \\hat q = [q; |p|],

keeps the n x m block of S as the direction, and steps with the same exact line search and the same
stopping rule (relative Frank-Wolfe gap, :func:`iclr25.pgw.frank_wolfe.gap_converged`) as the exact
solver. As :math:`\\varepsilon \\to 0` the oracle becomes the exact one of Algorithm 1, so the distance
approaches the exact PGW (the measured gap is in the README). The Sinkhorn potentials are warm-started
from one Frank-Wolfe step to the next. Computation runs in JAX's default float dtype (float32 unless
``jax_enable_x64`` is on); the returned transport cost and penalty are re-evaluated in float64 numpy.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np

from .frank_wolfe import PGWResult, default_init, tensor_product
from .space import MMSpace, as_int, as_lam, as_masses, as_matrix, as_positive

__all__ = ["EntropicBatchResult", "entropic_pgw", "entropic_pgw_batch", "entropic_pgw_pairs", "cost_scale",
           "DEFAULT_EPSILON", "DEFAULT_MAX_ITER", "DEFAULT_TOL", "DEFAULT_INNER"]

DEFAULT_EPSILON = 1e-3
DEFAULT_MAX_ITER = 100
DEFAULT_TOL = 1e-5
DEFAULT_INNER = 500


@dataclasses.dataclass(frozen=True)
class EntropicBatchResult:
    """Entropic PGW for a batch of B pairs: every field has a leading batch axis."""

    distance: np.ndarray
    transport_cost: np.ndarray
    penalty: np.ndarray
    plan: np.ndarray
    mass: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray


def _solve_one(C1, C2, p, q, lam, eps, G0, max_iter, tol, n_inner, block_size=10, sinkhorn_tol=1e-5,
               C1sq=None, C2sq=None):
    """Frank-Wolfe with a Sinkhorn oracle for one pair (traced; vmapped over the batch)."""
    import jax
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    n, m = G0.shape
    n_blocks = max(1, n_inner // block_size)
    mp, mq = p.sum(), q.sum()
    # log-masses of the extended marginals; zero-mass (padding) points get -inf and so no mass
    log_a = jnp.log(jnp.concatenate([p, mq[None]]))
    log_b = jnp.log(jnp.concatenate([q, mp[None]]))
    C1sq = C1 * C1 if C1sq is None else C1sq
    C2sq = C2 * C2 if C2sq is None else C2sq
    const = lam * (mp * mp + mq * mq)

    def L(G):
        return tensor_product(C1, C2, G, C1sq=C1sq, C2sq=C2sq)

    a_ext = jnp.exp(log_a)
    total = a_ext.sum()

    def sinkhorn(K, f, g):
        # log-domain Sinkhorn (stable for any eps), warm-started, in blocks of block_size iterations
        # until the row marginals match to sinkhorn_tol of the total mass (columns are exact after
        # each g-update)
        def one(fg, _):
            f, g = fg
            f = eps * log_a - eps * logsumexp((g[None, :] - K) / eps, axis=1)
            g = eps * log_b - eps * logsumexp((f[:, None] - K) / eps, axis=0)
            return (f, g), None

        def block(state):
            f, g, _, k = state
            (f, g), _ = jax.lax.scan(one, (f, g), None, length=block_size)
            row = jnp.exp(f / eps + logsumexp((g[None, :] - K) / eps, axis=1))
            return f, g, jnp.sum(jnp.abs(row - a_ext)) / total, k + 1

        def go_on(state):
            _, _, err, k = state
            return jnp.logical_and(k < n_blocks, err > sinkhorn_tol)

        f, g, _, _ = jax.lax.while_loop(go_on, block, (f, g, jnp.asarray(jnp.inf, K.dtype), 0))
        return f, g, jnp.exp((f[:, None] + g[None, :] - K) / eps)

    def cond(state):
        _, _, _, _, it, done = state
        return jnp.logical_and(it < max_iter, jnp.logical_not(done))

    def body(state):
        G, LG, f, g, it, _ = state
        mass = G.sum()
        grad = 2.0 * (LG - 2.0 * lam * mass)
        K = jnp.zeros((n + 1, m + 1), G.dtype).at[:n, :m].set(grad)
        f, g, S = sinkhorn(K, f, g)
        delta = S[:n, :m] - G
        Ld = L(delta)
        dmass = delta.sum()
        a = jnp.sum(Ld * delta) - 2.0 * lam * dmass * dmass
        b = jnp.sum(grad * delta)
        alpha = jnp.where(a > 0, jnp.clip(-b / (2.0 * jnp.where(a > 0, a, 1.0)), 0.0, 1.0),
                          jnp.where(a + b < 0, 1.0, 0.0))
        objective = jnp.sum(LG * G) - 2.0 * lam * mass * mass + const
        # the stopping rule of frank_wolfe.gap_converged: relative gap, or a zero step
        gap_done = -b <= tol * jnp.maximum(jnp.abs(objective), 1e-12 * const)
        done = jnp.logical_or(gap_done, alpha == 0.0)
        alpha = jnp.where(gap_done, 0.0, alpha)
        return G + alpha * delta, LG + alpha * Ld, f, g, it + 1, done

    f0 = jnp.zeros(n + 1, G0.dtype)
    g0 = jnp.zeros(m + 1, G0.dtype)
    state = (G0, L(G0), f0, g0, jnp.asarray(0, jnp.int32), jnp.asarray(False))
    G, _, _, _, it, done = jax.lax.while_loop(cond, body, state)
    return G, it, done


@functools.cache
def _batched_solver(max_iter: int, n_inner: int):
    import jax

    fn = functools.partial(_solve_one, max_iter=max_iter, n_inner=n_inner)
    return jax.jit(jax.vmap(lambda C1, C2, p, q, lam, eps, G0, tol: fn(C1, C2, p, q, lam, eps, G0, tol=tol),
                            in_axes=(0, 0, 0, 0, 0, 0, 0, None)))


def cost_scale(C1: np.ndarray, C2: np.ndarray, p: np.ndarray, q: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """The size of the gradient entries, 2 max(C1^2, C2^2, 2 lam) min(|p|, |q|): epsilon is relative to it."""
    c = np.maximum(np.maximum(C1.max(axis=(1, 2)) ** 2, C2.max(axis=(1, 2)) ** 2), 2.0 * lam)
    return 2.0 * c * np.minimum(p.sum(1), q.sum(1))


def _objective_np(C1, C2, p, q, lam, G):
    """Float64 transport term and penalty of a batch of plans."""
    r, c = G.sum(2), G.sum(1)
    LG = (np.einsum("bik,bk->bi", C1 * C1, r)[:, :, None] + np.einsum("bjk,bk->bj", C2 * C2, c)[:, None, :]
          - 2.0 * C1 @ G @ C2)
    transport = np.einsum("bij,bij->b", LG, G)
    mass = G.sum((1, 2))
    penalty = lam * (p.sum(1) ** 2 + q.sum(1) ** 2 - 2.0 * mass**2)
    return transport, penalty, mass


def _check_options(epsilon: Any, max_iter: Any, tol: Any, inner_iter: Any) -> tuple[float, int, float, int]:
    return (as_positive(epsilon, "epsilon"), as_int(max_iter, "max_iter", 1), as_positive(tol, "tol"),
            as_int(inner_iter, "inner_iter", 1))


def entropic_pgw_batch(C1s: Any, C2s: Any, ps: Any, qs: Any, lam: Any, *, epsilon: float = DEFAULT_EPSILON,
                       max_iter: int = DEFAULT_MAX_ITER, tol: float = DEFAULT_TOL,
                       inner_iter: int = DEFAULT_INNER, G0s: Any = None) -> EntropicBatchResult:
    """Entropic PGW of a batch of B pairs of equal sizes, one ``jit(vmap(...))`` call.

    .. math::

        \\gamma_{k+1} = \\gamma_k + \\alpha_k (S_k - \\gamma_k),\\quad
        S_k = \\mathrm{Sinkhorn}_\\varepsilon\\big(\\hat p, \\hat q,
              [[2\\tilde M\\circ\\gamma_k, 0], [0, 0]]\\big)_{[:n,:m]}

    with :math:`\\alpha_k` the exact line search of Algorithm 1.

    Parameters
    ----------
    C1s : array_like (B, n, n)
    C2s : array_like (B, m, m)
    ps : array_like (B, n)
    qs : array_like (B, m)
        Masses; zero-mass points are allowed (they pad spaces of different sizes to a common size).
    lam : float or array_like (B,)
        Penalty per pair.
    epsilon : float
        Entropic regularisation relative to the cost scale :math:`2\\max(C_1^2, C_2^2, 2\\lambda)\\min(|p|,|q|)`.
    max_iter, tol : int, float
        Frank-Wolfe iterations, and the tolerance of the relative Frank-Wolfe gap (the same meaning as for
        the exact methods; see :mod:`iclr25.pgw.frank_wolfe`).
    inner_iter : int
        Most Sinkhorn iterations per Frank-Wolfe step (warm-started; they stop once the marginals match
        to 1e-5 of the mass).
    G0s : array_like (B, n, m), optional
        Initial plans; default :math:`pq^T \\min(|p|,|q|)/(|p||q|)` per pair.

    Returns
    -------
    EntropicBatchResult

    References: paper Algorithm 1 with the LP oracle replaced by Sinkhorn (Cuturi 2013) on the extended
    problem of Sec. 4.2; entropic GW of Peyré et al. (2016).
    """
    import jax.numpy as jnp

    epsilon, max_iter, tol, inner_iter = _check_options(epsilon, max_iter, tol, inner_iter)
    C1s, C2s = np.asarray(C1s, dtype=np.float64), np.asarray(C2s, dtype=np.float64)
    ps, qs = np.asarray(ps, dtype=np.float64), np.asarray(qs, dtype=np.float64)
    if C1s.ndim != 3 or C2s.ndim != 3 or ps.ndim != 2 or qs.ndim != 2:
        raise ValueError(f"C1s, C2s must be (B, n, n), (B, m, m) and ps, qs (B, n), (B, m); got shapes "
                         f"{C1s.shape}, {C2s.shape}, {ps.shape}, {qs.shape}")
    B = C1s.shape[0]
    if not (C2s.shape[0] == ps.shape[0] == qs.shape[0] == B) or B == 0:
        raise ValueError(f"C1s, C2s, ps, qs must share a non-zero batch size, got {C1s.shape[0]}, "
                         f"{C2s.shape[0]}, {ps.shape[0]}, {qs.shape[0]}")
    for b in range(B):
        as_matrix(C1s[b], f"C1s[{b}]")
        as_matrix(C2s[b], f"C2s[{b}]")
        as_masses(ps[b], C1s.shape[1], f"ps[{b}]")
        as_masses(qs[b], C2s.shape[1], f"qs[{b}]")
    lam_arr = np.asarray(lam, dtype=np.float64)
    lam_arr = np.full(B, as_lam(float(lam_arr))) if lam_arr.ndim == 0 else lam_arr
    if lam_arr.shape != (B,):
        raise ValueError(f"lam must be a number or have shape ({B},), got {lam_arr.shape}")
    for v in lam_arr:
        as_lam(float(v))
    if G0s is None:
        G0s = np.stack([default_init(p, q) for p, q in zip(ps, qs)])
    else:
        G0s = np.asarray(G0s, dtype=np.float64)
        if G0s.shape != (B, C1s.shape[1], C2s.shape[1]):
            raise ValueError(f"G0s must have shape {(B, C1s.shape[1], C2s.shape[1])}, got {G0s.shape}")
    eps = epsilon * cost_scale(C1s, C2s, ps, qs, lam_arr)
    dt = jnp.asarray(1.0).dtype
    solver = _batched_solver(max_iter, inner_iter)
    G, it, done = solver(*(jnp.asarray(x, dt) for x in (C1s, C2s, ps, qs, lam_arr, eps, G0s)), tol)
    G = np.asarray(G, dtype=np.float64)
    transport, penalty, mass = _objective_np(C1s, C2s, ps, qs, lam_arr, G)
    G.setflags(write=False)
    return EntropicBatchResult(np.sqrt(np.maximum(transport + penalty, 0.0)), transport, penalty, G, mass,
                               np.asarray(it), np.asarray(done))


def entropic_pgw(C1: np.ndarray, C2: np.ndarray, p: np.ndarray, q: np.ndarray, lam: float, *,
                 epsilon: float = DEFAULT_EPSILON, max_iter: int = DEFAULT_MAX_ITER, tol: float = DEFAULT_TOL,
                 inner_iter: int = DEFAULT_INNER, G0: np.ndarray | None = None):
    """Entropic PGW of one pair (a batch of one); returns a :class:`~iclr25.pgw.PGWResult`.

    References: see :func:`entropic_pgw_batch`.
    """
    r = entropic_pgw_batch(C1[None], C2[None], p[None], q[None], lam, epsilon=epsilon, max_iter=max_iter,
                           tol=tol, inner_iter=inner_iter, G0s=None if G0 is None else G0[None])
    return PGWResult(float(r.distance[0]), float(r.transport_cost[0]), float(r.penalty[0]), r.plan[0],
                     float(r.mass[0]), int(r.n_iter[0]), bool(r.converged[0]), "entropic")


@functools.cache
def _pairs_solver(max_iter: int, n_inner: int):
    """``jit(vmap)`` over a batch of pair indices into device-resident padded spaces: a batch sends only
    its indices, the gathers happen on the device, and the float64 re-evaluation is left to the host."""
    import jax

    fn = functools.partial(_solve_one, max_iter=max_iter, n_inner=n_inner)

    def one(Cs, Csq, Ps, i, j, lam, eps, tol):
        p, q = Ps[i], Ps[j]
        mp, mq = p.sum(), q.sum()
        G0 = p[:, None] * q[None, :] * (jax.numpy.minimum(mp, mq) / (mp * mq))
        return fn(Cs[i], Cs[j], p, q, lam, eps, G0, tol=tol, C1sq=Csq[i], C2sq=Csq[j])

    return jax.jit(jax.vmap(one, in_axes=(None, None, None, 0, 0, None, 0, None)))


def entropic_pgw_pairs(spaces: list[MMSpace], pairs: list[tuple[int, int]], lam: float, *,
                       epsilon: float = DEFAULT_EPSILON, max_iter: int = DEFAULT_MAX_ITER,
                       tol: float = DEFAULT_TOL, inner_iter: int = DEFAULT_INNER, batch_size: int = 64,
                       stats: dict | None = None) -> np.ndarray:
    """Entropic PGW of many pairs of (validated) mm-spaces, in fixed-size vmapped batches.

    Every space is padded with zero-mass points to one size N (a multiple of 8), which leaves every PGW
    value unchanged; its distances and squared distances go to the device once. Each batch of
    ``batch_size`` pairs sends only its pair indices (the last batch is filled up with copies of its first
    pair), so one compilation serves every batch. Each distance is re-evaluated in float64 from the plan.

    References: see :func:`entropic_pgw_batch`.
    """
    import jax.numpy as jnp

    from iclr25.utils.progress import progress

    epsilon, max_iter, tol, inner_iter = _check_options(epsilon, max_iter, tol, inner_iter)
    batch_size = as_int(batch_size, "batch_size", 1)
    N = int(math.ceil(max(s.n for s in spaces) / 8) * 8)
    Cs = np.zeros((len(spaces), N, N))
    Ps = np.zeros((len(spaces), N))
    for k, s in enumerate(spaces):
        Cs[k, : s.n, : s.n] = s.C
        Ps[k, : s.n] = s.p
    Csq = Cs * Cs
    cmax2 = Cs.max(axis=(1, 2)) ** 2
    mass = Ps.sum(1)
    dt = jnp.asarray(1.0).dtype
    Cs_d, Csq_d, Ps_d = (jnp.asarray(x, dt) for x in (Cs, Csq, Ps))
    solver = _pairs_solver(max_iter, inner_iter)
    idx = np.asarray(pairs)
    out = np.empty(len(pairs))
    batch_size = min(batch_size, len(pairs))
    n_batches = 0
    for start in progress(range(0, len(pairs), batch_size), desc="entropic PGW batches"):
        sel = idx[start:start + batch_size]
        fill = np.concatenate([sel, np.repeat(sel[:1], batch_size - len(sel), axis=0)])
        i, j = fill[:, 0], fill[:, 1]
        # cost_scale of every pair from the per-space maxima and masses
        eps = epsilon * 2.0 * np.maximum(np.maximum(cmax2[i], cmax2[j]), 2.0 * lam) * np.minimum(mass[i], mass[j])
        G, _, _ = solver(Cs_d, Csq_d, Ps_d, jnp.asarray(i), jnp.asarray(j), jnp.asarray(lam, dt),
                         jnp.asarray(eps, dt), tol)
        G = np.asarray(G, dtype=np.float64)[: len(sel)]
        i, j = i[: len(sel)], j[: len(sel)]
        transport, penalty, _ = _objective_np(Cs[i], Cs[j], Ps[i], Ps[j], lam, G)
        out[start:start + len(sel)] = np.sqrt(np.maximum(transport + penalty, 0.0))
        n_batches += 1
    if stats is not None:
        stats.update(batches=n_batches, batch_size=batch_size, padded_size=N)
    return out
