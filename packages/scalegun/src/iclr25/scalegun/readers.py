"""Readers for the paper's data formats, streamed into the package's memory-mapped CSR folder.

* **OGB node property prediction** (``ogbn-arxiv``, ``ogbn-products``, ... as unzipped, no ``ogb`` package, no
  download, no pickle): ``DIR/raw/edge.csv.gz`` (one ``u,v`` per line), ``num-node-list.csv.gz``,
  ``node-feat.csv.gz`` (one row of floats per node), ``node-label.csv.gz`` (one class id per node) and
  ``DIR/split/<scheme>/{train,valid,test}.csv.gz`` (node ids; ``.csv`` also read).
* **Amazon-style CSR ``.npz``** (Shchur et al.'s ``amazon_electronics_photo.npz``): ``adj_data``,
  ``adj_indices``, ``adj_indptr``, ``adj_shape``; features ``attr_data``/``attr_indices``/``attr_indptr``/
  ``attr_shape`` (or a dense ``attr_matrix``); ``labels``. Read with ``allow_pickle=False``, member by member:
  the pickled ``class_names``/``idx_to_*`` entries are never loaded.
* **Planetoid** raw files (``ind.cora.x``, ``ind.cora.graph``, ...) are Python pickles: refused in one line saying
  how to convert them (never unpickled here).

:func:`convert` writes a folder that ``iclr25 scalegun unlearn --data DIR`` reads: the unlearner's graph
(``indptr.npy``, ``indices.npy``: symmetric, 0/1, one self loop per node, sorted; :class:`MappedGraph`),
``features.npy`` (float64, memory-mapped by ``unlearn``), ``labels.npy``, ``train.npy`` / ``valid.npy`` /
``test.npy`` when the source has a split, and ``source.json``.

Streaming: edges are parsed in blocks of lines and written, both directions, into row-range bucket files on
disk; each bucket (at most about ``BUCKET_ENTRIES`` entries) is then sorted, de-duplicated and appended to
``indices.npy``. Features are parsed and appended in row blocks. Working memory is ``indptr`` (``8 (n + 1)``
bytes), the labels and a few blocks, whatever the number of edges; a conversion whose memory or disk needs
exceed what is free is refused with the estimate before anything is written.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import os
import re
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.guards import check_size, format_bytes
from iclr25.utils.io import DataFileError

from .mapped import MAPPED_FILES, MappedGraph, npz_arrays

__all__ = ["convert", "read_ogb", "read_amazon_npz", "check_not_pickle", "DATA_FILES", "BUCKET_ENTRIES",
           "LINE_BLOCK_BYTES"]

#: Files of a converted folder (besides the optional splits and source.json).
DATA_FILES = (*MAPPED_FILES, "features.npy", "labels.npy")
SPLITS = ("train", "valid", "test")
#: Stored entries (both directions) per on-disk bucket: its sort holds about 40 bytes per entry.
BUCKET_ENTRIES = 1 << 21
#: Uncompressed text parsed per block.
LINE_BLOCK_BYTES = 1 << 22
_PLANETOID = re.compile(r"^ind\.[\w-]+\.(x|y|tx|ty|allx|ally|graph|test\.index)$")


def check_not_pickle(path: str | os.PathLike[str]) -> None:
    """Refuse Planetoid's raw files (pickles) in one line saying how to convert them."""
    p = Path(path)
    names = [q.name for q in p.iterdir()] if p.is_dir() else [p.name]
    if p.is_dir() and (p / "raw").is_dir():
        names += [q.name for q in (p / "raw").iterdir()]
    hit = next((n for n in sorted(names) if _PLANETOID.match(n)), None)
    if hit is not None:
        raise DataFileError(p, f"{hit} is a Planetoid raw file, a Python pickle, which is never unpickled here; "
                            "convert it where you trust it: load it (e.g. torch_geometric.datasets.Planetoid) and "
                            "save adj_data/adj_indices/adj_indptr/adj_shape, attr_matrix and labels with "
                            "numpy.savez(out.npz, ...), then: iclr25 scalegun convert out.npz --out DIR")


