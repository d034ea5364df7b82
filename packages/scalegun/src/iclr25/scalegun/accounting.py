"""Certificate accounting of :class:`CertifiedUnlearner`: the data-dependent bound per request (Newton
residual terms accumulated since the last (re)training plus the propagation-error term of the current
state), the worst-case bound, the default ``r_max`` rule and the ledger records.

The bound of class k after a request is ``beta_k + A_k``:

* ``beta_k``: the optimiser's gradient norm after (re)training plus, per request,
  ``gamma max(1, R) ||Z||_2 ||Delta_k|| ||Z Delta_k||`` (Taylor remainder of the Newton step) and the
  conjugate-gradient residual ``||rhs_k - H_k Delta_k||``;
* ``A_k``: a bound on ``||grad L_k(w; Z) - grad L_k(w; Z_hat)||`` from the residues (:meth:`_approx_term`).

References: ScaleGUN Sec. 4 (data-dependent bound), Theorems 4.1-4.3 (worst-case bounds); Guo et al.
(2020) Theorem 1 and Corollary 1.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from .certificate import GAMMA, R_MAX_FALLBACK, R_MAX_FRACTION, LedgerRecord, r_max_rule, worst_case_terms
from .model import ovr_gradient, row_gradient_terms

__all__: list[str] = []


class _Accounting:
    """Bound bookkeeping; mixed into :class:`CertifiedUnlearner` (it uses the unlearner's tensors)."""

    def _active_stats(self) -> tuple[float, float]:
        """``(||Z_train||_2, max_i ||z_i||)`` over the active training rows.

        ``K = Z^T diag(t) Z`` is updated by the changed rows only; the relative 1e-9 margin on its top
        eigenvalue covers the rounding of those updates.
        """
        spec = math.sqrt(max(float(torch.linalg.eigvalsh(self._K)[-1]), 0.0) * (1.0 + 1e-9))
        radius = float((torch.linalg.vector_norm(self._Zt, dim=1) * self._t).max())
        return spec, radius

    def _newton_term(self, delta: torch.Tensor, spec: float, radius: float) -> np.ndarray:
        """``gamma max(1, R) ||Z||_2 ||Delta_k|| ||Z Delta_k||`` per class (Guo et al. Thm 1; ScaleGUN Sec. 4)."""
        ZD = self._t[:, None] * (self._Zt @ delta)
        terms = GAMMA * max(1.0, radius) * spec * torch.linalg.vector_norm(delta, dim=0) * \
            torch.linalg.vector_norm(ZD, dim=0)
        return terms.cpu().numpy()

    def _approx_parts(self) -> tuple[np.ndarray, np.ndarray]:
        """``(||a_k||, ||w_k||)`` per class at the current model, ``a_i = l'(w_k^T z_hat_i)``."""
        a = self._t[:, None] * row_gradient_terms(self.W_, self._Zt, self._Y)
        return (torch.linalg.vector_norm(a, dim=0).cpu().numpy(),
                torch.linalg.vector_norm(self.W_, dim=0).cpu().numpy())

    def _approx_term(self, spec: float | None = None) -> np.ndarray:
        """Bound on ``||grad L(w; Z) - grad L(w; Z_hat)||`` per class from the residues.

        With ``E = Z - Z_hat`` on the active training rows, ``a_i = l'(w^T z_hat_i)`` and ``|l''| <= gamma``:

            grad L(w; Z) - grad L(w; Z_hat) = E^T a + E^T (a' - a) + Z_hat^T c,
            |a'_i - a_i| <= gamma |w^T e_i|,   |c_i| <= gamma |w^T e_i|,

        so the difference is at most ``rho ||a_k|| + gamma ||w_k|| rho (||Z_hat||_2 + rho)`` with
        ``rho >= ||E||_F`` (:meth:`PushPropagator.residue_bound` plus
        :meth:`PushPropagator.rounding_allowance`, so that the bound also holds when every residue is zero).
        """
        if self._prop is None:
            return self._zeros()
        rho = self._prop.residue_bound() + self._prop.rounding_allowance()
        if spec is None:
            spec, _ = self._active_stats()
        an, wn = self._approx_parts()
        return rho * an + GAMMA * wn * rho * (spec + rho)

    def _rule_r_max(self) -> float:
        """The default absolute ``r_max`` (:func:`r_max_rule`) at the fitted model; without a budget
        (``sigma = 0``) the paper's relative ``1e-7``."""
        if not math.isfinite(self.budget) or self.hops == 0:
            return R_MAX_FALLBACK * self._l1_mean
        an, wn = self._approx_parts()
        spec, _ = self._active_stats()
        tail = np.cumsum(np.abs(self.weights)[::-1])[::-1][: self.hops]
        r = r_max_rule(self.budget, grad_norms=an, weight_norms=wn, spec=spec,
                       inv_deg_sum=float(np.sum(1.0 / self._deg)), n_features=self.X_.shape[1],
                       tail_sum=float(tail.sum()), rounding=self._prop.rounding_allowance())
        if not math.isfinite(r) or r <= 0.0:
            raise ValueError(f"dtype={self.dtype!r}: its rounding allowance alone uses more than "
                             f"{100 * R_MAX_FRACTION:.0f}% of the budget {self.budget:.3g} at n = {self.X_.shape[0]} nodes, "
                             "so no r_max can certify; use dtype='float64', or sigma=0 with audit=True")
        return r

    def _worst_kwargs(self) -> dict[str, Any]:
        return dict(n_nodes=self.X_.shape[0], n_train=self._n_active(), n_features=self.X_.shape[1],
                    lam=self.lam, r_max=self.r_max_abs if self.mode == "scalegun" else 0.0,
                    n_levels=self.hops + 1)

    def _true_residual(self) -> np.ndarray:
        # the exact modes keep the exact embeddings already
        Z = (self.exact_embeddings() if self._prop is not None else self._Z)[self.train_idx]
        Zt = torch.as_tensor(Z, dtype=torch.float64, device=self.device)
        g = ovr_gradient(self.W_, Zt, self._Y, self._t, self.lam, self._b)
        return torch.linalg.vector_norm(g, dim=0).cpu().numpy()

    def _record(self, kind: str, n_items: int, update_s: float, unlearn_s: float, newton: np.ndarray, *,
                retrained: bool, approx: np.ndarray | None = None, repushed: bool = False,
                cg_iterations: int = 0, rows_changed: int = 0) -> LedgerRecord:
        if approx is None:
            approx = self._approx_term()
        data = self._beta + approx
        approx_worst, _ = worst_case_terms(0.0, **self._worst_kwargs())
        worst = float(np.max(self._worst_acc)) + approx_worst
        used = float(np.max(data)) / self.budget if math.isfinite(self.budget) else 0.0
        rec = LedgerRecord(
            index=len(self.ledger), kind=kind, n_items=int(n_items), update_s=update_s, unlearn_s=unlearn_s,
            total_s=update_s + unlearn_s, newton_term=tuple(map(float, newton)),
            accumulated=tuple(map(float, self._beta)), approx_term=tuple(map(float, approx)),
            data_bound=tuple(map(float, data)), worst_case_bound=worst,
            true_residual=tuple(map(float, self._true_residual())) if self.audit else None,
            budget=self.budget, budget_used=used, retrained=retrained, repushed=repushed,
            cg_iterations=int(cg_iterations), rows_changed=int(rows_changed))
        self.ledger.append(rec)
        return rec
