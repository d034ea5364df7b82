"""Online-learning agents behind one interface, vectorised over independent runs ("seeds").

An agent is an object with ``reset(n_actions, horizon, n_seeds, rng)``, ``policy() -> (n_seeds, d)`` (rows on
the simplex) and ``update(loss, actions)``. With full information ``loss`` is the ``(n_seeds, d)`` loss vector of
the round and ``actions`` is ``None``; with bandit feedback (``feedback = "bandit"``) ``loss`` is the
``(n_seeds,)`` loss of the played ``actions``. Any function of the loss history is an agent through
:class:`CallableAgent` (the LLM agent is one).

References: Park et al., ICLR 2025, Sec. 2 (FTRL, FTPL, FTL) and Sec. 3.3 (EXP3 for bandits);
Cesa-Bianchi & Lugosi, *Prediction, Learning, and Games* (2006), Thm. 2.2 (the Hedge bound B·sqrt(T ln d / 2)).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Protocol

import numpy as np

__all__ = ["Agent", "Hedge", "FTRL", "FTPL", "FTL", "Uniform", "EXP3", "CallableAgent", "make_agent", "AGENTS",
           "project_simplex", "check_policy"]


class Agent(Protocol):
    name: str
    feedback: str

    def reset(self, n_actions: int, horizon: int, n_seeds: int, rng: np.random.Generator) -> None: ...

    def policy(self) -> np.ndarray: ...

    def update(self, loss: np.ndarray, actions: np.ndarray | None = None) -> None: ...


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection of each row of ``v`` onto the probability simplex (Duchi et al. 2008)."""
    v = np.asarray(v, dtype=np.float64)
    u = -np.sort(-v, axis=-1)
    css = np.cumsum(u, axis=-1) - 1.0
    k = np.arange(1, v.shape[-1] + 1)
    rho = np.sum(u - css / k > 0, axis=-1, keepdims=True)
    theta = np.take_along_axis(css, rho - 1, axis=-1) / rho
    return np.maximum(v - theta, 0.0)