# ------------------------------------------------------------------------------------------------- text
def _open_text(p: Path) -> Any:
    return gzip.open(p, "rb") if p.name.endswith(".gz") else open(p, "rb")


def _csv_blocks(p: Path, *, dtype: Any, what: str, block_bytes: int | None = None) -> Iterator[np.ndarray]:
    """2-D arrays of consecutive lines of a (gzipped) headerless CSV, parsed ``block_bytes`` of text at a time."""
    block_bytes = block_bytes or LINE_BLOCK_BYTES
    line0, width = 0, None
    try:
        with _open_text(p) as fh:
            rest = b""
            while True:
                chunk = fh.read(block_bytes)
                buf = rest + chunk
                if not chunk:
                    rest, text = b"", buf
                else:
                    cut = buf.rfind(b"\n") + 1
                    rest, text = buf[cut:], buf[:cut]
                if text.strip():
                    try:
                        arr = np.loadtxt(io.StringIO(text.decode("ascii")), delimiter=",", dtype=dtype, ndmin=2)
                    except (ValueError, UnicodeDecodeError) as exc:
                        msg = str(exc).splitlines()[0][:120]
                        raise DataFileError(p, f"not a CSV of {what} after line {line0} ({msg})") from None
                    if width is None:
                        width = arr.shape[1]
                    elif arr.shape[1] != width:
                        raise DataFileError(p, f"rows after line {line0} have {arr.shape[1]} columns, the first "
                                            f"ones {width}")
                    line0 += len(arr)
                    yield arr
                if not chunk:
                    return
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise DataFileError(p, f"cannot read ({exc})") from None


def _find(folder: Path, stem: str, *, required: bool = True) -> Path | None:
    for name in (stem + ".csv.gz", stem + ".csv"):
        if (folder / name).is_file():
            return folder / name
    if required:
        raise DataFileError(folder, f"no {stem}.csv.gz (an OGB raw folder holds edge.csv.gz, num-node-list.csv.gz, "
                            "node-feat.csv.gz, node-label.csv.gz)")
    return None


def _small_csv(p: Path, what: str) -> np.ndarray:
    return np.concatenate(list(_csv_blocks(p, dtype=np.float64, what=what)) or [np.empty((0, 1))])


