"""The paper's configuration: a LoRA fine-tune of a local LLaVA-style model on TEOChatlas, then its claims' evaluation.

This is the ``paper`` rung of the claims registry (issue 59; ``iclr25 claims teochat --rung paper``). The base is a
Hugging Face ``LlavaForConditionalGeneration`` folder (Video-LLaVA-7B converted, or any LLaVA-1.5-style model),
loaded with ``local_files_only`` through :class:`iclr25.teochat.hf.HFLlavaAssistant`; the data is TEOChatlas as it
lies on disk (:mod:`iclr25.teochat.teochatlas`). As in the reference (``scripts/train_teochat.sh``):

- every frame goes through the shared image tower as its own image, one ``<image>`` per frame, with the
  interleaved "Image i: <image>" references and the chronological prefix; frames sorted by date, at most 16;
- the Vicuna v1 prompt ("A chat between ... USER: ... ASSISTANT: ...</s>"), loss on the answer tokens only
  (prompt and image tokens are ``-100``);
- the language model frozen, LoRA r = 128, alpha = 256, dropout 0.05 on every linear layer of the language model
  (not the vision tower, the projector or the output head); the projector trained (its weights kept in float32);
- AdamW lr 2e-5 (projector 2e-5), weight decay 0, cosine schedule with 3 % warmup, 2 epochs, batch 1 x 8
  gradient accumulation, context 2048 text tokens, gradient checkpointing.

Differences, each for a stated reason: the backbone is frozen in bfloat16 (14 GB), not 8-bit (bitsandbytes is
not a dependency here); frames are resized to the tower's square input (the CLIP processor's resize and centre
crop agree on square imagery); training batches are drawn in a seeded random order (no grouping by modality
length); evaluation decodes greedily (the reference samples at temperature 0.2 without a seed).

The claims: region temporal QA on ``eval/QFabric_TRE_RTQA.json`` (its RTQA records) and the zero-shot change
detection and change QA sets ``eval/ABCD.json`` and ``eval/CDVQA.json``, each asked twice of the one fine-tuned
model: with every frame (TEOChat) and with the last frame only (the single-image reference). Accuracy is the
reference's exact match after lower-casing and removing punctuation.

The smoke run and the suite's one-step test take exactly this path with a tiny random LLaVA (a few-layer CLIP
and Llama, a word-level tokenizer) and a few TEOChatlas-format records (:func:`write_tiny_llava`,
:func:`write_tiny_teochatlas`); nothing here was run at 7B in this repository.

References: Irvin et al., TEOChat, ICLR 2025, Sec. 3-5 and Table 1; reference ``scripts/train_teochat.sh``,
``videollava/train/train.py``, ``videollava/eval/classification.py``.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import math
import os
import string
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .teochatlas import EVAL_FILES, IMAGE_TAG, TRAIN_FILE, Record, frame_prompt, read_records

__all__ = ["FineTuneConfig", "PAPER_CONFIG", "LlavaLoRA", "PaperResult", "exact_match", "run_paper",
           "write_tiny_llava", "write_tiny_teochatlas"]

#: Vicuna v1's system prompt (the reference's ``conv_mode="v1"``)
VICUNA_SYSTEM = ("A chat between a curious human and an artificial intelligence assistant. The assistant gives "
                 "helpful, detailed, and polite answers to the human's questions.")
IGNORE_INDEX = -100


@dataclasses.dataclass(frozen=True)
class FineTuneConfig:
    """The fine-tune and its evaluation (defaults: the paper's, :data:`PAPER_CONFIG`)."""

    lora_r: int = 128
    lora_alpha: int = 256
    lora_dropout: float = 0.05
    lr: float = 2e-5
    projector_lr: float = 2e-5
    weight_decay: float = 0.0
    warmup_ratio: float = 0.03
    epochs: int = 2
    batch_size: int = 1
    grad_accum: int = 8
    max_length: int = 2048
    max_frames: int = 16
    gradient_checkpointing: bool = True
    max_new_tokens: int = 256
    #: at most this many optimiser steps (``None``: the epochs' worth)
    max_steps: int | None = None
    #: at most this many training records / questions per evaluation set (``None``: all)
    max_train: int | None = None
    max_eval: int | None = None

    def __post_init__(self) -> None:
        for name in ("lora_r", "lora_alpha", "epochs", "batch_size", "grad_accum", "max_length", "max_frames",
                     "max_new_tokens"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        for name in ("max_steps", "max_train", "max_eval"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise ValueError(f"{name} must be a positive integer or None, got {v!r}")
        for name in ("lr", "projector_lr"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a positive finite number, got {v!r}")
        if not 0 <= self.lora_dropout < 1 or not 0 <= self.warmup_ratio < 1 or not self.weight_decay >= 0:
            raise ValueError("lora_dropout and warmup_ratio must be in [0, 1), weight_decay >= 0")


#: the paper's configuration (``scripts/train_teochat.sh``)
PAPER_CONFIG = FineTuneConfig()

_PUNCT = str.maketrans("", "", string.punctuation)


def exact_match(prediction: str, truth: str) -> bool:
    """The reference's classification match: equal after lower-casing and removing punctuation (and, here, the
    surrounding white space)."""
    return prediction.lower().translate(_PUNCT).strip() == truth.lower().translate(_PUNCT).strip()


class LlavaLoRA:
    """A local LLaVA folder with LoRA adapters on its language model and a trainable projector.

    ``device``: ``auto``/``cpu``/``cuda``/... (``None``: ``$ICLR25_DEVICE``, else ``auto``). On an accelerator the
    weights load in bfloat16 with ``device_map="auto"`` (accelerate places the layers); on the CPU in float32.
    """

    def __init__(self, base: str | os.PathLike[str], *, config: FineTuneConfig = PAPER_CONFIG, seed: int = 0,
                 device: object = None) -> None:
        import torch

        from iclr25.utils.device import torch_device

        from .hf import HFLlavaAssistant

        try:
            from peft import LoraConfig, get_peft_model
        except ImportError as exc:
            raise ImportError("the paper rung's LoRA fine-tune needs peft: pip install 'iclr25-teochat[hf]'") from exc
        dev = torch_device(device)
        on_cpu = dev.type == "cpu"
        self.config = config
        self.base = HFLlavaAssistant(base, max_new_tokens=config.max_new_tokens, device=dev,
                                     dtype=None if on_cpu else "bfloat16", device_map=None if on_cpu else "auto")
        self.tokenizer = self.base.tokenizer
        model = self.base.model
        dtype = model.dtype
        if config.gradient_checkpointing:
            kw = {"use_reentrant": False}
            if hasattr(model, "activation_checkpointing_enable"):  # transformers >= 5.x
                model.activation_checkpointing_enable(activation_checkpointing_kwargs=kw)
            else:
                model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kw)
        model.config.use_cache = False
        linear = [n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear) and "language_model" in n
                  and not n.split(".")[-1] == "lm_head"]
        if not linear:
            raise ValueError("the LLaVA model has no linear layer under 'language_model' to put LoRA on")
        torch.manual_seed(seed)
        self.model = get_peft_model(model, LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha,
                                                      lora_dropout=config.lora_dropout, bias="none",
                                                      target_modules=linear))
        proj = [m for n, m in self.model.named_modules() if n.endswith("multi_modal_projector")]
        if len(proj) != 1:
            raise ValueError("the LLaVA model has no single 'multi_modal_projector' to train")
        projector = proj[0]
        projector.float()  # fp32 master weights: a bf16 weight loses an update of 2e-5 in rounding
        projector.register_forward_pre_hook(lambda _m, args: tuple(a.float() for a in args))
        projector.register_forward_hook(lambda _m, _a, out: out.to(dtype))
        for p in projector.parameters():
            p.requires_grad_(True)
        self.projector_params = list(projector.parameters())
        ids = {id(p) for p in self.projector_params}
        self.lora_params = [p for p in self.model.parameters() if p.requires_grad and id(p) not in ids]
        self.base.model = self.model  # the assistant's pixels and devices follow the wrapped model

    # ----------------------------------------------------------------- encoding
    def _text_ids(self, text: str) -> list[int]:
        ids: list[int] = []
        parts = text.split(IMAGE_TAG)
        for k, part in enumerate(parts):
            if part.strip():
                ids.extend(self.tokenizer(part.strip(), add_special_tokens=False)["input_ids"])
            if k < len(parts) - 1:
                ids.extend([self.base.image_token_id] * self.base.tokens_per_image)
        return ids

    def encode(self, record: Record, *, last_only: bool = False, answers: bool = True) -> tuple[list[int], list[int]]:
        """``(input_ids, labels)`` of a record in the Vicuna v1 form: labels are ``-100`` except on the answer
        tokens (and each answer's end token); without ``answers`` only the first question, up to "ASSISTANT:"."""
        n = 1 if last_only else len(record.frames)
        ids: list[int] = []
        bos = self.tokenizer.bos_token_id
        if bos is not None:
            ids.append(int(bos))
        labels = [IGNORE_INDEX] * len(ids)
        eos = self.tokenizer.eos_token_id
        prefix = VICUNA_SYSTEM + " "
        for k, (q, a) in enumerate(record.turns):
            q = frame_prompt(q, n, temporal=record.temporal) if k == 0 else q.replace(IMAGE_TAG, "").replace(
                "<video>", "")
            prompt_ids = self._text_ids(f"{prefix}USER: {q} ASSISTANT:")
            ids += prompt_ids
            labels += [IGNORE_INDEX] * len(prompt_ids)
            if not answers:
                return ids, labels
            ans = self.tokenizer(" " + a.strip(), add_special_tokens=False)["input_ids"] + ([int(eos)] if eos is not None
                                                                                           else [])
            ids += ans
            labels += ans
            prefix = ""
        return ids, labels

    def _truncate(self, ids: list[int], labels: list[int]) -> tuple[list[int], list[int]] | None:
        """Keep at most ``max_length`` text tokens (each image counts as one, as the reference's -200 token);
        ``None`` when the cut would fall inside the images or leave no answer token."""
        img = self.base.image_token_id
        text = np.cumsum([t != img for t in ids]) + np.cumsum([t == img for t in ids]) / self.base.tokens_per_image
        if text[-1] <= self.config.max_length:
            return ids, labels
        cut = int(np.searchsorted(text, self.config.max_length, side="right"))
        if img in ids[cut:] or all(v == IGNORE_INDEX for v in labels[:cut]):
            return None
        return ids[:cut], labels[:cut]

    def _pixels(self, record: Record, last_only: bool):
        from .sequences import resize_frames

        frames = record.load_frames(last_only=last_only)
        size = self.base.image_size
        return self.base._pixels(np.concatenate([resize_frames(f[None], size) for f in frames]))

    # ----------------------------------------------------------------- training
    def train(self, records: Sequence[Record], *, seed: int = 0) -> dict[str, float]:
        """The fine-tune on ``records`` (see the module docstring); returns steps, skipped records and the mean
        loss of the first and last optimiser steps."""
        import torch

        cfg = self.config
        per_step = cfg.batch_size * cfg.grad_accum
        total = math.ceil(len(records) * cfg.epochs / per_step)
        if cfg.max_steps is not None:
            total = min(total, cfg.max_steps)
        if total < 1:
            raise ValueError("no training records (the TEOChatlas training file is empty)")
        warmup = math.ceil(cfg.warmup_ratio * total)
        opt = torch.optim.AdamW([{"params": self.lora_params, "lr": cfg.lr},
                                 {"params": self.projector_params, "lr": cfg.projector_lr}],
                                weight_decay=cfg.weight_decay)

        def schedule(step: int) -> float:
            if step < warmup:
                return (step + 1) / (warmup + 1)
            return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))

        sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule)
        rng = np.random.default_rng(seed)
        order = np.concatenate([rng.permutation(len(records)) for _ in range(cfg.epochs)])
        dev = self.base.input_device
        self.model.train()
        step, micro, skipped, losses, step_loss = 0, 0, 0, [], []
        opt.zero_grad(set_to_none=True)
        for i in order:
            if step >= total:
                break
            enc = self._truncate(*self.encode(records[int(i)]))
            if enc is None:
                skipped += 1
                continue
            ids, labels = (torch.tensor([x], device=dev) for x in enc)
            out = self.model(input_ids=ids, attention_mask=torch.ones_like(ids),
                             pixel_values=self._pixels(records[int(i)], False), labels=labels, use_cache=False)
            loss = out.loss
            if not torch.isfinite(loss):
                raise FloatingPointError(f"non-finite training loss at step {step} (record {records[int(i)].id})")
            (loss / cfg.grad_accum).backward()
            step_loss.append(float(loss.detach().float().cpu()))
            micro += 1
            if micro == cfg.grad_accum:
                opt.step()
                sched.step()
                opt.zero_grad(set_to_none=True)
                losses.append(float(np.mean(step_loss)))
                step, micro, step_loss = step + 1, 0, []
        if micro and step < total:  # the last, partial accumulation (as the Trainer's final step)
            opt.step()
            sched.step()
            losses.append(float(np.mean(step_loss)))
            step += 1
        self.model.eval()
        return {"steps": float(step), "skipped_records": float(skipped),
                "first_loss": losses[0] if losses else math.nan, "last_loss": losses[-1] if losses else math.nan}

    # --------------------------------------------------------------- evaluation
    def answer(self, record: Record, *, last_only: bool = False) -> str:
        """The greedy answer to the record's first question (all frames, or the last one only)."""
        import torch

        ids, _ = self.encode(record, last_only=last_only, answers=False)
        x = torch.tensor([ids], device=self.base.input_device)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        with torch.no_grad():
            out = self.model.generate(input_ids=x, attention_mask=torch.ones_like(x),
                                      pixel_values=self._pixels(record, last_only),
                                      max_new_tokens=self.config.max_new_tokens, do_sample=False, pad_token_id=pad)
        return self.tokenizer.decode(out[0, x.shape[1]:].cpu(), skip_special_tokens=True).strip()


