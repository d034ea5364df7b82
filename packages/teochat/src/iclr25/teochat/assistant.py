"""Training and prompting the tiny TEOChat: answer-only loss, greedy decoding, checkpoints.

The loss is next-token cross-entropy on the assistant's answer (and its end token) only; prompt and image
positions are ignored (the reference's ``IGNORE_INDEX = -100``):

.. math:: \\mathcal{L} = -\\frac{1}{|A|} \\sum_{i \\in A} \\log p_\\theta(y_i \\mid y_{<i}, x_{1..T}).

AdamW (``torch.optim.AdamW``'s update, computed by :class:`iclr25.utils.optim.Adam`) with linear warm-up (3 %)
and cosine decay, as ``scripts/train_teochat.sh`` (lr, warm-up ratio, schedule); the whole tiny model is trained
from scratch (the paper freezes an 8-bit LLM and trains LoRA + the projector). Evaluation decodes greedily, so
it is deterministic (the reference samples at temperature 0.2 without a seed).

Devices (issue 59): :func:`train_assistant`, :class:`Assistant` and :meth:`Assistant.load` take ``device=``
(``None``: ``$ICLR25_DEVICE``, else ``auto``, the GPU when torch sees one). The model is initialised on the CPU
(the same weights on every device) and moved; each batch (ids, masks, frames) is moved to the model's device
before the step; the batch draws stay on numpy's generator, so every device trains on the same batches; answers
are decoded on the CPU. float32 on every device.

References: Irvin et al., TEOChat, ICLR 2025, Sec. 3.2; reference ``videollava/train/train.py``.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F

from iclr25.utils.checkpoints import MANIFEST, verify_manifest
from iclr25.utils.device import torch_device
from iclr25.utils.io import DataFileError, atomic_write
from iclr25.utils.optim import Adam
from iclr25.utils.progress import progress
from iclr25.utils.seeding import check_seed

from .conversation import IMAGE, TASKS, Example, Vocabulary, build_prompt
from .model import ModelConfig, TinyTEOChat
from .synth import EOSequence

__all__ = ["TrainConfig", "Assistant", "train_assistant", "sample_weights", "example_inputs", "frames_to_tensor"]


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Training budget and prompt mode.

    ``references``: interleaved ``image i :`` references (False = plain concatenation, the Video-LLaVA analog);
    ``last_frame``: show only the latest frame (the single-image GeoChat analog); ``balance_answers``: tasks whose
    questions are drawn with every answer equally often (within the task's share of the batch; since 0.7, for the
    damage levels, 70 % of which are ``no_damage``: trained on the raw mix every model answers ``no_damage`` to
    every question, and the inverse-prevalence F1 weights the rare levels most).
    """

    steps: int = 600
    batch_size: int = 32
    lr: float = 2e-3
    weight_decay: float = 0.01
    warmup: float = 0.03
    references: bool = True
    last_frame: bool = False
    task_balanced: bool = True
    balance_answers: tuple[str, ...] = ()
    #: with ``last_frame``: the prompt says how many frames the sequence has and that the image shown is the
    #: last of them (issue 60: a last-frame model that is not told the count is a straw man on questions whose
    #: answer depends on it)
    frame_count: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "balance_answers", tuple(self.balance_answers))  # a list when read from JSON
        bad = [t for t in self.balance_answers if t not in TASKS]
        if bad:
            raise ValueError(f"balance_answers must name tasks of {TASKS}, got {bad}")
        for name in ("steps", "batch_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if not (isinstance(self.lr, (int, float)) and math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"lr must be a finite number > 0, got {self.lr!r}")
        if not 0 <= self.warmup < 1:
            raise ValueError(f"warmup must be a fraction in [0, 1), got {self.warmup!r}")


def frames_to_tensor(frames: Sequence[np.ndarray]) -> torch.Tensor:
    """uint8 ``(H, W, 3)`` frames -> normalised float ``(N, 3, H, W)``."""
    arr = np.stack(frames).astype(np.float32) / 255.0
    return torch.from_numpy((arr - 0.5) / 0.25).permute(0, 3, 1, 2).contiguous()


def example_inputs(e: Example, seq: EOSequence, *, references: bool = True, last_frame: bool = False,
                   perm: np.ndarray | None = None, frame_count: bool = False) -> tuple[str, np.ndarray]:
    """The prompt and the frames shown for one example (chronological unless ``perm`` reorders them);
    ``frame_count`` (with ``last_frame``): the prompt names the number of frames and shows the last one as
    ``image T``."""
    chron = seq.chronological()
    if e.frames is not None:
        return build_prompt(1, e.question, references=references, single=True), chron[list(e.frames)]
    if last_frame and frame_count and len(chron) > 1:
        t = len(chron)
        img = f"image {t} : {IMAGE}" if references else IMAGE
        return (f"user : these are {t} satellite images in chronological order : {img} {e.question} assistant :",
                chron[-1:])
    if last_frame:
        return build_prompt(1, e.question, references=references, single=True), chron[-1:]
    if perm is not None:
        chron = chron[perm]
    return build_prompt(len(chron), e.question, references=references), chron


def _encode(vocab: Vocabulary, prompt: str, answer: str | None, n_tok: int) -> tuple[list[int], int]:
    ids = [vocab.bos]
    for t in vocab.encode(prompt):
        ids.extend([t] * n_tok if t == vocab.image else [t])
    n_prompt = len(ids)
    if answer is not None:
        ids.extend(vocab.encode(answer) + [vocab.eos])
    return ids, n_prompt


def _collate(rows: list[tuple[list[int], int]], pad: int, *, left: bool
             ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    l = max(len(r[0]) for r in rows)
    ids = torch.full((len(rows), l), pad, dtype=torch.long)
    valid = torch.zeros((len(rows), l), dtype=torch.bool)
    target = torch.zeros((len(rows), l), dtype=torch.bool)
    for i, (r, n_prompt) in enumerate(rows):
        o = l - len(r) if left else 0
        ids[i, o:o + len(r)] = torch.tensor(r)
        valid[i, o:o + len(r)] = True
        target[i, o + n_prompt:o + len(r)] = True
    return ids, valid, target


class Assistant:
    """A trained tiny TEOChat with its vocabulary and prompt mode."""

    def __init__(self, model: TinyTEOChat, vocab: Vocabulary, config: TrainConfig,
                 history: list[tuple[int, float]] | None = None, tokens_per_s: float | None = None, *,
                 device: str | torch.device | None = None) -> None:
        self.device = torch_device(device)
        self.model, self.vocab, self.config = model.to(self.device), vocab, config
        self.history = list(history or [])
        self.tokens_per_s = tokens_per_s

    # ------------------------------------------------------------------------------------------ inference
    def _generate(self, prompts: list[str], frames: list[np.ndarray], batch_size: int) -> list[str]:
        n_tok = self.model.cfg.tokens_per_frame
        rows = [_encode(self.vocab, p, None, n_tok) for p in prompts]
        order = np.argsort([len(r[0]) for r in rows], kind="stable")
        out: list[str] = [""] * len(rows)
        self.model.eval()
        for s in range(0, len(order), batch_size):
            idx = order[s:s + batch_size]
            ids, valid, _ = _collate([rows[i] for i in idx], self.vocab.pad, left=True)
            fr = frames_to_tensor([f for i in idx for f in frames[i]]).to(self.device)
            gen = self.model.generate(ids.to(self.device), valid.to(self.device), fr, eos=self.vocab.eos).cpu()
            for j, i in enumerate(idx):
                out[i] = self.vocab.decode(gen[j].tolist())
        return out

    def predict(self, examples: Sequence[Example], sequences: Sequence[EOSequence], *, shuffle_frames: bool = False,
                seed: int = 0, batch_size: int = 64) -> list[str]:
        """Greedy answers to ``examples``; ``shuffle_frames`` feeds each sequence's frames in a random,
        non-chronological order (the ablation that drops the pipeline's date sorting)."""
        rng = np.random.default_rng(check_seed(seed))
        prompts, frames = [], []
        for e in examples:
            seq = sequences[e.seq]
            perm = None
            if shuffle_frames and seq.n_frames > 1:
                perm = rng.permutation(seq.n_frames)
                while np.all(perm == np.arange(seq.n_frames)):
                    perm = rng.permutation(seq.n_frames)
            p, f = example_inputs(e, seq, references=self.config.references, last_frame=self.config.last_frame,
                                  perm=perm, frame_count=self.config.frame_count)
            prompts.append(p)
            frames.append(f)
        with torch.no_grad():
            return self._generate(prompts, frames, batch_size)

    def ask(self, frames: np.ndarray, question: str) -> str:
        """Answer ``question`` about chronological uint8 frames ``(T, H, W, 3)`` (any T >= 1)."""
        if not isinstance(question, str) or not question.strip():
            raise ValueError("question must be a non-empty string")
        frames = np.asarray(frames)
        size = self.model.cfg.image_size
        if frames.ndim != 4 or frames.shape[1:] != (size, size, 3):
            raise ValueError(f"frames must be (T, {size}, {size}, 3) for this model, got {frames.shape}")
        if self.config.last_frame:
            frames = frames[-1:]
        prompt = build_prompt(len(frames), question, references=self.config.references)
        with torch.no_grad():
            return self._generate([prompt], [frames], 1)[0]

    # ---------------------------------------------------------------------------------------- checkpoints
    def save(self, path: str | os.PathLike[str]) -> Path:
        """One ``.pt`` file: the weights and the configs as JSON (loads with ``weights_only=True``)."""
        meta = {"format": "iclr25-teochat/1", "model": dataclasses.asdict(self.model.cfg),
                "train": dataclasses.asdict(self.config), "vocab": list(self.vocab.words)}
        buf = io.BytesIO()  # CPU weights whatever the device
        state = {k: v.detach().cpu() for k, v in self.model.state_dict().items()}
        torch.save({"meta": json.dumps(meta), "state": state}, buf)
        with atomic_write(Path(path), "wb") as f:
            f.write(buf.getvalue())
        return Path(path)

    def save_npz(self, path: str | os.PathLike[str]) -> Path:
        """One ``.npz`` file (no pickle): every weight as an array and the configs as a JSON string array."""
        meta = {"format": "iclr25-teochat/1", "model": dataclasses.asdict(self.model.cfg),
                "train": dataclasses.asdict(self.config), "vocab": list(self.vocab.words)}
        arrays = {f"state/{k}": v.detach().cpu().numpy() for k, v in self.model.state_dict().items()}
        buf = io.BytesIO()
        np.savez_compressed(buf, meta=np.array(json.dumps(meta)), **arrays)
        with atomic_write(Path(path), "wb") as f:
            f.write(buf.getvalue())
        return Path(path)

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, device: str | torch.device | None = None) -> Assistant:
        """Read a checkpoint written by :meth:`save` (``.pt``) or :meth:`save_npz` (``.npz``; errors name the
        file), on ``device`` (``None``: ``$ICLR25_DEVICE``, else ``auto``)."""
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"{p}: no such model file (a .pt checkpoint written by `iclr25 teochat train`)")
        if p.stat().st_size == 0:
            raise DataFileError(p, "empty file, expected a .pt checkpoint written by `iclr25 teochat train`")
        verify_beside(p)
        try:
            if p.suffix == ".npz":
                with np.load(p, allow_pickle=False) as z:
                    blob = {"meta": str(z["meta"]),
                            "state": {k.removeprefix("state/"): torch.from_numpy(z[k].copy())
                                      for k in z.files if k.startswith("state/")}}
            else:
                blob = torch.load(p, map_location="cpu", weights_only=True)
            meta = json.loads(blob["meta"])
            if meta.get("format") != "iclr25-teochat/1":
                raise KeyError("format")
            vocab = Vocabulary()
            if list(vocab.words) != meta["vocab"]:
                raise DataFileError(p, "checkpoint vocabulary differs from this version's")
            cfg = ModelConfig(**meta["model"])
            model = TinyTEOChat(cfg, vocab.image, vocab.number_span)
            model.load_state_dict(blob["state"])
        except DataFileError:
            raise
        except Exception as exc:  # noqa: BLE001 - any unreadable file is the user's bad input
            raise DataFileError(p, f"not a teochat checkpoint ({type(exc).__name__})") from None
        return cls(model, vocab, TrainConfig(**meta["train"]), device=device)


