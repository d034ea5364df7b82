"""SFT, preference-pair mining from the model's own answers, and DPO (RAG-PT).

Pairs (x = (x_v, x_t, x_r): image, question, retrieved reports; y the truth):

- D_cm (cross-modality alignment): M(x_v*, x_t, x_r) = y with x_v* an image unrelated to the question (the
  model copied the context). Chosen (x, y); rejected (x* = (x_v*, x_t, x_r), y): same answer, unrelated image.
  x_v* is ``cm_images`` when given: the pipeline passes a *real* mismatched image (another domain, so another
  class; :func:`iclr25.mmed_rag.experiments.mismatched_images`), since pairs built with noise teach a model that
  answers "no" to most questions "noise image → yes" (issue 41). Without ``cm_images`` it is the reference
  code's pure noise (``generate_gaussian_noise(image, 0, 1)``).
- D_oa1 (use the context): M(x_v, x_t) ≠ y but M(x_v, x_t, x_r) = y. Chosen y, rejected the no-RAG answer,
  both with x_r in the prompt.
- D_oa2 (resist bad context): M(x_v, x_t) = y but M(x_v, x_t, x_r) ≠ y. Chosen y, rejected the RAG answer.

Report-generation pairs (:func:`mine_report_preferences`) follow the same three scenarios with the report
as the answer: a generated report is "right" when it states every finding of the image correctly
(:func:`~iclr25.mmed_rag.metrics.report_finding_accuracy` ≥ ``threshold``); the chosen side is the ground-truth
report, the rejected side the model's own wrong report (D_oa) or the ground truth with the unrelated image x_v*
(D_cm; a real image of another domain in the pipeline, noise by default).

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
from .metrics import report_finding_accuracy
from .vlm import (
    TinyVLM,
    encode_prompts,
    generate_reports,
    model_device,
    noise_images,
    sft_loss,
    token_logps,
    yes_probability,
)

__all__ = ["Examples", "PreferencePairs", "train_sft", "answer", "mine_preferences", "mine_report_preferences",
           "train_dpo", "PAIR_KINDS", "TASKS"]

PAIR_KINDS = ("cm", "oa1", "oa2")
TASKS = ("vqa", "report")


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
        idx = [int(i) for i in idx]
        return Examples(self.images[np.asarray(idx, dtype=np.intp)], [self.contexts[i] for i in idx], [self.questions[i] for i in idx],
                        [self.answers[i] for i in idx])

    @staticmethod
    def concat(parts: Sequence[Examples]) -> Examples:
        return Examples(np.concatenate([p.images for p in parts]), [c for p in parts for c in p.contexts],
                        [q for p in parts for q in p.questions], [a for p in parts for a in p.answers])


@dataclasses.dataclass(frozen=True)
class PreferencePairs:
    """Chosen and rejected sides (each an :class:`Examples`), the ``kind`` of each pair (:data:`PAIR_KINDS`),
    its ``task`` (:data:`TASKS`: "vqa" or "report"; default all "vqa") and the mining statistics (how many
    candidates fell into each scenario; report-mining keys start with ``report_``)."""

    chosen: Examples
    rejected: Examples
    kind: np.ndarray
    stats: dict[str, int]
    task: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.task is None:
            object.__setattr__(self, "task", np.array(["vqa"] * len(self.kind)))
        if not (len(self.chosen) == len(self.rejected) == len(self.kind) == len(self.task)):
            raise ValueError(f"mismatched counts: {len(self.chosen)} chosen, {len(self.rejected)} rejected, "
                             f"{len(self.kind)} kinds, {len(self.task)} tasks")

    def __len__(self) -> int:
        return len(self.kind)

    def only(self, kinds: Sequence[str] = PAIR_KINDS, tasks: Sequence[str] = TASKS) -> PreferencePairs:
        """The pairs whose kind is in ``kinds`` and whose task is in ``tasks``."""
        bad = [k for k in kinds if k not in PAIR_KINDS]
        if bad:
            raise ValueError(f"kinds must be among {PAIR_KINDS}, got {bad}")
        bad = [t for t in tasks if t not in TASKS]
        if bad:
            raise ValueError(f"tasks must be among {TASKS}, got {bad}")
        idx = np.flatnonzero(np.isin(self.kind, list(kinds)) & np.isin(self.task, list(tasks)))
        return PreferencePairs(self.chosen.take(idx), self.rejected.take(idx), self.kind[idx], self.stats,
                               self.task[idx])

    @staticmethod
    def concat(parts: Sequence[PreferencePairs]) -> PreferencePairs:
        """All pairs of ``parts`` (e.g. VQA and report pairs), their statistics merged."""
        parts = [p for p in parts if len(p)]
        if not parts:
            raise ValueError("no preference pairs to concatenate")
        stats: dict[str, int] = {}
        for p in parts:
            stats.update(p.stats)
        return PreferencePairs(Examples.concat([p.chosen for p in parts]), Examples.concat([p.rejected for p in parts]),
                               np.concatenate([p.kind for p in parts]), stats,
                               np.concatenate([p.task for p in parts]))


def _place(model: torch.nn.Module, device: Any) -> torch.device:
    """``model`` moved to ``device`` (resolved by :func:`iclr25.utils.device.torch_device`) unless it is ``None``;
    returns where the model is."""
    if device is not None:
        from iclr25.utils.device import torch_device

        model.to(torch_device(device))
    return model_device(model)


def train_sft(model: TinyVLM, data: Examples, *, steps: int = 600, batch_size: int = 32, lr: float = 2e-3,
              seed: int = 0, desc: str = "SFT", device: Any = None) -> TinyVLM:
    """Supervised fine-tuning: Adam on answer-token cross-entropy, cosine learning-rate decay. On ``device``
    (``None``: where ``model`` is); the images and every batch are put there, float32; batches are drawn on the
    CPU (numpy), so every device trains on the same rows."""
    if len(data) == 0:
        raise ValueError("SFT data is empty")
    dev = _place(model, device)
    torch.manual_seed(seed)
    gen = np.random.default_rng(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    x = torch.as_tensor(data.images, device=dev)
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


def answer(model: Any, images: Any, contexts: Sequence[Sequence[str]], questions: Sequence[str]
           ) -> tuple[np.ndarray, np.ndarray]:
    """Yes/no answers (N,) 0/1 and P(yes) (N,) of a :class:`TinyVLM` or of any model with a method
    ``vqa_yes_probability(images, contexts, questions)`` (e.g. :class:`iclr25.mmed_rag.hf.HFVLM`)."""
    if hasattr(model, "vqa_yes_probability"):
        p = np.asarray(model.vqa_yes_probability(images, contexts, questions), dtype=np.float64)
    else:
        p = yes_probability(model, images, contexts, questions)
    return (p > 0.5).astype(np.int64), p


def _assemble(data: Examples, noise: Any, cm: np.ndarray, oa: dict[str, tuple[np.ndarray, list[str]]],
              stats: dict[str, int], task: str) -> PreferencePairs:
    """Chosen = ``data[i]``; rejected = the unrelated image ``noise[i]`` (a real mismatched image or noise) with
    the same answer (D_cm) or the real image with the given wrong answer (D_oa1, D_oa2); empty sides keep the
    image shape."""
    chosen, rejected, kinds = [data.take([])], [data.take([])], []
    if len(cm):
        chosen.append(data.take(cm))
        rejected.append(Examples(noise[cm], [data.contexts[i] for i in cm], [data.questions[i] for i in cm],
                                 [data.answers[i] for i in cm]))
        kinds += ["cm"] * len(cm)
    for name, (idx, wrong) in oa.items():
        if len(idx):
            chosen.append(data.take(idx))
            rejected.append(Examples(data.images[idx], [data.contexts[i] for i in idx],
                                     [data.questions[i] for i in idx], [wrong[i] for i in idx]))
            kinds += [name] * len(idx)
    return PreferencePairs(Examples.concat(chosen), Examples.concat(rejected), np.array(kinds, dtype="<U3"), stats,
                           np.array([task] * len(kinds), dtype="<U6"))


def _cm_images(data: Examples, cm_images: Any, seed: int) -> np.ndarray:
    """The rejected images x_v* of D_cm: ``cm_images`` checked against ``data``'s shape, or pure noise."""
    if cm_images is None:
        return noise_images(data.images.shape, seed=seed)
    out = np.asarray(cm_images, dtype=np.float32)
    if out.shape != tuple(data.images.shape):
        raise ValueError(f"cm_images has shape {out.shape}, expected {tuple(data.images.shape)} like the "
                         "examples' images")
    return out


