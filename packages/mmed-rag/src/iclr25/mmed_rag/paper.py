"""The paper rung (issue 59): MMed-RAG at the paper's configuration on the paper's data, a local LLaVA-Med-style
Hugging Face folder as the Med-LVLM.

``iclr25 claims mmed-rag --rung paper`` reads the data folder ``$ICLR25_MMED_RAG_DATA`` in the layout of the
reference repository's ``data/`` folder (:func:`read_paper_data`), with the images beside it:

- ``training/retriever/<domain>/*.json`` (not ``*val*``): the retrievers' (image, report) pairs and the
  retrieval database, a JSON list of ``{"report", "image_path" (a path or a list of paths) or "image"}``;
- ``training/alignment/<domain>/*.json``: the RAG-PT preference pairs, a JSON list of ``{"image",
  "conversations": [{"from": "human", "value": prompt}, {"from": "gpt", "value": chosen}],
  "rejected_conversations": [same, with the rejected answer], "rejected_noised": 0 or 1}`` (1: a cross-modality
  pair D_cm, whose rejected image is Gaussian noise);
- ``test/vqa/<dataset>_test.jsonl``: one ``{"question", "answer", "image"}`` per line, ``<dataset>`` one of
  :data:`DATASET_DOMAIN` (``iuxray``, ``mimic``, ``harvard``, ``quilt-1m``, ``pmc-oa``); answers other than yes / no
  (Harvard's "The summary does not provide this information.") are counted and left out;
- ``images/<domain>/``: every image a JSON file names, at the path it gives (``<domain>``: radiology, pathology or
  ophthalmology).

The run (:func:`run_paper_rung`): the package's router and per-domain CLIP retrievers trained on the retriever
pairs (lr 1e-4, batch 512, 360 epochs as the reference's ``finetune_clip.sh``) index the same reports; each test
image gets fixed-k (k = 3) and gap-rule (γ = 0.005) reports; the base model answers with fixed-k reports (standard
RAG) and without retrieval; RAG-PT trains LoRA adapters (r 128, α 256, dropout 0.05, lr 1e-7, projector lr 2e-5,
3 epochs, batch 1, cosine schedule with 3 % warm-up, DPO β = 0.1 against the base model) on the preference pairs;
the RAG-PT model answers with the gap rule's reports (MMed-RAG). In a smoke run (``--smoke``) the same code runs
one optimiser step of each model on the first few items of each file, on a tiny random LLaVA and a tiny folder in
this layout written to a temporary folder when the two variables are not set (:func:`write_tiny_llava`,
:func:`write_tiny_paper_data`).

Differences from the reference: the retrievers are the package's small CLIP (a CNN image tower on 32 × 32 images,
a word-CNN text tower) instead of OpenCLIP-RN50; the router is the package's, trained on the retriever images; one
RAG-PT model for every domain and task the alignment folder holds; sequences are not cut at 1,024 tokens; report
generation is not scored. Not run at 7B here: the path is tested on the CPU at one step with a tiny random LLaVA.

References: Xia et al., *MMed-RAG*, ICLR 2025 (§3, Table 1); the reference repository's ``data/`` layout,
``scripts/finetune_clip.sh`` and ``scripts/train_dpo_2stages.sh`` (read, not copied).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["PAPER_DATA_ENV", "PAPER_BASE_ENV", "check_paper_data", "PaperConfig", "PAPER", "SMOKE", "PaperData", "PaperDataError", "DATASET_DOMAIN", "read_paper_data",
           "run_paper_rung", "write_tiny_llava", "write_tiny_paper_data"]

#: Where the paper rung finds the paper's data (MIMIC-CXR, IU-Xray, Harvard-FairVLMed, Quilt-1M, PMC-OA images and
#: the reference repo's VQA / report / preference JSON: credentialed, not shipped) and its base model (a local
#: Hugging Face folder of LLaVA-Med-1.5 7B)
PAPER_DATA_ENV, PAPER_BASE_ENV = "ICLR25_MMED_RAG_DATA", "ICLR25_MMED_RAG_BASE"

#: The test sets of the reference repo (``test/vqa/<name>_test.jsonl``) and the domain of each.
DATASET_DOMAIN = {"iuxray": "radiology", "mimic": "radiology", "harvard": "ophthalmology",
                  "quilt-1m": "pathology", "pmc-oa": "pathology"}
#: LoRA on every linear layer of the language model (LLaVA's ``find_all_linear_names``: not the vision tower or
#: the projector, which trains in full at its own learning rate).
LORA_TARGETS = r".*language_model.*\.(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)"


@dataclasses.dataclass(frozen=True)
class PaperConfig:
    """The paper rung's settings: RAG-PT as ``scripts/train_dpo_2stages.sh``, retrievers as
    ``scripts/finetune_clip.sh``; ``max_steps`` and ``limit`` (items read per file) shrink a smoke run."""

    lora_r: int = 128
    lora_alpha: int = 256
    lora_dropout: float = 0.05
    lr: float = 1e-7
    projector_lr: float = 2e-5
    epochs: int = 3
    batch_size: int = 1
    warmup_ratio: float = 0.03
    beta: float = 0.1
    retriever_lr: float = 1e-4
    retriever_batch: int = 512
    retriever_epochs: int = 360
    router_steps: int = 150
    k: int = 3
    gamma: float = 0.005
    retriever_image_size: int = 32
    eval_batch: int = 8
    max_steps: int | None = None
    limit: int | None = None


PAPER = PaperConfig()
#: ``--smoke``: one optimiser step of the router, each retriever and RAG-PT, four items per file.
SMOKE = dataclasses.replace(PAPER, retriever_epochs=1, router_steps=1, max_steps=1, limit=4)


class PaperDataError(ValueError):
    """A file of the paper's data folder that does not match the reference repo's layout (one line naming it)."""


@dataclasses.dataclass(frozen=True)
class Pair:
    """One RAG-PT preference pair: the prompt (``<image>`` removed), chosen and rejected answers, ``noised``: the
    rejected side sees a noise image (D_cm)."""

    domain: str
    image: Path
    prompt: str
    chosen: str
    rejected_prompt: str
    rejected: str
    noised: bool


@dataclasses.dataclass(frozen=True)
class VQAItem:
    dataset: str
    domain: str
    image: Path
    question: str
    answer: int  #: 1 yes, 0 no


@dataclasses.dataclass(frozen=True)
class PaperData:
    """The paper's data as read: retrieval database rows ``(domain, image, report)``, preference pairs, yes/no
    test items and the number of test items left out per dataset (answers other than yes / no)."""

    root: Path
    db: list[tuple[str, Path, str]]
    pairs: list[Pair]
    vqa: list[VQAItem]
    skipped: dict[str, int]


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PaperDataError(f"{path}: not readable JSON ({str(exc).splitlines()[0]})") from None


def _text(path: Path, i: int, row: Any, field: str) -> str:
    v = row.get(field) if isinstance(row, dict) else None
    if not isinstance(v, str) or not v.strip():
        raise PaperDataError(f"{path}: item {i}: field {field!r} must be a non-empty string, got {v!r:.60}")
    return v


def _image(root: Path, domain: str, path: Path, i: int, rel: str, field: str) -> Path:
    p = root / "images" / domain / rel
    if not p.is_file():
        raise PaperDataError(f"{path}: item {i}: field {field!r}: image {p} is missing (images go under "
                             f"images/{domain}/ at the path the file gives)")
    return p


def _domain_dirs(folder: Path, what: str) -> list[Path]:
    from .data import DOMAINS

    if not folder.is_dir():
        raise PaperDataError(f"{folder}: no such folder; the paper's data needs {what} there")
    dirs = sorted(p for p in folder.iterdir() if p.is_dir())
    bad = [p.name for p in dirs if p.name not in DOMAINS]
    if bad:
        raise PaperDataError(f"{folder}: folder(s) {bad} are not domains (expected {', '.join(DOMAINS)})")
    return dirs


def _list(path: Path) -> list:
    rows = _json(path)
    if not isinstance(rows, list):
        raise PaperDataError(f"{path}: expected a JSON list of items, got {type(rows).__name__}")
    return rows


def _answer_text(path: Path, i: int, row: Any, field: str) -> tuple[str, str]:
    conv = row.get(field) if isinstance(row, dict) else None
    if (not isinstance(conv, list) or len(conv) < 2 or not all(isinstance(t, dict) for t in conv[:2])
            or conv[0].get("from") != "human" or conv[1].get("from") != "gpt"):
        raise PaperDataError(f"{path}: item {i}: field {field!r} must be a list of a 'human' turn and a 'gpt' turn")
    return _text(path, i, conv[0], "value").replace("<image>", "").strip(), _text(path, i, conv[1], "value").strip()


def yes_no(answer: str) -> int | None:
    """1 for an answer whose first word is yes, 0 for no, None otherwise."""
    first = re.match(r"\s*([a-z]+)", answer.lower())
    return {"yes": 1, "no": 0}.get(first.group(1)) if first else None


def read_paper_data(root: str | os.PathLike[str], *, limit: int | None = None) -> PaperData:
    """The paper's data folder (the module's docstring gives the layout); ``limit``: the first ``limit`` items of
    each file (a smoke run). Every malformed file, item or missing image is one line naming the file, the item and
    the field."""
    root = Path(root)
    db: list[tuple[str, Path, str]] = []
    for d in _domain_dirs(root / "training" / "retriever", "training/retriever/<domain>/*.json"):
        for path in sorted(d.glob("*.json")):
            if "val" in path.stem:
                continue
            for i, row in enumerate(_list(path)[:limit]):
                report = " ".join(_text(path, i, row, "report").split())
                field = "image_path" if isinstance(row, dict) and "image_path" in row else "image"
                rels = row.get(field)
                rels = rels if isinstance(rels, list) else [rels]
                if not rels or not all(isinstance(r, str) and r for r in rels):
                    raise PaperDataError(f"{path}: item {i}: field 'image_path' or 'image' must be a path or a list "
                                         f"of paths, got {row.get(field)!r:.60}")
                db += [(d.name, _image(root, d.name, path, i, r, field), report) for r in rels]
    if not db:
        raise PaperDataError(f"{root}/training/retriever: no <domain>/*.json with (image, report) items")
    pairs: list[Pair] = []
    for d in _domain_dirs(root / "training" / "alignment", "training/alignment/<domain>/*.json"):
        for path in sorted(d.glob("*.json")):
            for i, row in enumerate(_list(path)[:limit]):
                img = _image(root, d.name, path, i, _text(path, i, row, "image"), "image")
                prompt, chosen = _answer_text(path, i, row, "conversations")
                rprompt, rejected = _answer_text(path, i, row, "rejected_conversations")
                noised = row.get("rejected_noised", 0)
                if noised not in (0, 1, True, False):
                    raise PaperDataError(f"{path}: item {i}: field 'rejected_noised' must be 0 or 1, got {noised!r}")
                pairs.append(Pair(d.name, img, prompt, chosen, rprompt, rejected, bool(noised)))
    if not pairs:
        raise PaperDataError(f"{root}/training/alignment: no <domain>/*.json with preference pairs")
    vqa: list[VQAItem] = []
    skipped: dict[str, int] = {}
    files = sorted((root / "test" / "vqa").glob("*_test.jsonl"))
    if not files:
        raise PaperDataError(f"{root}/test/vqa: no <dataset>_test.jsonl (datasets: {', '.join(DATASET_DOMAIN)})")
    for path in files:
        name = path.name.removesuffix("_test.jsonl")
        if name not in DATASET_DOMAIN:
            raise PaperDataError(f"{path}: unknown dataset {name!r} (expected one of {', '.join(DATASET_DOMAIN)})")
        dom = DATASET_DOMAIN[name]
        lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()][:limit]
        for i, line in enumerate(lines):
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise PaperDataError(f"{path}: line {i + 1} is not JSON ({exc.msg})") from None
            ans = yes_no(_text(path, i, row, "answer"))
            if ans is None:
                skipped[name] = skipped.get(name, 0) + 1
                continue
            q = _text(path, i, row, "question").replace("<image>", "").strip()
            vqa.append(VQAItem(name, dom, _image(root, dom, path, i, _text(path, i, row, "image"), "image"), q, ans))
    if not vqa:
        raise PaperDataError(f"{root}/test/vqa: no item with a yes/no answer")
    return PaperData(root, db, pairs, vqa, skipped)


def check_paper_data() -> tuple[Path, Path]:
    """The paper rung's inputs, checked before any work: the data folder (``$ICLR25_MMED_RAG_DATA``, the reference
    repo's layout: :func:`iclr25.mmed_rag.paper.read_paper_data`) and the base model's folder
    (``$ICLR25_MMED_RAG_BASE``); one line naming what is missing. Returns both."""
    found = []
    for env, what in ((PAPER_DATA_ENV, "the paper's data (MIMIC-CXR, IU-Xray, Harvard-FairVLMed, Quilt-1M, PMC-OA "
                                       "images and the reference repo's JSON)"),
                      (PAPER_BASE_ENV, "the base model (a local Hugging Face folder of LLaVA-Med-1.5 7B)")):
        path = os.environ.get(env, "").strip()
        if not path:
            raise FileNotFoundError(f"${env}: not set; the paper rung needs {what} there (not shipped)")
        if not os.path.isdir(path):
            raise FileNotFoundError(f"${env}: {path} is not a folder; the paper rung needs {what} there")
        found.append(Path(path))
    return found[0], found[1]


# ----------------------------------------------------------------------------------------------- the run
def _load(paths: list[Path], size: int) -> np.ndarray:
    from .userdata import _load_image

    return np.stack([_load_image(p, size) for p in paths])


def _retrieval(data: PaperData, cfg: PaperConfig, seed: int, M: dict[str, float]) -> tuple[list, list]:
    """Router and per-domain retrievers trained on the retriever pairs, indexing their reports; the fixed-k and
    gap-rule reports of each test item."""
    from .data import DOMAINS, MedDataset, domain_index
    from .rag import RetrievalConfig, RetrievalSystem
    from .userdata import DEFAULT_VOCABULARY, FindingVocabulary

    vocab = FindingVocabulary.from_mapping(DEFAULT_VOCABULARY)
    reports = [r for _, _, r in data.db]
    labels = vocab.labels(reports)
    db = MedDataset(_load([p for _, p, _ in data.db], cfg.retriever_image_size),
                    np.array([domain_index(d) for d, _, _ in data.db], np.int64), labels, labels.copy(), reports,
                    vocabulary=vocab)
    largest = max(int(np.sum(db.domains == i)) for i in range(len(DOMAINS)))
    steps = cfg.retriever_epochs * math.ceil(largest / cfg.retriever_batch)
    rcfg = RetrievalConfig(router_steps=cfg.router_steps, retriever_steps=steps, batch_size=cfg.retriever_batch,
                           lr=cfg.retriever_lr)
    rs = RetrievalSystem.fit(db, db, config=rcfg, seed=seed)
    paths = sorted({it.image for it in data.vqa})
    where = {p: i for i, p in enumerate(paths)}
    images = _load(paths, cfg.retriever_image_size)
    rows = [where[it.image] for it in data.vqa]
    fixed = rs.retrieve(images, k_max=cfg.k, rule="fixed")
    gap = rs.retrieve(images, k_max=cfg.k, rule="gap", gamma=cfg.gamma)
    dom_of = {it.image: it.domain for it in data.vqa}
    truth = np.array([domain_index(dom_of[p]) for p in paths])
    M.update(router_accuracy=float(np.mean(gap.domains == truth)), retriever_steps=float(steps),
             mean_k_gap=float(np.mean(gap.selection.k)))
    return [fixed.reports[r] for r in rows], [gap.reports[r] for r in rows]


def _yes_probs(vlm: Any, items: list[VQAItem], contexts: list[list[str]] | None, cfg: PaperConfig) -> np.ndarray:
    from .hf import rag_prompt

    side = int(vlm.model.config.vision_config.image_size)
    out = []
    for s in range(0, len(items), cfg.eval_batch):
        chunk = range(s, min(s + cfg.eval_batch, len(items)))
        prompts = [rag_prompt(items[i].question, [] if contexts is None else contexts[i], domain=items[i].domain)
                   for i in chunk]
        out.append(vlm.yes_probability(vlm.pixels(_load([items[i].image for i in chunk], side)), prompts))
    return np.concatenate(out)


def _pair_pixels(vlm: Any, pairs: list[Pair], idx: Any, seed: int, side: int) -> tuple[Any, Any]:
    """Chosen pixels and rejected pixels (the same image, or N(0, 1) noise clipped to [0, 1] in the processed
    image's place for a D_cm pair, as the reference's ``generate_gaussian_noise``; seeded per pair)."""
    import torch

    pv = vlm.pixels(_load([pairs[i].image for i in idx], side))
    rej = pv.clone()
    for j, i in enumerate(idx):
        if pairs[i].noised:
            g = torch.Generator().manual_seed(seed * 1_000_003 + int(i))
            rej[j] = torch.randn(pv[j].shape, generator=g).clamp(0, 1)
    return pv, rej


def train_rag_pt(vlm: Any, pairs: list[Pair], cfg: PaperConfig, *, seed: int = 0, log: Any = None
                 ) -> tuple[Any, dict[str, float]]:
    """RAG-PT of ``vlm`` (:class:`~iclr25.mmed_rag.hf.HFVLM`) on the preference pairs: LoRA adapters and the
    projector trained by DPO against the base model (π_ref's log-probabilities computed once, before any update),
    AdamW, cosine schedule with warm-up, ``cfg.epochs`` over the shuffled pairs (at most ``cfg.max_steps``). The
    adapters are merged at the end. Returns the trained model and the loss statistics."""
    import peft
    import torch
    from transformers import get_cosine_schedule_with_warmup

    from iclr25.utils.device import on_accelerator

    from .dpo import dpo_loss

    say = log or (lambda *_: None)
    torch.manual_seed(seed)
    side = int(vlm.model.config.vision_config.image_size)
    model = peft.get_peft_model(vlm.model, peft.LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha,
                                                           lora_dropout=cfg.lora_dropout,
                                                           target_modules=LORA_TARGETS))
    proj = [p for n, p in model.named_parameters() if "multi_modal_projector" in n]
    for p in proj:
        p.requires_grad_(True)
    lora = [p for n, p in model.named_parameters() if p.requires_grad and "multi_modal_projector" not in n]
    if on_accelerator(None):
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    pol = dataclasses.replace(vlm, model=model)
    chosen, rejected = [p.chosen for p in pairs], [p.rejected for p in pairs]
    prompts, rprompts = [p.prompt for p in pairs], [p.rejected_prompt for p in pairs]
    b = cfg.batch_size
    model.eval()
    rc, rr = [], []
    with torch.no_grad(), model.disable_adapter():  # π_ref: the base model, before any update of the projector
        for s in range(0, len(pairs), max(b, cfg.eval_batch)):
            idx = list(range(s, min(s + max(b, cfg.eval_batch), len(pairs))))
            pc, pr = _pair_pixels(pol, pairs, idx, seed, side)
            rc.append(pol.answer_logps(pc, [prompts[i] for i in idx], [chosen[i] for i in idx]).float().cpu())
            rr.append(pol.answer_logps(pr, [rprompts[i] for i in idx], [rejected[i] for i in idx]).float().cpu())
    ref_c, ref_r = torch.cat(rc), torch.cat(rr)
    per_epoch = math.ceil(len(pairs) / b)
    total = cfg.epochs * per_epoch if cfg.max_steps is None else min(cfg.max_steps, cfg.epochs * per_epoch)
    opt = torch.optim.AdamW([{"params": lora, "lr": cfg.lr}, {"params": proj, "lr": cfg.projector_lr}],
                            weight_decay=0.0)
    sched = get_cosine_schedule_with_warmup(opt, math.ceil(cfg.warmup_ratio * total), total)
    gen = np.random.default_rng(seed)
    order = np.concatenate([gen.permutation(len(pairs)) for _ in range(cfg.epochs)])
    model.train()
    hist = []
    for step in range(total):
        idx = [int(i) for i in order[step * b:(step + 1) * b]]  # never empty: total * b <= len(order) + b - 1
        pc, pr = _pair_pixels(pol, pairs, idx, seed, side)
        lc = pol.answer_logps(pc, [prompts[i] for i in idx], [chosen[i] for i in idx])
        lr = pol.answer_logps(pr, [rprompts[i] for i in idx], [rejected[i] for i in idx])
        out = dpo_loss(lc, lr, ref_c[idx].to(lc.device, lc.dtype), ref_r[idx].to(lc.device, lc.dtype), beta=cfg.beta)
        opt.zero_grad()
        out.loss.backward()
        opt.step()
        sched.step()
        hist.append(float(out.loss.detach().cpu()))
        if step % 100 == 0 or step == total - 1:
            say(f"RAG-PT step {step + 1}/{total}: loss {hist[-1]:.4f}")
    merged = model.merge_and_unload().eval()
    return dataclasses.replace(vlm, model=merged), {
        "dpo_steps": float(total), "dpo_first_loss": hist[0], "dpo_loss": float(np.mean(hist[-100:]))}


def _folders(cfg: PaperConfig, scratch: Path | None) -> tuple[Path, Path]:
    """The data and base-model folders: ``$ICLR25_MMED_RAG_DATA`` / ``$ICLR25_MMED_RAG_BASE`` (checked by
    :func:`check_paper_data`), or in a smoke run with neither set a tiny random LLaVA and a
    tiny folder in the paper's layout written into ``scratch``."""
    unset = not os.environ.get(PAPER_DATA_ENV, "").strip() and not os.environ.get(PAPER_BASE_ENV, "").strip()
    if cfg.max_steps is not None and unset and scratch is not None:
        write_tiny_paper_data(scratch / "data")
        write_tiny_llava(scratch / "base", scratch / "data")
        return scratch / "data", scratch / "base"
    return check_paper_data()


def run_paper_rung(*, seed: int = 0, smoke: bool | None = None, log: Any = None) -> dict[str, float]:
    """One seed of the paper rung: read the data, retrieve, evaluate the base model (no retrieval; fixed-k
    reports: standard RAG), RAG-PT, evaluate MMed-RAG (the RAG-PT model with the gap rule's reports). Returns the
    metrics (accuracies overall and per test set, yes-rates, the gap rule's mean k, router accuracy, pair counts,
    DPO losses). ``smoke`` (default: ``$ICLR25_SMOKE``): :data:`SMOKE` instead of :data:`PAPER`."""
    import tempfile

    from iclr25.utils.claims import smoke_run
    from iclr25.utils.device import on_accelerator

    from .hf import load_hf_vlm

    cfg = SMOKE if (smoke_run() if smoke is None else smoke) else PAPER
    with tempfile.TemporaryDirectory(prefix="mmed-rag-paper-") as tmp:
        data_dir, base = _folders(cfg, Path(tmp))
        data = read_paper_data(data_dir, limit=cfg.limit)
        M: dict[str, float] = {"vqa_items": float(len(data.vqa)), "vqa_skipped": float(sum(data.skipped.values())),
                               "pairs": float(len(data.pairs)), "pairs_cm": float(sum(p.noised for p in data.pairs)),
                               "db_reports": float(len(data.db))}
        ctx_fixed, ctx_gap = _retrieval(data, cfg, seed, M)
        acc = {"dtype": "bfloat16", "device_map": "auto"} if on_accelerator(None) else {"device": "cpu"}
        vlm = load_hf_vlm(base, flag=f"${PAPER_BASE_ENV}", **acc)
        y = np.array([it.answer for it in data.vqa])
        probs = {"no_rag": _yes_probs(vlm, data.vqa, None, cfg), "standard_rag": _yes_probs(vlm, data.vqa, ctx_fixed, cfg)}
        vlm, stats = train_rag_pt(vlm, data.pairs, cfg, seed=seed, log=log)
        M.update(stats)
        probs["mmed_rag"] = _yes_probs(vlm, data.vqa, ctx_gap, cfg)
    prior = [v for v in (yes_no(p.chosen) for p in data.pairs) if v is not None]
    majority = int(np.mean(prior) >= 0.5) if prior else 1
    M["acc_answer_prior"] = float(np.mean(y == majority))
    names = np.array([it.dataset for it in data.vqa])
    for key, p in probs.items():
        ans = (p > 0.5).astype(int)
        M[f"acc_{key}"] = float(np.mean(ans == y))
        M[f"yes_rate_{key}"] = float(np.mean(ans))
        for name in sorted(set(names)):
            M[f"acc_{key}_{name}"] = float(np.mean(ans[names == name] == y[names == name]))
    return M


# ------------------------------------------------------------------------------ tiny stand-ins (--smoke, tests)
def write_tiny_paper_data(folder: str | os.PathLike[str], *, seed: int = 0) -> Path:
    """A tiny folder in the paper's layout (:func:`read_paper_data`): per domain 4 generated images (PNG), two of
    them the retriever pairs, two the test images of one test set (three yes/no questions, and one answer that
    is neither), two preference pairs (one D_cm with a noise image, one D_oa)."""
    from PIL import Image

    from .data import DOMAINS, generate
    from .hf import rag_prompt

    root = Path(folder)
    ds = generate(4, seed=seed)
    test_of = {"radiology": "iuxray", "pathology": "quilt-1m", "ophthalmology": "harvard"}
    for d in DOMAINS:
        rows = np.flatnonzero(ds.domains == DOMAINS.index(d))
        for sub in ("images/" + d, "training/retriever/" + d, "training/alignment/" + d, "test/vqa"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        names = []
        for j, i in enumerate(rows):
            names.append(f"study{j}/0.png")
            (root / "images" / d / f"study{j}").mkdir(exist_ok=True)
            Image.fromarray(np.round(ds.images[i].transpose(1, 2, 0) * 255).astype(np.uint8)).save(
                root / "images" / d / names[-1])
        (root / "training/retriever" / d / f"{d}_train.json").write_text(json.dumps(
            [{"id": f"study{j}", "report": ds.reports[rows[j]], "image_path": [names[j]], "split": "train"}
             for j in (0, 1)], indent=1))
        pairs = []
        for j, noised in ((0, 1), (1, 0)):
            i = rows[j]
            yes = bool(ds.labels[i, 0])
            prompt = "<image>\n" + rag_prompt(ds.question(i, 0), [ds.reports[rows[1 - j]]], domain=d)
            good, bad = ("Yes." if yes else "No."), ("No." if yes else "Yes.")
            turn = [{"from": "human", "value": prompt}, {"from": "gpt", "value": good}]
            pairs.append({"id": j, "image": names[j], "conversations": turn, "rejected_conversations":
                          [turn[0], {"from": "gpt", "value": good if noised else bad}], "rejected_noised": noised})
        (root / "training/alignment" / d / f"{d}_vqa.json").write_text(json.dumps(pairs, indent=1))
        lines = [{"question_id": n, "question": ds.question(rows[j], f) + "\n<image>",
                  "answer": "Yes." if ds.labels[rows[j], f] else "No.", "image": names[j],
                  "report": ds.reports[rows[j]]} for n, (j, f) in enumerate(((2, 0), (2, 1), (3, 0)))]
        lines.insert(1, {"question_id": 9, "question": "is it recent ?\n<image>", "answer": "The summary does not "
                         "provide this information.", "image": names[3], "report": ds.reports[rows[3]]})
        (root / "test/vqa" / f"{test_of[d]}_test.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return root


#: :func:`iclr25.utils.hf.tiny_llava`'s arguments for this package's tiny LLaVA-Med stand-in (after its vocabulary):
#: ``<pad>``/``<unk>``/``<image>`` first, punctuation split off, a 1-layer CLIP read at its last layer
TINY_LLAVA = {"unk": "<unk>", "pad": "<pad>", "punctuation": True, "vision_layers": 1, "vision_feature_layer": -1,
              "text_ids": {"pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 1}}


def write_tiny_llava(folder: str | os.PathLike[str], data: str | os.PathLike[str] | None = None, *,
                     seed: int = 0) -> Path:
    """A tiny random ``LlavaForConditionalGeneration`` (a 1-layer CLIP vision tower on 32 × 32 images, a 2-layer
    Llama of width 32) with an offline word-level tokenizer whose words are those of the RAG prompts and of the
    text in ``data`` (a folder of JSON files), saved as a Hugging Face folder: a stand-in for LLaVA-Med."""
    from tokenizers import pre_tokenizers

    from iclr25.utils.hf import write_tiny_llava as write

    from .data import DOMAINS
    from .hf import rag_prompt

    pre = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    texts = [rag_prompt("q", r, domain=d) for d in DOMAINS for r in ([], ["r"])] + ["yes no Yes. No."]
    if data is not None:
        texts += [p.read_text(encoding="utf-8") for p in sorted(Path(data).rglob("*.json*"))]
    words = sorted({w for t in texts for w, _ in pre.pre_tokenize_str(t)})
    toks = ["<pad>", "<unk>", "<image>", *[w for w in words if w not in ("<pad>", "<unk>", "<image>")]]
    return write(folder, toks, **TINY_LLAVA, seed=seed)
