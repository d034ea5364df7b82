"""Blocked, exact all-pairs fingerprint similarity with a bounded working set.

With binary fingerprints ``a`` and ``b``, ``|a ∧ b| = a · b``: one CSR (query block) × dense (target tile)
product gives the intersections of a block of queries with a tile of targets, in ``uint8`` when no set has more
than 255 on-bits (``int16`` otherwise). Items are sorted by their number of on-bits first, so that

* a whole (block, tile) pair is skipped when the on-bit counts alone rule out a similarity at the threshold
  (Tanimoto ≤ min(|a|, |b|) / max(|a|, |b|));
* inside a tile an integer bound per query row and per sub-tile of ``SUBTILE`` targets (Tanimoto ``>= t``
  needs ``|a ∧ b| >= t (|a| + |b|) / (1 + t)``) is tight: one vectorised comparison per pair and one
  ``flatnonzero`` per block give the candidates, and the exact float32 similarity is computed only for them.

No Python-level work is done per pair; in a self-join the targets left of a block's first row are not
computed. The output is assembled by two linear counting sorts (:func:`iclr25.augood.similarity.coo_to_csr`).

The work is cut into independent tasks (interleaved groups of query blocks) and run through
:func:`iclr25.utils.parallel.parallel_map`, so the same call runs on one core, on local processes or on a
Dask/Ray cluster. A task holds at most one dense target tile (``n_bits × TILE_COLS``, 4 MB in ``uint8`` at 2,048
bits) and one intersection block (``BLOCK_ROWS × TILE_COLS``, 2 MB) at a time, plus its output.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

from iclr25.utils.parallel import parallel_map

__all__ = ["BLOCK_ROWS", "TILE_COLS", "all_pairs", "max_over_targets", "row_blocks", "set_similarity"]

BLOCK_ROWS = 1024  # query rows per intersection block
TILE_COLS = 2048  # targets per dense tile
MIN_BLOCKS_PER_TASK = 4  # on one worker: query blocks per task, so that a dense tile is built once per 4 blocks
SUBTILE = 128  # columns per candidate bound inside a tile (targets are sorted by size, so the bound is tight)


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


def _dense_tile(t: sp.csr_matrix, c0: int, c1: int, dtype: type = np.int16) -> np.ndarray:
    tile = t[c0:c1]
    width = c1 - c0
    dense = np.zeros((t.shape[1], width), dtype=dtype)
    # one flat scatter: bit k of target j is element k * width + j
    flat = tile.indices.astype(np.int64) * width + np.repeat(np.arange(width, dtype=np.int64), np.diff(tile.indptr))
    dense.ravel()[flat] = 1
    return dense


def _count_dtype(*sizes: np.ndarray) -> type:
    """The narrowest integer type that holds every intersection: ``uint8`` when no set has more than 255
    on-bits (ECFP4-2048 rarely has more than 150), else ``int16`` (``n_bits <= 16384``). The product's inner
    loop moves half the bytes in ``uint8``."""
    top = max((float(s.max()) for s in sizes if s.size), default=0.0)
    return np.uint8 if top <= np.iinfo(np.uint8).max else np.int16


def _candidates(inter: np.ndarray, a: np.ndarray, b: np.ndarray, kind: str, thr: float) -> np.ndarray:
    """Flat positions in ``inter`` (rows: sets of sizes ``a``; columns: sizes ``b``, ascending) that may reach
    similarity ``thr``: one integer comparison per pair against the bound of the row and of the column's
    sub-tile of ``SUBTILE`` columns (whose smallest ``b`` gives the loosest bound), then one ``flatnonzero``.
    A superset of the pairs at or above ``thr``; the caller checks each exactly."""
    cols = inter.shape[1]
    mask = np.empty(inter.shape, dtype=bool)
    top = np.iinfo(inter.dtype).max
    for s0 in range(0, cols, SUBTILE):
        s1 = min(cols, s0 + SUBTILE)
        bound = np.minimum(_min_intersection(a, float(b[s0]), kind, thr), top).astype(inter.dtype)
        np.greater_equal(inter[:, s0:s1], bound[:, None], out=mask[:, s0:s1])
    return np.flatnonzero(mask)


def _pairs_task(item: tuple[_Job, list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs with similarity >= thr between the given query blocks and all (later) targets.

    Per (query block, target tile): the intersection counts by one sparse x dense product, candidates by a
    vectorised bound (:func:`_candidates`), the exact similarity of the candidates only. No Python-level work
    per pair; in a self-join the columns left of the block's first row are not computed."""
    job, blocks = item
    n, m = job.q.shape[0], job.t.shape[0]
    thr32 = np.float32(job.thr)
    rows, cols, vals = [], [], []
    q_blocks: dict[int, sp.csr_matrix] = {}  # each query block sliced once (sparse: a few hundred kB)
    for c0 in range(0, m, TILE_COLS):
        c1 = min(m, c0 + TILE_COLS)
        dense = None
        for blk in blocks:
            r0, r1 = blk * BLOCK_ROWS, min(n, (blk + 1) * BLOCK_ROWS)
            s0 = max(c0, r0 + 1) if job.upper else c0  # self-join: only targets j > i >= r0
            if s0 >= c1:
                continue
            a, b = job.a[r0:r1], job.b[s0:c1]
            if job.thr > 0 and _max_possible(a[0], a[-1], b[0], b[-1], job.kind) < job.thr - 1e-6:
                continue
            if dense is None:
                dense = _dense_tile(job.t, c0, c1, job.q.dtype)
            part = dense if s0 == c0 else np.ascontiguousarray(dense[:, s0 - c0:])
            if blk not in q_blocks:
                q_blocks[blk] = job.q[r0:r1]
            inter = np.asarray(q_blocks[blk] @ part)
            flat = _candidates(inter, a, b, job.kind, job.thr)
            r, c = np.divmod(flat, inter.shape[1])
            s = set_similarity(inter.ravel()[flat], a[r], b[c], job.kind)
            keep = (s >= thr32) & (s > 0)
            if job.upper:
                keep &= c + s0 > r + r0
            rows.append((r[keep] + r0).astype(np.int32))
            cols.append((c[keep] + s0).astype(np.int32))
            vals.append(s[keep])
    if not rows:
        return np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.float32)
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)