def mine_preferences(model: Any, data: Examples, *, seed: int = 0, cm_images: Any = None) -> PreferencePairs:
    """Mine VQA D_cm, D_oa1 and D_oa2 (module docstring) from ``model``'s own answers on ``data`` (whose
    ``contexts`` are the retrieved reports and ``answers`` the truth, "yes"/"no").

    ``model``: a :class:`TinyVLM` or a model with ``vqa_yes_probability`` (:class:`iclr25.mmed_rag.hf.HFVLM`).
    ``cm_images``: the unrelated image x_v* of each example for D_cm (same shape as ``data.images``); default
    pure noise (the reference code's)."""
    y = np.array([a == "yes" for a in data.answers], dtype=np.int64)
    no_ctx = [[] for _ in data.contexts]
    a0, _ = answer(model, data.images, no_ctx, data.questions)
    a1, _ = answer(model, data.images, data.contexts, data.questions)
    noise = _cm_images(data, cm_images, seed)
    an, _ = answer(model, noise, data.contexts, data.questions)
    cm = np.flatnonzero(an == y)
    oa1 = np.flatnonzero((a0 != y) & (a1 == y))
    oa2 = np.flatnonzero((a0 == y) & (a1 != y))
    flip = ["no" if a == "yes" else "yes" for a in data.answers]  # the wrong no-RAG (oa1) / RAG (oa2) answer
    stats = {"candidates": len(data), "cm": len(cm), "oa1": len(oa1), "oa2": len(oa2),
             "no_rag_correct": int((a0 == y).sum()), "rag_correct": int((a1 == y).sum()),
             "noise_correct": int((an == y).sum())}
    pairs = _assemble(data, noise, cm, {"oa1": (oa1, flip), "oa2": (oa2, flip)}, stats, "vqa")
    if not len(pairs):
        raise ValueError("no preference pairs were mined (the model is never misaligned on this data)")
    return pairs


