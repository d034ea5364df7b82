"""Checkpoints of trained samplers without pickle: JSON for the configuration, ``.npz`` for the energy's
arrays and equinox's leaf serialiser (``numpy.save`` of each array) for the network weights.

A checkpoint folder is whole or refused: :func:`save_sampler` drops the manifest of an earlier save, writes each
part atomically and writes ``manifest.json`` (each part's size and SHA-256, :mod:`iclr25.utils.checkpoints`)
last; :func:`read_checkpoint_spec` (and so :func:`load_sampler`) refuses in one line a folder without it (a save
cut short, or one made before 0.6.0) or whose parts are not the ones it names (files of two trainings).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iclr25.utils.checkpoints import MANIFEST, CheckpointError, start_save, verify_manifest, write_manifest
from iclr25.utils.io import DataFileError, atomic_path, atomic_write, read_json, read_npz, save_npz

if TYPE_CHECKING:
    from .diffusion import Sampler
    from .energy import Energy

__all__ = ["save_sampler", "load_sampler", "read_checkpoint_spec", "energy_to_spec", "energy_from_spec",
           "DEMO_CHECKPOINT", "load_demo_sampler"]

FORMAT = 1
FILES = ("config.json", "energy.npz", "model.eqx")
#: Every file :func:`save_sampler` writes at the top of a checkpoint folder (``history.npz`` when the sampler has
#: a history; ``manifest.json`` last).
WRITTEN = (*FILES, "history.npz", MANIFEST)
#: The checkpoint shipped in the wheel: the demo's configuration trained at seed 0 (``MADE_BY.md`` beside it says
#: the command that made it).
DEMO_CHECKPOINT = Path(__file__).parent / "data" / "demo-ising4-fkl-seed0"


def _kinds() -> dict[str, type]:
    from .energy import (  # noqa: PLC0415 - JAX is imported only when a checkpoint is really read or written
        IsingEnergy,
        IsingModelEnergy,
        MaxCliqueEnergy,
        MaxCutEnergy,
        MDSEnergy,
        MISEnergy,
        QUBOEnergy,
    )

    return {cls.__name__: cls for cls in (IsingEnergy, IsingModelEnergy, QUBOEnergy, MISEnergy, MaxCliqueEnergy,
                                          MaxCutEnergy, MDSEnergy)}


#: The arrays each energy kind needs in ``energy.npz`` (graph arrays for all but the Ising lattice).
_GRAPH_ARRAYS = ("senders", "receivers", "edge_weight", "node_mask")
_META_KEYS = {"IsingEnergy": ("L", "spin_glass", "seed"), "QUBOEnergy": ("offset",), "MISEnergy": ("A", "B"),
              "MaxCliqueEnergy": ("A", "B"), "MDSEnergy": ("B",)}
_EXTRA_ARRAYS = {"IsingModelEnergy": ("fields",), "QUBOEnergy": ("linear",)}


def read_checkpoint_spec(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """Check a checkpoint folder and return its ``config.json``, without importing JAX.

    Raises ``FileNotFoundError`` (no such folder, or a file missing) or :class:`~iclr25.utils.io.DataFileError`
    (a ``ValueError``: not JSON, or without the ``format``, ``config`` and ``energy`` entries), each naming the path.
    """
    d = Path(directory)
    if not d.exists():
        raise FileNotFoundError(f"{d}: no such checkpoint folder")
    if not d.is_dir():
        raise DataFileError(d, "not a sampler checkpoint: expected a folder written by 'iclr25 sdds train' "
                               f"(with {', '.join(FILES)}), got a file")
    for name in FILES:
        if not (d / name).is_file():
            raise FileNotFoundError(f"{d}: not a sampler checkpoint (missing {name})")
    manifest = verify_manifest(d, FILES, what="sampler checkpoint")  # whole, and all its parts from one save
    if manifest["meta"].get("format") != FORMAT:
        raise CheckpointError(f"{d / MANIFEST}: not a sampler checkpoint of format {FORMAT}")
    path = d / "config.json"
    spec = read_json(path, what="checkpoint config")
    if not isinstance(spec, dict) or spec.get("format") != FORMAT:
        raise DataFileError(path, f"not a checkpoint of format {FORMAT}")
    for key in ("config", "energy"):
        if not isinstance(spec.get(key), dict):
            raise DataFileError(path, f"missing or malformed {key!r} entry (expected a JSON object)")
    kind = spec["energy"].get("kind")
    known = sorted(_META_KEYS.keys() | _EXTRA_ARRAYS.keys() | {"MaxCutEnergy"})
    if kind not in known:
        raise DataFileError(path, f"unknown energy kind {kind!r}; known: {known}")
    missing = [k for k in _META_KEYS.get(kind, ()) if k not in spec["energy"]]
    if missing:
        raise DataFileError(path, f"energy {kind} lacks {missing}")
    return spec


def energy_to_spec(energy: Energy) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A JSON-able description of ``energy`` and the arrays it needs."""
    from .energy import IsingEnergy, IsingModelEnergy, MDSEnergy, MISEnergy, QUBOEnergy  # noqa: PLC0415

    kinds = _kinds()
    kind = type(energy).__name__
    if kind not in kinds:
        raise TypeError(f"cannot checkpoint an energy of type {kind}; known: {sorted(kinds)}")
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
    import jax.numpy as jnp  # noqa: PLC0415

    from .energy import IsingEnergy  # noqa: PLC0415
    from .graphs import PaddedGraphs  # noqa: PLC0415

    kinds = _kinds()
    kind = meta.get("kind")
    if kind not in kinds:
        raise ValueError(f"unknown energy kind {kind!r}; known: {sorted(kinds)}")
    if kind == "IsingEnergy":
        return IsingEnergy(int(meta["L"]), spin_glass=bool(meta["spin_glass"]), seed=int(meta["seed"]))
    graphs = PaddedGraphs(*(jnp.asarray(arrays[n]) for n in _GRAPH_ARRAYS))
    cls = kinds[kind]
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
    """Write ``config.json``, ``energy.npz``, ``model.eqx`` and ``history.npz`` into ``directory``, each
    atomically, then ``manifest.json`` naming them (the manifest of an earlier save there is removed first, so a
    save cut short leaves a folder that :func:`load_sampler` refuses)."""
    import equinox as eqx  # noqa: PLC0415

    from .diffusion import Sampler  # noqa: PLC0415

    if not isinstance(sampler, Sampler):
        raise TypeError(f"sampler must be a Sampler, got {type(sampler).__name__}")
    d = Path(directory)
    meta, arrays = energy_to_spec(sampler.energy)
    d.mkdir(parents=True, exist_ok=True)
    start_save(d)
    parts = list(FILES)
    save_npz(d / "energy.npz", **arrays)
    if sampler.history:
        save_npz(d / "history.npz", **sampler.history)
        parts.append("history.npz")
    with atomic_path(d / "model.eqx") as tmp:
        eqx.tree_serialise_leaves(tmp, sampler.model)
    with atomic_write(d / "config.json") as f:
        json.dump({"format": FORMAT, "config": sampler.config.to_dict(), "energy": meta}, f, indent=2)
    write_manifest(d, parts, meta={"format": FORMAT, "energy": meta["kind"]})
    return d


