"""Reading and writing the data the methods take: point clouds, graphs and molecule lists.

Every reader raises :class:`DataFileError` (a ``ValueError``) or ``FileNotFoundError`` naming the path and
the problem for missing, empty or corrupt files. Every writer writes to a temporary file and renames it, so a
failure never leaves partial output.

Formats
-------
Point clouds (``read_points``/``write_points``): ``.npy``; ``.npz`` (key ``points`` or a single array);
``.xyz``/``.txt`` (whitespace separated) and ``.csv`` (comma separated, optional header line); ``.ply``
(ASCII, binary little- or big-endian; vertex ``x y z`` properties, other vertex properties ignored).

Graphs (``read_graph``/``write_graph``): edge lists ``.txt``/``.edges``/``.edgelist``/``.csv`` with lines
``u v`` or ``u v w`` (``#`` comments); ``.npz`` in the layout of ``scipy.sparse.save_npz`` for CSR.

Any other file: ``atomic_write(path, mode)`` (a file object) and ``atomic_path(path)`` (a temporary name, for
writers that take a file name) move the finished file into place only when the block succeeds.

Molecules (``read_smiles``/``write_smiles``): ``.smi`` (first token of each line; optional name after it) and
``.csv`` with a SMILES column (found case-insensitively, or named by ``column``).
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import errno
import io as _io
import json
import os
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ._atomic import WriteError, atomic_path, atomic_write

__all__ = [
    "DataFileError", "Graph", "read_points", "write_points", "read_graph", "write_graph", "read_smiles",
    "write_smiles", "save_npz", "read_json", "read_npz", "read_array", "atomic_write", "atomic_path",
    "existing_file", "dataclass_from_mapping", "path_inside", "WriteError", "naming_write_errors", "WRITE_ERRNOS",
]

POINT_FORMATS = (".npy", ".npz", ".xyz", ".txt", ".csv", ".ply")
GRAPH_FORMATS = (".txt", ".edges", ".edgelist", ".csv", ".npz")
SMILES_FORMATS = (".smi", ".csv")


class DataFileError(ValueError):
    """A data file exists but cannot be used: empty, corrupt, or with the wrong content."""

    def __init__(self, path: str | os.PathLike[str], problem: str):
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


def existing_file(path: str | os.PathLike[str], formats: tuple[str, ...] | None, what: str) -> tuple[Path, str]:
    """Check that ``path`` names a non-empty regular file in one of ``formats`` (lower-case suffixes with the
    dot; ``None``: any); return it as a ``Path`` with its lower-case suffix. ``what`` names the kind of file in
    the message.

    Raises ``TypeError`` (not a path), :class:`DataFileError` (unsupported suffix, not a regular file, empty)
    or ``FileNotFoundError``, each naming the path.

    >>> try:
    ...     existing_file("mesh.obj", (".ply",), "shape")
    ... except DataFileError as e:
    ...     print(e)
    mesh.obj: unsupported shape format '.obj'; expected one of .ply
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    p = Path(path)
    suffix = p.suffix.lower()
    if formats is not None and suffix not in formats:
        raise DataFileError(p, f"unsupported {what} format {suffix or '(no suffix)'!r}; expected one of "
                               f"{', '.join(formats)}")
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file")
    if not p.is_file():
        raise DataFileError(p, "not a regular file")
    if p.stat().st_size == 0:
        raise DataFileError(p, "file is empty")
    return p, suffix


