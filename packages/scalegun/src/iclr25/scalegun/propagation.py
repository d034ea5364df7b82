"""Generalised PageRank propagation: exact (sparse matmul) and lazy local push with reserves and residues.

The embedding is

    Z = sum_{l=0}^{L} w_l P^l X,   P = D^{-1/2} A D^{-1/2},

with A the symmetric adjacency with self loops and D its degree matrix. The push engine keeps, per level l and
per feature column, a reserve ``q^(l)`` and a residue ``r^(l)`` with the invariants (ScaleGUN, Sec. 3)

    q^(0) + r^(0) = D^{1/2} X,
    q^(l) + r^(l) = A D^{-1} q^(l-1)       (1 <= l <= L),
    Z_hat = sum_l w_l D^{-1/2} q^(l).

The last level keeps no residue (``r^(L) = 0``). A push at level l moves every entry with ``|r| > r_max`` into
the reserve and sends ``r / deg`` to each neighbour's residue at level l+1; it is vectorised over all rows of
one level at once, so one sweep over the levels restores ``|r| <= r_max`` everywhere.

References: ScaleGUN (Yi & Wei, ICLR 2025), Sec. 3 "lazy local propagation", Algorithm 1; the push
framework of InstantGNN (Zheng et al., KDD 2022).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["gpr_weights", "exact_propagation", "PushPropagator"]

_WEIGHT_KINDS = ("sgc", "ppr", "avg", "hetero")
# Above this fraction of pushed rows a full sparse matmul beats gathering a sub-matrix.
_DENSE_FRACTION = 0.125


def gpr_weights(kind: str | None, hops: int, *, alpha: float = 0.1) -> np.ndarray:
    """The generalised PageRank level weights ``w_0..w_hops``.

    ``"sgc"`` (default, ``None``): ``w = (0, ..., 0, 1)``; ``"ppr"``: ``w_l = alpha (1 - alpha)^l``;
    ``"avg"``: ``w_l = 1 / (hops + 1)``; ``"hetero"``: ``w_l = (-1)^l``.

    References: ScaleGUN, Eq. (1) (GPR embedding) and the reference code's ``weight_mode`` options.

    Examples
    --------
    >>> gpr_weights("sgc", 2).tolist()
    [0.0, 0.0, 1.0]
    """
    if isinstance(hops, bool) or not isinstance(hops, (int, np.integer)) or hops < 0:
        raise ValueError(f"hops must be an integer >= 0, got {hops!r}")
    L = int(hops) + 1
    kind = "sgc" if kind is None else kind
    if kind == "sgc":
        w = np.zeros(L)
        w[-1] = 1.0
    elif kind == "ppr":
        if not 0.0 < float(alpha) < 1.0:
            raise ValueError(f"alpha must be in (0, 1) for weights='ppr', got {alpha!r}")
        w = alpha * (1.0 - alpha) ** np.arange(L)
    elif kind == "avg":
        w = np.full(L, 1.0 / L)
    elif kind == "hetero":
        w = (-1.0) ** np.arange(L)
    else:
        raise ValueError(f"weights must be one of {_WEIGHT_KINDS}, an array of length hops+1, or None; "
                         f"got {kind!r}")
    return w


def _csr_positions(A: sp.csr_array, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Positions of the entries ``A[u_i, v_i]`` in ``A.data`` (sorted indices), ``-1`` where absent.

    A vectorised binary search inside each row ``[indptr[u_i], indptr[u_i + 1])``: about
    ``log2(max degree)`` array operations over all pairs at once, no Python loop per entry.
    """
    u = np.asarray(u, dtype=np.int64).ravel()
    v = np.asarray(v, dtype=np.int64).ravel()
    if len(u) == 0:
        return np.empty(0, dtype=np.int64)
    indices = A.indices
    last = max(len(indices) - 1, 0)
    lo = A.indptr[u].astype(np.int64)
    end = A.indptr[u + 1].astype(np.int64)
    hi = end.copy()
    active = lo < hi
    while active.any():  # invariant: the first column >= v of row u lies in [lo, hi]
        mid = (lo + hi) // 2
        right = active & (indices[np.minimum(mid, last)] < v)
        lo = np.where(right, mid + 1, lo)
        hi = np.where(active & ~right, mid, hi)
        active = lo < hi
    found = (lo < end) & (indices[np.minimum(lo, last)] == v) if len(indices) else np.zeros(len(u), bool)
    return np.where(found, lo, -1)


