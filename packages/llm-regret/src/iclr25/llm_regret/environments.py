"""Loss sequences of online learning: the paper's families, vectorised over seeds.

Every family returns an array ``(n_seeds, T, d)`` of losses in ``[0, B]``. The constants are a documented
reconstruction (the paper gives the families, not every constant): see the README, "Differences".

References: Park, Liu, Ozdaglar & Zhang, *Do LLM Agents Have Regret?*, ICLR 2025, Sec. 3.2 (arbitrarily
changing and non-stationary losses) and Sec. 3.4 (the "regrettable" alternating sequence).
"""

from __future__ import annotations

import numpy as np

__all__ = ["FAMILIES", "loss_sequences", "check_losses"]

FAMILIES = ("gaussian", "uniform", "linear_trend", "sine_trend", "alternating")


def _positive_int(value, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def loss_sequences(family: str, *, T: int, d: int = 2, n_seeds: int = 1, seed: int = 0,
                   B: float = 1.0) -> np.ndarray:
    """Loss sequences of one family, shape ``(n_seeds, T, d)``, values in ``[0, B]``.

    - ``gaussian``: per seed a mean ``μ ~ U(0, 1)^d``; ``ℓ_t ~ N(μ, 0.3² I)`` clipped to the box (arbitrarily
      changing losses around a fixed mean).
    - ``uniform``: ``ℓ_t ~ U(μ − 0.5, μ + 0.5)`` clipped, ``μ ~ U(0, 1)^d``.
    - ``linear_trend``: ``ℓ_t = a + (b − a)·t/T`` plus ``N(0, 0.05²)`` noise, ``a, b ~ U(0, 1)^d`` (drifting best
      action).
    - ``sine_trend``: ``ℓ_t = ½ + ½ sin(2π t/P + φ)`` per action, period ``P ~ U(T/4, T)``, phases ``φ ~ U(0, 2π)``.
    - ``alternating``: ``ℓ_1 = (½, 0, 1, …)``, then ``(0, 1, 1, …)``, ``(1, 0, 1, …)`` alternately: the
      sequence on which Follow-the-Leader has linear regret (Regret_T ≈ T/2) and GPT-4 failed.
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    T = _positive_int(T, "T")
    d = _positive_int(d, "d", 2)
    n_seeds = _positive_int(n_seeds, "n_seeds")
    if not np.isfinite(B) or B <= 0:
        raise ValueError(f"B (the loss range) must be a finite number > 0, got {B!r}")
    rng = np.random.default_rng(seed)
    t = np.arange(1, T + 1)[None, :, None] / T
    if family == "gaussian":
        mu = rng.uniform(0, 1, (n_seeds, 1, d))
        L = mu + 0.3 * rng.standard_normal((n_seeds, T, d))
    elif family == "uniform":
        mu = rng.uniform(0, 1, (n_seeds, 1, d))
        L = mu + rng.uniform(-0.5, 0.5, (n_seeds, T, d))
    elif family == "linear_trend":
        a, b = rng.uniform(0, 1, (2, n_seeds, 1, d))
        L = a + (b - a) * t + 0.05 * rng.standard_normal((n_seeds, T, d))
    elif family == "sine_trend":
        period = rng.uniform(0.25, 1.0, (n_seeds, 1, 1))
        phase = rng.uniform(0, 2 * np.pi, (n_seeds, 1, d))
        L = 0.5 + 0.5 * np.sin(2 * np.pi * t / period + phase)
    else:
        L = np.ones((n_seeds, T, d))
        L[:, 0, 0], L[:, 0, 1] = 0.5, 0.0
        L[:, 1::2, 0], L[:, 1::2, 1] = 0.0, 1.0
        L[:, 2::2, 0], L[:, 2::2, 1] = 1.0, 0.0
    return B * np.clip(L, 0.0, 1.0)


def check_losses(losses, *, B: float | None = None, name: str = "losses") -> np.ndarray:
    """Validate a loss array: ``(T, d)`` or ``(n_seeds, T, d)``, finite, ``d >= 2``, inside ``[0, B]``.

    Returns it as float64 with shape ``(n_seeds, T, d)``.
    """
    arr = np.asarray(losses)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3 or arr.shape[1] < 1 or arr.shape[2] < 2:
        raise ValueError(f"{name} must have shape (T, d) or (n_seeds, T, d) with T >= 1 and d >= 2 actions, "
                         f"got {np.shape(losses)}")
    if arr.shape[0] < 1:
        raise ValueError(f"{name} is empty (no sequences)")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf")
    lo, hi = float(arr.min()), float(arr.max())
    if lo < 0 or (B is not None and hi > B + 1e-12):
        raise ValueError(f"{name} must lie in [0, {B if B is not None else 'B'}], got values in [{lo:.4g}, {hi:.4g}]")
    return arr
