"""The molecule language model: a causal transformer over SELFIES (or SMILES) tokens, its training by next-token
cross-entropy, batched sampling with temperature and top-k, and the random-token baseline.

NExT-Mol's MoLlama is a 960M-parameter Llama-2 pretrained on 1.8B ZINC molecules; here the same objective trains a
pre-LayerNorm GPT-style transformer of a few hundred thousand parameters from scratch on MOSES.

Devices (issue 59): :func:`train_lm` and :func:`sample_lm` take ``device=`` (``None``: ``$ICLR25_DEVICE``, else
``auto``); the model is moved there (in place), the token ids are copied there once and every draw (batches,
tokens) is made there from a generator seeded on that device; losses and strings come back to the CPU. Float32;
on the CPU the numbers are those of 0.7, bit for bit.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from iclr25.utils.device import to_cpu, torch_device, torch_generator
from iclr25.utils.progress import progress

from .optim import AdamW, step_callback
from .tokenizer import BOS, EOS, PAD, SPECIALS, Tokenizer

__all__ = ["LMConfig", "CausalLM", "LMTrainResult", "train_lm", "sample_lm", "decode_to_smiles",
           "random_token_strings", "to_selfies_corpus"]


@dataclasses.dataclass(frozen=True)
class LMConfig:
    """Sizes of :class:`CausalLM`."""

    vocab_size: int
    d_model: int = 128
    n_layers: int = 2
    n_heads: int = 4
    max_len: int = 96
    dropout: float = 0.0

    def __post_init__(self) -> None:
        for k in ("vocab_size", "d_model", "n_layers", "n_heads", "max_len"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"LMConfig.{k} must be a positive integer, got {v!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"LMConfig.d_model={self.d_model} must be divisible by n_heads={self.n_heads}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"LMConfig.dropout must be in [0, 1), got {self.dropout}")


class CausalLM(nn.Module):
    """Decoder-only transformer: token + position embeddings, pre-LN causal self-attention blocks, tied head.

    ``p(s) = prod_t p(s_t | s_<t)``; ``forward`` returns logits ``(B, T, V)``; ``hidden_states`` returns the
    output of every block (``(L+1, B, T, d)``), which the 1D-to-3D transfer mixes.
    """

    def __init__(self, config: LMConfig) -> None:
        super().__init__()
        self.config = config
        self.tok = nn.Embedding(config.vocab_size, config.d_model)
        self.pos = nn.Embedding(config.max_len, config.d_model)
        self.blocks = nn.ModuleList([
            nn.TransformerEncoderLayer(config.d_model, config.n_heads, 4 * config.d_model, config.dropout,
                                       activation="gelu", batch_first=True, norm_first=True)
            for _ in range(config.n_layers)])
        self.norm = nn.LayerNorm(config.d_model)
        nn.init.normal_(self.tok.weight, std=0.02)
        nn.init.normal_(self.pos.weight, std=0.02)

    def _check(self, ids: torch.Tensor) -> None:
        if ids.ndim != 2 or ids.shape[1] > self.config.max_len:
            raise ValueError(f"ids must be (batch, length <= {self.config.max_len}), got {tuple(ids.shape)}")

    def hidden_states(self, ids: torch.Tensor) -> torch.Tensor:
        self._check(ids)
        T = ids.shape[1]
        mask = torch.triu(torch.full((T, T), float("-inf"), device=ids.device), diagonal=1)
        h = self.tok(ids) + self.pos(torch.arange(T, device=ids.device))[None]
        out = [h]
        for blk in self.blocks:
            h = blk(h, src_mask=mask, src_key_padding_mask=None, is_causal=True)
            out.append(h)
        out[-1] = self.norm(out[-1])
        return torch.stack(out)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.hidden_states(ids)[-1] @ self.tok.weight.T

    @torch.no_grad()
    def step_logits(self, last: torch.Tensor, cache: list[list[torch.Tensor]]) -> torch.Tensor:
        """Logits of the next token after ``last`` (``(B,)``, at position ``len`` of the prefix), reusing the keys
        and values of the prefix in ``cache`` (one ``[k, v]`` pair of ``(B, H, T, C)`` per block, updated in
        place; start with ``[]``). Computes exactly what :meth:`forward` computes at the last position, in
        ``O(T)`` per token instead of re-running the whole prefix (incremental decoding)."""
        pos = cache[0][0].shape[2] if cache else 0
        if pos >= self.config.max_len:
            raise ValueError(f"the prefix already has max_len={self.config.max_len} tokens")
        h = self.tok(last)[:, None] + self.pos.weight[pos][None, None]
        B, H = h.shape[0], self.config.n_heads
        C = self.config.d_model // H
        for b, blk in enumerate(self.blocks):
            sa = blk.self_attn
            q, k, v = nn.functional.linear(blk.norm1(h), sa.in_proj_weight, sa.in_proj_bias).chunk(3, -1)
            q, k, v = (x.view(B, 1, H, C).transpose(1, 2) for x in (q, k, v))
            if len(cache) <= b:
                cache.append([k, v])
            else:
                cache[b][0] = torch.cat([cache[b][0], k], 2)
                cache[b][1] = torch.cat([cache[b][1], v], 2)
            att = torch.softmax(q @ cache[b][0].transpose(2, 3) / math.sqrt(C), -1)
            o = (att @ cache[b][1]).transpose(1, 2).reshape(B, 1, H * C)
            h = h + sa.out_proj(o)
            h = h + blk.linear2(blk.activation(blk.linear1(blk.norm2(h))))
        return (self.norm(h) @ self.tok.weight.T)[:, 0]

    def n_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


@dataclasses.dataclass(frozen=True)
class LMTrainResult:
    """Loss curve (mean next-token cross-entropy per logged step) and wall time of :func:`train_lm`."""

    steps: int
    losses: tuple[float, ...]
    seconds: float

    @property
    def final_loss(self) -> float:
        return float(np.mean(self.losses[-max(1, len(self.losses) // 10):]))


def _lr_lambda(warmup: int, total: int, floor: float):
    def f(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        frac = min(1.0, (step - warmup) / max(1, total - warmup))
        return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * frac))
    return f


def train_lm(model: CausalLM, tokenizer: Tokenizer, corpus: Sequence[str], *, steps: int = 500,
             batch_size: int = 64, lr: float = 1e-3, weight_decay: float = 0.01, warmup: int = 50,
             seed: int = 0, desc: str = "LM", callback: Callable[[int], None] | None = None,
             callback_steps: Sequence[int] = (), length_buckets: int | None = None, device=None) -> LMTrainResult:
    """Next-token cross-entropy ``L = -mean_t log p(s_t | s_<t)`` (padding ignored), AdamW with linear warm-up
    and cosine decay to 10%; ``corpus`` is a list of SELFIES (or SMILES) strings in ``tokenizer``'s language.

    ``callback(step)`` runs (model in eval mode) after each step listed in ``callback_steps`` (ladders).
    ``length_buckets``: each batch is computed as that many length-sorted sub-batches trimmed to their own
    longest string (less padding; the loss and its gradient are the same); default 4 for models with
    ``d_model >= 128`` (where compute outweighs the per-call overhead), else 1. ``device``: where to train
    (``None``: ``$ICLR25_DEVICE`` or ``auto``).

    References: NExT-Mol (Liu et al., ICLR 2025), Sec. 3.1 (MoLlama pretraining and fine-tuning objective).
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a positive integer, got {steps!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    ids = torch.as_tensor(tokenizer.batch(corpus, name="corpus"))
    if ids.shape[1] > model.config.max_len:
        keep = (ids != PAD).sum(1) <= model.config.max_len
        ids = ids[keep][:, :model.config.max_len]
        if len(ids) == 0:
            raise ValueError(f"every corpus string is longer than max_len={model.config.max_len} tokens")
    if length_buckets is None:
        length_buckets = 4 if model.config.d_model >= 128 else 1
    if isinstance(length_buckets, bool) or not isinstance(length_buckets, int) or length_buckets < 1:
        raise ValueError(f"length_buckets must be a positive integer, got {length_buckets!r}")
    dev = torch_device(device)
    model.to(dev)
    ids = ids.to(dev)
    g = torch_generator(dev, seed)  # on the CPU: torch.Generator().manual_seed(seed), 0.7's stream
    torch.manual_seed(seed)
    # torch.optim.AdamW + LambdaLR, step for step, without importing torch._dynamo (iclr25.next_mol.optim)
    opt = AdamW(model.parameters(), lr=lr, weight_decay=weight_decay, betas=(0.9, 0.98),
                lr_lambda=_lr_lambda(min(warmup, steps), steps, 0.1))
    model.train()
    losses: list[float] = []
    t0 = time.perf_counter()
    marks = set(callback_steps)
    for step in progress(range(1, steps + 1), desc=desc, total=steps):
        batch = ids[torch.randint(len(ids), (batch_size,), generator=g, device=dev)]
        opt.zero_grad()
        # the same mean cross-entropy over all real tokens of the batch, computed on length-sorted sub-batches
        # trimmed to their own longest string (less padding; the loss and its gradient are unchanged)
        lengths = (batch != PAD).sum(1)
        order = torch.argsort(lengths)
        n_tok = int((batch[:, 1:] != PAD).sum())
        total = 0.0
        for part in order.split(max(1, -(-batch_size // length_buckets))):
            sub = batch[part][:, :int(lengths[part].max())]
            logits = model(sub[:, :-1])
            part_loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), sub[:, 1:].reshape(-1),
                                                    ignore_index=PAD, reduction="sum") / n_tok
            part_loss.backward()
            total += part_loss.detach().item()
        loss = torch.tensor(total)  # a CPU scalar (float32, as 0.7 logged it), never on the device
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss.detach()))
        step_callback(model, callback, step, marks)
    model.eval()
    return LMTrainResult(steps, tuple(losses), time.perf_counter() - t0)


