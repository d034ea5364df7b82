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
import time
from typing import Any, NamedTuple

import numpy as np

from .frank_wolfe import PGWResult, default_init, tensor_product
from .space import MMSpace, as_int, as_lam, as_masses, as_matrix, as_positive, as_real_array

__all__ = ["EntropicBatchResult", "entropic_pgw", "entropic_pgw_batch", "entropic_pgw_pairs", "cost_scale",
           "resolve_device", "DEFAULT_EPSILON", "DEFAULT_MAX_ITER", "DEFAULT_TOL", "DEFAULT_INNER"]

DEFAULT_EPSILON = 1e-3
DEFAULT_MAX_ITER = 100
DEFAULT_TOL = 1e-5
DEFAULT_INNER = 500


def resolve_device(device: Any = None) -> Any:
    """The JAX device of a ``device=`` argument: a JAX device as given, else
    :func:`iclr25.utils.device.jax_device` (``None``: ``$ICLR25_DEVICE`` or ``auto``, JAX's default device: a GPU
    with a CUDA jaxlib, else the CPU; ``"cuda"`` without a GPU is a one-line ``ValueError`` naming ``--device``)."""
    from iclr25.utils.device import jax_device  # noqa: PLC0415

    return jax_device(device)


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


def _extended_marginals(p, q):
    """log-masses of the dummy-extended marginals [p; |q|], [q; |p|]; zero-mass (padding) points get -inf
    and so no mass."""
    import jax.numpy as jnp

    mp, mq = p.sum(), q.sum()
    log_a = jnp.log(jnp.concatenate([p, mq[None]]))
    log_b = jnp.log(jnp.concatenate([q, mp[None]]))
    return log_a, log_b


def _sinkhorn_block(K, f, g, log_a, log_b, eps, block_size):
    """``block_size`` log-domain Sinkhorn iterations (warm-started potentials f, g), then the L1 error of the
    row marginals relative to the total mass (the columns are exact after each g-update)."""
    import jax
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    def one(fg, _):
        f, g = fg
        f = eps * log_a - eps * logsumexp((g[None, :] - K) / eps, axis=1)
        g = eps * log_b - eps * logsumexp((f[:, None] - K) / eps, axis=0)
        return (f, g), None

    (f, g), _ = jax.lax.scan(one, (f, g), None, length=block_size)
    a_ext = jnp.exp(log_a)
    row = jnp.exp(f / eps + logsumexp((g[None, :] - K) / eps, axis=1))
    return f, g, jnp.sum(jnp.abs(row - a_ext)) / a_ext.sum()


def _extended_gradient(LG, G, lam):
    """The oracle's cost [[2 (L o G - 2 lam |G|), 0], [0, 0]] on the dummy-extended problem."""
    import jax.numpy as jnp

    n, m = G.shape
    return jnp.zeros((n + 1, m + 1), G.dtype).at[:n, :m].set(2.0 * (LG - 2.0 * lam * G.sum()))


def _fw_update(G, LG, K, S, L, lam, const, tol):
    """One Frank-Wolfe step towards the oracle's plan S (its n x m block): exact line search of Algorithm 1
    and the stopping rule of :func:`iclr25.pgw.frank_wolfe.gap_converged` (relative gap, or a zero step).
    Returns the new plan, its L o G and whether to stop."""
    import jax.numpy as jnp

    n, m = G.shape
    grad = K[:n, :m]
    mass = G.sum()
    delta = S[:n, :m] - G
    Ld = L(delta)
    dmass = delta.sum()
    a = jnp.sum(Ld * delta) - 2.0 * lam * dmass * dmass
    b = jnp.sum(grad * delta)
    alpha = jnp.where(a > 0, jnp.clip(-b / (2.0 * jnp.where(a > 0, a, 1.0)), 0.0, 1.0),
                      jnp.where(a + b < 0, 1.0, 0.0))
    objective = jnp.sum(LG * G) - 2.0 * lam * mass * mass + const
    gap_done = -b <= tol * jnp.maximum(jnp.abs(objective), 1e-12 * const)
    done = jnp.logical_or(gap_done, alpha == 0.0)
    alpha = jnp.where(gap_done, 0.0, alpha)
    return G + alpha * delta, LG + alpha * Ld, done