def load_sampler(directory: str | os.PathLike[str]) -> Sampler:
    """Load a sampler written by :func:`save_sampler` (no pickle: ``allow_pickle=False`` throughout).

    Every problem is reported as ``FileNotFoundError`` or ``ValueError`` naming the file (see
    :func:`read_checkpoint_spec`).
    """
    d = Path(directory)
    spec = read_checkpoint_spec(d)
    kind = spec["energy"]["kind"]
    arrays = read_npz(d / "energy.npz", what="checkpoint energy",
                      required=(() if kind == "IsingEnergy" else _GRAPH_ARRAYS) + _EXTRA_ARRAYS.get(kind, ()))
    listed = verify_manifest(d, FILES, what="sampler checkpoint")["files"]
    # a history.npz the manifest does not name is not this save's (an earlier training's, left in the folder)
    history = read_npz(d / "history.npz", what="checkpoint history") if "history.npz" in listed else {}

    import equinox as eqx  # noqa: PLC0415
    import jax  # noqa: PLC0415

    from .diffusion import Sampler, SamplerConfig, make_model  # noqa: PLC0415

    try:
        config = SamplerConfig.from_dict(spec["config"])
    except (TypeError, ValueError) as exc:
        raise DataFileError(d / "config.json", f"bad sampler config: {exc}") from exc
    try:
        energy = energy_from_spec(spec["energy"], arrays)
    except (TypeError, ValueError, KeyError) as exc:
        raise DataFileError(d / "energy.npz", f"does not match the {kind} in config.json ({exc})") from exc
    if "aggregation" not in spec["config"] and energy.lattice_shape is None and config.model != "cnn":
        # 0.2 divided the GNN's messages by the degree without a degree feature; the same weights under the
        # summed messages of 0.3 would load without error and mean something else
        raise DataFileError(d / "config.json", "a GNN sampler written by iclr25-sdds < 0.3 (degree-averaged "
                                               "messages, no longer available); retrain it with 'iclr25 sdds train'")
    skeleton = make_model(config, energy, jax.random.key(0))
    try:
        model = eqx.tree_deserialise_leaves(d / "model.eqx", skeleton)
    except Exception as exc:  # a truncated or foreign file surfaces as a clear ValueError
        raise DataFileError(d / "model.eqx", f"cannot read the network weights ({exc})") from exc
    return Sampler(model, config, energy, history)


def load_demo_sampler() -> Sampler:
    """The sampler shipped in the wheel (:data:`DEMO_CHECKPOINT`): ``iclr25.sdds.demo.DEMO_CONFIG`` (fKL w/ MC,
    200 epochs) trained on the 4x4 critical Ising model at seed 0, the same training as ``iclr25 sdds demo --train``.

    It loads in well under a second, without compiling the training step; ``sampler.history`` holds its training
    curves.
    """
    return load_sampler(DEMO_CHECKPOINT)
