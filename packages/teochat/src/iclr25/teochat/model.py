"""The TEOChat architecture at small scale: a temporally shared per-frame encoder, a 2-layer GELU projector and a
causal transformer LM with rotary positions, into whose embedding sequence each ``<image>`` placeholder is
spliced as the frame's projected tokens.

.. math::

    h_{t,1..G^2} = \\mathrm{MLP}_{2\\times\\mathrm{GELU}}(\\mathrm{Enc}(x_t)) \\in \\mathbb{R}^{G^2 \\times d},
    \\qquad p(y \\mid x_{1..T}, q) = \\prod_i \\mathrm{LM}(y_i \\mid [\\ldots, h_1, \\ldots, h_T, q, y_{<i}]).

The encoder (3 stride-2 convolutions with coordinate channels, a ``G x G`` pool and per-cell position
embeddings) stands in for the LanguageBind CLIP ViT-L/14 (256 patch tokens per frame at 224 px); the LM for
the 7B Vicuna/LLaMA-2 backbone.

References: Irvin et al., TEOChat, ICLR 2025, Sec. 3.1 and Fig. 2; reference code
``videollava/model/llava_arch.py`` (``prepare_inputs_labels_for_multimodal``, ``mlp2x_gelu``).
"""

from __future__ import annotations

