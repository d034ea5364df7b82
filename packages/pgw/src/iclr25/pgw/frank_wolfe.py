"""The Frank-Wolfe machinery that every PGW solver of this package shares: the problem (tensor product and
objective), the result type, the initial plan, the exact line search, the stopping rule, the two linear
minimisation oracles of the paper as small strategies, and one Frank-Wolfe loop that takes either oracle.

``solver`` (exact ``pgw``), ``barycenter`` (plan updates), ``entropic`` (JAX) and ``baselines`` import from
here; nothing here imports them.

Notation (paper, Sec. 3-4). For mm-spaces (C1, p) with n points and (C2, q) with m points,

.. math::

    \\mathrm{PGW}_\\lambda = \\min_{\\gamma \\in \\Gamma_\\le(p, q)}
        \\langle L\\circ\\gamma, \\gamma\\rangle + \\lambda (|p|^2 + |q|^2 - 2 |\\gamma|^2),
    \\qquad
    L\\circ\\gamma = C_1^{2}(\\gamma 1) 1^T + 1 (\\gamma^T 1)^T C_2^{2} - 2 C_1 \\gamma C_2,

with :math:`\\Gamma_\\le(p,q) = \\{\\gamma \\ge 0: \\gamma 1 \\le p, \\gamma^T 1 \\le q\\}` and ``C^2``
elementwise. Half the gradient is :math:`\\tilde M\\circ\\gamma = L\\circ\\gamma - 2\\lambda|\\gamma|`.

``max_iter`` and ``tol`` mean the same for every method: at most ``max_iter`` Frank-Wolfe iterations (one
oracle call each), and stop once the Frank-Wolfe gap :math:`-\\langle\\nabla f(\\gamma), S - \\gamma\\rangle`
is at most ``tol`` times the objective (or the line search returns a zero step).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Protocol

import numpy as np

__all__ = ["PGWResult", "PGWProblem", "FWRun", "LinearOracle", "PartialOracle", "ExtendedOracle", "ORACLES",
           "frank_wolfe", "tensor_product", "default_init", "line_search", "gap_converged",
           "single_threaded_blas", "import_pot", "MAX_ITER", "TOL"]

def import_pot() -> Any:
    """POT's ``ot`` module, imported on first use.

    POT's own source holds a docstring with an invalid escape sequence (``\\d`` in ``ot/datasets.py``); where its
    bytecode is not compiled yet, Python warns while compiling it, and under ``PYTHONWARNINGS=error`` (or
    ``-W error``) that warning is a ``SyntaxError`` that stops every command. Only that warning, and only while
    POT is imported, is silenced here; every other warning keeps the user's setting.
    """
    import sys
    import warnings

    if "ot" in sys.modules:
        return sys.modules["ot"]
    with warnings.catch_warnings():
        for category in (SyntaxWarning, DeprecationWarning):  # SyntaxWarning from Python 3.12, before: Deprecation
            warnings.filterwarnings("ignore", message="invalid escape sequence", category=category)
        import ot
    return ot


#: Default Frank-Wolfe iterations and relative gap tolerance of the exact methods.
MAX_ITER = 1000
TOL = 1e-9
#: Network-simplex iteration limit of one oracle call (POT's default 1e5 fails on large problems).
EMD_MAX_ITER = 1_000_000


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


def tensor_product(C1: Any, C2: Any, G: Any, *, C1sq: Any = None, C2sq: Any = None) -> Any:
    """The tensor product :math:`(L\\circ G)_{ij} = \\sum_{i'j'} (C_1[i,i'] - C_2[j,j'])^2 G_{i'j'}`.

    .. math:: L\\circ G = C_1^{2} (G1) 1^T + 1 (G^T 1)^T C_2^{2} - 2 C_1 G C_2

    for symmetric C1, C2, in O(n^2 m + n m^2) instead of O(n^2 m^2). Works on numpy and JAX arrays.

    References: paper Sec. 4, Proposition on the tensor product (Peyré et al. 2016, Prop. 1).
    """
    C1sq = C1 * C1 if C1sq is None else C1sq
    C2sq = C2 * C2 if C2sq is None else C2sq
    return ((C1sq @ G.sum(1))[:, None] + (C2sq @ G.sum(0))[None, :]) - 2.0 * ((C1 @ G) @ C2)


def default_init(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The paper's initial plan :math:`G_0 = p q^T \\min(|p|,|q|) / (|p||q|)` (feasible, mass min(|p|,|q|))."""
    mp, mq = p.sum(), q.sum()
    return np.outer(p, q) * (min(mp, mq) / (mp * mq))


