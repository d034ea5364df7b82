"""Memory-mapped CSR graphs: the unlearner's form of a graph (symmetric, 0/1, every self loop, sorted
indices) as two ``.npy`` files, ``indptr.npy`` and ``indices.npy``, opened with ``mmap_mode="r"``, so a graph
whose index arrays do not fit in RAM (or should not be copied into it) is used end to end without a copy.

* :func:`write_mapped_graph` converts a CSR ``.npz`` (or a scipy matrix) in row blocks of ``2^23`` entries:
  duplicate entries are summed, zero sums and self loops are dropped, one self loop per row is added; the
  result is checked for symmetry block by block (a binary search per entry) before it appears. An
  uncompressed ``.npz`` (``numpy.savez``, as :func:`powerlaw_files` writes, or
  ``scipy.sparse.save_npz(..., compressed=False)``) is read through memory maps of its members; a
  compressed one is read into memory once.
* :class:`MappedGraph` opens such a folder; :meth:`MappedGraph.csr` is a ``scipy.sparse.csr_array`` whose
  ``indices`` and ``indptr`` are the read-only maps and whose ``data`` (the edge weights, which a removal
  sets to 0) is the one array per stored entry that lives in memory.

Peak memory of the conversion: ``indptr`` (``8 (n + 1)`` bytes) plus the buffers of one block (~200 MB),
independent of the number of edges.

References: ScaleGUN Sec. 5 (billion-edge graphs held as CSR); numpy ``.npy`` / ``.npz`` formats.
"""

from __future__ import annotations

import os
import shutil
import struct
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from iclr25.utils.io import DataFileError

__all__ = ["MappedGraph", "write_mapped_graph", "npz_arrays", "MAPPED_FILES"]

MAPPED_FILES = ("indptr.npy", "indices.npy")
_BLOCK = 1 << 23  # stored entries per row block


