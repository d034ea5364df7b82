"""A MeshGraphNet (encode-process-decode) in plain torch, with an optional second edge set for long-range edges.

Every MLP has two hidden layers of width ``latent`` with ReLU, and a LayerNorm on its output except the
decoder's. One processor block updates edges, then nodes, both with residuals:

.. math::

    e'_{ij} = e_{ij} + \\mathrm{MLP}_e([h_i, h_j, e_{ij}]), \\qquad
    h'_i = h_i + \\mathrm{MLP}_h\\Big(\\big[h_i, \\textstyle\\sum_{j \\to i} \\mathrm{MLP}_e(\\cdot)_{ji}\\big]\\Big).

Aggregation is ``index_add_`` (no compiled scatter extension). The first layer of the edge MLP is applied to
the nodes before the gather, :math:`W[h_i, h_j, e_{ij}] = (W_s h)_i + (W_d h)_j + W_e e_{ij}`: the same
function and parameters as the concatenation, with a third fewer edge-level multiplications. With ``separate_long_range=True`` the
long-range edges get their own encoder and edge MLPs and their own aggregation slot in the node MLP, as
MeshGraphNets does with world edges.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["MeshGraphNet", "mlp"]


def mlp(n_in: int, latent: int, n_out: int, *, layer_norm: bool = True) -> nn.Sequential:
    """Two hidden ReLU layers of width ``latent``; LayerNorm on the output unless ``layer_norm=False``."""
    layers: list[nn.Module] = [nn.Linear(n_in, latent), nn.ReLU(), nn.Linear(latent, latent), nn.ReLU(),
                               nn.Linear(latent, n_out)]
    if layer_norm:
        layers.append(nn.LayerNorm(n_out))
    return nn.Sequential(*layers)


def _scatter_sum(values: torch.Tensor, index: torch.Tensor, n: int) -> torch.Tensor:
    return torch.zeros(n, values.shape[1], dtype=values.dtype, device=values.device).index_add_(0, index, values)


class _Block(nn.Module):
    def __init__(self, latent: int, n_sets: int) -> None:
        super().__init__()
        self.edge = nn.ModuleList([mlp(3 * latent, latent, latent) for _ in range(n_sets)])
        self.node = mlp((1 + n_sets) * latent, latent, latent)

    def forward(self, h: torch.Tensor, edges: list[torch.Tensor], index: list[torch.Tensor]
                ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        n = h.shape[0]
        new_edges, aggs = [], []
        lat = h.shape[1]
        for f, e, ei in zip(self.edge, edges, index):
            src, dst = ei[0], ei[1]
            w, b = f[0].weight, f[0].bias
            pre = (h @ w[:, :lat].T)[src] + (h @ w[:, lat:2 * lat].T)[dst] + torch.addmm(b, e, w[:, 2 * lat:].T)
            m = f[1:](pre)
            aggs.append(_scatter_sum(m, dst, n))
            new_edges.append(e + m)
        return h + self.node(torch.cat([h, *aggs], dim=1)), new_edges


class MeshGraphNet(nn.Module):
    """Encode-process-decode graph network of MeshGraphNets.

    Parameters
    ----------
    node_in, edge_in, n_out
        Input node and edge feature sizes and output size.
    latent
        Width of every MLP and of the latent node/edge states (128 in the paper).
    layers
        Number of message-passing blocks (15 in the paper).
    separate_long_range
        Give long-range edges (``long_range`` mask in :meth:`forward`) their own encoder and edge MLPs.

    References
    ----------
    Pfaff et al., "Learning mesh-based simulation with graph networks", ICLR 2021, Sec. 3; Yu et al., PIORF,
    ICLR 2025, Sec. 5 (backbone).
    """

    def __init__(self, node_in: int, edge_in: int, n_out: int, *, latent: int = 128, layers: int = 15,
                 separate_long_range: bool = False) -> None:
        super().__init__()
        if layers < 1 or latent < 1:
            raise ValueError(f"layers and latent must be >= 1, got {layers}, {latent}")
        self.separate_long_range = bool(separate_long_range)
        n_sets = 2 if separate_long_range else 1
        self.node_encoder = mlp(node_in, latent, latent)
        self.edge_encoders = nn.ModuleList([mlp(edge_in, latent, latent) for _ in range(n_sets)])
        self.blocks = nn.ModuleList([_Block(latent, n_sets) for _ in range(layers)])
        self.decoder = mlp(latent, latent, n_out, layer_norm=False)

    def forward(self, x: torch.Tensor, edge_attr: torch.Tensor, edge_index: torch.Tensor,
                long_range: torch.Tensor | None = None) -> torch.Tensor:
        """``x`` (N, node_in), ``edge_attr`` (E, edge_in), ``edge_index`` (2, E) long; returns (N, n_out)."""
        if self.separate_long_range:
            lr = torch.zeros(edge_index.shape[1], dtype=torch.bool, device=x.device) if long_range is None \
                else long_range
            sets = [~lr, lr]
            index = [edge_index[:, s] for s in sets]
            edges = [enc(edge_attr[s]) for enc, s in zip(self.edge_encoders, sets)]
        else:
            index = [edge_index]
            edges = [self.edge_encoders[0](edge_attr)]
        h = self.node_encoder(x)
        for block in self.blocks:
            h, edges = block(h, edges, index)
        return self.decoder(h)
