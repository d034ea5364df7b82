"""The toy experiment with an enumerable target (Seo et al. 2025, App. D.1, scaled down), and the sample
metrics of the reference (``misc/chem_metrics.py``).

With at most 2 blocks (``max_len = 2``) and bimolecular templates, every terminal molecule is a block or a
product of one (block, protocol, block) transition, so the target ``p*(x) ∝ R(x)^β`` and the model's exact
terminal distribution

.. math::  p_θ(x) = \\sum_{τ \\to x} \\prod_t P_F(s_{t+1}|s_t)

(on the full action space) are both computed by enumeration. The fit is the Pearson correlation of
``log p_θ(x)`` with ``β log R(x)`` over the ``x`` with ``p*(x) > 10^{-6}``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
from rdkit import Chem, DataStructs

from iclr25.utils.progress import progress

from .blocks import toy_blocks
from .chem import mol_from_smiles
from .rewards import Reward
from .space import SynthesisSpace
from .templates import builtin_templates, load_templates

__all__ = ["Enumeration", "enumerate_terminals", "exact_log_probs", "distribution_fit", "DistributionFit",
           "toy_space", "diverse_top_k", "diversity", "random_synthesis"]


@dataclasses.dataclass(frozen=True)
class Enumeration:
    """Every terminal state of a ``max_len = 2`` space.

    ``terminals[i]`` = (canonical SMILES, number of blocks); ``log_reward[i]``; transitions
    ``(state block, protocol, pool position) -> terminal`` (``-1`` when the reaction gives no product).
    """

    terminals: tuple[tuple[str, int], ...]
    log_reward: np.ndarray
    trans_state: np.ndarray
    trans_protocol: np.ndarray
    trans_pos: np.ndarray
    trans_terminal: np.ndarray
    n_failed: int

    @property
    def n_products(self) -> int:
        return sum(1 for _, d in self.terminals if d == 2)

    def in_degree(self) -> dict[str, int]:
        """Incoming edges of every 2-block product (the exact uniform-P_B denominators)."""
        ok = self.trans_terminal >= 0
        counts = np.bincount(self.trans_terminal[ok], minlength=len(self.terminals))
        return {s: int(counts[i]) for i, (s, d) in enumerate(self.terminals) if d == 2}

    def log_target(self, beta: float) -> np.ndarray:
        """``log p*(x) = β log R(x) - log Σ R^β``."""
        a = beta * self.log_reward
        return a - _lse(a)


def _lse(a: np.ndarray) -> float:
    m = float(np.max(a))
    return m + math.log(float(np.sum(np.exp(a - m))))


def enumerate_terminals(space: SynthesisSpace, reward: Reward, *, show_progress: bool = False) -> Enumeration:
    """Run every transition of a 2-block space and score every terminal (blocks and products)."""
    if space.max_len != 2 or space.uni:
        raise ValueError("enumerate_terminals: exact enumeration needs max_len == 2 and bimolecular templates "
                         f"only (got max_len {space.max_len}, {len(space.uni)} unimolecular)")
    terms: dict[tuple[str, int], int] = {}
    for s in space.blocks.smiles:
        terms.setdefault((s, 1), len(terms))
    ts, tp, tk, tt = [], [], [], []
    failed = 0
    for bi in progress(range(space.n_blocks), desc="enumerate", disable=None if show_progress else True):
        s = space.blocks.smiles[bi]
        _, m = space.matches(s)
        for j in np.flatnonzero(m):
            pool = space.protocols[j].pool
            for k in range(len(pool)):
                prod = space.react_bi(s, int(j), int(pool[k]))
                if prod is None:
                    failed += 1
                    tid = -1
                else:
                    tid = terms.setdefault((prod, 2), len(terms))
                ts.append(bi)
                tp.append(j)
                tk.append(k)
                tt.append(tid)
    keys = tuple(sorted(terms, key=terms.get))
    logr = np.array([math.log(max(reward(s), 1e-30)) for s, _ in progress(keys, desc="reward",
                                                                         disable=None if show_progress else True)])
    return Enumeration(keys, np.maximum(logr, -75.0), np.array(ts, np.int64), np.array(tp, np.int64),
                       np.array(tk, np.int64), np.array(tt, np.int64), failed)


def exact_log_probs(model, enum: Enumeration, *, beta: float | None = None) -> np.ndarray:
    """The model's exact ``log p_θ(x)`` of every terminal of ``enum`` (full action space, no subsampling)."""
    space = model.space
    lp_first = model.first_block_log_probs(beta=beta)
    stop, _, bi = model.full_log_probs(space.blocks.smiles, 1, beta=beta)
    n = len(enum.terminals)
    out = np.full(n, -np.inf)
    out[: space.n_blocks] = lp_first + stop  # blocks are the first terminals (depth 1)
    ok = enum.trans_terminal >= 0
    st, pr, pos, tt = enum.trans_state[ok], enum.trans_protocol[ok], enum.trans_pos[ok], enum.trans_terminal[ok]
    lp_act = np.empty(len(st))
    for j in range(len(space.protocols)):
        sel = pr == j
        lp_act[sel] = bi[j][st[sel], pos[sel]]
    lp = lp_first[st] + lp_act
    order = np.argsort(tt, kind="stable")
    tt_s, lp_s = tt[order], lp[order]
    starts = np.flatnonzero(np.r_[True, tt_s[1:] != tt_s[:-1]])
    mx = np.maximum.reduceat(lp_s, starts)
    sums = np.add.reduceat(np.exp(lp_s - np.repeat(mx, np.diff(np.r_[starts, len(lp_s)]))), starts)
    vals = mx + np.log(sums)
    idx = tt_s[starts]
    out[idx] = np.logaddexp(out[idx], vals)
    return out


