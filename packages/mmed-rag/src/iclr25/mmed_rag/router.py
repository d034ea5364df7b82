"""The domain router F: a small CNN that maps an image to its domain d ∈ {radiology, pathology,
ophthalmology}, trained with cross-entropy; retrieval then goes to the retriever and database of F(x_v).

References: Xia et al., *MMed-RAG*, ICLR 2025, §3.1 (domain identification; the paper fine-tunes BiomedCLIP,
the reference code has no router).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from iclr25.utils.progress import progress

from .data import DOMAINS, MedDataset, check_images
from .retriever import ImageEncoder

__all__ = ["Router", "train_router"]


class Router(nn.Module):
    """A CNN domain classifier over :data:`DOMAINS`."""

    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.net = ImageEncoder(len(DOMAINS), width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    @torch.no_grad()
    def predict(self, images: Any, *, batch_size: int = 512) -> np.ndarray:
        """Domain ids (N,) of ``images``."""
        x = check_images(images)
        self.eval()
        out = [self(torch.as_tensor(x[s:s + batch_size])).argmax(-1) for s in range(0, len(x), batch_size)]
        return torch.cat(out).cpu().numpy().astype(np.int64)

    def route(self, images: Any) -> list[str]:
        """Domain names of ``images``."""
        return [DOMAINS[i] for i in self.predict(images)]


def train_router(ds: MedDataset, *, steps: int = 150, batch_size: int = 64, lr: float = 3e-3, width: int = 8,
                 seed: int = 0) -> Router:
    """Train a :class:`Router` on the domains of ``ds`` with Adam on cross-entropy. Data of one domain only (a
    folder of chest X-rays): nothing to learn; the router's head is set to send every image there."""
    present = np.unique(ds.domains)
    if len(present) == 0:
        raise ValueError("the router needs at least one image")
    torch.manual_seed(seed)
    model = Router(width)
    if len(present) == 1:
        with torch.no_grad():
            model.net.head.weight.zero_()
            model.net.head.bias.fill_(-1.0)
            model.net.head.bias[int(present[0])] = 1.0
        return model.eval()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    gen = np.random.default_rng(seed)
    x, y = torch.as_tensor(ds.images), torch.as_tensor(ds.domains)
    model.train()
    for _ in progress(range(steps), desc="router"):
        idx = gen.choice(len(ds), min(batch_size, len(ds)), replace=False)
        loss = F.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    return model