def path_inside(folder: str | os.PathLike[str], name: Any, *, source: str | os.PathLike[str] | None = None,
                what: str = "file") -> Path:
    """The path ``name`` read from a manifest, index or config inside ``folder``, refused unless it stays there.

    ``name`` must be a relative path; after resolving ``..`` and symbolic links it must lie inside ``folder``.
    ``source`` (the manifest's path) is named in the :class:`DataFileError`; it defaults to ``folder``.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> path_inside(d, "vectors.npy") == d / "vectors.npy"
    True
    >>> try:
    ...     path_inside(d, "../outside/secret.npy", source=d / "manifest.json")
    ... except DataFileError as exc:
    ...     print(exc.problem)
    names '../outside/secret.npy', which is outside its folder; a file it names must lie inside the folder
    """
    where = Path(source) if source is not None else Path(folder)
    if not isinstance(name, str) or not name.strip() or "\x00" in name:
        raise DataFileError(where, f"a {what} name must be a non-empty relative path, got {name!r}")
    rel = Path(name)
    base = Path(folder).resolve()
    if rel.is_absolute():
        raise DataFileError(where, f"names the absolute path {name!r}; a {what} it names must be relative to its folder")
    full = (base / rel).resolve()
    if full != base and base not in full.parents:
        raise DataFileError(where, f"names {name!r}, which is outside its folder; a {what} it names must lie "
                                   "inside the folder")
    return Path(folder) / rel


