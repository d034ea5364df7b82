"""A trained MMed-RAG system (router, per-domain retrievers, the SFT model and the RAG-PT model) as plain arrays:
``NAME.npz`` (weights, no pickle) and ``NAME.json`` (configs, seed, the command that made it, versions, training
seconds and the metrics measured when it was made). The demo loads the one shipped in ``checkpoints/``, since a
minute of CPU cannot train a tiny VLM that benefits from retrieval (README, "Differences from the paper").

References: Xia et al., *MMed-RAG*, ICLR 2025 (§3: retrieval, selection and RAG-PT of a Med-LVLM).
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr25.utils.checkpoints import MANIFEST, file_sha256, start_save, verify_manifest, write_manifest
from iclr25.utils.io import DataFileError, atomic_write, read_json, read_npz, save_npz

from .data import MedDataset, generate
from .index import DomainIndex
from .rag import RetrievalConfig, RetrievalSystem
from .retriever import CLIPRetriever
from .router import Router
from .text import Vocab
from .vlm import TinyVLM, VLMConfig

__all__ = ["CHECKPOINTS", "DEMO_CHECKPOINT", "DEMO_CONFIG", "TrainedSystem", "save_system", "load_system",
           "make_checkpoint", "verify_system_files"]

#: Where the shipped checkpoints live (inside the package, so inside the wheel).
CHECKPOINTS = Path(__file__).parent / "checkpoints"
#: The checkpoint ``iclr25 mmed-rag demo`` loads: the median (by MMed-RAG's VQA accuracy on its own held-out split) of
#: the three runs of its command at seeds 0, 1, 2, not the best (``checkpoints/demo-runs.json``, issue 61).
DEMO_CHECKPOINT = CHECKPOINTS / "demo-seed1"


def _demo_config() -> Any:
    from .experiments import PipelineConfig

    # balanced yes/no answers (the answer prior is 0.5, so no majority answer passes for evidence); budgets
    # that a tiny VLM needs to learn to read its context (a few CPU minutes, made once)
    return PipelineConfig(n_train=300, n_db=150, n_test=60, prevalence=0.5, router_steps=60, retriever_steps=300,
                          sft_steps=1000, mine_images=100, dpo_steps=150, pooled_baseline=False, n_report_eval=0,
                          report_pairs=False)


#: The budget the demo checkpoint was trained with (:func:`make_checkpoint`).
DEMO_CONFIG = _demo_config()


@dataclasses.dataclass(frozen=True)
class TrainedSystem:
    """The retrieval system (index rebuilt over ``db``), the SFT model (π_ref, "no RAG-PT"), the RAG-PT model,
    the data-generation settings and everything ``NAME.json`` records (``meta``)."""

    system: RetrievalSystem
    sft: TinyVLM
    rag_pt: TinyVLM
    db: MedDataset
    meta: dict[str, Any]

    @property
    def config(self) -> Any:
        """The :class:`~iclr25.mmed_rag.experiments.PipelineConfig` it was trained with."""
        from .experiments import PipelineConfig

        raw = dict(self.meta["pipeline_config"])
        for k in ("contrast", "dpo_kinds", "dpo_tasks"):
            raw[k] = tuple(raw[k])
        return PipelineConfig(**raw)

    def test_split(self, n_per_domain: int, *, seed: int = 0) -> MedDataset:
        """Fresh test images from the training distribution, never seen in training (generator seeds
        1000 + ``seed``; training used seeds ``meta['seed']`` to ``meta['seed'] + 2``)."""
        cfg = self.config
        return generate(n_per_domain, size=cfg.size, contrast=cfg.contrast, prevalence=cfg.prevalence,
                        seed=1000 + seed)


def _state(prefix: str, module: torch.nn.Module) -> dict[str, np.ndarray]:
    return {f"{prefix}/{k}": v.detach().cpu().numpy() for k, v in module.state_dict().items()
            if not k.startswith("text.encoder.")}


def _load_into(module: torch.nn.Module, arrays: dict[str, np.ndarray], prefix: str, path: Path) -> None:
    want = {k for k in module.state_dict() if not k.startswith("text.encoder.")}
    got = {k[len(prefix) + 1:]: v for k, v in arrays.items() if k.startswith(prefix + "/")}
    if set(got) != want:
        missing, extra = sorted(want - set(got)), sorted(set(got) - want)
        raise DataFileError(path, f"weights of {prefix!r} do not fit the model (missing {missing[:3]}, "
                                  f"unexpected {extra[:3]})")
    module.load_state_dict({k: torch.as_tensor(v) for k, v in got.items()}, strict=False)


def save_system(path: str | os.PathLike[str], rs: RetrievalSystem, sft: TinyVLM, rag_pt: TinyVLM,
                meta: dict[str, Any]) -> Path:
    """Write ``path.npz`` (every weight as a float array; the vocabulary as strings) and ``path.json`` (``meta``:
    must hold ``pipeline_config`` and ``seed``), each atomically, then the folder's ``manifest.json`` (sizes and
    SHA-256 of both, and of the other checkpoints it listed that are unchanged), so :func:`load_system` refuses
    a pair whose files come from two saves."""
    path = Path(path)
    if "pipeline_config" not in meta or "seed" not in meta:
        raise ValueError("meta must hold 'pipeline_config' and 'seed'")
    folder = path.parent
    names = [path.with_suffix(".npz").name, path.with_suffix(".json").name]
    kept = [n for n in _listed(folder) if n not in names and _unchanged(folder, n)]
    folder.mkdir(parents=True, exist_ok=True)
    start_save(folder)  # a save cut short leaves no manifest naming a half-written pair
    arrays = {"vocab": np.asarray(rs.vocab.tokens, dtype=np.str_), **_state("router", rs.router),
              **_state("sft", sft), **_state("rag_pt", rag_pt)}
    for name, r in rs.retrievers.items():
        arrays.update(_state(f"retriever.{name}", r))
    meta = dict(meta, retrieval_config=dataclasses.asdict(rs.config), vlm_config=dataclasses.asdict(sft.config),
                shards=list(rs.retrievers))
    save_npz(path.with_suffix(".npz"), **arrays)
    with atomic_write(path.with_suffix(".json")) as f:
        f.write(json.dumps(meta, indent=1, sort_keys=True))
    write_manifest(folder, sorted([*kept, *names]), meta={"format": SYSTEM_FORMAT})
    return path.with_suffix(".npz")


#: the ``format`` in the manifest of a folder of :func:`save_system` checkpoints
SYSTEM_FORMAT = "iclr25-mmed-rag system/1"


def _listed(folder: Path) -> dict[str, Any]:
    """The parts an iclr25 manifest in ``folder`` lists (``{}`` when there is none, or it is not ours)."""
    try:
        doc = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    files = doc.get("files") if isinstance(doc, dict) and doc.get("kind") == "iclr25-checkpoint-manifest" else None
    return files if isinstance(files, dict) else {}


def _unchanged(folder: Path, name: str) -> bool:
    entry = _listed(folder).get(name)
    part = folder / name
    return (isinstance(entry, dict) and "/" not in name and part.is_file() and not part.is_symlink()
            and file_sha256(part) == entry.get("sha256"))


def verify_system_files(path: str | os.PathLike[str], *, required: bool = False) -> None:
    """Refuse (one line, :class:`iclr25.utils.checkpoints.CheckpointError`) a checkpoint ``path`` (``.npz`` +
    ``.json``) that the manifest of its folder lists with other bytes; ``required``: the folder must have one
    (the shipped checkpoints). A pair saved before 0.8 (no manifest listing it) is not checked."""
    path = Path(path)
    folder, names = path.parent, [path.with_suffix(".npz").name, path.with_suffix(".json").name]
    if required or any(n in _listed(folder) for n in names):
        verify_manifest(folder, names, what="mmed-rag checkpoint folder")


def load_system(path: str | os.PathLike[str] = DEMO_CHECKPOINT) -> TrainedSystem:
    """Read ``path.npz`` and ``path.json`` written by :func:`save_system`, regenerate the retrieval database
    it was trained with (the generator is deterministic) and index it. Errors name the file."""
    path = Path(path)
    npz, js = path.with_suffix(".npz"), path.with_suffix(".json")
    verify_system_files(path, required=path.parent.resolve() == CHECKPOINTS.resolve())
    meta = read_json(js, what="checkpoint metadata")
    arrays = read_npz(npz, required=("vocab",), what="checkpoint")
    try:
        vocab = Vocab(tuple(str(t) for t in arrays["vocab"]))
        rcfg = RetrievalConfig(**meta["retrieval_config"])
        vcfg = VLMConfig(**meta["vlm_config"])
        router = Router()
        _load_into(router, arrays, "router", npz)
        retrievers = {}
        for name in meta["shards"]:
            r = CLIPRetriever(vocab, dim=rcfg.dim, width=rcfg.width, text_tower=rcfg.text_tower)
            _load_into(r, arrays, f"retriever.{name}", npz)
            retrievers[name] = r.eval()
        models = []
        for name in ("sft", "rag_pt"):
            m = TinyVLM(vocab, vcfg)
            _load_into(m, arrays, name, npz)
            models.append(m.eval())
    except (KeyError, TypeError) as exc:
        raise DataFileError(js, f"not a checkpoint written by save_system ({type(exc).__name__}: {exc})") from exc
    pc, seed = meta["pipeline_config"], int(meta["seed"])
    db = generate(pc["n_db"], size=pc["size"], contrast=tuple(pc["contrast"]), label_noise=pc["label_noise"],
                  prevalence=pc["prevalence"], seed=seed + 1)  # generate_splits' database split
    rs = RetrievalSystem(vocab, router.eval(), retrievers, DomainIndex(), rcfg).reindex(db)
    return TrainedSystem(rs, models[0], models[1], db, meta)


def make_checkpoint(out: str | os.PathLike[str], *, seed: int = 0, config: Any = None,
                    command: str = "") -> tuple[Path, dict[str, float]]:
    """Train the whole pipeline at ``config`` (default :data:`DEMO_CONFIG`) with ``seed`` and save the
    system to ``out`` (``out.npz``, ``out.json``). Returns the path and the pipeline's metrics."""
    from importlib.metadata import version

    from iclr25.utils.seeding import seed_everything

    from .experiments import run_pipeline

    cfg = config or DEMO_CONFIG
    seed_everything(seed)
    t0, c0 = time.perf_counter(), time.process_time()
    res = run_pipeline(cfg, seed=seed)
    seconds = {"wall": time.perf_counter() - t0, "cpu_main_process": time.process_time() - c0}
    meta = {"pipeline_config": dataclasses.asdict(cfg), "seed": seed, "command": command,
            "train_yes_share": float(res.splits.train.labels.mean()), "seconds": seconds,
            "load_at_start": list(os.getloadavg()), "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "versions": {"iclr25-mmed-rag": version("iclr25-mmed-rag"), "torch": torch.__version__,
                         "numpy": np.__version__, "python": platform.python_version()},
            "metrics": {k: (v if np.isfinite(v) else None) for k, v in res.metrics.items()}}
    return save_system(out, res.system, res.sft, res.rag_pt, meta), res.metrics
