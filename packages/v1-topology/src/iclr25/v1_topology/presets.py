"""Species presets (mouse, rat, cat, macaque): JSON files mapping a species to the retinotopic stride
(visual-field overlap) and connection ranges of the network. A user's own preset file has the same layout::

    {"species": "ferret", "description": "...", "network": {"stride": 2, "r_ee": 1.5, "r_ei": 4.0}}

``network`` may hold any :class:`~iclr25.v1_topology.network.NetworkConfig` field; unknown keys are errors.

References: Zhong et al. (2025) ICLR and (2024) NeurIPS (species differ by V1 neurons per retinal area,
i.e. visual-field overlap, and connection range).
"""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

from iclr25.utils.io import DataFileError, read_json

from .network import NetworkConfig, from_mapping

__all__ = ["SPECIES", "load_preset", "preset_config"]

SPECIES = ("mouse", "rat", "cat", "macaque")
_TOP_KEYS = {"species", "description", "network"}


def _validate(d: Any, source: str) -> dict[str, Any]:
    if not isinstance(d, dict):
        raise ValueError(f"{source}: a preset must be a JSON object with keys {sorted(_TOP_KEYS)}")
    unknown = sorted(set(d) - _TOP_KEYS)
    if unknown:
        raise ValueError(f"{source}: unknown key(s) {unknown}; a preset has only {sorted(_TOP_KEYS)}")
    if "network" not in d or not isinstance(d["network"], dict):
        raise ValueError(f"{source}: a preset needs a 'network' object of NetworkConfig fields")
    from_mapping(d["network"], source=f"{source}: network")  # raises on unknown or bad values
    return d


def load_preset(name: str | os.PathLike[str]) -> dict[str, Any]:
    """A species preset by name (``mouse``, ``rat``, ``cat``, ``macaque``) or from a JSON file path."""
    if isinstance(name, str) and name in SPECIES:
        text = resources.files("iclr25.v1_topology").joinpath("presets", f"{name}.json").read_text("utf-8")
        return _validate(json.loads(text), f"preset {name!r}")
    if isinstance(name, str) and not name.lower().endswith(".json"):
        raise ValueError(f"species must be one of {list(SPECIES)} or a .json preset file, got {name!r}")
    p = Path(name)
    try:
        d = read_json(p, what="preset file")
    except DataFileError:
        raise
    try:
        return _validate(d, str(p))
    except (ValueError, TypeError) as exc:
        raise DataFileError(p, str(exc).removeprefix(f"{p}: ")) from exc


def preset_config(name: str | os.PathLike[str], **overrides: Any) -> NetworkConfig:
    """The :class:`NetworkConfig` of a preset, with keyword ``overrides`` (e.g. ``n_side=24``)."""
    d = load_preset(name)
    return from_mapping({**d["network"], **overrides}, source=f"preset {name!s}")
