"""Packed batches, pretraining and task fine-tunes with replay, greedy exact-match evaluation.

Training minimises the next-token cross entropy over the tokens a document supervises,

    L(θ) = - Σ_t m_t log p_θ(x_t | x_<t)  /  Σ_t m_t,

where ``m_t = 1`` on every token of a biography and only on the answer (and ``[EOS]``) of a QA, as in the
paper's QA fine-tunes. Documents are packed into rows of ``seq_len`` tokens (block-diagonal attention,
positions restarting per document: see :mod:`.model`). AdamW with weight decay on matrices, linear warm-up
then cosine decay to 10% of the peak learning rate.

References: Allen-Zhu & Li, *Physics of Language Models: Part 3.1/3.2* (ICLR 2025), §2 and App. A
(AdamW, cosine schedule, QA loss on answers only, mixed training of bios and QAs).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from iclr25.utils.device import torch_device
from iclr25.utils.optim import Adam
from iclr25.utils.progress import progress

from .model import RotaryGPT
from .tasks import QA, answer_label, cot_prefix, parse_task, task_labels
from .vocabulary import EOS, PAD, WordTokenizer

__all__ = ["AdamW", "Docs", "PackedBatches", "TrainConfig", "TrainStats", "encode_docs", "pack", "train_steps",
           "EvalResult", "evaluate", "evaluate_cot_prompt", "generate"]


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Optimiser settings of one training stage."""

    epochs: int = 30
    batch_size: int = 32
    seq_len: int = 128
    lr: float = 1e-3
    weight_decay: float = 0.1
    warmup_fraction: float = 0.05
    min_lr_ratio: float = 0.1
    betas: tuple[float, float] = (0.9, 0.98)

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "seq_len"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        for name in ("lr",):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
        if not (0.0 <= self.weight_decay < 10) or not (0.0 <= self.warmup_fraction < 1.0):
            raise ValueError("weight_decay must be in [0, 10) and warmup_fraction in [0, 1)")


@dataclasses.dataclass(frozen=True)
class Docs:
    """Tokenised documents: ids (ending in ``[EOS]``) and the loss mask of each token as a target."""

    ids: list[list[int]]
    mask: list[list[int]]

    def __add__(self, other: Docs) -> Docs:
        return Docs(self.ids + other.ids, self.mask + other.mask)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def n_tokens(self) -> int:
        return sum(len(x) for x in self.ids)


def encode_docs(tok: WordTokenizer, bios: Sequence[str] = (), qas: Sequence[QA] = ()) -> Docs:
    """Biographies supervise every token after the first; QAs supervise the answer and ``[EOS]``."""
    ids, mask = [], []
    for b in tok.encode_batch(list(bios)) if bios else []:
        ids.append(b + [EOS])
        mask.append([0] + [1] * len(b))
    if qas:
        prompts = tok.encode_batch([q.prompt for q in qas])
        answers = tok.encode_batch([q.answer for q in qas])
        for p, a in zip(prompts, answers, strict=True):
            ids.append(p + a + [EOS])
            mask.append([0] * len(p) + [1] * (len(a) + 1))
    return Docs(ids, mask)


@dataclasses.dataclass(frozen=True)
class PackedBatches:
    """Rows of packed documents: token ids, per-document positions, document index (-1 = padding) and the
    target mask, each of shape ``(rows, seq_len)``."""

    ids: torch.Tensor
    pos: torch.Tensor
    doc: torch.Tensor
    mask: torch.Tensor

    def to(self, device) -> PackedBatches:
        """The same rows on ``device``."""
        return PackedBatches(*(t.to(device) for t in (self.ids, self.pos, self.doc, self.mask)))

    @property
    def n_rows(self) -> int:
        return int(self.ids.shape[0])

    @property
    def n_tokens(self) -> int:
        return int((self.doc >= 0).sum())