def csr_weights(A: sp.csr_array, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Current weight of each entry ``A[u_i, v_i]`` of a CSR matrix with sorted indices (0 where absent)."""
    pos = _csr_positions(A, u, v)
    return np.where(pos >= 0, A.data[pos], 0.0)


def set_csr_weights(A: sp.csr_array, u: np.ndarray, v: np.ndarray, value: float) -> None:
    """Set the existing entries ``A[u_i, v_i]`` to ``value`` in place (the sparsity pattern is kept)."""
    pos = _csr_positions(A, u, v)
    if (pos < 0).any():
        raise ValueError("set_csr_weights: every (u, v) must be an existing entry of A")
    A.data[pos] = value


def csr_neighbours(A: sp.csr_array, a: int) -> np.ndarray:
    """Current neighbours of node ``a`` (nonzero entries of row ``a``, self loop excluded)."""
    lo, hi = A.indptr[a], A.indptr[a + 1]
    idx, w = A.indices[lo:hi], A.data[lo:hi]
    return idx[(w != 0) & (idx != a)]


def normalized_adjacency(A: sp.csr_array, deg: np.ndarray) -> sp.csr_array:
    """``P = D^{-1/2} A D^{-1/2}`` as CSR (zero-weight entries of soft-deleted edges contribute nothing)."""
    s = 1.0 / np.sqrt(deg)
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    # shares A's index arrays (no copy: they may be read-only memory maps)
    P = sp.csr_array((A.data * s[rows] * s[A.indices], A.indices, A.indptr), shape=A.shape, copy=False)
    P.has_sorted_indices = A.has_sorted_indices
    return P


def _matmul_add(A: sp.csr_array, M: np.ndarray, dest: np.ndarray, block: int = 1 << 20,
                max_rows: int = 1 << 14) -> None:
    """``dest += A @ M`` in row blocks of about ``block`` stored entries and at most ``max_rows`` rows: no
    ``(n, F)`` result temporary (each row's sum is the full matmul's, bit for bit)."""
    ptr = A.indptr
    n = A.shape[0]
    r0 = 0
    while r0 < n:
        r1 = int(np.searchsorted(ptr, ptr[r0] + block, side="right")) - 1
        r1 = min(n, r0 + max_rows, max(r1, r0 + 1))
        lo, hi = int(ptr[r0]), int(ptr[r1])
        sub = sp.csr_array((A.data[lo:hi], A.indices[lo:hi], np.asarray(ptr[r0:r1 + 1]) - lo), shape=(r1 - r0, n),
                           copy=False)
        dest[r0:r1] += sub @ M
        r0 = r1


def exact_propagation(A: sp.csr_array, X: np.ndarray, weights: np.ndarray,
                      deg: np.ndarray | None = None) -> np.ndarray:
    """Exact ``Z = sum_l w_l P^l X`` by repeated sparse matmul (the power method; CGU's re-propagation).

    ``A`` must already hold the self loops; ``deg`` defaults to its row sums.

    References: ScaleGUN Eq. (1); CGU (Chien et al., 2023) recomputes this after every request.
    """
    if deg is None:
        deg = np.asarray(A.sum(axis=1)).ravel()
    # P H = D^{-1/2} (A (D^{-1/2} H)): no normalised copy of A (its values, and the int64 row of every entry
    # that building one needs, were 24 bytes per stored entry); two (n, F) temporaries per level
    s = (1.0 / np.sqrt(deg))[:, None]
    H = np.array(X, dtype=np.float64, copy=True)
    Z = weights[0] * H
    for w in weights[1:]:
        H *= s
        H = A @ H
        H *= s
        if w != 0.0:
            Z += w * H
    return Z


class PushPropagator:
    """Lazy local propagation state (reserves ``Q[l]``, residues ``R[l]``) over a symmetric CSR graph.

    Removed edges keep their slot in the CSR arrays with weight 0, so a removal never rebuilds the graph.

    References: ScaleGUN Algorithm 1 (push), Algorithm 2 (edge update); Lemma 3.1 (invariants).

    Parameters
    ----------
    A : scipy.sparse CSR, shape (n, n), or :class:`~iclr25.scalegun.mapped.MappedGraph`
        Symmetric 0/1 adjacency **with** self loops (validated by the caller). A mapped graph is used over
        its memory maps (the CSR index arrays are not copied).
    X : ndarray, shape (n, F)
        Node features (float64).
    weights : ndarray, shape (L + 1,)
        GPR level weights.
    r_max : float
        Absolute push threshold for every later update.
    init_threshold : float, optional
        Push threshold of the initial propagation (default ``r_max``); ``0`` starts from the exact embeddings
        with every residue zero (for two hops this costs the same as a push at any small ``r_max``).
    dtype : ``numpy.float64`` (default) or ``numpy.float32``
        Storage and arithmetic of reserves, residues, features and embeddings (float32 halves the memory;
        see :meth:`rounding_allowance` for what it costs the certificate).
    """

    def __init__(self, A: sp.csr_array, X: np.ndarray, weights: np.ndarray, r_max: float, *,
                 init_threshold: float | None = None, dtype: type = np.float64):
        dtype = np.dtype(dtype)
        if dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
            raise ValueError(f"dtype must be float64 or float32, got {dtype}")
        self.dtype = dtype
        if hasattr(A, "csr"):  # a MappedGraph: index arrays stay memory-mapped, only the weights are in RAM
            self.A = A.csr(dtype)
        else:
            self.A = sp.csr_array(A, dtype=dtype, copy=True)
            self.A.sort_indices()
            if max(self.A.nnz, self.A.shape[0]) < 2**31 - 1:  # 4-byte indices (the memory model counts 4)
                self.A.indices = self.A.indices.astype(np.int32, copy=False)
                self.A.indptr = self.A.indptr.astype(np.int32, copy=False)
        self.n, self.F = X.shape
        self.X = np.array(X, dtype=dtype, copy=True)
        self.weights = np.asarray(weights, dtype=np.float64)
        self.L = len(self.weights) - 1
        self.r_max = float(r_max)
        self.deg = np.asarray(self.A.sum(axis=1)).ravel()
        # tail-sum coefficients c_j = sum_{l >= j} |w_l| of the residue error bound
        self._tail = np.cumsum(np.abs(self.weights)[::-1])[::-1]
        self.Q = [np.zeros((self.n, self.F), dtype=dtype) for _ in range(self.L + 1)]
        self.R = [np.zeros((self.n, self.F), dtype=dtype) for _ in range(self.L)]
        self._rsq = [np.zeros(self.n) for _ in range(self.L)]
        self.Z = np.zeros((self.n, self.F), dtype=dtype)
        self.n_pushes = 0
        sqrt_deg = np.sqrt(self.deg).astype(dtype)[:, None]
        if self.L == 0:
            self.Q[0] = sqrt_deg * self.X
        else:
            self.R[0] = sqrt_deg * self.X
            self._sweep({0: np.arange(self.n)}, threshold=init_threshold)
        self._refresh_rows(np.arange(self.n))

    # ---------------------------------------------------------------------------------------- queries
    def residue_bound(self) -> float:
        """An upper bound ``rho >= ||Z - Z_hat||_F`` on the propagation error from the residues.

        ``Z - Z_hat = sum_j sum_{l>=j} w_l P^{l-j} D^{-1/2} r^(j)`` and ``||P||_2 <= 1``, so
        ``||Z - Z_hat||_F <= sum_j (sum_{l>=j} |w_l|) ||D^{-1/2} r^(j)||_F``.

        References: ScaleGUN Lemma 3.1 (error of lazy propagation), written with the actual residues.
        """
        return float(sum(self._tail[j] * np.sqrt(self._rsq[j].sum()) for j in range(self.L)))

    def max_residue(self) -> float:
        """``max |r|`` over all levels, nodes and columns (0 when there are no residue levels)."""
        return max((float(np.abs(R).max()) for R in self.R), default=0.0)

    def invariant_error(self) -> float:
        """``max |q + r - rhs|`` over the invariants (a test helper; costs one sparse matmul per level)."""
        err = np.abs(self.Q[0] + (self.R[0] if self.L else 0.0) - np.sqrt(self.deg)[:, None] * self.X).max()
        for lvl in range(1, self.L + 1):
            rhs = self.A @ (self.Q[lvl - 1] / self.deg[:, None])
            lhs = self.Q[lvl] + (self.R[lvl] if lvl < self.L else 0.0)
            err = max(err, np.abs(lhs - rhs).max())
        return float(err)

    def rounding_allowance(self) -> float:
        """A floating-point allowance added to :meth:`residue_bound` (so the bound holds when every residue
        is zero): ``k u sum|w| sqrt(n)`` with ``u`` the unit roundoff of the storage dtype and ``k = 9000``
        (``1e-12 sum|w| sqrt(n)`` in float64; ``||Z||_F <= sum|w| sqrt(n)`` since ``||x_i|| <= 1``).

        In float32 this is ``5.4e-4 sum|w| sqrt(n)``: at ``n = 10^5`` nodes it is 0.17, which multiplied by
        ``||a_k|| + gamma ||w_k|| ||Z||_2`` exceeds any useful budget, so float32 storage suits memory-bound
        runs whose certificate is audited (``audit=True``) rather than guaranteed.
        """
        u = float(np.finfo(self.dtype).eps) / 2.0
        return 9000.0 * u * float(np.abs(self.weights).sum()) * float(np.sqrt(self.n))

    @staticmethod
    def state_bytes(n_nodes: int, n_entries: int, n_features: int, hops: int, itemsize: int = 8) -> int:
        """The memory model of the propagation state, in bytes.

        ``(2 hops + 3) n F`` values (``hops + 1`` reserve and ``hops`` residue levels, features, embedding),
        ``(hops + 1) n`` float64 (residue norms, degrees), and the CSR graph with ``n_entries`` stored entries
        (both directions of every edge plus the self loops): ``itemsize + 4`` bytes each plus ``8 (n + 1)``.
        """
        L = int(hops)
        values = (2 * L + 3) * n_nodes * n_features * itemsize
        return int(values + (L + 1) * n_nodes * 8 + n_entries * (itemsize + 4) + 8 * (n_nodes + 1))

    def nbytes(self) -> int:
        """Bytes held by the propagation state (reserves, residues, features, embedding, graph)."""
        arrays = [*self.Q, *self.R, *self._rsq, self.X, self.Z, self.deg, self.A.data, self.A.indices,
                  self.A.indptr]
        return int(sum(a.nbytes for a in arrays))

    # ---------------------------------------------------------------------------------------- updates
    def remove_edges(self, edges: np.ndarray) -> np.ndarray:
        """Delete undirected edges ``(k, 2)`` (validated, present, distinct) and re-push locally.

        For every endpoint ``a`` with degree ``d -> d'``: the reserves at levels ``< L`` are scaled by
        ``d'/d`` so that the messages ``q/deg`` to the remaining neighbours are unchanged, the residues absorb
        the difference, and each side loses the message of the removed neighbour. Returns the rows whose
        embedding changed.

        References: ScaleGUN Algorithm 2 (edge deletion update), Lemma 3.1.
        """
        src = np.concatenate([edges[:, 0], edges[:, 1]])
        dst = np.concatenate([edges[:, 1], edges[:, 0]])
        S, cnt = np.unique(src, return_counts=True)
        d_old = self.deg[S]
        d_new = d_old - cnt
        ratio = (d_new / d_old)[:, None]
        # messages of the removed neighbours, per level, before anything changes
        msgs = [self.Q[lvl][dst] / self.deg[dst, None] for lvl in range(self.L)]
        if self.L == 0:
            self.Q[0][S] = np.sqrt(d_new)[:, None] * self.X[S]
        else:
            total = self.Q[0][S] + self.R[0][S]
            self.Q[0][S] *= ratio
            self.R[0][S] = total * np.sqrt(ratio) - self.Q[0][S]
            for lvl in range(1, self.L):
                q_old = self.Q[lvl][S]
                self.Q[lvl][S] = q_old * ratio
                self.R[lvl][S] += q_old - self.Q[lvl][S]
                np.add.at(self.R[lvl], src, -msgs[lvl - 1])
            np.add.at(self.Q[self.L], src, -msgs[self.L - 1])
        set_csr_weights(self.A, src, dst, 0.0)
        self.deg[S] = d_new
        touched = self._sweep({lvl: S for lvl in range(self.L)}) if self.L else [S]
        touched.append(S)
        rows = np.unique(np.concatenate(touched))
        self._refresh_rows(rows)
        return rows

    def zero_features(self, nodes: np.ndarray) -> np.ndarray:
        """Set ``x_a = 0`` for ``nodes`` and re-push: ``r^(0)[a] = -q^(0)[a]``. Returns the changed rows.

        References: ScaleGUN Sec. 4 (node feature unlearning).
        """
        self.X[nodes] = 0.0
        if self.L == 0:
            self.Q[0][nodes] = 0.0
            touched = [nodes]
        else:
            self.R[0][nodes] = -self.Q[0][nodes]
            touched = self._sweep({0: nodes})
            touched.append(nodes)
        rows = np.unique(np.concatenate(touched))
        self._refresh_rows(rows)
        return rows

    def flush(self) -> np.ndarray:
        """Push every nonzero residue (threshold 0), so that afterwards ``r = 0`` and ``Z_hat = Z`` up to
        rounding. Costs about one propagation; the unlearner calls it when the accumulated residues use up
        the certificate budget. Returns the changed rows.
        """
        if self.L == 0:
            return np.empty(0, dtype=np.int64)
        touched = self._sweep({lvl: np.flatnonzero(self._rsq[lvl] > 0) for lvl in range(self.L)}, threshold=0.0)
        rows = np.unique(np.concatenate(touched)) if touched else np.empty(0, dtype=np.int64)
        self._refresh_rows(rows)
        return rows

    # ---------------------------------------------------------------------------------------- internals
    def _scatter(self, rows: np.ndarray, msgs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(targets, sums)``: for each neighbour t of the pushed rows, ``sum_{s in rows, s~t} msgs[s]``."""
        if len(rows) > _DENSE_FRACTION * self.n:
            full = np.zeros((self.n, self.F), dtype=self.dtype)
            full[rows] = msgs
            return np.arange(self.n), self.A @ full  # A is symmetric, so A^T = A
        sub = self.A[rows]
        targets, inv = np.unique(sub.indices, return_inverse=True)
        S = sp.csr_array((sub.data, inv, sub.indptr), shape=(len(rows), len(targets)))
        return targets, S.T @ msgs

    def _sweep(self, candidates: dict[int, np.ndarray], threshold: float | None = None) -> list[np.ndarray]:
        """Push every residue above ``r_max``, level by level.

        Returns the rows whose reserves changed at a level with a nonzero weight (their embedding changed).
        The residue norms ``_rsq`` are kept current for every row whose residue changed.
        """
        threshold = self.r_max if threshold is None else threshold
        touched: list[np.ndarray] = []
        carry = None
        for lvl in range(self.L):
            cand = candidates.get(lvl)
            if carry is not None:
                cand = carry if cand is None else np.union1d(cand, carry)
            if cand is None or len(cand) == 0:
                carry = None
                continue
            if len(cand) > _DENSE_FRACTION * self.n:  # most rows: whole-array passes, no gathered copies
                carry = self._sweep_dense(lvl, cand, threshold, touched)
                continue
            Rl = self.R[lvl][cand]
            mask = np.abs(Rl) > threshold
            active = mask.any(axis=1)
            rows = cand[active]
            carry = None
            if len(rows):
                push = np.where(mask[active], Rl[active], 0.0)
                self.Q[lvl][rows] += push
                Rl[active] -= push
                self.R[lvl][rows] = Rl[active]
                targets, sums = self._scatter(rows, (push / self.deg[rows, None]).astype(self.dtype, copy=False))
                dest = self.R[lvl + 1] if lvl + 1 < self.L else self.Q[self.L]
                for c in range(0, len(targets), 1 << 16):  # in row chunks: no second (targets, F) temporary
                    dest[targets[c:c + (1 << 16)]] += sums[c:c + (1 << 16)]
                self.n_pushes += int(mask.sum())
                if self.weights[lvl] != 0.0:
                    touched.append(rows)
                if lvl + 1 == self.L and self.weights[self.L] != 0.0:
                    touched.append(targets)
                carry = targets
                del push, sums  # not held through the next level's pushes
            self._rsq[lvl][cand] = np.einsum("ij,ij->i", Rl, Rl) / self.deg[cand]
            del Rl, mask
        return touched

    def _sweep_dense(self, lvl: int, cand: np.ndarray, threshold: float, touched: list[np.ndarray]) -> np.ndarray | None:
        """One level of :meth:`_sweep` when the candidates are most rows: the same pushes (every ``|r| >
        threshold`` of a candidate row) as whole-array operations, with at most two ``(n, F)`` temporaries (the
        pushed residues and the matmul's result) instead of the gathered copies of the sparse path; returns the
        next level's candidates (every row, as the dense scatter of the sparse path does)."""
        R = self.R[lvl]
        if threshold == 0.0 and len(cand) == self.n:  # push everything (the initial propagation, a flush)
            mask = R != 0
            push = R.copy()
        else:
            mask = np.abs(R) > threshold
            if len(cand) < self.n:
                keep = np.zeros(self.n, dtype=bool)
                keep[cand] = True
                mask &= keep[:, None]
            push = np.where(mask, R, 0.0).astype(self.dtype, copy=False)
        active = mask.any(axis=1)
        n_push = int(np.count_nonzero(mask))
        del mask
        if not active.any():
            self._rsq_rows(lvl, cand)
            return None
        rows = np.flatnonzero(active)
        self.Q[lvl] += push
        R -= push
        if self.dtype == np.float64:
            push /= self.deg[:, None]
        else:  # as the sparse path rounds it: divide in float64, store in the state's dtype
            push = (push / self.deg[:, None]).astype(self.dtype)
        dest = self.R[lvl + 1] if lvl + 1 < self.L else self.Q[self.L]
        _matmul_add(self.A, push, dest)  # A is symmetric, so A^T = A
        del push
        self.n_pushes += n_push
        targets = np.arange(self.n)
        if self.weights[lvl] != 0.0:
            touched.append(rows)
        if lvl + 1 == self.L and self.weights[self.L] != 0.0:
            touched.append(targets)
        self._rsq_rows(lvl, cand)
        return targets

    def _rsq_rows(self, lvl: int, rows: np.ndarray, chunk: int = 1 << 16) -> None:
        """``_rsq[lvl][rows] = ||r_i||^2 / deg_i``, in row chunks (no ``(n, F)`` gathered copy)."""
        R = self.R[lvl]
        for s in range(0, len(rows), chunk):
            r = rows[s:s + chunk]
            Rr = R[r]
            self._rsq[lvl][r] = np.einsum("ij,ij->i", Rr, Rr) / self.deg[r]

    def _refresh_rows(self, rows: np.ndarray) -> None:
        """Recompute ``Z_hat`` on ``rows`` (their degree or reserves changed); the sweep keeps the residue
        norms current."""
        if len(rows) == self.n:  # every row (rows are unique): in place, no (n, F) temporaries but w Q
            self.Z.fill(0.0)
            for w, Q in zip(self.weights, self.Q, strict=True):
                if w == 1.0:
                    self.Z += Q
                elif w != 0.0:
                    self.Z += w * Q
            self.Z *= (1.0 / np.sqrt(self.deg)).astype(self.dtype)[:, None]
            return
        s = (1.0 / np.sqrt(self.deg[rows])).astype(self.dtype)[:, None]
        z = np.zeros((len(rows), self.F), dtype=self.dtype)
        for w, Q in zip(self.weights, self.Q, strict=True):
            if w != 0.0:
                z += w * Q[rows]
        self.Z[rows] = s * z
