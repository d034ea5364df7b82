"""The small trained checkpoints shipped in the wheel, so that the demo shows a trained assistant in seconds.

A minute of training on two CPU cores does not teach the from-scratch LM to write boxes (the 0.2 demo: 100 %
unparseable answers), so, as a model zoo ships weights, the wheel carries two tiny checkpoints (``.npz``, no
pickle) trained on change localisation by ``benchmarks/make_demo_checkpoints.py``: the TEOChat model (every
frame, ``image i :`` references) and the single-image baseline (the last frame only), same data, seed and
budget. ``weights/demo.json`` beside them records the command, the seed, the configuration and their scores on
a held-out split, and ``weights/manifest.json`` (:mod:`iclr25.utils.checkpoints`) the size and SHA-256 of all
three: they load only together, as saved (a part replaced or from another run is refused in one line).

References: Irvin et al., TEOChat, ICLR 2025 (Table 1: TEOChat vs the single-image GeoChat on change
localisation).
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path
from typing import Any

from iclr25.utils.checkpoints import verify_manifest

from .assistant import Assistant

__all__ = ["PRETRAINED", "load_pretrained", "pretrained_info", "weights_folder"]

#: name -> file in ``iclr25/teochat/weights``: ``multitask`` is the one assistant for every task type (issue 60,
#: ``benchmarks/make_multitask_checkpoint.py``, record ``weights/multitask.json``); ``temporal`` and
#: ``last_frame`` are the task-specific localisation checkpoints (change localisation + single-image detection)
PRETRAINED = {"temporal": "demo-temporal.npz", "last_frame": "demo-last-frame.npz",
              "multitask": "demo-multitask.npz"}
#: every part of the shipped weights (listed in ``weights/manifest.json``)
PARTS = (*PRETRAINED.values(), "demo.json", "multitask.json")


def weights_folder() -> Path:
    """The installed ``iclr25/teochat/weights`` folder (a wheel installs it as files)."""
    ref = resources.files("iclr25.teochat").joinpath("weights")
    if not isinstance(ref, Path):
        raise FileNotFoundError(f"the shipped weights are not files on disk ({ref}); install the package unzipped")
    return ref


@functools.cache
def _verified() -> Path:
    """The weights folder, checked once per process against its committed manifest."""
    folder = weights_folder()
    verify_manifest(folder, PARTS, what="shipped teochat checkpoint")
    return folder


def pretrained_info() -> dict[str, Any]:
    """``weights/demo.json``: the command, seed, configuration and held-out scores of the shipped checkpoints."""
    return json.loads((_verified() / "demo.json").read_text(encoding="utf-8"))


def load_pretrained(name: str = "temporal") -> Assistant:
    """A shipped checkpoint: ``"multitask"`` (TEOChat for every task type), or a task-specific localisation one:
    ``"temporal"`` (every frame, image references) or ``"last_frame"``."""
    if name not in PRETRAINED:
        raise ValueError(f"name must be one of {sorted(PRETRAINED)}, got {name!r}")
    return Assistant.load(_verified() / PRETRAINED[name])
