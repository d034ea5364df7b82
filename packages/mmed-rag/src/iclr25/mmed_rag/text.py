"""A word-level vocabulary for the templated reports, prompts and answers (the tiny models' tokenizer)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["Vocab", "SPECIALS", "words"]

SPECIALS = ("<pad>", "<unk>", "<bos>", "<eos>", "<img>", "<ctx>", "<q>", "<a>")
_SPLIT = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")


def words(text: str) -> list[str]:
    """Lower-case words and single punctuation marks."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return _SPLIT.findall(text.lower())


@dataclasses.dataclass(frozen=True)
class Vocab:
    """Token ids: the :data:`SPECIALS` first (``<pad>`` = 0), then every word seen, sorted."""

    tokens: tuple[str, ...]

    @classmethod
    def build(cls, texts: Iterable[str]) -> Vocab:
        seen = sorted({w for t in texts for w in words(t)} - set(SPECIALS))
        return cls(SPECIALS + tuple(seen))

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def index(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.tokens)}

    def id(self, token: str) -> int:
        return self.index.get(token, 1)

    def encode(self, text: str) -> list[int]:
        idx = self.index
        return [idx.get(w, 1) for w in words(text)]

    def decode(self, ids: Iterable[int]) -> str:
        out = []
        for i in ids:
            t = self.tokens[int(i)]
            if t == "<eos>":
                break
            if t not in SPECIALS:
                out.append(t)
        return " ".join(out)

    def batch(self, texts: Sequence[str], *, max_len: int | None = None) -> np.ndarray:
        """Right-padded id matrix (B, L) (``<pad>`` = 0), cut at ``max_len``."""
        seqs = [self.encode(t)[:max_len] if max_len else self.encode(t) for t in texts]
        width = max(1, max(len(s) for s in seqs))
        out = np.zeros((len(seqs), width), np.int64)
        for i, s in enumerate(seqs):
            out[i, :len(s)] = s
        return out
