"""Controlled comparisons: several models trained on the same observed trajectories with the same budget.

``compare_models`` is what ``iclr25 memno demo``/``repro`` and the claim tests run; the trajectories of one
(PDE, n, ν, seed, burn-in) are solved once and observed at every resolution and noise level asked for. Every
comparison also scores the trivial predictors (do-nothing and linear extrapolation) on the same test set, so
that a ratio between two models can be read against them.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

from .baselines import TRIVIAL_NAMES, make_trivial
from .datasets import PDEDataset, observe
from .models import make_model
from .solver import (
    Trajectories,
    burgers_initial_condition,
    ks_initial_condition,
    solve_burgers,
    solve_ks,
)
from .training import evaluate, resolve_device, train

__all__ = ["Setting", "observed", "ks_observed", "compare_models", "default_modes", "check_modes"]

_LENGTH = {"ks": 64.0, "burgers": 6.283185307179586}


@dataclasses.dataclass(frozen=True)
class Setting:
    """One data regime of a comparison: ``pde`` at ``resolution`` with viscosity ``nu`` and noise ``noise``."""

    resolution: int
    nu: float
    noise: float = 0.0
    pde: str = "ks"

    def __post_init__(self) -> None:
        if self.pde not in _LENGTH:
            raise ValueError(f"pde must be one of {sorted(_LENGTH)}, got {self.pde!r}")

    @property
    def label(self) -> str:
        s = ("" if self.pde == "ks" else f"{self.pde}, ") + f"res {self.resolution}, ν={self.nu:g}"
        return s + (f", noise {self.noise:g}" if self.noise else "")


def default_modes(resolution: int) -> int:
    """The default number of Fourier modes at ``resolution``: ``resolution // 2`` (every mode below Nyquist)."""
    return resolution // 2


def check_modes(modes: int | None, resolution: int, *, name: str = "modes") -> int:
    """``modes`` (``None`` → :func:`default_modes`), refused when the grid is too coarse for it (never capped)."""
    if modes is None:
        return default_modes(resolution)
    if isinstance(modes, bool) or not isinstance(modes, int) or modes < 1:
        raise ValueError(f"{name} must be a positive integer or None (= resolution // 2), got {modes!r}")
    if modes > resolution // 2 + 1:
        raise ValueError(f"{name}={modes} needs at least {2 * (modes - 1)} grid points, but the resolution is "
                         f"{resolution}; use {name} <= {resolution // 2 + 1} (or None for resolution // 2)")
    return modes


@functools.lru_cache(maxsize=6)
def _trajectories(pde: str, n: int, nu: float, seed: int, t_burn: float, n_x: int) -> Trajectories:
    # one solve per (pde, n, ν, seed): every observation (resolution, noise) of a comparison reuses it
    length = _LENGTH[pde]
    if pde == "ks":
        return solve_ks(ks_initial_condition(n, n_x, length, seed=seed), nu=nu, length=length, t_burn=t_burn)
    return solve_burgers(burgers_initial_condition(n, n_x, length, seed=seed), nu=nu, length=length,
                         t_burn=t_burn)


def observed(setting: Setting, n: int, *, seed: int, t_burn: float, n_x: int = 512) -> PDEDataset:
    """Data for ``setting`` (the same trajectories for every resolution and noise level of one seed).

    KS on ``L = 64``, Burgers on ``L = 2π``, solved on ``n_x`` points with ETDRK4 after a burn-in ``t_burn``.
    """
    data = observe(_trajectories(setting.pde, n, setting.nu, seed, t_burn, n_x), setting.resolution,
                   noise=setting.noise, seed=seed)
    return dataclasses.replace(data, params={**data.params, "t_burn": t_burn})


def ks_observed(setting: Setting, n: int, *, seed: int, t_burn: float, n_x: int = 512) -> PDEDataset:
    """KS data for ``setting`` (kept for 0.2 callers; :func:`observed` also serves Burgers settings)."""
    if setting.pde != "ks":
        raise ValueError(f"ks_observed needs a KS setting, got pde={setting.pde!r} (use observed)")
    return observed(setting, n, seed=seed, t_burn=t_burn, n_x=n_x)


def compare_models(setting: Setting, models: Sequence[str], *, n_train: int, n_test: int, epochs: int,
                   width: int, n_layers: int, seed: int, t_burn: float, modes: int | None = None,
                   batch_size: int = 16, lr: float = 3e-3, n_x: int = 512, trivial: bool = True,
                   with_rollout: bool = True, device: Any = None) -> dict[str, Any]:
    """Train each named model on the same data and budget; score the trivial predictors beside them.

    The models train and are scored on ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``); the trajectories are
    solved on the CPU in float64 (:func:`observed`), so every device trains on the same data.

    ``modes=None`` keeps ``resolution // 2`` Fourier modes per layer (every mode the grid resolves); an
    explicit ``modes`` too large for the resolution raises ``ValueError`` (it is never capped).

    Returns a dict with ``"data"`` (the observed data set), ``"test"`` (its held-out part), ``"modes"`` (the
    number used) and, per model name, ``{"model", "train": TrainResult | None, "eval": EvalResult}`` (the
    trivial predictors ``"do-nothing"`` and ``"linear-extrapolation"`` have ``train=None``); the models are left
    on ``device``.
    """
    modes = check_modes(modes, setting.resolution)
    dev = resolve_device(device)
    data = observed(setting, n_train + n_test, seed=seed, t_burn=t_burn, n_x=n_x)
    tr, te = data.split(n_train)
    out: dict[str, Any] = {"data": data, "test": te, "modes": modes}
    if trivial:
        for name in TRIVIAL_NAMES:
            model = make_trivial(name)
            out[name] = {"model": model, "train": None, "eval": evaluate(model, te, with_rollout=with_rollout,
                                                                            device=dev)}
    for name in models:
        model = make_model(name, width=width, n_layers=n_layers, modes=modes, seed=seed, device=dev)
        res = train(model, tr, epochs=epochs, batch_size=batch_size, lr=lr, seed=seed,
                    desc=f"{name} {setting.label}", device=dev)
        out[name] = {"model": res.model, "train": res,
                     "eval": evaluate(res.model, te, with_rollout=with_rollout, device=dev)}
    return out