def pack(docs: Docs, seq_len: int, *, rng: np.random.Generator, device=None) -> PackedBatches:
    """Shuffle the documents and pack them greedily into rows of ``seq_len`` tokens (a document never spans
    two rows; the rest of a row is padding). The rows are built on the CPU (numpy) and put on ``device``
    (``None``: left on the CPU; :func:`train_steps` moves each mini-batch to the model's device)."""
    n = len(docs)
    if n == 0:
        raise ValueError("no documents to train on")
    lengths = np.fromiter((len(x) for x in docs.ids), dtype=np.int64, count=n)
    if lengths.max() > seq_len:
        raise ValueError(f"a document of {int(lengths.max())} tokens exceeds seq_len = {seq_len}")
    order = rng.permutation(n)
    row_of = np.empty(n, dtype=np.int64)
    start_of = np.empty(n, dtype=np.int64)
    row, fill = 0, 0
    for k in order:
        L = lengths[k]
        if fill + L > seq_len:
            row, fill = row + 1, 0
        row_of[k], start_of[k] = row, fill
        fill += L
    R = row + 1
    ids = np.full((R, seq_len), PAD, dtype=np.int64)
    pos = np.zeros((R, seq_len), dtype=np.int64)
    doc = np.full((R, seq_len), -1, dtype=np.int64)
    mask = np.zeros((R, seq_len), dtype=np.float32)
    flat_ids = np.concatenate([np.asarray(x) for x in docs.ids])
    flat_mask = np.concatenate([np.asarray(x, dtype=np.float32) for x in docs.mask])
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    doc_of_tok = np.repeat(np.arange(n), lengths)
    within = np.arange(len(flat_ids)) - offsets[doc_of_tok]
    r = row_of[doc_of_tok]
    c = start_of[doc_of_tok] + within
    ids[r, c] = flat_ids
    pos[r, c] = within
    doc[r, c] = doc_of_tok
    mask[r, c] = flat_mask
    out = PackedBatches(torch.from_numpy(ids), torch.from_numpy(pos), torch.from_numpy(doc), torch.from_numpy(mask))
    return out if device is None else out.to(device)


@dataclasses.dataclass(frozen=True)
class TrainStats:
    """What a training stage did: steps, supervised tokens, final loss, seconds, tokens/s (all tokens)."""

    steps: int
    tokens: int
    final_loss: float
    seconds: float
    tokens_per_s: float
    losses: tuple[float, ...] = ()


def AdamW(groups: Sequence[dict], *, lr: float, betas: tuple[float, float] = (0.9, 0.999),  # noqa: N802
          eps: float = 1e-8) -> Adam:
    """AdamW (Loshchilov & Hutter 2019) over parameter groups ``{"params": [...], "weight_decay": λ}``, as
    ``torch.optim.AdamW`` computes it: the federation's shared optimiser (:class:`iclr25.utils.optim.Adam` with
    decoupled weight decay; no ``torch._dynamo`` import, about 2 s of CPU per process). The learning rate is set
    before every step (``set_lr``)."""
    return Adam(groups, lr=lr, betas=betas, eps=eps, decoupled=True)


def _optimizer(model: torch.nn.Module, cfg: TrainConfig) -> Adam:
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    rest = [p for n, p in model.named_parameters() if p.dim() < 2]
    return AdamW([{"params": decay, "weight_decay": cfg.weight_decay}, {"params": rest, "weight_decay": 0.0}],
                 lr=cfg.lr, betas=cfg.betas)


def lr_at(step: int, total: int, cfg: TrainConfig) -> float:
    """Linear warm-up over ``warmup_fraction`` of the steps, then cosine decay to ``min_lr_ratio * lr``."""
    warm = max(1, int(cfg.warmup_fraction * total))
    if step < warm:
        return cfg.lr * (step + 1) / warm
    t = (step - warm) / max(1, total - warm)
    return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * t)))


