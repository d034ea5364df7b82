"""The long-range mechanism task: bottleneck nodes must read a distant node's velocity in few layers.

On a graded channel mesh, each sample is a random velocity field :math:`v_i \\sim N(0, I_2)`. Every
bottleneck node :math:`s \\in S` (lowest Ollivier-Ricci curvature) must output :math:`v_{r(s)}`, the velocity of
its PIORF partner :math:`r(s)` (the fastest node under ``partner="speed"``, the node of extreme projected
velocity under ``"feature-difference"``), which is usually many hops away. A MeshGraphNet with fewer layers
than that distance cannot see it on the mesh alone; with PIORF's edges it is one hop away.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from iclr25.utils.seeding import check_seed

from .curvature import ollivier_ricci
from .mesh import channel_mesh
from .rewiring import PARTNER_RULES, Rewirer

__all__ = ["LongRangeResult", "long_range_task"]


@dataclasses.dataclass(frozen=True)
class LongRangeResult:
    """Test RMSE of the target at the bottleneck nodes, for plain MGN and MGN+PIORF.

    ``hops`` is the mean mesh hop distance from a bottleneck node to its partner on the test samples.
    """

    rmse_plain: float
    rmse_piorf: float
    hops: float
    n_nodes: int
    n_bottleneck: int

    @property
    def ratio(self) -> float:
        return self.rmse_piorf / self.rmse_plain


def _batch(rewirer: Rewirer, v: np.ndarray, rewired: bool):
    """Disjoint union of ``len(v)`` copies of the (rewired) mesh and the targets at the bottleneck nodes."""
    n, mesh = rewirer.n_nodes, rewirer.edge_index
    eis, masks, tgt = [], [], []
    for b, vb in enumerate(v):
        if rewired:
            rw = rewirer(vb)
            ei, mask = rw.edge_index, rw.long_range
        else:  # the plain model's mesh: no rewiring to compute
            ei, mask = mesh, np.zeros(mesh.shape[1], dtype=bool)
        eis.append(ei + b * n)
        masks.append(mask)
        tgt.append(vb[rewirer.partners(vb)])
    return np.concatenate(eis, axis=1), np.concatenate(masks), np.concatenate(tgt)


def long_range_task(*, layers: int = 4, latent: int = 32, steps: int = 400, batch: int = 4, ratio: float = 0.03,
                    partner: str = "speed", separate_long_range: bool = True, n_test: int = 16, seed: int = 0,
                    lr: float = 1e-3, device=None) -> LongRangeResult:
    """Train plain MGN and MGN+PIORF on the mechanism task and compare their test RMSE.

    Parameters
    ----------
    layers, latent
        MeshGraphNet depth (fewer layers than the bottleneck-to-partner distance) and width.
    steps, batch
        Adam steps and random fields per step.
    ratio, partner
        PIORF settings.
    separate_long_range
        Encode the long-range edges with their own MLPs (learns the routing much faster).
    n_test
        Fresh test fields.
    seed
        Seeds the mesh jitter, the fields and the weights.
    lr
        Adam's initial learning rate (halved over the run).
    device
        Where the models train (``None``: ``$ICLR25_DEVICE``, else ``auto``); the fields, the rewiring and the
        targets are drawn in numpy on the CPU (the same data on every device) and copied there a batch at a time.

    References
    ----------
    Yu et al., PIORF, ICLR 2025, Sec. 4 (long-range interactions through bottlenecks); the package's paper
    note, check 4.
    """
    import torch
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import shortest_path

    from iclr25.utils.device import torch_device

    from .model import MeshGraphNet

    seed = check_seed(seed)
    dev = torch_device(device)
    if not (isinstance(lr, (int, float)) and np.isfinite(lr) and lr > 0):
        raise ValueError(f"lr must be a finite number > 0, got {lr!r}")
    if partner not in PARTNER_RULES:
        raise ValueError(f"partner must be one of {PARTNER_RULES}, got {partner!r}")
    mesh = channel_mesh(16.0, 4.0, (3.0, 2.1), 0.5, h_min=0.2, h_max=0.8, grade=2.0, seed=seed)
    n = mesh.n_nodes
    rewirer = Rewirer(mesh.edge_index, ollivier_ricci(mesh.edge_index).node, ratio=ratio, partner=partner,
                      pos=mesh.pos, seed=seed)
    S = rewirer.bottleneck
    rng = np.random.default_rng(seed)
    pos = torch.as_tensor(mesh.pos, dtype=torch.float32, device=dev)
    test_v = rng.normal(size=(n_test, n, 2)).astype(np.float32)
    A = csr_array((np.ones(mesh.edge_index.shape[1]), (mesh.edge_index[0], mesh.edge_index[1])), shape=(n, n))
    dist = shortest_path(A, unweighted=True, indices=S)
    hops = float(np.mean([dist[np.arange(len(S)), rewirer.partners(v)] for v in test_v]))
    results = {}
    for rewired in (False, True):
        torch.manual_seed(seed)
        model = MeshGraphNet(2, 3, 2, latent=latent, layers=layers, separate_long_range=separate_long_range).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        sched = torch.optim.lr_scheduler.ExponentialLR(opt, 0.5 ** (1.0 / steps))
        train_rng = np.random.default_rng([seed, 1])

        def run(v: np.ndarray, model=model, rewired=rewired):
            ei, mask, tgt = _batch(rewirer, v, rewired)
            ei_t = torch.as_tensor(ei, device=dev)
            d = pos.repeat(len(v), 1)
            d = d[ei_t[0]] - d[ei_t[1]]
            out = model(torch.as_tensor(v.reshape(-1, 2), device=dev), torch.cat([d, d.norm(dim=1, keepdim=True)], 1),
                        ei_t, torch.as_tensor(mask, device=dev))
            idx = (S[None, :] + n * np.arange(len(v))[:, None]).ravel()
            return out[torch.as_tensor(idx, device=dev)], torch.as_tensor(tgt, device=dev)

        for _ in range(steps):
            pred, tgt = run(train_rng.normal(size=(batch, n, 2)).astype(np.float32))
            loss = ((pred - tgt) ** 2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
        with torch.no_grad():
            pred, tgt = run(test_v)
            results[rewired] = float(torch.sqrt(((pred - tgt) ** 2).sum(1).mean()))
    return LongRangeResult(results[False], results[True], hops, n, len(S))
