"""Versioned checkpoints of the LM and of DMT: one ``.pt`` file holding the format tag, the model's config, the
tokenizer (for the LM) and the weights; loading checks all of it and names the file in every error."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import torch

from iclr25.utils.device import to_cpu, torch_device
from iclr25.utils.io import atomic_path, naming_write_errors

from .dmt import DMT, DMTConfig
from .lm import CausalLM, LMConfig
from .tokenizer import Tokenizer, tokenizer_from_dict

__all__ = ["save_lm", "load_lm", "save_dmt", "load_dmt", "FORMAT"]

FORMAT = "iclr25-next-mol/1"


def _save(path: str | os.PathLike[str], payload: dict[str, Any]) -> Path:
    p = Path(path)
    if p.suffix != ".pt":
        raise ValueError(f"checkpoint path {p} must end in .pt")
    with naming_write_errors(p):  # a full disk (torch's RuntimeError, or an OSError) names the file
        p.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(p) as tmp:
            torch.save(payload, tmp)
    return p


def _load(path: str | os.PathLike[str], kind: str) -> dict[str, Any]:
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such checkpoint file")
    try:
        payload = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - torch raises many kinds for a file that is not a checkpoint
        raise ValueError(f"{p}: not a readable torch checkpoint ({type(exc).__name__})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ValueError(f"{p}: not an {FORMAT} checkpoint")
    if payload.get("kind") != kind:
        raise ValueError(f"{p}: a {payload.get('kind')!r} checkpoint, expected a {kind!r} one")
    return payload


def _load_state(model: torch.nn.Module, state: dict[str, Any], p: Path) -> None:
    result = model.load_state_dict(state, strict=False)
    if result.missing_keys or result.unexpected_keys:
        raise ValueError(f"{p}: weights do not fit the stored config (missing {result.missing_keys[:4]}, "
                         f"unexpected {result.unexpected_keys[:4]})")


def save_lm(path: str | os.PathLike[str], model: CausalLM, tokenizer: Tokenizer) -> Path:
    """Write the LM (config, tokenizer vocabulary, weights) to ``path`` (``.pt``) atomically."""
    return _save(path, {"format": FORMAT, "kind": "lm", "config": dataclasses.asdict(model.config),
                        "tokenizer": tokenizer.to_dict(), "state_dict": to_cpu(model.state_dict())})


def load_lm(path: str | os.PathLike[str], *, device=None) -> tuple[CausalLM, Tokenizer]:
    """Inverse of :func:`save_lm`: the LM on ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``)."""
    dev = torch_device(device)
    p = Path(path)
    payload = _load(p, "lm")
    try:
        model = CausalLM(LMConfig(**payload["config"]))
        tok = tokenizer_from_dict(payload["tokenizer"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{p}: bad LM config or tokenizer ({exc})") from None
    _load_state(model, payload.get("state_dict", {}), p)
    model.eval()
    return model.to(dev), tok


def save_dmt(path: str | os.PathLike[str], model: DMT, *, extra: dict[str, Any] | None = None) -> Path:
    """Write DMT (config, weights, optional JSON-able ``extra``) to ``path`` (``.pt``) atomically."""
    return _save(path, {"format": FORMAT, "kind": "dmt", "config": dataclasses.asdict(model.config),
                        "state_dict": to_cpu(model.state_dict()), "extra": extra or {}})


def load_dmt(path: str | os.PathLike[str], *, device=None) -> DMT:
    """Inverse of :func:`save_dmt`: DMT on ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``)."""
    dev = torch_device(device)
    p = Path(path)
    payload = _load(p, "dmt")
    try:
        model = DMT(DMTConfig(**payload["config"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{p}: bad DMT config ({exc})") from None
    _load_state(model, payload.get("state_dict", {}), p)
    model.eval()
    return model.to(dev)
