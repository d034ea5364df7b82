"""Pocket-specific optimisation on a CPU docking proxy (the paper docks with UniDock on a GPU).

The proxy itself (:class:`~iclr25.rxnflow.rewards.Pocket`, :data:`POCKETS`, :func:`proxy_score`,
:func:`pocket_reward`; ``--reward pocket:NAME``) lives in :mod:`iclr25.rxnflow.rewards`: a pocket holds a volume,
H-bond donor and acceptor partner sites, aromatic stacking sites and a preferred logP, and the score is Vina-like
(kcal/mol, lower is better). It is a descriptor surrogate, not a physics-based docking score; its numbers are not
Vina's. :func:`pocket_vs_screening` runs the paper's pocket-specific comparison at small scale: RxnFlow against
enumerate-and-rank screening at the same number of distinct oracle calls.
"""

from __future__ import annotations

import dataclasses

from .rewards import POCKETS, Pocket, pocket_reward, proxy_score

__all__ = ["Pocket", "POCKETS", "PocketRun", "proxy_score", "pocket_reward", "pocket_vs_screening"]


@dataclasses.dataclass(frozen=True)
class PocketRun:
    """One pocket-specific optimisation against enumerate-and-rank at the same oracle budget: the mean proxy
    score of the top-``k`` diverse modes of RxnFlow (every molecule it docked while training) and of screening
    (as many distinct random-synthesis products, the best kept), and the budget ``oracle_calls``."""

    pocket: str
    ours: float
    screening: float
    oracle_calls: int
    steps: int


def pocket_vs_screening(space, pocket: str, *, steps: int, seed: int = 0, k: int = 30, beta: float = 16.0,
                        rho: float = 0.1, batch_size: int = 64, min_sampling: int = 10, device=None) -> PocketRun:
    """Train RxnFlow on ``pocket``'s proxy reward for ``steps`` TB steps and compare its top-``k`` diverse
    modes with enumerate-and-rank screening of the same number of distinct molecules (the strongest simple
    method at an equal oracle budget). The policy trains on ``device`` (``None``: ``$ICLR25_DEVICE``, else
    ``auto``); the proxy and RDKit's reactions run on the CPU."""
    import numpy as np
    import torch

    from .chem import mol_from_smiles
    from .gflownet import RxnFlow, TrainConfig, train
    from .rewards import Reward
    from .toy import diverse_top_k, random_synthesis

    torch.manual_seed(seed)
    found = Reward(f"pocket:{pocket}", pocket_reward(pocket))  # its cache: every molecule docked while training
    model = RxnFlow(space, found, beta=beta, seed=seed, device=device)
    res = train(model, TrainConfig(steps=steps, batch_size=batch_size, rho=rho, min_sampling=min_sampling, beta=beta),
                seed=seed, show_progress=False)
    n = len(found.cache)
    screened = Reward(f"pocket:{pocket}", pocket_reward(pocket))
    scout = RxnFlow(space, screened, beta=beta, seed=seed, device=model.device)
    draw = 0
    while len(screened.cache) < n:
        random_synthesis(scout, 256, seed=10_000 * (seed + 1) + draw)
        draw += 1

    def modes(cache: dict) -> float:
        smiles, rewards = list(cache)[:n], list(cache.values())[:n]
        idx = diverse_top_k(smiles, rewards, k=k)
        return float(np.mean([proxy_score(mol_from_smiles(smiles[i]), POCKETS[pocket]) for i in idx]))

    return PocketRun(pocket, modes(found.cache), modes(screened.cache), n, res.steps)
