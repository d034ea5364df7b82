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

from iclr25.utils.hf import DEVICE_MAPS  # ``--device-map`` values (``auto``: accelerate places the layers)

from .dpo import DPOOutput, dpo_loss, sequence_logps

__all__ = ["HFVLM", "load_hf_vlm", "rag_prompt", "MODALITY", "train_dpo_hf", "DEVICE_MAPS"]


MODALITY = {"radiology": "chest x ray", "pathology": "pathology", "ophthalmology": "fundus"}


def rag_prompt(question: str, reports: Sequence[str], *, domain: str = "radiology") -> str:
    """The reference's RAG-PT prompt: the image, the question and the k numbered reference reports. Without
    reports (the no-retrieval question) the prompt names only the image and the question: no word of reference
    reports the model was not given."""
    modality = MODALITY.get(domain, domain)
    if not reports:
        return (f"You are provided with a {modality} image and a image-related question. Please answer the "
                f"question based on the image. Question: {question} Please choose from [yes, no]. Answer:")
    ctx = " ".join(f"{i + 1}. {r}" for i, r in enumerate(reports))
    return (f"You are provided with a {modality} image, a image-related question and {len(reports)} reference "
            f"report(s): {ctx} Please answer the question based on the image and the report(s). Question: "
            f"{question} Please choose from [yes, no]. It should be noted that the diagnostic information in the "
            "reference reports cannot be directly used as the basis for diagnosis, but should only be used for "
            "reference and comparison. Answer:")


@dataclasses.dataclass
class HFVLM:
    """A loaded LLaVA-style model with its tokenizer; ``n_image_tokens`` copies of the image token id stand
    for the image's patch features (what a LLaVA processor's expansion of ``<image>`` produces)."""

    model: Any
    tokenizer: Any
    image_token_id: int
    n_image_tokens: int
    image_processor: Any = None
    modality: str = "medical"
    batch_size: int = 16

    def chat_text(self, prompt: str) -> str:
        """The user turn with the image and ``prompt`` in the tokenizer's chat template (the generation prompt
        appended), or ``"<image>\n" + prompt`` when the folder has no chat template."""
        tok = self.tokenizer
        img = tok.convert_ids_to_tokens(self.image_token_id)
        if getattr(tok, "chat_template", None):
            for content in ([{"type": "image"}, {"type": "text", "text": prompt}], f"{img}\n{prompt}"):
                try:
                    text = tok.apply_chat_template([{"role": "user", "content": content}], tokenize=False,
                                                   add_generation_prompt=True)
                except Exception:  # noqa: BLE001 - templates differ in what content they accept
                    continue
                if img in text:
                    return text
        return f"{img}\n{prompt}"

    def _ids(self, prompt: str) -> list[int]:
        """Token ids of :meth:`chat_text` with the image placeholder expanded to ``n_image_tokens`` image
        tokens (what the LLaVA processor does)."""
        tok = self.tokenizer
        img = tok.convert_ids_to_tokens(self.image_token_id)
        text = self.chat_text(prompt)
        head, _, tail = text.partition(img)

        def enc(t: str) -> list[int]:
            return tok(t, add_special_tokens=False)["input_ids"] if t.strip() else []

        # a tokenizer that adds BOS itself (Llama's) gets it here, unless the template already wrote it
        bos = tok.bos_token
        add = getattr(tok, "add_bos_token", False) and bos is not None and not text.startswith(bos)
        return ([tok.bos_token_id] if add else []) + enc(head) + [self.image_token_id] * self.n_image_tokens + enc(tail)

    def pixels(self, images: Any) -> Any:
        """Images (N, 3, H, W) float in [0, 1] → the vision tower's ``pixel_values``: through the folder's
        image processor when it has one (resize, crop, normalisation), else resized to the tower's size."""
        import torch

        x = torch.as_tensor(np.asarray(images, dtype=np.float32))
        if self.image_processor is not None:
            arr = (x.clamp(0, 1) * 255).round().to(torch.uint8).permute(0, 2, 3, 1).cpu().numpy()
            return self.image_processor(images=list(arr), return_tensors="pt")["pixel_values"]
        side = int(self.model.config.vision_config.image_size)
        if tuple(x.shape[-2:]) == (side, side):
            return x
        return torch.nn.functional.interpolate(x, size=(side, side), mode="bilinear", align_corners=False)

    def prompts(self, contexts: Sequence[Sequence[str]], questions: Sequence[str]) -> list[str]:
        return [rag_prompt(q, list(c), domain=self.modality) for c, q in zip(contexts, questions, strict=True)]

    def vqa_yes_probability(self, images: Any, contexts: Sequence[Sequence[str]], questions: Sequence[str]
                            ) -> np.ndarray:
        """P(yes) of each (image, retrieved reports, question) in the RAG-PT prompt (what
        :func:`iclr25.mmed_rag.preference.mine_preferences` and ``answer`` call)."""
        pr = self.prompts(contexts, questions)
        b = self.batch_size
        return np.concatenate([self.yes_probability(self.pixels(images[s:s + b]), pr[s:s + b])
                               for s in range(0, len(pr), b)]) if pr else np.zeros(0)

    def _batch(self, prompts: Sequence[str], answers: Sequence[str] | None) -> tuple[Any, Any, Any]:
        import torch

        tok = self.tokenizer
        rows, labs = [], []
        for i, p in enumerate(prompts):
            ids = self._ids(p)
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

        dev = self.input_device
        ids, labels, attn = self._batch(prompts, answers)
        pv = torch.as_tensor(pixel_values)
        if dev.type != "cpu" or pv.device.type != "cpu" or self.model.dtype != torch.float32:
            ids, attn, pv = ids.to(dev), attn.to(dev), pv.to(dev, self.model.dtype)
        out = self.model(input_ids=ids, attention_mask=attn, pixel_values=pv)
        return sequence_logps(out.logits, labels.to(out.logits.device))

    @property
    def input_device(self) -> Any:
        """Where the prompt and pixels go: the model's (first) device."""
        return getattr(self.model, "device", None) or next(self.model.parameters()).device

    def yes_probability(self, pixel_values: Any, prompts: Sequence[str]) -> np.ndarray:
        """P(yes) / (P(yes) + P(no)) for each prompt."""
        import torch

        self.model.eval()
        with torch.no_grad():
            ly = self.answer_logps(pixel_values, prompts, ["yes"] * len(prompts))
            ln = self.answer_logps(pixel_values, prompts, ["no"] * len(prompts))
        return torch.sigmoid(ly - ln).cpu().numpy()

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


