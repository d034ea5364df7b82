"""Training throughput (tokens/s) of :class:`.model.RotaryGPT` against plain ``torch.nn`` transformers of
equal width, depth and MLP size, on the same packed batches (the same optimiser, loss and batch).

``torch.nn.TransformerDecoder`` has a cross-attention block that a decoder-only language model does not;
it is run with a one-token memory (its cross-attention costs almost nothing, but its parameters are there).
The equal-size decoder-only stack in ``torch.nn`` is ``TransformerEncoder`` with a causal mask: both are
measured (learned absolute positions, causal mask only, no document masking: the plainest baseline).

References: Allen-Zhu & Li, *Physics of Language Models: Part 3.2* (ICLR 2025), §2 (GPT-2 with rotary
embeddings as the model).
"""

from __future__ import annotations

import time

import torch
import torch.nn.functional as F
from torch import nn

from .model import GPTConfig, RotaryGPT

__all__ = ["TorchBaselineLM", "throughput"]


class TorchBaselineLM(nn.Module):
    """``nn.TransformerEncoder`` (causal) or ``nn.TransformerDecoder`` (one-token memory) language model."""

    def __init__(self, cfg: GPTConfig, kind: str = "decoder"):
        super().__init__()
        if kind not in ("decoder", "encoder"):
            raise ValueError(f"kind must be 'decoder' or 'encoder', got {kind!r}")
        self.kind = kind
        d = cfg.d_model
        self.embed = nn.Embedding(cfg.vocab_size, d)
        self.pos = nn.Embedding(cfg.max_len, d)
        kw = dict(d_model=d, nhead=cfg.n_heads, dim_feedforward=cfg.mlp_ratio * d, dropout=0.0,
                  activation="gelu", batch_first=True, norm_first=True)
        if kind == "decoder":
            self.body = nn.TransformerDecoder(nn.TransformerDecoderLayer(**kw), cfg.n_layers)
        else:
            self.body = nn.TransformerEncoder(nn.TransformerEncoderLayer(**kw), cfg.n_layers,
                                              enable_nested_tensor=False)
        self.ln = nn.LayerNorm(d)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        B, T = ids.shape
        x = self.embed(ids) + self.pos(torch.arange(T, device=ids.device))
        mask = nn.Transformer.generate_square_subsequent_mask(T, device=ids.device)
        if self.kind == "decoder":
            mem = torch.zeros(B, 1, x.shape[-1], device=ids.device)
            h = self.body(x, mem, tgt_mask=mask, tgt_is_causal=True)
        else:
            h = self.body(x, mask=mask, is_causal=True)
        return self.ln(h) @ self.embed.weight.T


def _tokens_per_s(step, n_tokens: int, seconds: float) -> float:
    for _ in range(2):
        step()
    n, t0 = 0, time.perf_counter()
    while True:
        step()
        n += 1
        dt = time.perf_counter() - t0
        if dt >= seconds and n >= 3:
            return n * n_tokens / dt


def throughput(*, n_layers: int = 2, d_model: int = 64, n_heads: int = 4, vocab_size: int = 1200,
               batch_size: int = 8, seq_len: int = 128, seconds: float = 4.0, rounds: int = 3,
               seed: int = 0) -> dict[str, float]:
    """Tokens/s of one AdamW training step for ours (packed: document masks and per-document positions)
    and for the two ``torch.nn`` baselines, on random tokens of the same batch shape.

    The models take turns: ``rounds`` rounds of ``seconds / rounds`` each, the order rotated every round, and each
    model's rate is its median over the rounds, so no side always runs first, on a cooler cache or a quieter
    machine (issue 65: 0.7 timed each model once, one after the other)."""
    import statistics  # noqa: PLC0415

    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    cfg = GPTConfig(vocab_size=vocab_size, n_layers=n_layers, d_model=d_model, n_heads=n_heads, max_len=seq_len)
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, vocab_size, (batch_size, seq_len), generator=g)
    doc_len = 24  # biography-sized documents packed into each row
    doc = (torch.arange(seq_len) // doc_len).expand(batch_size, seq_len)
    pos = (torch.arange(seq_len) % doc_len).expand(batch_size, seq_len)
    models = {"ours (RoPE, packed)": RotaryGPT(cfg, seed=seed),
              "torch.nn.TransformerDecoder": TorchBaselineLM(cfg, "decoder"),
              "torch.nn.TransformerEncoder (causal)": TorchBaselineLM(cfg, "encoder")}
    steps = {}
    for name, net in models.items():
        opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
        call = (lambda x, n=net: n(x[:, :-1], pos[:, :-1], doc[:, :-1])) if isinstance(net, RotaryGPT) \
            else (lambda x, n=net: n(x[:, :-1]))

        def step(call=call, opt=opt):
            logits = call(ids)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

        steps[name] = step
    names = list(models)
    rates: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            rates[name].append(_tokens_per_s(steps[name], batch_size * (seq_len - 1), seconds / rounds))
    out = {}
    for name, net in models.items():
        out[name] = float(statistics.median(rates[name]))
        out[f"params {name}"] = float(sum(p.numel() for p in net.parameters()))
    return out
