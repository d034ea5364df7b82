"""Checkpoints of trained samplers without pickle: JSON for the configuration, ``.npz`` for the energy's
arrays and equinox's leaf serialiser (``numpy.save`` of each array) for the network weights.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from iclr25.utils.io import atomic_path, atomic_write, read_json, save_npz

from .diffusion import Sampler, SamplerConfig, make_model
from .energy import (
    Energy,
    IsingEnergy,
    IsingModelEnergy,
    MaxCliqueEnergy,
    MaxCutEnergy,
    MDSEnergy,
    MISEnergy,
    PaddedGraphs,
    QUBOEnergy,
)

__all__ = ["save_sampler", "load_sampler", "energy_to_spec", "energy_from_spec"]

FORMAT = 1
_KINDS = {cls.__name__: cls for cls in (IsingEnergy, IsingModelEnergy, QUBOEnergy, MISEnergy, MaxCliqueEnergy,
                                        MaxCutEnergy, MDSEnergy)}


def energy_to_spec(energy: Energy) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A JSON-able description of ``energy`` and the arrays it needs."""
    kind = type(energy).__name__
    if kind not in _KINDS:
        raise TypeError(f"cannot checkpoint an energy of type {kind}; known: {sorted(_KINDS)}")
    meta: dict[str, Any] = {"kind": kind}
    arrays = {name: np.asarray(getattr(energy.graphs, name))
              for name in ("senders", "receivers", "edge_weight", "node_mask")}
    if isinstance(energy, IsingEnergy):
        meta.update(L=energy.L, spin_glass=energy.spin_glass, seed=energy.seed)
    if isinstance(energy, IsingModelEnergy):
        arrays["fields"] = np.asarray(energy.fields)
    if isinstance(energy, QUBOEnergy):
        arrays["linear"] = np.asarray(energy.linear)
        meta["offset"] = energy.offset
    if isinstance(energy, MISEnergy):
        meta.update(A=energy.A, B=energy.B)
    if isinstance(energy, MDSEnergy):
        meta["B"] = energy.B
    return meta, arrays


def energy_from_spec(meta: dict[str, Any], arrays: Any) -> Energy:
    kind = meta.get("kind")
    if kind not in _KINDS:
        raise ValueError(f"unknown energy kind {kind!r}; known: {sorted(_KINDS)}")
    if kind == "IsingEnergy":
        return IsingEnergy(int(meta["L"]), spin_glass=bool(meta["spin_glass"]), seed=int(meta["seed"]))
    graphs = PaddedGraphs(*(jnp.asarray(arrays[n]) for n in ("senders", "receivers", "edge_weight", "node_mask")))
    cls = _KINDS[kind]
    if kind == "IsingModelEnergy":
        return cls(graphs, jnp.asarray(arrays["fields"]))
    if kind == "QUBOEnergy":
        return cls(graphs, jnp.asarray(arrays["linear"]), float(meta["offset"]))
    if kind in ("MISEnergy", "MaxCliqueEnergy"):
        return cls(graphs, float(meta["A"]), float(meta["B"]))
    if kind == "MDSEnergy":
        return cls(graphs, float(meta["B"]))
    return cls(graphs)


def save_sampler(sampler: Sampler, directory: str | os.PathLike[str]) -> Path:
    """Write ``config.json``, ``energy.npz``, ``model.eqx`` and ``history.npz`` into ``directory``."""
    if not isinstance(sampler, Sampler):
        raise TypeError(f"sampler must be a Sampler, got {type(sampler).__name__}")
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    meta, arrays = energy_to_spec(sampler.energy)
    save_npz(d / "energy.npz", **arrays)
    if sampler.history:
        save_npz(d / "history.npz", **sampler.history)
    with atomic_path(d / "model.eqx") as tmp:
        eqx.tree_serialise_leaves(tmp, sampler.model)
    with atomic_write(d / "config.json") as f:
        json.dump({"format": FORMAT, "config": sampler.config.to_dict(), "energy": meta}, f, indent=2)
    return d


def load_sampler(directory: str | os.PathLike[str]) -> Sampler:
    """Load a sampler written by :func:`save_sampler` (no pickle: ``allow_pickle=False`` throughout)."""
    d = Path(directory)
    for name in ("config.json", "energy.npz", "model.eqx"):
        if not (d / name).is_file():
            raise FileNotFoundError(f"{d}: not a sampler checkpoint (missing {name})")
    spec = read_json(d / "config.json")
    if not isinstance(spec, dict) or spec.get("format") != FORMAT:
        raise ValueError(f"{d / 'config.json'}: not a checkpoint of format {FORMAT}")
    config = SamplerConfig.from_dict(spec["config"])
    with np.load(d / "energy.npz", allow_pickle=False) as arrays:
        energy = energy_from_spec(spec["energy"], {k: arrays[k] for k in arrays.files})
    skeleton = make_model(config, energy, jax.random.key(0))
    try:
        model = eqx.tree_deserialise_leaves(d / "model.eqx", skeleton)
    except Exception as exc:  # a truncated or foreign file surfaces as a clear ValueError
        raise ValueError(f"{d / 'model.eqx'}: cannot read the network weights ({exc})") from exc
    history = {}
    if (d / "history.npz").is_file():
        with np.load(d / "history.npz", allow_pickle=False) as h:
            history = {k: h[k] for k in h.files}
    return Sampler(model, config, energy, history)