@torch.no_grad()
def sample_lm(model: CausalLM, tokenizer: Tokenizer, n: int, *, temperature: float = 1.0, top_k: int | None = None,
              batch_size: int = 250, max_len: int | None = None, seed: int = 0, device=None,
              prefix: np.ndarray | None = None, banned: Sequence[int] = ()) -> list[str]:
    """Draw ``n`` strings by ancestral sampling ``s_t ~ softmax(logits_t / temperature)`` (restricted to the
    ``top_k`` most likely tokens when given), batched, stopping each row at ``<eos>``; ``<eos>`` is barred at
    the first position, and for SELFIES until a first atom token was drawn (a SELFIES string of only branch and
    ring tokens decodes to the empty molecule), so that no empty molecule comes out. Sampled on ``device``
    (``None``: ``$ICLR25_DEVICE`` or ``auto``; the model is moved there).

    ``prefix``: token ids ``(n, P)`` fed after ``<bos>`` before sampling starts (a condition, e.g. a property
    token of :mod:`iclr25.next_mol.conditional`), left out of the returned strings; ``banned``: token ids never
    drawn. Without them the draws are those of 0.7, bit for bit.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if not (isinstance(temperature, (int, float)) and temperature > 0 and math.isfinite(temperature)):
        raise ValueError(f"temperature must be a positive number, got {temperature!r}")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise ValueError(f"top_k must be a positive integer or None, got {top_k!r}")
    max_len = min(max_len or model.config.max_len, model.config.max_len)
    P = 0
    if prefix is not None:
        prefix = np.asarray(prefix)
        if prefix.ndim != 2 or prefix.shape[0] != n or not np.issubdtype(prefix.dtype, np.integer):
            raise ValueError(f"prefix must be an integer array (n={n}, length), got shape {prefix.shape}")
        if prefix.size and (prefix.min() < len(SPECIALS) or prefix.max() >= tokenizer.size):
            raise ValueError(f"prefix ids must be non-special vocabulary ids in [{len(SPECIALS)}, {tokenizer.size})")
        P = prefix.shape[1]
        if P + 2 > max_len:
            raise ValueError(f"prefix length {P} leaves no room under max_len={max_len}")
    dev = torch_device(device)
    model.to(dev)
    g = torch_generator(dev, seed)
    model.eval()
    out: list[str] = []
    is_atom = torch.tensor([i >= len(SPECIALS) and (tokenizer.kind != "selfies" or
                            ("Branch" not in t and "Ring" not in t)) for i, t in enumerate(tokenizer.vocab)],
                           device=dev)
    for start in range(0, n, batch_size):
        b = min(batch_size, n - start)
        ids = torch.full((b, 1), BOS, dtype=torch.long, device=dev)
        done = torch.zeros(b, dtype=torch.bool, device=dev)
        has_atom = torch.zeros(b, dtype=torch.bool, device=dev)
        cache: list[list[torch.Tensor]] = []
        if P:
            pre = torch.as_tensor(prefix[start:start + b], dtype=torch.long, device=dev)
            for j in range(P):
                model.step_logits(ids[:, -1], cache)
                ids = torch.cat([ids, pre[:, j:j + 1]], 1)
        for _ in range(max_len - 1 - P):
            logits = model.step_logits(ids[:, -1], cache) / temperature
            logits[:, PAD] = logits[:, BOS] = float("-inf")
            if len(banned):
                logits[:, list(banned)] = float("-inf")
            logits[:, EOS] = logits[:, EOS].masked_fill(~has_atom, float("-inf"))
            if top_k is not None and top_k < logits.shape[-1]:
                kth = torch.topk(logits, top_k, dim=-1).values[:, -1:]
                logits = logits.masked_fill(logits < kth, float("-inf"))
            nxt = torch.multinomial(torch.softmax(logits, -1), 1, generator=g).squeeze(1)
            nxt = torch.where(done, torch.full_like(nxt, PAD), nxt)
            ids = torch.cat([ids, nxt[:, None]], 1)
            done |= nxt == EOS
            has_atom |= is_atom[nxt]
            if bool(done.all()):
                break
        out.extend(tokenizer.decode(row[1 + P:]) for row in ids.tolist())  # tolist() copies to the host
    return out


def decode_to_smiles(strings: Sequence[str], kind: str) -> list[str | None]:
    """Canonical SMILES of each generated string (``None`` where invalid): SELFIES are decoded first."""
    import selfies as sf  # noqa: PLC0415
    from rdkit import Chem, RDLogger  # noqa: PLC0415

    RDLogger.DisableLog("rdApp.*")
    if kind not in ("selfies", "smiles"):
        raise ValueError(f"kind must be 'selfies' or 'smiles', got {kind!r}")
    out: list[str | None] = []
    for s in strings:
        if kind == "selfies":
            try:
                s = sf.decoder(s)
            except Exception:  # noqa: BLE001
                s = None
        mol = Chem.MolFromSmiles(s) if s else None
        out.append(Chem.MolToSmiles(mol) if mol is not None and mol.GetNumAtoms() > 0 else None)
    return out


def random_token_strings(tokenizer: Tokenizer, corpus: Sequence[str], n: int, *, seed: int = 0) -> list[str]:
    """The random-token baseline: ``n`` strings of tokens drawn uniformly from the vocabulary, with lengths
    drawn from the corpus' length distribution (an LM that learned nothing but the length)."""
    rng = np.random.default_rng(seed)
    lengths = np.array([len(tokenizer.split(s)) for s in corpus])
    words = list(tokenizer.vocab[len(SPECIALS):])
    return [tokenizer.join(rng.choice(words, size=int(L)).tolist()) for L in rng.choice(lengths, size=n)]