def npz_arrays(path: str | os.PathLike[str], names: Any = None) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` (only those in ``names``, when given): read-only memory maps for members stored
    uncompressed, in-memory arrays for compressed ones (``numpy.load`` cannot map an ``.npz``)."""
    p = Path(path)
    out: dict[str, np.ndarray] = {}
    with zipfile.ZipFile(p) as zf, open(p, "rb") as fh:
        for info in zf.infolist():
            name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            if names is not None and name not in names:
                continue
            if info.compress_type != zipfile.ZIP_STORED:
                with zf.open(info) as member:
                    out[name] = np.lib.format.read_array(member, allow_pickle=False)
                continue
            fh.seek(info.header_offset)
            local = fh.read(30)
            if local[:4] != b"PK\x03\x04":
                raise DataFileError(p, f"member {info.filename}: bad zip local header")
            name_len, extra_len = struct.unpack("<HH", local[26:30])
            fh.seek(info.header_offset + 30 + name_len + extra_len)
            version = np.lib.format.read_magic(fh)
            read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                           else np.lib.format.read_array_header_2_0)
            shape, fortran, dtype = read_header(fh)
            if dtype.hasobject:
                raise DataFileError(p, f"member {info.filename}: object arrays are not supported")
            if int(np.prod(shape)) == 0:
                out[name] = np.empty(shape, dtype=dtype)
            else:
                out[name] = np.memmap(p, dtype=dtype, mode="r", offset=fh.tell(), shape=shape,
                                      order="F" if fortran else "C")
    return out


def _source_csr(source: Any) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, str]:
    """``(n, indptr (in memory, int64), indices, data, name)`` of a CSR ``.npz`` path or a scipy matrix."""
    if isinstance(source, (str, os.PathLike)):
        p = Path(source)
        try:
            arrs = npz_arrays(p)
        except (OSError, zipfile.BadZipFile, ValueError) as exc:
            raise DataFileError(p, f"not an .npz ({exc})") from exc
        fmt = arrs.get("format")
        if fmt is None or {"indices", "indptr", "data", "shape"} - set(arrs):
            raise DataFileError(p, "not a scipy sparse .npz (needs format, shape, data, indices, indptr)")
        fmt = bytes(np.asarray(fmt).item()) if np.asarray(fmt).dtype.kind == "S" else str(np.asarray(fmt).item())
        fmt = fmt.decode() if isinstance(fmt, bytes) else fmt
        shape = tuple(int(s) for s in np.asarray(arrs["shape"]))
        if fmt != "csr" or len(shape) != 2 or shape[0] != shape[1]:
            raise DataFileError(p, f"expected a square CSR matrix, got format {fmt!r} with shape {shape}")
        return shape[0], np.asarray(arrs["indptr"], dtype=np.int64), arrs["indices"], arrs["data"], str(p)
    A = sp.csr_array(source)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"adj must be square, got shape {A.shape}")
    return A.shape[0], A.indptr.astype(np.int64), A.indices, A.data, "adj"


def _blocks(indptr: np.ndarray) -> list[tuple[int, int]]:
    n, bounds, r0 = len(indptr) - 1, [], 0
    while r0 < n:
        r1 = int(np.searchsorted(indptr, indptr[r0] + _BLOCK, side="right")) - 1
        r1 = min(n, max(r1, r0 + 1))
        bounds.append((r0, r1))
        r0 = r1
    return bounds


def write_mapped_graph(source: Any, out: str | os.PathLike[str]) -> Path:
    """Write the unlearner's form of a graph (see the module docstring) to the folder ``out`` as
    ``indptr.npy`` and ``indices.npy`` (int32 when the entries fit, else int64, both the same type so scipy
    uses them without a copy). ``source``: a square CSR ``.npz`` path or a scipy sparse matrix; nonzero
    entries are edges (weights are ignored, as in :func:`validation.as_adjacency`). Raises ``ValueError``
    (a ``DataFileError`` for a file) naming an entry without its mirror when the graph is not symmetric.
    The files appear only when complete and checked. An existing ``out`` is replaced only when it holds
    nothing but mapped files (a file, a link or a folder with other files is refused). Returns ``out``.

    Examples
    --------
    >>> import tempfile, scipy.sparse as sp
    >>> adj = sp.csr_array(([1.0, 1.0], ([0, 1], [1, 0])), shape=(3, 3))
    >>> g = MappedGraph(write_mapped_graph(adj, tempfile.mkdtemp()))
    >>> g.csr().toarray().astype(int).tolist(), g.n_edges
    ([[1, 1, 0], [1, 1, 0], [0, 0, 1]], 1)
    """
    n, indptr, indices, data, name = _source_csr(source)
    if len(indptr) != n + 1 or indptr[-1] > len(indices) or len(data) < indptr[-1]:
        raise DataFileError(name, f"inconsistent CSR arrays: shape ({n}, {n}), indptr {len(indptr)}, "
                                  f"indices {len(indices)}, data {len(data)}")
    out = Path(out)
    _check_replaceable(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".mapped-", dir=out.parent))
    try:
        counts = np.zeros(n, dtype=np.int64)
        with open(tmp / "cols.bin", "wb") as cols_file:
            for r0, r1 in _blocks(indptr):
                lo, hi = int(indptr[r0]), int(indptr[r1])
                cols = np.asarray(indices[lo:hi], dtype=np.int64)
                rows = np.repeat(np.arange(r0, r1, dtype=np.int64), np.diff(indptr[r0:r1 + 1]))
                if len(cols) and (cols.min() < 0 or cols.max() >= n):
                    raise DataFileError(name, f"column index out of range [0, {n}) in rows {r0}..{r1 - 1}")
                vals = np.asarray(data[lo:hi])
                if vals.dtype.kind in "fc" and not np.all(np.isfinite(vals)):
                    raise DataFileError(name, "graph weights must be finite (no NaN or inf)")
                off = cols != rows  # self loops are dropped, one per row is added below
                uk, inv = np.unique(rows[off] * n + cols[off], return_inverse=True)
                sums = np.bincount(inv, weights=vals[off].astype(np.float64), minlength=len(uk))
                keys = np.union1d(uk[sums != 0], np.arange(r0, r1, dtype=np.int64) * (n + 1))  # duplicates summed
                counts[r0:r1] = np.bincount(keys // n - r0, minlength=r1 - r0)
                (keys % n).astype(np.int64).tofile(cols_file)
        nnz = int(counts.sum())
        itype = np.int32 if max(nnz, n) < 2**31 - 1 else np.int64
        new_ptr = np.zeros(n + 1, dtype=itype)
        np.cumsum(counts, out=new_ptr[1:])
        np.save(tmp / "indptr.npy", new_ptr)
        new_idx = np.lib.format.open_memmap(tmp / "indices.npy", mode="w+", dtype=itype, shape=(nnz,))
        raw = np.memmap(tmp / "cols.bin", dtype=np.int64, mode="r", shape=(nnz,))
        for s in range(0, nnz, _BLOCK):
            new_idx[s:s + _BLOCK] = raw[s:s + _BLOCK]
        new_idx.flush()
        del new_idx, raw
        (tmp / "cols.bin").unlink()
        MappedGraph(tmp).check_symmetric(name)
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _check_replaceable(out: Path) -> None:
    """``out`` is new, or a folder of mapped files only (replaced whole): nothing of the user's is ever deleted."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise ValueError(f"{out} exists and is not a folder of mapped graph files; it is never replaced: name a new "
                         "folder")
    if out.is_dir():
        foreign = sorted(p.name for p in out.iterdir() if p.name not in (*MAPPED_FILES, "source.json"))
        if foreign:
            raise ValueError(f"{out} holds {foreign[0]}, which write_mapped_graph did not write; the folder is never "
                             "replaced: name a new folder")


class MappedGraph:
    """A graph in the unlearner's form (symmetric, 0/1, every self loop, sorted indices) whose CSR index
    arrays are read-only memory maps of ``folder/indptr.npy`` and ``folder/indices.npy`` (written by
    :func:`write_mapped_graph`). Pass it as ``adj`` to :class:`CertifiedUnlearner`: the graph is not
    copied or re-validated; only the edge weights (``nnz`` values of the state's dtype) are held in memory.
    """

    def __init__(self, folder: str | os.PathLike[str]):
        d = Path(folder)
        missing = [f for f in MAPPED_FILES if not (d / f).is_file()]
        if missing:
            raise FileNotFoundError(f"{d}: missing {', '.join(missing)} (write it with write_mapped_graph)")
        self.folder = d
        self.indptr = np.load(d / "indptr.npy", mmap_mode="r")
        self.indices = np.load(d / "indices.npy", mmap_mode="r")
        ok = (self.indptr.ndim == self.indices.ndim == 1 and self.indptr.dtype == self.indices.dtype
              and self.indptr.dtype in (np.int32, np.int64) and len(self.indptr) >= 2
              and int(self.indptr[0]) == 0 and int(self.indptr[-1]) == len(self.indices))
        if not ok:
            raise DataFileError(d, "indptr.npy / indices.npy are not the CSR arrays of one graph "
                                   "(same int32/int64 type, indptr[0] = 0, indptr[-1] = len(indices))")
        self.n_nodes = len(self.indptr) - 1
        self.shape = (self.n_nodes, self.n_nodes)

    @property
    def nnz(self) -> int:
        """Stored entries: both directions of every edge plus the self loops."""
        return len(self.indices)

    @property
    def n_edges(self) -> int:
        """Undirected edges (self loops excluded)."""
        return (self.nnz - self.n_nodes) // 2

    def csr(self, dtype: Any = np.float64) -> sp.csr_array:
        """The graph as a ``csr_array`` over the maps (no copy of ``indices``/``indptr``), weights 1."""
        A = sp.csr_array((np.ones(self.nnz, dtype=dtype), self.indices, self.indptr), shape=self.shape,
                         copy=False)
        A.has_sorted_indices = True  # written sorted; skip the scan (and any attempt to sort a read-only map)
        return A

    def _entry_blocks(self):
        ptr = np.asarray(self.indptr, dtype=np.int64)
        for r0, r1 in _blocks(ptr):
            rows = np.repeat(np.arange(r0, r1, dtype=np.int64), np.diff(ptr[r0:r1 + 1]))
            yield rows, np.asarray(self.indices[ptr[r0]:ptr[r1]], dtype=np.int64)

    def edges(self) -> np.ndarray:
        """The undirected edges ``(m, 2)`` with ``u < v`` in row-major order, extracted block by block."""
        parts = [np.stack([r[c > r], c[c > r]], axis=1) for r, c in self._entry_blocks()]
        return np.concatenate(parts) if parts else np.empty((0, 2), dtype=np.int64)

    def check_symmetric(self, name: str = "adj") -> None:
        """Raise ``ValueError`` naming an entry ``(u, v)`` whose mirror ``(v, u)`` is missing."""
        from .propagation import _csr_positions

        A = self.csr(np.uint8)
        for rows, cols in self._entry_blocks():
            miss = _csr_positions(A, cols, rows) < 0
            if miss.any():
                i = int(np.flatnonzero(miss)[0])
                raise ValueError(f"{name}: adj must be symmetric (an undirected graph): entry ({rows[i]}, "
                                 f"{cols[i]}) has no mirror; symmetrise it, e.g. A.maximum(A.T)")
