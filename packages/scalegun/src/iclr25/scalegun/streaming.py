"""Large graphs in bounded memory: a power-law generator that streams its edges to a CSR ``.npz`` (plus
``X.npy``, ``y.npy``, ``train.npy``, ``test.npy``, the files that ``iclr25 scalegun unlearn`` reads), and
the loader of such a folder.

The generator never holds the edge list: endpoint pairs are drawn in chunks of ``2^21`` (each chunk from its
own seeded stream), both directions are appended as int64 keys ``row * n + col`` to per-row-block scratch
files, and each block is then sorted and de-duplicated on its own and appended to the CSR column indices
(an int32 memory map). The ``.npz`` is written from the memory map in 16 MiB pieces by ``numpy.savez``.
Peak memory: a few ``n``-length arrays (weights, classes, degrees, ``indptr``; the features are written in
row chunks) plus ~300 MB of chunk and block buffers — independent of the number of edges (measured: 1.5 GB
peak RSS, interpreter included, while writing 10M edges).

References: Chung & Lu (2002) expected-degree graphs; ScaleGUN Sec. 5 (large-scale experiments).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from iclr25.utils.io import DataFileError
from iclr25.utils.seeding import check_seed

from .datasets import GraphData, _check_frac, _check_int, _class_edges
from .mapped import MappedGraph, write_mapped_graph

__all__ = ["powerlaw_files", "load_graph_files", "GRAPH_FILES"]

GRAPH_FILES = ("graph.npz", "X.npy", "y.npy", "train.npy", "test.npy")
_CHUNK = 1 << 21  # endpoint pairs per chunk (fixed: the graph depends on the seed only)
_BLOCK_ENTRIES = 1 << 23  # directed entries per row block (~64 MB of keys)
_ROW_CHUNK = 1 << 16  # feature rows written at a time
MAPPED_DIR = "csr-mmap"  # load_graph_files(mmap=True): the memory-mapped CSR, next to graph.npz


def powerlaw_files(out: str | os.PathLike[str], n: int, m: int, features: int = 64, classes: int = 5,
                   seed: int = 0, *, exponent: float = 2.5, homophily: float = 0.8, signal: float = 0.3,
                   train_frac: float = 0.1) -> Path:
    """Write a Chung-Lu power-law graph of ``n`` nodes and about ``m`` undirected edges (duplicates and self
    loops dropped) to the folder ``out``: ``graph.npz`` (symmetric CSR, scipy ``save_npz`` layout, no self
    loops, uint8 ones), ``X.npy`` (n, F) float64, ``y.npy``, ``train.npy``, ``test.npy``. Memory does not
    grow with ``m`` (see the module docstring). The files appear only when complete. Returns ``out``.

    Examples
    --------
    >>> import tempfile
    >>> d = powerlaw_files(tempfile.mkdtemp(), 300, 1500, 4, 3, seed=0)
    >>> g = load_graph_files(d)
    >>> g.X.shape, bool((g.adj != g.adj.T).nnz == 0), 1000 < g.n_edges <= 1500
    ((300, 4), True, True)
    """
    n, m = _check_int(n, "n", 2), _check_int(m, "m", 1)
    features, classes = _check_int(features, "features", 1), _check_int(classes, "classes", 1)
    if isinstance(exponent, bool) or not isinstance(exponent, (int, float)) or exponent <= 2.0:
        raise ValueError(f"exponent must be a number > 2, got {exponent!r}")
    homophily, train_frac = _check_frac(homophily, "homophily"), _check_frac(train_frac, "train_frac")
    seed = check_seed(seed)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, size=n)
    weight = (np.arange(n) + 1.0) ** (-1.0 / (exponent - 1.0))
    weight = weight[rng.permutation(n)]  # node ids carry no degree information
    n_blocks = max(1, -(-2 * m // _BLOCK_ENTRIES))
    tmp = Path(tempfile.mkdtemp(prefix=".powerlaw-", dir=out))
    try:
        _write_edge_blocks(tmp, n, m, n_blocks, seed, y, classes, homophily, weight)
        _write_csr(tmp, n, n_blocks)
        _write_nodes(tmp, y, features, classes, signal, train_frac, rng)
        for name in GRAPH_FILES:
            os.replace(tmp / name, out / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _write_edge_blocks(tmp: Path, n: int, m: int, n_blocks: int, seed: int, y: np.ndarray, classes: int,
                       homophily: float, weight: np.ndarray) -> None:
    """Draw the ``m`` endpoint pairs of :func:`powerlaw_files` chunk by chunk (chunk ``c`` from the stream seeded
    ``[seed, c]``) and spill them into the row blocks of ``tmp`` (:func:`_spill_pairs`)."""
    def chunks():
        for c, start in enumerate(range(0, m, _CHUNK)):
            crng = np.random.default_rng([seed, c])
            yield _class_edges(n, min(_CHUNK, m - start), y, classes, homophily, weight, crng)

    _spill_pairs(tmp, n, n_blocks, chunks())


def _spill_pairs(tmp: Path, n: int, n_blocks: int, pairs) -> None:
    """Drop the self loops of every chunk ``(u, v)`` of ``pairs`` and append both directions as int64 keys
    ``row * n + col`` to the scratch file ``tmp/block{b}.bin`` of the row's block (``n_blocks`` blocks of equal
    row ranges; the layout :func:`_write_csr` reads)."""
    rows_per_block = -(-n // n_blocks)
    block_files = [open(tmp / f"block{b}.bin", "wb") for b in range(n_blocks)]  # noqa: SIM115
    try:
        for u, v in pairs:
            keep = u != v
            rows = np.concatenate([u[keep], v[keep]])
            keys = rows * n + np.concatenate([v[keep], u[keep]])
            blk = rows // rows_per_block
            order = np.argsort(blk, kind="stable")
            bounds = np.searchsorted(blk[order], np.arange(n_blocks + 1))
            keys = keys[order]
            for b in range(n_blocks):
                keys[bounds[b]:bounds[b + 1]].tofile(block_files[b])
    finally:
        for f in block_files:
            f.close()


def _write_csr(tmp: Path, n: int, n_blocks: int) -> None:
    """Sort and de-duplicate each scratch block in turn (deleting it), append its column indices to the int32
    ``tmp/indices.bin``, and write ``tmp/graph.npz`` (symmetric CSR, uint8 ones) from that memory map."""
    counts = np.zeros(n, dtype=np.int64)
    with open(tmp / "indices.bin", "wb") as idx_file:
        for b in range(n_blocks):
            keys = np.fromfile(tmp / f"block{b}.bin", dtype=np.int64)
            keys.sort()  # sort + drop repeats: np.unique's result, without numpy 2's slower hash path
            keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])] if len(keys) else keys
            (tmp / f"block{b}.bin").unlink()
            counts += np.bincount(keys // n, minlength=n)
            (keys % n).astype(np.int32).tofile(idx_file)
            del keys
    nnz = int(counts.sum())
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = np.memmap(tmp / "indices.bin", dtype=np.int32, mode="r", shape=(nnz,)) if nnz else \
        np.empty(0, dtype=np.int32)
    np.savez(tmp / "graph.npz", indices=indices, indptr=indptr, format=np.array(b"csr"),
             shape=np.array([n, n]), data=np.broadcast_to(np.uint8(1), (nnz,)))
    del indices


def _write_nodes(tmp: Path, y: np.ndarray, features: int, classes: int, signal: float, train_frac: float,
                 rng: np.random.Generator) -> None:
    """Write the node files of :func:`powerlaw_files` to ``tmp``: ``X.npy`` (class mean plus unit noise, both
    scaled by ``1/sqrt(F)``, in row chunks), ``y.npy``, and the random ``train.npy`` / ``test.npy`` split; draws
    from ``rng`` after the edges, in the generator's order (means, feature rows, split)."""
    n = len(y)
    means = rng.normal(size=(classes, features)) * signal / np.sqrt(features)
    X = np.lib.format.open_memmap(tmp / "X.npy", mode="w+", dtype=np.float64, shape=(n, features))
    for s in range(0, n, _ROW_CHUNK):
        e = min(n, s + _ROW_CHUNK)
        X[s:e] = means[y[s:e]] + rng.normal(size=(e - s, features)) / np.sqrt(features)
    X.flush()
    del X
    perm = rng.permutation(n)
    k = max(1, int(round(train_frac * n)))
    np.save(tmp / "y.npy", y)
    np.save(tmp / "train.npy", np.sort(perm[:k]))
    np.save(tmp / "test.npy", np.sort(perm[k:]))