@dataclasses.dataclass(frozen=True)
class DistributionFit:
    """``pearson``: r(log p_θ(x), β log R(x)) over x with p*(x) > ``threshold``; ``n``: how many x;
    ``l1``: Σ|p_θ - p*| over all terminals; ``failed_mass``: probability of trajectories that fail."""

    pearson: float
    n: int
    l1: float
    failed_mass: float


def distribution_fit(model, enum: Enumeration, *, beta: float | None = None, threshold: float = 1e-6
                     ) -> DistributionFit:
    """Compare the model's exact terminal distribution with ``p* ∝ R^β`` (see the module docstring)."""
    b = model.beta if beta is None else float(beta)
    lp = exact_log_probs(model, enum, beta=b)
    lt = enum.log_target(b)
    sel = np.exp(lt) > threshold
    x, y = lp[sel], b * enum.log_reward[sel]
    r = float(np.corrcoef(x, y)[0, 1]) if sel.sum() > 2 and np.std(x) > 0 else float("nan")
    p = np.exp(lp)
    return DistributionFit(r, int(sel.sum()), float(np.abs(p - np.exp(lt)).sum()), float(max(0.0, 1 - p.sum())))


def toy_space(n_electrophiles: int = 150, n_amines: int = 400, *, n_other: int = 450,
              templates: Sequence[str] | str = "toy", seed: int = 0) -> SynthesisSpace:
    """The scaled-down toy space: built-in electrophiles and amines with the 4 amine-coupling templates,
    ``max_len = 2``, ``min_len = 1``."""
    lib = toy_blocks(n_electrophiles, n_amines, n_other=n_other, seed=seed)
    if isinstance(templates, (list, tuple)) and all(isinstance(t, str) for t in templates):
        temps = builtin_templates(templates)
    else:
        temps = load_templates(templates)
    return SynthesisSpace(lib, temps, max_len=2, min_len=1)


# ---------------------------------------------------------------------------------------------- metrics
def _fps(smiles: Sequence[str]):
    return [Chem.RDKFingerprint(mol_from_smiles(s)) for s in smiles]


def diverse_top_k(smiles: Sequence[str], rewards: Sequence[float], *, k: int = 100, threshold: float = 0.5
                  ) -> list[int]:
    """Indices of the top-``k`` diverse modes: unique SMILES by reward, each with RDKit-fingerprint Tanimoto
    below ``threshold`` to every one chosen before (reference ``compute_diverse_top_k``)."""
    order = np.argsort(-np.asarray(rewards, dtype=float), kind="stable")
    seen, chosen, fps = set(), [], []
    for i in order:
        s = smiles[i]
        if s is None or s in seen:
            continue
        seen.add(s)
        fp = Chem.RDKFingerprint(mol_from_smiles(s))
        if fps and max(DataStructs.BulkTanimotoSimilarity(fp, fps)) >= threshold:
            continue
        chosen.append(int(i))
        fps.append(fp)
        if len(chosen) == k:
            break
    return chosen


def diversity(smiles: Sequence[str]) -> float:
    """``1 - mean off-diagonal Tanimoto`` of RDKit fingerprints."""
    fps = _fps(smiles)
    n = len(fps)
    if n < 2:
        return float("nan")
    tot = sum(sum(DataStructs.BulkTanimotoSimilarity(fps[i], fps[i + 1:])) for i in range(n - 1))
    return 1.0 - tot / (n * (n - 1) / 2)


def random_synthesis(model, n: int, *, seed: int = 0) -> list:
    """``n`` uniform-random synthesis trajectories (a uniform protocol, then a uniform action in it: the
    reference's random action), scored with the model's reward."""
    return _random(model, n, seed)


def _random(model, n: int, seed: int) -> list:
    import torch

    from .gflownet import Sample, _n_blocks

    rng = np.random.default_rng(seed)
    out = []
    with torch.no_grad():
        while len(out) < n:
            k = min(256, n - len(out))
            trajs, _, _ = model._rollout(k, np.full(k, model.beta), rng, rho=1.0, min_sampling=1, eps=1.0)
            for t in trajs:
                out.append(Sample(t.smiles, 0.0 if t.smiles is None else model.reward(t.smiles), t.route,
                                  _n_blocks(t.route)))
    return out
