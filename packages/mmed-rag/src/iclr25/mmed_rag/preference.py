"""SFT, preference-pair mining from the model's own answers, and DPO (RAG-PT).

Pairs (x = (x_v, x_t, x_r): image, question, retrieved reports; y the truth):

- D_cm (cross-modality alignment): M(x_v*, x_t, x_r) = y with x_v* a noise image (the model copied the
  context). Chosen (x, y); rejected (x* = (x_v*, x_t, x_r), y): same answer, noise image.
- D_oa1 (use the context): M(x_v, x_t) ≠ y but M(x_v, x_t, x_r) = y. Chosen y, rejected the no-RAG answer,
  both with x_r in the prompt.
- D_oa2 (resist bad context): M(x_v, x_t) = y but M(x_v, x_t, x_r) ≠ y. Chosen y, rejected the RAG answer.

DPO then minimises −log σ(β[(log π_θ(y_w|x) − log π_ref(y_w|x)) − (log π_θ(y_l|x') − log π_ref(y_l|x'))])
with π_ref the frozen SFT model (:func:`iclr25.mmed_rag.dpo.dpo_loss`).

References: Xia et al., *MMed-RAG*, ICLR 2025, §3.3 (eq. 3-5, RAG-based preference fine-tuning).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from iclr25.utils.progress import progress

from .dpo import dpo_loss
from .vlm import TinyVLM, encode_prompts, noise_images, sft_loss, token_logps, yes_probability

__all__ = ["Examples", "PreferencePairs", "train_sft", "answer", "mine_preferences", "train_dpo", "PAIR_KINDS"]

PAIR_KINDS = ("cm", "oa1", "oa2")


@dataclasses.dataclass(frozen=True)
class Examples:
    """Supervised examples: ``images`` (N, 3, H, W), ``contexts`` (N lists of reports, possibly empty),
    ``questions`` and ``answers`` (N strings each)."""

    images: np.ndarray
    contexts: list[list[str]]
    questions: list[str]
    answers: list[str]

    def __post_init__(self) -> None:
        n = len(self.images)
        if not (len(self.contexts) == len(self.questions) == len(self.answers) == n):
            raise ValueError(f"mismatched counts: {n} images, {len(self.contexts)} contexts, "
                             f"{len(self.questions)} questions, {len(self.answers)} answers")

    def __len__(self) -> int:
        return len(self.images)

    def take(self, idx: Sequence[int]) -> Examples:
        idx = list(idx)
        return Examples(self.images[idx], [self.contexts[i] for i in idx], [self.questions[i] for i in idx],
                        [self.answers[i] for i in idx])

    @staticmethod
    def concat(parts: Sequence[Examples]) -> Examples:
        return Examples(np.concatenate([p.images for p in parts]), [c for p in parts for c in p.contexts],
                        [q for p in parts for q in p.questions], [a for p in parts for a in p.answers])


@dataclasses.dataclass(frozen=True)
class PreferencePairs:
    """Chosen and rejected sides (each an :class:`Examples`), the ``kind`` of each pair (:data:`PAIR_KINDS`)
    and the mining statistics (how many candidates fell into each scenario)."""

    chosen: Examples
    rejected: Examples
    kind: np.ndarray
    stats: dict[str, int]

    def __len__(self) -> int:
        return len(self.kind)

    def only(self, kinds: Sequence[str]) -> PreferencePairs:
        bad = [k for k in kinds if k not in PAIR_KINDS]
        if bad:
            raise ValueError(f"kinds must be among {PAIR_KINDS}, got {bad}")
        idx = np.flatnonzero(np.isin(self.kind, list(kinds)))
        return PreferencePairs(self.chosen.take(idx), self.rejected.take(idx), self.kind[idx], self.stats)


def train_sft(model: TinyVLM, data: Examples, *, steps: int = 600, batch_size: int = 32, lr: float = 2e-3,
              seed: int = 0, desc: str = "SFT") -> TinyVLM:
    """Supervised fine-tuning: Adam on answer-token cross-entropy, cosine learning-rate decay."""
    if len(data) == 0:
        raise ValueError("SFT data is empty")
    torch.manual_seed(seed)
    gen = np.random.default_rng(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    x = torch.as_tensor(data.images)
    model.train()
    for _ in progress(range(steps), desc=desc):
        idx = gen.choice(len(data), min(batch_size, len(data)), replace=False)
        pr = encode_prompts(model.vocab, [data.contexts[i] for i in idx], [data.questions[i] for i in idx],
                            [data.answers[i] for i in idx])
        loss = sft_loss(model, x[idx], pr)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return model.eval()


def answer(model: TinyVLM, images: Any, contexts: Sequence[Sequence[str]], questions: Sequence[str]
           ) -> tuple[np.ndarray, np.ndarray]:
    """Yes/no answers (N,) 0/1 and P(yes) (N,)."""
    p = yes_probability(model, images, contexts, questions)
    return (p > 0.5).astype(np.int64), p


def mine_preferences(model: TinyVLM, data: Examples, *, seed: int = 0) -> PreferencePairs:
    """Mine D_cm, D_oa1 and D_oa2 (module docstring) from ``model``'s own answers on ``data`` (whose
    ``contexts`` are the retrieved reports and ``answers`` the truth, "yes"/"no")."""
    y = np.array([a == "yes" for a in data.answers], dtype=np.int64)
    no_ctx = [[] for _ in data.contexts]
    a0, _ = answer(model, data.images, no_ctx, data.questions)
    a1, _ = answer(model, data.images, data.contexts, data.questions)
    noise = noise_images(data.images.shape, seed=seed)
    an, _ = answer(model, noise, data.contexts, data.questions)
    cm = np.flatnonzero(an == y)
    oa1 = np.flatnonzero((a0 != y) & (a1 == y))
    oa2 = np.flatnonzero((a0 == y) & (a1 != y))
    flip = ["no" if a == "yes" else "yes" for a in data.answers]
    chosen, rejected, kinds = [], [], []
    if len(cm):
        chosen.append(data.take(cm))
        rejected.append(Examples(noise[cm], [data.contexts[i] for i in cm], [data.questions[i] for i in cm],
                                 [data.answers[i] for i in cm]))
        kinds += ["cm"] * len(cm)
    for name, idx in (("oa1", oa1), ("oa2", oa2)):
        if len(idx):
            chosen.append(data.take(idx))
            rejected.append(Examples(data.images[idx], [data.contexts[i] for i in idx],
                                     [data.questions[i] for i in idx], [flip[i] for i in idx]))
            kinds += [name] * len(idx)
    stats = {"candidates": len(data), "cm": len(cm), "oa1": len(oa1), "oa2": len(oa2),
             "no_rag_correct": int((a0 == y).sum()), "rag_correct": int((a1 == y).sum()),
             "noise_correct": int((an == y).sum())}
    if not kinds:
        raise ValueError("no preference pairs were mined (the model is never misaligned on this data)")
    return PreferencePairs(Examples.concat(chosen), Examples.concat(rejected), np.array(kinds), stats)


def train_dpo(policy: TinyVLM, pairs: PreferencePairs, *, reference: TinyVLM | None = None, steps: int = 200,
              batch_size: int = 32, lr: float = 1e-4, beta: float = 0.1, seed: int = 0,
              desc: str = "DPO") -> tuple[TinyVLM, dict[str, float]]:
    """DPO of ``policy`` against a frozen ``reference`` (default: a frozen copy of ``policy`` at the start).

    Returns the policy and the last-100-step means of the loss, reward accuracy and margin.
    """
    if len(pairs) == 0:
        raise ValueError("no preference pairs to train on")
    ref = reference or policy.frozen_copy()
    torch.manual_seed(seed)
    gen = np.random.default_rng(seed)
    opt = torch.optim.Adam([p for p in policy.parameters() if p.requires_grad], lr=lr)
    xc, xr = torch.as_tensor(pairs.chosen.images), torch.as_tensor(pairs.rejected.images)
    hist = []
    policy.train()
    for _ in progress(range(steps), desc=desc):
        idx = gen.choice(len(pairs), min(batch_size, len(pairs)), replace=False)
        pc = encode_prompts(policy.vocab, [pairs.chosen.contexts[i] for i in idx],
                            [pairs.chosen.questions[i] for i in idx], [pairs.chosen.answers[i] for i in idx])
        prj = encode_prompts(policy.vocab, [pairs.rejected.contexts[i] for i in idx],
                             [pairs.rejected.questions[i] for i in idx], [pairs.rejected.answers[i] for i in idx])
        with torch.no_grad():
            rc, rr = token_logps(ref, xc[idx], pc), token_logps(ref, xr[idx], prj)
        out = dpo_loss(token_logps(policy, xc[idx], pc), token_logps(policy, xr[idx], prj), rc, rr, beta=beta)
        opt.zero_grad()
        out.loss.backward()
        opt.step()
        hist.append((float(out.loss.detach()), float(out.accuracies.mean()), float(out.margins.mean())))
    h = np.array(hist[-100:])
    return policy.eval(), {"loss": float(h[:, 0].mean()), "reward_accuracy": float(h[:, 1].mean()),
                           "margin": float(h[:, 2].mean())}