import dataclasses

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["ModelConfig", "FrameEncoder", "CausalLM", "TinyTEOChat", "count_parameters"]


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """Sizes of the tiny assistant (``grid**2`` tokens per frame)."""

    vocab_size: int
    image_size: int = 32
    d_model: int = 128
    n_layers: int = 3
    n_heads: int = 4
    enc_channels: int = 32
    grid: int = 4
    rope_base: float = 10000.0
    #: stride-2 convolutions of the encoder (3: a 4 x 4 feature map at 32 px, the 4 x 4 grid's resolution;
    #: 2: an 8 x 8 map, for ``grid=8``, 64 tokens per frame of 4 x 4 px cells)
    enc_downsample: int = 3

    def __post_init__(self) -> None:
        for name in ("vocab_size", "image_size", "d_model", "n_layers", "n_heads", "enc_channels", "grid",
                     "enc_downsample"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if self.enc_downsample not in (2, 3):
            raise ValueError(f"enc_downsample must be 2 or 3, got {self.enc_downsample}")
        if self.d_model % (2 * self.n_heads):
            raise ValueError(f"d_model must be a multiple of 2 * n_heads, got {self.d_model} and {self.n_heads}")

    @property
    def tokens_per_frame(self) -> int:
        return self.grid * self.grid


class FrameEncoder(nn.Module):
    """Shared per-frame CNN: ``(F, 3, H, W)`` -> ``(F, G*G, 2c)`` tokens (row-major grid cells)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        c = cfg.enc_channels
        self.grid = cfg.grid
        self.net = nn.Sequential(
            nn.Conv2d(5, c, 3, stride=2, padding=1), nn.BatchNorm2d(c), nn.GELU(),
            nn.Conv2d(c, 2 * c, 3, stride=2, padding=1), nn.BatchNorm2d(2 * c), nn.GELU(),
            nn.Conv2d(2 * c, 2 * c, 3, stride=2 if cfg.enc_downsample >= 3 else 1, padding=1),
            nn.BatchNorm2d(2 * c), nn.GELU(),
        )
        self.pos = nn.Parameter(torch.zeros(cfg.grid * cfg.grid, 2 * c))
        nn.init.normal_(self.pos, std=0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, _, h, w = x.shape
        yy = torch.linspace(-1, 1, h, device=x.device).view(1, 1, h, 1).expand(n, 1, h, w)
        xx = torch.linspace(-1, 1, w, device=x.device).view(1, 1, 1, w).expand(n, 1, h, w)
        f = self.net(torch.cat([x, xx, yy], dim=1))
        f = F.adaptive_avg_pool2d(f, self.grid)
        return f.flatten(2).transpose(1, 2) + self.pos


def _rope(x: torch.Tensor, pos: torch.Tensor, base: float) -> torch.Tensor:
    """Rotary embedding of ``x`` ``(B, H, L, Dh)`` at integer positions ``pos`` ``(B, L)``."""
    dh = x.shape[-1]
    inv = base ** (-torch.arange(0, dh, 2, device=x.device, dtype=torch.float32) / dh)
    ang = pos.to(torch.float32)[:, None, :, None] * inv  # (B, 1, L, Dh/2)
    cos, sin = ang.cos(), ang.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


class _Block(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        d = cfg.d_model
        self.h, self.base = cfg.n_heads, cfg.rope_base
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: torch.Tensor, pos: torch.Tensor, mask: torch.Tensor,
                cache: list[torch.Tensor] | None = None) -> torch.Tensor:
        b, l, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, l, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        q, k = _rope(q, pos, self.base), _rope(k, pos, self.base)
        if cache is not None:
            if cache:
                k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
            cache[:] = [k, v]
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.proj(a.transpose(1, 2).reshape(b, l, d))
        return x + self.mlp(self.ln2(x))


class CausalLM(nn.Module):
    """Decoder-only transformer over embeddings (pre-norm, rotary positions, tied output head)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        nn.init.normal_(self.embed.weight, std=0.02)
        self.blocks = nn.ModuleList(_Block(cfg) for _ in range(cfg.n_layers))
        self.ln = nn.LayerNorm(cfg.d_model)

    @torch.no_grad()
    def init_number_embeddings(self, span: tuple[int, int] | None) -> None:
        """Coordinate tokens ``0..100`` (ids ``span[0]..span[1]-1``) start as smooth random Fourier features of
        their value, so that nearby coordinates start near each other (a from-scratch LM has few examples of
        each of the 101 values)."""
        if span is None:
            return
        lo, hi = span
        d = self.embed.weight.shape[1]
        g = torch.Generator().manual_seed(1234)
        freq = torch.randn(d // 2, generator=g) * 3.0
        v = torch.linspace(0, 1, hi - lo)[:, None] * freq[None]
        feats = torch.cat([v.sin(), v.cos()], dim=1)
        self.embed.weight[lo:hi] = feats / feats.norm(dim=1, keepdim=True) * 0.02 * d ** 0.5  # the init's norm

    def forward(self, x: torch.Tensor, pos: torch.Tensor, mask: torch.Tensor,
                caches: list[list[torch.Tensor]] | None = None) -> torch.Tensor:
        for i, blk in enumerate(self.blocks):
            x = blk(x, pos, mask, None if caches is None else caches[i])
        return self.ln(x) @ self.embed.weight.T


class TinyTEOChat(nn.Module):
    """Encoder + projector + LM; :meth:`embed` splices frame tokens where the ids hold the image token."""

    def __init__(self, cfg: ModelConfig, image_token: int, number_tokens: tuple[int, int] | None = None) -> None:
        super().__init__()
        self.cfg, self.image_token = cfg, int(image_token)
        self.number_tokens = number_tokens
        self.encoder = FrameEncoder(cfg)
        c2 = 2 * cfg.enc_channels
        self.projector = nn.Sequential(nn.Linear(c2, cfg.d_model), nn.GELU(), nn.Linear(cfg.d_model, cfg.d_model),
                                       nn.LayerNorm(cfg.d_model))
        self.lm = CausalLM(cfg)
        self.lm.init_number_embeddings(self.number_tokens)

    def embed(self, ids: torch.Tensor, frames: torch.Tensor) -> torch.Tensor:
        """Token embeddings ``(B, L, d)`` with the projected frame tokens, in order, at the image positions."""
        x = self.lm.embed(ids)
        is_img = ids == self.image_token
        n_img = int(is_img.sum())
        if n_img:
            feats = self.projector(self.encoder(frames)).reshape(-1, x.shape[-1])
            if feats.shape[0] != n_img:
                raise ValueError(f"the ids hold {n_img} image positions but the frames give {feats.shape[0]} tokens")
            x = x.masked_scatter(is_img[..., None], feats.to(x.dtype))
        return x

    @staticmethod
    def attention_mask(valid: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Positions (0 at the first valid token) and the causal + key-padding mask ``(B, 1, L, L)``."""
        pos = (valid.long().cumsum(1) - 1).clamp(min=0)
        l = valid.shape[1]
        causal = torch.ones(l, l, dtype=torch.bool, device=valid.device).tril()
        mask = causal[None, None] & valid[:, None, None, :]
        mask = mask | torch.eye(l, dtype=torch.bool, device=valid.device)[None, None]  # no empty rows
        return pos, mask

    def forward(self, ids: torch.Tensor, valid: torch.Tensor, frames: torch.Tensor) -> torch.Tensor:
        pos, mask = self.attention_mask(valid)
        return self.lm(self.embed(ids, frames), pos, mask)

    @torch.no_grad()
    def generate(self, ids: torch.Tensor, valid: torch.Tensor, frames: torch.Tensor, *, eos: int,
                 max_new_tokens: int = 26) -> torch.Tensor:
        """Greedy decoding from left-padded prompts with a key/value cache; ``(B, max_new_tokens)`` ids."""
        b = ids.shape[0]
        pos, mask = self.attention_mask(valid)
        caches: list[list[torch.Tensor]] = [[] for _ in self.lm.blocks]
        logits = self.lm(self.embed(ids, frames), pos, mask, caches)
        nxt = logits[:, -1].argmax(-1)
        out = [nxt]
        done = nxt == eos
        keys = valid.clone()
        last = pos[:, -1]
        for _ in range(max_new_tokens - 1):
            if bool(done.all()):
                break
            keys = torch.cat([keys, torch.ones(b, 1, dtype=torch.bool, device=ids.device)], dim=1)
            last = last + 1
            m = keys[:, None, None, :]
            x = self.lm.embed(nxt[:, None])
            logits = self.lm(x, last[:, None], m, caches)
            nxt = logits[:, -1].argmax(-1)
            nxt = torch.where(done, torch.full_like(nxt, eos), nxt)
            out.append(nxt)
            done = done | (nxt == eos)
        res = torch.stack(out, dim=1)
        if res.shape[1] < max_new_tokens:
            res = torch.cat([res, torch.full((b, max_new_tokens - res.shape[1]), eos, dtype=res.dtype,
                                             device=res.device)], dim=1)
        return res


def count_parameters(model: nn.Module) -> int:
    return int(sum(p.numel() for p in model.parameters()))