def to_selfies_corpus(smiles: Sequence[str]) -> list[str]:
    """SELFIES of each SMILES (RDKit-canonical first); an item that cannot be encoded, or that does not survive
    the SELFIES round trip, is a ``ValueError`` naming it (the checks of :func:`iclr25.next_mol.chem.prepare`
    without building the token-to-atom map, which the LM corpus does not need)."""
    import selfies as sf  # noqa: PLC0415
    from rdkit import Chem  # noqa: PLC0415

    from .chem import canonical_smiles  # noqa: PLC0415

    out = []
    for i, s in enumerate(smiles):
        can = canonical_smiles(s, name=f"smiles[{i}]")
        try:
            enc = sf.encoder(can)
        except Exception as exc:  # noqa: BLE001
            raise ValueError(f"smiles[{i}] {s!r} cannot be encoded as SELFIES ({exc})") from exc
        dec = Chem.MolFromSmiles(sf.decoder(enc)) if enc else None
        if dec is None or Chem.MolToSmiles(dec) != can:
            raise ValueError(f"smiles[{i}] {s!r} does not survive the SELFIES round trip; its valence or charges "
                             "are outside the SELFIES alphabet")
        out.append(enc)
    return out


def lm_state(model: CausalLM, tokenizer: Tokenizer) -> dict[str, Any]:
    """Everything needed to rebuild the LM (config, vocabulary, weights)."""
    return {"config": dataclasses.asdict(model.config), "tokenizer": tokenizer.to_dict(),
            "state_dict": to_cpu(model.state_dict())}
