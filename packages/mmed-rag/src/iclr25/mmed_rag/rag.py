"""The MMed-RAG retrieval side: route an image to its domain, embed it with that domain's retriever, search that
domain's report shard, then select how many contexts to keep (gap rule, ratio rule or fixed k).

References: Xia et al., *MMed-RAG*, ICLR 2025, §3.1-3.2 (domain-aware retrieval, adaptive context selection).
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr25.utils.checkpoints import MANIFEST, verify_manifest, write_manifest
from iclr25.utils.io import DataFileError, path_inside, read_json
from iclr25.utils.seeding import check_seed

from .data import DOMAINS, MedDataset, check_images, domain_index
from .index import DomainIndex, Retrieved, write_folder
from .retriever import CLIPRetriever, train_retriever
from .router import Router, train_router
from .selection import Selection, select_contexts, to_positive
from .text import Vocab

__all__ = ["RetrievalConfig", "RetrievalSystem", "Contexts"]


@dataclasses.dataclass(frozen=True)
class RetrievalConfig:
    """Training and index settings. ``pooled`` = one retriever and one shard for every domain (the baseline
    the paper's domain-aware retrieval is compared with)."""

    router_steps: int = 150
    retriever_steps: int = 300
    batch_size: int = 128
    lr: float = 2e-3
    dim: int = 64
    width: int = 16
    text_tower: str = "cnn"
    backend: str = "faiss-flat"
    pooled: bool = False


@dataclasses.dataclass(frozen=True)
class Contexts:
    """Retrieved and selected contexts: the raw top-K ``retrieved``, the positive similarities ``sims``
    ((1 + cos) / 2, (B, K)), the ``selection``, the routed ``domains`` (B,) and the selected reports."""

    retrieved: Retrieved
    sims: np.ndarray
    selection: Selection
    domains: np.ndarray

    @property
    def reports(self) -> list[list[str]]:
        return [row[:k] for row, k in zip(self.retrieved.reports, self.selection.k, strict=True)]


class RetrievalSystem:
    """Router + per-domain (or pooled) CLIP retrievers + a sharded :class:`DomainIndex` of reports."""

    def __init__(self, vocab: Vocab, router: Router, retrievers: dict[str, CLIPRetriever], index: DomainIndex,
                 config: RetrievalConfig) -> None:
        self.vocab, self.router, self.retrievers, self.index, self.config = vocab, router, retrievers, index, config

    @classmethod
    def fit(cls, train: MedDataset, db: MedDataset, *, config: RetrievalConfig | None = None, vocab: Vocab | None = None,
            minilm_model: Any = None, seed: int = 0) -> RetrievalSystem:
        """Train the router and retrievers on ``train`` and index the reports of ``db``."""
        cfg = config or RetrievalConfig()
        seed = check_seed(seed)
        vocab = vocab or Vocab.build(list(train.reports) + list(db.reports))
        router = train_router(train, steps=cfg.router_steps, seed=seed)
        kw = dict(steps=cfg.retriever_steps, batch_size=cfg.batch_size, lr=cfg.lr, dim=cfg.dim, width=cfg.width,
                  text_tower=cfg.text_tower, minilm_model=minilm_model)
        retrievers: dict[str, CLIPRetriever] = {}
        if cfg.pooled:
            retrievers["pooled"] = train_retriever(train, vocab, desc="retriever pooled", seed=seed + 1, **kw)
        else:
            for di, d in enumerate(DOMAINS):
                if np.any(train.domains == di) and np.any(db.domains == di):  # a domain absent from the data: none
                    retrievers[d] = train_retriever(train.domain(d), vocab, desc=f"retriever {d}", seed=seed + 1 + di,
                                                    **kw)
        return cls(vocab, router, retrievers, DomainIndex(), cfg).reindex(db)

    def reindex(self, db: MedDataset) -> RetrievalSystem:
        """The same router and retrievers over a new report database ``db`` (e.g. a clean or a larger one)."""
        index = DomainIndex()
        if self.config.pooled:
            index.add_shard("pooled", self.retrievers["pooled"].encode_texts(db.reports), db.reports,
                            db.report_labels, domains=db.domains, backend=self.config.backend)
        else:
            for d in self.retrievers:
                if not np.any(db.domains == domain_index(d)):
                    raise ValueError(f"db has no reports of domain {d!r}, which this system has a retriever for")
                dbd = db.domain(d)
                index.add_shard(d, self.retrievers[d].encode_texts(dbd.reports), dbd.reports, dbd.report_labels,
                                domains=dbd.domains, backend=self.config.backend)
        return RetrievalSystem(self.vocab, self.router, self.retrievers, index, self.config)

    def route(self, images: Any) -> np.ndarray:
        """Domain ids (N,) predicted by the router."""
        return self.router.predict(images)

    def retrieve(self, images: Any, *, k_max: int = 5, rule: str = "gap", gamma: float = 0.005,
                 threshold: float = 1.05, domains: Any = None) -> Contexts:
        """Top-``k_max`` reports of each image's domain (routed unless ``domains`` is given), then the rule."""
        x = check_images(images)
        if domains is None:
            dom = self.route(x)
        else:
            dom = np.array([domain_index(d) for d in np.atleast_1d(domains)], dtype=np.int64)
            if len(dom) != len(x):
                raise ValueError(f"mismatched counts: {len(x)} images but {len(dom)} domains")
        n = len(x)
        k_eff = min([k_max] + [len(self.index.shard(s)) for s in self.index.domains])
        scores = np.zeros((n, k_eff), np.float32)
        ids = np.zeros((n, k_eff), np.int64)
        width = self.index.label_width()
        labels = np.zeros((n, k_eff, width), np.int64)
        rdoms = np.zeros((n, k_eff), np.int64)
        reports: list[list[str]] = [[] for _ in range(n)]
        groups = {"pooled": np.arange(n)} if self.config.pooled else {
            DOMAINS[d]: np.flatnonzero(dom == d) for d in np.unique(dom)}
        for shard, rows in groups.items():
            if len(rows) == 0:
                continue
            if shard not in self.retrievers:
                raise ValueError(f"images were routed to domain {shard!r}, which this system has no retriever for "
                                 f"(it has {', '.join(self.retrievers)})")
            q = self.retrievers[shard].encode_images(x[rows])
            r = self.index.search(shard, q, k_eff)
            scores[rows], ids[rows], labels[rows], rdoms[rows] = r.scores, r.ids, r.labels, r.domains
            for j, row in enumerate(rows):
                reports[row] = r.reports[j]
        sims = to_positive(scores)
        sims = np.minimum.accumulate(sims, axis=1)  # float round-off must not break the sorted order
        sel = select_contexts(sims, rule=rule, k_max=k_eff, gamma=gamma, threshold=threshold)
        return Contexts(Retrieved(scores, ids, reports, labels, rdoms), sims, sel, dom)

    # ------------------------------------------------------------------------------------- persistence
    def save(self, folder: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Write ``config.json``, ``vocab.json``, ``router.pt``, ``retriever-<shard>.pt``, ``index/`` and, last,
        ``manifest.json`` (every part's size and SHA-256, :mod:`iclr25.utils.checkpoints`) into ``folder``. Other
        files there are kept; a previous index (files of the same names) is replaced only with ``overwrite``
        (:func:`~iclr25.mmed_rag.index.write_folder`)."""
        def write(tmp: Path) -> None:
            (tmp / "config.json").write_text(json.dumps(dataclasses.asdict(self.config), indent=1))
            (tmp / "vocab.json").write_text(json.dumps(list(self.vocab.tokens)))
            torch.save(self.router.state_dict(), tmp / "router.pt")
            for name, r in self.retrievers.items():
                state = {k: v for k, v in r.state_dict().items() if not k.startswith("text.encoder.")}
                torch.save(state, tmp / f"retriever-{name}.pt")
            self.index.save(tmp / "index")
            parts = sorted(p.relative_to(tmp).as_posix() for p in tmp.rglob("*") if p.is_file())
            write_manifest(tmp, parts, meta={"format": INDEX_FORMAT, "shards": list(self.retrievers)})
        return write_folder(folder, write, overwrite=overwrite, marker=MANIFEST, flag="--out")

    @classmethod
    def load(cls, folder: str | os.PathLike[str], *, minilm_model: Any = None) -> RetrievalSystem:
        """Read a folder written by :meth:`save` (``build-index``); errors name the missing or corrupt file."""
        folder = Path(folder)
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder}: no such index folder (write one with 'iclr25 mmed-rag build-index')")
        # whole or refused: a build cut short, parts of two builds, or a folder of an older version (no manifest)
        verify_manifest(folder, INDEX_PARTS, what="index folder (build-index)")
        cfg = _config_from_json(read_json(folder / "config.json", what="retrieval config"), folder / "config.json")
        vocab = Vocab(tuple(read_json(folder / "vocab.json", what="vocabulary")))
        router = Router()
        router.load_state_dict(_load_state(folder / "router.pt"))
        index = DomainIndex.load(folder / "index")
        retrievers = {}
        for shard in index.domains:
            r = CLIPRetriever(vocab, dim=cfg.dim, width=cfg.width, text_tower=cfg.text_tower, minilm_model=minilm_model)
            part = path_inside(folder, f"retriever-{shard}.pt", source=folder / "index" / "manifest.json",
                               what="retriever file")
            r.load_state_dict(_load_state(part), strict=False)
            retrievers[shard] = r.eval()
        router.eval()
        return cls(vocab, router, retrievers, index, cfg)


#: the parts every index folder holds (with ``retriever-<shard>.pt`` and the shard files), and its format
INDEX_PARTS = ("config.json", "vocab.json", "router.pt", "index/manifest.json")
INDEX_FORMAT = "iclr25-mmed-rag index/1"


def _config_from_json(raw: Any, path: Path) -> RetrievalConfig:
    """The :class:`RetrievalConfig` stored in an index folder's ``config.json``; errors name the file and the
    field (never the constructor)."""
    fields = {f.name: f for f in dataclasses.fields(RetrievalConfig)}
    if not isinstance(raw, dict):
        raise DataFileError(path, "not a retrieval config written by 'iclr25 mmed-rag build-index' (expected a "
                                  f"JSON object with the fields {', '.join(fields)})")
    unknown = sorted(set(raw) - set(fields))
    if unknown:
        raise DataFileError(path, f"unknown field(s) {', '.join(map(repr, unknown))} in the retrieval config; "
                                  f"expected only {', '.join(fields)} (is this an index folder from "
                                  "'iclr25 mmed-rag build-index'?)")
    default = RetrievalConfig()
    for k, v in raw.items():
        want = type(getattr(default, k))
        ok = isinstance(v, want) and not (want is int and isinstance(v, bool)) or (want is float and isinstance(
            v, int) and not isinstance(v, bool))
        if not ok:
            raise DataFileError(path, f"field {k!r} must be {want.__name__}, got {v!r}")
    if raw.get("text_tower", "cnn") not in ("cnn", "minilm"):
        raise DataFileError(path, f"field 'text_tower' must be 'cnn' or 'minilm', got {raw['text_tower']!r}")
    return RetrievalConfig(**raw)


def _load_state(path: Path) -> dict:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - torch raises many types for a corrupt file
        raise DataFileError(path, f"cannot read the torch weights ({type(exc).__name__})") from exc