def train_steps(model: RotaryGPT, batches: PackedBatches, cfg: TrainConfig, *, desc: str = "train",
                log_every: int = 50, device=None) -> TrainStats:
    """One pass over ``batches`` (already holding every epoch) in mini-batches of ``cfg.batch_size`` rows, on
    ``device`` (``None``: where the model's parameters are; the model is moved there, and each mini-batch with
    it). float32 on every device."""
    if device is not None:
        model.to(torch_device(device))
    dev = _device_of(model)
    batches = batches.to(dev)
    opt = _optimizer(model, cfg)
    model.train()
    B = cfg.batch_size
    total = max(1, math.ceil(batches.n_rows / B))
    losses: list[float] = []
    t0 = time.perf_counter()
    loss_val = float("nan")
    for step in progress(range(total), desc=desc, total=total):
        sl = slice(step * B, (step + 1) * B)
        ids, pos, doc, mask = batches.ids[sl], batches.pos[sl], batches.doc[sl], batches.mask[sl]
        opt.set_lr(lr_at(step, total, cfg))
        logits = model(ids[:, :-1], pos[:, :-1], doc[:, :-1])
        m = mask[:, 1:]
        nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), reduction="none")
        loss = (nll * m.reshape(-1)).sum() / m.sum().clamp_min(1.0)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % log_every == 0 or step == total - 1:
            loss_val = float(loss.detach().cpu())
            losses.append(loss_val)
    dt = time.perf_counter() - t0
    n_tok = batches.n_tokens
    model.eval()
    return TrainStats(total, n_tok, loss_val, dt, n_tok / dt if dt > 0 else float("nan"), tuple(losses))


def _device_of(model: torch.nn.Module) -> torch.device:
    """Where ``model``'s parameters are: the device its inputs are made on."""
    return next(model.parameters()).device


# --------------------------------------------------------------------------------------------- evaluation
@torch.no_grad()
def generate(model: RotaryGPT, prompts: list[list[int]], max_new_tokens: int, *, batch_size: int = 256
             ) -> list[list[int]]:
    """Greedy continuation of each prompt (left-padded batches), up to ``[EOS]`` or ``max_new_tokens``, on the
    model's device (token ids come back as Python lists)."""
    model.eval()
    dev = _device_of(model)
    out: list[list[int]] = []
    for s in range(0, len(prompts), batch_size):
        chunk = prompts[s:s + batch_size]
        L = max(len(p) for p in chunk)
        ids = torch.full((len(chunk), L), PAD, dtype=torch.long, device=dev)
        real = torch.zeros((len(chunk), L), dtype=torch.bool, device=dev)
        for k, p in enumerate(chunk):
            ids[k, L - len(p):] = torch.tensor(p, device=dev)
            real[k, L - len(p):] = True
        done = torch.zeros(len(chunk), dtype=torch.bool, device=dev)
        gen = []
        for _ in range(max_new_tokens):
            pos = (real.long().cumsum(1) - 1).clamp_min(0)
            doc = torch.where(real, 0, -1)
            nxt = model(ids, pos, doc)[:, -1].argmax(-1)
            nxt = torch.where(done, torch.full_like(nxt, EOS), nxt)
            gen.append(nxt)
            done |= nxt == EOS
            ids = torch.cat([ids, nxt[:, None]], 1)
            real = torch.cat([real, torch.ones(len(chunk), 1, dtype=torch.bool, device=dev)], 1)
            if bool(done.all()):
                break
        G = torch.stack(gen, 1).tolist()  # to Python ints on the host
        for row in G:
            out.append(row[: row.index(EOS)] if EOS in row else row)
    return out


@dataclasses.dataclass(frozen=True)
class EvalResult:
    """Exact-match accuracy of one task on one set of people, with a few generated examples."""

    task: str
    people: str
    accuracy: float
    n: int
    chance: float
    examples: tuple[tuple[str, str, str], ...] = ()  # (prompt, expected answer, generated answer)
    #: for a CoT classification/comparison task, the fraction whose chain of thought (the attribute values written
    #: before "so") is exactly right; None otherwise
    cot_step: float | None = None


def chance_level(qas: Sequence[QA]) -> float:
    """Accuracy of always answering the most frequent label."""
    if not qas:
        return float("nan")
    labels = [q.label for q in qas]
    return max(labels.count(x) for x in set(labels)) / len(labels)


