"""A pluggable, persistent inner-product index (faiss flat / HNSW, hnswlib, numpy) and the domain-sharded
report database that the per-domain retrievers search.

Vectors are L2-normalised on the way in, so an inner-product score is the cosine similarity
s(q, v) = ⟨q, v⟩ / (‖q‖ ‖v‖) ∈ [-1, 1]; ``search`` returns the top k by decreasing score.

References: Xia et al., *MMed-RAG*, ICLR 2025, §3.1 (domain-aware retrieval: one retriever and one database
per domain); Johnson et al., *Billion-scale similarity search with GPUs* (faiss); Malkov & Yashunin, *HNSW*.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.io import DataFileError, path_inside, read_json

__all__ = ["BACKENDS", "SearchResult", "VectorIndex", "DomainIndex", "Retrieved", "benchmark_backends",
           "clustered_vectors", "write_folder"]

BACKENDS = ("numpy", "faiss-flat", "faiss-hnsw", "hnswlib")
_FILE = {"numpy": "vectors.npy", "faiss-flat": "index.faiss", "faiss-hnsw": "index.faiss", "hnswlib": "index.hnsw"}


@dataclasses.dataclass(frozen=True)
class SearchResult:
    """Top-k ``scores`` (B, k) float32, decreasing, and ``ids`` (B, k) int64 (insertion order)."""

    scores: np.ndarray
    ids: np.ndarray


def _normalise(x: Any, dim: int | None, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name} must be a numeric array, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr[None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a (n, dim) array, got shape {arr.shape}")
    if dim is not None and arr.shape[1] != dim:
        raise ValueError(f"{name} has dimension {arr.shape[1]}, the index holds dimension {dim}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError(f"{name} contains an all-zero vector (no direction to compare)")
    return np.ascontiguousarray(arr / norms, dtype=np.float32)


def _need(module: str, backend: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        extra = " (pip install 'iclr25-mmed-rag[hnswlib]')" if module == "hnswlib" else ""
        raise ImportError(f"index backend {backend!r} needs the {module} package{extra}") from exc


class VectorIndex:
    """An inner-product (cosine) index over L2-normalised vectors.

    ``backend`` is one of :data:`BACKENDS`: ``numpy`` (exact, brute force), ``faiss-flat`` (faiss
    ``IndexFlatIP``, exact), ``faiss-hnsw`` (faiss ``IndexHNSWFlat``, approximate) or ``hnswlib`` (approximate).
    ``m``, ``ef_construction`` and ``ef_search`` are the HNSW graph degree and beam widths.
    """

    def __init__(self, dim: int, *, backend: str = "faiss-flat", m: int = 16, ef_construction: int = 100,
                 ef_search: int = 64, seed: int = 0) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
        if not isinstance(dim, (int, np.integer)) or dim < 1:
            raise ValueError(f"dim must be an integer >= 1, got {dim!r}")
        for name, v in (("m", m), ("ef_construction", ef_construction), ("ef_search", ef_search)):
            if not isinstance(v, (int, np.integer)) or v < 2:
                raise ValueError(f"{name} must be an integer >= 2, got {v!r}")
        self.dim, self.backend = int(dim), backend
        self.m, self.ef_construction, self.ef_search, self.seed = int(m), int(ef_construction), int(ef_search), seed
        self._n = 0
        self._vectors = np.zeros((0, self.dim), np.float32)
        self._impl: Any = None
        if backend == "faiss-flat":
            faiss = _need("faiss", backend)
            self._impl = faiss.IndexFlatIP(self.dim)
        elif backend == "faiss-hnsw":
            faiss = _need("faiss", backend)
            self._impl = faiss.IndexHNSWFlat(self.dim, self.m, faiss.METRIC_INNER_PRODUCT)
            self._impl.hnsw.efConstruction = self.ef_construction
            self._impl.hnsw.efSearch = self.ef_search
        elif backend == "hnswlib":
            hnswlib = _need("hnswlib", backend)
            self._impl = hnswlib.Index(space="ip", dim=self.dim)
            self._impl.init_index(max_elements=1024, ef_construction=self.ef_construction, M=self.m,
                                  random_seed=int(seed))
            self._impl.set_ef(self.ef_search)

    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        return f"VectorIndex(dim={self.dim}, backend={self.backend!r}, n={self._n})"

    def add(self, vectors: Any) -> VectorIndex:
        """Append vectors (n, dim); their ids continue from ``len(self)``."""
        v = _normalise(vectors, self.dim, "vectors")
        if self.backend == "numpy":
            self._vectors = np.concatenate([self._vectors, v])
        elif self.backend == "hnswlib":
            need = self._n + len(v)
            if need > self._impl.get_max_elements():
                self._impl.resize_index(max(need, 2 * self._impl.get_max_elements()))
            self._impl.add_items(v, np.arange(self._n, need), num_threads=1)
        else:
            self._impl.add(v)
        self._n += len(v)
        return self

    def search(self, queries: Any, k: int) -> SearchResult:
        """The top ``k`` (at most ``len(self)``) by cosine similarity, best first."""
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k must be an integer >= 1, got {k!r}")
        if self._n == 0:
            raise ValueError("the index is empty: add vectors before searching")
        q = _normalise(queries, self.dim, "queries")
        k = min(int(k), self._n)
        if self.backend == "numpy":
            s = q @ self._vectors.T
            part = np.argpartition(-s, k - 1, axis=1)[:, :k] if k < self._n else np.tile(np.arange(self._n), (len(q), 1))
            ps = np.take_along_axis(s, part, 1)
            order = np.lexsort((part, -ps), axis=1)
            ids = np.take_along_axis(part, order, 1)
            return SearchResult(np.take_along_axis(s, ids, 1).astype(np.float32), ids.astype(np.int64))
        if self.backend == "hnswlib":
            ids, dist = self._impl.knn_query(q, k=k, num_threads=1)
            return SearchResult((1.0 - dist).astype(np.float32), ids.astype(np.int64))
        scores, ids = self._impl.search(q, k)
        return SearchResult(scores.astype(np.float32), ids.astype(np.int64))

    # ------------------------------------------------------------------------------------- persistence
    def _write(self, folder: Path, stem: str) -> dict:
        path = folder / f"{stem}.{_FILE[self.backend]}"
        if self.backend == "numpy":
            np.save(path, self._vectors)
        elif self.backend == "hnswlib":
            self._impl.save_index(str(path))
        else:
            import faiss

            faiss.write_index(self._impl, str(path))
        return {"backend": self.backend, "dim": self.dim, "n": self._n, "file": path.name, "m": self.m,
                "ef_construction": self.ef_construction, "ef_search": self.ef_search, "seed": self.seed}

    @classmethod
    def _read(cls, folder: Path, meta: Any) -> VectorIndex:
        source = folder / "manifest.json"
        missing = [k for k in _META_KEYS if not isinstance(meta, dict) or k not in meta]
        if missing:
            raise DataFileError(source, f"an index entry lacks {', '.join(missing)} (not written by this package)")
        # a file the manifest names is read only inside the index folder (never ../ or an absolute path)
        path = path_inside(folder, meta["file"], source=source, what="index file")
        try:
            idx = cls(meta["dim"], backend=meta["backend"], m=meta["m"], ef_construction=meta["ef_construction"],
                      ef_search=meta["ef_search"], seed=meta["seed"])
        except (TypeError, ValueError) as exc:
            raise DataFileError(source, f"a malformed index entry ({exc})") from None
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such index file (the index folder is incomplete)")
        try:
            if idx.backend == "numpy":
                idx._vectors = np.load(path, allow_pickle=False).astype(np.float32)
                n = len(idx._vectors)
            elif idx.backend == "hnswlib":
                idx._impl.load_index(str(path), max_elements=max(int(meta["n"]), 1))
                idx._impl.set_ef(idx.ef_search)
                n = idx._impl.get_current_count()
            else:
                import faiss

                idx._impl = faiss.read_index(str(path))
                if idx.backend == "faiss-hnsw":
                    idx._impl.hnsw.efSearch = idx.ef_search
                n = idx._impl.ntotal
        except (RuntimeError, ValueError, OSError) as exc:
            raise DataFileError(path, f"cannot read the {idx.backend} index ({exc})") from exc
        if n != meta["n"]:
            raise DataFileError(path, f"holds {n} vectors, the manifest says {meta['n']}")
        idx._n = n
        return idx

    def save(self, folder: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Write the index into ``folder`` (``manifest.json`` + the backend's file); see :func:`write_folder`:
        other files in ``folder`` are kept, and a previous index is replaced only with ``overwrite``."""
        return write_folder(folder, lambda tmp: _dump_manifest(tmp, {"index": self._write(tmp, "index")}),
                            overwrite=overwrite)

    @classmethod
    def load(cls, folder: str | os.PathLike[str]) -> VectorIndex:
        """Read an index written by :meth:`save`."""
        folder = Path(folder)
        manifest = _read_manifest(folder)
        if "index" not in manifest:
            raise DataFileError(folder / "manifest.json", "not a VectorIndex manifest (no 'index' entry)")
        return cls._read(folder, manifest["index"])