def line_search(a: float, b: float) -> float:
    """Minimiser over [0, 1] of the quadratic :math:`a\\alpha^2 + b\\alpha` (exact line search).

    References: paper Algorithm 1, line search (Sec. 4.1).
    """
    if a > 0:
        return min(1.0, max(0.0, -b / (2.0 * a)))
    return 1.0 if a + b < 0 else 0.0


def gap_converged(gap: float, objective: float, const: float, tol: float) -> bool:
    """The stopping rule of every method: the Frank-Wolfe gap (the first-order decrease still available)
    is at most ``tol`` times the objective, with a floor ``1e-12 * lam (|p|^2 + |q|^2)`` so that a zero
    distance can be reached."""
    return gap <= tol * max(abs(objective), 1e-12 * const)


@dataclasses.dataclass(frozen=True)
class PGWProblem:
    """One PGW problem: distances, masses and penalty, with the squared distances computed once."""

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
        """:math:`\\lambda(|p|^2 + |q|^2)`."""
        return self.lam * (self.p.sum() ** 2 + self.q.sum() ** 2)

    def L(self, G: np.ndarray) -> np.ndarray:
        """:math:`L\\circ G`."""
        return tensor_product(self.C1, self.C2, G, C1sq=self.C1sq, C2sq=self.C2sq)

    def terms(self, G: np.ndarray, LG: np.ndarray | None = None) -> tuple[float, float]:
        """Transport term and penalty of the plan ``G`` (``LG`` = :math:`L\\circ G` when already known)."""
        LG = self.L(G) if LG is None else LG
        return float(np.sum(LG * G)), self.const - 2.0 * self.lam * float(G.sum()) ** 2

    def result(self, run: FWRun, method: str) -> PGWResult:
        """The :class:`PGWResult` of a Frank-Wolfe run (reuses the run's :math:`L\\circ\\gamma`)."""
        G = run.plan
        transport, penalty = self.terms(G, run.LG)
        G.setflags(write=False)
        return PGWResult(math.sqrt(max(0.0, transport + penalty)), transport, penalty, G, float(G.sum()),
                         run.n_iter, run.converged, method)


class LinearOracle(Protocol):
    """A linear minimisation oracle: the vertex :math:`S` (n, m) of the feasible set that minimises
    :math:`\\langle \\tilde M\\circ\\gamma, S\\rangle` for half the gradient ``grad`` = :math:`\\tilde M\\circ\\gamma`."""

    def __call__(self, grad: np.ndarray) -> np.ndarray: ...