def _sorted_by_size(fp: sp.csr_matrix, dtype: type = np.int16) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    size = np.diff(fp.indptr)
    order = np.argsort(size, kind="stable")
    return sp.csr_matrix(fp[order], dtype=dtype), size[order].astype(np.float32), order


def _items(job: _Job, n_jobs: int) -> list[tuple[_Job, list[int]]]:
    n_blocks = -(-job.q.shape[0] // BLOCK_ROWS)
    # each task builds every dense target tile it needs once, so a task gets several query blocks (at least
    # MIN_BLOCKS_PER_TASK where there are enough); up to 8 tasks on one worker, 4 per worker otherwise
    cap = 8 if n_jobs == 1 else max(8, 4 * n_jobs)
    n_items = max(1, min(cap, n_blocks // MIN_BLOCKS_PER_TASK if n_jobs == 1 else n_blocks))
    # interleaved so that, in a self-join, every task gets early (long) and late (short) rows of the triangle
    return [(job, list(range(k, n_blocks, n_items))) for k in range(n_items)]


def all_pairs(q: sp.csr_matrix, t: sp.csr_matrix | None, kind: str, min_threshold: float, *, n_jobs: int = 1,
              backend: str | None = None, desc: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair with similarity ``>= min_threshold`` (and > 0): ``(rows, cols, values)`` in input order.

    ``t=None`` is the self-join: each unordered pair once (``rows != cols``, no diagonal).
    """
    dtype = _count_dtype(np.diff(q.indptr), np.diff(t.indptr) if t is not None else np.zeros(0))
    qs, a, q_order = _sorted_by_size(q, dtype)
    if t is None:
        ts, b, t_order = qs, a, q_order
    else:
        ts, b, t_order = _sorted_by_size(t, dtype)
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
