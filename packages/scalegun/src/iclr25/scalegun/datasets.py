"""Built-in graphs (generated or shipped, no downloads) and loaders for a user's own files.

* :func:`csbm`: contextual stochastic block model — homophilous edges, Gaussian class-dependent features.
* :func:`powerlaw`: Chung-Lu graph with power-law expected degrees and the same class structure.
* :func:`digits_knn`: scikit-learn's handwritten digits (shipped with scikit-learn) as a kNN graph.
* :func:`load_graph`, :func:`load_array`, :func:`read_requests`: user edge lists / CSR ``.npz``, features and
  labels ``.npy``, and request files for the ``unlearn`` command.
* :func:`adversarial_edges`: inter-class edges to inject (the paper's efficacy experiment).

References: ScaleGUN Sec. 5 (datasets; the adversarial-edge efficacy experiment); Deshpande et al. (2018)
for the contextual SBM; Chung & Lu (2002) for the expected-degree model.
"""

from __future__ import annotations

import dataclasses
import gzip
import importlib.util
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from iclr25.utils.guards import MAX_ABS
from iclr25.utils.io import DataFileError, read_array, read_graph
from iclr25.utils.seeding import check_seed

__all__ = ["preprocess_features", "GraphData", "csbm", "powerlaw", "digits_knn", "load_graph", "load_array", "load_features",
           "load_labels", "load_train", "read_requests", "check_requests",
           "adversarial_edges", "Request"]


def preprocess_features(X: np.ndarray) -> np.ndarray:
    """Standardise each column, then divide by the largest row norm so that ``||x_i||_2 <= 1``.

    References: ScaleGUN Sec. 5 (feature preprocessing; the bounds assume ``||x_i|| <= 1``).

    Examples
    --------
    >>> float(np.linalg.norm(preprocess_features(np.arange(12.0).reshape(4, 3) ** 2), axis=1).max())
    1.0
    """
    X = np.asarray(X, dtype=np.float64)
    sd = X.std(axis=0)
    Xs = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    m = np.linalg.norm(Xs, axis=1).max()
    return Xs / m if m > 0 else Xs


@dataclasses.dataclass(frozen=True)
class GraphData:
    """A node-classification graph: symmetric CSR ``adj`` (no self loops; or a
    :class:`~iclr25.scalegun.mapped.MappedGraph`, which holds them), features ``X (n, F)``, labels ``y (n,)``,
    and a train/test split."""

    adj: sp.csr_array
    X: np.ndarray
    y: np.ndarray
    train_idx: np.ndarray
    test_idx: np.ndarray

    @property
    def n_nodes(self) -> int:
        return self.X.shape[0]

    @property
    def edges(self) -> np.ndarray:
        """The undirected edges ``(m, 2)`` with ``u < v`` (row-major for a CSR or mapped ``adj``)."""
        if hasattr(self.adj, "edges"):  # a MappedGraph: extracted block by block
            return self.adj.edges()
        coo = sp.triu(self.adj, k=1).tocoo()
        return np.stack([coo.row, coo.col], axis=1).astype(np.int64)

    @property
    def n_edges(self) -> int:
        if hasattr(self.adj, "edges"):
            return int(self.adj.n_edges)
        return int(sp.triu(self.adj, k=1).nnz)


def _check_int(x: object, name: str, lo: int) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {x!r}")
    return int(x)