#: the fields of an index entry in ``manifest.json`` (:meth:`VectorIndex._write`)
_META_KEYS = ("backend", "dim", "n", "file", "m", "ef_construction", "ef_search", "seed")


def _dump_manifest(folder: Path, manifest: dict) -> None:
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")


def _read_manifest(folder: Path) -> dict:
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such index folder")
    m = read_json(folder / "manifest.json", what="index manifest")
    if not isinstance(m, dict):
        raise DataFileError(folder / "manifest.json", "not an index manifest (expected a JSON object)")
    return m


def write_folder(folder: str | os.PathLike[str], write: Any, *, overwrite: bool = False,
                 marker: str = "manifest.json", flag: str = "folder") -> Path:
    """Write the files of ``write(staging)`` into ``folder`` without touching anything else there.

    ``write`` fills a fresh staging folder (hidden, inside ``folder``, removed afterwards); its files are then
    moved into ``folder`` one by one, ``marker`` last, so a folder whose marker is present is complete. Nothing
    in ``folder`` that this call did not write is deleted or renamed: a file of the same name as one written
    here is replaced only with ``overwrite=True`` (else :class:`~iclr25.utils.guards.OutputError`, before any
    file is moved), and every other file is kept. A folder that already holds ``marker`` (a previous index)
    is refused up front unless ``overwrite``. A ``folder`` created here is removed again if writing fails.
    """
    from iclr25.utils.guards import OutputError

    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"{flag} {folder} is an existing file, not a folder; choose a new or existing folder")
    if not overwrite and (folder / marker).exists():
        raise OutputError(f"{flag} {folder} already holds an index ({marker}); pass --overwrite to replace its "
                          "index files, or choose another folder")
    created = []
    probe = folder
    while not probe.exists():
        created.append(probe)
        probe = probe.parent
    folder.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".iclr25-mmed-rag-staging-", dir=folder))
    try:
        write(tmp)
        files = sorted((p.relative_to(tmp) for p in tmp.rglob("*") if p.is_file()),
                       key=lambda r: (r.name == marker and r.parent == Path("."), str(r)))
        clash = [r for r in files if (folder / r).exists() or (folder / r).is_symlink()]
        bad = [r for r in clash if (folder / r).is_dir()]
        if bad:
            raise OutputError(f"{flag} {folder}: {bad[0]} is a folder where this command writes a file; "
                              "choose another folder")
        if clash and not overwrite:
            names = ", ".join(str(r) for r in clash[:3]) + (" ..." if len(clash) > 3 else "")
            raise OutputError(f"{flag} {folder} already has files this command writes ({names}); pass "
                              "--overwrite to replace them, or choose another folder")
        for r in files:
            (folder / r).parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp / r, folder / r)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        for d in created:  # folders made by this call, innermost first, only when still empty
            try:
                d.rmdir()
            except OSError:
                break
        raise
    shutil.rmtree(tmp, ignore_errors=True)
    return folder


