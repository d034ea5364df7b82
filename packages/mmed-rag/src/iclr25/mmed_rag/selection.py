"""Adaptive retrieved-context selection: the paper's gap rule, the reference code's ratio rule, and fixed k.

For similarities sorted S_1 ≥ S_2 ≥ … ≥ S_K (K = the cap k_max), the paper's rule computes
u_i = log(S_i / S_{i+1}) and keeps the first i contexts, where i is the first index with u_i > γ (a big drop);
with no such drop all K are kept. The code's rule keeps every i with S_1 / S_i < threshold (top-1 always).
Both need S > 0: CLIP cosines lie in [-1, 1], so map them with :func:`to_positive`, S = (1 + cos) / 2, first.

References: Xia et al., *MMed-RAG*, ICLR 2025, §3.2 (eq. 2, adaptive retrieved context selection); reference
code ``retrieve_topk_per_image`` (``--clip_threshold``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

__all__ = ["RULES", "Selection", "to_positive", "gap_select", "ratio_select", "fixed_select", "select_contexts"]

RULES = ("gap", "ratio", "fixed")


@dataclasses.dataclass(frozen=True)
class Selection:
    """How many of each query's top contexts to keep: ``k`` (B,) int, and the boolean mask (B, K)."""

    k: np.ndarray
    mask: np.ndarray

    @property
    def mean_k(self) -> float:
        return float(self.k.mean())


def to_positive(cosines: Any) -> np.ndarray:
    """(1 + cos) / 2: cosine similarities in [-1, 1] mapped to [0, 1] (floored at 1e-6), order kept."""
    c = np.asarray(cosines, dtype=np.float64)
    if not np.all(np.isfinite(c)):
        raise ValueError("cosines contain NaN or inf")
    if c.min(initial=0) < -1 - 1e-4 or c.max(initial=0) > 1 + 1e-4:
        raise ValueError(f"cosines must lie in [-1, 1], got [{c.min():.3g}, {c.max():.3g}]; normalise the "
                         "embeddings or pass logits divided by the logit scale")
    return np.maximum((1.0 + np.clip(c, -1, 1)) / 2.0, 1e-6)


def _sorted_sims(sims: Any, k_max: int | None) -> np.ndarray:
    s = np.asarray(sims, dtype=np.float64)
    if s.ndim == 1:
        s = s[None]
    if s.ndim != 2 or s.shape[1] == 0:
        raise ValueError(f"similarities must be a non-empty (K,) or (B, K) array, got shape {np.shape(sims)}")
    if not np.all(np.isfinite(s)):
        raise ValueError("similarities contain NaN or inf")
    if s.min() <= 0:
        raise ValueError(f"similarities must be > 0 for the log-ratio and ratio rules, got min {s.min():.3g}; "
                         "map cosines with to_positive((1 + cos) / 2) first")
    if np.any(np.diff(s, axis=1) > 1e-12):
        raise ValueError("similarities must be sorted in decreasing order along each row (as a search returns)")
    if k_max is not None:
        if not isinstance(k_max, (int, np.integer)) or k_max < 1:
            raise ValueError(f"k_max must be an integer >= 1, got {k_max!r}")
        s = s[:, :k_max]
    return s


def _result(k: np.ndarray, width: int) -> Selection:
    return Selection(k.astype(np.int64), np.arange(width)[None] < k[:, None])


def gap_select(sims: Any, *, gamma: float, k_max: int | None = None) -> Selection:
    """The paper's rule: k = the first i with log(S_i / S_{i+1}) > γ, else K.

    Examples
    --------
    >>> gap_select([0.9, 0.88, 0.5, 0.49], gamma=0.2).k.tolist()
    [2]
    >>> gap_select([[0.9], [0.4]], gamma=0.2).k.tolist()  # k_max = 1: the one context is kept
    [1, 1]
    """
    if not (isinstance(gamma, (int, float)) and np.isfinite(gamma) and gamma >= 0):
        raise ValueError(f"gamma must be a finite number >= 0, got {gamma!r}")
    s = _sorted_sims(sims, k_max)
    if s.shape[1] == 1:  # one context: nothing to compare, it is kept (no argmax of an empty row)
        return _result(np.ones(len(s), np.int64), 1)
    u = np.log(s[:, :-1] / s[:, 1:])  # (B, K-1)
    big = u > gamma
    k = np.where(big.any(axis=1), big.argmax(axis=1) + 1, s.shape[1])
    return _result(k, s.shape[1])


def ratio_select(sims: Any, *, threshold: float, k_max: int | None = None) -> Selection:
    """The reference code's rule: keep i while S_1 / S_i < threshold (the top-1 always).

    Examples
    --------
    >>> ratio_select([0.9, 0.8, 0.5], threshold=1.5).k.tolist()
    [2]
    """
    if not (isinstance(threshold, (int, float)) and np.isfinite(threshold) and threshold > 1):
        raise ValueError(f"threshold must be a finite number > 1, got {threshold!r}")
    s = _sorted_sims(sims, k_max)
    keep = (s[:, :1] / s) < threshold
    keep[:, 0] = True
    return _result(keep.sum(axis=1), s.shape[1])  # sorted rows: the kept set is a prefix


def fixed_select(sims: Any, *, k: int) -> Selection:
    """Always the top ``k`` (standard RAG)."""
    s = _sorted_sims(sims, None)
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    kk = np.full(len(s), min(int(k), s.shape[1]))
    return _result(kk, s.shape[1])


def select_contexts(sims: Any, *, rule: str = "gap", k_max: int = 5, gamma: float = 0.005,
                    threshold: float = 1.05) -> Selection:
    """Dispatch to the rule named ``rule`` (one of :data:`RULES`) with cap ``k_max``."""
    if rule == "gap":
        return gap_select(sims, gamma=gamma, k_max=k_max)
    if rule == "ratio":
        return ratio_select(sims, threshold=threshold, k_max=k_max)
    if rule == "fixed":
        return fixed_select(sims, k=k_max)
    raise ValueError(f"rule must be one of {', '.join(RULES)}, got {rule!r}")
