"""``CertifiedUnlearner``: ScaleGUN's certified edge, node and feature unlearning, with CGU and retraining
as modes of the same class.

Per request (ScaleGUN Sec. 4, Algorithm 3):

1. update the embeddings lazily (push) — or, in ``mode="cgu"``, by exact re-propagation
   (:mod:`~iclr25.scalegun.requests`);
2. for every class k: ``Delta_k = H_k(w_k; Z')^{-1} (grad L_k(w_k; Z) - grad L_k(w_k; Z'))``, ``w_k += Delta_k``
   (conjugate gradients on Hessian-vector products by default);
3. accumulate the data-dependent bound and add the propagation-error term of the current state
   (:mod:`~iclr25.scalegun.accounting`);
4. if a class's bound exceeds the budget ``sigma epsilon / c(delta)``, flush the residues or retrain from
   scratch with fresh noise (:mod:`~iclr25.scalegun.retraining`).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch

from iclr25.utils.seeding import check_seed

from . import validation as _v
from .accounting import _Accounting
from .certificate import Ledger, LedgerRecord, residual_budget
from .datasets import preprocess_features
from .model import model_device, with_threads
from .propagation import PushPropagator, exact_propagation
from .requests import _Requests
from .retraining import _Retraining

__all__ = ["CertifiedUnlearner", "MODES", "NEWTON_SOLVERS"]

MODES = ("scalegun", "cgu", "retrain")
NEWTON_SOLVERS = ("cg", "direct")
#: The arguments of :class:`CertifiedUnlearner` that a run's config records: ``demo`` and ``repro`` build their
#: unlearners from these config entries, so ``results.json`` records what actually ran.
CONFIG_KEYS = ("hops", "r_max", "epsilon", "delta", "lam", "sigma")
_DTYPES = {"float64": np.float64, "float32": np.float32}


class CertifiedUnlearner(_Requests, _Accounting, _Retraining):
    """Certified graph unlearning on a GPR-propagated linear model (ScaleGUN).

    Parameters
    ----------
    adj : (n, n) scipy sparse matrix or array, or :class:`~iclr25.scalegun.mapped.MappedGraph`
        Symmetric adjacency of an undirected graph; self loops are added; weights are ignored. A
        ``MappedGraph`` (:func:`load_graph_files` with ``mmap=True``) is used over its memory maps: the CSR
        index arrays are neither copied nor re-validated, only the edge weights are held in memory.
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
    r_max : float or None
        Push threshold relative to the mean column L1 norm of the features (the paper's ``rmax``).
        ``None`` (default): chosen at :meth:`fit` from n and the budget by :func:`r_max_rule` — the largest
        threshold for which any residue state keeps the propagation-error term at most 10% of the budget
        (so no residue flush is needed); the initial propagation is then exact. Read the choice from
        ``r_max`` / ``r_max_abs`` after fitting.
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
    newton_solver : ``"cg" | "direct"``
        ``cg`` (default): preconditioned conjugate gradients on Hessian-vector products, ``O(n F C)`` per
        iteration; ``direct``: form the ``F x F`` Hessians and solve, ``O(n F^2 C)``. The solver's residual
        is added to the certified bound either way.
    dtype : ``"float64" | "float32"``
        Storage of the push state. float32 halves its memory, but its rounding allowance
        (:meth:`PushPropagator.rounding_allowance`) enters the propagation-error term; with the default
        ``r_max`` a size at which it alone would use the budget share is rejected at :meth:`fit`.
    device : str or torch.device, optional
        Where the model's tensors live and its algebra runs: ``auto``, ``cpu``, ``cuda``, ``cuda:N``
        (:func:`iclr25.utils.device.torch_device`; ``None``: ``$ICLR25_DEVICE``, else ``auto``, the GPU when torch
        sees one). The model computes in float64 on every device: the certificate's bounds (the rounding
        allowance, the 1e-9 spectral margin, the CG residual added to the bound) assume float64 arithmetic, so
        ``mps`` (no float64) is refused. The propagation (push) stays in numpy on the CPU; the objective noise is
        drawn on the CPU and moved, so a seed gives the same model on every device.
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
                 weights: str | np.ndarray | None = None, r_max: float | None = None, epsilon: float = 1.0,
                 delta: float = 1e-4, lam: float = 1e-2, alpha: float = 0.1, sigma: float = 0.1,
                 mode: str = "scalegun", standardize: bool = True, audit: bool = False, max_iter: int = 100,
                 newton_solver: str = "cg", dtype: str = "float64", device: str | torch.device | None = None,
                 torch_threads: int | None = 1, seed: int = 0):
        X = _v.as_float_matrix(X, "X")
        n = X.shape[0]
        y_arr = _v.check_labels(y, n)
        _v.check_choice(mode, "mode", MODES)
        w = _v.check_weights(weights, hops, alpha)
        self.epsilon = _v.positive(epsilon, "epsilon")
        self.delta = _v.positive(delta, "delta", upper=1.0)
        self.lam = _v.positive(lam, "lam")
        self.sigma = _v.positive(sigma, "sigma", allow_zero=True)
        self._r_max_given = r_max is not None
        self.r_max = _v.positive(r_max, "r_max", allow_zero=mode != "scalegun") if r_max is not None else None
        self.newton_solver = _v.check_choice(newton_solver, "newton_solver", NEWTON_SOLVERS)
        self.dtype = _v.check_choice(dtype, "dtype", tuple(_DTYPES))
        if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
            raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")
        self.seed = check_seed(seed)
        self.A_ = _v.as_adjacency(adj, n)
        self.train_idx = _v.as_index(train_idx, "train_idx", n)
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
        self.device = model_device(device)
        # the paper's rmax is relative to the mean column L1 norm of the preprocessed features
        self._l1_mean = float(np.abs(X).sum(axis=0).mean())
        self.r_max_abs = self.r_max * self._l1_mean if self.r_max is not None else None
        self.budget = residual_budget(self.sigma, self.epsilon, self.delta)
        self.ledger = Ledger()
        self._gen = torch.Generator().manual_seed(self.seed)
        self._fitted = False

    # ----------------------------------------------------------------------------------------- public API
    @with_threads
    def fit(self) -> CertifiedUnlearner:
        """Propagate the features (push in ``scalegun`` mode, exact otherwise) and train with fresh noise."""
        t0 = time.perf_counter()
        n = self.X_.shape[0]
        if self.mode == "scalegun":
            given = self._r_max_given
            self._prop = PushPropagator(self.A_, self.X_, self.weights, self.r_max_abs if given else 0.0,
                                        init_threshold=None if given else 0.0, dtype=_DTYPES[self.dtype])
            self._A, self._deg = self._prop.A, self._prop.deg
        else:
            self._prop = None
            self._A = self.A_.csr(np.float64) if hasattr(self.A_, "csr") else self.A_.copy()
            self._deg = np.asarray(self._A.sum(axis=1)).ravel()
            self._Xc = self.X_.copy()
            self._Z = exact_propagation(self._A, self._Xc, self.weights, self._deg)
        t1 = time.perf_counter()
        self._train_pos = np.full(n, -1, dtype=np.int64)
        self._train_pos[self.train_idx] = np.arange(len(self.train_idx))
        dt = dict(dtype=torch.float64, device=self.device)
        self._Zt = torch.as_tensor(self._embedding()[self.train_idx], **dt)  # fancy indexing copied already
        self._t = torch.ones(len(self.train_idx), **dt)
        self._active = np.ones(len(self.train_idx), dtype=bool)  # t > 0, kept on the host (no device round trip)
        Y = np.full((len(self.train_idx), self.n_classes), -1.0)
        Y[np.arange(len(self.train_idx)), self.y[self.train_idx]] = 1.0
        self._Y = torch.as_tensor(Y, **dt)
        self._removed_nodes = np.zeros(n, dtype=bool)
        self._removed_feats = np.zeros(n, dtype=bool)
        self._fitted = True
        self._retrain()
        if self._prop is not None and not self._r_max_given:  # the default rule needs the fitted model
            self.r_max_abs = self._rule_r_max()
            self.r_max = self.r_max_abs / self._l1_mean
            self._prop.r_max = self.r_max_abs
        t2 = time.perf_counter()
        self._record("fit", len(self.train_idx), t1 - t0, t2 - t1, self._zeros(), retrained=True)
        return self

    @with_threads
    def unlearn_edges(self, edges: Any) -> LedgerRecord:
        """Remove undirected edges (one request; a batch is re-pushed once). Returns the ledger record.

        References: ScaleGUN Theorem 4.1 (certified edge unlearning).
        """
        self._check_fitted()
        e = self._validate_edges(edges)
        eps2 = float(np.sum(4.0 / np.sqrt(self._deg[e[:, 0]]) + 4.0 / np.sqrt(self._deg[e[:, 1]])))
        return self._request("edges", len(e), lambda: self._apply_edges(e), np.empty(0, np.int64), eps2)

    @with_threads
    def unlearn_nodes(self, nodes: Any) -> LedgerRecord:
        """Remove nodes: all their edges, their features and their training labels (one request).

        References: ScaleGUN Theorem 4.3 (certified node unlearning).
        """
        self._check_fitted()
        v = self._validate_nodes(nodes, "nodes", self._removed_nodes)
        e, eps2 = self._node_edges(v)
        return self._request("nodes", len(v), lambda: self._apply_node_removal(v, e), v, eps2)

    @with_threads
    def unlearn_features(self, nodes: Any) -> LedgerRecord:
        """Remove the feature vectors (set to 0) and training labels of ``nodes``; their edges stay.

        References: ScaleGUN Theorem 4.2 (certified node feature unlearning).
        """
        self._check_fitted()
        v = self._validate_nodes(nodes, "nodes", self._removed_feats | self._removed_nodes)
        eps2 = float(np.sum(np.sqrt(self._deg[v])))
        return self._request("features", len(v), lambda: self._apply_features(v), v, eps2)

    @with_threads
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
        return self.train_idx[self._active]

    @with_threads
    def predict(self, idx: Any = None) -> np.ndarray:
        """Predicted classes ``argmax_k z_i^T w_k`` for nodes ``idx`` (all nodes when ``None``)."""
        self._check_fitted()
        n = self.X_.shape[0]
        idx = np.arange(n) if idx is None else _v.as_index(idx, "idx", n, unique=False)
        Z = torch.as_tensor(self._embedding()[idx], dtype=torch.float64, device=self.device)
        return (Z @ self.W_).argmax(dim=1).cpu().numpy()

    def score(self, idx: Any) -> float:
        """Accuracy of :meth:`predict` on nodes ``idx`` against the labels ``y``."""
        idx = _v.as_index(idx, "idx", self.X_.shape[0], unique=False)
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
        return _v.check_edges(edges, self._A)

    def _validate_nodes(self, nodes: Any, name: str, removed: np.ndarray) -> np.ndarray:
        return _v.check_nodes(nodes, name, removed, self._train_pos, self._active.astype(np.float64))

    # ----------------------------------------------------------------------------------------- internals
    def _embedding(self) -> np.ndarray:
        return self._prop.Z if self._prop is not None else self._Z

    def _current_X(self) -> np.ndarray:
        return self._prop.X if self._prop is not None else self._Xc

    def _n_active(self) -> int:
        """The number of active training rows, ``sum(t)`` (t is 0 or 1), from the host copy."""
        return int(np.count_nonzero(self._active))

    def _zeros(self) -> np.ndarray:
        return np.zeros(self.n_classes)
