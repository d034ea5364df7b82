"""DMT, the Diffusion Molecular Transformer of NExT-Mol: the cosine VP noise schedule, batched Kabsch alignment,
and the network (relational multi-head self-attention over atoms with pair features, pair updates and adaLN-Zero
time conditioning). DMT is deliberately *not* rotation-equivariant; it sees randomly rotated conformers.

Devices (issue 59): every tensor a step makes (times, rotations, the time embedding's frequencies) is made on the
device of its inputs or of the ``device=`` given; DMT computes in float32, the Kabsch SVD and the QR of the random
rotations in float64 (float32 on MPS, which has no float64).

References: NExT-Mol (Liu et al., ICLR 2025), Sec. 3.2 and Fig. 3 (DMT), App. (noise schedule and loss).
"""

from __future__ import annotations

import dataclasses
import math

import torch
from torch import nn

__all__ = ["CosineVPSchedule", "kabsch_rotation", "kabsch_align", "random_rotations", "DMTConfig", "DMT",
           "masked_center", "wide_dtype"]


def wide_dtype(device) -> torch.dtype:
    """float64 where the device has it (CPU, CUDA), float32 on MPS."""
    return torch.float32 if torch.device(device).type == "mps" else torch.float64


class CosineVPSchedule:
    """Continuous-time cosine variance-preserving schedule (Nichol & Dhariwal; DPM-Solver's ``cosine`` VP):

    ``log alpha_t = log cos((t + s)/(1 + s) * pi/2) - log cos(s/(1 + s) * pi/2)``, ``sigma_t = sqrt(1 - alpha_t^2)``,
    with ``s = 0.008`` and ``t`` in ``[0, T]``, ``T = 0.9946``; ``x_t = alpha_t x_0 + sigma_t eps``.
    """

    def __init__(self, s: float = 0.008, T: float = 0.9946, t_min: float = 1e-5) -> None:
        if not (0 < s < 1 and 0 < t_min < T < 1):
            raise ValueError(f"need 0 < s < 1 and 0 < t_min < T < 1, got s={s}, T={T}, t_min={t_min}")
        self.s, self.T, self.t_min = s, T, t_min
        self._log0 = math.log(math.cos(s / (1 + s) * math.pi / 2))

    def log_alpha(self, t: torch.Tensor) -> torch.Tensor:
        return torch.log(torch.cos((t + self.s) / (1 + self.s) * math.pi / 2)) - self._log0

    def alpha(self, t: torch.Tensor) -> torch.Tensor:
        return torch.exp(self.log_alpha(t))

    def sigma(self, t: torch.Tensor) -> torch.Tensor:
        return torch.sqrt(torch.clamp(-torch.expm1(2 * self.log_alpha(t)), min=0.0))

    def stratified_times(self, batch: int, generator: torch.Generator | None = None, device=None) -> torch.Tensor:
        """``t = (u + i/B) mod 1`` for ``i = 0..B-1``, rescaled to ``[t_min, T]`` (one uniform draw per batch, one
        time per stratum; ``linspace(0, 1, B)`` would put two times in the same stratum, since 0 = 1 mod 1); on
        ``device`` (``None``: the CPU), where ``generator`` must be."""
        u = torch.rand((), generator=generator, device=device)
        t = torch.remainder(u + torch.arange(batch, device=device) / batch, 1.0)
        return self.t_min + (self.T - self.t_min) * t


