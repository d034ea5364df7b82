"""A tiny medical vision-language model: CNN feature map → visual tokens → MLP projector → causal transformer
LM over the prompt ``<img>×16 <ctx> reports… <q> question <a> answer <eos>``; SFT by next-token cross-entropy on
the answer tokens, yes/no VQA by P(yes) vs P(no) at the answer slot, greedy report generation.

References: Xia et al., *MMed-RAG*, ICLR 2025, §3 (the Med-LVLM is LLaVA-Med-1.5: vision encoder → projector →
LLM; the retrieved reports enter the prompt); Liu et al., *LLaVA*, NeurIPS 2023.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from .retriever import ImageEncoder
from .text import Vocab

__all__ = ["VLMConfig", "TinyVLM", "Prompts", "encode_prompts", "noise_images", "REPORT_QUESTION"]

REPORT_QUESTION = "write the report ."


@dataclasses.dataclass(frozen=True)
class VLMConfig:
    """Model size: width ``d``, ``layers``, ``heads``, CNN ``width``, visual tokens per side ``grid``."""

    d: int = 64
    layers: int = 2
    heads: int = 4
    width: int = 16
    grid: int = 4
    max_len: int = 160


class TinyVLM(nn.Module):
    """Vision encoder + projector + causal LM (module docstring)."""

    def __init__(self, vocab: Vocab, config: VLMConfig | None = None) -> None:
        super().__init__()
        cfg = config or VLMConfig()
        self.vocab, self.config = vocab, cfg
        self.vision = ImageEncoder(cfg.d, cfg.width)
        self.pool = nn.AdaptiveAvgPool2d(cfg.grid)
        self.projector = nn.Sequential(nn.Linear(4 * cfg.width, cfg.d), nn.GELU(), nn.Linear(cfg.d, cfg.d))
        self.tok = nn.Embedding(len(vocab), cfg.d)
        self.pos = nn.Embedding(cfg.max_len + cfg.grid ** 2, cfg.d)
        layer = nn.TransformerEncoderLayer(cfg.d, cfg.heads, 2 * cfg.d, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.lm = nn.TransformerEncoder(layer, cfg.layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(cfg.d)
        self.head = nn.Linear(cfg.d, len(vocab))
        self.n_img = cfg.grid ** 2

    def forward(self, images: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        """Logits (B, L, V) over the text positions (position t predicts token t + 1)."""
        v = self.pool(self.vision.features(images)).flatten(2).transpose(1, 2)  # (B, n_img, 4w)
        x = torch.cat([self.projector(v), self.tok(ids)], dim=1)
        n = x.shape[1]
        x = x + self.pos(torch.arange(n, device=x.device))
        mask = torch.triu(torch.full((n, n), float("-inf"), device=x.device), diagonal=1)
        h = self.norm(self.lm(x, mask=mask, is_causal=True))
        return self.head(h[:, self.n_img - 1:-1])  # logits predicting text token t from positions < t

    def frozen_copy(self) -> TinyVLM:
        """A deep copy with gradients off (the DPO reference π_ref)."""
        ref = copy.deepcopy(self)
        for p in ref.parameters():
            p.requires_grad_(False)
        return ref.eval()


@dataclasses.dataclass(frozen=True)
class Prompts:
    """Token ids (B, L), answer-token labels (B, L) (-100 on the prompt and padding) and the index of the
    ``<a>`` token of each row (its logits score the first answer token)."""

    ids: torch.Tensor
    labels: torch.Tensor
    answer_pos: torch.Tensor

    def to(self, device: Any) -> Prompts:
        """The same prompts on ``device`` (themselves where they already are)."""
        return Prompts(self.ids.to(device), self.labels.to(device), self.answer_pos.to(device))


def model_device(model: torch.nn.Module) -> torch.device:
    """Where ``model``'s parameters are (the device its inputs are built on)."""
    return next(model.parameters()).device


def encode_prompts(vocab: Vocab, contexts: Sequence[Sequence[str]], questions: Sequence[str],
                   answers: Sequence[str] | None = None, *, max_ctx_tokens: int = 96) -> Prompts:
    """``<bos> <ctx> r_1 <ctx> r_2 … <q> question <a> [answer <eos>]``, right-padded with ``<pad>``.

    The logits at position t predict token t (:meth:`TinyVLM.forward` already shifts by one), so labels are
    the ids themselves on answer tokens.
    """
    if len(contexts) != len(questions) or (answers is not None and len(answers) != len(questions)):
        raise ValueError(f"mismatched counts: {len(contexts)} contexts, {len(questions)} questions, "
                         f"{None if answers is None else len(answers)} answers")
    ix = vocab.index
    rows, labs, apos = [], [], []
    for i, (ctx, q) in enumerate(zip(contexts, questions, strict=True)):
        seq = [ix["<bos>"]]
        for r in ctx:
            seq += [ix["<ctx>"]] + vocab.encode(r)
        seq = seq[:max_ctx_tokens]
        seq += [ix["<q>"]] + vocab.encode(q) + [ix["<a>"]]
        a = len(seq) - 1
        lab = [-100] * len(seq)
        if answers is not None:
            ans = vocab.encode(answers[i]) + [ix["<eos>"]]
            seq += ans
            lab += ans
        rows.append(seq)
        labs.append(lab)
        apos.append(a)
    width = max(len(r) for r in rows)
    ids = torch.zeros((len(rows), width), dtype=torch.long)
    labels = torch.full((len(rows), width), -100, dtype=torch.long)
    for i, (r, lab) in enumerate(zip(rows, labs, strict=True)):
        ids[i, :len(r)] = torch.tensor(r)
        labels[i, :len(lab)] = torch.tensor(lab)
    return Prompts(ids, labels, torch.tensor(apos))