def _verify_if_ours(folder: Path) -> None:
    """A folder saved by ``align`` (its ``manifest.json`` is an iclr25 checkpoint manifest) loads only when whole;
    any other LLaVA folder (no such manifest) is the user's and is read as it is."""
    import json

    from iclr25.utils.checkpoints import MANIFEST, verify_manifest

    try:
        doc = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return
    if isinstance(doc, dict) and doc.get("kind") == "iclr25-checkpoint-manifest":
        verify_manifest(folder, what="aligned model folder (align)")


def load_hf_vlm(path: str | os.PathLike[str], *, flag: str = "--hf-path", device: Any = None,
                dtype: str | None = None, device_map: str | None = None) -> HFVLM:
    """Load a LLaVA-style model and tokenizer from a local folder (never downloads), through
    :func:`iclr25.utils.hf.load_local_model`; errors name ``flag`` and the folder."""
    from iclr25.utils.hf import load_local_model, read_model_config

    _verify_if_ours(Path(path))
    # refuse, in one line, a folder of another architecture before building anything
    raw = read_model_config(path, flag=flag, what="LLaVA model")
    kind = str(raw.get("model_type", ""))
    archs = [str(a) for a in raw.get("architectures") or []]
    if "llava" not in kind.lower() and not any("llava" in a.lower() for a in archs):
        raise ValueError(f"{flag} {path}: config.json has model_type {kind!r} and architectures "
                         f"{archs}; expected a LLaVA-style model (model_type 'llava', "
                         "LlavaForConditionalGeneration)")
    from iclr25.utils.device import torch_device, torch_dtype

    dev = torch_device(device)
    tdtype = None if dtype is None else torch_dtype(dtype, None if device_map else dev)
    tok, model = load_local_model(path, "LlavaForConditionalGeneration", flag=flag, extra="iclr25-mmed-rag[hf]",
                                  what="LLaVA model", dtype=tdtype, device_map=device_map, device=dev)
    p = Path(path)
    proc = None
    if (p / "preprocessor_config.json").is_file():
        from transformers import AutoImageProcessor

        try:
            proc = AutoImageProcessor.from_pretrained(p, local_files_only=True)
        except (OSError, ValueError, KeyError) as exc:
            first = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
            raise ValueError(f"{flag} {p}: cannot load its image processor ({first})") from None
    vc = model.config.vision_config
    n = (vc.image_size // vc.patch_size) ** 2
    if getattr(model.config, "vision_feature_select_strategy", "default") == "full":
        n += 1
    tid = getattr(model.config, "image_token_id", None)
    tid = getattr(model.config, "image_token_index", None) if tid is None else tid
    if tid is None:
        raise ValueError(f"{p}/config.json names no image_token_id / image_token_index")
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token or tok.unk_token
    return HFVLM(model, tok, int(tid), n, image_processor=proc)


def _reference_logps(ref: HFVLM, pairs: Any, xc: Any, xr: Any, pc: Sequence[str], prj: Sequence[str], *,
                     lora: bool) -> tuple[Any, Any]:
    """π_ref's summed answer log-probabilities of the chosen and rejected sides, once (π_ref is frozen);
    ``lora``: ``ref`` is the policy itself, read with its adapters disabled."""
    import contextlib

    import torch

    chunks = [np.arange(s, min(s + ref.batch_size, len(pairs))) for s in range(0, len(pairs), ref.batch_size)]
    with torch.no_grad(), (ref.model.disable_adapter() if lora else contextlib.nullcontext()):
        rc = torch.cat([ref.answer_logps(xc[c], [pc[i] for i in c], [pairs.chosen.answers[i] for i in c])
                        for c in chunks])
        rr = torch.cat([ref.answer_logps(xr[c], [prj[i] for i in c], [pairs.rejected.answers[i] for i in c])
                        for c in chunks])
    return rc, rr


def train_dpo_hf(policy: HFVLM, pairs: Any, *, steps: int = 50, batch_size: int = 4, lr: float = 1e-5,
                 beta: float = 0.1, lora: str = "auto", lora_r: int = 16, seed: int = 0,
                 log: Any = None) -> tuple[HFVLM, dict[str, Any]]:
    """DPO (RAG-PT) of a Hugging Face LLaVA-style model on mined pairs
    (:class:`iclr25.mmed_rag.preference.PreferencePairs`, VQA task), as the reference code trains it:
    summed answer-token log-probabilities, the chosen and rejected images through the same prompt.

    ``lora``: ``"on"`` trains LoRA adapters through ``peft`` (the reference: the frozen reference model is
    the same network with the adapters disabled; the adapters are merged back at the end, so the saved folder
    is a plain LLaVA folder); ``"off"`` fine-tunes every weight against a frozen copy (tiny models);
    ``"auto"`` uses LoRA when ``peft`` is installed and the model has more than 50 M parameters.
    Returns the policy and the last-steps means of the loss, reward accuracy and margin, with ``mode``.
    """
    import copy

    import torch

    if lora not in ("auto", "on", "off"):
        raise ValueError(f"lora must be 'auto', 'on' or 'off', got {lora!r}")
    if len(pairs) == 0:
        raise ValueError("no preference pairs to train on")
    try:
        import peft
    except ImportError:
        peft = None
    n_params = sum(p.numel() for p in policy.model.parameters())
    use_lora = lora == "on" or (lora == "auto" and peft is not None and n_params > 50_000_000)
    if use_lora and peft is None:
        raise ImportError("--lora on needs peft: pip install peft")
    if not use_lora and n_params > 1_500_000_000:
        raise ValueError(f"the model has {n_params / 1e9:.1f} B parameters: full fine-tuning needs about "
                         f"{16 * n_params / 2**30:.0f} GiB; use --lora on (needs peft)")
    say = log or (lambda *_: None)
    torch.manual_seed(seed)
    gen = np.random.default_rng(seed)
    model = policy.model
    if use_lora:
        cfg = peft.LoraConfig(r=lora_r, lora_alpha=2 * lora_r, lora_dropout=0.0,
                              target_modules=r".*language_model.*\.(q_proj|k_proj|v_proj|o_proj)")
        model = peft.get_peft_model(model, cfg)
        ref_model = None
    else:
        ref_model = copy.deepcopy(model).eval()
        for p in ref_model.parameters():
            p.requires_grad_(False)
    pol = dataclasses.replace(policy, model=model)
    ref = dataclasses.replace(policy, model=ref_model) if ref_model is not None else None
    xc, xr = policy.pixels(pairs.chosen.images), policy.pixels(pairs.rejected.images)
    pc = policy.prompts(pairs.chosen.contexts, pairs.chosen.questions)
    prj = policy.prompts(pairs.rejected.contexts, pairs.rejected.questions)
    model.eval()  # no dropout: the policy and reference log-probabilities agree at step 0
    rc, rr = _reference_logps(pol if ref is None else ref, pairs, xc, xr, pc, prj, lora=ref is None)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=0.0)
    hist = []
    for step in range(steps):
        idx = gen.choice(len(pairs), min(batch_size, len(pairs)), replace=False)
        out = dpo_loss(pol.answer_logps(xc[idx], [pc[i] for i in idx], [pairs.chosen.answers[i] for i in idx]),
                       pol.answer_logps(xr[idx], [prj[i] for i in idx], [pairs.rejected.answers[i] for i in idx]),
                       rc[idx], rr[idx], beta=beta)
        opt.zero_grad()
        out.loss.backward()
        opt.step()
        hist.append((float(out.loss.detach()), float(out.accuracies.mean()), float(out.margins.mean())))
        if step % 10 == 0 or step == steps - 1:
            say(f"DPO step {step + 1}/{steps}: loss {hist[-1][0]:.4f}")
    if use_lora:
        model = model.merge_and_unload()
    model.eval()
    h = np.array(hist[-20:])
    return dataclasses.replace(policy, model=model), {
        "loss": float(h[:, 0].mean()), "reward_accuracy": float(h[:, 1].mean()), "margin": float(h[:, 2].mean()),
        "first_loss": hist[0][0], "mode": "lora" if use_lora else "full", "parameters": n_params}