def _solve_one(C1, C2, p, q, lam, eps, G0, max_iter, tol, n_inner, block_size=10, sinkhorn_tol=1e-5,
               C1sq=None, C2sq=None, record=False):
    """Frank-Wolfe with a Sinkhorn oracle for one pair (traced; vmapped over the batch in lock-step by
    ``schedule="lockstep"``). With ``record`` it also returns the Sinkhorn blocks of every Frank-Wolfe step
    (``max_iter`` entries, 0 after the last step) and the blocks a Sinkhorn solve from the final state takes
    (what a finished pair's frozen lane runs again at every later step of a lock-step batch)."""
    import jax
    import jax.numpy as jnp

    n, m = G0.shape
    n_blocks = max(1, n_inner // block_size)
    log_a, log_b = _extended_marginals(p, q)
    C1sq = C1 * C1 if C1sq is None else C1sq
    C2sq = C2 * C2 if C2sq is None else C2sq
    const = lam * (p.sum() ** 2 + q.sum() ** 2)

    def L(G):
        return tensor_product(C1, C2, G, C1sq=C1sq, C2sq=C2sq)

    def sinkhorn(K, f, g):
        # warm-started blocks of block_size iterations until the row marginals match to sinkhorn_tol
        def block(state):
            f, g, _, k = state
            f, g, err = _sinkhorn_block(K, f, g, log_a, log_b, eps, block_size)
            return f, g, err, k + 1

        def go_on(state):
            _, _, err, k = state
            return jnp.logical_and(k < n_blocks, err > sinkhorn_tol)

        f, g, _, k = jax.lax.while_loop(go_on, block, (f, g, jnp.asarray(jnp.inf, K.dtype), 0))
        return f, g, jnp.exp((f[:, None] + g[None, :] - K) / eps), k

    def cond(state):
        _, _, _, _, it, done = state[:6]
        return jnp.logical_and(it < max_iter, jnp.logical_not(done))

    def body(state):
        G, LG, f, g, it, _ = state[:6]
        K = _extended_gradient(LG, G, lam)
        f, g, S, k = sinkhorn(K, f, g)
        G, LG, done = _fw_update(G, LG, K, S, L, lam, const, tol)
        out = (G, LG, f, g, it + 1, done)
        return out + (state[6].at[it].set(k),) if record else out

    f0 = jnp.zeros(n + 1, G0.dtype)
    g0 = jnp.zeros(m + 1, G0.dtype)
    state = (G0, L(G0), f0, g0, jnp.asarray(0, jnp.int32), jnp.asarray(False))
    if record:
        state = state + (jnp.zeros(max_iter, jnp.int32),)
    state = jax.lax.while_loop(cond, body, state)
    G, LG, f, g, it, done = state[:6]
    if not record:
        return G, it, done
    _, _, _, again = sinkhorn(_extended_gradient(LG, G, lam), f, g)
    return G, it, done, state[6], again


@functools.cache
def _batched_solver(max_iter: int, n_inner: int, record: bool = False):
    import jax

    fn = functools.partial(_solve_one, max_iter=max_iter, n_inner=n_inner, record=record)
    return jax.jit(jax.vmap(lambda C1, C2, p, q, lam, eps, G0, tol: fn(C1, C2, p, q, lam, eps, G0, tol=tol),
                            in_axes=(0, 0, 0, 0, 0, 0, 0, None)))


def lockstep_blocks(steps: np.ndarray, n_iter: np.ndarray, again: np.ndarray) -> tuple[int, int]:
    """Useful and executed Sinkhorn blocks of a lock-step batch (``jit(vmap(...))`` of the per-pair solver),
    from each pair's blocks per Frank-Wolfe step ``steps`` (B, max_iter), its steps ``n_iter`` and the blocks
    its frozen lane runs once it is done (``again``): a vmapped ``while_loop`` runs while any lane's
    condition holds, so every one of the B lanes executes, at each outer step, as many blocks as the longest
    inner loop among the lanes, finished lanes included. Useful blocks are those of the pairs' own steps."""
    steps, n_iter, again = np.asarray(steps), np.asarray(n_iter), np.asarray(again)
    B = len(n_iter)
    executed = 0
    for s in range(int(n_iter.max(initial=0))):
        live = n_iter > s
        executed += B * int(max(steps[live, s].max(initial=0), again[~live].max(initial=0)))
    return int(steps.sum()), executed


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
                       inner_iter: int = DEFAULT_INNER, G0s: Any = None, device: Any = None,
                       schedule: str = "compact", pairs_per_slot: int = 4, sync_every: int = 4,
                       stats: dict | None = None) -> EntropicBatchResult:
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
    device : str or jax.Device, optional
        Where the solver runs (:func:`resolve_device`; ``None``: ``$ICLR25_DEVICE`` or ``auto``); the results are
        numpy arrays on the host whatever the device.
    schedule : {"compact", "lockstep"}
        ``"compact"`` (default): the pairs run in slots that advance one Sinkhorn block (10 iterations) per
        tick, each on its own schedule; every ``sync_every`` ticks finished pairs leave, queued pairs take
        their slots, and once the queue is empty the busy slots are compacted into the smallest power of two
        that holds them (so at most log2(slots) + 1 compilations per shape). ``"lockstep"``: one
        ``jit(vmap(...))`` call (0.5.0 and before), where every pair runs as many Sinkhorn blocks per step as
        the slowest pair of the batch and finished pairs run on until the last one stops. Both give every pair
        the iterations of its own solve (each stops on its own criterion).
    pairs_per_slot : int
        The compact schedule runs ``ceil(B / pairs_per_slot)`` slots, rounded up to a power of two (default 4:
        on a CPU a slot-tick costs about the same at 1 to 16 slots, and queued pairs keep the slots busy; on an
        accelerator 1 runs every pair at once).
    sync_every : int
        Ticks between the host's looks at the slots (collect, refill, compact).
    stats : dict, optional
        Receives ``useful_blocks`` (Sinkhorn blocks of the pairs' own solves), ``executed_blocks`` (blocks
        run, lanes or slots times steps), ``useful_share`` (their ratio) and ``slot_counts``.

    Returns
    -------
    EntropicBatchResult

    References: paper Algorithm 1 with the LP oracle replaced by Sinkhorn (Cuturi 2013) on the extended
    problem of Sec. 4.2; entropic GW of Peyré et al. (2016).
    """
    import jax
    import jax.numpy as jnp

    epsilon, max_iter, tol, inner_iter = _check_options(epsilon, max_iter, tol, inner_iter)
    dev = resolve_device(device)
    C1s, C2s = as_real_array(C1s, "C1s"), as_real_array(C2s, "C2s")
    ps, qs = as_real_array(ps, "ps"), as_real_array(qs, "qs")
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
    lam_arr = as_real_array(lam, "lam")
    lam_arr = np.full(B, as_lam(float(lam_arr))) if lam_arr.ndim == 0 else lam_arr
    if lam_arr.shape != (B,):
        raise ValueError(f"lam must be a number or have shape ({B},), got {lam_arr.shape}")
    for v in lam_arr:
        as_lam(float(v))
    if G0s is None:
        G0s = np.stack([default_init(p, q) for p, q in zip(ps, qs)])
    else:
        G0s = as_real_array(G0s, "G0s")
        if G0s.shape != (B, C1s.shape[1], C2s.shape[1]):
            raise ValueError(f"G0s must have shape {(B, C1s.shape[1], C2s.shape[1])}, got {G0s.shape}")
    if schedule not in ("compact", "lockstep"):
        raise ValueError(f"schedule must be 'compact' or 'lockstep', got {schedule!r}")
    sync_every = as_int(sync_every, "sync_every", 1)
    n_slots = _pow2(math.ceil(B / as_int(pairs_per_slot, "pairs_per_slot", 1)))
    eps = epsilon * cost_scale(C1s, C2s, ps, qs, lam_arr)
    with jax.default_device(dev):
        dt = jnp.asarray(1.0).dtype
        if schedule == "lockstep":
            solver = _batched_solver(max_iter, inner_iter, stats is not None)
            out = solver(*(jnp.asarray(x, dt) for x in (C1s, C2s, ps, qs, lam_arr, eps, G0s)), tol)
            G, it, done = np.asarray(out[0], dtype=np.float64), np.asarray(out[1]), np.asarray(out[2])
            if stats is not None:
                useful, executed = lockstep_blocks(np.asarray(out[3]), it, np.asarray(out[4]))
                stats.update(schedule="lockstep", slot_counts=[B], useful_blocks=useful, executed_blocks=executed)
        else:
            A = tuple(jnp.asarray(x, dt) for x in (C1s, C1s * C1s, ps, G0s))
            Bs = tuple(jnp.asarray(x, dt) for x in (C2s, C2s * C2s, qs))
            G, it, done, counts = _compact_batch(A, Bs, lam_arr, eps, tol, dt, max_iter, inner_iter,
                                                 n_slots, sync_every)
            if stats is not None:
                stats.update(schedule="compact", **counts)
    if stats is not None:
        stats["useful_share"] = stats["useful_blocks"] / stats["executed_blocks"] if stats["executed_blocks"] else 1.0
    transport, penalty, mass = _objective_np(C1s, C2s, ps, qs, lam_arr, G)
    G.setflags(write=False)
    return EntropicBatchResult(np.sqrt(np.maximum(transport + penalty, 0.0)), transport, penalty, G, mass, it, done)


def entropic_pgw(C1: np.ndarray, C2: np.ndarray, p: np.ndarray, q: np.ndarray, lam: float, *,
                 epsilon: float = DEFAULT_EPSILON, max_iter: int = DEFAULT_MAX_ITER, tol: float = DEFAULT_TOL,
                 inner_iter: int = DEFAULT_INNER, G0: np.ndarray | None = None, device: Any = None):
    """Entropic PGW of one pair (a batch of one) on ``device``; returns a :class:`~iclr25.pgw.PGWResult`.

    References: see :func:`entropic_pgw_batch`.
    """
    r = entropic_pgw_batch(C1[None], C2[None], p[None], q[None], lam, epsilon=epsilon, max_iter=max_iter,
                           tol=tol, inner_iter=inner_iter, G0s=None if G0 is None else G0[None], device=device)
    return PGWResult(float(r.distance[0]), float(r.transport_cost[0]), float(r.penalty[0]), r.plan[0],
                     float(r.mass[0]), int(r.n_iter[0]), bool(r.converged[0]), "entropic")


class _Slots(NamedTuple):
    """The state of the B slots of a refilled batch (leading axis B): the Frank-Wolfe plan and its L o G,
    the oracle's cost K, the Sinkhorn potentials, Frank-Wolfe steps and Sinkhorn blocks of the current
    step, and per slot whether it is done, whether it converged and how many ticks it was active."""

    G: Any
    LG: Any
    K: Any
    f: Any
    g: Any
    it: Any
    blk: Any
    done: Any
    converged: Any
    ticks: Any


@functools.cache
def _slot_machine(max_iter: int, n_inner: int, block_size: int = 10, sinkhorn_tol: float = 1e-5):
    """``(refill, run)``, both jitted, for the slots of one size bucket (padded sizes Na x Nb).

    A *tick* advances every active slot by one Sinkhorn block; a slot whose Sinkhorn has converged (or
    used its ``n_inner`` iterations) takes its Frank-Wolfe step in the same tick and starts the next
    oracle solve. Each slot thus does exactly the work of :func:`_solve_one` on its own pair, no matter
    what the other slots do, and a finished slot can be refilled with a new pair while the others run
    on: there is no lock-step over Frank-Wolfe steps or Sinkhorn blocks. ``run`` ticks until ``n_ticks``
    ticks have passed or every slot is done; ``refill`` starts new pairs (indices ``i`` into the
    A-bucket spaces, ``j`` into the B-bucket ones) in the slots where ``mask`` holds.
    """
    import jax
    import jax.numpy as jnp

    n_blocks = max(1, n_inner // block_size)

    def pair(A, B, i, j):
        CsA, CsqA, PsA = A[:3]
        CsB, CsqB, PsB = B[:3]
        return CsA[i], CsB[j], CsqA[i], CsqB[j], PsA[i], PsB[j]

    def init_one(A, B, i, j, lam):
        C1, C2, C1sq, C2sq, p, q = pair(A, B, i, j)
        mp, mq = p.sum(), q.sum()
        if len(A) > 3:  # initial plans given (entropic_pgw_batch's G0s), indexed like the A-spaces
            G = A[3][i]
        else:
            G = p[:, None] * q[None, :] * (jnp.minimum(mp, mq) / (mp * mq))
        LG = tensor_product(C1, C2, G, C1sq=C1sq, C2sq=C2sq)
        n, m = G.shape
        zero = jnp.asarray(0, jnp.int32)
        return _Slots(G, LG, _extended_gradient(LG, G, lam), jnp.zeros(n + 1, G.dtype), jnp.zeros(m + 1, G.dtype),
                      zero, zero, jnp.asarray(False), jnp.asarray(False), zero)

    def tick_one(A, B, s, i, j, lam, eps, tol):
        C1, C2, C1sq, C2sq, p, q = pair(A, B, i, j)
        log_a, log_b = _extended_marginals(p, q)
        const = lam * (p.sum() ** 2 + q.sum() ** 2)
        f, g, err = _sinkhorn_block(s.K, s.f, s.g, log_a, log_b, eps, block_size)
        blk = s.blk + 1
        step = jnp.logical_and(jnp.logical_not(s.done), jnp.logical_or(err <= sinkhorn_tol, blk >= n_blocks))
        S = jnp.exp((f[:, None] + g[None, :] - s.K) / eps)
        G, LG, stop = _fw_update(s.G, s.LG, s.K, S, lambda X: tensor_product(C1, C2, X, C1sq=C1sq, C2sq=C2sq),
                                 lam, const, tol)
        K = _extended_gradient(LG, G, lam)
        it = s.it + 1
        active = jnp.logical_not(s.done)

        def pick(new, old, where):
            return jnp.where(where, new, old)

        return _Slots(pick(G, s.G, step), pick(LG, s.LG, step), pick(K, s.K, step), pick(f, s.f, active),
                      pick(g, s.g, active), pick(it, s.it, step), jnp.where(step, 0, pick(blk, s.blk, active)),
                      jnp.logical_or(s.done, jnp.logical_and(step, jnp.logical_or(stop, it >= max_iter))),
                      jnp.logical_or(s.converged, jnp.logical_and(step, stop)),
                      s.ticks + active.astype(jnp.int32))

    init = jax.vmap(init_one, in_axes=(None, None, 0, 0, 0))
    tick = jax.vmap(tick_one, in_axes=(None, None, 0, 0, 0, 0, 0, None))

    @jax.jit
    def refill(A, B, slots, mask, live, i, j, lam):
        new = init(A, B, i, j, lam)
        new = new._replace(done=jnp.logical_not(live))
        return jax.tree_util.tree_map(lambda a, b: jnp.where(mask.reshape(mask.shape + (1,) * (a.ndim - 1)), a, b),
                                      new, slots)

    @jax.jit
    def run(A, B, slots, i, j, lam, eps, tol, n_ticks):
        def cond(c):
            s, t = c
            return jnp.logical_and(t < n_ticks, jnp.logical_not(jnp.all(s.done)))

        def body(c):
            s, t = c
            return tick(A, B, s, i, j, lam, eps, tol), t + 1

        return jax.lax.while_loop(cond, body, (slots, jnp.asarray(0, jnp.int32)))

    return refill, run


#: compiled ``run`` of :func:`_slot_machine` per options and shapes (a jitted function's own cache is
#: bypassed by ahead-of-time compilation)
_COMPILED: dict[tuple, Any] = {}


def _buckets(n: np.ndarray, pairs: np.ndarray, multiple: int, min_group: int) -> np.ndarray:
    """The padded size of every space: its size rounded up to a multiple of ``multiple``, then, while some
    group of pairs (pairs whose two spaces have the same two buckets) has fewer than ``min_group`` pairs and
    there is more than one bucket, the bucket with the fewest spaces in the smallest such group is merged
    into the next larger bucket (the largest bucket takes its next smaller one instead): a small group's
    compilation costs more than its padding saves."""
    sizes = (np.ceil(n / multiple) * multiple).astype(np.int64)
    while len(pairs):
        levels = np.unique(sizes)
        if len(levels) == 1:
            break
        keys, counts = np.unique(sizes[pairs], axis=0, return_counts=True)
        if counts.min() >= min_group:
            break
        a, b = keys[np.argmin(counts)]
        victim = a if np.sum(sizes == a) <= np.sum(sizes == b) else b
        k = int(np.searchsorted(levels, victim))
        if k == len(levels) - 1:
            sizes[sizes == levels[k - 1]] = victim
        else:
            sizes[sizes == victim] = levels[k + 1]
    return sizes


def entropic_pgw_pairs(spaces: list[MMSpace], pairs: list[tuple[int, int]], lam: float, *,
                       epsilon: float = DEFAULT_EPSILON, max_iter: int = DEFAULT_MAX_ITER,
                       tol: float = DEFAULT_TOL, inner_iter: int = DEFAULT_INNER, batch_size: int = 64,
                       pad_multiple: int = 16, min_group_pairs: int = 16, pairs_per_slot: int = 8,
                       sync_every: int = 16, stats: dict | None = None, device: Any = None) -> np.ndarray:
    """Entropic PGW of many pairs of (validated) mm-spaces, in fixed-size vmapped batches that are refilled
    as pairs converge, on ``device`` (:func:`resolve_device`; the distances come back as a numpy array).

    Every space is padded with zero-mass points (which leaves every PGW value unchanged) only up to its
    *bucket*, its size rounded up to a multiple of ``pad_multiple`` (buckets whose groups of pairs would hold
    fewer than ``min(batch_size, min_group_pairs)`` pairs are merged upwards, see :func:`_buckets`: each
    group costs one compilation, about 2 s on CPU); the pairs are grouped by the buckets of their two spaces,
    and each bucket's spaces (distances, squared distances, masses) go to the device once. A group runs in
    ``min(batch_size, ceil(pairs / pairs_per_slot))`` slots, one compilation per group: the slots advance
    one Sinkhorn block per tick, each on its own schedule (see :func:`_slot_machine`), and every
    ``sync_every`` ticks the host collects the finished pairs and refills their slots with the next ones,
    sending only pair indices. So no slot waits for the slowest pair of a batch, and each pair gets the same
    iterations as :func:`entropic_pgw` on its own (in float32 the padding changes the rounding, and at a
    small epsilon Frank-Wolfe can follow that into another local optimum; not so with ``jax_enable_x64``). Each distance is re-evaluated in float64 from its plan.

    ``stats`` (optional dict) receives ``batches`` (size groups), ``batch_size``, ``padded_size`` (largest
    bucket), ``buckets``, ``ticks``, ``compile_s`` (seconds spent compiling the groups' solvers),
    ``refills`` (pairs started in a slot another pair had used), ``slot_use`` (share of slot-ticks that did
    a pair's work) and ``pad_use`` (share of the padded cells that are real: sum of (n+1)(m+1) over sum of
    (Na+1)(Nb+1)).

    References: see :func:`entropic_pgw_batch`.
    """
    import jax
    import jax.numpy as jnp

    from iclr25.utils.progress import progress

    epsilon, max_iter, tol, inner_iter = _check_options(epsilon, max_iter, tol, inner_iter)
    batch_size = as_int(batch_size, "batch_size", 1)
    pad_multiple = as_int(pad_multiple, "pad_multiple", 1)
    min_group_pairs = as_int(min_group_pairs, "min_group_pairs", 1)
    pairs_per_slot = as_int(pairs_per_slot, "pairs_per_slot", 1)
    sync_every = as_int(sync_every, "sync_every", 1)
    dev = resolve_device(device)
    with jax.default_device(dev):
        dt = jnp.asarray(1.0).dtype
        idx = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        sizes = _buckets(np.array([s.n for s in spaces]), idx, pad_multiple, min(batch_size, min_group_pairs))
        members, local, host, on_device = _bucket_arrays(spaces, sizes, dt)
        cmax2 = np.array([s.C.max() ** 2 for s in spaces])
        mass = np.array([s.p.sum() for s in spaces])
        groups: dict[tuple[int, int], list[int]] = {}
        for k, (i, j) in enumerate(idx):
            groups.setdefault((int(sizes[i]), int(sizes[j])), []).append(k)
        refill, run = _slot_machine(max_iter, inner_iter)
        job = _PairJob(idx, local, cmax2, mass, lam, float(tol), epsilon, dt, max_iter,
                       inner_iter, sync_every, refill, run)
        out = np.empty(len(idx))
        counts = {"ticks": 0, "slot_ticks": 0, "busy_ticks": 0, "refills": 0, "compile_s": 0.0}
        with progress(total=len(idx), desc="entropic PGW pairs") as bar:
            for (Na, Nb), ks in groups.items():
                # about pairs_per_slot pairs per slot: the slots that finish last leave the others idle, and the
                # more pairs each slot runs, the smaller that tail is against the whole group
                n_slots = min(batch_size, max(1, math.ceil(len(ks) / pairs_per_slot)))
                group = _run_group(job, ks, n_slots, (Na, on_device[Na], host[Na]),
                                   (Nb, on_device[Nb], host[Nb]), out, bar)
                for key, value in group.items():
                    counts[key] += value
    if stats is not None:
        slot_ticks = counts["slot_ticks"]
        stats.update(batches=len(groups), batch_size=batch_size, padded_size=int(sizes.max()) if len(sizes) else 0,
                     buckets=sorted(members), ticks=counts["ticks"], refills=counts["refills"],
                     compile_s=counts["compile_s"], slot_use=counts["busy_ticks"] / slot_ticks if slot_ticks else 1.0,
                     pad_use=_pad_use(spaces, idx, sizes))
    return out


@dataclasses.dataclass(frozen=True)
class _PairJob:
    """What every size group of :func:`entropic_pgw_pairs` shares: the pairs (``idx``, rows of two space
    indices), each space's index within its bucket (``local``), squared largest distance and mass of each
    space, the options, and the two jitted functions of :func:`_slot_machine`."""

    idx: np.ndarray
    local: np.ndarray
    cmax2: np.ndarray
    mass: np.ndarray
    lam: float
    tol: float
    epsilon: float
    dt: Any
    max_iter: int
    inner_iter: int
    sync_every: int
    refill: Any
    run: Any


def _run_group(job: _PairJob, ks: list[int], n_slots: int, bucket_a: tuple, bucket_b: tuple, out: np.ndarray,
               bar: Any) -> dict[str, float]:
    """The pairs ``ks`` (rows of ``job.idx``) whose spaces lie in the buckets ``bucket_a`` / ``bucket_b`` (each
    ``(size, device arrays, host arrays)`` of :func:`_bucket_arrays`) in ``n_slots`` slots: fill the free slots
    from the queue, tick ``sync_every`` ticks, collect the finished pairs' distances into ``out``, repeat.
    Returns the group's ticks, slot-ticks, busy slot-ticks, refills and compilation seconds."""
    import jax.numpy as jnp

    (Na, A, (CsA, PsA)), (Nb, B, (CsB, PsB)) = bucket_a, bucket_b
    counts = {"ticks": 0, "slot_ticks": 0, "busy_ticks": 0, "refills": 0, "compile_s": 0.0}
    queue = list(ks)
    slot_pair = np.full(n_slots, -1)
    si, sj, seps = np.zeros(n_slots, np.int64), np.zeros(n_slots, np.int64), np.ones(n_slots)
    slots = run_group = None
    lam_d = jnp.full((n_slots,), job.lam, job.dt)
    while True:
        free = np.flatnonzero(slot_pair < 0)
        take = min(len(free), len(queue))
        if take or slots is None:
            mask = np.zeros(n_slots, bool)
            live = np.zeros(n_slots, bool)
            mask[free] = True
            live[free[:take]] = True
            for s_, k in zip(free[:take], queue[:take]):
                i, j = job.idx[k]
                slot_pair[s_] = k
                si[s_], sj[s_] = job.local[i], job.local[j]
                # epsilon is relative to this pair's cost scale (see cost_scale)
                seps[s_] = (job.epsilon * 2.0 * max(job.cmax2[i], job.cmax2[j], 2.0 * job.lam)
                            * min(job.mass[i], job.mass[j]))
            del queue[:take]
            si_d, sj_d, seps_d = jnp.asarray(si), jnp.asarray(sj), jnp.asarray(seps, job.dt)
            counts["refills"] += take if slots is not None else 0
            if slots is None:  # a first fill builds the state's shapes
                slots = _empty_slots(n_slots, Na, Nb, job.dt)
            slots = job.refill(A, B, slots, jnp.asarray(mask), jnp.asarray(live), si_d, sj_d, lam_d)
        if np.all(slot_pair < 0):
            return counts
        if run_group is None:  # compiled ahead of time, so that stats can tell compilation apart
            key = (job.max_iter, job.inner_iter, job.sync_every, str(job.dt), n_slots, A[0].shape, B[0].shape)
            if key not in _COMPILED:
                t0 = time.perf_counter()
                _COMPILED[key] = job.run.lower(A, B, slots, si_d, sj_d, lam_d, seps_d, job.tol,
                                               np.int32(job.sync_every)).compile()
                counts["compile_s"] += time.perf_counter() - t0
            run_group = _COMPILED[key]
        slots, t = run_group(A, B, slots, si_d, sj_d, lam_d, seps_d, job.tol, np.int32(job.sync_every))
        t = int(t)
        counts["ticks"] += t
        counts["slot_ticks"] += t * n_slots
        fin = np.flatnonzero(np.asarray(slots.done) & (slot_pair >= 0))
        if fin.size:
            G = np.asarray(slots.G, dtype=np.float64)[fin]
            counts["busy_ticks"] += int(np.asarray(slots.ticks)[fin].sum())
            a, b = si[fin], sj[fin]
            transport, penalty, _ = _objective_np(CsA[a], CsB[b], PsA[a], PsB[b], job.lam, G)
            out[slot_pair[fin]] = np.sqrt(np.maximum(transport + penalty, 0.0))
            slot_pair[fin] = -1
            bar.update(fin.size)


def _pow2(k: int) -> int:
    """The smallest power of two >= k (>= 1)."""
    return 1 << max(0, int(k) - 1).bit_length()


@functools.cache
def _compactor():
    import jax

    return jax.jit(lambda slots, keep: jax.tree_util.tree_map(lambda a: a[keep], slots))


def _compact_batch(A: tuple, B: tuple, lam: np.ndarray, eps: np.ndarray, tol: float, dt: Any, max_iter: int,
                   inner_iter: int, n_slots: int, sync_every: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """The pairs of a batch (pair k: A-arrays and B-arrays at index k) in the slots of :func:`_slot_machine`:
    ``n_slots`` slots (a power of two) take the first pairs, and after every ``sync_every`` ticks the host
    collects the finished pairs, refills their slots from the queue and, once the queue is empty and at most
    half the slots are busy, compacts the busy slots into the smallest power of two that holds them (one
    compilation per slot count: at most log2(n_slots) + 1). Every pair runs exactly the iterations of its own
    solve. Returns the plans (float64), Frank-Wolfe steps, convergence flags and the counts
    (``useful_blocks``: Sinkhorn blocks of the pairs' own solves; ``executed_blocks``: slots x ticks run)."""
    import jax
    import jax.numpy as jnp

    n_pairs = len(lam)
    refill, run = _slot_machine(max_iter, inner_iter)
    compact = _compactor()
    Na, Nb = A[0].shape[1], B[0].shape[1]
    G_out = np.empty((n_pairs, Na, Nb))
    it_out = np.zeros(n_pairs, np.int64)
    conv_out = np.zeros(n_pairs, bool)
    blocks_out = np.zeros(n_pairs, np.int64)
    counts = {"useful_blocks": 0, "executed_blocks": 0, "chunks": 0, "compactions": 0, "slot_counts": [n_slots]}
    queue = list(range(n_pairs))
    slot_pair = np.full(n_slots, -1)
    si, slam, seps = np.zeros(n_slots, np.int64), np.ones(n_slots), np.ones(n_slots)
    slots = _empty_slots(n_slots, Na, Nb, dt)
    per_slot = None  # the slots' pair indices, penalties and epsilons on the device, sent when they change
    while True:
        free = np.flatnonzero(slot_pair < 0)
        take = min(len(free), len(queue))
        if take:
            mask = np.zeros(n_slots, bool)
            mask[free[:take]] = True
            for s_, k in zip(free[:take], queue[:take]):
                slot_pair[s_], si[s_], slam[s_], seps[s_] = k, k, lam[k], eps[k]
            del queue[:take]
            per_slot = (jnp.asarray(si), jnp.asarray(slam, dt), jnp.asarray(seps, dt))
            slots = refill(A, B, slots, jnp.asarray(mask), jnp.asarray(mask), per_slot[0], per_slot[0], per_slot[1])
        busy = np.flatnonzero(slot_pair >= 0)
        if busy.size == 0:
            counts["pair_blocks"] = blocks_out.tolist()
            return G_out, it_out, conv_out, counts
        if not queue and busy.size <= n_slots // 2:
            n_slots = _pow2(busy.size)
            keep = np.concatenate([busy, np.full(n_slots - busy.size, np.flatnonzero(slot_pair < 0)[0])])
            slots = compact(slots, jnp.asarray(keep))
            slot_pair, si, slam, seps = slot_pair[keep], si[keep], slam[keep], seps[keep]
            slot_pair[busy.size:] = -1
            per_slot = (jnp.asarray(si), jnp.asarray(slam, dt), jnp.asarray(seps, dt))
            counts["compactions"] += 1
            counts["slot_counts"].append(n_slots)
        # one slot left and nothing queued: nothing to compact or refill, so it runs to its end in one call
        n_ticks = max_iter * max(1, inner_iter // 10) if n_slots == 1 and not queue else sync_every
        slots, t = run(A, B, slots, per_slot[0], per_slot[0], per_slot[1], per_slot[2], tol, np.int32(n_ticks))
        t, done = jax.device_get((t, slots.done))
        counts["chunks"] += 1
        counts["executed_blocks"] += int(t) * n_slots
        fin = np.flatnonzero(done & (slot_pair >= 0))
        if fin.size:
            k = slot_pair[fin]
            G_out[k] = np.asarray(slots.G, dtype=np.float64)[fin]
            it_out[k] = np.asarray(slots.it)[fin]
            conv_out[k] = np.asarray(slots.converged)[fin]
            blocks_out[k] = np.asarray(slots.ticks)[fin]
            counts["useful_blocks"] += int(blocks_out[k].sum())
            slot_pair[fin] = -1


def _bucket_arrays(spaces: list[MMSpace], sizes: np.ndarray, dt: Any) -> tuple[dict, np.ndarray, dict, dict]:
    """Each bucket's spaces padded with zero-mass points to the bucket size, stacked: ``members`` (bucket size
    -> indices of its spaces), ``local`` (each space's index within its bucket), ``host`` (bucket size ->
    stacked distances and masses, numpy float64) and ``device`` (bucket size -> distances, squared distances
    and masses as ``dt`` arrays on the device, sent once)."""
    import jax.numpy as jnp

    members: dict[int, np.ndarray] = {int(N): np.flatnonzero(sizes == N) for N in np.unique(sizes)}
    local = np.empty(len(spaces), dtype=np.int64)
    host: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    device: dict[int, tuple] = {}
    for N, members_N in members.items():
        local[members_N] = np.arange(len(members_N))
        Cs, Ps = np.zeros((len(members_N), N, N)), np.zeros((len(members_N), N))
        for k, s in enumerate(spaces[t] for t in members_N):
            Cs[k, : s.n, : s.n] = s.C
            Ps[k, : s.n] = s.p
        host[N] = (Cs, Ps)
        device[N] = tuple(jnp.asarray(x, dt) for x in (Cs, Cs * Cs, Ps))
    return members, local, host, device


def _pad_use(spaces: list[MMSpace], idx: np.ndarray, sizes: np.ndarray) -> float:
    """Share of the padded cells that are real: sum of (n+1)(m+1) over sum of (Na+1)(Nb+1) over the pairs."""
    real = sum((spaces[i].n + 1) * (spaces[j].n + 1) for i, j in idx)
    padded = sum((int(sizes[i]) + 1) * (int(sizes[j]) + 1) for i, j in idx)
    return real / padded if padded else 1.0


def _empty_slots(n_slots: int, Na: int, Nb: int, dt) -> _Slots:
    import jax.numpy as jnp

    z = jnp.zeros((n_slots,), jnp.int32)
    return _Slots(jnp.zeros((n_slots, Na, Nb), dt), jnp.zeros((n_slots, Na, Nb), dt),
                  jnp.zeros((n_slots, Na + 1, Nb + 1), dt), jnp.zeros((n_slots, Na + 1), dt),
                  jnp.zeros((n_slots, Nb + 1), dt), z, z, jnp.ones((n_slots,), bool), jnp.zeros((n_slots,), bool), z)
