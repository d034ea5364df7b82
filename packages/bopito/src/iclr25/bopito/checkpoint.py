"""Safe checkpoints: a folder with ``config.json`` (the :class:`ModelConfig`, and the prior's), ``model.pt`` (a
plain state dict of tensors, read back with ``torch.load(..., weights_only=True)``; no pickled objects, nothing
executed on load) and ``manifest.json`` (each part's SHA-256, written last): a folder whose save was cut short, or
whose parts come from two trainings, is refused in one line on load."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import torch

from iclr25.utils.checkpoints import MANIFEST, start_save, verify_manifest, write_manifest
from iclr25.utils.io import atomic_path, atomic_write, naming_write_errors

from .models import ModelConfig, ScoreModel, resolve_device

__all__ = ["save_model", "load_model"]

FORMAT = "iclr25-bopito-model/1"
#: the parts of a model folder, listed with their hashes in its manifest.json
PARTS = ("model.pt", "config.json")


def save_model(model: ScoreModel, folder: str | os.PathLike[str], *, extra: dict[str, Any] | None = None) -> Path:
    """Write ``model`` (with its frozen prior, for BoPITO) to ``folder``; ``extra`` goes into config.json.

    The parts are written atomically, then ``manifest.json`` last; a failed write names its file
    (``cannot write PATH: File too large``). Other files in ``folder`` are left alone."""
    if not isinstance(model, ScoreModel):
        raise TypeError(f"model must be a ScoreModel, got {type(model).__name__}")
    folder = Path(folder)
    with naming_write_errors(folder):
        folder.mkdir(parents=True, exist_ok=True)
    start_save(folder)
    meta = {"format": FORMAT, "config": model.config.to_dict(),
            "prior": None if model.prior is None else model.prior.config.to_dict(), "extra": extra or {}}
    state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}  # CPU weights, any device
    with naming_write_errors(folder / "model.pt"), atomic_path(folder / "model.pt") as tmp:
        torch.save(state, tmp)
    with naming_write_errors(folder / "config.json"), atomic_write(folder / "config.json") as f:
        json.dump(meta, f, indent=2)
    with naming_write_errors(folder / MANIFEST):
        write_manifest(folder, PARTS, meta={"format": FORMAT, "kind": model.config.kind})
    return folder


def load_model(folder: str | os.PathLike[str], *, device: Any = None) -> ScoreModel:
    """Read a model written by :func:`save_model`, on ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``; the
    device is checked before anything is read); errors name the folder and what is wrong. The manifest is
    checked first (:func:`iclr25.utils.checkpoints.verify_manifest`): no manifest (a save cut short), a missing
    part, or ``model.pt`` and ``config.json`` of two different trainings raise a one-line ``ValueError``."""
    folder = Path(folder)
    dev = resolve_device(device)
    cfg_path, w_path = folder / "config.json", folder / "model.pt"
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such model folder")
    for p in (cfg_path, w_path):
        if not p.is_file():
            raise FileNotFoundError(f"{p}: missing (a model folder holds config.json and model.pt)")
    verify_manifest(folder, PARTS, what="model folder")
    try:
        meta = json.loads(cfg_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{cfg_path}: not valid JSON ({exc})") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or "config" not in meta:
        raise ValueError(f"{cfg_path}: not an iclr25-bopito model config (format {FORMAT!r})")
    try:
        config = ModelConfig.from_dict(meta["config"])
        prior_cfg = None if meta.get("prior") is None else ModelConfig.from_dict(meta["prior"])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{cfg_path}: bad model config ({exc})") from exc
    prior = ScoreModel(prior_cfg, device="cpu") if prior_cfg is not None else None
    model = ScoreModel(config, prior=prior, device="cpu")
    try:
        state = torch.load(w_path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - torch raises many types for a corrupt file
        raise ValueError(f"{w_path}: not a readable weights file ({type(exc).__name__}: {exc})") from exc
    if not isinstance(state, dict):
        raise ValueError(f"{w_path}: expected a state dict")
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise ValueError(f"{w_path}: weights do not match {cfg_path} ({exc})") from exc
    if model.prior is not None:
        for p in model.prior.parameters():
            p.requires_grad_(False)
    model.eval()
    return model.to(dev)
