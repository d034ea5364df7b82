"""The budget rule and retraining of :class:`CertifiedUnlearner`.

After every request the data-dependent bound ``beta_k + A_k`` of each class is checked against the budget
``sigma epsilon / c(delta)``. The documented action when a class exceeds it:

1. if the propagation-error term is the larger part (``max A >= max beta``), **flush**: push every residue
   (threshold 0, about one propagation), take one more Newton step for that embedding change, and check
   again (retraining alone would not help, since it leaves the residues in place);
2. if the bound still exceeds the budget, **retrain** from scratch on the current embeddings with fresh
   noise ``b``, which resets ``beta`` to the optimiser's gradient norm.

The ledger marks such requests ``repushed`` / ``retrained``.

References: ScaleGUN Algorithm 3 (retrain when the bound exceeds the budget); Guo et al. (2020) Algorithm 1.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from .certificate import LedgerRecord
from .model import ovr_gradient, train_ovr

__all__: list[str] = []


class _Retraining:
    """Budget enforcement and (re)training; mixed into :class:`CertifiedUnlearner`."""

    def _over_budget(self, approx: np.ndarray) -> bool:
        return float(np.max(self._beta + approx)) > self.budget

    def _enforce_budget(self, kind: str, n_items: int, t0: float, t1: float, newton: np.ndarray, spec: float,
                        iters: int, rows_changed: int) -> LedgerRecord:
        approx = self._approx_term(spec)
        repush_s, repushed, retrained = 0.0, False, False
        if self._over_budget(approx) and self._prop is not None and float(np.max(approx)) >= float(
                np.max(self._beta)):
            tr = time.perf_counter()
            rows = self._prop.flush()
            change = self._ingest(rows, np.empty(0, dtype=np.int64))
            repush_s = time.perf_counter() - tr
            more, spec, more_iters = self._newton(*change)
            newton, iters = newton + more, iters + more_iters
            approx = self._approx_term(spec)
            repushed = True
        if self._over_budget(approx):
            self._retrain()
            retrained = True
            approx = self._approx_term(spec)
        t2 = time.perf_counter()
        return self._record(kind, n_items, t1 - t0 + repush_s, t2 - t1 - repush_s, newton, retrained=retrained,
                            approx=approx, repushed=repushed, cg_iterations=iters, rows_changed=rows_changed)

    def _retrain(self) -> None:
        """L-BFGS from ``W = 0`` with fresh noise on the current training rows; resets the bounds."""
        self._K = self._Zt.T @ (self._t[:, None] * self._Zt)
        F, C = self.X_.shape[1], self.n_classes
        noise = torch.randn(F, C, generator=self._gen, dtype=torch.float64)
        self._b = (self.sigma * noise).to(self.device)
        self.W_ = train_ovr(self._Zt, self._Y, self._t, self.lam, self._b, max_iter=self.max_iter,
                            n=self._n_active())
        g = ovr_gradient(self.W_, self._Zt, self._Y, self._t, self.lam, self._b)
        self._beta = torch.linalg.vector_norm(g, dim=0).cpu().numpy()
        self._worst_acc = self._beta.copy()
