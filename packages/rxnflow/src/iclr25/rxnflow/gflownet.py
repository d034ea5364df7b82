"""RxnFlow: a GFlowNet over synthesis trajectories, trained with trajectory balance and action-space
subsampling.

Trajectory balance (Malkin et al. 2022) with a learned ``log Z(c)`` and temperature ``β``:

.. math::

    \\mathcal L(\\tau) = \\Bigl(\\log Z(c) + \\sum_t \\log \\hat P_F(s_{t+1}|s_t) - \\beta \\log R(x)
                       - \\sum_t \\log P_B(s_t|s_{t+1})\\Bigr)^2,

where ``log P̂_F`` uses the subsampled partition estimate of :mod:`iclr25.rxnflow.estimator` (one subset per
block space per step, shared by the batch, as in the reference) and ``P_B`` is uniform over the incoming edges
(or 1, ``pb="none"``). Sampling uses the importance-weighted logits; evaluation uses the full action space.

Devices: a model lives on one device (``RxnFlow(..., device=)``, :meth:`RxnFlow.to`, ``train(..., device=)``,
``load_model(..., device=)``; ``None``: ``$ICLR25_DEVICE``, else ``auto``, the GPU when torch sees one). The
policy, the block features and every tensor of a step are made there, in float32; the policy's weights are drawn
on the CPU and then moved, so a seed gives the same initial model everywhere. The random choices (subsets,
Gumbel noise, RDKit's reactions) stay on the CPU in numpy, so every device follows the same stream of actions;
what comes back (samples, losses, log-probabilities) is on the CPU.

References: Seo et al., "Generative Flows on Synthetic Pathway for Drug Design", ICLR 2025, Sec. 3.3 and
Algorithm 1; Malkin et al., "Trajectory balance", NeurIPS 2022, Eq. (14).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr25.utils.device import to_cpu, torch_device
from iclr25.utils.io import atomic_path, atomic_write
from iclr25.utils.optim import Adam
from iclr25.utils.progress import progress

from .blocks import BlockLibrary, read_blocks
from .chem import N_DESC, N_STATE_BITS
from .estimator import draw_subsets
from .model import PolicyConfig, RxnFlowPolicy
from .rewards import Reward, parse_reward
from .routes import leaf, reaction_node
from .space import SynthesisSpace
from .templates import ReactionTemplate, parse_template

__all__ = ["TrainConfig", "Sample", "TrainResult", "RxnFlow", "train", "load_model", "ILLEGAL_LOG_REWARD"]

#: the files of a model folder (:meth:`RxnFlow.save`), listed in its manifest.json
MODEL_PARTS = ("model.pt", "blocks.smi", "templates.txt")
MODEL_FORMAT = "iclr25-rxnflow-model/1"
ILLEGAL_LOG_REWARD = -75.0  # the reference's log-reward of a failed reaction
_BITS = 1191  # MACCS + Morgan bits of the block features (stored as uint8); 8 descriptors follow


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Training hyperparameters (defaults: the paper's, except lr and steps, which are sized for CPU).

    ``rho``: subsampling ratio; ``min_sampling``: smallest subset (paper 100); ``beta``: a fixed inverse
    temperature, or ``beta_range=(lo, hi)`` to sample it per trajectory (temperature conditioning; paper
    U(0, 64)); ``pb``: ``"uniform"`` or ``"none"``; ``time_budget_s`` stops early at equal wall time.
    """

    steps: int = 1000
    batch_size: int = 64
    rho: float = 0.02
    min_sampling: int = 100
    beta: float = 4.0
    beta_range: tuple[float, float] | None = None
    lr: float = 1e-3
    lr_z: float = 0.05
    weight_decay: float = 1e-8
    lr_decay: float = 20000.0
    grad_clip: float = 10.0
    random_action_prob: float = 0.05
    pb: str = "uniform"
    time_budget_s: float | None = None

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size", "min_sampling"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if not isinstance(self.rho, (int, float)) or not (0 < self.rho <= 1):
            raise ValueError(f"rho must be in (0, 1], got {self.rho!r}")
        if not (math.isfinite(self.beta) and self.beta > 0):
            raise ValueError(f"beta must be a finite number > 0, got {self.beta!r}")
        if self.beta_range is not None and not (0 <= self.beta_range[0] < self.beta_range[1]):
            raise ValueError(f"beta_range must be (lo, hi) with 0 <= lo < hi, got {self.beta_range!r}")
        for name in ("lr", "lr_z", "lr_decay", "grad_clip"):
            if not (getattr(self, name) > 0):
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}")
        if not (0 <= self.random_action_prob < 1):
            raise ValueError(f"random_action_prob must be in [0, 1), got {self.random_action_prob!r}")
        if self.pb not in ("uniform", "none"):
            raise ValueError(f"pb must be 'uniform' or 'none', got {self.pb!r}")
        if self.time_budget_s is not None and not (self.time_budget_s > 0):
            raise ValueError(f"time_budget_s must be > 0, got {self.time_budget_s!r}")


