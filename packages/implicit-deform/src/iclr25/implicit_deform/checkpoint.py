"""A fitted :class:`~iclr25.implicit_deform.deform.DeformResult` saved as an ``.npz`` of plain arrays (no pickle):
the configuration and a free-form metadata record as JSON strings, the normalisation, every parameter array of
the two networks in equinox's leaf order, and the per-iteration loss history.

Loading builds the two networks from the stored configuration and puts the stored arrays in place; a file whose
arrays do not fit the networks that configuration describes is refused with a message naming the file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.io import DataFileError, read_npz, save_npz

__all__ = ["FORMAT", "save_result", "load_result", "result_meta"]

#: The value of the ``format`` array of a saved result (bumped when the layout changes).
FORMAT = "iclr25-implicit-deform-result/1"
_NETS = ("sdf_net", "velocity_net")


def _leaves(net) -> list[np.ndarray]:
    import equinox as eqx  # noqa: PLC0415
    import jax  # noqa: PLC0415

    params, _ = eqx.partition(net, eqx.is_inexact_array)
    return [np.asarray(a) for a in jax.tree_util.tree_leaves(params)]


def save_result(result, path: str | os.PathLike[str], *, meta: dict[str, Any] | None = None) -> Path:
    """Write ``result`` (a DeformResult) to ``path`` (``.npz``), atomically; ``meta`` (JSON-serialisable) is
    stored beside it, with the result's stage timings under ``"timings"``."""
    p = Path(path)
    if p.suffix != ".npz":
        raise ValueError(f"checkpoint path must end in .npz, got {p}")
    arrays: dict[str, Any] = {
        "format": np.array(FORMAT),
        "config": np.array(json.dumps(result.config.to_dict(), sort_keys=True)),
        "meta": np.array(json.dumps({**(meta or {}), "timings": dict(result.timings)}, sort_keys=True)),
        "center": np.asarray(result.center, dtype=np.float64),
        "scale": np.asarray(result.scale, dtype=np.float64),
    }
    for name in _NETS:
        for i, leaf in enumerate(_leaves(getattr(result, name))):
            arrays[f"{name}/{i:03d}"] = leaf
    for stage, terms in result.history.items():
        for term, values in terms.items():
            arrays[f"history/{stage}/{term}"] = np.asarray(values)
    return save_npz(p, **arrays)


def _rebuild(net, stored: list[np.ndarray], path: Path, name: str):
    import equinox as eqx  # noqa: PLC0415
    import jax  # noqa: PLC0415
    import jax.numpy as jnp  # noqa: PLC0415

    params, static = eqx.partition(net, eqx.is_inexact_array)
    leaves, treedef = jax.tree_util.tree_flatten(params)
    shapes = [tuple(a.shape) for a in leaves]
    if [tuple(a.shape) for a in stored] != shapes:
        raise DataFileError(path, f"the {name} arrays {[tuple(a.shape) for a in stored]} do not fit the network "
                                  f"of the stored configuration {shapes}")
    new = [jnp.asarray(a, dtype=leaf.dtype) for a, leaf in zip(stored, leaves, strict=True)]
    return eqx.combine(jax.tree_util.tree_unflatten(treedef, new), static)


def load_result(path: str | os.PathLike[str]):
    """The DeformResult saved by :func:`save_result` at ``path``; its ``meta`` record is ``result_meta(path)``."""
    import jax  # noqa: PLC0415

    from .deform import DeformConfig, DeformResult  # noqa: PLC0415
    from .networks import ImplicitNet, VelocityNet  # noqa: PLC0415

    p = Path(path)
    arrays = read_npz(p, required=("format", "config", "meta", "center", "scale"), what="implicit-deform checkpoint")
    if str(arrays["format"]) != FORMAT:
        raise DataFileError(p, f"format {str(arrays['format'])!r}, expected {FORMAT!r}")
    try:
        config = DeformConfig.from_dict(json.loads(str(arrays["config"])))
        meta = json.loads(str(arrays["meta"]))
    except (ValueError, TypeError) as exc:
        raise DataFileError(p, f"unreadable configuration ({exc})") from None
    key = jax.random.key(0)  # any key: every parameter array is replaced by the stored one
    skeletons = {"sdf_net": ImplicitNet(config.sdf_width, config.sdf_depth, beta=config.beta,
                                        init_radius=config.init_radius, key=key),
                 "velocity_net": VelocityNet(config.vel_width, config.vel_depth, activation=config.vel_activation,
                                             time_dependent=config.time_dependent, key=key)}
    nets = {name: _rebuild(net, [arrays[k] for k in sorted(a for a in arrays if a.startswith(name + "/"))], p, name)
            for name, net in skeletons.items()}
    history: dict[str, dict[str, np.ndarray]] = {}
    for k in sorted(a for a in arrays if a.startswith("history/")):
        _, stage, term = k.split("/", 2)
        history.setdefault(stage, {})[term] = arrays[k]
    timings = {str(k): float(v) for k, v in meta.get("timings", {}).items()}
    return DeformResult(nets["sdf_net"], nets["velocity_net"], config, np.asarray(arrays["center"], dtype=np.float64),
                        float(arrays["scale"]), history, timings)


def result_meta(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The metadata record of a saved result (the command that made it, its seed, timings, versions)."""
    arrays = read_npz(path, required=("meta",), what="implicit-deform checkpoint")
    return json.loads(str(arrays["meta"]))
