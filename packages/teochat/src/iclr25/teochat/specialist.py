"""The specialist baseline: a siamese U-Net-lite change-detection CNN on the (first, last) frame pair.

A shared encoder embeds both frames at three scales; a decoder fuses ``[f_post, |f_post - f_pre|]`` with skip
connections and predicts a per-pixel change logit, trained with binary cross-entropy on the change mask

.. math:: \\mathcal{L} = -\\frac{1}{HW} \\sum_{p} w\\, m_p \\log \\sigma(z_p) + (1 - m_p) \\log (1 - \\sigma(z_p))

(``w``: the weight of the changed pixels, ``pos_weight``; 1 is plain BCE).

Connected components of ``sigma(z) > 1/2`` become boxes, scored with the same pixel F1 as the assistant.

References: Irvin et al., TEOChat, ICLR 2025, Table 1 ("Specialist" column; xBD localisation specialist);
Daudt et al., "Fully convolutional siamese networks for change detection", ICIP 2018.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

import numpy as np
import torch
from scipy import ndimage
from torch import nn
from torch.nn import functional as F

from iclr25.utils.device import torch_device
from iclr25.utils.optim import Adam
from iclr25.utils.progress import progress
from iclr25.utils.seeding import check_seed

from .assistant import frames_to_tensor
from .conversation import format_boxes, to_percent
from .synth import EOSequence

__all__ = ["SiameseChangeDetector", "change_mask", "train_specialist", "SpecialistRun"]


def change_mask(seq: EOSequence) -> np.ndarray:
    """Pixel mask ``(H, W)`` of the buildings that changed between the first and the last frame."""
    m = np.zeros((seq.size, seq.size), dtype=np.float32)
    for b in seq.buildings:
        if b.change != "no_change":
            x1, y1, x2, y2 = b.box
            m[y1:y2, x1:x2] = 1.0
    return m


class SiameseChangeDetector(nn.Module):
    """Siamese U-Net-lite: shared 3-scale encoder, fused difference decoder, 1 logit per pixel."""

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        c = width
        self.e1 = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.ReLU(), nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
        self.e2 = nn.Sequential(nn.Conv2d(c, 2 * c, 3, stride=2, padding=1), nn.ReLU())
        self.e3 = nn.Sequential(nn.Conv2d(2 * c, 2 * c, 3, stride=2, padding=1), nn.ReLU())
        self.d3 = nn.Sequential(nn.Conv2d(4 * c, 2 * c, 3, padding=1), nn.ReLU())
        self.d2 = nn.Sequential(nn.Conv2d(6 * c, c, 3, padding=1), nn.ReLU())
        self.d1 = nn.Sequential(nn.Conv2d(3 * c, c, 3, padding=1), nn.ReLU(), nn.Conv2d(c, 1, 1))

    def _enc(self, x: torch.Tensor) -> list[torch.Tensor]:
        a = self.e1(x)
        b = self.e2(a)
        return [a, b, self.e3(b)]

    def forward(self, pre: torch.Tensor, post: torch.Tensor) -> torch.Tensor:
        fa, fb = self._enc(pre), self._enc(post)
        fuse = [torch.cat([b, (b - a).abs()], dim=1) for a, b in zip(fa, fb, strict=True)]
        x = self.d3(fuse[2])
        x = F.interpolate(x, size=fuse[1].shape[-2:], mode="nearest")
        x = self.d2(torch.cat([x, fuse[1]], dim=1))
        x = F.interpolate(x, size=fuse[0].shape[-2:], mode="nearest")
        return self.d1(torch.cat([x, fuse[0]], dim=1))[:, 0]


def _pairs(seqs: Sequence[EOSequence]) -> tuple[torch.Tensor, torch.Tensor]:
    chron = [s.chronological() for s in seqs]
    return frames_to_tensor([c[0] for c in chron]), frames_to_tensor([c[-1] for c in chron])


@dataclasses.dataclass
class SpecialistRun:
    """A trained specialist and its training speed."""

    model: SiameseChangeDetector
    seconds: float

    @torch.no_grad()
    def predict_boxes(self, seqs: Sequence[EOSequence], *, threshold: float = 0.5) -> list[str]:
        """Boxes (``[x1, y1, x2, y2]`` answers) of the connected change components of each sequence."""
        self.model.eval()
        out = []
        for s in range(0, len(seqs), 128):
            dev = next(self.model.parameters()).device
            pre, post = (t.to(dev) for t in _pairs(seqs[s:s + 128]))
            prob = torch.sigmoid(self.model(pre, post)).cpu().numpy()
            for seq, p in zip(seqs[s:s + 128], prob, strict=True):
                lab, _ = ndimage.label(p > threshold)
                boxes = []
                for sl in ndimage.find_objects(lab):
                    if sl is None:
                        continue
                    ys, xs = sl
                    if (ys.stop - ys.start) * (xs.stop - xs.start) < 4:
                        continue  # speckle
                    boxes.append(to_percent((xs.start, ys.start, xs.stop, ys.stop), seq.size))
                out.append(format_boxes(boxes) if len(boxes) <= 4 else
                           " ".join("[" + ", ".join(map(str, b)) + "]" for b in sorted(boxes)))
        return out


def train_specialist(seqs: Sequence[EOSequence], *, steps: int = 300, batch_size: int = 32, lr: float = 3e-3,
                     width: int = 16, seed: int = 0, pos_weight: float = 1.0,
                     device: str | torch.device | None = None) -> SpecialistRun:
    """Train the siamese change detector on the change masks of ``seqs`` (BCE, Adam) on ``device`` (``None``:
    ``$ICLR25_DEVICE``, else ``auto``; initialised on the CPU, the pairs and masks copied to the device once, the
    batch draws and flips on numpy's generator, so every device sees the same batches).

    ``pos_weight`` multiplies the loss of the changed pixels (``binary_cross_entropy_with_logits``'s
    ``pos_weight``; 1: plain BCE). On the balanced generator (0.8) changed pixels are rarer, and with plain BCE
    the detector can settle on "no change" everywhere (F1 0); a weight above 1 keeps it off that minimum
    (``benchmarks/specialist_calibration.py``)."""
    if not seqs:
        raise ValueError("seqs must not be empty")
    if (isinstance(pos_weight, bool) or not isinstance(pos_weight, (int, float, np.integer, np.floating))
            or not np.isfinite(pos_weight) or pos_weight <= 0):
        raise ValueError(f"pos_weight must be a finite number > 0, got {pos_weight!r}")
    seed = check_seed(seed)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    dev = torch_device(device)
    pre, post = (t.to(dev) for t in _pairs(seqs))
    mask = torch.from_numpy(np.stack([change_mask(s) for s in seqs])).to(dev)
    model = SiameseChangeDetector(width).to(dev)
    opt = Adam(model.parameters(), lr=lr)  # torch.optim.Adam's update, bit for bit (iclr25.utils.optim)
    pw = torch.tensor(float(pos_weight), device=dev)
    t0 = time.perf_counter()
    for _ in progress(range(steps), desc="specialist"):
        idx = torch.from_numpy(rng.integers(0, len(seqs), size=batch_size)).to(dev)
        # swap-free augmentation: random flips keep the pair registered
        a, b, m = pre[idx], post[idx], mask[idx]
        if rng.random() < 0.5:
            a, b, m = a.flip(-1), b.flip(-1), m.flip(-1)
        loss = F.binary_cross_entropy_with_logits(model(a, b), m, pos_weight=pw)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return SpecialistRun(model, time.perf_counter() - t0)