# ---------------------------------------------------------------------------------------------- buckets
class _Buckets:
    """Directed entries (row, col) spread over on-disk files by row range; read back bucket by bucket."""

    def __init__(self, tmp: Path, n: int, n_entries_estimate: int):
        self.n = n
        self.k = max(1, math.ceil(n_entries_estimate / BUCKET_ENTRIES))
        self.bounds = np.linspace(0, n, self.k + 1).astype(np.int64)
        self.files = [open(tmp / f"bucket{i}.bin", "wb") for i in range(self.k)]  # noqa: SIM115
        self.paths = [tmp / f"bucket{i}.bin" for i in range(self.k)]

    def __enter__(self) -> _Buckets:
        return self

    def __exit__(self, *exc: object) -> None:
        for f in self.files:  # also when a malformed file stops the reading
            f.close()

    def add(self, u: np.ndarray, v: np.ndarray) -> None:
        keep = u != v  # self loops dropped (one per node is added)
        u, v = u[keep], v[keep]
        rows = np.concatenate([u, v])
        cols = np.concatenate([v, u])
        b = np.searchsorted(self.bounds, rows, side="right") - 1
        order = np.argsort(b, kind="stable")
        b, keys = b[order], rows[order] * self.n + cols[order]
        starts = np.searchsorted(b, np.arange(self.k + 1))
        for i in range(self.k):
            if starts[i + 1] > starts[i]:
                keys[starts[i]:starts[i + 1]].tofile(self.files[i])

    def write_csr(self, folder: Path) -> int:
        """Sorted, de-duplicated rows plus one self loop each -> ``indptr.npy`` and ``indices.npy``."""
        for f in self.files:
            f.close()
        n = self.n
        counts = np.zeros(n, dtype=np.int64)
        with open(folder / "cols.bin", "wb") as out:
            for i, path in enumerate(self.paths):
                r0, r1 = int(self.bounds[i]), int(self.bounds[i + 1])
                keys = np.fromfile(path, dtype=np.int64)
                path.unlink()
                keys = np.concatenate([keys, np.arange(r0, r1, dtype=np.int64) * (n + 1)])  # one loop per row
                keys.sort()  # sorted rows, sorted columns; duplicates dropped (np.unique's hash path is slow)
                if len(keys) > 1:
                    keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])]
                counts[r0:r1] = np.bincount(keys // n - r0, minlength=r1 - r0)
                (keys % n).tofile(out)
                del keys
        nnz = int(counts.sum())
        itype = np.int32 if max(nnz, n) < 2**31 - 1 else np.int64
        indptr = np.zeros(n + 1, dtype=itype)
        np.cumsum(counts, out=indptr[1:])
        np.save(folder / "indptr.npy", indptr)
        _npy_from_raw(folder / "cols.bin", folder / "indices.npy", np.int64, itype, (nnz,))
        return nnz


def _npy_from_raw(raw: Path, out: Path, src: Any, dst: Any, shape: tuple[int, ...]) -> None:
    """A ``.npy`` with the contents of a raw binary file, converted in blocks (sequential reads and writes)."""
    with open(out, "wb") as fo, open(raw, "rb") as fi:
        np.lib.format.write_array_header_1_0(fo, {"descr": np.lib.format.dtype_to_descr(np.dtype(dst)),
                                                  "fortran_order": False, "shape": shape})
        step = 2 * BUCKET_ENTRIES
        while True:
            a = np.fromfile(fi, dtype=src, count=step)
            if not len(a):
                break
            a.astype(dst).tofile(fo)
    raw.unlink()


class _NpyWriter:
    """Rows appended to a float64 ``.npy`` of known shape, sequentially."""

    def __init__(self, path: Path, shape: tuple[int, int]):
        self.path, self.shape, self.rows = path, shape, 0
        self.fh = open(path, "wb")  # noqa: SIM115
        np.lib.format.write_array_header_1_0(self.fh, {"descr": "<f8", "fortran_order": False, "shape": shape})

    def add(self, block: np.ndarray, name: str) -> None:
        if block.shape[1] != self.shape[1] or self.rows + len(block) > self.shape[0]:
            raise DataFileError(name, f"features: {self.rows + len(block)} rows of {block.shape[1]} columns, expected "
                                f"{self.shape[0]} of {self.shape[1]}")
        if not np.all(np.isfinite(block)):
            r = self.rows + int(np.flatnonzero(~np.isfinite(block).all(axis=1))[0])
            raise DataFileError(name, f"features must be finite: row {r} has NaN or inf")
        np.ascontiguousarray(block, dtype="<f8").tofile(self.fh)
        self.rows += len(block)

    def close(self, name: str) -> None:
        self.fh.close()
        if self.rows != self.shape[0]:
            raise DataFileError(name, f"features have {self.rows} rows, the graph {self.shape[0]} nodes")


# ------------------------------------------------------------------------------------------------ sizes
def _check_sizes(what: str, *, n: int, m: int, f: int, out: Path, force: bool) -> None:
    """Memory: indptr, counts, labels, bucket sort and parse blocks; disk: the buckets and the output."""
    mem = 8 * (n + 1) * 3 + 16 * n + 48 * BUCKET_ENTRIES + 20 * LINE_BLOCK_BYTES
    check_size(what, bytes_needed=mem, force=force)
    disk = 8 * 2 * m * 2 + 8 * (2 * m + n) + 8 * n * f + 24 * n
    parent = out.parent if out.parent.exists() else Path(".")
    free = shutil.disk_usage(parent).free
    if disk > free and not force:
        raise ValueError(f"{what} needs about {format_bytes(disk)} of disk for {out}, more than the "
                         f"{format_bytes(free)} free there; choose another --out (or pass --force)")


def _gz_lines_estimate(p: Path, per_line: float) -> int:
    size = p.stat().st_size
    return int(size * (4.0 if p.name.endswith(".gz") else 1.0) / per_line) + 1


# ------------------------------------------------------------------------------------------------- OGB
def read_ogb(folder: str | os.PathLike[str], out: str | os.PathLike[str], *, split: str | None = None,
             force: bool = False) -> dict[str, Any]:
    """Convert an OGB node-property folder (``raw/``, ``split/``) to the folder ``out``; returns the summary."""
    d = Path(folder)
    raw = d / "raw" if (d / "raw").is_dir() else d
    edge_p = _find(raw, "edge")
    nn_p = _find(raw, "num-node-list")
    nnl = _small_csv(nn_p, "node counts").ravel()
    if len(nnl) != 1 or nnl[0] < 2 or nnl[0] != int(nnl[0]):
        raise DataFileError(nn_p, f"expected one node count >= 2 (one graph), got {nnl[:5].tolist()}")
    n = int(nnl[0])
    ne_p = _find(raw, "num-edge-list", required=False)
    m = int(_small_csv(ne_p, "edge counts").ravel()[0]) if ne_p else _gz_lines_estimate(edge_p, 12)
    feat_p, label_p = _find(raw, "node-feat", required=False), _find(raw, "node-label", required=False)
    if feat_p is None or label_p is None:
        raise DataFileError(raw, "needs node-feat.csv.gz and node-label.csv.gz (node property prediction)")
    head = _csv_blocks(feat_p, dtype=np.float64, what="features", block_bytes=1 << 16)
    f = next(head).shape[1]
    head.close()
    out = Path(out)
    _check_sizes(f"converting {d} ({n} nodes, {m} edges, {f} features)", n=n, m=m, f=f, out=out, force=force)
    splits, split = _ogb_split(d, split)
    with _staging(out) as tmp:
        seen = 0
        with _Buckets(tmp, n, 2 * m) as buckets:
            for e in _csv_blocks(edge_p, dtype=np.int64, what="node ids"):
                if e.shape[1] != 2:
                    raise DataFileError(edge_p, f"rows must be 'u,v' (2 columns), got {e.shape[1]}")
                if e.min() < 0 or e.max() >= n:
                    raise DataFileError(edge_p, f"node id out of range [0, {n}) near line {seen + 1}")
                buckets.add(e[:, 0], e[:, 1])
                seen += len(e)
            nnz = buckets.write_csr(tmp)
        w = _NpyWriter(tmp / "features.npy", (n, f))
        try:
            for block in _csv_blocks(feat_p, dtype=np.float64, what="features"):
                w.add(block, str(feat_p))
        finally:
            w.close(str(feat_p))
        y = _small_csv(label_p, "labels")
        np.save(tmp / "labels.npy", _labels(y, n, label_p))
        for name, ids in splits.items():
            if ids.min() < 0 or ids.max() >= n:
                raise DataFileError(d / "split", f"{name} ids out of range [0, {n})")
            np.save(tmp / f"{name}.npy", ids)
        summary = {"format": "ogb", "source": str(d), "n_nodes": n, "n_edges_in_file": seen,
                   "n_undirected_edges": (nnz - n) // 2, "n_features": f, "split": sorted(splits),
                   "split_scheme": split if splits else None}
        (tmp / "source.json").write_text(json.dumps(summary, indent=1))
    return summary


def _ogb_split(d: Path, scheme: str | None) -> tuple[dict[str, np.ndarray], str | None]:
    sd = d / "split"
    if not sd.is_dir():
        if scheme is not None:
            raise DataFileError(d, f"no split/ folder for --split {scheme}")
        return {}, None
    schemes = sorted(q.name for q in sd.iterdir() if q.is_dir())
    if scheme is None:
        if len(schemes) != 1:
            raise DataFileError(sd, f"holds the split schemes {schemes}; choose one with --split")
        scheme = schemes[0]
    if scheme not in schemes:
        raise DataFileError(sd, f"no split scheme {scheme!r}; it holds {schemes}")
    out = {}
    for name in SPLITS:
        p = _find(sd / scheme, name, required=False)
        if p is None:
            raise DataFileError(sd / scheme, f"no {name}.csv.gz")
        ids = _small_csv(p, "node ids").ravel()
        if len(ids) == 0 or np.any(ids != np.round(ids)):
            raise DataFileError(p, "expected one integer node id per line")
        out[name] = ids.astype(np.int64)
    return out, scheme


def _labels(y: np.ndarray, n: int, p: Any) -> np.ndarray:
    if y.ndim == 2 and y.shape[1] != 1:
        raise DataFileError(p, f"{y.shape[1]} label columns (multi-label, e.g. ogbn-proteins); ScaleGUN trains one "
                            "class per node")
    y = np.asarray(y).ravel()
    if len(y) != n:
        raise DataFileError(p, f"{len(y)} labels for {n} nodes")
    if not np.all(np.isfinite(y)):
        raise DataFileError(p, f"{int((~np.isfinite(y)).sum())} nodes have no label (NaN); ScaleGUN needs one per node")
    if np.any(y != np.round(y)) or y.min() < 0:
        raise DataFileError(p, "labels must be integer class ids >= 0")
    return y.astype(np.int64)


# ---------------------------------------------------------------------------------------------- Amazon
_AMAZON = ("adj_data", "adj_indices", "adj_indptr", "adj_shape", "labels")


def _npz_members(p: Path, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Only the named members of an ``.npz`` (mapped when stored), never the others (pickled entries)."""
    try:
        with zipfile.ZipFile(p) as zf:
            have = {i.filename[:-4] for i in zf.infolist() if i.filename.endswith(".npy")}
    except (OSError, zipfile.BadZipFile) as exc:
        raise DataFileError(p, f"not an .npz ({exc})") from None
    missing = [k for k in _AMAZON if k not in have]
    if missing:
        raise DataFileError(p, f"not an Amazon-style CSR .npz: missing {missing}; it holds {sorted(have)}")
    try:
        return npz_arrays(p, names=[k for k in names if k in have])
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise DataFileError(p, f"cannot read ({exc})") from None


def read_amazon_npz(path: str | os.PathLike[str], out: str | os.PathLike[str], *,
                    force: bool = False) -> dict[str, Any]:
    """Convert an Amazon-style CSR ``.npz`` (Shchur et al.) to the folder ``out``; returns the summary."""
    p = Path(path)
    a = _npz_members(p, (*_AMAZON, "attr_data", "attr_indices", "attr_indptr", "attr_shape", "attr_matrix"))
    shape = tuple(int(s) for s in np.asarray(a["adj_shape"]).ravel())
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] < 2:
        raise DataFileError(p, f"adj_shape must be square (n, n) with n >= 2, got {shape}")
    n = shape[0]
    ptr = np.asarray(a["adj_indptr"], dtype=np.int64)
    idx, val = a["adj_indices"], a["adj_data"]
    if len(ptr) != n + 1 or ptr[0] != 0 or ptr[-1] > len(idx) or len(val) < ptr[-1] or np.any(np.diff(ptr) < 0):
        raise DataFileError(p, f"inconsistent adj_* CSR arrays: n {n}, adj_indptr {len(ptr)}, adj_indices {len(idx)}, "
                            f"adj_data {len(val)}")
    m = int(ptr[-1])
    if "attr_matrix" in a:
        X = a["attr_matrix"]
        if X.ndim != 2 or X.shape[0] != n:
            raise DataFileError(p, f"attr_matrix must have shape ({n}, F), got {X.shape}")
        f = X.shape[1]
    elif {"attr_data", "attr_indices", "attr_indptr", "attr_shape"} <= set(a):
        fs = tuple(int(s) for s in np.asarray(a["attr_shape"]).ravel())
        if len(fs) != 2 or fs[0] != n:
            raise DataFileError(p, f"attr_shape must be ({n}, F), got {fs}")
        f, X = fs[1], None
    else:
        raise DataFileError(p, "no features: needs attr_matrix or attr_data/attr_indices/attr_indptr/attr_shape")
    out = Path(out)
    _check_sizes(f"converting {p} ({n} nodes, {m} stored entries, {f} features)", n=n, m=m, f=f, out=out,
                 force=force)
    y = _labels(np.asarray(a["labels"]), n, p)
    with _staging(out) as tmp:
        with _Buckets(tmp, n, 2 * m) as buckets:
            step = 1 << 22
            r0 = 0
            while r0 < n:
                r1 = int(np.searchsorted(ptr, ptr[r0] + step, side="right")) - 1
                r1 = min(n, max(r1, r0 + 1))
                lo, hi = int(ptr[r0]), int(ptr[r1])
                cols = np.asarray(idx[lo:hi], dtype=np.int64)
                rows = np.repeat(np.arange(r0, r1, dtype=np.int64), np.diff(ptr[r0:r1 + 1]))
                if len(cols) and (cols.min() < 0 or cols.max() >= n):
                    raise DataFileError(p, f"adj_indices out of range [0, {n}) in rows {r0}..{r1 - 1}")
                nz = np.asarray(val[lo:hi]) != 0
                buckets.add(rows[nz], cols[nz])
                r0 = r1
            nnz = buckets.write_csr(tmp)
        w = _NpyWriter(tmp / "features.npy", (n, f))
        try:
            rows_per = max(1, (1 << 23) // (8 * f))
            for r0 in range(0, n, rows_per):
                r1 = min(n, r0 + rows_per)
                if X is not None:
                    block = np.asarray(X[r0:r1], dtype=np.float64)
                else:
                    aptr = np.asarray(a["attr_indptr"][r0:r1 + 1], dtype=np.int64)
                    block = np.zeros((r1 - r0, f))
                    cols = np.asarray(a["attr_indices"][aptr[0]:aptr[-1]], dtype=np.int64)
                    if len(cols) and (cols.min() < 0 or cols.max() >= f):
                        raise DataFileError(p, f"attr_indices out of range [0, {f})")
                    rr = np.repeat(np.arange(r1 - r0), np.diff(aptr))
                    np.add.at(block, (rr, cols), np.asarray(a["attr_data"][aptr[0]:aptr[-1]], dtype=np.float64))
                w.add(block, str(p))
        finally:
            w.close(str(p))
        np.save(tmp / "labels.npy", y)
        summary = {"format": "amazon-npz", "source": str(p), "n_nodes": n, "n_stored_entries": m,
                   "n_undirected_edges": (nnz - n) // 2, "n_features": f, "split": []}
        (tmp / "source.json").write_text(json.dumps(summary, indent=1))
    return summary


# ----------------------------------------------------------------------------------------------- common
class _staging:
    """A temporary folder beside ``out``, moved into place only when complete (an existing ``out`` is replaced
    only when it is a converted folder)."""

    def __init__(self, out: Path):
        self.out = out

    def __enter__(self) -> Path:
        out = self.out
        if out.is_symlink() or (out.exists() and not out.is_dir()):
            raise ValueError(f"--out {out} exists and is not a folder; name a new folder")
        if out.is_dir():
            foreign = sorted(q.name for q in out.iterdir()
                             if q.name not in (*DATA_FILES, "source.json", *(s + ".npy" for s in SPLITS)))
            if foreign:
                raise ValueError(f"--out {out} holds {foreign[0]}, which convert did not write; name a new folder")
        out.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(prefix=".convert-", dir=out.parent))
        return self.tmp

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        try:
            if exc_type is None:
                MappedGraph(self.tmp)  # the CSR arrays are consistent
                if self.out.exists():
                    shutil.rmtree(self.out)
                os.replace(self.tmp, self.out)
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)


def convert(source: str | os.PathLike[str], out: str | os.PathLike[str], *, split: str | None = None,
            force: bool = False) -> dict[str, Any]:
    """An OGB folder or an Amazon-style ``.npz`` -> the converted folder ``out`` (see the module docstring)."""
    p = Path(source)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file or folder")
    check_not_pickle(p)
    if p.is_dir():
        return read_ogb(p, out, split=split, force=force)
    if p.suffix.lower() == ".npz":
        if split is not None:
            raise ValueError("--split applies to OGB folders; an Amazon .npz has no split")
        return read_amazon_npz(p, out, force=force)
    raise DataFileError(p, "unknown format: expected an OGB folder (raw/edge.csv.gz, ...) or an Amazon-style CSR .npz")
