"""The trained model shipped in the wheel: the twisted bar of the demo fitted with the ``"test"`` preset at seed 0.

``pretrained("bar-twist")`` loads it (milliseconds; an ``.npz`` of plain arrays, see
:mod:`~iclr25.implicit_deform.checkpoint`); it is what ``fit(pretrained_pair("bar-twist"),
config=DeformConfig.preset("test"), seed=0)`` returns, without the ~20 s of training. The demo (seed 0), the
README quickstart and the example notebook start from it; ``iclr25 implicit-deform demo --train`` fits again.

The command that made the file, and its seed, are stored inside it (``pretrained_meta``) and in
``checkpoints/README.md`` beside it::

    python -m iclr25.implicit_deform.pretrained bar-twist --out src/iclr25/implicit_deform/checkpoints

(with ``--overwrite`` to replace the shipped file).

The tests check that the file's configuration and pair are the ones named here, and that a fresh fit at seed 0
gives the same model.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import importlib.metadata
import platform
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iclr25.utils.outputs import add_output, check_outputs

__all__ = ["PRETRAINED", "PretrainedSpec", "pretrained", "pretrained_pair", "pretrained_meta", "pretrained_path",
           "make_checkpoint"]

CHECKPOINT_DIR = Path(__file__).parent / "checkpoints"


@dataclasses.dataclass(frozen=True)
class PretrainedSpec:
    """How a shipped model was made: the built-in pair (``make_pair`` arguments), the preset and the seed."""

    shape: str
    deformation: str
    n_points: int
    mesh_resolution: int
    preset: str
    seed: int

    @property
    def filename(self) -> str:
        return f"{self.shape}-{self.deformation}-{self.preset}-seed{self.seed}.npz"

    @property
    def command(self) -> str:
        return f"python -m iclr25.implicit_deform.pretrained {self.shape}-{self.deformation}"

    def pair(self):
        from .shapes import make_pair  # noqa: PLC0415

        return make_pair(self.shape, self.deformation, n_points=self.n_points, mesh_resolution=self.mesh_resolution,
                         seed=self.seed)

    def config(self):
        from .deform import DeformConfig  # noqa: PLC0415

        return DeformConfig.preset(self.preset)


PRETRAINED: dict[str, PretrainedSpec] = {
    # the demo's pair and preset (demo.py: DEMO_POINTS, mesh_resolution 48, "test")
    "bar-twist": PretrainedSpec("bar", "twist", n_points=4000, mesh_resolution=48, preset="test", seed=0),
}


def _spec(name: str) -> PretrainedSpec:
    if name not in PRETRAINED:
        raise ValueError(f"pretrained model must be one of {sorted(PRETRAINED)}, got {name!r}")
    return PRETRAINED[name]


def pretrained_path(name: str = "bar-twist") -> Path:
    """The shipped ``.npz`` of model ``name``."""
    return CHECKPOINT_DIR / _spec(name).filename


def pretrained(name: str = "bar-twist"):
    """The shipped fit of model ``name`` (a :class:`~iclr25.implicit_deform.deform.DeformResult`)."""
    from .checkpoint import load_result  # noqa: PLC0415

    return load_result(pretrained_path(name))


def pretrained_pair(name: str = "bar-twist"):
    """The built-in pair model ``name`` was fitted to (the same points, normals and correspondences)."""
    return _spec(name).pair()


def pretrained_meta(name: str = "bar-twist") -> dict[str, Any]:
    """What the shipped file says about itself: command, seed, pair, preset, versions, training seconds."""
    from .checkpoint import result_meta  # noqa: PLC0415

    return result_meta(pretrained_path(name))


def make_checkpoint(name: str, out_dir: str | Path) -> Path:
    """Fit model ``name`` from scratch and save it (with the command and seed) in ``out_dir``."""
    from .checkpoint import save_result  # noqa: PLC0415
    from .deform import fit  # noqa: PLC0415

    spec = _spec(name)
    result = fit(spec.pair(), config=spec.config(), seed=spec.seed, show_progress=False)
    versions = {d: importlib.metadata.version(d) for d in ("iclr25-implicit-deform", "jax", "jaxlib", "equinox",
                                                         "optax", "numpy")}
    meta = {"name": name, "command": spec.command, **dataclasses.asdict(spec), "versions": versions,
            "python": platform.python_version(), "machine": platform.machine(),
            "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return save_result(result, out / spec.filename, meta=meta)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m iclr25.implicit_deform.pretrained",
                                 description="Fit a shipped model again and write its .npz.")
    ap.add_argument("name", choices=sorted(PRETRAINED))
    add_output(ap, "--out", kind="folder", required=True, run_files=tuple(s.filename for s in PRETRAINED.values()),
               help="folder for the .npz (the package's checkpoints/, whose file is replaced only with --overwrite)")
    args = ap.parse_args(argv)
    try:
        check_outputs(args)  # before the fit: an existing .npz is kept without --overwrite
    except ValueError as exc:
        ap.error(str(exc))
    path = make_checkpoint(args.name, args.out)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