@dataclasses.dataclass(frozen=True)
class Sample:
    """One generated molecule: canonical ``smiles`` (``None`` if a reaction failed), its ``reward``, its
    synthesis ``route`` (JSON tree, see :mod:`iclr25.rxnflow.routes`) and the number of blocks ``n_blocks``."""

    smiles: str | None
    reward: float
    route: dict[str, Any]
    n_blocks: int

    @property
    def valid(self) -> bool:
        return self.smiles is not None

    def route_json(self) -> str:
        return json.dumps(self.route, separators=(",", ":"))


@dataclasses.dataclass(frozen=True)
class TrainResult:
    """Training record: per-step ``losses`` and ``log_z``, ``mean_reward`` of the batches, ``steps`` done,
    ``seconds`` and ``steps_per_s``; ``evals`` holds ``(step, seconds, value)`` of the ``eval_fn`` calls."""

    model: RxnFlow
    losses: np.ndarray
    log_z: np.ndarray
    mean_reward: np.ndarray
    steps: int
    seconds: float
    evals: tuple[tuple[int, float, Any], ...] = ()

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else float("nan")


@dataclasses.dataclass
class _Traj:
    smiles: str | None
    depth: int
    route: dict[str, Any]
    done: bool = False
    failed: bool = False
    logpb: float = 0.0