def evaluate(model: RotaryGPT, tok: WordTokenizer, qas: Sequence[QA], *, people: str = "test",
             n_examples: int = 3) -> EvalResult:
    """Greedy decoding of every QA's prompt; exact match of the scored label (:func:`.tasks.answer_label`)."""
    if not qas:
        raise ValueError("qas: nothing to evaluate (an empty task)")
    spec = parse_task(qas[0].task)
    prompts = tok.encode_batch([q.prompt for q in qas])
    max_new = max(len(a) for a in tok.encode_batch([q.answer for q in qas])) + 2
    gens = generate(model, prompts, max_new)
    texts = [tok.decode(g) for g in gens]
    hits = [answer_label(spec, t) == (q.label.lower() if spec.kind in ("classification", "comparison") else q.label)
            for t, q in zip(texts, qas, strict=True)]
    ex = tuple((q.prompt, q.answer, t) for q, t in list(zip(qas, texts, strict=True))[:n_examples])
    step = None
    if spec.cot and spec.kind in ("classification", "comparison"):
        step = float(np.mean([t.strip().startswith(cot_prefix(q)) for t, q in zip(texts, qas, strict=True)]))
    return EvalResult(str(spec), people, float(np.mean(hits)), len(qas), chance_level(qas), ex, step)


@torch.no_grad()
def evaluate_cot_prompt(model: RotaryGPT, tok: WordTokenizer, qas: Sequence[QA], *, people: str = "test",
                        n_examples: int = 3) -> EvalResult:
    """CoT at inference only: each CoT-form QA's prompt is followed by its chain of thought up to the label
    ("What is the birth month of A modulo 2? October, so"), and the model chooses among the task's labels
    (:func:`.tasks.task_labels`) the one it gives the highest likelihood,

        ŷ = argmax_c Σ_j log p_θ(c_j | prompt, chain of thought, c_<j).

    Meant for a model fine-tuned *without* CoT: the paper's condition "CoT at inference but not in training".
    The chain of thought given is the true attribute (an oracle CoT: the most a CoT prompt could supply), and
    the forced choice keeps chance at 1 / (number of labels) for a model that never learned the CoT format.
    """
    if not qas:
        raise ValueError("qas: nothing to evaluate (an empty task)")
    spec = parse_task(qas[0].task)
    if not spec.cot:
        raise ValueError(f"qas: expected the CoT form of a classification or comparison task, got {str(spec)!r}")
    labels = task_labels(spec)
    contexts = tok.encode_batch([f"{q.prompt} {cot_prefix(q)}" for q in qas])
    cands = tok.encode_batch(list(labels))
    seqs = [c + a for c in contexts for a in cands]
    L = max(len(x) for x in seqs)
    dev = _device_of(model)
    ids = torch.full((len(seqs), L), PAD, dtype=torch.long, device=dev)
    doc = torch.full((len(seqs), L), -1, dtype=torch.long, device=dev)
    for k, x in enumerate(seqs):
        ids[k, :len(x)] = torch.tensor(x, device=dev)
        doc[k, :len(x)] = 0
    pos = torch.arange(L, device=dev).expand(len(seqs), L)
    logp = torch.log_softmax(model(ids, pos, doc), dim=-1)
    score = torch.empty(len(seqs), device=dev)
    for k, x in enumerate(seqs):
        n_c = len(cands[k % len(cands)])
        t = torch.arange(len(x) - n_c, len(x), device=dev)
        score[k] = logp[k, t - 1, ids[k, t]].sum()
    pick = score.view(len(qas), len(labels)).argmax(1).tolist()  # to Python ints on the host
    chosen = [labels[i] for i in pick]
    hits = [c == q.label.lower() for c, q in zip(chosen, qas, strict=True)]
    ex = tuple((f"{q.prompt} {cot_prefix(q)}", q.label, c) for q, c in list(zip(qas, chosen, strict=True))[:n_examples])
    return EvalResult(f"{spec} (CoT at inference only)", people, float(np.mean(hits)), len(qas), chance_level(qas), ex)