@dataclasses.dataclass
class PaperResult:
    """The paper rung at one seed: per evaluation set, the accuracy with every frame and with the last frame
    only, the number of questions, distinct answers, the best constant answer's accuracy; the training log."""

    accuracy: dict[str, float]
    last_frame: dict[str, float]
    n_questions: dict[str, int]
    distinct: dict[str, int]
    constant: dict[str, float]
    training: dict[str, float]


def _eval_set(root: Path, name: str, cfg: FineTuneConfig, seed: int, task: str | None) -> list[Record]:
    path = root / EVAL_FILES[name]
    recs = read_records(path, root=root, max_frames=cfg.max_frames, seed=seed, limit=cfg.max_eval, task=task)
    if not recs:
        what = f"no record whose field 'task' contains {task!r}" if task else "no records"
        raise ValueError(f"{path}: {what} (expected the TEOChatlas evaluation file)")
    return recs


def run_paper(data: str | os.PathLike[str], base: str | os.PathLike[str], *, seed: int = 0,
              config: FineTuneConfig = PAPER_CONFIG, device: object = None) -> PaperResult:
    """Fine-tune ``base`` on TEOChatlas in ``data`` (:data:`~iclr25.teochat.teochatlas.TRAIN_FILE`) and ask the
    claims' evaluation sets with every frame and with the last frame only. The evaluation files are read (and
    checked) before any training."""
    root = Path(data)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such folder (expected TEOChatlas)")
    sets = {"rtqa": _eval_set(root, "qfabric_tre_rtqa", config, seed, "rtqa"),
            "abcd": _eval_set(root, "abcd", config, seed, None),
            "cdvqa": _eval_set(root, "cdvqa", config, seed, None)}
    train = read_records(root / TRAIN_FILE, root=root, max_frames=config.max_frames, seed=seed,
                         limit=config.max_train)
    model = LlavaLoRA(base, config=config, seed=seed, device=device)
    log = model.train(train, seed=seed)
    acc, last, n, distinct, const = {}, {}, {}, {}, {}
    for name, recs in sets.items():
        truths = [r.answer for r in recs]
        preds = [model.answer(r) for r in recs]
        preds_last = [model.answer(r, last_only=True) for r in recs]
        acc[name] = float(np.mean([exact_match(p, t) for p, t in zip(preds, truths, strict=True)]))
        last[name] = float(np.mean([exact_match(p, t) for p, t in zip(preds_last, truths, strict=True)]))
        n[name], distinct[name] = len(recs), len({p.lower().translate(_PUNCT).strip() for p in preds})
        counts = collections.Counter(t.lower().translate(_PUNCT).strip() for t in truths)
        const[name] = counts.most_common(1)[0][1] / len(truths)
    return PaperResult(acc, last, n, distinct, const, log)


