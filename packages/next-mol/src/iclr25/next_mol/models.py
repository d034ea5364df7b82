"""Ready-to-use models: train the SELFIES LM and DMT-mini on the built-in MOSES data, save them as checkpoints,
and the cached default pair that ``generate``/``conformers`` use when the user gives no checkpoint."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .checkpoint import load_dmt, load_lm, save_dmt, save_lm
from .conformers import EnsembleSettings, default_cache_dir
from .data import load_moses
from .experiments import fit_dmt, fit_lm, three_d_data

__all__ = ["train_models", "default_models"]

DEFAULT = {"lm_steps": 400, "dmt_steps": 400, "n_dmt_train": 120}


def train_models(out: str | os.PathLike[str], *, lm_steps: int = 800, dmt_steps: int = 800, n_dmt_train: int = 200,
                 n_lm_train: int = 20000, seed: int = 0, n_jobs: int = 2) -> tuple[list[Path], dict[str, Any]]:
    """Train the SELFIES LM (d=128, 2 layers) on MOSES train and DMT-mini on pseudo-GEOM ensembles of
    ``n_dmt_train`` MOSES molecules (<= 18 heavy atoms); write ``out/lm.pt`` and ``out/dmt.pt``."""
    out = Path(out)
    lm = fit_lm("selfies", load_moses("train", n_lm_train, seed=seed), steps=lm_steps, seed=seed)
    data = three_d_data(n_dmt_train, 8, train_settings=EnsembleSettings(n_embed=16, max_confs=5),
                        test_settings=EnsembleSettings(n_embed=30, max_confs=5), seed=seed, n_jobs=n_jobs)
    dmt, info = fit_dmt(data, steps=dmt_steps, seed=seed, hidden=96, n_blocks=4, n_heads=4, batch_size=32)
    paths = [save_lm(out / "lm.pt", lm.model, lm.tokenizer), save_dmt(out / "dmt.pt", dmt, extra=info)]
    return paths, {"LM final loss": lm.final_loss, "DMT final loss": info["final_loss"],
                   "DMT validation RMSD (A)": info["val_rmsd"]}


def default_models(*, seed: int = 0):
    """``((lm, tokenizer), dmt)`` trained with the small default budget, cached under the cache folder."""
    folder = default_cache_dir() / f"models-{DEFAULT['lm_steps']}-{DEFAULT['dmt_steps']}-{DEFAULT['n_dmt_train']}-{seed}"
    if not ((folder / "lm.pt").is_file() and (folder / "dmt.pt").is_file()):
        train_models(folder, lm_steps=DEFAULT["lm_steps"], dmt_steps=DEFAULT["dmt_steps"],
                     n_dmt_train=DEFAULT["n_dmt_train"], n_lm_train=5000, seed=seed)
    return load_lm(folder / "lm.pt"), load_dmt(folder / "dmt.pt")
