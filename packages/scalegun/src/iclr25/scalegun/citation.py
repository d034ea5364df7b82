"""A citation-like graph generator with ogbn-arxiv's locality, streamed straight to the mapped CSR form.

The generator is a degree-corrected block model with two levels of locality:

* **communities** of ``community`` consecutive node ids (default 12), each an Erdos-Renyi graph with edge
  probability ``p_in`` (default 0.6): the triangles that give the graph its clustering;
* **areas** of ``area`` consecutive ids (default 4,234 = 169,343 / 40, ogbn-arxiv's nodes per subject area):
  the remaining ``mean_degree - p_in (community - 1)`` edges per node are Chung-Lu edges (both endpoints drawn
  in proportion to power-law weights of exponent ``exponent``, ids permuted), a fraction ``area_frac`` of them
  with the second endpoint inside the first one's area (degree-corrected: ``P(v) ~ theta_v`` within the area,
  so expected degrees stay proportional to the weights), the rest anywhere.

Labels are per area (``classes`` labels drawn once per area), features are a class mean plus noise (as
:func:`~iclr25.scalegun.streaming.powerlaw_files`). The defaults are fitted to ogbn-arxiv's published statistics
(:data:`ARXIV`): 169,343 nodes and 1,166,243 undirected edges (Hu et al., 2020, OGB, Table 1), mean degree
2m/n = 13.77; average local clustering about 0.23 and edge homophily about 0.65 as commonly reported for the
undirected graph (not re-measured here: nothing is downloaded); degree exponent 2.5, whose Chung-Lu maximum
expected degree at arxiv's size (~13.7 n^(2/3) / 3 = 14k) matches the reported maximum degree of about 13k.
At arxiv's size the defaults give mean degree 13.7-13.8 and clustering 0.22-0.23 (``tests/test_citation.py``
checks both at a tiny size, with the tolerances stated there); the within-area share is
``(p_in (community - 1) + area_frac (mean_degree - p_in (community - 1))) / mean_degree`` = 0.66.

Nothing holds the edge list: community edges are drawn per chunk of communities, Chung-Lu edges per chunk of
``2^21`` pairs, both directions are spilled as int64 keys to per-row-block scratch files, each block is sorted
and de-duplicated on its own and appended to int32 column files; the folder gets ``graph.npz`` (the layout
:func:`~iclr25.scalegun.streaming.load_graph_files` reads) **and** ``csr-mmap/`` (the unlearner's form, self loops
inserted row block by row block, so ``load_graph_files(mmap=True)`` needs no conversion). Peak memory: a few
``n``-length arrays (weights and their cumulative sums, labels, degrees, ``indptr``) plus ~300 MB of buffers.

References: Karrer & Newman (2011) degree-corrected SBM; Chung & Lu (2002); ScaleGUN Sec. 5 (ogbn-arxiv,
ogbn-papers100M).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from iclr25.utils.seeding import check_seed

from .datasets import _check_frac, _check_int
from .mapped import _blocks
from .streaming import _BLOCK_ENTRIES, _CHUNK, GRAPH_FILES, MAPPED_DIR, _spill_pairs, _write_csr, _write_nodes

__all__ = ["citation_files", "ARXIV", "average_clustering", "sample_edges", "two_hop_ball", "locality_cell"]

#: ogbn-arxiv's published statistics the defaults are fitted to (see the module docstring for the sources).
ARXIV = {"nodes": 169_343, "edges": 1_166_243, "mean_degree": 2 * 1_166_243 / 169_343, "clustering": 0.23,
         "homophily": 0.65, "max_degree_about": 13_000}
#: Chung-Lu pairs drawn per kept edge: duplicates among hubs are dropped; 1.022 restores arxiv's mean degree
#: at its size (fitted once at n = 169,343: 13.61 without it)
_OVERDRAW = 1.022


def citation_files(out: str | os.PathLike[str], n: int, features: int = 16, classes: int = 5, seed: int = 0, *,
                   mean_degree: float = ARXIV["mean_degree"], exponent: float = 2.5, community: int = 12,
                   p_in: float = 0.6, area: int = 4234, area_frac: float = 0.35, signal: float = 0.3,
                   train_frac: float = 0.1) -> Path:
    """Write a citation-like graph of ``n`` nodes (about ``n mean_degree / 2`` undirected edges; see the module
    docstring) to the folder ``out``: ``graph.npz``, ``X.npy`` (n, F) float64, ``y.npy``, ``train.npy``,
    ``test.npy`` and the mapped CSR ``csr-mmap/``. The files appear only when complete. Returns ``out``.

    Examples
    --------
    >>> import tempfile
    >>> from iclr25.scalegun import load_graph_files
    >>> g = load_graph_files(citation_files(tempfile.mkdtemp(), 3000, 4, 3, seed=0), mmap=True)
    >>> g.X.shape, 18_000 < g.adj.n_edges < 23_000
    ((3000, 4), True)
    """
    n, features, classes = _check_int(n, "n", 2), _check_int(features, "features", 1), _check_int(classes, "classes", 1)
    community, area = _check_int(community, "community", 2), _check_int(area, "area", 2)
    p_in, area_frac, train_frac = _check_frac(p_in, "p_in"), _check_frac(area_frac, "area_frac"), \
        _check_frac(train_frac, "train_frac")
    if isinstance(exponent, bool) or not isinstance(exponent, (int, float)) or exponent <= 2.0:
        raise ValueError(f"exponent must be a number > 2, got {exponent!r}")
    k_in = p_in * (community - 1)
    if isinstance(mean_degree, bool) or not isinstance(mean_degree, (int, float)) or not mean_degree > k_in:
        raise ValueError(f"mean_degree must be a number > p_in (community - 1) = {k_in:g}, got {mean_degree!r}")
    seed = check_seed(seed)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, size=-(-n // area))[np.arange(n) // area]
    theta = (np.arange(n) + 1.0) ** (-1.0 / (exponent - 1.0))
    cum = np.zeros(n + 1)
    np.cumsum(theta[rng.permutation(n)], out=cum[1:])
    del theta
    m_ext = int(round(n * (mean_degree - k_in) / 2 * _OVERDRAW))
    m_est = int(n * k_in / 2) + m_ext
    n_blocks = max(1, -(-2 * m_est // _BLOCK_ENTRIES))
    tmp = Path(tempfile.mkdtemp(prefix=".citation-", dir=out))
    try:
        _spill_edges(tmp, n, n_blocks, seed, cum, community, p_in, area, area_frac, m_ext)
        del cum
        _write_csr(tmp, n, n_blocks)
        _write_nodes(tmp, y, features, classes, signal, train_frac, rng)
        _write_mapped(tmp)
        for name in GRAPH_FILES:
            os.replace(tmp / name, out / name)
        if (out / MAPPED_DIR).is_dir():
            shutil.rmtree(out / MAPPED_DIR)
        os.replace(tmp / MAPPED_DIR, out / MAPPED_DIR)  # after graph.npz: load_graph_files keeps it
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _pairs(n: int, seed: int, cum: np.ndarray, community: int, p_in: float, area: int, area_frac: float,
           m_ext: int):
    """Yield ``(u, v)`` chunks: the communities' Erdos-Renyi pairs, then the Chung-Lu pairs (chunk ``c`` of each
    kind from the stream seeded ``[seed, kind, c]``)."""
    iu, ju = np.triu_indices(community, 1)
    n_comm = n // community
    per_chunk = max(1, _CHUNK // len(iu))
    for c, c0 in enumerate(range(0, n_comm, per_chunk)):
        crng = np.random.default_rng([seed, 0, c])
        base = np.repeat(np.arange(c0, min(n_comm, c0 + per_chunk), dtype=np.int64) * community, len(iu))
        keep = crng.random(len(base)) < p_in
        reps = len(base) // len(iu)
        yield (base + np.tile(iu, reps))[keep], (base + np.tile(ju, reps))[keep]
    total = cum[-1]
    for c, start in enumerate(range(0, m_ext, _CHUNK)):
        crng = np.random.default_rng([seed, 1, c])
        k = min(_CHUNK, m_ext - start)
        u = np.searchsorted(cum, crng.random(k) * total, side="right") - 1
        lo = np.zeros(k, dtype=np.int64)
        hi = np.full(k, n, dtype=np.int64)
        local = crng.random(k) < area_frac
        lo[local] = (u[local] // area) * area
        hi[local] = np.minimum(n, lo[local] + area)
        v = np.searchsorted(cum, cum[lo] + crng.random(k) * (cum[hi] - cum[lo]), side="right") - 1
        yield np.minimum(u, n - 1), np.clip(v, lo, hi - 1)


def _spill_edges(tmp: Path, n: int, n_blocks: int, seed: int, cum: np.ndarray, community: int, p_in: float,
                 area: int, area_frac: float, m_ext: int) -> None:
    """Spill both directions of every drawn pair into the row blocks of ``tmp`` (``streaming._spill_pairs``)."""
    _spill_pairs(tmp, n, n_blocks, _pairs(n, seed, cum, community, p_in, area, area_frac, m_ext))


def _write_mapped(tmp: Path) -> None:
    """``tmp/csr-mmap/{indptr,indices}.npy`` (int32 when they fit) from ``tmp/graph.npz``'s CSR (sorted, no self
    loops, symmetric by construction): one self loop inserted per row, row block by row block."""
    from .mapped import npz_arrays

    arrs = npz_arrays(tmp / "graph.npz", names={"indptr", "indices"})
    ptr = np.asarray(arrs["indptr"], dtype=np.int64)
    n = len(ptr) - 1
    nnz = int(ptr[-1]) + n
    itype = np.int32 if max(nnz, n) < 2**31 - 1 else np.int64
    d = tmp / MAPPED_DIR
    d.mkdir()
    new_ptr = ptr + np.arange(n + 1)
    np.save(d / "indptr.npy", new_ptr.astype(itype))
    out = np.lib.format.open_memmap(d / "indices.npy", mode="w+", dtype=itype, shape=(nnz,))
    for r0, r1 in _blocks(ptr):
        lo, hi = int(ptr[r0]), int(ptr[r1])
        cols = np.asarray(arrs["indices"][lo:hi], dtype=np.int64)
        rows = np.repeat(np.arange(r0, r1, dtype=np.int64), np.diff(ptr[r0:r1 + 1]))
        below = np.bincount(rows[cols < rows] - r0, minlength=r1 - r0)  # entries left of the diagonal
        at = ptr[r0:r1] - lo + below
        out[new_ptr[r0]:new_ptr[r1]] = np.insert(cols, at, np.arange(r0, r1))
    out.flush()
    del out, arrs


def average_clustering(adj, sample: int | None = 2000, seed: int = 0) -> float:
    """Average local clustering coefficient (nodes of degree < 2 count 0, as networkx's
    ``average_clustering``) of a symmetric adjacency (scipy CSR without self loops, or a
    :class:`~iclr25.scalegun.mapped.MappedGraph`, whose self loops are skipped), over ``sample`` uniform nodes
    (all nodes when ``None`` or ``sample >= n``)."""
    import scipy.sparse as sp

    if hasattr(adj, "csr"):
        A = adj.csr(np.float64)
    else:
        A = sp.csr_array(adj, dtype=np.float64)
    n = A.shape[0]
    rng = np.random.default_rng(seed)
    nodes = np.arange(n) if sample is None or sample >= n else rng.choice(n, sample, replace=False)
    vals = np.zeros(len(nodes))
    for k, i in enumerate(nodes):
        nb = np.asarray(A.indices[A.indptr[i]:A.indptr[i + 1]])
        nb = nb[nb != i]
        if len(nb) < 2:
            continue
        sub = A[nb][:, nb]
        vals[k] = (sub.sum() - sub.diagonal().sum()) / (len(nb) * (len(nb) - 1))
    return float(vals.mean())


def sample_edges(adj, k: int, seed: int = 0) -> np.ndarray:
    """``k`` distinct undirected edges ``(k, 2)`` (``u < v``) drawn uniformly from a
    :class:`~iclr25.scalegun.mapped.MappedGraph` by stored entry (each edge is stored twice), without building
    the edge list; raises ``ValueError`` when the graph has fewer than ``k`` edges."""
    if adj.n_edges < k:
        raise ValueError(f"k must be at most the graph's {adj.n_edges} edges, got {k}")
    rng = np.random.default_rng(seed)
    ptr = adj.indptr
    got = np.empty((0, 2), dtype=np.int64)
    while len(got) < k:
        pos = np.sort(rng.integers(0, adj.nnz, size=4 * k))
        rows = np.searchsorted(ptr, pos, side="right") - 1
        cols = np.asarray(adj.indices[pos], dtype=np.int64)
        keep = rows != cols
        e = np.sort(np.stack([rows[keep], cols[keep]], axis=1), axis=1)
        got = np.concatenate([got, e])
        _, first = np.unique(got[:, 0] * adj.n_nodes + got[:, 1], return_index=True)
        got = got[np.sort(first)]
    return got[rng.permutation(len(got))[:k]]


def locality_cell(folder: str | os.PathLike[str], seed: int = 0, *, batch: int = 5000, retrains: int = 2,
                  device=None) -> dict:
    """The 5,000-edge batch against retraining on a graph folder of :func:`citation_files`, on the mapped path,
    in CPU seconds (wall seconds on an accelerator): ScaleGUN fitted at (eps, delta) = (1, 1e-4), sigma = 0.1, the
    default r_max rule; one request of ``batch`` random edges timed; the unlearner freed; then a ``mode="retrain"``
    unlearner fitted on the same graph and ``retrains`` single-edge requests of it timed (each one exact
    re-propagation plus L-BFGS from scratch with fresh noise; their median). Peak RSS is reset at the start;
    ``peak_rss_bytes - rss_start_bytes`` over the edges is the growth per edge."""
    import gc
    import time

    from iclr25.utils.memory import current_rss_bytes, peak_rss_bytes, reset_peak_rss

    from .mapped import MappedGraph
    from .unlearner import CertifiedUnlearner

    d = Path(folder)
    reset_peak_rss()
    rss0 = current_rss_bytes()
    adj = MappedGraph(d / MAPPED_DIR)
    y, tr = np.load(d / "y.npy"), np.load(d / "train.npy")
    edges = sample_edges(adj, batch + retrains, seed)
    ball = two_hop_ball(adj, edges[:batch])
    kw = dict(epsilon=1.0, delta=1e-4, sigma=0.1, seed=seed, device=device)
    wall = device is not None and str(device) not in ("cpu",) and not str(device).startswith("cpu")
    clock = time.perf_counter if wall else time.process_time
    X = np.load(d / "X.npy", mmap_mode="r")
    t = clock()
    sg = CertifiedUnlearner(adj, X, y, tr, **kw)
    del X  # the unlearner holds its preprocessed copy; the map's pages leave the resident set
    sg.fit()
    fit_s = clock() - t
    t = clock()
    rec = sg.unlearn_edges(edges[:batch])
    batch_s = clock() - t
    out = {"edges": adj.n_edges, "nodes": adj.n_nodes, "seed": seed, "batch": batch, "batch_s": batch_s, **ball,
           "fit_s": fit_s, "update_s": rec.update_s, "newton_s": rec.unlearn_s,
           "rows_changed_fraction": rec.rows_changed / adj.n_nodes, "budget_used": rec.budget_used,
           "retrained_in_request": bool(rec.retrained), "flushed": bool(rec.repushed),
           "r_max": sg.r_max, "accuracy": sg.score(np.load(d / "test.npy")), "state_bytes": sg.nbytes()}
    del sg, rec
    gc.collect()
    X = np.load(d / "X.npy", mmap_mode="r")
    rt = CertifiedUnlearner(adj, X, y, tr, mode="retrain", **kw)
    del X
    rt.fit()
    times = []
    for e in edges[batch:batch + retrains]:
        t = clock()
        rt.unlearn_edges(e[None, :])
        times.append(clock() - t)
    out.update(retrain_s=float(np.median(times)), retrain_all_s=times, clock="wall" if wall else "cpu",
               peak_rss_bytes=peak_rss_bytes(), rss_start_bytes=rss0)
    out["speedup"] = out["retrain_s"] / batch_s
    out["rss_growth_bytes_per_edge"] = (out["peak_rss_bytes"] - rss0) / adj.n_edges
    return out


def two_hop_ball(adj, edges: np.ndarray) -> dict:
    """The fractions of the nodes a batch's lazy push reaches under the default r_max (every nonzero residue of
    the two-hop ball is pushed): ``S0`` the endpoints, ``N1`` their closed neighbourhood, ``N2`` the closed
    neighbourhood of ``N1`` (``benchmarks/locality.py``'s definitions), each over ``n``, and ``W1`` the stored
    entries that pushing ``N1`` reads over ``nnz``."""
    ptr = np.asarray(adj.indptr, dtype=np.int64)
    n = adj.n_nodes

    def closed(rows: np.ndarray) -> np.ndarray:
        mark = np.zeros(n, dtype=bool)
        mark[rows] = True
        for s in range(0, len(rows), 1 << 16):
            r = rows[s:s + (1 << 16)]
            lo, hi = ptr[r], ptr[r + 1]
            if hi.sum() - lo.sum() > 0:
                idx = np.repeat(lo - np.concatenate([[0], np.cumsum(hi - lo)[:-1]]), hi - lo) + np.arange((hi - lo).sum())
                mark[np.asarray(adj.indices[idx])] = True
        return np.flatnonzero(mark)

    s0 = np.unique(edges.ravel())
    n1 = closed(s0)
    n2 = closed(n1)
    w1 = float((ptr[n1 + 1] - ptr[n1]).sum()) / adj.nnz
    return {"S0_frac": len(s0) / n, "N1_frac": len(n1) / n, "N2_frac": len(n2) / n, "W1_frac": w1}
