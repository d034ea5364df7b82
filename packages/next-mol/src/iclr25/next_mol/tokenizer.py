"""Tokenizers of the molecule language models: SELFIES tokens (the paper's choice) and SMILES tokens (the
comparison), with the special tokens ``<pad>``, ``<bos>``, ``<eos>``."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["Tokenizer", "SelfiesTokenizer", "SmilesTokenizer", "tokenizer_from_dict", "SPECIALS"]

SPECIALS = ("<pad>", "<bos>", "<eos>")
PAD, BOS, EOS = 0, 1, 2
_SMILES_RE = re.compile(r"(\[[^\]]+]|Br|Cl|%\d{2}|[BCNOPSFIbcnops]|[()=#\-+\\/:~@?>*$.]|\d)")


@dataclasses.dataclass
class Tokenizer:
    """Token vocabulary over molecule strings; subclasses say how a string splits into tokens."""

    vocab: tuple[str, ...] = SPECIALS
    kind: str = "base"

    def split(self, text: str, *, name: str = "string") -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def join(self, tokens: Sequence[str]) -> str:
        return "".join(tokens)

    @property
    def size(self) -> int:
        return len(self.vocab)

    def fit(self, corpus: Sequence[str], *, name: str = "corpus") -> Tokenizer:
        """Build the vocabulary (sorted, after the special tokens) from ``corpus``; returns ``self``."""
        if isinstance(corpus, str) or not len(corpus):
            raise ValueError(f"{name} must be a non-empty list of strings")
        seen: set[str] = set()
        for i, s in enumerate(corpus):
            seen.update(self.split(s, name=f"{name}[{i}]"))
        self.vocab = SPECIALS + tuple(sorted(seen))
        return self

    def encode(self, text: str, *, name: str = "string") -> list[int]:
        """``[<bos>, tokens..., <eos>]`` as ids; a token outside the vocabulary is a ``ValueError``."""
        index = {t: i for i, t in enumerate(self.vocab)}
        toks = self.split(text, name=name)
        unknown = [t for t in toks if t not in index]
        if unknown:
            raise ValueError(f"{name} {text!r} has tokens outside the vocabulary: {unknown[:5]}")
        return [BOS] + [index[t] for t in toks] + [EOS]

    def batch(self, texts: Sequence[str], *, name: str = "strings") -> np.ndarray:
        """Right-padded id matrix ``(len(texts), max_len + 2)``."""
        rows = [self.encode(t, name=f"{name}[{i}]") for i, t in enumerate(texts)]
        out = np.full((len(rows), max(map(len, rows))), PAD, dtype=np.int64)
        for i, r in enumerate(rows):
            out[i, :len(r)] = r
        return out

    def decode(self, ids: Sequence[int]) -> str:
        """Ids up to the first ``<eos>`` (``<bos>``/``<pad>`` dropped) joined into a string."""
        toks = []
        for i in ids:
            i = int(i)
            if i == EOS:
                break
            if i >= len(SPECIALS):
                toks.append(self.vocab[i])
        return self.join(toks)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "vocab": list(self.vocab)}


@dataclasses.dataclass
class SelfiesTokenizer(Tokenizer):
    """SELFIES tokens (``[C]``, ``[=Branch1]``, ...): every token sequence decodes to a valid molecule."""

    kind: str = "selfies"

    def split(self, text: str, *, name: str = "selfies") -> list[str]:
        import selfies as sf  # noqa: PLC0415

        if not isinstance(text, str) or not text:
            raise ValueError(f"{name} must be a non-empty SELFIES string, got {text!r}")
        try:
            toks = list(sf.split_selfies(text))
        except Exception as exc:  # noqa: BLE001
            raise ValueError(f"{name} {text!r} is not a SELFIES string ({exc})") from exc
        if "".join(toks) != text:
            raise ValueError(f"{name} {text!r} is not a SELFIES string (text outside [...] tokens)")
        return toks


@dataclasses.dataclass
class SmilesTokenizer(Tokenizer):
    """SMILES tokens (bracket atoms, two-letter halogens, ring labels, bonds, branches)."""

    kind: str = "smiles"

    def split(self, text: str, *, name: str = "smiles") -> list[str]:
        if not isinstance(text, str) or not text:
            raise ValueError(f"{name} must be a non-empty SMILES string, got {text!r}")
        toks = _SMILES_RE.findall(text)
        if "".join(toks) != text:
            raise ValueError(f"{name} {text!r} has characters that are not SMILES tokens")
        return toks


def tokenizer_from_dict(d: dict[str, Any]) -> Tokenizer:
    """Inverse of :meth:`Tokenizer.to_dict`."""
    kinds = {"selfies": SelfiesTokenizer, "smiles": SmilesTokenizer}
    if not isinstance(d, dict) or d.get("kind") not in kinds or not isinstance(d.get("vocab"), list):
        raise ValueError(f"tokenizer must be {{'kind': 'selfies'|'smiles', 'vocab': [...]}}, got {d!r:.80}")
    return kinds[d["kind"]](vocab=tuple(d["vocab"]))
