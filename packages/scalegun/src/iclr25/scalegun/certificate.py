"""The (epsilon, delta) certificate: noise calibration, the data-dependent and worst-case gradient-residual
bounds, and the ledger that records them per request.

Certified removal (Guo et al., 2020): with objective noise ``b ~ N(0, sigma^2 I)``, an approximate model
whose gradient residual on the edited data satisfies ``||grad L_b(w^-; D')|| <= sigma * epsilon / c(delta)``,
``c(delta) = sqrt(2 ln(1.5 / delta))``, is (epsilon, delta)-indistinguishable from retraining.

References: ScaleGUN Theorems 4.1-4.3 (edge, node, feature unlearning), Sec. 4 "data-dependent bound";
Guo et al. (2020) Theorem 3.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.io import atomic_write

__all__ = ["noise_multiplier", "residual_budget", "worst_case_terms", "r_max_rule", "R_MAX_FRACTION",
           "R_MAX_FALLBACK", "LedgerRecord", "Ledger"]

GAMMA = 0.25  # Lipschitz constant used for the logistic loss's second derivative (1/4 bounds 1/(6 sqrt 3))
R_MAX_FRACTION = 0.1  # share of the budget that a full residue state may use under the default r_max
R_MAX_FALLBACK = 1e-7  # relative r_max when there is no budget (sigma = 0): the paper's Cora setting


def noise_multiplier(delta: float) -> float:
    """``c(delta) = sqrt(2 ln(1.5 / delta))``.

    Examples
    --------
    >>> round(noise_multiplier(1e-4), 4)
    4.3854
    """
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    return math.sqrt(2.0 * math.log(1.5 / delta))


def residual_budget(sigma: float, epsilon: float, delta: float) -> float:
    """The gradient-residual budget ``sigma * epsilon / c(delta)`` per class (``inf`` when ``sigma == 0``:
    no noise, no guarantee, used only to audit the bounds).

    References: Guo et al. (2020) Theorem 3; ScaleGUN Sec. 4 (budget check and retraining rule).
    """
    if sigma == 0.0:
        return math.inf
    return sigma * epsilon / noise_multiplier(delta)


def worst_case_terms(eps2: float, *, n_nodes: int, n_train: int, n_features: int, lam: float, r_max: float,
                     n_levels: int) -> tuple[float, float]:
    """The worst-case (data-independent) gradient residual bound of one request, per class.

    With ``eps1 = sqrt(n) * (L+1) * r_max`` (propagation error) and ``eps2`` the embedding change of the
    request (edge ``(u, v)``: ``4/sqrt(d_u) + 4/sqrt(d_v)``; node: ``sum_nbr 4/sqrt(d)``; feature:
    ``sqrt(d)``), with ``gamma = 1/4`` and ``c = c_1 = 1``:

        Delta  = 2c + c gamma F (1 + eps1)(2 eps1 + eps2) / lam + c_1 sqrt(F n_t)(2 eps1 + eps2)
        approx = gamma eps1 F (c / lam + Delta / (n_t lam)) + c_1 sqrt(F n_t) eps1
        unlearn = gamma (1 + eps1)^2 F Delta / (n_t lam)

    Returns ``(approx, unlearn)``: ``unlearn`` accumulates over requests, ``approx`` is the current state's.

    References: ScaleGUN Theorems 4.1-4.3 (worst-case bounds), as evaluated in its code.
    """
    c = c1 = 1.0
    eps1 = math.sqrt(n_nodes) * n_levels * r_max
    F, nt = float(n_features), float(max(n_train, 1))
    delta_w = 2 * c + c * GAMMA * F * (1 + eps1) * (2 * eps1 + eps2) / lam + c1 * math.sqrt(F * nt) * (2 * eps1 + eps2)
    approx = GAMMA * eps1 * F * (c / lam + delta_w / (nt * lam)) + c1 * math.sqrt(F * nt) * eps1
    unlearn = GAMMA * (1 + eps1) ** 2 * F * delta_w / (nt * lam)
    return approx, unlearn


def r_max_rule(budget: float, *, grad_norms: Any, weight_norms: Any, spec: float, inv_deg_sum: float,
               n_features: int, tail_sum: float, rounding: float = 0.0,
               fraction: float = R_MAX_FRACTION) -> float:
    """The default absolute push threshold: the largest ``r_max`` for which **every** residue state with
    ``|r| <= r_max`` keeps the approximation term at most ``fraction * budget``.

    Such a state has ``rho <= T r_max sqrt(F sum_v 1/d_v) + rounding`` (``T = sum_{j<L} sum_{l>=j} |w_l|``,
    see :meth:`PushPropagator.residue_bound`), and the approximation term of class k is
    ``A_k(rho) = rho ||a_k|| + gamma ||w_k|| rho (||Z||_2 + rho)``; so ``rho*`` is the smallest positive root
    of ``A_k(rho) = fraction * budget`` over the classes and

        r_max = (rho* - rounding) / (T sqrt(F sum_v 1/d_v)).

    With ``||a_k|| ~ sqrt(n_train)`` and ``sum_v 1/d_v ~ n / d_avg``, ``r_max`` shrinks like
    ``1 / sqrt(n n_train)``, i.e. ``1/n`` at a fixed training fraction and average degree (the paper's
    worst-case bound has ``eps1 = sqrt(n) L r_max``). Because the term can never exceed
    ``fraction * budget <= budget / 2``, the unlearner never needs a residue flush while the model
    statistics stay within a factor ``1 / (2 fraction)`` of their values at fit time.
    Returns ``nan`` when ``rounding`` alone reaches ``rho*`` (no threshold can keep the term that small).

    References: ScaleGUN Lemma 3.1 and Theorem 4.1 (the approximation error term and its ``r_max``
    dependence); this rule is ours (the paper sets ``rmax`` by hand per dataset).
    """
    a = np.asarray(grad_norms, dtype=np.float64)
    w = np.asarray(weight_norms, dtype=np.float64)
    target = fraction * budget
    b = a + GAMMA * w * spec
    c = GAMMA * w
    rho = float(np.min(2.0 * target / (b + np.sqrt(b * b + 4.0 * c * target))))
    if rho <= rounding:
        return math.nan
    return (rho - rounding) / (tail_sum * math.sqrt(n_features * inv_deg_sum))


@dataclasses.dataclass(frozen=True)
class LedgerRecord:
    """One request of the certificate ledger (per-class quantities are tuples over classes).

    Attributes
    ----------
    index, kind, n_items : request number, ``"fit" | "edges" | "nodes" | "features" | "retrain"``, batch size.
    update_s, unlearn_s, total_s : seconds for the embedding update, the model update, both.
    newton_term : this request's Newton residual bound ``gamma R ||Z||_2 ||Delta|| ||Z Delta||``.
    accumulated : the accumulated Newton bound since the last (re)training, incl. the optimiser's residual.
    approx_term : the propagation-error term of the current state.
    data_bound : ``accumulated + approx_term`` (the data-dependent bound checked against the budget).
    worst_case_bound : the accumulated worst-case bound.
    true_residual : ``||grad L_b(w; Z_exact)||`` when the unlearner audits (else ``None``).
    budget : per-class budget ``sigma epsilon / c(delta)``; ``budget_used`` = max data bound / budget.
    retrained : whether this request triggered retraining (the bounds are then those after retraining).
    repushed : whether the residues were flushed (pushed with threshold 0) because the propagation-error
        term used up the budget; the flush time is part of ``update_s``.
    cg_iterations : conjugate-gradient iterations of this request's Newton solve(s) (0: direct solve or none).
    rows_changed : nodes whose embedding the request's update changed (all nodes in the exact modes).
    """

    index: int
    kind: str
    n_items: int
    update_s: float
    unlearn_s: float
    total_s: float
    newton_term: tuple[float, ...]
    accumulated: tuple[float, ...]
    approx_term: tuple[float, ...]
    data_bound: tuple[float, ...]
    worst_case_bound: float
    true_residual: tuple[float, ...] | None
    budget: float
    budget_used: float
    retrained: bool
    repushed: bool = False
    cg_iterations: int = 0
    rows_changed: int = 0

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        for key in ("budget", "budget_used", "worst_case_bound"):
            if math.isinf(d[key]):
                d[key] = None  # JSON has no infinity; None means "unbounded"
        for key in ("newton_term", "accumulated", "approx_term", "data_bound", "true_residual"):
            if d[key] is not None:
                d[key] = list(d[key])
        return d


class Ledger(Sequence[LedgerRecord]):
    """The append-only list of :class:`LedgerRecord` with totals and JSON export."""

    def __init__(self) -> None:
        self._records: list[LedgerRecord] = []

    def __getitem__(self, i):  # type: ignore[override]
        return self._records[i]

    def __len__(self) -> int:
        return len(self._records)

    def append(self, record: LedgerRecord) -> None:
        self._records.append(record)

    @property
    def n_retrains(self) -> int:
        """Retrainings triggered by requests (the initial fit is not counted)."""
        return sum(r.retrained for r in self._records if r.kind != "fit")

    @property
    def n_repushes(self) -> int:
        """Requests that flushed all residues to restore the budget."""
        return sum(r.repushed for r in self._records)

    @property
    def n_requests(self) -> int:
        return sum(r.kind in ("edges", "nodes", "features") for r in self._records)

    def to_dict(self) -> dict[str, Any]:
        return {"n_requests": self.n_requests, "n_retrains": self.n_retrains, "n_repushes": self.n_repushes,
                "records": [r.to_dict() for r in self._records]}

    def to_json(self, path: str | os.PathLike[str] | None = None) -> str:
        """The ledger as JSON text; also written atomically to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=1, allow_nan=False)
        if path is not None:
            with atomic_write(Path(path)) as f:
                f.write(text + "\n")
        return text