def _extended_marginals(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:math:`\\hat p = [p; |q|]`, :math:`\\hat q = [q; |p|]` (one dummy point each)."""
    return np.append(p, q.sum()), np.append(q, p.sum())


class PartialOracle:
    """Algorithm 1's oracle: :math:`\\min_{S\\in\\Gamma_\\le(p,q)}\\langle G, S\\rangle` as a balanced EMD
    (POT's network simplex) between :math:`\\hat p, \\hat q` with cost ``[[G, 0], [0, 0]]``; the dummy row
    and column of the solution are dropped.

    References: paper Algorithm 1 and Proposition (partial OT as balanced OT with dummies), Sec. 4.1.
    """

    scale = 1.0

    def __init__(self, p: np.ndarray, q: np.ndarray) -> None:
        self.p_ext, self.q_ext = _extended_marginals(p, q)
        self.n, self.m = p.size, q.size
        self._cost = np.zeros((self.n + 1, self.m + 1))

    def __call__(self, grad: np.ndarray) -> np.ndarray:
        ot = import_pot()  # POT (and the array backends it probes) loads on first solve, not on import

        self._cost[: self.n, : self.m] = self.scale * grad
        S = ot.emd(self.p_ext, self.q_ext, self._cost, numItermax=EMD_MAX_ITER, center_dual=False,
                   check_marginals=False)
        return S[: self.n, : self.m]


class ExtendedOracle(PartialOracle):
    """Algorithm 2's oracle: Frank-Wolfe on the extended balanced problem over
    :math:`\\Gamma(\\hat p, \\hat q)`, whose objective has the tensor :math:`\\tilde M` on the n x m block
    and 0 wherever a dummy index appears. Its gradient is :math:`2\\tilde M\\circ\\gamma` on the block and 0
    on the dummy row and column, and the oracle is a plain EMD with that gradient as cost.

    The extended iterate :math:`\\hat\\gamma` is fixed by its block (the dummy row and column hold what the
    block leaves of each marginal, the corner :math:`|\\gamma|`), and the line search of Algorithm 2 reads
    the block only, so the shared loop keeps the block.

    References: paper Algorithm 2, Sec. 4.2.
    """

    scale = 2.0  # the gradient of the extended objective, not half of it


#: The oracle of each exact method.
ORACLES: dict[str, type[PartialOracle]] = {"fw-v1": PartialOracle, "fw-v2": ExtendedOracle}


@dataclasses.dataclass(frozen=True)
class FWRun:
    """The last iterate of a Frank-Wolfe run, its :math:`L\\circ\\gamma`, the iterations and whether the
    gap test (or a zero step) stopped it."""

    plan: np.ndarray
    LG: np.ndarray
    n_iter: int
    converged: bool


def frank_wolfe(P: PGWProblem, G0: np.ndarray, oracle: LinearOracle, *, max_iter: int = MAX_ITER,
                tol: float = TOL) -> FWRun:
    """Frank-Wolfe for PGW with exact line search, from the partial plan ``G0``.

    .. math::

        S_k = \\mathrm{LMO}(\\tilde M\\circ\\gamma_k),\\quad \\delta = S_k - \\gamma_k,\\quad
        a = \\langle\\tilde M\\circ\\delta, \\delta\\rangle,\\ b = 2\\langle\\tilde M\\circ\\gamma_k, \\delta\\rangle,
        \\quad \\gamma_{k+1} = \\gamma_k + \\alpha^*(a, b)\\,\\delta

    :math:`L\\circ\\gamma` is linear in :math:`\\gamma`, so it is updated with the step
    (:math:`L\\circ\\gamma_{k+1} = L\\circ\\gamma_k + \\alpha L\\circ\\delta`): one tensor product per iteration.

    References: paper Algorithms 1 and 2 (Sec. 4).
    """
    G = G0.copy()
    LG = P.L(G)
    mass = G.sum()
    for it in range(1, max_iter + 1):
        grad = LG - 2.0 * P.lam * mass  # half the gradient, (M~ o G)
        delta = oracle(grad) - G
        Ldelta = P.L(delta)
        dmass = delta.sum()
        a = float(np.sum(Ldelta * delta)) - 2.0 * P.lam * dmass**2
        b = 2.0 * float(np.sum(grad * delta))
        objective = float(np.sum(LG * G)) - 2.0 * P.lam * mass**2 + P.const
        if gap_converged(-b, objective, P.const, tol):
            return FWRun(G, LG, it, True)
        alpha = line_search(a, b)
        if alpha == 0.0:
            return FWRun(G, LG, it, True)
        G = G + alpha * delta
        LG = LG + alpha * Ldelta
        mass = mass + alpha * dmass
    return FWRun(G, LG, max_iter, False)


def single_threaded_blas():
    """A context in which BLAS runs on one thread: the matrices of one pair are small (about 100 x 100),
    so extra BLAS threads only contend with the parallel workers (measured 3-10x slower on 2 busy cores)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")