def mine_report_preferences(model: TinyVLM, data: Examples, domains: Any, labels: Any, *, threshold: float = 1.0,
                            seed: int = 0, cm_images: Any = None) -> PreferencePairs:
    """Mine report-generation D_cm, D_oa1 and D_oa2 (module docstring) from ``model``'s own greedy reports.

    ``data.contexts`` are the retrieved reports, ``data.answers`` the ground-truth reports, ``domains`` (N,)
    and ``labels`` (N, 4) the image's domain and true findings; a report is right when its finding accuracy
    is at least ``threshold`` (in (0, 1]). ``cm_images``: the unrelated image x_v* of each example for D_cm
    (the pipeline passes a real image of another domain, as for VQA); default pure noise (the reference
    code's). The result may be empty (a model that is never misaligned).
    """
    if not (isinstance(threshold, (int, float)) and 0 < threshold <= 1):
        raise ValueError(f"threshold must lie in (0, 1], got {threshold!r}")
    d, y = np.asarray(domains), np.asarray(labels)
    if len(d) != len(data) or len(y) != len(data):
        raise ValueError(f"mismatched counts: {len(data)} examples, {len(d)} domains, {len(y)} label rows")
    noise = _cm_images(data, cm_images, seed)
    g0 = generate_reports(model, data.images, [[] for _ in data.contexts])
    g1 = generate_reports(model, data.images, data.contexts)
    gn = generate_reports(model, noise, data.contexts)
    r0, r1, rn = (report_finding_accuracy(d, g, y) >= threshold for g in (g0, g1, gn))
    cm = np.flatnonzero(rn)
    oa1 = np.flatnonzero(~r0 & r1)
    oa2 = np.flatnonzero(r0 & ~r1)
    stats = {"report_candidates": len(data), "report_cm": len(cm), "report_oa1": len(oa1), "report_oa2": len(oa2),
             "report_no_rag_correct": int(r0.sum()), "report_rag_correct": int(r1.sum()),
             "report_noise_correct": int(rn.sum())}
    return _assemble(data, noise, cm, {"oa1": (oa1, g0), "oa2": (oa2, g1)}, stats, "report")


def train_dpo(policy: TinyVLM, pairs: PreferencePairs, *, reference: TinyVLM | None = None, steps: int = 200,
              batch_size: int = 32, lr: float = 1e-4, beta: float = 0.1, seed: int = 0,
              desc: str = "DPO", device: Any = None) -> tuple[TinyVLM, dict[str, float]]:
    """DPO of ``policy`` against a frozen ``reference`` (default: a frozen copy of ``policy`` at the start), on
    ``device`` (``None``: where ``policy`` is; the reference is moved there too), float32.

    Returns the policy and the last-100-step means of the loss, reward accuracy and margin.
    """
    if len(pairs) == 0:
        raise ValueError("no preference pairs to train on")
    dev = _place(policy, device)
    ref = (reference or policy.frozen_copy()).to(dev)
    torch.manual_seed(seed)
    gen = np.random.default_rng(seed)
    opt = torch.optim.Adam([p for p in policy.parameters() if p.requires_grad], lr=lr)
    xc, xr = torch.as_tensor(pairs.chosen.images, device=dev), torch.as_tensor(pairs.rejected.images, device=dev)

    def prompts(side: Examples, idx: Sequence[int]) -> Any:
        return encode_prompts(policy.vocab, [side.contexts[i] for i in idx], [side.questions[i] for i in idx],
                              [side.answers[i] for i in idx])

    # π_ref is frozen: its log-probabilities are computed once (causal attention, so right padding is inert)
    with torch.no_grad():
        ref.eval()
        chunks = [np.arange(s, min(s + 256, len(pairs))) for s in range(0, len(pairs), 256)]
        ref_c = torch.cat([token_logps(ref, xc[c], prompts(pairs.chosen, c)) for c in chunks])
        ref_r = torch.cat([token_logps(ref, xr[c], prompts(pairs.rejected, c)) for c in chunks])
    hist = []
    policy.train()
    for _ in progress(range(steps), desc=desc):
        idx = gen.choice(len(pairs), min(batch_size, len(pairs)), replace=False)
        out = dpo_loss(token_logps(policy, xc[idx], prompts(pairs.chosen, idx)),
                       token_logps(policy, xr[idx], prompts(pairs.rejected, idx)), ref_c[idx], ref_r[idx], beta=beta)
        opt.zero_grad()
        out.loss.backward()
        opt.step()
        hist.append((float(out.loss.detach()), float(out.accuracies.mean()), float(out.margins.mean())))
    h = np.array(hist[-100:])
    return policy.eval(), {"loss": float(h[:, 0].mean()), "reward_accuracy": float(h[:, 1].mean()),
                           "margin": float(h[:, 2].mean())}
