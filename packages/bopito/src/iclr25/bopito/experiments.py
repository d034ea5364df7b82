"""The experiment settings and jobs that ``demo``, ``repro`` (:mod:`.repro`) and the benchmarks share: Prinz data
(cached), the model budget of prior / ITO / BoPITO ensembles of equal size, and the demo's job.

Every model family is trained as one ensemble (one member per seed and data budget), so that a whole
ladder costs one batched training run per family.

References: BoPITO (ICLR 2025), Sec. 5.1 (Prinz: equilibrium at long lags, data efficiency, interpolation).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .analysis import (
    evaluate_acf,
)
from .reference import ExactReference, exact_reference
from .sampling import sample
from .simulation import simulate
from .systems import Trajectories, load_trajectories
from .training import fit_model

__all__ = ["Budget", "DEMO_BUDGET", "REPRO_BUDGET", "PRINZ_BOX", "cached_simulation", "model_kwargs", "run_demo",
           "w1_members"]

PRINZ_BOX = ((-1.2, 1.2),)


@dataclasses.dataclass(frozen=True)
class Budget:
    """Model size and training / evaluation budget, the same for every model family."""

    width: int = 64
    depth: int = 3
    emb_dim: int = 32
    n_diffusion: int = 500
    steps: int = 3000
    bg_steps: int = 3000
    batch_size: int = 512
    lr: float = 1e-3
    sample_steps: int | None = 50
    long_lag_steps: int | None = None
    n_eval: int = 1000


DEMO_BUDGET = Budget(steps=500, bg_steps=500, batch_size=256, n_eval=600, width=48)
REPRO_BUDGET = Budget(bg_steps=6000, n_eval=2000)


def cached_simulation(cache: Path | None, **kw: Any) -> Trajectories:
    """:func:`simulate` with the result kept in ``cache`` (an ``.npz`` named after the arguments, written
    atomically); ``cache=None`` always simulates."""
    if cache is None:
        return simulate(**kw)
    key = "-".join(f"{k}={v}" for k, v in sorted(kw.items()) if k not in ("desc", "x0")
                   and not isinstance(v, np.ndarray))
    if isinstance(kw.get("x0"), np.ndarray):
        key += f"-x0sum={float(np.sum(kw['x0'])):.6f}"
    path = Path(cache) / (key.replace("/", "_") + ".npz")
    if path.is_file():
        return load_trajectories(path)
    tr = simulate(**kw)
    tr.save(path)
    return tr


def model_kwargs(b: Budget) -> dict[str, Any]:
    return {"width": b.width, "depth": b.depth, "emb_dim": b.emb_dim, "n_diffusion": b.n_diffusion,
            "batch_size": b.batch_size, "lr": b.lr, "box": PRINZ_BOX}


def w1_members(ref: ExactReference, xs: np.ndarray) -> list[float]:
    return [ref.w1_to_boltzmann(xs[k, :, 0]) for k in range(xs.shape[0])]


# ------------------------------------------------------------------------------------------------------ demo
def run_demo(*, seed: int = 0, budget: Budget = DEMO_BUDGET, n_traj: int = 100, n_frames: int = 200,
             max_lag: int = 100, lambda_hat: float = 0.994, long_lag: int = 5000, x_start: float = 0.75,
             lags: Sequence[int] = (10, 25, 50, 100), device: Any = None) -> dict[str, Any]:
    """The demo: prior, ITO and BoPITO on ``n_traj`` short Prinz trajectories; W1 to Boltzmann at a long
    lag from ``x_start`` and the correlation-function error at ``lags``. The models train and sample on
    ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``); the simulation and the exact reference are CPU numpy."""
    t0 = time.perf_counter()
    ref = exact_reference("prinz")
    data = simulate("prinz", n_traj, n_frames, seed=seed, desc="simulate")
    t_sim = time.perf_counter() - t0
    kw = {**model_kwargs(budget), "device": device}
    bg = fit_model("bg", data, steps=budget.bg_steps, seed=seed, desc="prior", **kw)
    ito = fit_model("ito", data, max_lag=max_lag, steps=budget.steps, seed=seed + 1, desc="ITO", **kw)
    bop = fit_model("bopito", data, prior=bg.model, max_lag=max_lag, lambda_hat=lambda_hat, steps=budget.steps,
                    seed=seed + 1, desc="BoPITO", **kw)
    x0 = np.full(budget.n_eval, x_start)
    long = {name: sample(m.model, x0, long_lag, steps=budget.sample_steps, seed=seed + 2, device=device)
            for name, m in (("ito", ito), ("bopito", bop))}
    eq = ref.sample_boltzmann(budget.n_eval, seed=seed + 3)[:, 0]
    c_ref = ref.correlation(lags)
    acf = {name: evaluate_acf(m.model, eq, lags, c_ref, steps=budget.sample_steps, seed=seed + 4, device=device)
           for name, m in (("ito", ito), ("bopito", bop))}
    return {"ref": ref, "data": data, "bg": bg, "ito": ito, "bopito": bop, "long": long, "acf": acf,
            "w1": {k: w1_members(ref, v)[0] for k, v in long.items()}, "c_ref": c_ref, "lags": list(lags),
            "t_sim": t_sim, "x_start": x_start, "long_lag": long_lag}
