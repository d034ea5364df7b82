"""The policy network: a fingerprint-MLP state encoder, block embeddings from block fingerprints, and the joint
(stop | unimolecular template | bimolecular protocol × block) logits with a learned log Z(c).

Logits (Seo et al. 2025, Sec. 3.2; reference ``models/gfn.py``), with ``h_s`` the state embedding, ``e_b`` the
block embedding, ``e_r`` a learned vector per protocol and ``c`` the temperature condition:

* first block:  ``MLP_first(h_s) · e_b``
* bimolecular:  ``MLP_bi(SiLU(h_s + e_r)) · e_b``
* unimolecular: ``MLP_uni(h_s + e_r)``
* stop:         ``MLP_stop(h_s)``

all scaled by ``ELU(g(c)) + 1``; ``log Z(c)`` is a 2-layer MLP of ``c``. Blocks enter only through ``e_b``, so
new blocks need no retraining.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import nn

from .chem import N_BLOCK_FEATURES, N_STATE_BITS

__all__ = ["PolicyConfig", "RxnFlowPolicy", "thermometer"]


@dataclasses.dataclass(frozen=True)
class PolicyConfig:
    """Sizes of the policy: ``n_uni`` templates, ``n_bi`` protocols, ``max_len`` (depth one-hot), widths."""

    n_uni: int
    n_bi: int
    max_len: int = 2
    hidden: int = 128
    block_hidden: int = 128
    emb: int = 64
    n_cond: int = 16
    beta_max: float = 64.0


def thermometer(beta: torch.Tensor, n: int, vmax: float) -> torch.Tensor:
    """Thermometer encoding of the temperature (the reference's condition): ``clip(beta/vmax*n - k, 0, 1)``."""
    k = torch.arange(n, dtype=torch.float32, device=beta.device)
    return (beta[:, None] / vmax * n - k[None]).clamp(0, 1)


def _mlp(i: int, h: int, o: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(i, h), nn.SiLU(), nn.Linear(h, o))


class RxnFlowPolicy(nn.Module):
    """Forward policy and log Z of RxnFlow on fingerprints (see the module docstring for the logits)."""

    def __init__(self, config: PolicyConfig, *, seed: int = 0):
        super().__init__()
        self.config = config
        c = config
        g = torch.random.fork_rng()
        with g:
            torch.manual_seed(seed)
            n_in = N_STATE_BITS + 8 + (c.max_len + 1) + c.n_cond
            self.state = nn.Sequential(nn.Linear(n_in, c.hidden), nn.SiLU(), nn.Linear(c.hidden, c.hidden),
                                       nn.SiLU(), nn.LayerNorm(c.hidden))
            self.block = nn.Sequential(nn.Linear(N_BLOCK_FEATURES, c.block_hidden), nn.SiLU(),
                                       nn.Linear(c.block_hidden, c.emb))
            self.first = _mlp(c.hidden, c.hidden, c.emb)
            self.stop = _mlp(c.hidden, c.hidden, 1)
            self.uni_emb = nn.Parameter(torch.randn(max(c.n_uni, 1), c.hidden) * 0.1)
            self.uni = _mlp(c.hidden, c.hidden, 1)
            self.bi_emb = nn.Parameter(torch.randn(max(c.n_bi, 1), c.hidden) * 0.1)
            self.bi = _mlp(c.hidden, c.hidden, c.emb)
            self.scale = nn.Linear(c.n_cond, 1)
            self.log_z = _mlp(c.n_cond, 64, 1)

    def cond(self, beta: torch.Tensor) -> torch.Tensor:
        return thermometer(beta, self.config.n_cond, self.config.beta_max)

    def encode(self, x: torch.Tensor, depth: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        """``h_s`` from state features ``x`` (n, 2056), integer ``depth`` (n,) and condition ``cond``."""
        onehot = torch.nn.functional.one_hot(depth, self.config.max_len + 1).float()
        return self.state(torch.cat([x, onehot, cond], dim=1))

    def logit_scale(self, cond: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.elu(self.scale(cond)) + 1.0

    def embed_blocks(self, feats: torch.Tensor) -> torch.Tensor:
        """``e_b`` (n_blocks, emb) from block features (n_blocks, 1199)."""
        return self.block(feats)

    def first_logits(self, h: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
        return self.first(h) @ e.T

    def stop_logits(self, h: torch.Tensor) -> torch.Tensor:
        return self.stop(h)[:, 0]

    def uni_logits(self, h: torch.Tensor) -> torch.Tensor:
        """(n, n_uni)"""
        if self.config.n_uni == 0:
            return h.new_zeros((h.shape[0], 0))
        return self.uni(h[:, None, :] + self.uni_emb[None, : self.config.n_uni])[..., 0]

    def bi_queries(self, h: torch.Tensor) -> torch.Tensor:
        """(n, n_bi, emb): ``MLP_bi(SiLU(h_s + e_r))`` for every protocol."""
        return self.bi(torch.nn.functional.silu(h[:, None, :] + self.bi_emb[None, : self.config.n_bi]))
