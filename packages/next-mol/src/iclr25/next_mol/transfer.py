"""1D-to-3D transfer: the SELFIES language model's token representations, mixed over layers, projected and mapped
to atoms through the SELFIES-token-to-atom map, become extra node inputs of DMT.

``z = TransformerEncoder(Linear(LayerNorm(sum_l softmax(w)_l H_l)))`` over the tokens of a molecule, then
``f_atom_j = sum_i M_ij z_i / sum_i M_ij`` with ``M`` from :func:`iclr25.next_mol.chem.token_atom_map`.
Training follows the paper's stage 2: DMT (already trained) and the LM stay frozen; the projector and DMT's new
input columns train (the paper also trains LoRA adapters of the 960M LM; the tiny LM here is kept frozen).

References: NExT-Mol (Liu et al., ICLR 2025), Sec. 3.3 and Fig. 4.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from .chem import Molecule
from .lm import CausalLM
from .tokenizer import Tokenizer

__all__ = ["LMProjector", "LMFeaturizer"]


class LMProjector(nn.Module):
    """Softmax-weighted mean of the LM's layers, LayerNorm, a linear layer and a 1-layer transformer (4 heads)."""

    def __init__(self, n_layers: int, d_lm: int, d_out: int = 64, n_heads: int = 4) -> None:
        super().__init__()
        self.layer_logits = nn.Parameter(torch.zeros(n_layers))
        self.norm = nn.LayerNorm(d_lm)
        self.proj = nn.Linear(d_lm, d_out)
        self.encoder = nn.TransformerEncoderLayer(d_out, n_heads, 2 * d_out, 0.0, batch_first=True, norm_first=True)
        self.d_out = d_out

    def forward(self, hidden: torch.Tensor, pad_mask: torch.Tensor) -> torch.Tensor:
        """``hidden`` ``(L, B, T, d_lm)``, ``pad_mask`` ``(B, T)`` True on padding -> ``(B, T, d_out)``."""
        w = torch.softmax(self.layer_logits, 0)
        h = (w[:, None, None, None] * hidden).sum(0)
        return self.encoder(self.proj(self.norm(h)), src_key_padding_mask=pad_mask)


class LMFeaturizer:
    """Per-atom LM features of a fixed list of molecules; the frozen LM runs once, the projector every call."""

    def __init__(self, lm: CausalLM, tokenizer: Tokenizer, molecules: Sequence[Molecule], *, d_out: int = 64,
                 seed: int = 0, device=None) -> None:
        """``device``: where the LM runs and the projector lives (``None``: ``$ICLR25_DEVICE`` or ``auto``; the LM
        is moved there); the features are returned there (:meth:`numpy`: on the CPU)."""
        from iclr25.utils.device import torch_device  # noqa: PLC0415

        dev = torch_device(device)
        if tokenizer.kind != "selfies":
            raise ValueError(f"the transfer needs the SELFIES LM, got a {tokenizer.kind} tokenizer")
        ids = torch.as_tensor(tokenizer.batch([m.selfies for m in molecules], name="molecules"))
        if ids.shape[1] > lm.config.max_len:
            raise ValueError(f"a molecule has more than {lm.config.max_len - 2} SELFIES tokens, the LM's maximum")
        ids = ids.to(dev)
        lm.to(dev).eval()
        with torch.no_grad():
            self.hidden = torch.cat([lm.hidden_states(ids[i:i + 128]) for i in range(0, len(ids), 128)], 1)
        self.pad = ids == 0
        self.maps = [torch.as_tensor(m.token_map, device=dev) for m in molecules]
        torch.manual_seed(seed)  # initialised on the CPU (the same projector on every device), then moved
        self.projector = LMProjector(self.hidden.shape[0], self.hidden.shape[-1], d_out).to(dev)

    @property
    def d_out(self) -> int:
        return self.projector.d_out

    def __call__(self, indices: Sequence[int]) -> list[torch.Tensor]:
        idx = torch.as_tensor(list(indices), dtype=torch.long)
        dev = self.hidden.device
        z = self.projector(self.hidden[:, idx.to(dev)], self.pad[idx.to(dev)])
        out = []
        for r, i in enumerate(idx.tolist()):
            M = self.maps[i]                                  # (tokens, atoms)
            zt = z[r, 1:1 + M.shape[0]]                       # drop <bos>
            out.append((M.T @ zt) / M.sum(0)[:, None])
        return out

    def numpy(self, indices: Sequence[int]) -> list[np.ndarray]:
        with torch.no_grad():
            return [f.cpu().numpy() for f in self(indices)]
