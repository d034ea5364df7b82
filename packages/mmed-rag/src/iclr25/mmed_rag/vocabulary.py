"""A vocabulary of findings for the user's own reports (finding → report phrases) and how a report is read with
it: :class:`FindingVocabulary` (used by :mod:`iclr25.mmed_rag.data` for data sets that carry one and by
:mod:`iclr25.mmed_rag.userdata`, which reads report folders).

References: Chapman et al. 2001 (NegEx: negation cues before a finding in its sentence).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

__all__ = ["FindingVocabulary", "VocabularyError"]

_NEGATIONS = ("no", "not", "without", "negative for", "free of", "absence of", "resolved", "neither", "nor")
_TERMINATORS = ("but", "however", "although", "though", "except", "yet")


class VocabularyError(ValueError):
    """A vocabulary file that cannot be read: one line naming the file."""


@dataclasses.dataclass(frozen=True)
class FindingVocabulary:
    """Findings and the report phrases that state each (lower case)."""

    names: tuple[str, ...]
    phrases: tuple[tuple[str, ...], ...]

    def __post_init__(self) -> None:
        if not self.names or len(self.names) != len(self.phrases):
            raise ValueError("a vocabulary needs at least one finding, each with at least one phrase")
        for n, ps in zip(self.names, self.phrases, strict=True):
            if not n.strip() or not ps or not all(isinstance(p, str) and p.strip() for p in ps):
                raise ValueError(f"finding {n!r}: give a name and a non-empty list of phrases")

    def __len__(self) -> int:
        return len(self.names)

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Sequence[str]]) -> FindingVocabulary:
        if not isinstance(raw, Mapping) or not raw:
            raise ValueError("a vocabulary is a JSON object {finding: [phrase, ...]} with at least one finding")
        names, phrases = [], []
        for k, v in raw.items():
            if isinstance(v, str):
                v = [v]
            if not isinstance(v, (list, tuple)):
                raise ValueError(f"finding {k!r}: expected a list of phrases, got {type(v).__name__}")
            names.append(str(k).strip())
            phrases.append(tuple(" ".join(str(p).lower().split()) for p in v))
        return cls(tuple(names), tuple(phrases))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> FindingVocabulary:
        """A JSON file ``{finding: [phrase, ...]}``; errors name the file."""
        p = Path(path)
        try:
            return cls.from_mapping(json.loads(p.read_text(encoding="utf-8")))
        except FileNotFoundError:
            raise FileNotFoundError(f"--findings {p}: no such file") from None
        except (json.JSONDecodeError, UnicodeDecodeError, ValueError) as exc:
            raise VocabularyError(f"--findings {p}: {exc}") from exc

    def to_json(self) -> str:
        return json.dumps({n: list(p) for n, p in zip(self.names, self.phrases, strict=True)})

    def read(self, text: str) -> np.ndarray:
        """What ``text`` states about each finding: (F,) 1 present, 0 absent (negated), −1 nothing (or both)."""
        seen = np.zeros((len(self), 2), bool)
        for sentence in re.split(r"[.;\n]", str(text).lower()):
            s = " " + " ".join(re.findall(r"[a-z0-9]+", sentence)) + " "
            for j, ps in enumerate(self.phrases):
                for p in ps:
                    key = " " + " ".join(re.findall(r"[a-z0-9]+", p)) + " "
                    at = s.find(key)
                    if at < 0:
                        continue
                    before = s[:at + 1]
                    for t in _TERMINATORS:  # "no effusion but a small pneumothorax": the cue ends at "but"
                        cut = before.rfind(f" {t} ")
                        if cut >= 0:
                            before = before[cut + len(t) + 1:]
                    neg = any(f" {c} " in before for c in _NEGATIONS)
                    seen[j, 0 if neg else 1] = True
        out = np.full(len(self), -1, np.int64)
        out[seen[:, 1] & ~seen[:, 0]] = 1
        out[seen[:, 0] & ~seen[:, 1]] = 0
        return out

    def labels(self, reports: Sequence[str]) -> np.ndarray:
        """(N, F) 0/1: 1 where the report states the finding, else 0."""
        return np.stack([(self.read(r) == 1).astype(np.int64) for r in reports]) if len(reports) else \
            np.zeros((0, len(self)), np.int64)

    def question(self, finding: int) -> str:
        return f"is there {self.names[int(finding)].lower()} ?"


