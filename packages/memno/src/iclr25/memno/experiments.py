"""Controlled comparisons: several models trained on the same observed KS trajectories with the same budget.

``compare_models`` is what ``iclr25 memno demo``/``repro`` and the claim tests run; the trajectories of one
(n, ν, seed, burn-in) are solved once and observed at every resolution and noise level asked for.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

from .datasets import PDEDataset, observe
from .models import make_model
from .solver import Trajectories, ks_initial_condition, solve_ks
from .training import evaluate, train

__all__ = ["Setting", "ks_observed", "compare_models"]


@dataclasses.dataclass(frozen=True)
class Setting:
    """One data regime of a comparison: KS at ``resolution`` with viscosity ``nu`` and noise ``noise``."""

    resolution: int
    nu: float
    noise: float = 0.0

    @property
    def label(self) -> str:
        s = f"res {self.resolution}, ν={self.nu:g}"
        return s + (f", noise {self.noise:g}" if self.noise else "")


@functools.lru_cache(maxsize=4)
def _ks_trajectories(n: int, nu: float, seed: int, t_burn: float, n_x: int) -> Trajectories:
    # one solve per (n, ν, seed): every observation (resolution, noise) of a comparison reuses it
    return solve_ks(ks_initial_condition(n, n_x, 64.0, seed=seed), nu=nu, t_burn=t_burn)


def ks_observed(setting: Setting, n: int, *, seed: int, t_burn: float, n_x: int = 512) -> PDEDataset:
    """KS data for ``setting`` (the same trajectories for every resolution and noise level of one seed)."""
    data = observe(_ks_trajectories(n, setting.nu, seed, t_burn, n_x), setting.resolution, noise=setting.noise,
                   seed=seed)
    return dataclasses.replace(data, params={**data.params, "t_burn": t_burn})


def compare_models(setting: Setting, models: Sequence[str], *, n_train: int, n_test: int, epochs: int,
                   width: int, n_layers: int, modes: int, seed: int, t_burn: float, batch_size: int = 16,
                   lr: float = 3e-3, n_x: int = 512) -> dict[str, Any]:
    """Train each named model on the same KS data and budget.

    Returns a dict with ``"data"`` (the observed data set), ``"test"`` (its held-out part) and, per model name,
    ``{"model", "train": TrainResult, "eval": EvalResult}``.
    """
    data = ks_observed(setting, n_train + n_test, seed=seed, t_burn=t_burn, n_x=n_x)
    tr, te = data.split(n_train)
    out: dict[str, Any] = {"data": data, "test": te}
    for name in models:
        model = make_model(name, width=width, n_layers=n_layers, modes=min(modes, setting.resolution // 2),
                           seed=seed)
        res = train(model, tr, epochs=epochs, batch_size=batch_size, lr=lr, seed=seed,
                    desc=f"{name} {setting.label}")
        out[name] = {"model": res.model, "train": res, "eval": evaluate(res.model, te)}
    return out