def masked_center(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Subtract the mean over real atoms (``mask`` ``(B, N)``) and zero the padding."""
    m = mask[..., None].to(x.dtype)
    mean = (x * m).sum(-2, keepdim=True) / m.sum(-2, keepdim=True).clamp(min=1)
    return (x - mean) * m


def kabsch_rotation(P: torch.Tensor, Q: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Rotations ``R`` (``(B, 3, 3)``, det +1) minimising ``sum_i |Q_i - R P_i|^2`` over the (centred) real atoms.

    ``H = P_c^T Q_c = U S V^T``, ``R = V diag(1, 1, d) U^T`` with ``d = sign(det(V U^T))`` (Kabsch, 1976).
    """
    if mask is None:
        mask = torch.ones(P.shape[:2], dtype=torch.bool, device=P.device)
    Pc, Qc = masked_center(P, mask), masked_center(Q, mask)
    H = Pc.transpose(1, 2) @ Qc
    U, _, Vh = torch.linalg.svd(H.to(wide_dtype(H.device)))
    V = Vh.transpose(1, 2)
    d = torch.sign(torch.linalg.det(V @ U.transpose(1, 2)))
    d = torch.where(d == 0, torch.ones_like(d), d)
    D = torch.diag_embed(torch.stack([torch.ones_like(d), torch.ones_like(d), d], -1))
    return (V @ D @ U.transpose(1, 2)).to(P.dtype)


def kabsch_align(P: torch.Tensor, Q: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """``P`` rotated about the origin onto ``Q``: ``P R*^T`` with ``R* = argmin_R |Q - R P|``."""
    R = kabsch_rotation(P, Q, mask)
    return P @ R.transpose(1, 2)


def random_rotations(n: int, generator: torch.Generator | None = None, dtype=torch.float32, device=None
                     ) -> torch.Tensor:
    """``n`` rotations uniform on SO(3) (QR of a Gaussian matrix with the sign fix, det +1), on ``device``
    (``None``: the CPU), where ``generator`` must be."""
    A = torch.randn(n, 3, 3, generator=generator, dtype=wide_dtype(device or "cpu"), device=device)
    Q, R = torch.linalg.qr(A)
    Q = Q * torch.sign(torch.diagonal(R, dim1=-2, dim2=-1))[:, None, :]
    det = torch.linalg.det(Q)
    Q[:, :, 0] = Q[:, :, 0] * det[:, None]
    return Q.to(dtype)


@dataclasses.dataclass(frozen=True)
class DMTConfig:
    """Sizes of :class:`DMT`. DMT-B of the paper is 10 blocks x 512 hidden x 8 heads; the default is DMT-mini."""

    atom_dim: int
    pair_dim: int
    hidden: int = 128
    pair_hidden: int = 64
    n_blocks: int = 4
    n_heads: int = 8
    n_rbf: int = 32
    rbf_max: float = 8.0      # in units of pos_std
    pos_std: float = 1.0      # Angstrom per model unit
    lm_dim: int = 0           # per-atom LM features appended to the node input (1D-to-3D transfer)
    dropout: float = 0.0
    pair_ffn_ratio: int = 2   # hidden width of the pair FFN / pair_hidden (the node FFN uses 4)

    def __post_init__(self) -> None:
        for k in ("atom_dim", "pair_dim", "hidden", "pair_hidden", "n_blocks", "n_heads", "n_rbf", "pair_ffn_ratio"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"DMTConfig.{k} must be a positive integer, got {v!r}")
        if self.hidden % self.n_heads:
            raise ValueError(f"DMTConfig.hidden={self.hidden} must be divisible by n_heads={self.n_heads}")
        if not self.pos_std > 0 or not self.rbf_max > 0 or self.lm_dim < 0:
            raise ValueError("DMTConfig.pos_std and rbf_max must be > 0 and lm_dim >= 0")


def _modulate(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return x * (1 + scale) + shift


class _Block(nn.Module):
    """One DMT block: adaLN-Zero(relational attention), adaLN-Zero(FFN), pair update, adaLN-Zero(pair FFN)."""

    def __init__(self, d: int, dp: int, heads: int, dropout: float, pair_ratio: int = 2) -> None:
        super().__init__()
        self.h, self.c = heads, d // heads
        self.ada_node = nn.Linear(d, 6 * d)
        self.ada_pair = nn.Linear(d, 6 * dp)
        for lin in (self.ada_node, self.ada_pair):  # adaLN-Zero: every block starts as the identity
            nn.init.zeros_(lin.weight)
            nn.init.zeros_(lin.bias)
        self.ln1 = nn.LayerNorm(d, elementwise_affine=False)
        self.ln2 = nn.LayerNorm(d, elementwise_affine=False)
        self.lnp1 = nn.LayerNorm(dp, elementwise_affine=False)
        self.lnp2 = nn.LayerNorm(dp, elementwise_affine=False)
        self.qkv = nn.Linear(d, 3 * d)
        self.ek = nn.Linear(dp, d)
        self.ev = nn.Linear(dp, d)
        self.out = nn.Linear(d, d)
        self.ffn = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Dropout(dropout), nn.Linear(4 * d, d))
        self.pair_in = nn.Linear(d, dp)
        self.ffn_p = nn.Sequential(nn.Linear(dp, pair_ratio * dp), nn.GELU(), nn.Linear(pair_ratio * dp, dp))
        self.drop = nn.Dropout(dropout)

    def forward(self, h: torch.Tensor, e: torch.Tensor, c: torch.Tensor, mask: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        B, N, _ = h.shape
        sh1, sc1, g1, sh2, sc2, g2 = self.ada_node(c)[:, None].chunk(6, -1)
        shp1, scp1, gp1, shp2, scp2, gp2 = self.ada_pair(c)[:, None, None].chunk(6, -1)
        hn = _modulate(self.ln1(h), sh1, sc1)
        en = _modulate(self.lnp1(e), shp1, scp1)
        q, k, v = self.qkv(hn).view(B, N, 3, self.h, self.c).unbind(2)
        # W_k and W_v of the pair features in one matmul and one tanh (same numbers as two separate layers)
        ekv = torch.tanh(nn.functional.linear(en, torch.cat([self.ek.weight, self.ev.weight]),
                                              torch.cat([self.ek.bias, self.ev.bias])))
        ek, ev = ekv.view(B, N, N, 2, self.h, self.c).unbind(3)
        # relational attention: a_ij = softmax_j( sum_c q_ic k_jc tanh(W_k e_ij)_c / sqrt(C) ), in the (b, i, j, h)
        # layout of the pair tensors (elementwise products and reductions over c or j, no permuted copies)
        logits = (ek * (q[:, :, None] * k[:, None])).sum(-1) / math.sqrt(self.c)      # (B, N, N, H)
        logits = logits.masked_fill(~mask[:, None, :, None], float("-inf"))
        att = self.drop(torch.softmax(logits, 2))
        # message_i = sum_j a_ij v_jc tanh(W_v e_ij)_c
        msg = (ev * (att[..., None] * v[:, None])).sum(2).reshape(B, N, -1)
        h = h + g1 * self.out(msg)
        h = h + g2 * self.ffn(_modulate(self.ln2(h), sh2, sc2))
        hp = self.pair_in(h)
        e = e + gp1 * (hp[:, :, None] + hp[:, None, :])
        e = e + gp2 * self.ffn_p(_modulate(self.lnp2(e), shp2, scp2))
        return h * mask[..., None], e


class DMT(nn.Module):
    """The Diffusion Molecular Transformer: predicts the noise ``eps_hat(x_t, t)`` of every atom.

    Node input ``Linear([atom features | x_t | LM features])``; pair input
    ``Linear([bond and path one-hots | RBF(|x_i - x_j|)])``; ``t`` enters through adaLN only; output
    ``Linear(adaLN(h_i))`` in model units (coordinates divided by ``pos_std``). Permutation-equivariant over
    atoms, not rotation-equivariant.
    """

    def __init__(self, config: DMTConfig) -> None:
        super().__init__()
        self.config = config
        d, dp = config.hidden, config.pair_hidden
        self.node_in = nn.Linear(config.atom_dim + 3 + config.lm_dim, d)
        self.pair_in = nn.Linear(config.pair_dim + config.n_rbf, dp)
        self.t_mlp = nn.Sequential(nn.Linear(d, d), nn.SiLU(), nn.Linear(d, d))
        self.blocks = nn.ModuleList([_Block(d, dp, config.n_heads, config.dropout, config.pair_ffn_ratio) for _ in range(config.n_blocks)])
        self.ln_out = nn.LayerNorm(d, elementwise_affine=False)
        self.ada_out = nn.Linear(d, 2 * d)
        nn.init.zeros_(self.ada_out.weight)
        nn.init.zeros_(self.ada_out.bias)
        self.head = nn.Linear(d, 3)
        self.register_buffer("rbf_mu", torch.linspace(0, config.rbf_max, config.n_rbf), persistent=False)

    def time_embedding(self, t: torch.Tensor) -> torch.Tensor:
        half = self.config.hidden // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
        ang = 1000.0 * t[:, None].float() * freqs[None]
        emb = torch.cat([torch.sin(ang), torch.cos(ang)], -1)
        if emb.shape[-1] < self.config.hidden:
            emb = nn.functional.pad(emb, (0, self.config.hidden - emb.shape[-1]))
        return self.t_mlp(emb)

    def forward(self, x_t: torch.Tensor, t: torch.Tensor, atom_feats: torch.Tensor, pair_feats: torch.Tensor,
                mask: torch.Tensor, lm_feats: torch.Tensor | None = None) -> torch.Tensor:
        """``x_t`` ``(B, N, 3)``, ``t`` ``(B,)``, ``atom_feats`` ``(B, N, Fa)``, ``pair_feats`` ``(B, N, N, Fp)``,
        ``mask`` ``(B, N)`` bool; returns ``eps_hat`` ``(B, N, 3)`` (zero on padding)."""
        parts = [atom_feats, x_t]
        if self.config.lm_dim:
            if lm_feats is None:
                lm_feats = x_t.new_zeros(*x_t.shape[:2], self.config.lm_dim)
            parts.append(lm_feats)
        h = self.node_in(torch.cat(parts, -1)) * mask[..., None]
        dist = torch.linalg.vector_norm(x_t[:, :, None] - x_t[:, None], dim=-1)
        width = self.config.rbf_max / self.config.n_rbf
        rbf = torch.exp(-((dist[..., None] - self.rbf_mu) / width) ** 2)
        e = self.pair_in(torch.cat([pair_feats, rbf], -1))
        c = nn.functional.silu(self.time_embedding(t))
        for blk in self.blocks:
            h, e = blk(h, e, c, mask)
        shift, scale = self.ada_out(c)[:, None].chunk(2, -1)
        return self.head(_modulate(self.ln_out(h), shift, scale)) * mask[..., None]

    def extend_lm_input(self, lm_dim: int) -> DMT:
        """A copy whose node input also takes ``lm_dim`` LM features; the new weights start at zero, so the copy
        computes exactly what this model computes until they are trained (NExT-Mol's transfer, stage 2)."""
        if self.config.lm_dim:
            raise ValueError("this DMT already takes LM features")
        state = self.state_dict()
        new = DMT(dataclasses.replace(self.config, lm_dim=lm_dim)).to(state["node_in.weight"].device)
        w = state["node_in.weight"]
        state["node_in.weight"] = torch.cat([w, w.new_zeros(w.shape[0], lm_dim)], 1)
        new.load_state_dict(state)
        return new

    def n_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())