def check_policy(p, n_actions: int, *, name: str = "policy", atol: float = 1e-6) -> np.ndarray:
    """A policy must be a finite, non-negative vector (or rows) of ``n_actions`` entries summing to 1."""
    arr = np.asarray(p, dtype=np.float64)
    if arr.shape[-1:] != (n_actions,):
        raise ValueError(f"{name} must have {n_actions} entries (one per action), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < -atol) or np.any(np.abs(arr.sum(-1) - 1) > atol):
        raise ValueError(f"{name} must lie on the probability simplex (non-negative, summing to 1), got "
                         f"{np.array2string(arr.reshape(-1, n_actions)[0], precision=4)}")
    return np.clip(arr, 0.0, None) / np.clip(arr, 0.0, None).sum(-1, keepdims=True)


@dataclasses.dataclass
class _Cumulative:
    """Shared state of the full-information follow-the-X agents: the cumulative loss ``L_{t-1}``."""

    name: str = "agent"
    feedback: str = "full"

    def reset(self, n_actions: int, horizon: int, n_seeds: int, rng: np.random.Generator) -> None:
        self.d, self.T, self.t = n_actions, horizon, 0
        self.L = np.zeros((n_seeds, n_actions))
        self.rng = rng

    def update(self, loss: np.ndarray, actions: np.ndarray | None = None) -> None:
        if actions is None:
            self.L += loss
        else:  # bandit feedback: only the played actions' losses are seen
            self.L[np.arange(self.L.shape[0]), actions] += loss
        self.t += 1


@dataclasses.dataclass
class Hedge(_Cumulative):
    """FTRL with the entropy regulariser (multiplicative weights): ``π_t ∝ exp(−η L_{t−1})``.

    ``eta=None`` takes the horizon-tuned rate ``η = sqrt(8 ln d / T) / B``, for which
    ``Regret_T <= B sqrt(T ln d / 2)``.
    """

    eta: float | None = None
    B: float = 1.0
    name: str = "hedge"

    def reset(self, n_actions, horizon, n_seeds, rng):
        super().reset(n_actions, horizon, n_seeds, rng)
        if self.eta is not None and not (np.isfinite(self.eta) and self.eta > 0):
            raise ValueError(f"eta must be a finite number > 0, got {self.eta!r}")
        self.eta_ = self.eta if self.eta is not None else math.sqrt(8 * math.log(n_actions) / horizon) / self.B

    def policy(self):
        z = -self.eta_ * (self.L - self.L.min(axis=1, keepdims=True))
        w = np.exp(z)
        return w / w.sum(axis=1, keepdims=True)

    def bound(self, horizon: int, n_actions: int) -> float:
        """The regret bound ``B sqrt(T ln d / 2)`` of the tuned rate."""
        return self.B * math.sqrt(horizon * math.log(n_actions) / 2)


@dataclasses.dataclass
class FTRL(_Cumulative):
    """FTRL with the quadratic regulariser: ``π_t = Proj_Δ(−η L_{t−1})`` (lazy projected gradient descent);
    ``eta=None`` takes ``η = sqrt(2 / T) / B``."""

    eta: float | None = None
    B: float = 1.0
    name: str = "ftrl_l2"

    def policy(self):
        eta = self.eta if self.eta is not None else math.sqrt(2.0 / self.T) / self.B
        return project_simplex(-eta * self.L)


@dataclasses.dataclass
class FTPL(_Cumulative):
    """Follow the perturbed leader: ``π_t(a) = P[a = argmin_b (L_{t−1}(b) + ε_b)]``, ``ε ~ N(0, σ_t² I)``,
    ``σ_t = scale · sqrt(max(t, 1))``. The probability is exact for two actions (a normal CDF) and a Monte
    Carlo average of ``n_samples`` perturbations otherwise."""

    scale: float = 1.0
    n_samples: int = 256
    name: str = "ftpl"

    def policy(self):
        sigma = self.scale * math.sqrt(max(self.t, 1))
        if self.d == 2:
            from scipy.special import ndtr

            p0 = ndtr((self.L[:, 1] - self.L[:, 0]) / (sigma * math.sqrt(2)))
            return np.stack([p0, 1 - p0], axis=1)
        eps = self.rng.standard_normal((self.L.shape[0], self.n_samples, self.d)) * sigma
        winners = np.argmin(self.L[:, None, :] + eps, axis=2)
        counts = np.zeros_like(self.L)
        np.add.at(counts, (np.repeat(np.arange(self.L.shape[0]), self.n_samples), winners.ravel()), 1.0)
        return counts / self.n_samples


@dataclasses.dataclass
class FTL(_Cumulative):
    """Follow the leader: all mass on ``argmin L_{t−1}``, ties split evenly."""

    name: str = "ftl"

    def policy(self):
        best = np.isclose(self.L, self.L.min(axis=1, keepdims=True), rtol=0, atol=1e-12)
        return best / best.sum(axis=1, keepdims=True)


@dataclasses.dataclass
class Uniform(_Cumulative):
    """The uniform policy (linear regret whenever one action is better on average)."""

    name: str = "uniform"

    def policy(self):
        return np.full(self.L.shape, 1.0 / self.d)


@dataclasses.dataclass
class EXP3:
    """EXP3 for bandit feedback: Hedge on importance-weighted losses ``ℓ̂(a) = ℓ(a)·1{a_t = a} / π_t(a)``,
    ``η = sqrt(2 ln d / (T d)) / B`` (Auer et al. 2002; Lattimore & Szepesvári 2020, Thm. 11.2)."""

    eta: float | None = None
    B: float = 1.0
    name: str = "exp3"
    feedback: str = "bandit"

    def reset(self, n_actions, horizon, n_seeds, rng):
        self.d, self.T = n_actions, horizon
        self.eta_ = self.eta if self.eta is not None else math.sqrt(2 * math.log(n_actions) / (horizon * n_actions)) / self.B
        self.Lhat = np.zeros((n_seeds, n_actions))

    def policy(self):
        z = -self.eta_ * (self.Lhat - self.Lhat.min(axis=1, keepdims=True))
        w = np.exp(z)
        self._p = w / w.sum(axis=1, keepdims=True)
        return self._p

    def update(self, loss, actions=None):
        if actions is None:
            raise ValueError("EXP3 needs bandit feedback: the played actions and their losses")
        rows = np.arange(self.Lhat.shape[0])
        self.Lhat[rows, actions] += loss / self._p[rows, actions]


@dataclasses.dataclass
class CallableAgent:
    """Any policy function of the loss history: ``fn(history) -> probabilities``, where ``history`` is the
    ``(t, d)`` array of past loss vectors (full information) and the result a length-``d`` simplex vector.
    One call per seed and round (so keep ``n_seeds`` small for slow functions such as LLMs)."""

    fn: Callable[[np.ndarray], np.ndarray]
    name: str = "callable"
    feedback: str = "full"

    def reset(self, n_actions, horizon, n_seeds, rng):
        if not callable(self.fn):
            raise TypeError(f"fn must be callable, got {type(self.fn).__name__}")
        self.d = n_actions
        self.history = [np.zeros((0, n_actions)) for _ in range(n_seeds)]

    def policy(self):
        return np.stack([check_policy(self.fn(h), self.d, name=f"{self.name} output") for h in self.history])

    def update(self, loss, actions=None):
        self.history = [np.vstack([h, row[None]]) for h, row in zip(self.history, loss, strict=True)]


AGENTS: dict[str, Callable[[], object]] = {
    "hedge": Hedge, "ftrl_l2": FTRL, "ftpl": FTPL, "ftl": FTL, "uniform": Uniform, "exp3": EXP3,
}


def make_agent(name: str, **kwargs):
    """An agent by name: one of ``hedge, ftrl_l2, ftpl, ftl, uniform, exp3``."""
    if name not in AGENTS:
        raise ValueError(f"agent must be one of {sorted(AGENTS)}, got {name!r}")
    return AGENTS[name](**kwargs)