def _check_frac(x: object, name: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0.0 < float(x) < 1.0:
        raise ValueError(f"{name} must be a number in (0, 1), got {x!r}")
    return float(x)


def _symmetric(n: int, u: np.ndarray, v: np.ndarray) -> sp.csr_array:
    keep = u != v
    u, v = u[keep], v[keep]
    A = sp.csr_array((np.ones(2 * len(u)), (np.concatenate([u, v]), np.concatenate([v, u]))), shape=(n, n))
    A.sum_duplicates()
    A.data[:] = 1.0
    A.sort_indices()
    return A


def _features(y: np.ndarray, features: int, classes: int, signal: float, rng: np.random.Generator) -> np.ndarray:
    means = rng.normal(size=(classes, features)) * signal / np.sqrt(features)
    return means[y] + rng.normal(size=(len(y), features)) / np.sqrt(features)


def _split(n: int, train_frac: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    perm = rng.permutation(n)
    k = max(1, int(round(train_frac * n)))
    return np.sort(perm[:k]), np.sort(perm[k:])


def _class_edges(n: int, m: int, y: np.ndarray, classes: int, homophily: float, node_weight: np.ndarray,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``m`` endpoint pairs: ``u ~ node_weight``; ``v ~ node_weight`` within ``u``'s class with probability
    ``homophily``, else within a uniformly chosen other class."""
    p = node_weight / node_weight.sum()
    u = rng.choice(n, size=m, p=p)
    cls = y[u].copy()
    switch = rng.random(m) >= homophily
    if classes > 1:
        cls[switch] = (cls[switch] + rng.integers(1, classes, size=int(switch.sum()))) % classes
    v = np.empty(m, dtype=np.int64)
    for c in range(classes):
        members = np.flatnonzero(y == c)
        sel = np.flatnonzero(cls == c)
        if len(sel) == 0:
            continue
        cw = np.cumsum(node_weight[members])
        v[sel] = members[np.minimum(np.searchsorted(cw, rng.random(len(sel)) * cw[-1]), len(members) - 1)]
    return u.astype(np.int64), v


def csbm(n: int, m: int, features: int, classes: int, seed: int = 0, *, homophily: float = 0.8,
         signal: float = 1.0, train_frac: float = 0.5) -> GraphData:
    """Contextual SBM: ``n`` nodes, about ``m`` undirected edges (duplicates and self loops dropped), a
    fraction ``homophily`` of them inside a class, features ``mu_y + N(0, I/F)`` with ``||mu|| ~ signal``.

    Examples
    --------
    >>> g = csbm(200, 1000, 8, 3, seed=0)
    >>> g.X.shape, g.adj.shape, bool((g.adj != g.adj.T).nnz == 0)
    ((200, 8), (200, 200), True)
    """
    n, m = _check_int(n, "n", 2), _check_int(m, "m", 1)
    features, classes = _check_int(features, "features", 1), _check_int(classes, "classes", 1)
    homophily, train_frac = _check_frac(homophily, "homophily"), _check_frac(train_frac, "train_frac")
    rng = np.random.default_rng(check_seed(seed))
    y = rng.integers(0, classes, size=n)
    u, v = _class_edges(n, m, y, classes, homophily, np.ones(n), rng)
    X = _features(y, features, classes, signal, rng)
    tr, te = _split(n, train_frac, rng)
    return GraphData(_symmetric(n, u, v), X, y, tr, te)


def powerlaw(n: int, m: int, features: int = 64, classes: int = 5, seed: int = 0, *, exponent: float = 2.5,
             homophily: float = 0.8, signal: float = 1.0, train_frac: float = 0.1) -> GraphData:
    """Chung-Lu graph with expected degrees ``~ i^{-1/(exponent-1)}`` (a power-law tail), class-homophilous
    edges and class-dependent Gaussian features, as :func:`csbm`.

    Examples
    --------
    >>> g = powerlaw(500, 3000, 8, 3, seed=0)
    >>> int(g.adj.sum(axis=1).max()) > 3 * int(np.median(g.adj.sum(axis=1)))
    True
    """
    n, m = _check_int(n, "n", 2), _check_int(m, "m", 1)
    features, classes = _check_int(features, "features", 1), _check_int(classes, "classes", 1)
    if isinstance(exponent, bool) or not isinstance(exponent, (int, float)) or exponent <= 2.0:
        raise ValueError(f"exponent must be a number > 2, got {exponent!r}")
    homophily, train_frac = _check_frac(homophily, "homophily"), _check_frac(train_frac, "train_frac")
    rng = np.random.default_rng(check_seed(seed))
    y = rng.integers(0, classes, size=n)
    weight = (np.arange(n) + 1.0) ** (-1.0 / (exponent - 1.0))
    weight = weight[rng.permutation(n)]  # node ids carry no degree information
    u, v = _class_edges(n, m, y, classes, homophily, weight, rng)
    X = _features(y, features, classes, signal, rng)
    tr, te = _split(n, train_frac, rng)
    return GraphData(_symmetric(n, u, v), X, y, tr, te)


def _load_digits() -> tuple[np.ndarray, np.ndarray]:
    """The digits table shipped inside scikit-learn, read without importing scikit-learn (slow to import)."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("digits_knn needs scikit-learn (pip install scikit-learn)")
    path = Path(next(iter(spec.submodule_search_locations))) / "datasets" / "data" / "digits.csv.gz"
    if not path.is_file():  # a future layout: fall back to the public loader
        from sklearn.datasets import load_digits

        d = load_digits()
        return d.data.astype(np.float64), d.target.astype(np.int64)
    with gzip.open(path, "rt") as f:
        table = np.loadtxt(f, delimiter=",")
    return table[:, :-1].astype(np.float64), table[:, -1].astype(np.int64)


def digits_knn(k: int = 10, seed: int = 0, *, train_frac: float = 0.5) -> GraphData:
    """scikit-learn's 1797 handwritten digits (8x8 pixels, 10 classes) as a symmetrised ``k``-NN graph
    (Euclidean distance on the pixels).

    Examples
    --------
    >>> g = digits_knn(5)
    >>> g.X.shape, int(g.y.max()) + 1
    ((1797, 64), 10)
    """
    from scipy.spatial import cKDTree

    k = _check_int(k, "k", 1)
    train_frac = _check_frac(train_frac, "train_frac")
    rng = np.random.default_rng(check_seed(seed))
    X, y = _load_digits()
    _, nn = cKDTree(X).query(X, k=k + 1)
    rows = np.repeat(np.arange(len(X)), k)
    cols = nn[:, 1:].ravel()  # column 0 is the point itself
    tr, te = _split(len(X), train_frac, rng)
    return GraphData(_symmetric(len(X), rows.astype(np.int64), cols.astype(np.int64)), X, y, tr, te)


def adversarial_edges(g: GraphData, fraction: float = 0.1, seed: int = 0) -> np.ndarray:
    """``round(fraction * m)`` new undirected edges between nodes of different classes (not already edges).

    References: ScaleGUN Sec. 5.3 (unlearning efficacy: inject adversarial edges, then unlearn them).
    """
    fraction = _check_frac(fraction, "fraction")
    rng = np.random.default_rng(check_seed(seed))
    want = int(round(fraction * g.n_edges))
    existing = set(map(tuple, g.edges.tolist()))
    out: set[tuple[int, int]] = set()
    while len(out) < want:
        u = rng.integers(0, g.n_nodes, size=2 * want)
        v = rng.integers(0, g.n_nodes, size=2 * want)
        for a, b in zip(u.tolist(), v.tolist(), strict=True):
            if g.y[a] != g.y[b]:
                key = (min(a, b), max(a, b))
                if key not in existing and key not in out:
                    out.add(key)
                    if len(out) == want:
                        break
    return np.array(sorted(out), dtype=np.int64).reshape(-1, 2)


def with_edges(g: GraphData, edges: np.ndarray) -> GraphData:
    """``g`` with extra undirected ``edges`` added."""
    extra = _symmetric(g.n_nodes, edges[:, 0], edges[:, 1])
    A = (g.adj + extra).tocsr()
    A.data[:] = 1.0
    return dataclasses.replace(g, adj=sp.csr_array(A))


# ------------------------------------------------------------------------------------------------ files
_EDGE_TEXT = (".txt", ".edges", ".edgelist", ".csv")


def _header_lines(p: Path) -> int:
    """Lines up to and including a header line such as ``source,target`` (0 when there is none)."""
    with p.open("rb") as f:
        for k, raw in enumerate(f, 1):
            line = raw.split(b"#", 1)[0].strip()
            if line:
                return k if not any(c in b"0123456789" for c in line) else 0
    return 0


def _fast_edge_text(p: Path, n_nodes: int | None) -> np.ndarray | None:
    """The edge array parsed by numpy's C reader (no Python objects per line), or ``None`` when the file
    needs the line-by-line reader (which then names the offending line)."""
    try:
        e = np.loadtxt(p, dtype=np.int64, comments="#", delimiter="," if p.suffix.lower() == ".csv" else None,
                       ndmin=2, skiprows=_header_lines(p), encoding="utf-8")
    except (ValueError, UnicodeDecodeError, OverflowError):
        return None
    if e.ndim != 2 or e.shape[1] != 2 or e.size == 0 or e.min() < 0 or (n_nodes is not None
                                                                        and e.max() >= n_nodes):
        return None
    return e


def _read_edge_text(p: Path, n_nodes: int | None) -> tuple[np.ndarray, int]:
    """``u v`` lines (``#`` comments, blank lines skipped; commas allowed in ``.csv``). ScaleGUN graphs are
    unweighted, so a third column is rejected with its line number rather than read as a weight.

    Valid files are parsed by numpy's C reader without Python lists; a file it rejects is read line by line
    only to name the first bad line."""
    e = _fast_edge_text(p, n_nodes)
    if e is not None:
        return e, int(e.max()) + 1 if n_nodes is None else n_nodes
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataFileError(p, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    rows: list[tuple[int, int]] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.replace(",", " ").split()
        if len(fields) != 2:
            raise DataFileError(p, f"line {lineno}: expected an edge 'u v' (two node ids), got {len(fields)} "
                                   f"fields {line!r}; the graph is unweighted, so no weight column")
        try:
            u, v = int(fields[0]), int(fields[1])
        except ValueError:
            if not rows and lineno == 1 and not any(c.isdigit() for c in line):
                continue  # a header line such as "source,target"
            raise DataFileError(p, f"line {lineno}: node ids must be integers, got {line!r}") from None
        if u < 0 or v < 0:
            raise DataFileError(p, f"line {lineno}: node ids must be >= 0, got {line!r}")
        if n_nodes is not None and max(u, v) >= n_nodes:
            raise DataFileError(p, f"line {lineno}: node id {max(u, v)} is out of range: the features have "
                                   f"{n_nodes} rows, so ids are 0..{n_nodes - 1}")
        rows.append((u, v))
    if not rows:
        raise DataFileError(p, "no edges")
    e = np.array(rows, dtype=np.int64)
    return e, int(e.max()) + 1 if n_nodes is None else n_nodes


def load_graph(path: str | os.PathLike[str], *, n_nodes: int | None = None) -> sp.csr_array:
    """An undirected graph from an edge list (``u v`` per line) or a CSR ``.npz``, symmetrised, 0/1 weights,
    self loops dropped (the unlearner adds them). ``n_nodes`` (the number of feature rows) bounds the ids;
    every problem is reported with the file name (and line, for edge lists)."""
    p = Path(path)
    if p.suffix.lower() in _EDGE_TEXT:
        if not p.exists():
            raise FileNotFoundError(f"{p}: no such file")
        if not p.is_file() or p.stat().st_size == 0:
            raise DataFileError(p, "file is empty" if p.is_file() else "not a regular file")
        e, n = _read_edge_text(p, n_nodes)
        return _symmetric(n, e[:, 0], e[:, 1])
    G = read_graph(p)
    if n_nodes is not None and G.n_nodes != n_nodes:
        raise DataFileError(p, f"the CSR matrix has {G.n_nodes} nodes, the features have {n_nodes} rows")
    e = G.edges
    return _symmetric(G.n_nodes, e[:, 0], e[:, 1])


def load_array(path: str | os.PathLike[str], name: str) -> np.ndarray:
    """A ``.npy`` array (features or labels); errors name the file and the problem (the NumPy header is
    checked, so a text file named ``.npy`` is reported as such)."""
    p = Path(path)
    if p.suffix.lower() != ".npy":
        raise DataFileError(p, f"{name} must be a .npy file")
    try:
        return read_array(p, what=name)
    except DataFileError as exc:
        raise DataFileError(p, f"cannot read the {name}: {exc.problem}") from exc


def load_features(path: str | os.PathLike[str], *, mmap: bool = False) -> np.ndarray:
    """Node features ``(n, F)``: numeric, finite; errors name the file and the first bad row.

    ``mmap=True``: the ``.npy`` is memory-mapped read-only (it must then hold float64, the unlearner's type,
    so nothing is copied) and checked block by block; the array returned is the map."""
    p = Path(path)
    if mmap:
        if p.suffix.lower() != ".npy":
            raise DataFileError(p, "features must be a .npy file")
        if not p.is_file():
            raise FileNotFoundError(f"{p}: no such file")
        try:
            X = np.load(p, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise DataFileError(p, f"cannot read the features as .npy ({exc})") from exc
        if X.dtype != np.float64:
            raise DataFileError(p, f"memory-mapped features must be float64 (nothing is copied), got dtype "
                                   f"{X.dtype}; save them with X.astype(np.float64) or drop --mmap")
    else:
        X = load_array(p, "features")
    if X.dtype == object or not (np.issubdtype(X.dtype, np.number) or X.dtype == bool):
        raise DataFileError(p, f"features must be numbers, got dtype {X.dtype}")
    if np.issubdtype(X.dtype, np.complexfloating):
        raise DataFileError(p, f"features must be real numbers, got dtype {X.dtype}")
    if X.ndim != 2 or X.shape[0] < 2 or X.shape[1] < 1:
        raise DataFileError(p, f"features must be a 2-D array (n_nodes >= 2, F >= 1), got shape {X.shape}")
    block = max(1, (1 << 24) // (8 * X.shape[1]))  # about 16 MB of rows at a time
    bad_rows = [r0 + np.flatnonzero(~np.isfinite(np.asarray(X[r0:r0 + block], dtype=np.float64)).all(axis=1))
                for r0 in range(0, X.shape[0], block)]
    bad = np.concatenate(bad_rows)
    if len(bad):
        raise DataFileError(p, f"features must be finite: row {int(bad[0])} has NaN or inf ({len(bad)} such rows)")
    top = max((float(np.abs(np.asarray(X[r0:r0 + block], dtype=np.float64)).max(initial=0.0))
               for r0 in range(0, X.shape[0], block)), default=0.0)
    if top > MAX_ABS:  # squares overflow in the propagation and the loss: NaN certificates
        raise DataFileError(p, f"features have entries up to {top:.3g} in magnitude, beyond {MAX_ABS:.0e} where "
                               "squares overflow; rescale them (divide by a constant)")
    return X if mmap else X.astype(np.float64)


def load_labels(path: str | os.PathLike[str], n: int) -> np.ndarray:
    """Class labels ``(n,)``: integers >= 0 (floats with integral values are accepted)."""
    p = Path(path)
    y = load_array(p, "labels")
    if y.ndim != 1 or y.shape[0] != n:
        raise DataFileError(p, f"labels must have shape ({n},), one per feature row, got {y.shape}")
    if np.issubdtype(y.dtype, np.floating) and np.all(np.isfinite(y)) and np.all(y == np.round(y)):
        y = y.astype(np.int64)
    if y.dtype == bool or not np.issubdtype(y.dtype, np.integer):
        raise DataFileError(p, f"labels must be integer class ids, got dtype {y.dtype}")
    if y.min() < 0:
        raise DataFileError(p, f"labels must be class ids >= 0, got {int(y.min())}")
    return y.astype(np.int64)


def load_train(path: str | os.PathLike[str], n: int) -> np.ndarray:
    """Training node ids: distinct integers in ``[0, n)``."""
    p = Path(path)
    t = load_array(p, "train")
    if t.ndim != 1 or t.size == 0 or t.dtype == bool or not np.issubdtype(t.dtype, np.integer):
        raise DataFileError(p, f"train must be a non-empty 1-D array of integer node ids, got {t.dtype} {t.shape}")
    if t.min() < 0 or t.max() >= n:
        raise DataFileError(p, f"train ids must be in [0, {n}), got range [{int(t.min())}, {int(t.max())}]")
    if len(np.unique(t)) != len(t):
        raise DataFileError(p, "train ids must be distinct")
    return t.astype(np.int64)


@dataclasses.dataclass(frozen=True)
class Request:
    """One unlearning request: ``kind`` in ``edge | node | feature`` and its node ids."""

    kind: str
    ids: tuple[int, ...]
    line: int = 0


def read_requests(path: str | os.PathLike[str]) -> list[Request]:
    """Requests, one per line: ``edge U V``, ``node A [B ...]`` or ``feature A [B ...]``; several ``edge``
    pairs on one line (``edge U V U2 V2``) form one batch; ``#`` starts a comment. Each request keeps its
    line number (``Request.line``) for later messages."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file")
    if not p.is_file() or p.stat().st_size == 0:
        raise DataFileError(p, "file is empty" if p.is_file() else "not a regular file")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataFileError(p, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        kind, *rest = line.split()
        if kind not in ("edge", "node", "feature"):
            raise DataFileError(p, f"line {lineno}: request kind must be edge, node or feature, got {kind!r}")
        try:
            ids = tuple(int(x) for x in rest)
        except ValueError as exc:
            raise DataFileError(p, f"line {lineno}: node ids must be integers ({exc})") from exc
        if not ids or (kind == "edge" and len(ids) % 2):
            raise DataFileError(p, f"line {lineno}: {kind} needs " + ("pairs of node ids" if kind == "edge"
                                                                     else "at least one node id"))
        out.append(Request(kind, ids, lineno))
    if not out:
        raise DataFileError(p, "no requests")
    return out


def check_requests(requests: list[Request], adj, path: str | os.PathLike[str]) -> None:
    """Replay the requests on the edge set before any work: ids in range, edges present (and not removed
    by an earlier request), nodes and features not removed twice. Errors name the file and the line.

    ``adj``: a scipy sparse matrix or a :class:`~iclr25.scalegun.mapped.MappedGraph`. Edges are looked up
    by binary search in the CSR rows (memory and time grow with the requests, not with the graph)."""
    from .mapped import MappedGraph
    from .propagation import _csr_positions

    p = Path(path)
    n = adj.shape[0]
    if isinstance(adj, MappedGraph):
        A = adj.csr(np.uint8)
    else:
        A = sp.csr_array(adj)
        if not A.has_sorted_indices:
            A = A.sorted_indices()
    removed: set[tuple[int, int]] = set()
    gone_nodes: set[int] = set()
    gone_feats: set[int] = set()
    for r in requests:
        where = f"line {r.line}: {r.kind} {' '.join(map(str, r.ids))}"
        bad = [a for a in r.ids if not 0 <= a < n]
        if bad:
            raise DataFileError(p, f"{where}: node id {bad[0]} is out of range (the graph has {n} nodes)")
        if len(set(r.ids)) != len(r.ids) and r.kind != "edge":
            raise DataFileError(p, f"{where}: a node is listed twice")
        if r.kind == "edge":
            pairs = [(min(u, v), max(u, v)) for u, v in zip(r.ids[::2], r.ids[1::2], strict=True)]
            loops = [u for u, v in pairs if u == v]
            if loops:
                raise DataFileError(p, f"{where}: ({loops[0]}, {loops[0]}) is a self loop, not an edge of the graph")
            uv = np.array(pairs, dtype=np.int64).reshape(-1, 2)
            present = (_csr_positions(A, uv[:, 0], uv[:, 1]) >= 0).tolist()
            for (u, v), there in zip(pairs, present, strict=True):
                if not there or (u, v) in removed or u in gone_nodes or v in gone_nodes:
                    raise DataFileError(p, f"{where}: edge ({u}, {v}) is not in the graph"
                                           + (" (any more)" if u in gone_nodes or v in gone_nodes else ""))
            if len(set(pairs)) != len(pairs):
                raise DataFileError(p, f"{where}: an edge is listed twice")
            removed.update(pairs)
        else:
            twice = [a for a in r.ids if a in gone_nodes or (r.kind == "feature" and a in gone_feats)]
            if twice:
                raise DataFileError(p, f"{where}: node {twice[0]} has already been removed")
            gone_feats.update(r.ids)
            if r.kind == "node":
                gone_nodes.update(r.ids)
