"""A linear probe on the hidden state of the last name token: is an attribute (and its parity) linearly
present where the model reads the name, although the model cannot *use* it without CoT?

Features ``h_i`` are final-layer states at the last token of person i's full name inside the question; a
ridge regression ``W = argmin ||H W - Y||^2 + λ ||W||^2`` (closed form ``W = (HᵀH + λI)⁻¹ HᵀY``, one-hot
targets) is fit on train people and scored by arg-max accuracy on test people.

References: Allen-Zhu & Li, *Physics of Language Models: Part 3.1* (ICLR 2025), §5 (P-probing of the
name-token state); *Part 3.2*, §4 (knowledge present but not manipulable without CoT).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from .tasks import build_task

__all__ = ["ProbeResult", "name_token_probe"]


@dataclasses.dataclass(frozen=True)
class ProbeResult:
    """Probe accuracy on train and test people for one target, and the majority-class rate on test."""

    target: str
    train: float
    test: float
    chance: float


@torch.no_grad()
def name_token_probe(pre, *, target: str = "birth_month", modulus: int | None = None, ridge: float = 1e-2,
                     model: torch.nn.Module | None = None) -> ProbeResult:
    """Fit the probe of ``target`` (``birth_month``, ``birth_day`` or ``birth_year``; its residue mod
    ``modulus`` when given) on the hidden states computed where the model is, on train people of ``pre`` (a :class:`.experiments.PretrainedModel`)."""
    if target not in ("birth_month", "birth_day", "birth_year"):
        raise ValueError(f"target must be birth_month, birth_day or birth_year, got {target!r}")
    if modulus is not None and (isinstance(modulus, bool) or not isinstance(modulus, int) or modulus < 2):
        raise ValueError(f"modulus must be an integer >= 2 or None, got {modulus!r}")
    if not ridge > 0:
        raise ValueError(f"ridge must be > 0, got {ridge!r}")
    net = model if model is not None else pre.model
    tok, pop = pre.tokenizer, pre.population
    qas = build_task(pop, "classification:birth_month:mod2", people="all")
    feats = np.zeros((len(pop), net.cfg.d_model), dtype=np.float64)
    for q in qas:
        ids = tok.encode(q.prompt)
        upto = len(tok.encode(q.prompt.split(" modulo ")[0])) - 1  # last token of the name
        h = net.hidden(torch.tensor([ids], device=next(net.parameters()).device))[0, upto]
        feats[q.person] = h.double().cpu().numpy()
    y = np.array([getattr(p, target) for p in pop.people])
    if modulus is not None:
        y = y % modulus
    classes = np.unique(y)
    Y = (y[:, None] == classes[None, :]).astype(np.float64)
    tr, te = np.array(pop.train), np.array(pop.test)
    mu = feats[tr].mean(0)
    H = feats - mu
    W = np.linalg.solve(H[tr].T @ H[tr] + ridge * len(tr) * np.eye(H.shape[1]), H[tr].T @ (Y[tr] - Y[tr].mean(0)))
    pred = classes[(H @ W + Y[tr].mean(0)).argmax(1)]
    chance = max(np.mean(y[te] == c) for c in classes)
    name = target + (f" mod {modulus}" if modulus else "")
    return ProbeResult(name, float(np.mean(pred[tr] == y[tr])), float(np.mean(pred[te] == y[te])), float(chance))