# --------------------------------------------------------------------- tiny inputs for the smoke run and tests
def write_tiny_llava(folder: str | os.PathLike[str], words: Sequence[str], *, seed: int = 0) -> Path:
    """A tiny random ``LlavaForConditionalGeneration`` (2-layer CLIP at 32 px, 8 px patches: 16 tokens a frame;
    2-layer Llama, d = 32) with a word-level tokenizer over ``words``, saved in ``folder``: the smoke run's base
    model (:func:`iclr25.utils.hf.write_tiny_llava`). Never trained: it exercises the code path, not the claims."""
    from iclr25.utils.hf import write_tiny_llava as write

    vocab = ["[UNK]", "<s>", "</s>", *dict.fromkeys(w for w in words if w not in ("[UNK]", "<s>", "</s>", IMAGE_TAG)),
             IMAGE_TAG]
    return write(folder, vocab, unk="[UNK]", bos="<s>", eos="</s>", pad="</s>", image_token=IMAGE_TAG, seed=seed)


def write_tiny_teochatlas(folder: str | os.PathLike[str], *, seed: int = 0, n_train: int = 4,
                          n_eval: int = 2) -> list[str]:
    """A few TEOChatlas-format records (``train/instruct.json``, the three evaluation files, PNG frames) from the
    package's generator (flooded-road sequences, region temporal QA), saved in ``folder``; returns the words of
    their texts (for :func:`write_tiny_llava`'s tokenizer)."""
    from PIL import Image

    from .conversation import make_examples
    from .synth import generate_sequences

    root = Path(folder)
    words: set[str] = set((VICUNA_SYSTEM + " USER: ASSISTANT: Image Image: in chronological order:").split())

    def records(split: str, n: int, s: int, eval_file: bool, task: str) -> list[dict]:
        seqs = generate_sequences(n, seed=s, scenes=("flooded_road",))
        exs = [e for e in make_examples(seqs, seed=s, tasks=["rtqa"]) if e.frames is None]
        out = []
        for k, e in enumerate(exs[:n]):
            seq = seqs[e.seq]
            paths = []
            for j, fr in enumerate(seq.frames):  # the stored (shuffled) order; the dates sort them
                p = root / split / "images" / f"{task}_{s}_{k}_{j}.png"
                p.parent.mkdir(parents=True, exist_ok=True)
                Image.fromarray(fr).save(p)
                paths.append(str(p.relative_to(root / split)))
            q = f"<video>\nThis is a sequence of satellite images captured at different times: {e.question}"
            words.update(q.split())
            words.update(e.answer.split())
            rec: dict = {"id": f"{task}-{s}-{k}", "video": paths,
                         "conversations": [{"from": "human", "value": q}, {"from": "gpt", "value": e.answer}],
                         "task": task}
            if eval_file:
                rec["timestamp"] = list(seq.dates)
            else:
                rec["metadata"] = [{"timestamp": d} for d in seq.dates]
            out.append(rec)
        return out

    files = {TRAIN_FILE: records("train", n_train, seed, False, "rtqa"),
             EVAL_FILES["qfabric_tre_rtqa"]: records("eval", n_eval, seed + 1, True, "qfabric_rtqa"),
             EVAL_FILES["abcd"]: records("eval", n_eval, seed + 2, True, "abcd"),
             EVAL_FILES["cdvqa"]: records("eval", n_eval, seed + 3, True, "cdvqa")}
    for rel, recs in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(json.dumps(recs), encoding="utf-8")
    return sorted(words)