def _check_points(p: Path, X: Any) -> np.ndarray:
    if np.iscomplexobj(X):
        raise DataFileError(p, "point coordinates are complex numbers; give real coordinates (the real part is "
                               "never taken silently)")
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataFileError(p, f"point coordinates are not numbers ({exc})") from exc
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise DataFileError(p, f"expected an (n_points, dim) array with n_points >= 1, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise DataFileError(p, "point coordinates contain NaN or inf")
    return X


_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = b"PK\x03\x04"


def _np_load(p: Path, suffix: str) -> Any:
    """``np.load`` without pickles, after checking the file really is a ``.npy`` / ``.npz`` (a text file renamed
    ``.npy`` would otherwise be reported as "pickled data")."""
    with open(p, "rb") as f:
        head = f.read(8)
    if suffix == ".npy" and not head.startswith(_NPY_MAGIC):
        raise DataFileError(p, "not a NumPy .npy file (no NumPy header; write it with numpy.save)")
    if suffix == ".npz" and not head.startswith(_ZIP_MAGIC):
        raise DataFileError(p, "not a NumPy .npz file (not a zip archive; write it with numpy.savez)")
    try:
        return np.load(p, allow_pickle=False)
    except ValueError as exc:
        if "pickle" in str(exc):
            raise DataFileError(p, "holds Python objects (pickled data), which are not read for safety; "
                                   "save plain numeric arrays") from exc
        raise


def read_npz(path: str | os.PathLike[str], *, required: tuple[str, ...] = (),
             what: str = "array archive") -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` file (no pickles); ``required`` names arrays that must be present.

    Errors name the file: ``FileNotFoundError`` when missing, :class:`DataFileError` when empty, not an npz,
    or missing a required array.

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "a.npz"
    >>> _ = save_npz(f, u=np.zeros(3))
    >>> sorted(read_npz(f, required=("u",)))
    ['u']
    """
    p, suffix = existing_file(path, (".npz",), what)
    try:
        with _np_load(p, suffix) as z:
            arrays = {k: z[k] for k in z.keys()}
    except DataFileError:
        raise
    except ValueError as exc:
        if "pickle" in str(exc):  # an object array inside a valid archive: numpy's text names allow_pickle
            raise DataFileError(p, "holds Python objects (pickled data), which are not read for safety; "
                                   "save plain numeric arrays") from exc
        raise DataFileError(p, f"cannot read as .npz ({exc})") from exc
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise DataFileError(p, f"cannot read as .npz ({exc})") from exc
    missing = [k for k in required if k not in arrays]
    if missing:
        raise DataFileError(p, f"missing array(s) {missing}; the file has {sorted(arrays)}")
    return arrays


def read_array(path: str | os.PathLike[str], *, key: str | None = None, what: str = "array") -> np.ndarray:
    """One array from a ``.npy`` file, or from an ``.npz`` (the array ``key``, or its only array)."""
    p, suffix = existing_file(path, (".npy", ".npz"), what)
    if suffix == ".npz":
        arrays = read_npz(p, required=(key,) if key else (), what=what)
        if key is None and len(arrays) != 1:
            raise DataFileError(p, f"holds {len(arrays)} arrays {sorted(arrays)}; say which one")
        return arrays[key] if key else next(iter(arrays.values()))
    try:
        return _np_load(p, suffix)
    except DataFileError:
        raise
    except (OSError, ValueError, EOFError) as exc:
        raise DataFileError(p, f"cannot read as .npy ({exc})") from exc


#: what torch's checkpoint writer says when a write fails (disk full, file-size limit), by torch version and stage
_TORCH_WRITE_FAILURES = ("PytorchStreamWriter", "file write failed", "iostream error", "inline_container")

#: errnos of a write that ran out of room: a file-size limit, a full disk, a quota
WRITE_ERRNOS = (errno.EFBIG, errno.ENOSPC, errno.EDQUOT)


@contextlib.contextmanager
def naming_write_errors(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Run a block that writes ``path``: a write that fails without naming the file becomes a :class:`WriteError`
    whose message names ``path`` (``cannot write PATH: File too large``).

    Turned into it: an ``OSError`` that names no file and ran out of room (file too large, disk full, quota, or
    numpy's "N requested and M written"), one that names only the temporary file of an atomic write, and torch's
    ``RuntimeError`` from its checkpoint writer (``PytorchStreamWriter failed writing file``). Every other error,
    such as a missing input that names its own file, passes unchanged, so the block may also read.
    """
    target = Path(path)
    try:
        yield target
    except WriteError:
        raise
    except OSError as exc:
        named = exc.filename is not None
        temporary = named and Path(str(exc.filename)).name.startswith(".")
        if named and not temporary:
            raise  # it names its file already (iclr25.utils' atomic writes name the target; a missing input)
        if not temporary and exc.errno is not None and exc.errno not in WRITE_ERRNOS:
            raise  # not a write that ran out of room: its own message
        reason = exc.strerror or (os.strerror(exc.errno) if exc.errno else str(exc) or type(exc).__name__)
        if reason.startswith("cannot write") and ": " in reason:
            reason = reason.split(": ", 1)[1]
        raise WriteError(exc.errno or errno.EIO, f"cannot write {target}: {reason}") from None
    except RuntimeError as exc:
        if not any(sign in str(exc) for sign in _TORCH_WRITE_FAILURES):
            raise
        raise WriteError(errno.EIO, f"cannot write {target}: the write failed (the disk is full, or a file-size "
                         "limit was reached)") from None


# ---------------------------------------------------------------------------------------------- points
def read_points(path: str | os.PathLike[str]) -> np.ndarray:
    """Read a point cloud as a float64 array of shape ``(n_points, dim)``.

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "cloud.ply"
    >>> _ = write_points(f, np.eye(3))
    >>> read_points(f).shape
    (3, 3)
    """
    p, suffix = existing_file(path, POINT_FORMATS, "point cloud")
    try:
        if suffix == ".npy":
            X = _np_load(p, suffix)
        elif suffix == ".npz":
            with _np_load(p, suffix) as z:
                keys = list(z.keys())
                if "points" in keys:
                    X = z["points"]
                elif len(keys) == 1:
                    X = z[keys[0]]
                else:
                    raise DataFileError(p, f"expected a 'points' array or a single array, found keys {keys}")
        elif suffix == ".ply":
            X = _read_ply(p)
        else:
            X = _read_text_table(p, delimiter="," if suffix == ".csv" else None)
    except DataFileError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise DataFileError(p, f"cannot parse as {suffix} ({exc})") from exc
    return _check_points(p, X)


def _read_text_table(p: Path, delimiter: str | None) -> np.ndarray:
    rows: list[list[float]] = []
    header_allowed = True
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataFileError(p, f"not UTF-8 text ({exc})") from exc
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split(delimiter) if delimiter else line.split()
        try:
            rows.append([float(f) for f in fields])
        except ValueError as exc:
            if header_allowed:  # the first non-comment line may be a header
                header_allowed = False
                continue
            raise DataFileError(p, f"line {lineno}: non-numeric field ({exc})") from exc
        header_allowed = False
    if not rows:
        raise DataFileError(p, "no numeric rows")
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        raise DataFileError(p, f"rows have different numbers of columns: {sorted(widths)}")
    return np.array(rows)


_PLY_TYPES = {
    "char": "i1", "int8": "i1", "uchar": "u1", "uint8": "u1", "short": "i2", "int16": "i2", "ushort": "u2",
    "uint16": "u2", "int": "i4", "int32": "i4", "uint": "u4", "uint32": "u4", "float": "f4", "float32": "f4",
    "double": "f8", "float64": "f8",
}


def _read_ply(p: Path) -> np.ndarray:
    data = p.read_bytes()
    end = data.find(b"end_header")
    if not data.startswith(b"ply") or end < 0:
        raise DataFileError(p, "not a PLY file (missing 'ply' magic or 'end_header')")
    header = data[:end].decode("ascii", errors="replace").splitlines()
    body_start = data.index(b"\n", end) + 1
    fmt = None
    elements: list[tuple[str, int, list[tuple[str, str]]]] = []
    for lineno, line in enumerate(header[1:], 2):
        parts = line.split()
        if not parts or parts[0] in ("comment", "obj_info"):
            continue
        if (parts[0] in ("format", "element") and len(parts) != 3) or (parts[0] == "property" and len(parts) < 3) \
                or (parts[0] == "property" and parts[1] == "list" and len(parts) != 5) \
                or (parts[0] == "element" and not parts[2].isdigit()):
            raise DataFileError(p, f"malformed PLY header, line {lineno}: {line.strip()[:60]!r}")
        if parts[0] == "format":
            fmt = parts[1]
        elif parts[0] == "element":
            elements.append((parts[1], int(parts[2]), []))
        elif parts[0] == "property":
            if not elements:
                raise DataFileError(p, "property before any element in PLY header")
            if parts[1] == "list":
                elements[-1][2].append(("list", parts[-1]))
            else:
                if parts[1] not in _PLY_TYPES:
                    raise DataFileError(p, f"unknown PLY property type {parts[1]!r}")
                elements[-1][2].append((parts[2], _PLY_TYPES[parts[1]]))
    if fmt not in ("ascii", "binary_little_endian", "binary_big_endian"):
        raise DataFileError(p, f"unsupported PLY format {fmt!r}")
    if not elements or elements[0][0] != "vertex":
        raise DataFileError(p, "PLY has no leading 'vertex' element")
    _, n, props = elements[0]
    names = [name for name, _ in props]
    if any(name == "list" for name in names):
        raise DataFileError(p, "list properties on vertices are not supported")
    coords = [c for c in ("x", "y", "z") if c in names]
    if not coords:
        raise DataFileError(p, "PLY vertices have no x/y/z properties")
    if fmt == "ascii":
        lines = data[body_start:].decode("ascii").split("\n")
        rows = [ln.split() for ln in lines if ln.strip()][:n]
        if len(rows) < n:
            raise DataFileError(p, f"PLY declares {n} vertices but has {len(rows)} data lines")
        table = np.array([[float(v) for v in r[: len(names)]] for r in rows])
        return table[:, [names.index(c) for c in coords]]
    order = "<" if fmt == "binary_little_endian" else ">"
    dtype = np.dtype([(name, order + t) for name, t in props])
    if len(data) - body_start < n * dtype.itemsize:
        raise DataFileError(p, f"PLY is truncated: {n} vertices need {n * dtype.itemsize} bytes")
    arr = np.frombuffer(data, dtype=dtype, count=n, offset=body_start)
    return np.stack([arr[c].astype(np.float64) for c in coords], axis=1)


def write_points(path: str | os.PathLike[str], X: Any, *, binary: bool = True) -> Path:
    """Write a point cloud; the format follows the suffix (``.ply`` is binary little-endian unless
    ``binary=False``). Returns the path."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in POINT_FORMATS:
        raise DataFileError(p, f"unsupported point cloud format {suffix!r}; expected one of "
                               f"{', '.join(POINT_FORMATS)}")
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be an (n_points, dim) array with n_points >= 1, got shape {X.shape}")
    if suffix == ".npy":
        with atomic_write(p, "wb") as f:
            np.save(f, X)
    elif suffix == ".npz":
        with atomic_write(p, "wb") as f:
            np.savez(f, points=X)
    elif suffix == ".ply":
        if X.shape[1] != 3:
            raise ValueError(f"X must have 3 columns (x, y, z) for .ply, got {X.shape[1]}")
        header = ("ply\nformat {} 1.0\nelement vertex {}\nproperty double x\nproperty double y\n"
                  "property double z\nend_header\n")
        with atomic_write(p, "wb") as f:
            if binary:
                f.write(header.format("binary_little_endian", len(X)).encode("ascii"))
                f.write(X.astype("<f8").tobytes())
            else:
                f.write(header.format("ascii", len(X)).encode("ascii"))
                f.write("".join(" ".join(repr(float(v)) for v in row) + "\n" for row in X).encode("ascii"))
    else:
        sep = "," if suffix == ".csv" else " "
        with atomic_write(p) as f:
            for row in X:
                f.write(sep.join(repr(float(v)) for v in row) + "\n")
    return p


# ---------------------------------------------------------------------------------------------- graphs
@dataclasses.dataclass(frozen=True)
class Graph:
    """A graph as an edge array: ``edges`` (m, 2) int64, optional ``weights`` (m,), ``n_nodes``.

    Each stored row is one directed entry; an undirected edge list stores each edge once and
    :meth:`to_scipy` can symmetrise it.
    """

    edges: np.ndarray
    n_nodes: int
    weights: np.ndarray | None = None

    def __post_init__(self) -> None:
        edges = np.asarray(self.edges)
        if edges.ndim != 2 or edges.shape[1] != 2:
            raise ValueError(f"edges must have shape (m, 2), got {edges.shape}")
        if edges.size and not np.issubdtype(edges.dtype, np.integer):
            raise TypeError(f"edges must be integers, got dtype {edges.dtype}")
        edges = edges.astype(np.int64)
        if edges.size and (edges.min() < 0 or edges.max() >= self.n_nodes):
            raise ValueError(f"edges must be node ids in [0, {self.n_nodes}), got range "
                             f"[{edges.min()}, {edges.max()}]")
        object.__setattr__(self, "edges", edges)
        if self.weights is not None:
            w = np.asarray(self.weights, dtype=np.float64)
            if w.shape != (len(edges),):
                raise ValueError(f"weights must have shape ({len(edges)},), got {w.shape}")
            object.__setattr__(self, "weights", w)

    @property
    def n_edges(self) -> int:
        return len(self.edges)

    def to_scipy(self, *, symmetric: bool = False):
        """A ``scipy.sparse.csr_array`` adjacency (needs scipy); ``symmetric`` adds the reverse edges."""
        import scipy.sparse as sp

        w = np.ones(self.n_edges) if self.weights is None else self.weights
        r, c = self.edges[:, 0], self.edges[:, 1]
        if symmetric:
            off = r != c
            r, c, w = np.concatenate([r, c[off]]), np.concatenate([c, r[off]]), np.concatenate([w, w[off]])
        A = sp.csr_array((w, (r, c)), shape=(self.n_nodes, self.n_nodes))
        A.sum_duplicates()
        return A

    @classmethod
    def from_scipy(cls, A) -> Graph:
        coo = A.tocoo()
        if coo.shape[0] != coo.shape[1]:
            raise ValueError(f"adjacency must be square, got shape {coo.shape}")
        return cls(np.stack([coo.row, coo.col], axis=1).astype(np.int64), coo.shape[0], coo.data.astype(float))


def read_graph(path: str | os.PathLike[str], *, n_nodes: int | None = None) -> Graph:
    """Read an edge list or a CSR ``.npz``. ``n_nodes`` defaults to ``max id + 1`` for edge lists."""
    p, suffix = existing_file(path, GRAPH_FORMATS, "graph")
    if suffix == ".npz":
        try:
            with _np_load(p, suffix) as z:
                missing = {"data", "indices", "indptr", "shape"} - set(z.keys())
                if missing:
                    raise DataFileError(p, f"not a CSR .npz: missing arrays {sorted(missing)}")
                if "format" in z and z["format"].item() not in (b"csr", "csr"):
                    raise DataFileError(p, f"sparse format {z['format'].item()!r} is not CSR")
                data, indices, indptr, shape = z["data"], z["indices"], z["indptr"], tuple(z["shape"])
        except DataFileError:
            raise
        except (OSError, ValueError, zipfile.BadZipFile) as exc:
            raise DataFileError(p, f"cannot parse as .npz ({exc})") from exc
        if len(shape) != 2 or shape[0] != shape[1] or len(indptr) != shape[0] + 1 or indptr[-1] != len(indices):
            raise DataFileError(p, f"inconsistent CSR arrays (shape {shape}, indptr {len(indptr)}, "
                                   f"indices {len(indices)})")
        rows = np.repeat(np.arange(shape[0]), np.diff(indptr))
        edges = np.stack([rows, indices], axis=1)
        try:
            return Graph(edges.astype(np.int64), int(shape[0]), data.astype(np.float64))
        except (ValueError, TypeError) as exc:
            raise DataFileError(p, str(exc)) from exc
    delimiter = "," if suffix == ".csv" else None
    table = _read_text_table(p, delimiter)
    if table.shape[1] not in (2, 3):
        raise DataFileError(p, f"edge list lines must be 'u v' or 'u v w', got {table.shape[1]} columns")
    ids = table[:, :2]
    if np.any(ids != np.round(ids)) or np.any(ids < 0):
        raise DataFileError(p, "node ids must be non-negative integers")
    edges = ids.astype(np.int64)
    n = int(edges.max()) + 1 if n_nodes is None else n_nodes
    try:
        return Graph(edges, n, table[:, 2] if table.shape[1] == 3 else None)
    except ValueError as exc:
        raise DataFileError(p, str(exc)) from exc


def write_graph(path: str | os.PathLike[str], graph: Graph) -> Path:
    """Write a :class:`Graph` as an edge list or a CSR ``.npz`` (readable by ``scipy.sparse.load_npz``)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in GRAPH_FORMATS:
        raise DataFileError(p, f"unsupported graph format {suffix!r}; expected one of {', '.join(GRAPH_FORMATS)}")
    if not isinstance(graph, Graph):
        raise TypeError(f"graph must be an iclr25.utils.io.Graph, got {type(graph).__name__}")
    if suffix == ".npz":
        order = np.lexsort((graph.edges[:, 1], graph.edges[:, 0]))
        rows, cols = graph.edges[order, 0], graph.edges[order, 1]
        data = np.ones(len(rows)) if graph.weights is None else graph.weights[order]
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=graph.n_nodes))])
        with atomic_write(p, "wb") as f:
            np.savez(f, data=data, indices=cols.astype(np.int32), indptr=indptr.astype(np.int32),
                     shape=np.array([graph.n_nodes, graph.n_nodes]), format=np.array(b"csr"))
        return p
    sep = "," if suffix == ".csv" else " "
    buf = _io.StringIO()
    for i, (u, v) in enumerate(graph.edges):
        buf.write(f"{u}{sep}{v}" + (f"{sep}{float(graph.weights[i])!r}" if graph.weights is not None else "") + "\n")
    with atomic_write(p) as f:
        f.write(buf.getvalue())
    return p


# ------------------------------------------------------------------------------------------- molecules
def read_smiles(path: str | os.PathLike[str], *, column: str | None = None) -> list[str]:
    """Read SMILES strings from a ``.smi`` file or from a column of a ``.csv`` file.

    The strings are not parsed here (this module does not need RDKit); packages that do chemistry
    validate them and report invalid ones by row number.
    """
    p, suffix = existing_file(path, SMILES_FORMATS, "molecule list")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataFileError(p, f"not UTF-8 text ({exc})") from exc
    if suffix == ".smi":
        out = [ln.split()[0] for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        if out and out[0].lower() == "smiles":
            out = out[1:]
    else:
        reader = csv.DictReader(_io.StringIO(text))
        fields = reader.fieldnames or []
        if column is None:
            matches = [f for f in fields if f.strip().lower() == "smiles"]
            if not matches:
                raise DataFileError(p, f"no SMILES column among {fields}: name the column 'smiles' in the header "
                                        "(or choose the column in the command/function that reads the file)")
            column = matches[0]
        elif column not in fields:
            raise DataFileError(p, f"column {column!r} not found among {fields}")
        out = []
        for i, row in enumerate(reader, start=2):
            value = (row.get(column) or "").strip()
            if not value:
                raise DataFileError(p, f"line {i}: empty SMILES in column {column!r}")
            out.append(value)
    if not out:
        raise DataFileError(p, "no molecules")
    return out


def write_smiles(path: str | os.PathLike[str], smiles: list[str], *, names: list[str] | None = None) -> Path:
    """Write SMILES to ``.smi`` (``SMILES [name]`` per line) or ``.csv`` (columns ``smiles[,name]``)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in SMILES_FORMATS:
        raise DataFileError(p, f"unsupported molecule list format {suffix!r}; expected .smi or .csv")
    if isinstance(smiles, str) or not all(isinstance(s, str) and s and not any(c.isspace() for c in s)
                                          for s in smiles):
        raise TypeError("smiles must be a list of non-empty strings without whitespace")
    if names is not None and len(names) != len(smiles):
        raise ValueError(f"names must have {len(smiles)} entries, got {len(names)}")
    with atomic_write(p, newline="") as f:
        if suffix == ".smi":
            for i, s in enumerate(smiles):
                f.write(s + (f" {names[i]}" if names is not None else "") + "\n")
        else:
            w = csv.writer(f)
            w.writerow(["smiles"] + (["name"] if names is not None else []))
            for i, s in enumerate(smiles):
                w.writerow([s] + ([names[i]] if names is not None else []))
    return p


def read_json(path: str | os.PathLike[str], *, what: str = "file") -> Any:
    """Parse a JSON file (a config, a results file); errors name the path: ``FileNotFoundError`` ("no such
    {what}") when it is missing, :class:`DataFileError` when it is not valid JSON."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such {what}")
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataFileError(p, f"not valid JSON ({exc})") from exc


def save_npz(path: str | os.PathLike[str], **arrays: Any) -> Path:
    """``np.savez_compressed`` written atomically (caches of generated data sets use it)."""
    p = Path(path)
    with atomic_path(p) as tmp:
        np.savez_compressed(tmp, **arrays)
    return p


def dataclass_from_mapping(cls: type, d: Any, *, what: str = "config") -> Any:
    """``cls(**d)`` for a dataclass ``cls``, after checking that ``d`` is a mapping whose keys are all fields of
    ``cls`` (a configuration read from a user's JSON file). The errors name ``what``.

    Examples
    --------
    >>> @dataclasses.dataclass
    ... class Toy:
    ...     a: int = 1
    >>> dataclass_from_mapping(Toy, {"a": 2})
    Toy(a=2)
    >>> dataclass_from_mapping(Toy, {"b": 2}, what="toy.json")
    Traceback (most recent call last):
    ValueError: toy.json: unknown key(s) ['b']; known keys are ['a']
    """
    if not isinstance(d, Mapping):
        raise TypeError(f"{what} must be a mapping (a JSON object), got {type(d).__name__}")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(d) - known)
    if unknown:
        raise ValueError(f"{what}: unknown key(s) {unknown}; known keys are {sorted(known)}")
    return cls(**dict(d))
