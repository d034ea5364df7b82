"""The same prompting and evaluation on a local Hugging Face LLaVA-style model folder (the ``hf`` extra).

TEOChat itself is a LLaVA-architecture model (Video-LLaVA-7B with LoRA); a user who has its weights, or any
``LlavaForConditionalGeneration`` checkpoint, on disk can run this package's prompts (interleaved
``image i :`` references, chronological order) and metrics on it. The frames go in as one image list
(``pixel_values`` ``(T, 3, H, W)``) and each ``<image>`` placeholder is expanded to the model's number of image
tokens, as the reference's ``prepare_inputs_labels_for_multimodal`` splices 256 tokens per frame. Loads with
``local_files_only=True``: nothing is downloaded.

References: Irvin et al., TEOChat, ICLR 2025, Sec. 3.1; reference ``videollava/eval/inference.py``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from .conversation import IMAGE, Example, build_prompt
from .sequences import resize_frames
from .synth import EOSequence

__all__ = ["HFLlavaAssistant"]

_CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
_CLIP_STD = (0.26862954, 0.26130258, 0.27577711)


class HFLlavaAssistant:
    """A local LLaVA-style model (``config.json`` + weights + tokenizer), greedy decoding on the CPU."""

    def __init__(self, path: str | os.PathLike[str], *, max_new_tokens: int = 32, references: bool = True) -> None:
        from iclr25.utils.hf import load_local_model

        self.tokenizer, self.model = load_local_model(path, "LlavaForConditionalGeneration", flag="--hf-model",
                                                      extra="iclr25-teochat[hf]", what="LLaVA model")
        cfg = self.model.config
        vc = cfg.vision_config
        self.image_size = int(vc.image_size)
        n = (vc.image_size // vc.patch_size) ** 2
        if getattr(cfg, "vision_feature_select_strategy", "default") == "full":
            n += 1
        self.tokens_per_image = n
        self.image_token_id = int(getattr(cfg, "image_token_id", getattr(cfg, "image_token_index", -1)))
        self.max_new_tokens = int(max_new_tokens)
        self.references = references

    def _pixels(self, frames: np.ndarray):
        import torch  # noqa: PLC0415

        f = resize_frames(np.asarray(frames, dtype=np.uint8), self.image_size).astype(np.float32) / 255.0
        f = (f - np.array(_CLIP_MEAN, dtype=np.float32)) / np.array(_CLIP_STD, dtype=np.float32)
        return torch.from_numpy(f).permute(0, 3, 1, 2).contiguous().to(self.model.dtype)

    def input_ids(self, prompt: str) -> list[int]:
        """Token ids of a prompt, each ``<image>`` expanded to the model's image tokens."""
        ids: list[int] = []
        bos = self.tokenizer.bos_token_id
        if bos is not None:
            ids.append(int(bos))
        parts = prompt.split(IMAGE)
        for k, part in enumerate(parts):
            if part.strip():
                ids.extend(self.tokenizer(part.strip(), add_special_tokens=False)["input_ids"])
            if k < len(parts) - 1:
                ids.extend([self.image_token_id] * self.tokens_per_image)
        return ids

    def ask(self, frames: np.ndarray, question: str) -> str:
        """Greedy answer about chronological uint8 frames ``(T, H, W, 3)``."""
        import torch  # noqa: PLC0415

        frames = np.asarray(frames)
        if frames.ndim != 4 or frames.shape[-1] != 3:
            raise ValueError(f"frames must be (T, H, W, 3), got {frames.shape}")
        prompt = build_prompt(len(frames), question, references=self.references)
        ids = torch.tensor([self.input_ids(prompt)])
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        with torch.no_grad():
            out = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                                      pixel_values=self._pixels(frames), max_new_tokens=self.max_new_tokens,
                                      do_sample=False, pad_token_id=pad)
        return self.tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True).strip()

    def predict(self, examples: Sequence[Example], sequences: Sequence[EOSequence]) -> list[str]:
        """Answers to ``examples`` (same prompts as the tiny model; single-image tasks show one frame)."""
        out = []
        for e in examples:
            chron = sequences[e.seq].chronological()
            frames = chron[list(e.frames)] if e.frames is not None else chron
            out.append(self.ask(frames, e.question))
        return out
