"""``CertifiedUnlearner``: ScaleGUN's certified edge, node and feature unlearning, with CGU and retraining
as modes of the same class.

Per request (ScaleGUN Sec. 4, Algorithm 3):

1. update the embeddings lazily (push) — or, in ``mode="cgu"``, by exact re-propagation;
2. for every class k: ``Delta_k = H_k(w_k; Z')^{-1} (grad L_k(w_k; Z) - grad L_k(w_k; Z'))``, ``w_k += Delta_k``;
3. accumulate the data-dependent bound ``beta_k += gamma R ||Z'||_2 ||Delta_k|| ||Z' Delta_k||`` and add the
   propagation-error term of the current state;
4. if a class's bound exceeds the budget ``sigma epsilon / c(delta)``, retrain from scratch with fresh noise.
"""

from __future__ import annotations

import contextlib
import functools
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch

from iclr25.utils.seeding import check_seed

from .certificate import GAMMA, Ledger, LedgerRecord, residual_budget, worst_case_terms
from .datasets import preprocess_features
from .model import ovr_gradient, ovr_hessian, row_gradient_terms, train_ovr
from .propagation import (
    PushPropagator,
    csr_neighbours,
    csr_weights,
    exact_propagation,
    gpr_weights,
    set_csr_weights,
)

__all__ = ["CertifiedUnlearner", "MODES"]

MODES = ("scalegun", "cgu", "retrain")


@contextlib.contextmanager
def _torch_threads(n: int | None) -> Iterator[None]:
    """Run with ``n`` torch CPU threads, restoring the caller's setting afterwards."""
    if n is None:
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def _with_threads(method: Callable) -> Callable:
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with _torch_threads(self.torch_threads if self.device.type == "cpu" else None):
            return method(self, *args, **kwargs)
    return wrapper


def _as_float_matrix(X: Any, name: str) -> np.ndarray:
    if sp.issparse(X):
        X = X.toarray()
    arr = np.asarray(X)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must be a numeric array, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array (n_nodes, n_features), got shape {arr.shape}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def _as_index(x: Any, name: str, n: int, *, unique: bool = True) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
        raise TypeError(f"{name} must be integer node ids, got dtype {arr.dtype}")
    arr = arr.astype(np.int64).ravel()
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if arr.min() < 0 or arr.max() >= n:
        raise ValueError(f"{name} must be node ids in [0, {n}), got range [{arr.min()}, {arr.max()}]")
    if unique and len(np.unique(arr)) != len(arr):
        raise ValueError(f"{name} must not contain duplicate node ids")
    return arr


def _as_adjacency(adj: Any, n: int) -> sp.csr_array:
    if sp.issparse(adj):
        A = sp.csr_array(adj)
    else:
        arr = np.asarray(adj)
        if arr.ndim != 2:
            raise ValueError(f"adj must be a square 2-D (n, n) matrix, got shape {arr.shape}")
        A = sp.csr_array(arr)
    if A.shape != (n, n):
        raise ValueError(f"adj must have shape ({n}, {n}) to match X, got {A.shape}")
    if not (np.issubdtype(A.dtype, np.number) or A.dtype == bool):
        raise TypeError(f"adj must be numeric, got dtype {A.dtype}")
    A = A.astype(np.float64)
    if not np.all(np.isfinite(A.data)):
        raise ValueError("adj must be finite (no NaN or inf)")
    A.data = (A.data != 0).astype(np.float64)  # unweighted graph, as in the paper
    A.eliminate_zeros()
    if (A != A.T).nnz:
        raise ValueError("adj must be symmetric (an undirected graph); symmetrise it, e.g. A.maximum(A.T)")
    # add the remaining self loops (existing ones are kept at weight 1)
    A = sp.csr_array(A - sp.diags_array(A.diagonal()) + sp.eye_array(n, format="csr"))
    A.sum_duplicates()
    A.eliminate_zeros()
    A.sort_indices()
    return A


