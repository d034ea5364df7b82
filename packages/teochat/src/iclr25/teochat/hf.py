"""The same prompting and evaluation on a local Hugging Face LLaVA-style model folder (the ``hf`` extra).

TEOChat itself is a LLaVA-architecture model (Video-LLaVA-7B with LoRA); a user who has its weights, or any
``LlavaForConditionalGeneration`` checkpoint, on disk can run this package's prompts (interleaved
``image i :`` references, chronological order) and metrics on it. The frames go in as one image list
(``pixel_values`` ``(T, 3, H, W)``) and each ``<image>`` placeholder is expanded to the model's number of image
tokens, as the reference's ``prepare_inputs_labels_for_multimodal`` splices 256 tokens per frame. Loads with
``local_files_only=True``: nothing is downloaded.

The folder's ``config.json`` is read first: a ``model_type`` other than ``llava`` (a GPT-2 or Llama folder) is
refused at once, in one line, before transformers is imported. A TEOChat checkpoint as released
(``jirvin16/TEOChat``) is a Video-LLaVA fork: its ``config.json`` names ``LlavaLlamaForCausalLM`` with
``mm_image_tower`` / ``mm_projector_type`` keys and no ``vision_config``, and its LanguageBind image tower lives
in another repository; transformers alone cannot load it, so it is refused with that explanation too (load it
with the reference code, or convert it to a ``LlavaForConditionalGeneration`` folder).

References: Irvin et al., TEOChat, ICLR 2025, Sec. 3.1; reference ``videollava/eval/inference.py``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from iclr25.utils.hf import (
    DEVICE_MAPS,  # ``--device-map`` values (``auto``: accelerate places the layers)
    read_model_config,
)

from .conversation import IMAGE, Example, build_prompt
from .sequences import resize_frames
from .synth import EOSequence

__all__ = ["DEVICE_MAPS", "HFLlavaAssistant", "check_llava_folder"]


_CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
_CLIP_STD = (0.26862954, 0.26130258, 0.27577711)


def check_llava_folder(path: str | os.PathLike[str], *, flag: str = "--hf-model") -> dict:
    """The folder's ``config.json`` as a dict if it describes a ``LlavaForConditionalGeneration`` model, else a
    one-line ``ValueError`` naming ``flag``, the folder and its ``model_type`` (``FileNotFoundError`` for a
    missing folder or config). Reads one JSON file: answers in well under a second."""
    p = Path(path)
    cfg = read_model_config(p, flag=flag, what="LLaVA model")
    mtype = cfg.get("model_type")
    archs = cfg.get("architectures") or []
    if any(k in cfg for k in ("mm_image_tower", "mm_vision_tower", "mm_projector_type")) and "vision_config" not in cfg:
        raise ValueError(f"{flag} {p}: a Video-LLaVA/TEOChat-style checkpoint ({', '.join(archs) or mtype}, "
                         "with mm_* keys and no vision_config) cannot be loaded with transformers alone; expected a "
                         "LlavaForConditionalGeneration folder (model_type 'llava')")
    if mtype != "llava":
        raise ValueError(f"{flag} {p}: model_type {mtype!r} is not a LLaVA vision-language model; expected a "
                         "LlavaForConditionalGeneration folder (model_type 'llava')")
    return cfg


class HFLlavaAssistant:
    """A local LLaVA-style model (``config.json`` + weights + tokenizer), greedy decoding on ``device``.

    ``device``: ``auto`` (the GPU when torch sees one), ``cpu``, ``cuda``, ``cuda:N``, ``mps`` (``None``:
    ``$ICLR25_DEVICE``, else ``auto``); the prompt and pixels go where the model is, the answer is decoded on the
    CPU. ``dtype``: ``float32``, ``bfloat16`` or ``float16`` weights given to ``from_pretrained`` (``None``: as the
    folder loads; half precision is refused on the CPU), so a 7B LLaVA loads in about 14 GB.
    ``device_map="auto"``: ``from_pretrained`` places the layers itself; it needs ``accelerate`` (a one-line
    ImportError without it) and overrides ``device``.
    """

    def __init__(self, path: str | os.PathLike[str], *, max_new_tokens: int = 32, references: bool = True,
                 device: object = None, dtype: str | None = None, device_map: str | None = None) -> None:
        from iclr25.utils.device import torch_device, torch_dtype
        from iclr25.utils.hf import load_local_model

        check_llava_folder(path)
        dev = torch_device(device)
        tdtype = None if dtype is None else torch_dtype(dtype, None if device_map else dev)
        self.tokenizer, self.model = load_local_model(path, "LlavaForConditionalGeneration", flag="--hf-model",
                                                      extra="iclr25-teochat[hf]", what="LLaVA model", dtype=tdtype,
                                                      device_map=device_map, device=dev)
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
        # the model's own image normalisation (its processor's preprocessor_config.json), CLIP's when it has none
        self.image_mean, self.image_std = _CLIP_MEAN, _CLIP_STD
        pre = Path(path) / "preprocessor_config.json"
        if pre.is_file():
            try:
                pc = json.loads(pre.read_text(encoding="utf-8"))
                self.image_mean = tuple(float(v) for v in pc.get("image_mean", _CLIP_MEAN))
                self.image_std = tuple(float(v) for v in pc.get("image_std", _CLIP_STD))
            except (OSError, ValueError, TypeError, json.JSONDecodeError) as exc:
                raise ValueError(f"--hf-model {pre}: unreadable preprocessor config ({type(exc).__name__})") from None
        # the model's own chat template when its tokenizer has one, else the package's "user : ... assistant :"
        self.chat_template = getattr(self.tokenizer, "chat_template", None)

    def _pixels(self, frames: np.ndarray):
        import torch  # noqa: PLC0415

        f = resize_frames(np.asarray(frames, dtype=np.uint8), self.image_size).astype(np.float32) / 255.0
        f = (f - np.array(self.image_mean, dtype=np.float32)) / np.array(self.image_std, dtype=np.float32)
        return torch.from_numpy(f).permute(0, 3, 1, 2).contiguous().to(self.input_device, self.model.dtype)

    @property
    def input_device(self):
        """Where the prompt and pixels go: the model's (first) device."""
        return getattr(self.model, "device", None) or next(self.model.parameters()).device

    def prompt_text(self, n_frames: int, question: str) -> str:
        """The prompt with one ``<image>`` per frame, in chronological order (``image 1`` is the earliest): the
        model's chat template around the user turn when its tokenizer has one, else the package's own
        ``user : ... assistant :`` form."""
        prompt = build_prompt(n_frames, question, references=self.references)
        if not self.chat_template:
            return prompt
        content = prompt.removeprefix("user : ").removesuffix(" assistant :")
        return self.tokenizer.apply_chat_template([{"role": "user", "content": content}], tokenize=False,
                                                  add_generation_prompt=True)

    def input_ids(self, prompt: str) -> list[int]:
        """Token ids of a prompt, each ``<image>`` expanded to the model's image tokens."""
        ids: list[int] = []
        bos = self.tokenizer.bos_token_id
        if bos is not None and not self.chat_template:  # a chat template writes its own start token
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
        ids = torch.tensor([self.input_ids(self.prompt_text(len(frames), question))], device=self.input_device)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        with torch.no_grad():
            out = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                                      pixel_values=self._pixels(frames), max_new_tokens=self.max_new_tokens,
                                      do_sample=False, pad_token_id=pad)
        return self.tokenizer.decode(out[0, ids.shape[1]:].cpu(), skip_special_tokens=True).strip()

    def predict(self, examples: Sequence[Example], sequences: Sequence[EOSequence]) -> list[str]:
        """Answers to ``examples`` (same prompts as the tiny model; single-image tasks show one frame)."""
        out = []
        for e in examples:
            chron = sequences[e.seq].chronological()
            frames = chron[list(e.frames)] if e.frames is not None else chron
            out.append(self.ask(frames, e.question))
        return out
