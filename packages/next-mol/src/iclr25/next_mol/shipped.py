"""The small trained DMT-mini shipped inside the wheel, in a pickle-free ``.npz`` file.

A minute of CPU training cannot make a DMT whose samples are chemically sane (an untrained or briefly trained
DMT writes exploded conformers), so ``demo`` loads this checkpoint instead of training one. The file holds the
weights as plain float32 arrays plus two JSON strings (the model config and how it was made: command, seed,
data, steps, its own held-out scores); it is read with ``numpy.load(..., allow_pickle=False)``, so loading it
cannot run code. The record of how it was made sits beside it as ``dmt_mini.json``.

Remake it with (about 5-10 min on one core)::

    python -m iclr25.next_mol.shipped --out src/iclr25/next_mol/data/dmt_mini.npz --seed 0 --steps 2000
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["save_dmt_npz", "load_dmt_npz", "load_shipped_dmt", "train_shipped", "SHIPPED_RECIPE",
           "shipped_claims"]

FORMAT = "iclr25-next-mol-npz/1"
#: How the shipped checkpoint is made (``train_shipped``'s defaults).
SHIPPED_RECIPE = {"n_train": 200, "max_heavy_atoms": 18, "n_embed_train": 16, "max_confs": 5, "hidden": 96,
                  "pair_hidden": 32, "n_blocks": 4, "n_heads": 4, "batch_size": 32, "lr": 1e-3, "steps": 2000}


def save_dmt_npz(path: str | os.PathLike[str], model, *, meta: dict[str, Any] | None = None) -> Path:
    """Write DMT's config and float32 weights (and a JSON-able ``meta``) to ``path`` (``.npz``, no pickle)."""
    from iclr25.utils.io import atomic_path  # noqa: PLC0415

    p = Path(path)
    if p.suffix != ".npz":
        raise ValueError(f"checkpoint path {p} must end in .npz")
    arrays = {f"w/{k}": v.detach().cpu().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    arrays["format"] = np.array(FORMAT)
    arrays["config"] = np.array(json.dumps(dataclasses.asdict(model.config)))
    arrays["meta"] = np.array(json.dumps(meta or {}, allow_nan=False))
    p.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(p) as tmp:
        with open(tmp, "wb") as f:
            np.savez_compressed(f, **arrays)
    return p


def load_dmt_npz(path: str | os.PathLike[str] | Any):
    """``(dmt, meta)`` from a file written by :func:`save_dmt_npz` (read without pickle)."""
    import torch  # noqa: PLC0415

    from .dmt import DMT, DMTConfig  # noqa: PLC0415

    name = str(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except (OSError, ValueError) as exc:
        raise ValueError(f"{name}: not a readable .npz checkpoint ({exc})") from None
    if str(data.get("format", "")) != FORMAT:
        raise ValueError(f"{name}: not an {FORMAT} checkpoint")
    try:
        model = DMT(DMTConfig(**json.loads(str(data["config"]))))
        meta = json.loads(str(data["meta"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{name}: bad DMT config ({exc})") from None
    state = {k[2:]: torch.from_numpy(v.copy()) for k, v in data.items() if k.startswith("w/")}
    result = model.load_state_dict(state, strict=False)
    if result.missing_keys or result.unexpected_keys:
        raise ValueError(f"{name}: weights do not fit the stored config (missing {result.missing_keys[:4]}, "
                         f"unexpected {result.unexpected_keys[:4]})")
    model.eval()
    return model, meta


def load_shipped_dmt():
    """``(dmt, meta)``: the DMT-mini trained by :func:`train_shipped` and shipped in the wheel."""
    ref = resources.files("iclr25.next_mol") / "data" / "dmt_mini.npz"
    with resources.as_file(ref) as p:
        if not Path(p).is_file():
            raise FileNotFoundError(f"{p}: the shipped DMT checkpoint is missing from this installation")
        return load_dmt_npz(p)


def train_shipped(out: str | os.PathLike[str], *, seed: int = 0, steps: int | None = None,
                  n_jobs: int = 1) -> Path:
    """Train DMT-mini with :data:`SHIPPED_RECIPE` on pseudo-GEOM ensembles of MOSES *train* molecules (the demo
    and the claims test on MOSES *test* molecules) and write it with :func:`save_dmt_npz`, plus a ``.json``
    record beside it."""
    import time  # noqa: PLC0415

    from .conformers import EnsembleSettings  # noqa: PLC0415
    from .experiments import fit_dmt, three_d_data  # noqa: PLC0415

    r = dict(SHIPPED_RECIPE)
    if steps is not None:
        r["steps"] = int(steps)
    t0 = time.perf_counter()
    settings = EnsembleSettings(n_embed=r["n_embed_train"], max_confs=r["max_confs"])
    data = three_d_data(r["n_train"], 6, max_heavy_atoms=r["max_heavy_atoms"], train_settings=settings,
                        test_settings=EnsembleSettings(n_embed=30, max_confs=4), seed=seed, n_jobs=n_jobs)
    dmt, info = fit_dmt(data, steps=r["steps"], seed=seed, hidden=r["hidden"], pair_hidden=r["pair_hidden"],
                        n_blocks=r["n_blocks"], n_heads=r["n_heads"], batch_size=r["batch_size"], lr=r["lr"])
    from . import __version__  # noqa: PLC0415

    meta = {"command": f"python -m iclr25.next_mol.shipped --out {Path(out).name} --seed {seed} --steps {r['steps']}",
            "seed": seed, "recipe": r, "package_version": __version__,
            "train_molecules": len(data.train), "pos_std": data.pos_std,
            "final_loss": info["final_loss"], "val_rmsd_6_test_molecules": info["val_rmsd"],
            "train_seconds": info["seconds"], "total_seconds": time.perf_counter() - t0}
    path = save_dmt_npz(out, dmt, meta=meta)
    from iclr25.utils.io import atomic_write  # noqa: PLC0415

    with atomic_write(Path(path).with_suffix(".json")) as f:
        f.write(json.dumps(meta, indent=2, allow_nan=False) + "\n")
    return path


#: The claims of :mod:`iclr25.next_mol.claims` measured on the shipped checkpoint itself.
SHIPPED_CLAIMS = ("dmt-beats-etkdg", "dmt-etkdg-parity", "dmt-bond-lengths-learned", "dmt-angles-learned",
                  "dmt-3d-valid", "dmt-torsions-learned", "dmt-torsions-vs-etkdg", "dmt-conformers-sane")


def shipped_claims(claims_json: str | os.PathLike[str], out: str | os.PathLike[str]) -> Path:
    """Write ``out`` (``data/dmt_mini_claims.json`` beside the checkpoint): the claims of a ``repro``'s
    ``claims.json`` that were measured on the shipped DMT-mini, with the command and seed that trained it and
    the command that measured them."""
    report = json.loads(Path(claims_json).read_text(encoding="utf-8"))
    _, meta = load_shipped_dmt()
    kept = [c for c in report["claims"] if c["id"] in SHIPPED_CLAIMS]
    missing = sorted(set(SHIPPED_CLAIMS) - {c["id"] for c in kept})
    if missing:
        raise ValueError(f"{claims_json}: no measurement of {missing}")
    doc = {**{k: v for k, v in report.items() if k != "claims"},
           "checkpoint": {"file": "dmt_mini.npz", "command": meta.get("command"), "seed": meta.get("seed"),
                          "recipe": meta.get("recipe")},
           "claims": kept}
    p = Path(out)
    from iclr25.utils.io import atomic_write  # noqa: PLC0415

    with atomic_write(p) as f:
        f.write(json.dumps(doc, indent=1, allow_nan=False) + "\n")
    return p


def main(argv: Sequence[str] | None = None) -> int:  # pragma: no cover - the recipe's command
    ap = argparse.ArgumentParser(prog="python -m iclr25.next_mol.shipped", description=train_shipped.__doc__)
    from iclr25.utils.outputs import add_output, check_outputs  # noqa: PLC0415

    add_output(ap, "--out", kind="file", required=True, suffixes=(".npz",),
               sidecars=lambda p: [p.with_suffix(".json")], help="the .npz to write (and its .json record beside it)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=SHIPPED_RECIPE["steps"])
    args = ap.parse_args(argv)
    try:
        check_outputs(args)
    except ValueError as exc:
        ap.error(str(exc))
    import torch  # noqa: PLC0415

    torch.set_num_threads(1)
    print(train_shipped(args.out, seed=args.seed, steps=args.steps))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
