"""Pairwise similarity of molecules (fingerprint Tanimoto/Dice/cosine) and of sequences (global-alignment
identity), stored as a sparse CSR matrix that keeps only the pairs at or above ``min_threshold`` (by default
the smallest threshold a CCPart sweep needs), with a memory estimate checked before the work.

The fingerprint kernel (:mod:`iclr25.augood.allpairs`) is a blocked sparse-by-dense integer product: with
binary fingerprints ``a`` and ``b``, ``|a ∧ b| = a · b``. The product was measured against RDKit's
``BulkTanimotoSimilarity`` and a bit-packed ``uint64`` popcount kernel at the same threshold
(``benchmarks/similarity_kernels.py``, written to ``benchmarks/similarity_kernels.json``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from iclr25.utils.memory import available_memory_bytes as available_memory

__all__ = [
    "DEFAULT_MIN_THRESHOLD",
    "FINGERPRINTS",
    "KINDS",
    "InvalidMoleculeError",
    "SimilarityMemoryError",
    "fingerprints",
    "max_similarity",
    "needed_threshold",
    "similarity_matrix",
]

#: Fingerprints understood by :func:`fingerprints`: Morgan/ECFP of diameter 2, 4, 6 and MACCS keys.
FINGERPRINTS = ("ecfp2", "ecfp4", "ecfp6", "maccs")
#: Similarity functions: set-based ones on fingerprints, and global-alignment identity on sequences.
KINDS = ("tanimoto", "dice", "cosine", "identity")

_FP_CHUNK = 2048  # molecules parsed and fingerprinted at a time


class InvalidMoleculeError(ValueError):
    """Some SMILES strings could not be parsed; ``rows`` holds their 0-based row numbers."""

    def __init__(self, argument: str, rows: Sequence[int], examples: Sequence[str]):
        self.rows = tuple(int(r) for r in rows)
        self.examples = tuple(str(e) for e in examples)
        shown = ", ".join(f"row {r}: {s!r}" for r, s in zip(self.rows[:5], examples[:5], strict=False))
        more = f" and {len(self.rows) - 5} more" if len(self.rows) > 5 else ""
        super().__init__(
            f"{argument} has {len(self.rows)} invalid molecule(s) ({shown}{more}); expected valid SMILES "
            "strings or RDKit Mol objects"
        )


def _as_items(items: Any, name: str) -> Any:
    """Validate the container: a non-empty sequence (or 2-D array of precomputed fingerprints)."""
    if isinstance(items, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of SMILES/Mol/sequence strings, not a single string")
    if sp.issparse(items):
        if items.ndim != 2 or items.shape[0] == 0 or items.shape[1] == 0:
            raise ValueError(f"{name} must be a non-empty 2-D fingerprint matrix, got shape {items.shape}")
        return sp.csr_matrix(items)
    if isinstance(items, np.ndarray) and items.ndim == 2:
        if items.shape[0] == 0 or items.shape[1] == 0:
            raise ValueError(f"{name} must be a non-empty 2-D fingerprint matrix, got shape {items.shape}")
        return items
    try:
        seq = list(items)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of SMILES strings or RDKit Mols, "
                        f"got {type(items).__name__}") from None
    if not seq:
        raise ValueError(f"{name} must not be empty; expected at least one molecule or sequence")
    return seq


def _binary_matrix(arr: Any, name: str) -> sp.csr_matrix:
    """A precomputed fingerprint matrix (dense or sparse) as a 0/1 ``int16`` CSR matrix."""
    data = arr.data if sp.issparse(arr) else arr  # the stored values are what must be 0/1
    if not (np.issubdtype(data.dtype, np.number) or data.dtype == bool):
        raise TypeError(f"{name} must be a numeric or boolean fingerprint matrix, got dtype {data.dtype}")
    if not np.all(np.isfinite(data.astype(np.float64, copy=False))):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    if np.any((data != 0) & (data != 1)):
        raise ValueError(f"{name} must be a binary (0/1) fingerprint matrix")
    out = sp.csr_matrix(arr, dtype=np.int16)
    out.eliminate_zeros()
    return out


def _parse_molecules(items: list[Any], name: str) -> list[Any]:
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")  # invalid rows are reported together below, not one log line each
    mols: list[Any] = []
    bad_rows: list[int] = []
    bad: list[str] = []
    for i, item in enumerate(items):
        if isinstance(item, Chem.Mol):
            mol = item
        elif isinstance(item, str):
            mol = Chem.MolFromSmiles(item) if item.strip() else None
        else:
            raise TypeError(f"{name}[{i}] must be a SMILES string or an RDKit Mol, got {type(item).__name__}")
        if mol is None:
            bad_rows.append(i)
            bad.append(str(item))
        mols.append(mol)
    if bad_rows:
        raise InvalidMoleculeError(name, bad_rows, bad)
    return mols


def _check_fingerprint(fingerprint: str, n_bits: int) -> None:
    if fingerprint not in FINGERPRINTS:
        raise ValueError(f"fingerprint must be one of {FINGERPRINTS}, got {fingerprint!r}")
    if isinstance(n_bits, bool) or not isinstance(n_bits, (int, np.integer)):
        raise TypeError(f"n_bits must be an integer, got {type(n_bits).__name__}")
    if not 8 <= n_bits <= 16384:
        raise ValueError(f"n_bits must be in [8, 16384], got {n_bits}")


def fingerprints(items: Any, *, fingerprint: str = "ecfp4", n_bits: int = 2048) -> sp.csr_matrix:
    """Binary fingerprints of molecules as an ``(n, n_bits)`` ``int16`` CSR matrix.

    Parameters
    ----------
    items : sequence of str or rdkit.Chem.Mol, or 2-D array
        SMILES strings or RDKit molecules. A 2-D 0/1 array (dense or sparse) is taken as precomputed
        fingerprints and returned as CSR.
    fingerprint : {"ecfp2", "ecfp4", "ecfp6", "maccs"}
        ECFP-``d`` is the Morgan fingerprint of radius ``d/2`` folded to ``n_bits``; MACCS has 167 keys
        (``n_bits`` is then ignored).
    n_bits : int
        Length of the folded Morgan fingerprint.

    Returns
    -------
    scipy.sparse.csr_matrix
        Row ``i`` holds the on-bits of molecule ``i``.

    Raises
    ------
    InvalidMoleculeError
        With the row numbers of every SMILES that RDKit cannot parse.

    References
    ----------
    Paper Sec. 3.1 (similarity functions for small molecules: ECFP with Tanimoto).

    Examples
    --------
    >>> fingerprints(["CCO", "c1ccccc1"]).shape
    (2, 2048)
    """
    _check_fingerprint(fingerprint, n_bits)
    seq = _as_items(items, "items")
    if not isinstance(seq, list):
        return _binary_matrix(seq, "items")
    chunks: list[sp.csr_matrix] = []
    bad_rows: list[int] = []
    bad: list[str] = []
    # parse and fingerprint in chunks so that only a few thousand RDKit molecules are alive at a time
    for start in range(0, len(seq), _FP_CHUNK):
        try:
            mols = _parse_molecules(seq[start:start + _FP_CHUNK], "items")
        except InvalidMoleculeError as exc:
            bad_rows += [start + r for r in exc.rows]
            bad += [str(seq[start + r]) for r in exc.rows]
            continue
        if not bad_rows:
            chunks.append(_fingerprint_chunk(mols, fingerprint, int(n_bits)))
    if bad_rows:
        raise InvalidMoleculeError("items", bad_rows, bad)
    return sp.vstack(chunks, format="csr") if len(chunks) > 1 else chunks[0]


def _fingerprint_chunk(mols: list[Any], fingerprint: str, n_bits: int) -> sp.csr_matrix:
    if fingerprint == "maccs":
        from rdkit.Chem import MACCSkeys

        on_bits = [list(MACCSkeys.GenMACCSKeys(m).GetOnBits()) for m in mols]
        lengths = np.fromiter((len(b) for b in on_bits), dtype=np.int64, count=len(on_bits))
        indptr = np.concatenate([[0], np.cumsum(lengths)])
        indices = np.fromiter((j for b in on_bits for j in b), dtype=np.int32, count=int(indptr[-1]))
        return sp.csr_matrix((np.ones(indices.size, np.int16), indices, indptr), shape=(len(mols), 167))
    from rdkit import DataStructs
    from rdkit.Chem import rdFingerprintGenerator

    gen = rdFingerprintGenerator.GetMorganGenerator(radius=int(fingerprint[-1]) // 2, fpSize=n_bits)
    fps = gen.GetFingerprints(mols, numThreads=1)
    # FPS hex text is the bit vector packed little-endian by byte: one bytes.fromhex for all molecules is
    # ~5x faster than iterating GetOnBits() in Python
    packed = np.frombuffer(bytes.fromhex("".join(DataStructs.BitVectToFPSText(f) for f in fps)), dtype=np.uint8)
    bits = np.unpackbits(packed.reshape(len(mols), -1), axis=1, bitorder="little")[:, :n_bits]
    return sp.csr_matrix(bits.astype(np.int16))


def _check_threshold(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number in [0, 1], got {type(value).__name__}")
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}")
    return value


class SimilarityMemoryError(MemoryError, ValueError):
    """A similarity request whose stored pairs would not fit in the memory budget (raised before the work)."""


def needed_threshold(thresholds: Any) -> float:
    """The smallest similarity a CCPart sweep and AU-GOOD over ``thresholds`` need stored: ``min(thresholds)``.

    CCPart at λ only looks at pairs ``>= λ`` (or ``> λ``), and AU-GOOD's first bin is ``s <= λ_1``, which
    also takes the deployment items with no stored pair (``unmatched="lowest_bin"``); so pairs below
    :math:`\\lambda_1` change nothing and are not stored.

    Examples
    --------
    >>> needed_threshold([0.3, 0.35, 0.9])
    0.3
    """
    return float(check_thresholds(thresholds)[0])


def check_thresholds(thresholds: Any) -> np.ndarray:
    """Validate a non-empty, strictly increasing 1-D array of thresholds in [0, 1]."""
    if isinstance(thresholds, (str, bytes)):
        raise TypeError("thresholds must be a 1-D array of numbers in [0, 1], not a string")
    if np.iscomplexobj(thresholds):  # never cast to its real part
        raise TypeError("thresholds must be real numbers in [0, 1], got complex numbers")
    try:
        t = np.asarray(thresholds, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"thresholds must be a 1-D array of numbers in [0, 1] ({exc})") from exc
    if t.ndim != 1 or t.size == 0:
        raise ValueError(f"thresholds must be a non-empty 1-D array, got shape {t.shape}")
    if not np.all(np.isfinite(t)):
        raise ValueError("thresholds must be finite (no NaN or inf)")
    if t.min() < 0.0 or t.max() > 1.0:
        raise ValueError(f"thresholds must lie in [0, 1], got values in [{t.min()}, {t.max()}]")
    if np.any(np.diff(t) <= 0):
        raise ValueError("thresholds must be strictly increasing")
    return t


def _gib(nbytes: float) -> str:
    return f"{nbytes / 2**30:.2f} GiB"


#: Bytes of memory per stored entry at the peak of :func:`similarity_matrix`: the CSR result (8 B: float32 value,
#: int32 column), the symmetric COO it is built from (12 B) and the tasks' pair lists (6 B per entry).
BYTES_PER_ENTRY = 26
_SAMPLE_ROWS = 256


def estimate_entries(q: sp.csr_matrix, t: sp.csr_matrix | None, kind: str, min_threshold: float, *,
                     seed: int = 0) -> float:
    """Expected number of stored entries, from the exact pairs of up to 256 random query rows."""
    from .allpairs import all_pairs

    n = q.shape[0]
    m = n if t is None else t.shape[0]
    rows = np.sort(np.random.default_rng(seed).choice(n, min(n, _SAMPLE_ROWS), replace=False))
    found = all_pairs(q[rows], q if t is None else t, kind, min_threshold)[0].size
    if t is None:
        found -= rows.size if min_threshold <= 1.0 else 0  # each sampled row also meets itself (similarity 1)
        return max(found, 0) / rows.size * n
    return found / rows.size * m


def check_memory(entries: float, max_memory: Any, *, what: str) -> None:
    """Raise :class:`SimilarityMemoryError` when ``entries`` stored pairs would not fit in ``max_memory``."""
    budget = available_memory() if max_memory is None else max_memory
    if budget is None:
        return
    if isinstance(budget, bool) or not isinstance(budget, (int, float, np.integer, np.floating)) or budget <= 0:
        raise ValueError(f"max_memory must be a positive number of bytes, got {max_memory!r}")
    need = entries * BYTES_PER_ENTRY
    if need > budget:
        raise SimilarityMemoryError(
            f"{what} would store about {entries:,.0f} pairs ({_gib(entries * 8)} as CSR, about {_gib(need)} at "
            f"the peak), more than max_memory={_gib(budget)}"
            f"{' (the memory available now)' if max_memory is None else ''}; raise min_threshold (or pass "
            "thresholds= so that only min(thresholds) is stored), use approximate_similarity_matrix, or raise "
            "max_memory")


def _sequence_matrix(items: Any, targets: Any, min_threshold: float, max_memory: Any,
                     align: dict[str, Any]) -> sp.csr_matrix:
    from .sequence import check_sequences, identity_matrix

    q = check_sequences(items, "items")
    t = None if targets is None else check_sequences(targets, "targets")
    m = len(q) if t is None else len(t)
    check_memory(float(len(q)) * m, max_memory, what=f"identity of {len(q):,} x {m:,} sequences (dense)")
    sim = identity_matrix(q, t, **align)
    if t is None:
        np.fill_diagonal(sim, 0.0)
    sim[sim < min_threshold] = 0.0
    out = sp.csr_matrix(sim.astype(np.float32))
    out.eliminate_zeros()
    return out


def _fingerprint_pair(items: Any, targets: Any, fingerprint: str, n_bits: int):
    q = fingerprints(items, fingerprint=fingerprint, n_bits=n_bits)
    if targets is None:
        return q, None
    try:
        t = fingerprints(targets, fingerprint=fingerprint, n_bits=n_bits)
    except InvalidMoleculeError as exc:
        raise InvalidMoleculeError("targets", exc.rows, exc.examples) from exc
    if q.shape[1] != t.shape[1]:
        raise ValueError(f"items and targets must have the same fingerprint length, got {q.shape[1]} and "
                         f"{t.shape[1]}")
    return q, t


def resolve_min_threshold(min_threshold: Any, thresholds: Any) -> float:
    """``min_threshold`` as given, else ``min(thresholds)``, else :data:`DEFAULT_MIN_THRESHOLD`."""
    if thresholds is not None:
        need = needed_threshold(thresholds)
        if min_threshold is None:
            return need
        min_threshold = _check_threshold(min_threshold, "min_threshold")
        if min_threshold > need:
            raise ValueError(f"min_threshold must be <= min(thresholds) = {need} (pairs between them are needed), "
                             f"got {min_threshold}")
        return min_threshold
    return DEFAULT_MIN_THRESHOLD if min_threshold is None else _check_threshold(min_threshold, "min_threshold")


#: Pairs stored by :func:`similarity_matrix` when neither ``min_threshold`` nor ``thresholds`` is given: the
#: lowest λ of the default grid (:func:`~iclr25.augood.threshold_grid`, 0.30 to 0.95).
DEFAULT_MIN_THRESHOLD = 0.30


def coo_to_csr(pairs: list[np.ndarray], shape: tuple[int, int]) -> sp.csr_matrix:
    """CSR with sorted column indices from coordinate lists ``pairs = [rows, cols, vals]`` without duplicates
    (emptied here, so that they are freed after the first pass), by two stable counting sorts (by column, then
    by row: two O(nnz) passes of scipy's ``coo_tocsr``/``csr_tocsc``) instead of a sort of every row."""
    from scipy.sparse import _sparsetools

    n, m = int(shape[0]), int(shape[1])
    rows, cols, vals = pairs
    pairs.clear()
    nnz = int(vals.size)
    idx = np.int64 if max(n, m, nnz) > np.iinfo(np.int32).max else np.int32
    rows = np.asarray(rows, dtype=idx)
    cols = np.asarray(cols, dtype=idx)
    # pass 1: group by column (the transpose as CSR), rows within a column in input order
    t_ptr = np.empty(m + 1, dtype=idx)
    t_ind = np.empty(nnz, dtype=idx)
    t_val = np.empty(nnz, dtype=vals.dtype)
    _sparsetools.coo_tocsr(m, n, nnz, cols, rows, vals, t_ptr, t_ind, t_val)
    del rows, cols, vals
    # pass 2: group by row, walking the columns in increasing order: every row's columns come out sorted
    ptr = np.empty(n + 1, dtype=idx)
    ind = np.empty(nnz, dtype=idx)
    val = np.empty(nnz, dtype=t_val.dtype)
    _sparsetools.csr_tocsc(m, n, t_ptr, t_ind, t_val, ptr, ind, val)
    del t_ptr, t_ind, t_val
    out = sp.csr_matrix((val, ind, ptr), shape=(n, m))
    out.has_sorted_indices = True
    return out


def symmetric_csr(pairs: list[np.ndarray], n: int) -> sp.csr_matrix:
    """The symmetric ``n × n`` CSR matrix of unordered pairs ``pairs = [rows, cols, vals]`` (emptied here, so
    that the pair lists are freed while the matrix is built)."""
    rows, cols, vals = pairs
    pairs.clear()
    r = np.concatenate([rows, cols])
    c = np.concatenate([cols, rows])
    del rows, cols
    v = np.concatenate([vals, vals])
    del vals
    coo = [r, c, v]
    del r, c, v
    return coo_to_csr(coo, (n, n))


def similarity_matrix(items: Any, targets: Any = None, *, kind: str = "tanimoto", fingerprint: str = "ecfp4",
                      n_bits: int = 2048, min_threshold: float | None = None, thresholds: Any = None,
                      n_jobs: int = 1, backend: str | None = None, max_memory: float | None = None,
                      **align: Any) -> sp.csr_matrix:
    """Sparse pairwise similarity, keeping only the pairs with similarity ``>= min_threshold``.

    For fingerprints ``a``, ``b`` (bit sets) the similarities are

    .. math::

        T(a, b) = \\frac{|a \\cap b|}{|a| + |b| - |a \\cap b|}, \\quad
        D(a, b) = \\frac{2|a \\cap b|}{|a| + |b|}, \\quad
        C(a, b) = \\frac{|a \\cap b|}{\\sqrt{|a||b|}},

    and for sequences ``identity`` is the fraction of identical positions of a Needleman–Wunsch global
    alignment (see :func:`iclr25.augood.sequence.identity_matrix`, extra ``[seq]``).

    Sparse by default: only what a CCPart sweep / AU-GOOD over ``thresholds`` needs is stored
    (:func:`needed_threshold`, the grid's smallest λ), 0.30 when nothing is said; all pairs only with an
    explicit ``min_threshold=0``. Before the work, the number of stored pairs is estimated from 256 sampled
    rows, and a request that would not fit in ``max_memory`` raises :class:`SimilarityMemoryError` with the
    estimate. The fingerprint kernel is exact and blocked (:mod:`iclr25.augood.allpairs`): its working set
    is a few tiles of ~8 MB per task, whatever the number of molecules.

    Parameters
    ----------
    items : sequence of str or rdkit.Chem.Mol, or 2-D 0/1 array
        Molecules (SMILES or Mol), precomputed binary fingerprints, or sequences for ``kind="identity"``.
    targets : same as ``items``, optional
        Compare ``items`` (rows) with ``targets`` (columns). Without it, ``items`` is compared with
        itself and the diagonal (self-similarity 1) is not stored.
    kind : {"tanimoto", "dice", "cosine", "identity"}
    fingerprint : {"ecfp2", "ecfp4", "ecfp6", "maccs"}
    n_bits : int
    min_threshold : float in [0, 1], optional
        Pairs below it are not stored; zeros are never stored. Default: ``min(thresholds)``, or 0.30.
    thresholds : array-like, optional
        The CCPart/AU-GOOD threshold grid the matrix is for; ``min_threshold`` is derived from it.
    n_jobs : int
        Workers for :func:`iclr25.utils.parallel.parallel_map` (``-1``: all cores).
    backend : str, optional
        joblib backend of ``parallel_map`` (``"loky"``, ``"dask"`` with a running ``distributed.Client``, ...).
    max_memory : float, optional
        Bytes the result may take at its peak; default: the memory available now.
    **align
        Alignment options for ``kind="identity"`` (``denominator``, ``gap_open``, ``gap_extend``).

    Returns
    -------
    scipy.sparse.csr_matrix
        ``float32``, shape ``(len(items), len(targets or items))``; symmetric when ``targets`` is None.

    Raises
    ------
    SimilarityMemoryError
        (a ``MemoryError`` and a ``ValueError``) when the estimate exceeds ``max_memory``.

    References
    ----------
    Paper Sec. 3.1 (similarity functions) and Sec. 3.3 (the similarity graph that CCPart cuts).

    Examples
    --------
    >>> S = similarity_matrix(["CCO", "CCCO", "c1ccccc1"], min_threshold=0.0)
    >>> S.shape, round(float(S[0, 1]), 3), S[0, 0]
    ((3, 3), 0.556, np.float32(0.0))
    """
    min_threshold = resolve_min_threshold(min_threshold, thresholds)
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if kind == "identity":
        return _sequence_matrix(items, targets, min_threshold, max_memory, align)
    if align:
        raise TypeError(f"alignment options {sorted(align)} only apply to kind='identity'")
    q, t = _fingerprint_pair(items, targets, fingerprint, n_bits)
    return _fingerprint_matrix(q, t, kind, min_threshold, n_jobs=n_jobs, backend=backend, max_memory=max_memory)


def _fingerprint_matrix(q: sp.csr_matrix, t: sp.csr_matrix | None, kind: str, min_threshold: float, *,
                        n_jobs: int, backend: str | None, max_memory: Any) -> sp.csr_matrix:
    """Step of :func:`similarity_matrix` for fingerprints: check the estimated size against ``max_memory``,
    run the blocked all-pairs kernel and assemble the CSR result (symmetric when ``t`` is None)."""
    n = q.shape[0]
    m = n if t is None else t.shape[0]
    entries = estimate_entries(q, t, kind, min_threshold)
    check_memory(entries, max_memory, what=f"similarity_matrix of {n:,} x {m:,} items at min_threshold="
                 f"{min_threshold}")
    from .allpairs import all_pairs

    pairs = list(all_pairs(q, t, kind, min_threshold, n_jobs=n_jobs, backend=backend, desc="similarity"))
    if t is None:
        return symmetric_csr(pairs, n)
    return coo_to_csr(pairs, (n, m))


def max_similarity(queries: Any, targets: Any, *, kind: str = "tanimoto", fingerprint: str = "ecfp4",
                   n_bits: int = 2048, n_jobs: int = 1, backend: str | None = None, **align: Any) -> np.ndarray:
    """For each query, its highest similarity to any target: :math:`s_j = \\max_i \\mathrm{sim}(q_j, x_i)`.

    This is what AU-GOOD histograms for a deployment set (queries) against the training data (targets).
    Exact and tiled (:mod:`iclr25.augood.allpairs`), so the query × target matrix is never held in memory.

    References
    ----------
    Paper Sec. 3.2 (the deployment distribution :math:`p_T(\\lambda)` of train–deployment similarity).

    Examples
    --------
    >>> max_similarity(["CCO"], ["CCCO", "c1ccccc1"]).round(3)
    array([0.556], dtype=float32)
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if kind == "identity":
        from .sequence import check_sequences, identity_matrix

        return identity_matrix(check_sequences(queries, "queries"), check_sequences(targets, "targets"),
                               **align).max(axis=1).astype(np.float32)
    if align:
        raise TypeError(f"alignment options {sorted(align)} only apply to kind='identity'")
    q, t = _fingerprint_pair(queries, targets, fingerprint, n_bits)
    from .allpairs import max_over_targets

    return max_over_targets(q, t, kind, n_jobs=n_jobs, backend=backend)
