"""Action-space subsampling and the importance-weighted partition estimate (Seo et al. 2025, Sec. 3.3).

For each block space A_i (the first-block space; each bimolecular protocol's compatible blocks) a uniform subset
without replacement of size ``n_i = min(|A_i|, max(floor(rho |A_i|), min_sampling))`` is drawn, and

.. math::

    \\hat Z(s) = \\sum_{a \\in A_{\\text{fixed}}} e^{f(s,a)} + \\sum_i \\frac{|A_i|}{n_i}
                 \\sum_{a \\in A_i^{\\text{sub}}} e^{f(s,a)}, \\qquad
    \\log \\hat P_F(a|s) = \\min\\bigl(0, f(s,a) - \\log \\hat Z(s)\\bigr),

so ``w_i = log(|A_i| / n_i)`` is added to the subsampled logits inside one ``logsumexp``. ``E[Ẑ] = Z``
exactly (each element is kept with probability ``n_i/|A_i|``); ``log Ẑ`` is biased low by Jensen.
Averaging ``M`` independent subsets divides the variance by ``M``.

References: Seo et al., ICLR 2025, Eq. (6)-(8); reference ``policy/action_space_subsampling.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

__all__ = ["subset_size", "draw_subsets", "importance_weights", "log_partition_estimate", "Subsets",
           "partition_estimates"]


def subset_size(size: int, rho: float, min_sampling: int = 100) -> int:
    """``n = min(size, max(floor(rho * size), min_sampling))`` (at least 1 when ``size >= 1``)."""
    _check_rho(rho)
    if size <= 0:
        return 0
    return int(min(size, max(int(rho * size), min_sampling, 1)))


def _check_rho(rho: float) -> None:
    if isinstance(rho, bool) or not isinstance(rho, (int, float)) or not (0 < rho <= 1):
        raise ValueError(f"rho (the subsampling ratio) must be in (0, 1], got {rho!r}")


@dataclasses.dataclass(frozen=True)
class Subsets:
    """One draw: ``index[i]`` (positions inside space i, sorted) and ``log_weight[i] = log(|A_i|/n_i)``."""

    index: tuple[np.ndarray, ...]
    log_weight: np.ndarray
    sizes: np.ndarray


def draw_subsets(sizes: Sequence[int], rho: float, rng: np.random.Generator, *, min_sampling: int = 100) -> Subsets:
    """A uniform subset without replacement of every space (sizes ``sizes``), with its importance weights."""
    _check_rho(rho)
    if isinstance(min_sampling, bool) or not isinstance(min_sampling, int) or min_sampling < 1:
        raise ValueError(f"min_sampling must be an integer >= 1, got {min_sampling!r}")
    idx, logw = [], []
    for size in sizes:
        n = subset_size(int(size), rho, min_sampling)
        if n >= size:
            idx.append(np.arange(size, dtype=np.int64))
            logw.append(0.0)
        else:
            idx.append(np.sort(rng.choice(int(size), n, replace=False)).astype(np.int64))
            logw.append(float(np.log(size / n)))
    return Subsets(tuple(idx), np.array(logw), np.asarray(sizes, dtype=np.int64))


def importance_weights(sizes: Sequence[int], rho: float, *, min_sampling: int = 100) -> np.ndarray:
    """``w_i = log(|A_i| / n_i)`` for every space."""
    return np.array([np.log(s / subset_size(int(s), rho, min_sampling)) if s else 0.0 for s in sizes])


def log_partition_estimate(fixed_logits, sub_logits, log_weights):
    """``log Ẑ = logsumexp(fixed ‖ (sub_i + w_i) for every i)`` over the last axis (torch or numpy).

    ``fixed_logits``: ``(..., k)`` logits of the never-subsampled actions (stop, unimolecular);
    ``sub_logits``: a list of ``(..., n_i)`` logits of the subsampled blocks of each space;
    ``log_weights``: the ``w_i``.
    """
    parts = [fixed_logits] + [s + w for s, w in zip(sub_logits, log_weights)]
    if _is_torch(fixed_logits):
        import torch

        return torch.logsumexp(torch.cat(parts, dim=-1), dim=-1)
    from scipy.special import logsumexp

    return logsumexp(np.concatenate(parts, axis=-1), axis=-1)


def _is_torch(x) -> bool:
    return type(x).__module__.startswith("torch")


def partition_estimates(logits: Sequence[np.ndarray], fixed: np.ndarray, rho: float, n_subsets: int, *,
                        n_mc: int = 1, min_sampling: int = 1, seed: int = 0) -> np.ndarray:
    """``n_subsets`` independent estimates Ẑ (not log) of ``Z = Σ exp(fixed) + Σ_i Σ exp(logits_i)``.

    With ``n_mc > 1`` each estimate averages ``n_mc`` independent subsets (the paper-archive's
    ``num_mc_sampling``). Used by the unbiasedness test; the model uses :func:`log_partition_estimate`.
    """
    if isinstance(n_subsets, bool) or not isinstance(n_subsets, int) or n_subsets < 1:
        raise ValueError(f"n_subsets must be an integer >= 1, got {n_subsets!r}")
    if isinstance(n_mc, bool) or not isinstance(n_mc, int) or n_mc < 1:
        raise ValueError(f"n_mc must be an integer >= 1, got {n_mc!r}")
    rng = np.random.default_rng(seed)
    exps = [np.exp(np.asarray(x, dtype=np.float64)) for x in logits]
    base = float(np.exp(np.asarray(fixed, dtype=np.float64)).sum())
    sizes = [len(x) for x in exps]
    # draw_subsets's draws, unrolled: the same random stream, sums and weights (bit for bit), without building a
    # Subsets per draw (the loop runs 10^4 times per claim seed)
    sub = draw_subsets(sizes, rho, np.random.default_rng(0), min_sampling=min_sampling)  # checks; sizes, weights
    plan = [(e, len(e), len(i), np.exp(w)) for e, i, w in zip(exps, sub.index, sub.log_weight, strict=True)]
    out = np.empty(n_subsets)
    for k in range(n_subsets):
        acc = 0.0
        for _ in range(n_mc):
            part = 0
            for e, size, n, weight in plan:
                part = part + weight * (e.sum() if n >= size else e[np.sort(rng.choice(size, n, replace=False))].sum())
            acc += part
        out[k] = base + acc / n_mc
    return out