def _positive(x: Any, name: str, *, allow_zero: bool = False, upper: float | None = None) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(x).__name__}")
    x = float(x)
    ok = math.isfinite(x) and (x >= 0 if allow_zero else x > 0) and (upper is None or x < upper)
    if not ok:
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {bound}" + (f" and < {upper}" if upper else "") + f", got {x}")
    return x


class CertifiedUnlearner:
    """Certified graph unlearning on a GPR-propagated linear model (ScaleGUN).

    Parameters
    ----------
    adj : (n, n) scipy sparse matrix or array
        Symmetric adjacency of an undirected graph; self loops are added; weights are ignored.
    X : (n, F) array
        Node features. With ``standardize=True`` they are standardised and scaled to ``||x_i|| <= 1``;
        otherwise they must already satisfy ``||x_i|| <= 1``.
    y : (n,) int array
        Class labels ``0..C-1``.
    train_idx : int array
        Training nodes.
    hops : int
        Propagation depth L (levels ``0..L``); the paper's ``prop_step = L + 1``.
    weights : None, ``"sgc" | "ppr" | "avg" | "hetero"`` or an array of ``hops + 1`` floats
        GPR level weights; ``None`` is SGC, ``w = (0, ..., 0, 1)``.
    r_max : float
        Push threshold relative to the mean column L1 norm of the features (the paper's ``rmax``).
    epsilon, delta : float
        The certificate's privacy parameters.
    lam : float
        L2 regularisation (multiplied by the number of training nodes).
    alpha : float
        Teleport probability for ``weights="ppr"``.
    sigma : float
        Standard deviation of the objective noise ``b``. ``0`` disables noise and the budget (no guarantee):
        use it only to audit the bounds, as the paper's ``--compare_gnorm``.
    mode : ``"scalegun" | "cgu" | "retrain"``
        ``scalegun``: lazy push + Newton step; ``cgu``: exact re-propagation + Newton step;
        ``retrain``: exact re-propagation + training from scratch on every request.
    audit : bool
        Also compute the true gradient residual on the exact embeddings after every request (costly).
    max_iter : int
        L-BFGS iterations of (re)training.
    device : str or torch.device, optional
        Torch device for the model (default: CUDA when available, else CPU).
    torch_threads : int or None
        Torch CPU threads while the unlearner runs (restored afterwards). The per-request algebra is on
        F x F matrices, where one thread avoids thread-pool overhead; ``None`` keeps torch's setting.
    seed : int
        Seeds the objective noise.

    Attributes
    ----------
    ledger : Ledger
        One :class:`LedgerRecord` per fit, request and retraining.

    References: ScaleGUN (Yi & Wei, ICLR 2025), Algorithm 3 and Theorems 4.1-4.3; CGU (Chien et al., 2023).

    Examples
    --------
    >>> from iclr25.scalegun import CertifiedUnlearner, datasets
    >>> g = datasets.csbm(300, 1500, 8, 3, seed=0)
    >>> u = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx).fit()
    >>> rec = u.unlearn_edges([g.edges[0]])
    >>> rec.data_bound[0] <= rec.budget
    True
    """

    def __init__(self, adj: Any, X: Any, y: Any, train_idx: Any, *, hops: int = 2,
                 weights: str | np.ndarray | None = None, r_max: float = 1e-7, epsilon: float = 1.0,
                 delta: float = 1e-4, lam: float = 1e-2, alpha: float = 0.1, sigma: float = 0.1,
                 mode: str = "scalegun", standardize: bool = True, audit: bool = False, max_iter: int = 100,
                 device: str | torch.device | None = None, torch_threads: int | None = 1, seed: int = 0):
        X = _as_float_matrix(X, "X")
        n = X.shape[0]
        y_arr = np.asarray(y)
        if y_arr.dtype == bool or not np.issubdtype(y_arr.dtype, np.integer):
            raise TypeError(f"y must be integer class labels, got dtype {y_arr.dtype}")
        if y_arr.shape != (n,):
            raise ValueError(f"y must have shape ({n},) to match X, got {y_arr.shape}")
        if y_arr.min() < 0:
            raise ValueError(f"y must hold class labels >= 0, got {y_arr.min()}")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if isinstance(weights, str) or weights is None:
            w = gpr_weights(weights, hops, alpha=alpha)
        else:
            w = np.asarray(weights, dtype=np.float64)
            gpr_weights(None, hops)  # validates hops
            if w.shape != (hops + 1,) or not np.all(np.isfinite(w)):
                raise ValueError(f"weights must be finite with shape ({hops + 1},) for hops={hops}, got {w.shape}")
        self.epsilon = _positive(epsilon, "epsilon")
        self.delta = _positive(delta, "delta", upper=1.0)
        self.lam = _positive(lam, "lam")
        self.sigma = _positive(sigma, "sigma", allow_zero=True)
        self.r_max = _positive(r_max, "r_max", allow_zero=mode != "scalegun")
        if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
            raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")
        self.seed = check_seed(seed)
        self.A_ = _as_adjacency(adj, n)
        self.train_idx = _as_index(train_idx, "train_idx", n)
        if standardize:
            X = preprocess_features(X)
        elif np.linalg.norm(X, axis=1).max() > 1.0 + 1e-9:
            raise ValueError("X rows must have L2 norm <= 1 when standardize=False (the bounds assume it); "
                             "use preprocess_features(X)")
        self.X_ = X
        self.y = y_arr.astype(np.int64)
        self.n_classes = int(self.y.max()) + 1
        self.hops, self.weights, self.mode, self.audit = int(hops), w, mode, bool(audit)
        self.max_iter = int(max_iter)
        if torch_threads is not None and (isinstance(torch_threads, bool) or not isinstance(torch_threads, int)
                                          or torch_threads < 1):
            raise ValueError(f"torch_threads must be None or an integer >= 1, got {torch_threads!r}")
        self.torch_threads = torch_threads
        self.device = torch.device(device if device is not None else ("cuda" if torch.cuda.is_available()
                                                                       else "cpu"))
        # the paper's rmax is relative to the mean column L1 norm of the preprocessed features
        self.r_max_abs = self.r_max * float(np.abs(X).sum(axis=0).mean())
        self.budget = residual_budget(self.sigma, self.epsilon, self.delta)
        self.ledger = Ledger()
        self._gen = torch.Generator().manual_seed(self.seed)
        self._fitted = False

    # ----------------------------------------------------------------------------------------- public API
    @_with_threads
    def fit(self) -> CertifiedUnlearner:
        """Propagate the features (push in ``scalegun`` mode, exact otherwise) and train with fresh noise."""
        t0 = time.perf_counter()
        n = self.X_.shape[0]
        if self.mode == "scalegun":
            self._prop = PushPropagator(self.A_, self.X_, self.weights, self.r_max_abs)
            self._A, self._deg = self._prop.A, self._prop.deg
        else:
            self._prop = None
            self._A = self.A_.copy()
            self._deg = np.asarray(self._A.sum(axis=1)).ravel()
            self._Xc = self.X_.copy()
            self._Z = exact_propagation(self._A, self._Xc, self.weights, self._deg)
        t1 = time.perf_counter()
        self._train_pos = np.full(n, -1, dtype=np.int64)
        self._train_pos[self.train_idx] = np.arange(len(self.train_idx))
        dt = dict(dtype=torch.float64, device=self.device)
        self._Zt = torch.as_tensor(self._embedding()[self.train_idx], **dt)  # fancy indexing copied already
        self._t = torch.ones(len(self.train_idx), **dt)
        Y = np.full((len(self.train_idx), self.n_classes), -1.0)
        Y[np.arange(len(self.train_idx)), self.y[self.train_idx]] = 1.0
        self._Y = torch.as_tensor(Y, **dt)
        self._removed_nodes = np.zeros(n, dtype=bool)
        self._removed_feats = np.zeros(n, dtype=bool)
        self._fitted = True
        self._retrain()
        t2 = time.perf_counter()
        self._record("fit", len(self.train_idx), t1 - t0, t2 - t1, self._zeros(), retrained=True)
        return self

    @_with_threads
    def unlearn_edges(self, edges: Any) -> LedgerRecord:
        """Remove undirected edges (one request; a batch is re-pushed once). Returns the ledger record.

        References: ScaleGUN Theorem 4.1 (certified edge unlearning).
        """
        self._check_fitted()
        e = self._validate_edges(edges)
        eps2 = float(np.sum(4.0 / np.sqrt(self._deg[e[:, 0]]) + 4.0 / np.sqrt(self._deg[e[:, 1]])))
        return self._request("edges", len(e), lambda: self._apply_edges(e), np.empty(0, np.int64), eps2)

    @_with_threads
    def unlearn_nodes(self, nodes: Any) -> LedgerRecord:
        """Remove nodes: all their edges, their features and their training labels (one request).

        References: ScaleGUN Theorem 4.3 (certified node unlearning).
        """
        self._check_fitted()
        v = self._validate_nodes(nodes, "nodes", self._removed_nodes)
        nbrs = [csr_neighbours(self._A, a) for a in v.tolist()]
        eps2 = float(sum(np.sum(4.0 / np.sqrt(self._deg[nb])) for nb in nbrs))
        pairs = [np.stack([np.full(len(nb), a), nb], axis=1) for a, nb in zip(v.tolist(), nbrs, strict=True)]
        e = np.concatenate(pairs)
        e = np.unique(np.sort(e, axis=1), axis=0) if len(e) else e  # an edge between two removed nodes once

        def apply() -> np.ndarray:
            rows = [self._apply_edges(e)] if len(e) else []
            rows.append(self._apply_features(v))
            return np.unique(np.concatenate(rows))

        return self._request("nodes", len(v), apply, v, eps2)

    @_with_threads
    def unlearn_features(self, nodes: Any) -> LedgerRecord:
        """Remove the feature vectors (set to 0) and training labels of ``nodes``; their edges stay.

        References: ScaleGUN Theorem 4.2 (certified node feature unlearning).
        """
        self._check_fitted()
        v = self._validate_nodes(nodes, "nodes", self._removed_feats | self._removed_nodes)
        eps2 = float(np.sum(np.sqrt(self._deg[v])))
        return self._request("features", len(v), lambda: self._apply_features(v), v, eps2)

    @_with_threads
    def retrain(self) -> LedgerRecord:
        """Retrain from scratch on the current embeddings with fresh noise; resets the accumulated bound."""
        self._check_fitted()
        t0 = time.perf_counter()
        self._retrain()  # the embeddings are current: every request already updated them
        return self._record("retrain", 0, 0.0, time.perf_counter() - t0, self._zeros(), retrained=True)

    def embeddings(self) -> np.ndarray:
        """The current node embeddings ``Z_hat`` (a copy), shape ``(n, F)``."""
        self._check_fitted()
        return self._embedding().copy()

    def exact_embeddings(self) -> np.ndarray:
        """The exact embeddings ``Z`` of the current graph and features (one full propagation)."""
        self._check_fitted()
        return exact_propagation(self._A, self._current_X(), self.weights, self._deg)

    def current_graph(self) -> sp.csr_array:
        """The edited graph: symmetric 0/1 CSR adjacency without self loops and without removed edges."""
        self._check_fitted()
        A = self._A.copy()
        A.setdiag(0.0)
        A.eliminate_zeros()
        return A

    def current_features(self) -> np.ndarray:
        """The edited, preprocessed features (removed nodes' and features' rows are zero), a copy."""
        self._check_fitted()
        return self._current_X().copy()

    def active_train_idx(self) -> np.ndarray:
        """The training nodes still in the training set (removed nodes and features excluded)."""
        self._check_fitted()
        return self.train_idx[self._t.cpu().numpy() > 0]

    @_with_threads
    def predict(self, idx: Any = None) -> np.ndarray:
        """Predicted classes ``argmax_k z_i^T w_k`` for nodes ``idx`` (all nodes when ``None``)."""
        self._check_fitted()
        n = self.X_.shape[0]
        idx = np.arange(n) if idx is None else _as_index(idx, "idx", n, unique=False)
        Z = torch.as_tensor(self._embedding()[idx], dtype=torch.float64, device=self.device)
        return (Z @ self.W_).argmax(dim=1).cpu().numpy()

    def score(self, idx: Any) -> float:
        """Accuracy of :meth:`predict` on nodes ``idx`` against the labels ``y``."""
        idx = _as_index(idx, "idx", self.X_.shape[0], unique=False)
        return float(np.mean(self.predict(idx) == self.y[idx]))

    @property
    def coef_(self) -> np.ndarray:
        """The model weights ``W``, shape ``(F, C)``."""
        self._check_fitted()
        return self.W_.cpu().numpy().copy()

    def nbytes(self) -> int:
        """Bytes held by the unlearner's arrays (propagation state, graph, training tensors)."""
        self._check_fitted()
        if self._prop is not None:
            total = self._prop.nbytes()
        else:
            total = sum(a.nbytes for a in (self._Z, self._Xc, self._deg, self._A.data, self._A.indices,
                                           self._A.indptr))
        tensors = (self._Zt, self._t, self._Y, self.W_, self._b)
        return int(total + sum(t.element_size() * t.numel() for t in tensors))

    # ----------------------------------------------------------------------------------------- validation
    def _check_fitted(self) -> None:
        if not self._fitted:
            raise RuntimeError("call fit() before unlearning or predicting")

    def _validate_edges(self, edges: Any) -> np.ndarray:
        e = np.asarray(edges)
        if e.size == 0:
            raise ValueError("edges must not be empty: give a (k, 2) array of node-id pairs")
        if e.dtype == bool or not np.issubdtype(e.dtype, np.integer):
            raise TypeError(f"edges must be integer node ids, got dtype {e.dtype}")
        if e.ndim == 1 and e.shape == (2,):
            e = e[None, :]
        if e.ndim != 2 or e.shape[1] != 2:
            raise ValueError(f"edges must have shape (k, 2), got {e.shape}")
        e = e.astype(np.int64)
        n = self.X_.shape[0]
        if e.min() < 0 or e.max() >= n:
            raise ValueError(f"edges must be node ids in [0, {n}), got range [{e.min()}, {e.max()}]")
        if np.any(e[:, 0] == e[:, 1]):
            raise ValueError("edges must not contain self loops (u, u): self loops are part of the model")
        key = np.sort(e, axis=1)
        if len(np.unique(key, axis=0)) != len(key):
            raise ValueError("edges must not contain duplicates (an undirected edge given twice)")
        present = csr_weights(self._A, e[:, 0], e[:, 1]) != 0
        if not present.all():
            u, v = e[~present][0].tolist()
            raise ValueError(f"edges: edge ({u}, {v}) does not exist in the current graph")
        return e

    def _validate_nodes(self, nodes: Any, name: str, removed: np.ndarray) -> np.ndarray:
        v = _as_index(nodes, name, self.X_.shape[0])
        if removed[v].any():
            raise ValueError(f"{name}: node {int(v[removed[v]][0])} has already been removed")
        pos = self._train_pos[v]
        pos = pos[pos >= 0]
        if len(pos) and float(self._t.sum()) - float(self._t[torch.as_tensor(pos)].sum()) < 1:
            raise ValueError(f"{name}: removing these nodes would leave the training set empty")
        return v

    # ----------------------------------------------------------------------------------------- internals
    def _embedding(self) -> np.ndarray:
        return self._prop.Z if self._prop is not None else self._Z

    def _current_X(self) -> np.ndarray:
        return self._prop.X if self._prop is not None else self._Xc

    def _zeros(self) -> np.ndarray:
        return np.zeros(self.n_classes)

    def _apply_edges(self, e: np.ndarray) -> np.ndarray:
        if self._prop is not None:
            return self._prop.remove_edges(e)
        src = np.concatenate([e[:, 0], e[:, 1]])
        dst = np.concatenate([e[:, 1], e[:, 0]])
        set_csr_weights(self._A, src, dst, 0.0)
        np.subtract.at(self._deg, src, 1.0)
        return np.arange(self.X_.shape[0])  # _request re-propagates once

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
        n_old = float(self._t.sum())
        self._sync_rows(rows)
        self._t[torch.as_tensor(gone, device=self.device)] = 0.0
        Z_new, t_new = self._Zt[p], self._t[p]
        self._K += Z_new.T @ (t_new[:, None] * Z_new) - Z_old.T @ (t_old[:, None] * Z_old)
        return p, Z_old, t_old, n_old, Z_new, t_new

    def _newton(self, p, Z_old, t_old, n_old, Z_new, t_new) -> tuple[np.ndarray, float]:
        """``Delta = H^{-1} (grad L(w; Z_old) - grad L(w; Z_new))``, ``w += Delta``; only changed rows differ
        between the two gradients. Returns the Newton residual terms and ``||Z_new||_2``."""
        W, Y, t = self.W_, self._Y, self._t
        diff = (Z_old.T @ (t_old[:, None] * row_gradient_terms(W, Z_old, Y[p]))
                - Z_new.T @ (t_new[:, None] * row_gradient_terms(W, Z_new, Y[p]))
                + self.lam * (n_old - float(t.sum())) * W)
        H = ovr_hessian(W, self._Zt, Y, t, self.lam)
        delta = torch.linalg.solve(H, diff.T.unsqueeze(-1)).squeeze(-1)  # (C, F)
        self.W_ = W + delta.T
        spec, radius = self._active_stats()
        newton = self._newton_term(delta, spec, radius)
        self._beta = self._beta + newton
        return newton, spec

    def _request(self, kind: str, n_items: int, apply, removed: np.ndarray, eps2: float) -> LedgerRecord:
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
            return self._record(kind, n_items, t1 - t0, t2 - t1, self._zeros(), retrained=True)
        newton, spec = self._newton(*change)
        _, un_worst = worst_case_terms(eps2, **self._worst_kwargs())
        self._worst_acc = self._worst_acc + un_worst
        approx = self._approx_term(spec)
        repush_s, repushed, retrained = 0.0, False, False
        if (float(np.max(self._beta + approx)) > self.budget and self._prop is not None
                and float(np.max(approx)) >= float(np.max(self._beta))):
            # the accumulated residues use up the budget: push them all (r = 0), then one more Newton step
            # for the resulting embedding change; cheaper than retraining and it restores the budget
            tr = time.perf_counter()
            rows = self._prop.flush()
            change = self._ingest(rows, np.empty(0, dtype=np.int64))
            repush_s = time.perf_counter() - tr
            more, spec = self._newton(*change)
            newton = newton + more
            approx = self._approx_term(spec)
            repushed = True
        if float(np.max(self._beta + approx)) > self.budget:
            self._retrain()
            retrained = True
            approx = self._approx_term(spec)
        t2 = time.perf_counter()
        return self._record(kind, n_items, t1 - t0 + repush_s, t2 - t1 - repush_s, newton, retrained=retrained,
                            approx=approx, repushed=repushed)

    def _retrain(self) -> None:
        self._K = self._Zt.T @ (self._t[:, None] * self._Zt)
        F, C = self.X_.shape[1], self.n_classes
        noise = torch.randn(F, C, generator=self._gen, dtype=torch.float64)
        self._b = (self.sigma * noise).to(self.device)
        self.W_ = train_ovr(self._Zt, self._Y, self._t, self.lam, self._b, max_iter=self.max_iter)
        g = ovr_gradient(self.W_, self._Zt, self._Y, self._t, self.lam, self._b)
        self._beta = torch.linalg.vector_norm(g, dim=0).cpu().numpy()
        self._worst_acc = self._beta.copy()

    def _active_stats(self) -> tuple[float, float]:
        """``(||Z_train||_2, max_i ||z_i||)`` over the active training rows.

        ``K = Z^T diag(t) Z`` is updated by the changed rows only; the relative 1e-9 margin on its top
        eigenvalue covers the rounding of those updates.
        """
        t = self._t
        spec = math.sqrt(max(float(torch.linalg.eigvalsh(self._K)[-1]), 0.0) * (1.0 + 1e-9))
        radius = float((torch.linalg.vector_norm(self._Zt, dim=1) * t).max())
        return spec, radius

    def _newton_term(self, delta: torch.Tensor, spec: float, radius: float) -> np.ndarray:
        """``gamma max(1, R) ||Z||_2 ||Delta_k|| ||Z Delta_k||`` per class (Guo et al. Thm 1; ScaleGUN Sec. 4)."""
        ZD = (self._t[:, None] * (self._Zt @ delta.T))
        terms = GAMMA * max(1.0, radius) * spec * torch.linalg.vector_norm(delta, dim=1) * \
            torch.linalg.vector_norm(ZD, dim=0)
        return terms.cpu().numpy()

    def _approx_term(self, spec: float | None = None) -> np.ndarray:
        """Bound on ``||grad L(w; Z) - grad L(w; Z_hat)||`` per class from the residues.

        With ``E = Z - Z_hat`` on the active training rows, ``a_i = l'(w^T z_hat_i)`` and ``|l''| <= gamma``:

            grad L(w; Z) - grad L(w; Z_hat) = E^T a + E^T (a' - a) + Z_hat^T c,
            |a'_i - a_i| <= gamma |w^T e_i|,   |c_i| <= gamma |w^T e_i|,

        so the difference is at most ``rho ||a_k|| + gamma ||w_k|| rho (||Z_hat||_2 + rho)`` with
        ``rho >= ||E||_F`` (:meth:`PushPropagator.residue_bound`, plus a relative 1e-12 allowance for
        floating-point rounding, so that the bound also holds when every residue is zero).
        """
        if self._prop is None:
            return self._zeros()
        # ||Z||_F <= sum|w| sqrt(n) since ||x_i|| <= 1 and ||P||_2 <= 1
        fp = 1e-12 * float(np.abs(self.weights).sum()) * math.sqrt(self.X_.shape[0])
        rho = self._prop.residue_bound() + fp
        if spec is None:
            spec, _ = self._active_stats()
        a = self._t[:, None] * row_gradient_terms(self.W_, self._Zt, self._Y)
        an = torch.linalg.vector_norm(a, dim=0).cpu().numpy()
        wn = torch.linalg.vector_norm(self.W_, dim=0).cpu().numpy()
        return rho * an + GAMMA * wn * rho * (spec + rho)

    def _worst_kwargs(self) -> dict[str, Any]:
        return dict(n_nodes=self.X_.shape[0], n_train=int(self._t.sum()), n_features=self.X_.shape[1],
                    lam=self.lam, r_max=self.r_max_abs if self.mode == "scalegun" else 0.0,
                    n_levels=self.hops + 1)

    def _true_residual(self) -> np.ndarray:
        # the exact modes keep the exact embeddings already
        Z = (self.exact_embeddings() if self._prop is not None else self._Z)[self.train_idx]
        Zt = torch.as_tensor(Z, dtype=torch.float64, device=self.device)
        g = ovr_gradient(self.W_, Zt, self._Y, self._t, self.lam, self._b)
        return torch.linalg.vector_norm(g, dim=0).cpu().numpy()

    def _record(self, kind: str, n_items: int, update_s: float, unlearn_s: float, newton: np.ndarray, *,
                retrained: bool, approx: np.ndarray | None = None, repushed: bool = False) -> LedgerRecord:
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
            budget=self.budget, budget_used=used, retrained=retrained, repushed=repushed)
        self.ledger.append(rec)
        return rec
