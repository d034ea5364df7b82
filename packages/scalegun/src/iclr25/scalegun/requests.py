"""Unlearning requests of :class:`CertifiedUnlearner`: apply the edit to the embeddings (lazy push, or
exact re-propagation in the baseline modes), copy the changed rows into the training tensors, and take one
Newton step for the whole request (a batch of edges is one request: one re-push, one Newton step).

Newton step for every class k (ScaleGUN Algorithm 3, line 4):

    Delta_k = H_k(w_k; Z')^{-1} (grad L_k(w_k; Z) - grad L_k(w_k; Z')),   w_k <- w_k + Delta_k,

where only the changed rows differ between the two gradients. ``H_k^{-1}`` is applied by preconditioned
conjugate gradients on Hessian-vector products (``newton_solver="cg"``, ``O(n F C)`` per iteration) or by
forming the ``F x F`` Hessians and a direct solve (``"direct"``, ``O(n F^2 C)``).

References: ScaleGUN (Yi & Wei, ICLR 2025) Algorithms 2-3; Guo et al. (2020) Algorithm 1.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import torch

from .certificate import LedgerRecord, worst_case_terms
from .model import newton_solve_cg, ovr_hessian, row_gradient_terms
from .propagation import csr_neighbours, exact_propagation, set_csr_weights

__all__: list[str] = []


class _Requests:
    """Request application and the Newton step; mixed into :class:`CertifiedUnlearner`."""

    def _apply_edges(self, e: np.ndarray) -> np.ndarray:
        if self._prop is not None:
            return self._prop.remove_edges(e)
        src = np.concatenate([e[:, 0], e[:, 1]])
        dst = np.concatenate([e[:, 1], e[:, 0]])
        set_csr_weights(self._A, src, dst, 0.0)
        np.subtract.at(self._deg, src, 1.0)
        return np.arange(self.X_.shape[0])  # _request re-propagates once

    def _node_edges(self, v: np.ndarray) -> tuple[np.ndarray, float]:
        """The current edges of nodes ``v`` (each once) and the worst-case embedding change ``eps2``."""
        nbrs = [csr_neighbours(self._A, a) for a in v.tolist()]
        eps2 = float(sum(np.sum(4.0 / np.sqrt(self._deg[nb])) for nb in nbrs))
        pairs = [np.stack([np.full(len(nb), a), nb], axis=1) for a, nb in zip(v.tolist(), nbrs, strict=True)]
        e = np.concatenate(pairs)
        e = np.unique(np.sort(e, axis=1), axis=0) if len(e) else e  # an edge between two removed nodes once
        return e, eps2

    def _apply_node_removal(self, v: np.ndarray, e: np.ndarray) -> np.ndarray:
        rows = [self._apply_edges(e)] if len(e) else []
        rows.append(self._apply_features(v))
        return np.unique(np.concatenate(rows))

    def _apply_features(self, v: np.ndarray) -> np.ndarray:
        if self._prop is not None:
            return self._prop.zero_features(v)
        self._Xc[v] = 0.0
        return np.arange(self.X_.shape[0])  # _request re-propagates once

    def _sync_rows(self, rows: np.ndarray) -> torch.Tensor:
        """Copy changed embedding rows into the training tensor; returns their training positions."""
        pos = self._train_pos[rows]
        keep = pos >= 0
        p = torch.as_tensor(pos[keep], device=self.device)
        self._Zt[p] = torch.as_tensor(self._embedding()[rows[keep]], dtype=torch.float64, device=self.device)
        return p

    def _ingest(self, rows: np.ndarray, gone: np.ndarray) -> tuple:
        """Copy changed embedding rows into the training tensors and drop the training positions ``gone``;
        returns what the Newton step needs (positions, old and new rows and weights, old count)."""
        pos = self._train_pos[rows]
        p = torch.as_tensor(np.union1d(pos[pos >= 0], gone), device=self.device)
        Z_old, t_old = self._Zt[p].clone(), self._t[p].clone()
        n_old = float(self._n_active())
        self._sync_rows(rows)
        self._t[torch.as_tensor(gone, device=self.device)] = 0.0
        self._active[gone] = False
        Z_new, t_new = self._Zt[p], self._t[p]
        self._K += Z_new.T @ (t_new[:, None] * Z_new) - Z_old.T @ (t_old[:, None] * Z_old)
        return p, Z_old, t_old, n_old, Z_new, t_new

    def _newton(self, p, Z_old, t_old, n_old, Z_new, t_new) -> tuple[np.ndarray, float, int]:
        """One Newton step ``w += Delta``; returns this step's residual terms (Taylor remainder plus the
        solver's residual ``||rhs_k - H_k Delta_k||``), ``||Z_new||_2`` and the CG iterations."""
        W, Y, t = self.W_, self._Y, self._t
        rhs = (Z_old.T @ (t_old[:, None] * row_gradient_terms(W, Z_old, Y[p]))
               - Z_new.T @ (t_new[:, None] * row_gradient_terms(W, Z_new, Y[p]))
               + self.lam * (n_old - float(self._n_active())) * W)  # (F, C)
        if self.newton_solver == "cg":
            delta, res, iters = newton_solve_cg(W, self._Zt, t, self.lam, rhs, self._K)
        else:
            H = ovr_hessian(W, self._Zt, Y, t, self.lam)
            delta = torch.linalg.solve(H, rhs.T.unsqueeze(-1)).squeeze(-1).T  # (F, C)
            res = torch.linalg.vector_norm(rhs - torch.einsum("kfg,gk->fk", H, delta), dim=0)
            iters = 0
        self.W_ = W + delta
        spec, radius = self._active_stats()
        newton = self._newton_term(delta, spec, radius) + res.cpu().numpy()
        self._beta = self._beta + newton
        return newton, spec, iters

    def _request(self, kind: str, n_items: int, apply: Callable[[], np.ndarray], removed: np.ndarray,
                 eps2: float) -> LedgerRecord:
        t0 = time.perf_counter()
        rows = apply()
        if self._prop is None:  # exact modes: one re-propagation per request, after all of its edits
            self._Z = exact_propagation(self._A, self._Xc, self.weights, self._deg)
        gone = self._train_pos[removed]
        change = self._ingest(rows, gone[gone >= 0])
        if kind == "nodes":
            self._removed_nodes[removed] = True
        if kind in ("nodes", "features"):
            self._removed_feats[removed] = True
        t1 = time.perf_counter()
        if self.mode == "retrain":
            self._retrain()
            t2 = time.perf_counter()
            return self._record(kind, n_items, t1 - t0, t2 - t1, self._zeros(), retrained=True,
                                rows_changed=len(rows))
        newton, spec, iters = self._newton(*change)
        _, un_worst = worst_case_terms(eps2, **self._worst_kwargs())
        self._worst_acc = self._worst_acc + un_worst
        return self._enforce_budget(kind, n_items, t0, t1, newton, spec, iters, len(rows))
