"""The same RAG and preference pipeline on a Hugging Face LLaVA-style model from a local folder (the ``hf``
extra): prompts in the reference's format with the retrieved reports, yes/no scoring, summed answer-token
log-probabilities and one DPO step against a frozen reference. Nothing is downloaded (``local_files_only``).

References: Xia et al., *MMed-RAG*, ICLR 2025 (§3.3; the prompt of ``data/training/alignment/*``); Liu et al.,
*LLaVA*; the reference code's ``concatenated_forward`` (chosen and rejected images in one DPO step).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .dpo import DPOOutput, dpo_loss, sequence_logps

__all__ = ["HFVLM", "load_hf_vlm", "rag_prompt", "MODALITY"]

MODALITY = {"radiology": "chest x ray", "pathology": "pathology", "ophthalmology": "fundus"}


def rag_prompt(question: str, reports: Sequence[str], *, domain: str = "radiology") -> str:
    """The reference's RAG-PT prompt: the image, the question and the k numbered reference reports."""
    ctx = " ".join(f"{i + 1}. {r}" for i, r in enumerate(reports))
    head = (f"You are provided with a {MODALITY.get(domain, domain)} image, a image-related question and "
            f"{len(reports)} reference report(s): {ctx} " if reports else
            f"You are provided with a {MODALITY.get(domain, domain)} image and a image-related question. ")
    return (head + f"Please answer the question based on the image and the report(s). Question: {question} "
            "Please choose from [yes, no]. It should be noted that the diagnostic information in the reference "
            "reports cannot be directly used as the basis for diagnosis, but should only be used for reference "
            "and comparison. Answer:")


@dataclasses.dataclass
class HFVLM:
    """A loaded LLaVA-style model with its tokenizer; ``n_image_tokens`` copies of the image token id stand
    for the image's patch features (what a LLaVA processor's expansion of ``<image>`` produces)."""

    model: Any
    tokenizer: Any
    image_token_id: int
    n_image_tokens: int

    def _batch(self, prompts: Sequence[str], answers: Sequence[str] | None) -> tuple[Any, Any, Any]:
        import torch

        tok = self.tokenizer
        rows, labs = [], []
        for i, p in enumerate(prompts):
            ids = [self.image_token_id] * self.n_image_tokens + tok(p, add_special_tokens=False)["input_ids"]
            lab = [-100] * len(ids)
            if answers is not None:
                a = tok(" " + answers[i], add_special_tokens=False)["input_ids"]
                ids, lab = ids + a, lab + a
            rows.append(ids)
            labs.append(lab)
        width = max(len(r) for r in rows)
        pad = tok.pad_token_id if tok.pad_token_id is not None else 0
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        labels = torch.full((len(rows), width), -100, dtype=torch.long)
        attn = torch.zeros((len(rows), width), dtype=torch.long)
        for i, (r, lab) in enumerate(zip(rows, labs, strict=True)):
            ids[i, :len(r)], labels[i, :len(lab)], attn[i, :len(r)] = torch.tensor(r), torch.tensor(lab), 1
        return ids, labels, attn

    def answer_logps(self, pixel_values: Any, prompts: Sequence[str], answers: Sequence[str]) -> Any:
        """Summed log-probabilities of ``answers`` given image and prompt (B,), with gradients."""
        import torch

        ids, labels, attn = self._batch(prompts, answers)
        out = self.model(input_ids=ids, attention_mask=attn, pixel_values=torch.as_tensor(pixel_values))
        return sequence_logps(out.logits, labels)

    def yes_probability(self, pixel_values: Any, prompts: Sequence[str]) -> np.ndarray:
        """P(yes) / (P(yes) + P(no)) for each prompt."""
        import torch

        with torch.no_grad():
            ly = self.answer_logps(pixel_values, prompts, ["yes"] * len(prompts))
            ln = self.answer_logps(pixel_values, prompts, ["no"] * len(prompts))
        return torch.sigmoid(ly - ln).numpy()

    def dpo_step(self, reference: HFVLM, optimizer: Any, chosen_pixels: Any, rejected_pixels: Any,
                 prompts: Sequence[str], chosen: Sequence[str], rejected: Sequence[str], *,
                 beta: float = 0.1) -> DPOOutput:
        """One DPO update: chosen (image, prompt, y_w) vs rejected (image', prompt, y_l); for cross-modality
        pairs ``rejected_pixels`` is the noise image and ``rejected == chosen``."""
        import torch

        with torch.no_grad():
            rc = reference.answer_logps(chosen_pixels, prompts, chosen)
            rr = reference.answer_logps(rejected_pixels, prompts, rejected)
        out = dpo_loss(self.answer_logps(chosen_pixels, prompts, chosen),
                       self.answer_logps(rejected_pixels, prompts, rejected), rc, rr, beta=beta)
        optimizer.zero_grad()
        out.loss.backward()
        optimizer.step()
        return out


def load_hf_vlm(path: str | os.PathLike[str], *, flag: str = "--hf-path") -> HFVLM:
    """Load a LLaVA-style model and tokenizer from a local folder (never downloads), through
    :func:`iclr25.utils.hf.load_local_model`; errors name ``flag`` and the folder."""
    from iclr25.utils.hf import load_local_model

    cfg_path = Path(path) / "config.json"
    if cfg_path.is_file():  # refuse, in one line, a folder of another architecture before building anything
        import json

        try:
            raw = json.loads(cfg_path.read_text())
        except (OSError, ValueError):
            raw = None  # load_local_model reports the unreadable file
        if isinstance(raw, dict):
            kind = str(raw.get("model_type", ""))
            archs = [str(a) for a in raw.get("architectures") or []]
            if "llava" not in kind.lower() and not any("llava" in a.lower() for a in archs):
                raise ValueError(f"{flag} {path}: config.json has model_type {kind!r} and architectures "
                                 f"{archs}; expected a LLaVA-style model (model_type 'llava', "
                                 "LlavaForConditionalGeneration)")
    tok, model = load_local_model(path, "LlavaForConditionalGeneration", flag=flag, extra="iclr25-mmed-rag[hf]",
                                  what="LLaVA model")
    p = Path(path)
    vc = model.config.vision_config
    n = (vc.image_size // vc.patch_size) ** 2
    if getattr(model.config, "vision_feature_select_strategy", "default") == "full":
        n += 1
    tid = getattr(model.config, "image_token_id", None)
    tid = getattr(model.config, "image_token_index", None) if tid is None else tid
    if tid is None:
        raise ValueError(f"{p}/config.json names no image_token_id / image_token_index")
    return HFVLM(model, tok, int(tid), n)
