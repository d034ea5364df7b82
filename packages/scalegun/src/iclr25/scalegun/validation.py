"""Input checks of :class:`CertifiedUnlearner`: every message names the argument and what was expected.

A rejected request raises before anything is changed, so the unlearner's state stays as it was.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp

from .propagation import csr_weights, gpr_weights

__all__ = ["as_float_matrix", "as_index", "as_adjacency", "positive", "check_edges", "check_nodes", "check_labels",
           "check_weights", "check_choice"]


def as_float_matrix(X: Any, name: str) -> np.ndarray:
    """A finite, non-empty float64 ``(n, F)`` copy of ``X`` (sparse input is densified)."""
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


def as_index(x: Any, name: str, n: int, *, unique: bool = True) -> np.ndarray:
    """Integer node ids in ``[0, n)`` as int64 (distinct unless ``unique=False``)."""
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


def as_adjacency(adj: Any, n: int) -> sp.csr_array:
    """Symmetric 0/1 CSR adjacency with every self loop present and sorted indices (a
    :class:`~iclr25.scalegun.mapped.MappedGraph` is already in that form and is returned as it is)."""
    from .mapped import MappedGraph

    if isinstance(adj, MappedGraph):
        if adj.shape != (n, n):
            raise ValueError(f"adj must have shape ({n}, {n}) to match X, got {adj.shape}")
        return adj
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
    A.sum_duplicates()  # duplicate entries are one weight (their sum), so every edge is stored once
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


def positive(x: Any, name: str, *, allow_zero: bool = False, upper: float | None = None) -> float:
    """A finite number ``> 0`` (or ``>= 0``), optionally ``< upper``, as float."""
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(x).__name__}")
    x = float(x)
    ok = math.isfinite(x) and (x >= 0 if allow_zero else x > 0) and (upper is None or x < upper)
    if not ok:
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {bound}" + (f" and < {upper}" if upper else "") + f", got {x}")
    return x


def check_edges(edges: Any, A: sp.csr_array) -> np.ndarray:
    """``(k, 2)`` int64 edges that exist in the current graph ``A``: no self loops, no duplicates."""
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
    n = A.shape[0]
    if e.min() < 0 or e.max() >= n:
        raise ValueError(f"edges must be node ids in [0, {n}), got range [{e.min()}, {e.max()}]")
    if np.any(e[:, 0] == e[:, 1]):
        raise ValueError("edges must not contain self loops (u, u): self loops are part of the model")
    key = np.sort(e, axis=1)
    if len(np.unique(key, axis=0)) != len(key):
        raise ValueError("edges must not contain duplicates (an undirected edge given twice)")
    present = csr_weights(A, e[:, 0], e[:, 1]) != 0
    if not present.all():
        u, v = e[~present][0].tolist()
        raise ValueError(f"edges: edge ({u}, {v}) does not exist in the current graph")
    return e


def check_nodes(nodes: Any, name: str, removed: np.ndarray, train_pos: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Node ids not yet ``removed`` whose removal leaves at least one active training node."""
    v = as_index(nodes, name, len(removed))
    if removed[v].any():
        raise ValueError(f"{name}: node {int(v[removed[v]][0])} has already been removed")
    pos = train_pos[v]
    pos = pos[pos >= 0]
    if len(pos) and float(t.sum()) - float(t[pos].sum()) < 1:
        raise ValueError(f"{name}: removing these nodes would leave the training set empty")
    return v


def check_labels(y: Any, n: int) -> np.ndarray:
    """Integer class labels ``>= 0``, one per node."""
    y_arr = np.asarray(y)
    if y_arr.dtype == bool or not np.issubdtype(y_arr.dtype, np.integer):
        raise TypeError(f"y must be integer class labels, got dtype {y_arr.dtype}")
    if y_arr.shape != (n,):
        raise ValueError(f"y must have shape ({n},) to match X, got {y_arr.shape}")
    if y_arr.min() < 0:
        raise ValueError(f"y must hold class labels >= 0, got {y_arr.min()}")
    return y_arr


def check_weights(weights: Any, hops: int, alpha: float) -> np.ndarray:
    """GPR level weights: a kind name (or ``None``) or ``hops + 1`` finite floats."""
    if isinstance(weights, str) or weights is None:
        return gpr_weights(weights, hops, alpha=alpha)
    w = np.asarray(weights, dtype=np.float64)
    gpr_weights(None, hops)  # validates hops
    if w.shape != (hops + 1,) or not np.all(np.isfinite(w)):
        raise ValueError(f"weights must be finite with shape ({hops + 1},) for hops={hops}, got {w.shape}")
    return w


def check_choice(x: Any, name: str, options: tuple[str, ...]) -> str:
    """One of ``options``."""
    if x not in options:
        raise ValueError(f"{name} must be one of {options}, got {x!r}")
    return x
