"""The weighted data matrix ``W ∘ M`` as an operator: validation, dense and sparse (CSR) storage, and the
few products that every regression solver needs, computed for a block of rows at a time.

A row regression for row ``i`` with the other factor ``F`` (``cols × k``) is

.. math::  x_i = \\arg\\min_x \\| D_{w_i} (F x - m_i) \\|_2^2 + \\lambda \\|x\\|_2^2,

so the solvers need, per block of rows, ``(W^{∘2} ∘ M) F`` (right-hand sides), ``(W^{∘2} ∘ (P F^T)) F``
(the normal-equation operator applied to a block of candidate solutions ``P``), the Gram matrices
``F^T D_{w_i}^2 F`` (exact solver) and ``W`` itself (sketches of ``D_{w_i} F``). The column regression is the same
problem on the transpose, which :attr:`WeightedMatrix.T` provides without copying the user's data twice.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from iclr25.utils.guards import MAX_ABS

__all__ = ["WeightedMatrix", "as_weighted_matrix", "gram_basis", "unpack_gram"]

#: Default memory cap (bytes) of one block of rows' temporaries; a block of rows is sized to stay under it.
DEFAULT_BATCH_BYTES = 1 << 28

#: A dense half-step may keep up to this many times ``max_batch_bytes`` in the Gram basis ``Z`` of the exact
#: solver (built once per half-step; above it, ``Z`` is built and used one block of columns at a time).
BASIS_BYTES_FACTOR = 8

#: Bytes of one float64.
FLOAT_BYTES = 8

#: Sparse weights denser than this use one dense GEMM for products on their pattern (see _pattern_products);
#: at or below it (the 1-10% regime of completion masks) every product costs ``O(‖W‖_0 k)``.
DENSE_PATTERN_DENSITY = 0.25


def _finite_float_array(x: Any, name: str) -> np.ndarray:
    if sp.issparse(x):
        raise TypeError(f"{name} must be a dense array here, got a scipy.sparse matrix")
    try:
        arr = np.asarray(x)
    except Exception as exc:  # noqa: BLE001 - ragged lists and the like
        raise TypeError(f"{name} must be a 2-D array of real numbers: {exc}") from exc
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must be a 2-D array of real numbers, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real, got complex dtype {arr.dtype}")
    return arr.astype(np.float64, copy=False)


def _check_2d(arr: np.ndarray | sp.sparray | sp.spmatrix, name: str) -> None:
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")


class WeightedMatrix:
    """``W`` and ``M`` of one weighted problem, oriented so that rows are the regressions to solve.

    Build it with :func:`as_weighted_matrix`; :attr:`T` is the transposed problem (the column regressions).
    Dense ``W`` keeps ``W``, ``W^{∘2}``, ``W ∘ M`` (``wm``: residuals, and the SVD initialisation) and
    ``W^{∘2} ∘ M`` as arrays; sparse ``W`` keeps them on the CSR
    pattern of ``W`` (explicit zeros dropped), so every product costs ``O(‖W‖_0 k)``.
    """

    def __init__(self, w: np.ndarray | sp.csr_array, m: np.ndarray | sp.csr_array, *, sparse: bool,
                 max_batch_bytes: int = DEFAULT_BATCH_BYTES) -> None:
        self.sparse = sparse
        self.max_batch_bytes = int(max_batch_bytes)
        self._t: WeightedMatrix | None = None
        if sparse:
            # every array shares W's CSR pattern (explicit zeros of M kept), so their data line up entry by entry
            self.w = w  # weights, not squared: sketches act on D_w F
            self.w2 = _like(w, w.data * w.data)
            self.wm = _like(w, w.data * m.data)
            self.w2m = _like(w, w.data * w.data * m.data)
        else:
            self.w = w
            self.w2 = w * w
            self.wm = w * m
            self.w2m = self.wm * w

    def take_rows(self, mask: np.ndarray) -> WeightedMatrix:
        """The problem restricted to the rows where ``mask`` is True (copies of those rows)."""
        t = WeightedMatrix.__new__(WeightedMatrix)
        t.sparse, t.max_batch_bytes, t._t = self.sparse, self.max_batch_bytes, None
        t.w, t.w2, t.wm, t.w2m = (a[mask] for a in (self.w, self.w2, self.wm, self.w2m))
        return t

    # ----------------------------------------------------------------------------------------- shape
    @property
    def shape(self) -> tuple[int, int]:
        return self.w.shape

    @property
    def T(self) -> WeightedMatrix:  # noqa: N802 - numpy's name for the transpose
        if self._t is None:
            t = WeightedMatrix.__new__(WeightedMatrix)
            t.sparse = self.sparse
            if self.sparse:
                # the permutation from CSR order of W to CSR order of W^T, found once from entry labels 1..nnz
                labels = _like(self.w, np.arange(1, self.w.nnz + 1, dtype=np.float64)).T.tocsr()
                perm = labels.data.astype(np.int64) - 1
                t.w, t.w2, t.wm, t.w2m = (_like(labels, a.data[perm]) for a in (self.w, self.w2, self.wm, self.w2m))
            else:
                t.w, t.w2, t.wm, t.w2m = (np.ascontiguousarray(a.T) for a in (self.w, self.w2, self.wm, self.w2m))
            t.max_batch_bytes = self.max_batch_bytes
            t._t = self
            self._t = t
        return self._t

    @property
    def max_basis_bytes(self) -> int:
        """Memory cap of the exact solver's Gram basis ``Z`` (``BASIS_BYTES_FACTOR · max_batch_bytes``)."""
        return BASIS_BYTES_FACTOR * self.max_batch_bytes

    def row_blocks(self, bytes_per_row: int, within: slice | None = None) -> list[slice]:
        """Consecutive blocks of rows (of ``within``, default all) whose temporaries fit the memory cap."""
        start, stop = (0, self.shape[0]) if within is None else (within.start, within.stop)
        size = max(1, min(stop - start, self.max_batch_bytes // max(1, int(bytes_per_row))))
        return [slice(a, min(a + size, stop)) for a in range(start, stop, size)]

    # ------------------------------------------------------------------------------------- products
    def rhs(self, F: np.ndarray, rows: slice | np.ndarray) -> np.ndarray:
        """``(W^{∘2} ∘ M)[rows] F``: the right-hand sides ``F^T D_{w_i}^2 m_i`` of the normal equations."""
        return np.asarray(self.w2m[rows] @ F)

    def hess(self, P: np.ndarray, F: np.ndarray, rows: slice) -> np.ndarray:
        """``(W^{∘2} ∘ (P F^T))[rows] F``: row ``i`` is ``F^T D_{w_i}^2 F p_i`` (``P`` holds one ``p_i`` per row).

        Dense: two GEMMs and one Hadamard product, ``4 B d k`` flops. Sparse: ``P F^T`` only on the pattern of
        ``W``, ``4 nnz k`` flops.
        """
        w2 = self.w2[rows]
        if not self.sparse:
            return (w2 * (P @ F.T)) @ F
        pred = _pattern_products(w2, P, F)
        return np.asarray(_like(w2, w2.data * pred) @ F)

    def residual_sq(self, X: np.ndarray, F: np.ndarray) -> float:
        """``‖W ∘ (M - X F^T)‖_F^2``, computed block by block."""
        total = 0.0
        for b in self.row_blocks(FLOAT_BYTES * self.shape[1] * 2):
            if self.sparse:
                w = self.w[b]
                pred = _pattern_products(w, X[b], F)
                total += float(np.sum((self.wm[b].data - w.data * pred) ** 2))
            else:
                total += float(np.sum((self.wm[b] - self.w[b] * (X[b] @ F.T)) ** 2))
        return total

    def weighted_norm_sq(self) -> float:
        """``‖W ∘ M‖_F^2``."""
        data = self.wm.data if self.sparse else self.wm
        return float(np.sum(data * data))

    def packed_gram(self, Z: np.ndarray, rows: slice | np.ndarray) -> np.ndarray:
        """``W^{∘2}[rows] Z``: the packed Gram matrices ``vech(F^T D_{w_i}^2 F)`` of a block of rows.

        ``Z`` is (a block of columns of) :func:`gram_basis`, built ONCE per half-step by the caller. The
        product is one GEMM of ``2 B d c`` flops for ``c`` columns of ``Z`` (dense ``W``) or ``2 nnz c``
        (sparse ``W``): with all ``k(k+1)/2`` columns, the LLR16 ``‖W‖_0 k^2`` cost.
        """
        return np.asarray(self.w2[rows] @ Z)

    def row_nnz(self, rows: slice | np.ndarray) -> np.ndarray:
        """Number of positive weights in each row of the block."""
        if self.sparse:
            return np.diff(self.w.indptr)[rows]
        return np.count_nonzero(self.w[rows], axis=1)

    def row_weight_mass(self, F: np.ndarray) -> np.ndarray:
        """``tr(F^T D_{w_i}^2 F) = Σ_j W_ij^2 ‖f_j‖^2`` for every row (the scale of the shared preconditioner)."""
        return np.asarray(self.w2 @ np.einsum("jk,jk->j", F, F)).ravel()


def gram_basis(F: np.ndarray, cols: slice = slice(None)) -> np.ndarray:
    """Columns ``cols`` of ``Z`` with ``Z_j = vech(f_j f_j^T)`` (upper triangle in ``np.triu_indices`` order,
    ``k(k+1)/2`` columns in all).

    ``W^{∘2} Z`` then holds every row's Gram matrix ``F^T D_{w_i}^2 F = Σ_j W_ij^2 f_j f_j^T`` packed. Written one
    row ``a`` of the triangle at a time (``Z[:, (a, a..k-1)] = f_{·a} f_{·, a..k-1}``): one pass over ``Z`` and no
    ``d × k(k+1)/2`` index gathers.
    """
    d, k = F.shape
    c0, c1, _ = cols.indices(k * (k + 1) // 2)
    Z = np.empty((d, max(0, c1 - c0)))
    start = 0
    for a in range(k):
        stop = start + k - a  # columns (a, a), (a, a + 1), ..., (a, k - 1)
        lo, hi = max(start, c0), min(stop, c1)
        if lo < hi:
            np.multiply(F[:, a:a + 1], F[:, a + lo - start:a + hi - start], out=Z[:, lo - c0:hi - c0])
        start = stop
    return Z


def unpack_gram(flat: np.ndarray, k: int) -> np.ndarray:
    """``(B, k(k+1)/2)`` packed upper triangles → ``(B, k, k)`` symmetric Gram matrices (one row of the
    triangle at a time: slice copies, no fancy-index scatter)."""
    G = np.empty((flat.shape[0], k, k))
    start = 0
    for a in range(k):
        stop = start + k - a
        G[:, a, a:] = flat[:, start:stop]
        G[:, a + 1:, a] = flat[:, start + 1:stop]
        start = stop
    return G


def _like(pattern: sp.csr_array, data: np.ndarray) -> sp.csr_array:
    """A CSR array with the pattern of ``pattern`` and the given data (explicit zeros kept)."""
    return sp.csr_array((data, pattern.indices, pattern.indptr), shape=pattern.shape)


def _pattern_products(w: sp.csr_array, X: np.ndarray, F: np.ndarray) -> np.ndarray:
    """``(X F^T)_{ij}`` on the non-zero pattern of ``w`` (CSR), in CSR data order.

    Up to ``DENSE_PATTERN_DENSITY``: gathers, ``2 nnz k`` flops. Above it, one dense GEMM and a gather of the
    pattern (``2 rows · cols · k`` flops): faster in wall time well before that density (2.7x at 5%, n = 4000,
    k = 128), but no longer ``O(‖W‖_0 k)``, which is the cost this package's sparse path is about.
    """
    rows = np.repeat(np.arange(w.shape[0]), np.diff(w.indptr))
    cols = w.indices
    if w.nnz >= DENSE_PATTERN_DENSITY * w.shape[0] * w.shape[1]:
        return (X @ F.T).ravel()[rows * w.shape[1] + cols]
    out = np.empty(len(cols))
    step = max(1, (1 << 24) // max(1, X.shape[1]))  # bound the nnz x k temporaries
    for a in range(0, len(cols), step):
        r, c = rows[a:a + step], cols[a:a + step]
        out[a:a + step] = np.einsum("ij,ij->i", X[r], F[c])
    return out


def _check_magnitudes(w: np.ndarray, m: np.ndarray) -> None:
    """Weights and data (``m``: the entries under a positive weight) small enough that the solver's squares do not
    overflow (they would turn the factors into NaN without an error)."""
    with np.errstate(over="ignore"):
        for name, what, values in (("W", "weights", w), ("M", "entries where W > 0", m),
                                   ("M weighted by W (W ∘ M)", "entries", w * m)):
            top = float(np.max(np.abs(values))) if values.size else 0.0
            if top > MAX_ABS:
                raise ValueError(f"{name} has {what} up to {top:.3g} in magnitude, beyond {MAX_ABS:.0e} where squares "
                                 "overflow; rescale it (divide by a constant)")


def as_weighted_matrix(M: Any, W: Any, *, max_batch_bytes: int = DEFAULT_BATCH_BYTES) -> WeightedMatrix:
    """Validate ``M`` and ``W`` and build the :class:`WeightedMatrix` of the problem ``min ‖W ∘ (M - X Y^T)‖_F``.

    Parameters
    ----------
    M : array_like, shape (n, d)
        The data. It may hold NaN (or anything) where ``W == 0``: those entries are never read.
        A scipy.sparse ``M`` is read on the pattern of ``W`` (entries it does not store are 0).
    W : array_like or scipy.sparse matrix, shape (n, d), or None
        Non-negative finite weights; None means all ones. A scipy.sparse ``W`` (any format) is kept as CSR, so
        a 0/1 mask is matrix completion at ``O(‖W‖_0 k)`` per product.
    max_batch_bytes : int
        Memory cap for the temporaries of one block of rows.

    Raises
    ------
    TypeError
        ``M`` or ``W`` is not numeric.
    ValueError
        Wrong shapes, empty matrices, negative / NaN / infinite weights, or non-finite ``M`` where ``W > 0``.
    """
    if isinstance(max_batch_bytes, bool) or not isinstance(max_batch_bytes, (int, np.integer)) \
            or max_batch_bytes < 1:
        raise ValueError(f"max_batch_bytes must be a positive integer, got {max_batch_bytes!r}")
    m_sparse = sp.issparse(M)
    if m_sparse:
        if M.dtype.kind not in "biuf":
            raise TypeError(f"M must hold real numbers, got dtype {M.dtype}")
        m_shape = M.shape
    else:
        Marr = _finite_float_array(M, "M")
        m_shape = Marr.shape
    if len(m_shape) != 2:
        raise ValueError(f"M must be a 2-D matrix, got shape {m_shape}")
    if m_shape[0] == 0 or m_shape[1] == 0:
        raise ValueError(f"M must be non-empty, got shape {m_shape}")
    if W is None:
        W = np.ones(m_shape)
    if sp.issparse(W):
        if W.dtype.kind not in "biuf":
            raise TypeError(f"W must hold real numbers, got dtype {W.dtype}")
        w = sp.csr_array(W, dtype=np.float64)
        w.sum_duplicates()
        _check_2d(w, "W")
        if w.shape != tuple(m_shape):
            raise ValueError(f"W must have the shape of M {tuple(m_shape)}, got {w.shape}")
        if not np.all(np.isfinite(w.data)):
            raise ValueError("W must be finite (no NaN or inf weights)")
        if np.any(w.data < 0):
            raise ValueError("W must be non-negative (weights W_ij >= 0)")
        w.eliminate_zeros()
        w.sort_indices()
        if w.nnz == 0:
            raise ValueError("W must have at least one positive weight")
        rows = np.repeat(np.arange(w.shape[0]), np.diff(w.indptr))
        if m_sparse:
            vals = np.asarray(sp.csr_array(M, dtype=np.float64)[rows, w.indices]).ravel()
        else:
            vals = Marr[rows, w.indices]
        if not np.all(np.isfinite(vals)):
            raise ValueError("M must be finite wherever W > 0 (found NaN or inf under a positive weight)")
        _check_magnitudes(w.data, vals)
        m = sp.csr_array((vals, w.indices.copy(), w.indptr.copy()), shape=w.shape)
        return WeightedMatrix(w, m, sparse=True, max_batch_bytes=max_batch_bytes)
    w = _finite_float_array(W, "W")
    _check_2d(w, "W")
    if w.shape != tuple(m_shape):
        raise ValueError(f"W must have the shape of M {tuple(m_shape)}, got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError("W must be finite (no NaN or inf weights)")
    if np.any(w < 0):
        raise ValueError("W must be non-negative (weights W_ij >= 0)")
    if not np.any(w > 0):
        raise ValueError("W must have at least one positive weight")
    Md = np.asarray(M.toarray() if m_sparse else Marr, dtype=np.float64)
    pos = w > 0
    if not np.all(np.isfinite(Md[pos])):
        raise ValueError("M must be finite wherever W > 0 (found NaN or inf under a positive weight)")
    _check_magnitudes(w[pos], Md[pos])
    m = np.where(pos, Md, 0.0)  # entries under zero weight are never used; zero them so NaN cannot leak
    return WeightedMatrix(np.ascontiguousarray(w), m, sparse=False, max_batch_bytes=max_batch_bytes)