class RxnFlow:
    """A trained (or fresh) RxnFlow model: the policy, the synthesis space and the reward.

    ``sample`` draws molecules with routes; ``with_blocks`` adds building blocks without retraining;
    ``terminal_log_probs`` gives the exact log-probability of every 1- and 2-block molecule (``max_len = 2``).
    The model computes on ``device`` (``None``: ``$ICLR25_DEVICE``, else ``auto``); :meth:`to` moves it.
    """

    def __init__(self, space: SynthesisSpace, reward: Reward | str = "qed", *, policy: RxnFlowPolicy | None = None,
                 beta: float = 4.0, hidden: int = 128, seed: int = 0, device: Any = None):
        self.space = space
        self.reward = parse_reward(reward)
        self.beta = float(beta)
        cfg = PolicyConfig(n_uni=len(space.uni), n_bi=len(space.protocols), max_len=space.max_len, hidden=hidden)
        self.policy = policy if policy is not None else RxnFlowPolicy(cfg, seed=seed)
        if self.policy.config.n_uni != len(space.uni) or self.policy.config.n_bi != len(space.protocols):
            raise ValueError(f"the policy was built for {self.policy.config.n_uni} unimolecular templates and "
                             f"{self.policy.config.n_bi} protocols; the space has {len(space.uni)} and "
                             f"{len(space.protocols)} (templates cannot change after training)")
        self.to(device)

    def to(self, device: Any) -> RxnFlow:
        """Move the model (policy and block features) to ``device`` (``None``: ``$ICLR25_DEVICE``, else
        ``auto``), in place, as ``nn.Module.to`` does; returns the model."""
        self.device = torch_device(device)
        self.policy.to(self.device)
        self._set_block_tensors()
        return self

    def _set_block_tensors(self) -> None:
        f = self.space.blocks.features
        self._bits = torch.from_numpy(np.ascontiguousarray(f[:, :_BITS]).astype(np.uint8)).to(self.device)
        self._desc = torch.from_numpy(np.ascontiguousarray(f[:, _BITS:])).to(self.device)

    def _t(self, a: np.ndarray) -> torch.Tensor:
        """A numpy array (indices, masks, features) as a tensor on the model's device."""
        return torch.from_numpy(a).to(self.device)

    def block_inputs(self, idx: np.ndarray) -> torch.Tensor:
        """Block features of library indices ``idx`` as float32 (bits are stored as uint8), on the model's
        device."""
        t = self._t(np.asarray(idx, dtype=np.int64))
        return torch.cat([self._bits[t].float(), self._desc[t]], dim=1)

    def with_blocks(self, smiles: Sequence[str] | BlockLibrary) -> RxnFlow:
        """The same trained policy over this library plus ``smiles`` (no retraining: blocks enter through
        their fingerprint embeddings only)."""
        lib = self.space.blocks.extend(smiles)
        return RxnFlow(self.space.with_blocks(lib), self.reward, policy=self.policy, beta=self.beta,
                       device=self.device)

    # ------------------------------------------------------------------------------------------ rollout
    def _rollout(self, n: int, beta: np.ndarray, rng: np.random.Generator, *, rho: float, min_sampling: int,
                 eps: float, pb: str = "uniform") -> tuple[list[_Traj], torch.Tensor, torch.Tensor]:
        """Roll out ``n`` trajectories on one subsampled action space (ratio ``rho``, at least ``min_sampling``
        actions per block set); ``eps``: probability of a uniform random action. Returns the trajectories, the
        forward log-probabilities ``log P_F`` (with gradients; the subset estimates of the partition functions)
        and the backward ones ``log P_B`` (``pb="uniform"``: one over the number of parents)."""
        sub, first_ids, bi_ids, e_first, e_bi = self._subsample(rng, rho, min_sampling)
        dev = self.device
        cond = self.policy.cond(torch.as_tensor(beta, dtype=torch.float32, device=dev))
        scale = self.policy.logit_scale(cond)
        trajs, logpf = self._first_step(n, cond, scale, sub, first_ids, e_first, rng, eps)
        widths = [1, len(self.space.uni)] + [len(ids) for ids in bi_ids]
        offsets = np.concatenate([[0], np.cumsum(widths)])
        col_w = torch.cat([torch.zeros(1 + len(self.space.uni), device=dev)] +
                          [torch.full((len(ids),), float(w), device=dev)
                           for ids, w in zip(bi_ids, sub.log_weight[1:])])
        while True:
            act = [i for i, t in enumerate(trajs) if not t.done and t.depth < self.space.max_len]
            for t in trajs:
                if not t.done and t.depth >= self.space.max_len:
                    t.done = True  # forced stop at max_len: P_F = 1
            if not act:
                break
            ia = torch.tensor(act, device=dev)
            L = self._step_logits(trajs, act, ia, cond, scale, e_bi, widths)
            W = L + col_w
            groups = [np.arange(offsets[g], offsets[g + 1]) for g in range(len(widths)) if widths[g]]
            cols = _choose(W.detach().cpu().numpy(), groups, rng, eps)
            logz_hat = torch.logsumexp(W, dim=1)
            step_lp = (L[torch.arange(len(act), device=dev), self._t(cols)] - logz_hat).clamp(max=0.0)
            logpf = logpf.index_add(0, ia, step_lp)
            self._apply_actions(trajs, act, cols, bi_ids, offsets, pb)
        logpb = torch.tensor([t.logpb for t in trajs], device=dev)
        return trajs, logpf, logpb

    def _subsample(self, rng: np.random.Generator, rho: float, min_sampling: int
                   ) -> tuple[Any, np.ndarray, list[np.ndarray], torch.Tensor, list[torch.Tensor]]:
        """Draw the action subsets (first blocks, and the pool of each protocol) and embed the blocks they hold
        once; returns the subsets, the first-block ids, each protocol's block ids and their embeddings."""
        space, pol = self.space, self.policy
        sizes = [space.n_blocks] + [len(p.pool) for p in space.protocols]
        sub = draw_subsets(sizes, rho, rng, min_sampling=min_sampling)
        first_ids = sub.index[0]
        bi_ids = [p.pool[i] for p, i in zip(space.protocols, sub.index[1:])]
        union = np.unique(np.concatenate([first_ids, *bi_ids]))
        emb = pol.embed_blocks(self.block_inputs(union))
        e_first = emb[self._t(np.searchsorted(union, first_ids))]
        e_bi = [emb[self._t(np.searchsorted(union, ids))] for ids in bi_ids]
        return sub, first_ids, bi_ids, e_first, e_bi

    def _first_step(self, n: int, cond: torch.Tensor, scale: torch.Tensor, sub: Any, first_ids: np.ndarray,
                    e_first: torch.Tensor, rng: np.random.Generator, eps: float) -> tuple[list[_Traj], torch.Tensor]:
        """Step 0: the empty molecule picks a first block from the subset; returns the one-block trajectories
        and their ``log P_F`` so far."""
        pol, bl = self.policy, self.space.blocks
        dev = self.device
        logpf = torch.zeros(n, device=dev)
        x0 = torch.zeros(n, N_STATE_BITS + N_DESC, device=dev)
        h = pol.encode(x0, torch.zeros(n, dtype=torch.long, device=dev), cond)
        logits = pol.first_logits(h, e_first) * scale
        weighted = logits + float(sub.log_weight[0])
        a = _choose(weighted.detach().cpu().numpy(), [np.arange(len(first_ids))], rng, eps)
        logz_hat = torch.logsumexp(weighted, dim=1)
        logpf = logpf + (logits[torch.arange(n, device=dev), self._t(a)] - logz_hat).clamp(max=0.0)
        trajs = [_Traj(bl.smiles[first_ids[k]], 1, leaf(bl.smiles[first_ids[k]], bl.names[first_ids[k]])) for k in a]
        return trajs, logpf

    def _step_logits(self, trajs: list[_Traj], act: list[int], ia: torch.Tensor, cond: torch.Tensor,
                     scale: torch.Tensor, e_bi: list[torch.Tensor], widths: list[int]) -> torch.Tensor:
        """The scaled logits of the active trajectories ``act`` (all at the same depth) over the columns stop,
        each unimolecular template, and each protocol's subset of blocks; columns of actions that cannot apply
        (stop before ``min_len`` while a reaction can, a template that does not match) are ``-inf``."""
        space, pol = self.space, self.policy
        n_uni, n_bi = len(space.uni), len(space.protocols)
        smi = [trajs[i].smiles for i in act]
        depth = trajs[act[0]].depth
        x = self._t(space.features(smi))
        h = pol.encode(x, torch.full((len(act),), depth, dtype=torch.long, device=self.device), cond[ia])
        masks = [space.matches(s) for s in smi]
        uni_m = np.stack([m[0] for m in masks]) if n_uni else np.zeros((len(act), 0), bool)
        bi_m = np.stack([m[1] for m in masks]) if n_bi else np.zeros((len(act), 0), bool)
        can_react = uni_m.any(1) | bi_m.any(1)
        stop_m = (depth >= space.min_len) | ~can_react
        parts = [pol.stop_logits(h)[:, None], pol.uni_logits(h)]
        q = pol.bi_queries(h) if n_bi else None
        for j in range(n_bi):
            parts.append(q[:, j] @ e_bi[j].T)
        L = torch.cat(parts, dim=1) * scale[ia]
        colmask = np.concatenate([stop_m[:, None], uni_m] + [np.repeat(bi_m[:, j:j + 1], widths[2 + j], 1)
                                                            for j in range(n_bi)], axis=1)
        return L.masked_fill(~self._t(colmask), -torch.inf)

    def _apply_actions(self, trajs: list[_Traj], act: list[int], cols: np.ndarray, bi_ids: list[np.ndarray],
                       offsets: np.ndarray, pb: str) -> None:
        """Apply the chosen column of each active trajectory in place: stop, a unimolecular reaction, or a
        bimolecular one with a block of the subset (a failed reaction ends the trajectory as failed); the
        route grows and ``logpb`` takes ``-log`` of the number of parents."""
        space, bl = self.space, self.space.blocks
        n_uni = len(space.uni)
        for r, i in enumerate(act):
            t, c = trajs[i], int(cols[r])
            if c == 0:
                t.done = True
                continue
            if c < 1 + n_uni:
                ti = space.uni[c - 1]
                prod = space.react_uni(t.smiles, ti)
                tmpl = space.templates[ti]
                children = [t.route]
                n_par = 1
            else:
                j = int(np.searchsorted(offsets, c, side="right") - 1) - 2
                blk = int(bi_ids[j][c - offsets[2 + j]])
                pr = space.protocols[j]
                prod = space.react_bi(t.smiles, j, blk)
                tmpl = space.templates[pr.template]
                bleaf = leaf(bl.smiles[blk], bl.names[blk])
                children = [t.route, bleaf] if pr.position == 0 else [bleaf, t.route]
                n_par = space.n_parents(t.smiles, j, blk, t.depth) if pb == "uniform" else 1
            if prod is None:
                t.failed, t.done, t.smiles = True, True, None
                continue
            t.route = reaction_node(prod, tmpl.name, tmpl.smarts, children)
            t.smiles, t.depth = prod, t.depth + 1
            t.logpb -= math.log(n_par)

    def log_rewards(self, trajs: Sequence[_Traj]) -> np.ndarray:
        out = np.empty(len(trajs))
        for i, t in enumerate(trajs):
            if t.failed or t.smiles is None:
                out[i] = ILLEGAL_LOG_REWARD
            else:
                r = self.reward(t.smiles)
                out[i] = max(ILLEGAL_LOG_REWARD, math.log(r)) if r > 0 else ILLEGAL_LOG_REWARD
        return out

    # ------------------------------------------------------------------------------------------ sampling
    def sample(self, n: int, *, rho: float = 1.0, min_sampling: int = 100, beta: float | None = None,
               batch_size: int = 128, random_action_prob: float = 0.0, seed: int = 0) -> list[Sample]:
        """Draw ``n`` molecules with their routes (``rho < 1``: subsampled action space, as in the paper's
        zero-shot sampling with ρ = 0.1), on the model's device (:meth:`to`)."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"n must be an integer >= 1, got {n!r}")
        rng = np.random.default_rng(seed)
        b = self.beta if beta is None else float(beta)
        out: list[Sample] = []
        with torch.no_grad():
            while len(out) < n:
                k = min(batch_size, n - len(out))
                trajs, _, _ = self._rollout(k, np.full(k, b), rng, rho=rho, min_sampling=min_sampling,
                                            eps=random_action_prob)
                for t in trajs:
                    r = 0.0 if t.smiles is None else self.reward(t.smiles)
                    out.append(Sample(t.smiles, r, t.route, _n_blocks(t.route)))
        return out

    # --------------------------------------------------------------------------------- exact evaluation
    def full_log_probs(self, states: Sequence[str], depth: int, *, beta: float | None = None,
                       chunk: int = 256) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
        """Exact (full action space) ``log P_F`` from molecules at ``depth``: ``(stop (n,), uni (n, U),
        [bi_j (n, |pool_j|)])``; entries of invalid actions are ``-inf``. Computed on the model's device,
        returned on the CPU."""
        space, pol, dev = self.space, self.policy, self.device
        b = self.beta if beta is None else float(beta)
        stop_out, uni_out = [], []
        bi_out: list[list[np.ndarray]] = [[] for _ in space.protocols]
        with torch.no_grad():
            e_bi = [pol.embed_blocks(self.block_inputs(p.pool)) for p in space.protocols]
            for s0 in range(0, len(states), chunk):
                smi = list(states[s0:s0 + chunk])
                m = len(smi)
                cond = pol.cond(torch.full((m,), b, device=dev))
                scale = pol.logit_scale(cond)
                h = pol.encode(self._t(space.features(smi)), torch.full((m,), depth, dtype=torch.long, device=dev),
                               cond)
                masks = [space.matches(s) for s in smi]
                n_uni, n_bi = len(space.uni), len(space.protocols)
                uni_m = np.stack([x[0] for x in masks]) if n_uni else np.zeros((m, 0), bool)
                bi_m = np.stack([x[1] for x in masks]) if n_bi else np.zeros((m, 0), bool)
                stop_m = (depth >= space.min_len) | ~(uni_m.any(1) | bi_m.any(1))
                if depth >= space.max_len:
                    stop_m[:] = True
                    uni_m[:] = False
                    bi_m[:] = False
                parts = [pol.stop_logits(h)[:, None], pol.uni_logits(h)]
                q = pol.bi_queries(h) if n_bi else None
                parts += [q[:, j] @ e_bi[j].T for j in range(n_bi)]
                L = torch.cat(parts, 1) * scale
                widths = [1, n_uni] + [len(p.pool) for p in space.protocols]
                mask = np.concatenate([stop_m[:, None], uni_m] + [np.repeat(bi_m[:, j:j + 1], widths[2 + j], 1)
                                                                 for j in range(n_bi)], axis=1)
                L = L.masked_fill(~self._t(mask), -torch.inf)
                lp = torch.log_softmax(L, 1).cpu().numpy()
                off = np.concatenate([[0], np.cumsum(widths)])
                stop_out.append(lp[:, 0])
                uni_out.append(lp[:, 1:1 + n_uni])
                for j in range(n_bi):
                    bi_out[j].append(lp[:, off[2 + j]:off[3 + j]])
        return (np.concatenate(stop_out), np.concatenate(uni_out),
                [np.concatenate(x) for x in bi_out])

    def first_block_log_probs(self, *, beta: float | None = None) -> np.ndarray:
        """Exact ``log P_F(b | empty)`` over the whole library (on the CPU)."""
        b = self.beta if beta is None else float(beta)
        pol, dev = self.policy, self.device
        with torch.no_grad():
            cond = pol.cond(torch.full((1,), b, device=dev))
            h = pol.encode(torch.zeros(1, N_STATE_BITS + N_DESC, device=dev),
                           torch.zeros(1, dtype=torch.long, device=dev), cond)
            e = pol.embed_blocks(self.block_inputs(np.arange(self.space.n_blocks)))
            L = pol.first_logits(h, e) * pol.logit_scale(cond)
            return torch.log_softmax(L[0], 0).cpu().numpy()

    # ------------------------------------------------------------------------------------------ saving
    def save(self, folder: str | os.PathLike[str]) -> Path:
        """Write ``model.pt`` (weights + config), ``blocks.smi`` and ``templates.txt`` into ``folder``, then
        ``manifest.json`` (each part's SHA-256) last: :func:`load_model` refuses a folder whose save was cut short
        or whose parts come from two saves. A failed write names its file (``cannot write PATH: ...``)."""
        from iclr25.utils.checkpoints import MANIFEST, start_save, write_manifest
        from iclr25.utils.io import naming_write_errors

        d = Path(folder)
        with naming_write_errors(d):
            d.mkdir(parents=True, exist_ok=True)
        start_save(d)
        meta = {"policy": dataclasses.asdict(self.policy.config), "beta": self.beta, "reward": self.reward.name,
                "max_len": self.space.max_len, "min_len": self.space.min_len,
                "templates": [t.to_dict() for t in self.space.templates]}
        with naming_write_errors(d / "model.pt"), atomic_path(d / "model.pt") as tmp:
            torch.save({"meta": meta, "state_dict": to_cpu(self.policy.state_dict())}, tmp)  # CPU weights
        with naming_write_errors(d / "blocks.smi"):
            self.space.blocks.save(d / "blocks.smi")
        with naming_write_errors(d / "templates.txt"), atomic_write(d / "templates.txt") as f:
            f.write("".join(f"{t.name} {t.smarts}\n" for t in self.space.templates))
        with naming_write_errors(d / MANIFEST):
            write_manifest(d, MODEL_PARTS, meta={"format": MODEL_FORMAT})
        return d


def _n_blocks(route: dict[str, Any]) -> int:
    return 1 if "reactants" not in route else sum(_n_blocks(c) for c in route["reactants"])


def _choose(W: np.ndarray, groups: Sequence[np.ndarray], rng: np.random.Generator, eps: float) -> np.ndarray:
    """Gumbel-max sampling from ``softmax(W)`` per row; with probability ``eps`` a random action: a uniform
    valid group (protocol), then a uniform valid action in it (the reference's random action)."""
    n = W.shape[0]
    g = rng.gumbel(size=W.shape)
    out = np.argmax(np.where(np.isfinite(W), W + g, -np.inf), axis=1)
    if eps > 0:
        rand = rng.random(n) < eps
        for r in np.flatnonzero(rand):
            valid = [grp[np.isfinite(W[r, grp])] for grp in groups]
            valid = [v for v in valid if len(v)]
            if valid:
                grp = valid[rng.integers(len(valid))]
                out[r] = grp[rng.integers(len(grp))]
    return out


def train(model: RxnFlow, config: TrainConfig | None = None, *, seed: int = 0,
          eval_fn: Callable[[RxnFlow], Any] | None = None, eval_at: Sequence[float] = (),
          eval_by: str = "steps", show_progress: bool = True, desc: str = "rxnflow", device: Any = None
          ) -> TrainResult:
    """Train ``model`` in place with trajectory balance on subsampled action spaces; returns a TrainResult.

    ``device``: where to train (the model is moved there and stays); ``None`` keeps the model's own device
    (``RxnFlow(..., device=)``). The losses and rewards come back on the CPU.

    ``eval_fn(model)`` is called at each ``eval_at`` point (steps, or seconds when ``eval_by="time"``) and at the
    end; its timing is excluded from ``seconds``.
    """
    cfg = config or TrainConfig()
    if not isinstance(cfg, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(cfg).__name__}")
    if eval_by not in ("steps", "time"):
        raise ValueError(f"eval_by must be 'steps' or 'time', got {eval_by!r}")
    rng = np.random.default_rng(seed)
    if device is not None:
        model.to(device)
    dev = model.device
    pol = model.policy
    z_params = list(pol.log_z.parameters())
    z_ids = {id(p) for p in z_params}
    # torch.optim.Adam + LambdaLR, bit for bit, without importing torch._dynamo (iclr25.utils.optim)
    opt = Adam([{"params": [p for p in pol.parameters() if id(p) not in z_ids], "lr": cfg.lr},
                {"params": z_params, "lr": cfg.lr_z}], lr=cfg.lr, weight_decay=cfg.weight_decay, eps=1e-8)
    model.beta = cfg.beta if cfg.beta_range is None else model.beta
    losses, logzs, rewards, evals = [], [], [], []
    pending = sorted(float(x) for x in eval_at)
    spent, step = 0.0, 0
    bar = progress(range(cfg.steps), desc=desc, disable=None if show_progress else True)
    for step in bar:
        t0 = time.perf_counter()
        if cfg.beta_range is None:
            beta = np.full(cfg.batch_size, cfg.beta)
        else:
            beta = rng.uniform(*cfg.beta_range, size=cfg.batch_size)
        trajs, logpf, logpb = model._rollout(cfg.batch_size, beta, rng, rho=cfg.rho, min_sampling=cfg.min_sampling,
                                             eps=cfg.random_action_prob, pb=cfg.pb)
        logr = torch.from_numpy(model.log_rewards(trajs)).float().to(dev)
        beta_t = torch.as_tensor(beta, dtype=torch.float32, device=dev)
        logz = pol.log_z(pol.cond(beta_t))[:, 0]
        resid = logz + logpf - beta_t * logr - logpb
        loss = (resid ** 2).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(pol.parameters(), cfg.grad_clip)
        opt.step(lr_scale=2 ** (-step / cfg.lr_decay))
        spent += time.perf_counter() - t0
        losses.append(float(loss.detach()))
        logzs.append(float(logz.detach().mean()))
        rewards.append(float(np.mean(np.exp(logr.cpu().numpy()))))
        if step % 20 == 0:
            bar.set_postfix(loss=f"{losses[-1]:.3f}", logZ=f"{logzs[-1]:.2f}")
        clock = spent if eval_by == "time" else step + 1
        while pending and clock >= pending[0] and eval_fn is not None:
            evals.append((step + 1, spent, eval_fn(model)))
            pending.pop(0)
        if cfg.time_budget_s is not None and spent >= cfg.time_budget_s:
            break
    n_steps = len(losses)
    if eval_fn is not None and (not evals or evals[-1][0] != n_steps):
        evals.append((n_steps, spent, eval_fn(model)))
    return TrainResult(model, np.array(losses), np.array(logzs), np.array(rewards), n_steps, spent, tuple(evals))


def load_model(folder: str | os.PathLike[str], *, add_blocks: str | os.PathLike[str] | None = None,
               device: Any = None, reward: Reward | str | None = None) -> RxnFlow:
    """Load a folder written by :meth:`RxnFlow.save` (optionally with extra blocks from a file) onto ``device``
    (``None``: ``$ICLR25_DEVICE``, else ``auto``); ``reward`` replaces the model's own (a model trained on a Vina
    reward needs one: its receptor and box are not saved). The folder's
    manifest is checked first: a save cut short, a missing part or parts of two saves are refused in one line
    (``iclr25.utils.checkpoints.CheckpointError``, a ``ValueError``)."""
    from iclr25.utils.checkpoints import verify_manifest

    d = Path(folder)
    if not (d / "model.pt").is_file():
        raise FileNotFoundError(f"{d}: not a model folder (no model.pt; write one with `iclr25 rxnflow train`)")
    verify_manifest(d, MODEL_PARTS, what="model folder")
    try:
        ckpt = torch.load(d / "model.pt", map_location="cpu", weights_only=True)
        meta = ckpt["meta"]
    except Exception as exc:  # noqa: BLE001 - a corrupt checkpoint is the user's file problem
        raise ValueError(f"{d / 'model.pt'}: not a readable rxnflow checkpoint ({type(exc).__name__})") from None
    blocks = read_blocks(d / "blocks.smi")
    templates: list[ReactionTemplate] = [parse_template(t["smarts"], name=t["name"]) for t in meta["templates"]]
    space = SynthesisSpace(blocks, templates, max_len=meta["max_len"], min_len=meta["min_len"], allow_dead=True)
    policy = RxnFlowPolicy(PolicyConfig(**meta["policy"]))
    policy.load_state_dict(ckpt["state_dict"])
    if reward is None and meta["reward"] == "vina":
        raise ValueError(f"{d}: this model was trained on a Vina reward; give reward= (command line: --reward vina "
                         "with --receptor/--center/--box, or another reward such as --reward qed)")
    model = RxnFlow(space, meta["reward"] if reward is None else reward, policy=policy, beta=meta["beta"],
                    device=device)
    if add_blocks is not None:
        model = model.with_blocks(read_blocks(add_blocks))
    return model
