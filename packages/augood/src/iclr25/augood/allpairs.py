"""Blocked, exact all-pairs fingerprint similarity with a bounded working set.

With binary fingerprints ``a`` and ``b``, ``|a ∧ b| = a · b``: one ``int16`` CSR (query block) × dense
(target tile) product gives the intersections of a block of queries with a tile of targets. Items are sorted
by their number of on-bits first, so that

* a whole (block, tile) pair is skipped when the on-bit counts alone rule out a similarity at the threshold
  (Tanimoto ≤ min(|a|, |b|) / max(|a|, |b|));
* inside a tile a per-row integer bound on the intersection (Tanimoto ``>= t`` needs
  ``|a ∧ b| >= t (|a| + |b|) / (1 + t)``) is tight, and the exact float32 similarity is computed only for
  the pairs that pass it.

The work is cut into independent tasks (interleaved groups of query blocks) and run through
:func:`iclr25.utils.parallel.parallel_map`, so the same call runs on one core, on local processes or on a
Dask/Ray cluster. A task holds at most one dense target tile (``n_bits × TILE_COLS`` int16, 8 MB at 2,048
bits) and one intersection block (``BLOCK_ROWS × TILE_COLS`` int16, 4 MB) at a time, plus its output.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

from iclr25.utils.parallel import parallel_map

__all__ = ["BLOCK_ROWS", "TILE_COLS", "all_pairs", "max_over_targets", "row_blocks", "set_similarity"]

BLOCK_ROWS = 1024  # query rows per intersection block
TILE_COLS = 2048  # targets per dense tile


def set_similarity(inter: np.ndarray, a: np.ndarray, b: np.ndarray, kind: str) -> np.ndarray:
    """Similarity of bit sets from intersection sizes and set sizes (float32; 0 for two empty sets).

    Tanimoto :math:`I/(|a|+|b|-I)`, Dice :math:`2I/(|a|+|b|)`, cosine :math:`I/\\sqrt{|a||b|}`.
    """
    inter = inter.astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "tanimoto":
            s = inter / (a + b - inter)
        elif kind == "dice":
            s = np.float32(2.0) * inter / (a + b)
        else:  # cosine
            s = inter / np.sqrt(a * b)
    s[~np.isfinite(s)] = 0.0
    return s


def _min_intersection(a: np.ndarray, b_min: float, kind: str, thr: float) -> np.ndarray:
    """Per query row, an integer the intersection must reach for any target of size >= ``b_min`` to have
    similarity ``>= thr`` (one below the exact bound, so float rounding never loses a pair; at least 1)."""
    a = a.astype(np.float64)
    if kind == "tanimoto":
        bound = thr * (a + b_min) / (1.0 + thr)
    elif kind == "dice":
        bound = thr * (a + b_min) / 2.0
    else:
        bound = thr * np.sqrt(a * b_min)
    return np.maximum(np.ceil(bound) - 1, 1).astype(np.int16)


def _max_possible(a_lo: float, a_hi: float, b_lo: float, b_hi: float, kind: str) -> float:
    """Upper bound of the similarity of sets with sizes in [a_lo, a_hi] and [b_lo, b_hi]."""
    if b_lo > a_hi:
        r = a_hi / b_lo
    elif a_lo > b_hi:
        r = b_hi / a_lo
    else:
        return 1.0
    return {"tanimoto": r, "dice": 2 * r / (1 + r), "cosine": float(np.sqrt(r))}[kind]


@dataclasses.dataclass(frozen=True)
class _Job:
    """What every task shares: popcount-sorted queries and targets, their sizes and the rule."""

    q: sp.csr_matrix
    a: np.ndarray
    t: sp.csr_matrix
    b: np.ndarray
    kind: str
    thr: float
    upper: bool  # self-join: only pairs j > i (in sorted order)


def _dense_tile(t: sp.csr_matrix, c0: int, c1: int) -> np.ndarray:
    tile = t[c0:c1]
    dense = np.zeros((t.shape[1], c1 - c0), dtype=np.int16)
    dense[tile.indices, np.repeat(np.arange(c1 - c0), np.diff(tile.indptr))] = 1
    return dense


def _pairs_task(item: tuple[_Job, list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs with similarity >= thr between the given query blocks and all (later) targets."""
    job, blocks = item
    n, m = job.q.shape[0], job.t.shape[0]
    thr32 = np.float32(job.thr)
    rows, cols, vals = [], [], []
    for c0 in range(0, m, TILE_COLS):
        c1 = min(m, c0 + TILE_COLS)
        b = job.b[c0:c1]
        dense = None
        for blk in blocks:
            r0, r1 = blk * BLOCK_ROWS, min(n, (blk + 1) * BLOCK_ROWS)
            if job.upper and c1 <= r0 + 1:
                continue  # every pair here has j <= i
            a = job.a[r0:r1]
            if job.thr > 0 and _max_possible(a[0], a[-1], b[0], b[-1], job.kind) < job.thr - 1e-6:
                continue
            if dense is None:
                dense = _dense_tile(job.t, c0, c1)
            inter = np.asarray(job.q[r0:r1] @ dense)
            r, c = np.nonzero(inter >= _min_intersection(a, float(b[0]), job.kind, job.thr)[:, None])
            s = set_similarity(inter[r, c], a[r], b[c], job.kind)
            keep = (s >= thr32) & (s > 0)
            if job.upper:
                keep &= c + c0 > r + r0
            rows.append((r[keep] + r0).astype(np.int32))
            cols.append((c[keep] + c0).astype(np.int32))
            vals.append(s[keep])
    if not rows:
        return np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.float32)
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)