@dataclasses.dataclass(frozen=True)
class Retrieved:
    """Retrieved contexts for a batch of queries: ``scores``/``ids`` (B, k), ``reports`` (B lists of k
    strings), ``labels`` (B, k, 4) (the retrieved reports' stated findings) and ``domains`` (B, k)."""

    scores: np.ndarray
    ids: np.ndarray
    reports: list[list[str]]
    labels: np.ndarray
    domains: np.ndarray


class DomainIndex:
    """A report database sharded by domain: one :class:`VectorIndex` (and one retriever) per domain.

    ``shards`` maps a domain name to ``(index, reports, labels)``; the pooled variant has a single shard
    named ``"pooled"`` holding every domain (with per-entry ``domains`` kept to measure cross-domain hits).
    """

    def __init__(self) -> None:
        self._shards: dict[str, tuple[VectorIndex, tuple[str, ...], np.ndarray, np.ndarray]] = {}

    @property
    def domains(self) -> tuple[str, ...]:
        return tuple(self._shards)

    def __repr__(self) -> str:
        return "DomainIndex(" + ", ".join(f"{d}: {len(s[0])}" for d, s in self._shards.items()) + ")"

    def add_shard(self, domain: str, embeddings: Any, reports: Any, labels: Any, *, domains: Any = None,
                  backend: str = "faiss-flat", **kwargs: Any) -> DomainIndex:
        """Index ``embeddings`` (n, dim) of ``reports`` (n strings) with their stated ``labels`` (n, 4)."""
        if not isinstance(domain, str) or not domain:
            raise ValueError(f"domain must be a non-empty string, got {domain!r}")
        emb = np.asarray(embeddings)
        reports = tuple(str(r) for r in reports)
        labels = np.asarray(labels, dtype=np.int64)
        if emb.ndim != 2 or len(emb) == 0:
            raise ValueError(f"embeddings of shard {domain!r} must be a non-empty (n, dim) array, got {emb.shape}")
        if len(reports) != len(emb) or len(labels) != len(emb):
            raise ValueError(f"mismatched counts in shard {domain!r}: {len(emb)} embeddings, {len(reports)} "
                             f"reports, {len(labels)} labels")
        doms = np.full(len(emb), -1, np.int64) if domains is None else np.asarray(domains, dtype=np.int64)
        if len(doms) != len(emb):
            raise ValueError(f"mismatched counts in shard {domain!r}: {len(emb)} embeddings, {len(doms)} domains")
        idx = VectorIndex(emb.shape[1], backend=backend, **kwargs).add(emb)
        self._shards[domain] = (idx, reports, labels, doms)
        return self

    def label_width(self) -> int:
        """Findings per report in the shards' labels (4 built in; the vocabulary's count for the user's data)."""
        widths = {s[2].shape[1] for s in self._shards.values() if s[2].ndim == 2}
        return widths.pop() if len(widths) == 1 else 4

    def shard(self, domain: str) -> VectorIndex:
        if domain not in self._shards:
            raise ValueError(f"unknown domain {domain!r}; this index has shards {', '.join(self._shards) or '(none)'}")
        return self._shards[domain][0]

    def search(self, domain: str, queries: Any, k: int) -> Retrieved:
        """Search the shard of ``domain`` and return the contexts with their reports and labels."""
        idx = self.shard(domain)
        _, reports, labels, doms = self._shards[domain]
        res = idx.search(queries, k)
        return Retrieved(res.scores, res.ids, [[reports[i] for i in row] for row in res.ids], labels[res.ids],
                         doms[res.ids])

    def save(self, folder: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Write every shard (index file + ``<domain>.meta.npz``) and ``manifest.json`` into ``folder``; other
        files there are kept, and a previous index is replaced only with ``overwrite`` (:func:`write_folder`)."""
        def write(tmp: Path) -> None:
            shards = {}
            for d, (idx, reports, labels, doms) in self._shards.items():
                meta = idx._write(tmp, d)
                np.savez(tmp / f"{d}.meta.npz", reports=np.asarray(reports, dtype=np.str_), labels=labels,
                         domains=doms)
                shards[d] = meta
            _dump_manifest(tmp, {"kind": "iclr25-mmed-rag DomainIndex", "shards": shards})
        return write_folder(folder, write, overwrite=overwrite)

    @classmethod
    def load(cls, folder: str | os.PathLike[str]) -> DomainIndex:
        """Read an index folder written by :meth:`save`; errors name the file that is missing or corrupt."""
        folder = Path(folder)
        manifest = _read_manifest(folder)
        shards = manifest.get("shards")
        if not isinstance(shards, dict) or not shards:
            raise DataFileError(folder / "manifest.json", "not a DomainIndex manifest (no 'shards')")
        out = cls()
        from iclr25.utils.io import read_npz

        for d, meta in shards.items():
            idx = VectorIndex._read(folder, meta)
            # the shard's name makes a file name: it too must stay inside the folder
            side = path_inside(folder, f"{d}.meta.npz", source=folder / "manifest.json", what="shard file")
            z = read_npz(side, required=("reports", "labels", "domains"), what="index metadata")
            if len(z["reports"]) != len(idx):
                raise DataFileError(side, f"{len(z['reports'])} reports for {len(idx)} vectors")
            out._shards[d] = (idx, tuple(str(r) for r in z["reports"]), z["labels"].astype(np.int64),
                              z["domains"].astype(np.int64))
        return out


def clustered_vectors(n: int, n_queries: int, dim: int = 64, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A database (n, dim) and queries (n_queries, dim) from a mixture of 200 Gaussian clusters (embeddings are
    clustered; uniform noise is HNSW's worst case)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((200, dim)).astype(np.float32)
    lab = rng.integers(0, 200, n + n_queries)
    x = centres[lab] + 0.6 * rng.standard_normal((n + n_queries, dim)).astype(np.float32)
    return x[:n], x[n:]


def benchmark_backends(backends: tuple[str, ...] = ("faiss-flat", "faiss-hnsw"), *, n: int = 100_000,
                       n_queries: int = 1000, dim: int = 64, k: int = 10, m: int = 16, ef_search: int = 64,
                       repeats: int = 3, seed: int = 0) -> list[dict[str, Any]]:
    """Build time, median query latency (ms per query, one thread) and recall@k against the first (exact)
    backend on :func:`clustered_vectors`; one dict per backend."""
    from iclr25.utils.bench import measure

    try:
        import faiss

        faiss.omp_set_num_threads(1)
    except ImportError:
        pass
    db, q = clustered_vectors(n, n_queries, dim, seed=seed)
    rows, exact = [], None
    for backend in backends:
        hnsw = backend in ("faiss-hnsw", "hnswlib")
        t0 = time.perf_counter()
        idx = VectorIndex(dim, backend=backend, m=m, ef_search=ef_search).add(db)
        build = time.perf_counter() - t0
        res = idx.search(q, k)
        exact = res.ids if exact is None else exact
        t = measure(lambda idx=idx: idx.search(q, k), repeats=repeats)
        recall = float(np.mean([len(set(a) & set(b)) / k for a, b in zip(exact, res.ids, strict=True)]))
        rows.append({"backend": backend, "params": f"M = {m}, ef = {ef_search}" if hnsw else "", "n": n,
                     "build_s": build, "query_ms": 1e3 * t.median / n_queries, f"recall@{k}": recall})
    return rows
