"""A word-level tokenizer trained locally on the generated corpus (the ``tokenizers`` library's
``WordLevel`` model with whitespace/punctuation pre-splitting), never a downloaded one.

Every name part and attribute word is one token; a date is three tokens and a comma (``October 2 , 1996``)
so that partial retrieval stays meaningful. ``[PAD]`` = 0, ``[UNK]`` = 1, ``[EOS]`` = 2 ends every document.

References: Allen-Zhu & Li, *Physics of Language Models: Part 3.2* (ICLR 2025), §2 (the tokenizer is
GPT-2's BPE there; word level here, a documented reduction).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from iclr25.utils.io import DataFileError, atomic_write

__all__ = ["WordTokenizer", "SPECIAL_TOKENS"]

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[EOS]")
PAD, UNK, EOS = 0, 1, 2


class WordTokenizer:
    """Word-level tokenizer: :meth:`train` on texts, then :meth:`encode` / :meth:`decode`."""

    def __init__(self, tokenizer) -> None:
        self._tok = tokenizer

    @classmethod
    def train(cls, texts: Iterable[str]) -> WordTokenizer:
        """Learn the vocabulary of ``texts`` (every word kept, sorted by frequency)."""
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        trainer = trainers.WordLevelTrainer(special_tokens=list(SPECIAL_TOKENS), min_frequency=1,
                                            show_progress=False)
        tok.train_from_iterator(list(texts), trainer=trainer)
        return cls(tok)

    @property
    def vocab_size(self) -> int:
        return self._tok.get_vocab_size()

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text).ids

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return [e.ids for e in self._tok.encode_batch(list(texts))]

    def tokens(self, text: str) -> list[str]:
        return self._tok.encode(text).tokens

    def decode(self, ids: Sequence[int]) -> str:
        """Tokens joined by spaces (punctuation re-attached), stopping at the first ``[EOS]``."""
        out = []
        for i in ids:
            i = int(i)
            if i == EOS:
                break
            if i == PAD:
                continue
            out.append(self._tok.id_to_token(i) or "[UNK]")
        return " ".join(out).replace(" ,", ",").replace(" .", ".").replace(" ?", "?")

    def save(self, path: str | os.PathLike[str]) -> Path:
        p = Path(path)
        with atomic_write(p) as f:
            f.write(self._tok.to_str())
        return p

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> WordTokenizer:
        from tokenizers import Tokenizer

        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"{p}: no such tokenizer file")
        try:
            return cls(Tokenizer.from_str(p.read_text(encoding="utf-8")))
        except Exception as exc:  # the Rust library raises its own exception type
            raise DataFileError(p, f"not a tokenizers JSON file ({str(exc).splitlines()[0][:120]})") from None

    def to_hf(self):
        """A ``transformers.PreTrainedTokenizerFast`` of the same vocabulary (needs the ``hf`` extra)."""
        from transformers import PreTrainedTokenizerFast

        return PreTrainedTokenizerFast(tokenizer_object=self._tok, unk_token="[UNK]", eos_token="[EOS]",
                                       pad_token="[PAD]")
