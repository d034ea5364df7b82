"""A small decoder-only GPT with rotary position embeddings (RoPE), the model of the paper at reduced size.

Pre-norm blocks ``x <- x + Attn(LN(x))``, ``x <- x + MLP(LN(x))`` with causal multi-head self-attention whose
queries and keys are rotated by position (RoPE, Su et al. 2021): for the pair of channels ``(2i, 2i+1)`` of
a head at position ``p``,

    (q_2i, q_2i+1) <- (q_2i cos(p θ_i) - q_2i+1 sin(p θ_i), q_2i sin(p θ_i) + q_2i+1 cos(p θ_i)),
    θ_i = base^(-2i / d_head),

and the same for keys, so that ``<q_p, k_s>`` depends on ``p - s`` only. Sequences are *packed*: several
documents share one row of a batch, each with its own positions (``0, 1, ...``) and a block-diagonal causal
mask, so a packed document is computed exactly as if it were alone (and as it is at evaluation).
Input and output embeddings are tied.

References: Allen-Zhu & Li, *Physics of Language Models: Part 3.2* (ICLR 2025), §2 (GPT-2 with rotary
embeddings); Su et al., *RoFormer* (2021), eq. (34).
"""

from __future__ import annotations

import dataclasses
import math

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["GPTConfig", "RotaryGPT", "rope_tables", "apply_rope"]


@dataclasses.dataclass(frozen=True)
class GPTConfig:
    """Shape of a :class:`RotaryGPT`.

    ``d_model`` must be divisible by ``n_heads`` and the head width must be even (RoPE rotates pairs).
    """

    vocab_size: int
    n_layers: int = 4
    d_model: int = 128
    n_heads: int = 4
    mlp_ratio: int = 4
    max_len: int = 256
    rope_base: float = 10000.0

    def __post_init__(self) -> None:
        for name in ("vocab_size", "n_layers", "d_model", "n_heads", "mlp_ratio", "max_len"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")
        if (self.d_model // self.n_heads) % 2:
            raise ValueError(f"the head width d_model / n_heads = {self.d_model // self.n_heads} must be even (RoPE)")

    @property
    def non_embedding_params(self) -> int:
        """Parameters outside the (tied) embedding: ``L (4 d^2 + 2 r d^2 + 4 d + r d + d + 4 d) + 2 d``."""
        d, r = self.d_model, self.mlp_ratio
        per_block = 4 * d * d + 2 * r * d * d + r * d + d + 4 * d  # attention (no biases), MLP, 2 LayerNorms
        return self.n_layers * per_block + 2 * d

    @property
    def n_params(self) -> int:
        return self.non_embedding_params + self.vocab_size * self.d_model

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def rope_tables(max_len: int, d_head: int, base: float = 10000.0, *, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """``cos(p θ_i)`` and ``sin(p θ_i)`` of shape ``(max_len, d_head / 2)``."""
    inv = base ** (-torch.arange(0, d_head, 2, dtype=torch.float32, device=device) / d_head)
    ang = torch.arange(max_len, dtype=torch.float32, device=device)[:, None] * inv[None, :]
    return ang.cos(), ang.sin()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate channel pairs of ``x`` (``(B, H, T, d_head)``) by the per-token angles ``cos``/``sin`` (``(B, 1, T,
    d_head/2)``)."""
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


class _Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        d = cfg.d_model
        self.n_heads = cfg.n_heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d, bias=False)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, cfg.mlp_ratio * d)
        self.out = nn.Linear(cfg.mlp_ratio * d, d)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        B, T, D = x.shape
        h = self.qkv(self.ln1(x)).view(B, T, 3, self.n_heads, D // self.n_heads).permute(2, 0, 3, 1, 4)
        q, k, v = apply_rope(h[0], cos, sin), apply_rope(h[1], cos, sin), h[2]
        # softmax(q k^T / sqrt(d_head) + mask) v written out: at these sizes (T <= 128, d_head 8-32) it is about a
        # quarter faster per training step on CPU than F.scaled_dot_product_attention's flash kernel
        s = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
        a = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1) @ v
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, D))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class RotaryGPT(nn.Module):
    """Decoder-only transformer with RoPE and tied embeddings (see the module docstring for the equations).

    ``device``: where the parameters go after the seeded initialisation on the CPU (``None``: they stay there;
    the training and evaluation functions move a model to their ``device=``). float32 everywhere.

    ``forward(ids, positions=None, doc=None)`` returns logits ``(B, T, vocab)``. ``positions`` (``(B, T)``
    integers) restart at 0 for every packed document; ``doc`` (``(B, T)`` integers, -1 for padding) gives the
    document of each token, and a token attends only to earlier tokens of its own document.
    """

    def __init__(self, cfg: GPTConfig, *, seed: int = 0, device=None):
        super().__init__()
        self.cfg = cfg
        gen = torch.Generator().manual_seed(int(seed))
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.blocks = nn.ModuleList(_Block(cfg) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        cos, sin = rope_tables(cfg.max_len, cfg.d_model // cfg.n_heads, cfg.rope_base)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        with torch.no_grad():  # GPT-2 initialisation, seeded independently of the global generator
            for name, p in self.named_parameters():
                if p.dim() == 2:
                    std = 0.02 / math.sqrt(2 * cfg.n_layers) if name.endswith(("proj.weight", "out.weight")) else 0.02
                    p.copy_(torch.randn(p.shape, generator=gen) * std)
                elif name.endswith("bias"):
                    p.zero_()
        if device is not None:  # initialised on the CPU (the same weights on every device), then moved
            self.to(device)

    def hidden(self, ids: torch.Tensor, positions: torch.Tensor | None = None,
               doc: torch.Tensor | None = None) -> torch.Tensor:
        """The final (normalised) hidden states ``(B, T, d_model)``."""
        B, T = ids.shape
        if T > self.cfg.max_len:
            raise ValueError(f"sequence length {T} exceeds the model's max_len {self.cfg.max_len}")
        if positions is None:
            positions = torch.arange(T, device=ids.device).expand(B, T)
        if doc is None:
            doc = torch.zeros_like(ids)
        causal = torch.ones(T, T, dtype=torch.bool, device=ids.device).tril()
        mask = (doc[:, :, None] == doc[:, None, :]) & causal & (doc[:, None, :] >= 0)
        mask = mask | torch.eye(T, dtype=torch.bool, device=ids.device)  # padding rows attend to themselves
        mask = mask[:, None]
        cos, sin = self.cos[positions][:, None], self.sin[positions][:, None]
        x = self.embed(ids)
        for blk in self.blocks:
            x = blk(x, cos, sin, mask)
        return self.ln_f(x)

    def forward(self, ids: torch.Tensor, positions: torch.Tensor | None = None,
                doc: torch.Tensor | None = None) -> torch.Tensor:
        return self.hidden(ids, positions, doc) @ self.embed.weight.T
