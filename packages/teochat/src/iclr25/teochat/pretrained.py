"""The small trained checkpoints shipped in the wheel, so that the demo shows a trained assistant in seconds.

A minute of training on two CPU cores does not teach the from-scratch LM to write boxes (the 0.2 demo: 100 %
unparseable answers), so, as a model zoo ships weights, the wheel carries two tiny checkpoints (``.npz``, no
pickle) trained on change localisation by ``benchmarks/make_demo_checkpoints.py``: the TEOChat model (every
frame, ``image i :`` references) and the single-image baseline (the last frame only), same data, seed and
budget. ``weights/demo.json`` beside them records the command, the seed, the configuration and their scores on
a held-out split.

References: Irvin et al., TEOChat, ICLR 2025 (Table 1: TEOChat vs the single-image GeoChat on change
localisation).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from .assistant import Assistant

__all__ = ["PRETRAINED", "load_pretrained", "pretrained_info"]

#: name -> file in ``iclr25/teochat/weights``
PRETRAINED = {"temporal": "demo-temporal.npz", "last_frame": "demo-last-frame.npz"}


def pretrained_info() -> dict[str, Any]:
    """``weights/demo.json``: the command, seed, configuration and held-out scores of the shipped checkpoints."""
    return json.loads(resources.files("iclr25.teochat").joinpath("weights/demo.json").read_text(encoding="utf-8"))


def load_pretrained(name: str = "temporal") -> Assistant:
    """A shipped checkpoint: ``"temporal"`` (TEOChat: every frame, image references) or ``"last_frame"``."""
    if name not in PRETRAINED:
        raise ValueError(f"name must be one of {sorted(PRETRAINED)}, got {name!r}")
    ref = resources.files("iclr25.teochat").joinpath(f"weights/{PRETRAINED[name]}")
    with resources.as_file(ref) as path:
        return Assistant.load(path)