def token_logps(model: TinyVLM, images: torch.Tensor, prompts: Prompts) -> torch.Tensor:
    """Summed log-probabilities of the answer tokens (B,) (``_get_batch_logps`` on the shifted logits)."""
    prompts = prompts.to(images.device)
    logits = model(images, prompts.ids)  # logits[:, t] predicts ids[:, t]
    mask = prompts.labels != -100
    lab = prompts.labels.clamp(min=0)
    lp = torch.gather(logits.log_softmax(-1), 2, lab.unsqueeze(2)).squeeze(2)
    return (lp * mask).sum(-1)


def sft_loss(model: TinyVLM, images: torch.Tensor, prompts: Prompts) -> torch.Tensor:
    """Mean next-token cross-entropy over answer tokens."""
    prompts = prompts.to(images.device)
    logits = model(images, prompts.ids)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), prompts.labels.reshape(-1), ignore_index=-100)


@torch.no_grad()
def yes_probability(model: TinyVLM, images: Any, contexts: Sequence[Sequence[str]], questions: Sequence[str], *,
                    batch_size: int = 256) -> np.ndarray:
    """P(yes) / (P(yes) + P(no)) at the answer slot, (N,), computed where the model is, returned on the CPU."""
    model.eval()
    dev = model_device(model)
    yes, no = model.vocab.id("yes"), model.vocab.id("no")
    x = torch.as_tensor(np.asarray(images, dtype=np.float32), device=dev)
    out = []
    for s in range(0, len(questions), batch_size):
        pr = encode_prompts(model.vocab, contexts[s:s + batch_size], questions[s:s + batch_size]).to(dev)
        ids = torch.cat([pr.ids, torch.zeros((len(pr.ids), 1), dtype=torch.long, device=dev)], dim=1)  # answer slot
        logits = model(x[s:s + batch_size], ids)
        last = logits[torch.arange(len(pr.ids), device=dev), pr.answer_pos + 1]  # the slot right after <a>
        out.append(torch.softmax(last[:, [yes, no]], -1)[:, 0])
    return torch.cat(out).cpu().numpy()


@torch.no_grad()
def generate_reports(model: TinyVLM, images: Any, contexts: Sequence[Sequence[str]], *, max_new: int = 30,
                     batch_size: int = 128) -> list[str]:
    """Greedy decoding of a report after ``<q> write the report . <a>`` where the model is (decoded on the CPU)."""
    model.eval()
    dev = model_device(model)
    x = torch.as_tensor(np.asarray(images, dtype=np.float32), device=dev)
    eos, pad = model.vocab.id("<eos>"), 0
    out: list[str] = []
    for s in range(0, len(contexts), batch_size):
        ctx = contexts[s:s + batch_size]
        pr = encode_prompts(model.vocab, ctx, [REPORT_QUESTION] * len(ctx)).to(dev)
        # left-align is not needed: grow each row at its own end by writing into a padded buffer (on the device)
        lengths = pr.answer_pos + 1
        buf = torch.full((len(ctx), pr.ids.shape[1] + max_new), pad, dtype=torch.long, device=dev)
        buf[:, :pr.ids.shape[1]] = pr.ids
        done = torch.zeros(len(ctx), dtype=torch.bool, device=dev)
        gen = [[] for _ in ctx]
        rows = torch.arange(len(ctx), device=dev)
        for _ in range(max_new):
            logits = model(x[s:s + batch_size], buf[:, :int(lengths.max()) + 1])
            nxt = logits[rows, lengths].argmax(-1)
            host, finished = nxt.cpu(), done.cpu()  # read on the CPU
            for i in range(len(ctx)):
                if not finished[i]:
                    if int(host[i]) == eos:
                        done[i] = True
                    else:
                        gen[i].append(int(host[i]))
            buf[rows, lengths] = nxt
            lengths = lengths + (~done).long()
            if bool(done.all()):
                break
        out += [model.vocab.decode(g) for g in gen]
    return out


def noise_images(shape: Sequence[int], *, seed: int = 0) -> np.ndarray:
    """Pure N(0, 1) noise clipped to [0, 1] (the reference's ``generate_gaussian_noise(image, 0, 1)``)."""
    rng = np.random.default_rng(seed)
    return np.clip(rng.standard_normal(tuple(shape)), 0, 1).astype(np.float32)