def load_graph_files(folder: str | os.PathLike[str], *, mmap: bool = False,
                     mmap_features: bool | None = None) -> GraphData:
    """The :class:`GraphData` of a folder written by :func:`powerlaw_files` (or laid out the same way by a
    user).

    ``mmap=True``: ``adj`` is a :class:`~iclr25.scalegun.mapped.MappedGraph` over ``folder/csr-mmap/``
    (written from ``graph.npz`` by :func:`~iclr25.scalegun.mapped.write_mapped_graph` on first use, or when
    ``graph.npz`` is newer), and ``X.npy`` is mapped read-only; nothing of the graph is read into memory.
    ``mmap_features`` maps ``X.npy`` alone (default: as ``mmap``).
    """
    d = Path(folder)
    missing = [name for name in GRAPH_FILES if not (d / name).is_file()]
    if missing:
        raise FileNotFoundError(f"{d}: missing {', '.join(missing)} (expected {', '.join(GRAPH_FILES)})")
    if mmap:
        mapped = d / MAPPED_DIR
        stamp = mapped / "indices.npy"
        if not stamp.is_file() or stamp.stat().st_mtime < (d / "graph.npz").stat().st_mtime:
            write_mapped_graph(d / "graph.npz", mapped)
        adj: sp.csr_array | MappedGraph = MappedGraph(mapped)
    else:
        try:
            adj = sp.csr_array(sp.load_npz(d / "graph.npz"))
        except (OSError, ValueError, KeyError) as exc:
            raise DataFileError(d / "graph.npz", f"not a CSR .npz ({exc})") from exc
    map_x = mmap if mmap_features is None else mmap_features
    X = np.load(d / "X.npy", mmap_mode="r" if map_x else None)
    y, tr, te = (np.load(d / name) for name in ("y.npy", "train.npy", "test.npy"))
    if adj.shape != (X.shape[0], X.shape[0]) or y.shape != (X.shape[0],):
        raise DataFileError(d, f"inconsistent files: graph {adj.shape}, X {X.shape}, y {y.shape}")
    return GraphData(adj, X, y, tr, te)
