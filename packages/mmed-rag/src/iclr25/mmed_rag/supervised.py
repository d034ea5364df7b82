"""Image-only references (issue 61): a plain supervised CNN that reads the findings from the image alone (no
reports, no language model), and the mean-colour shortcut a router could take to tell the domains apart.

The CNN is three conv blocks with batch normalisation (16, 32, 64 channels), global max and mean pooling and one
logit per (domain, finding), trained by binary cross-entropy on the training split's true labels; a question about finding
f of an image of domain d is answered by the logit (d, f) (the question names the domain's finding). Its accuracy
on the test questions says how much of the answer the image carries for a model that is taught to read it: the
ceiling the VLM's own eyes (``image_reading_*``) are measured against.

References: Xia et al., *MMed-RAG*, ICLR 2025 (§3.1 the domain router; the Med-LVLM's vision encoder).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from .data import DOMAINS, MedDataset, vqa_items

__all__ = ["ImageOnlyModel", "fit_image_only", "image_only_accuracy", "mean_colour_domain_accuracy"]


class ImageOnlyModel(torch.nn.Module):
    """A small CNN with one logit per (domain, finding): ``(B, n_domains, n_findings)``."""

    def __init__(self, n_findings: int, n_domains: int = len(DOMAINS), width: int = 16) -> None:
        super().__init__()
        self.n_findings, self.n_domains = n_findings, n_domains
        w = width
        nn = torch.nn
        self.net = nn.Sequential(
            nn.Conv2d(3, w, 3, padding=1), nn.BatchNorm2d(w), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(w, 2 * w, 3, padding=1), nn.BatchNorm2d(2 * w), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(2 * w, 4 * w, 3, padding=1), nn.BatchNorm2d(4 * w), nn.ReLU())
        self.head = nn.Linear(8 * w, n_domains * n_findings)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.net(x)
        h = torch.cat([h.amax(dim=(2, 3)), h.mean(dim=(2, 3))], dim=1)
        return self.head(h).view(len(x), self.n_domains, self.n_findings)

    @torch.no_grad()
    def yes_probability(self, images: Any, domains: Any, findings: Any, *, batch_size: int = 512) -> np.ndarray:
        """P(finding present) of each (image, domain, finding) triple: (N,) float."""
        x = torch.as_tensor(np.asarray(images, np.float32))
        d, f = np.asarray(domains), np.asarray(findings)
        self.eval()
        out = []
        for s in range(0, len(x), batch_size):
            logit = self(x[s:s + batch_size])
            idx = torch.arange(len(logit))
            p = torch.sigmoid(logit[idx, torch.as_tensor(d[s:s + batch_size]), torch.as_tensor(f[s:s + batch_size])])
            out.append(p.cpu().numpy())
        return np.concatenate(out) if out else np.zeros(0)


def fit_image_only(train: MedDataset, *, steps: int = 400, batch_size: int = 64, lr: float = 3e-3,
                   width: int = 16, seed: int = 0) -> ImageOnlyModel:
    """Train :class:`ImageOnlyModel` on ``train``'s images and true finding labels (Adam, cosine decay; the loss
    on the logits of each image's own domain only)."""
    if not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be an integer >= 1, got {steps!r}")
    torch.manual_seed(seed)
    gen = np.random.default_rng(seed)
    model = ImageOnlyModel(train.n_findings, width=width)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    x = torch.as_tensor(train.images)
    d = torch.as_tensor(train.domains)
    y = torch.as_tensor(train.labels, dtype=torch.float32)
    model.train()
    for _ in range(steps):
        idx = torch.as_tensor(gen.choice(len(train), min(batch_size, len(train)), replace=False))
        logit = model(x[idx])[torch.arange(len(idx)), d[idx]]
        loss = F.binary_cross_entropy_with_logits(logit, y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return model.eval()


def image_only_accuracy(model: ImageOnlyModel, test: MedDataset) -> float:
    """Accuracy of ``model`` on every (image, finding) question of ``test`` (answer yes when P > 0.5)."""
    img, fnd, ans = vqa_items(test)
    p = model.yes_probability(test.images[img], test.domains[img], fnd)
    return float(((p > 0.5).astype(np.int64) == ans).mean())


def mean_colour_domain_accuracy(train: MedDataset, test: MedDataset, *, k: int = 15) -> float:
    """Domain accuracy on ``test`` of a classifier that sees only each image's mean colour and brightness spread
    (per-channel mean and standard deviation, standardised on ``train``): the majority domain of the ``k``
    nearest training images. Near 1/3 (chance for three balanced domains) means the domains cannot be told apart
    by colour; near 1, a router can take that shortcut."""
    def feats(ds: MedDataset) -> np.ndarray:
        return np.concatenate([ds.images.mean(axis=(2, 3)), ds.images.std(axis=(2, 3))], axis=1).astype(np.float64)

    a, b = feats(train), feats(test)
    mu, sd = a.mean(0), a.std(0) + 1e-9
    a, b = (a - mu) / sd, (b - mu) / sd
    d2 = (b ** 2).sum(1)[:, None] - 2 * b @ a.T + (a ** 2).sum(1)[None]
    nn = np.argsort(d2, axis=1, kind="stable")[:, :min(k, len(train))]
    votes = np.stack([(train.domains[nn] == c).sum(1) for c in range(len(DOMAINS))], axis=1)
    return float((votes.argmax(1) == test.domains).mean())