def verify_beside(path: str | os.PathLike[str]) -> None:
    """A checkpoint with a ``manifest.json`` beside it that lists it (``train --out``, the shipped weights) loads
    only when every part the manifest lists is the file it was saved with (one line otherwise:
    :class:`iclr25.utils.checkpoints.CheckpointError`). A checkpoint without one (a single ``.pt`` file, written
    atomically) is whole by itself."""
    p = Path(path)
    m = p.parent / MANIFEST
    if not m.is_file():
        return
    try:
        doc = json.loads(m.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return  # not ours (a file of the user's of that name): nothing to check against
    if isinstance(doc, dict) and isinstance(doc.get("files"), dict) and p.name in doc["files"]:
        verify_manifest(p.parent, [p.name], what="teochat checkpoint")


def sample_weights(examples: Sequence[Example], config: TrainConfig) -> np.ndarray:
    """The probability of drawing each example into a batch: every task equally often (``task_balanced``), and
    within each task of ``balance_answers`` every answer equally often (the task's share kept)."""
    tasks = np.array([TASKS.index(e.task) for e in examples])
    if config.task_balanced:
        counts = np.bincount(tasks, minlength=len(TASKS))
        w = 1.0 / counts[tasks]
    else:
        w = np.ones(len(examples))
    for task in config.balance_answers:
        idx = np.flatnonzero(tasks == TASKS.index(task))
        answers = [examples[i].answer for i in idx]
        n_of = {a: answers.count(a) for a in set(answers)}
        share = w[idx].sum()
        w[idx] = share / (len(n_of) * np.array([n_of[a] for a in answers], dtype=float))
    return w / w.sum()


def train_assistant(sequences: Sequence[EOSequence], examples: Sequence[Example], *,
                    config: TrainConfig = TrainConfig(), model_config: ModelConfig | None = None, seed: int = 0,
                    callback: Callable[[int, Assistant], None] | None = None, callback_steps: Sequence[int] = (),
                    desc: str = "train", device: str | torch.device | None = None,
                    init: Assistant | None = None) -> Assistant:
    """Train a tiny TEOChat from scratch (or from ``init``'s weights: same model configuration) on ``examples``
    (answer-only loss) on ``device`` (``None``: ``$ICLR25_DEVICE``, else ``auto``), return the :class:`Assistant`.

    ``callback(step, assistant)`` is called after each step in ``callback_steps`` (e.g. for a ladder of
    training steps from one run).
    """
    if not examples:
        raise ValueError("examples must not be empty")
    seed = check_seed(seed)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    vocab = Vocabulary()
    size = sequences[examples[0].seq].size
    cfg = model_config or ModelConfig(vocab_size=len(vocab), image_size=size)
    if cfg.vocab_size != len(vocab):
        raise ValueError(f"model_config.vocab_size must be {len(vocab)}, got {cfg.vocab_size}")
    dev = torch_device(device)
    model = TinyTEOChat(cfg, vocab.image, vocab.number_span)  # initialised on the CPU, then moved
    if init is not None:
        if init.model.cfg != cfg:
            raise ValueError(f"init's model configuration {init.model.cfg} differs from model_config {cfg}")
        model.load_state_dict({k: v.detach().cpu() for k, v in init.model.state_dict().items()})
    model = model.to(dev)
    n_tok = cfg.tokens_per_frame
    inputs = [example_inputs(e, sequences[e.seq], references=config.references, last_frame=config.last_frame,
                             frame_count=config.frame_count) for e in examples]
    rows = [_encode(vocab, p, e.answer, n_tok) for (p, _), e in zip(inputs, examples, strict=True)]
    w = sample_weights(examples, config)
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "embed" not in n and "pos" not in n]
    other = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and "embed" not in n and "pos" not in n)]
    warm = max(1, int(config.warmup * config.steps))

    def lr_at(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, config.steps - warm)))

    # torch.optim.AdamW + LambdaLR(lr_at), bit for bit, without the torch._dynamo import of the first
    # torch.optim optimiser of a process (about 2 s of CPU, more than the suite's short runs train)
    opt = Adam([{"params": decay, "weight_decay": config.weight_decay}, {"params": other, "weight_decay": 0.0}],
               lr=config.lr, betas=(0.9, 0.98), decoupled=True, lr_lambda=lr_at)
    asst = Assistant(model, vocab, config, device=dev)
    want = set(int(s) for s in callback_steps)
    n_tokens, t_train = 0, 0.0
    for step in progress(range(config.steps), desc=desc):
        model.train()
        t0 = time.perf_counter()
        idx = rng.choice(len(examples), size=config.batch_size, p=w)
        ids, valid, target = (t.to(dev) for t in _collate([rows[i] for i in idx], vocab.pad, left=False))
        fr = frames_to_tensor([f for i in idx for f in inputs[i][1]]).to(dev)
        logits = model(ids[:, :-1], valid[:, :-1], fr)
        tgt = target[:, 1:]
        loss = F.cross_entropy(logits[tgt], ids[:, 1:][tgt])
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        t_train += time.perf_counter() - t0
        n_tokens += int(valid.sum())
        if step % 10 == 0 or step == config.steps - 1:
            asst.history.append((step + 1, loss.item()))
        if step + 1 in want and callback is not None:
            asst.tokens_per_s = n_tokens / t_train
            callback(step + 1, asst)
    asst.tokens_per_s = n_tokens / t_train if t_train > 0 else None
    model.eval()
    return asst