def _sorted_by_size(fp: sp.csr_matrix) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    size = np.diff(fp.indptr)
    order = np.argsort(size, kind="stable")
    return sp.csr_matrix(fp[order], dtype=np.int16), size[order].astype(np.float32), order


def _items(job: _Job, n_jobs: int) -> list[tuple[_Job, list[int]]]:
    n_blocks = -(-job.q.shape[0] // BLOCK_ROWS)
    n_items = min(n_blocks, max(8, 4 * n_jobs) if n_jobs != 1 else 8)
    # interleaved so that, in a self-join, every task gets early (long) and late (short) rows of the triangle
    return [(job, list(range(k, n_blocks, n_items))) for k in range(n_items)]


def all_pairs(q: sp.csr_matrix, t: sp.csr_matrix | None, kind: str, min_threshold: float, *, n_jobs: int = 1,
              backend: str | None = None, desc: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair with similarity ``>= min_threshold`` (and > 0): ``(rows, cols, values)`` in input order.

    ``t=None`` is the self-join: each unordered pair once (``rows != cols``, no diagonal).
    """
    qs, a, q_order = _sorted_by_size(q)
    if t is None:
        ts, b, t_order = qs, a, q_order
    else:
        ts, b, t_order = _sorted_by_size(t)
    job = _Job(qs, a, ts, b, kind, float(min_threshold), t is None)
    parts = parallel_map(_pairs_task, _items(job, n_jobs), n_jobs=n_jobs, backend=backend, desc=desc)
    out = []
    for k, order in enumerate((q_order, t_order, None)):
        col = np.concatenate([p[k] for p in parts])
        out.append(col if order is None else order.astype(np.int32)[col])
        for p in parts:  # free each task's column as soon as it is copied (where this process owns it)
            try:
                p[k].resize(0, refcheck=False)
            except ValueError:
                pass
    return out[0], out[1], out[2]


def _max_task(item: tuple[_Job, list[int]]) -> np.ndarray:
    job, blocks = item
    n, m = job.q.shape[0], job.t.shape[0]
    out = np.zeros((len(blocks), BLOCK_ROWS), dtype=np.float32)
    for c0 in range(0, m, TILE_COLS):
        c1 = min(m, c0 + TILE_COLS)
        dense = _dense_tile(job.t, c0, c1)
        b = job.b[c0:c1]
        for k, blk in enumerate(blocks):
            r0, r1 = blk * BLOCK_ROWS, min(n, (blk + 1) * BLOCK_ROWS)
            s = set_similarity(np.asarray(job.q[r0:r1] @ dense), job.a[r0:r1, None], b[None, :], job.kind)
            np.maximum(out[k, :r1 - r0], s.max(axis=1), out=out[k, :r1 - r0])
    return out


def max_over_targets(q: sp.csr_matrix, t: sp.csr_matrix, kind: str, *, n_jobs: int = 1,
                     backend: str | None = None) -> np.ndarray:
    """For each query row, its highest similarity to any target row (exact, tiled)."""
    q = sp.csr_matrix(q, dtype=np.int16)
    ts, b, _ = _sorted_by_size(t)
    a = np.diff(q.indptr).astype(np.float32)
    job = _Job(q, a, ts, b, kind, 0.0, False)
    items = _items(job, n_jobs)
    parts = parallel_map(_max_task, items, n_jobs=n_jobs, backend=backend)
    out = np.zeros(q.shape[0], dtype=np.float32)
    for (_, blocks), res in zip(items, parts, strict=True):
        for k, blk in enumerate(blocks):
            r0, r1 = blk * BLOCK_ROWS, min(q.shape[0], (blk + 1) * BLOCK_ROWS)
            out[r0:r1] = res[k, :r1 - r0]
    return out


def row_blocks(q: sp.csr_matrix, t: sp.csr_matrix, kind: str, max_elements: int = 1 << 20):
    """Yield ``(start, block)``: the dense similarity of query rows ``start:start+len(block)`` to every target,
    in the targets' own order, with at most ``max_elements`` entries per block."""
    if q.shape[1] != t.shape[1]:
        raise ValueError(f"X must have the fingerprint length of the training data ({t.shape[1]}), got {q.shape[1]}")
    q = sp.csr_matrix(q, dtype=np.int16)
    dense = _dense_tile(sp.csr_matrix(t), 0, t.shape[0])
    a = np.diff(q.indptr).astype(np.float32)
    b = np.diff(sp.csr_matrix(t).indptr).astype(np.float32)
    step = max(1, max_elements // max(t.shape[0], 1))
    for start in range(0, q.shape[0], step):
        stop = min(q.shape[0], start + step)
        yield start, set_similarity(np.asarray(q[start:stop] @ dense), a[start:stop, None], b[None, :], kind)
