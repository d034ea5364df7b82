"""Running an agent against loss sequences (full information or bandit) and its regret.

``Regret_t = Σ_{s≤t} ⟨ℓ_s, π_s⟩ − min_a Σ_{s≤t} ℓ_s(a)`` (expected loss of the played policies; with bandit
feedback the agent only sees ``ℓ_s(a_s)`` of a sampled ``a_s ~ π_s``).

References: Park et al., ICLR 2025, Sec. 2 (online learning protocol, Eq. for Regret_T).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .environments import check_losses

__all__ = ["OnlineRun", "run_online", "regret_curves"]


def regret_curves(losses: np.ndarray, policies: np.ndarray) -> np.ndarray:
    """External regret after every round, ``(n_seeds, T)``, from losses and policies ``(n_seeds, T, d)``."""
    played = np.cumsum(np.einsum("std,std->st", losses, policies), axis=1)
    best = np.cumsum(losses, axis=1).min(axis=2)
    return played - best


@dataclasses.dataclass(frozen=True)
class OnlineRun:
    """One agent against ``n_seeds`` loss sequences: losses and policies ``(n_seeds, T, d)``, played actions
    ``(n_seeds, T)`` (bandit feedback only), and the regret after every round ``(n_seeds, T)``."""

    agent: str
    feedback: str
    losses: np.ndarray
    policies: np.ndarray
    regret: np.ndarray
    actions: np.ndarray | None = None

    @property
    def final_regret(self) -> np.ndarray:
        return self.regret[:, -1]

    @property
    def mean_curve(self) -> np.ndarray:
        """Regret after every round averaged over seeds (what the paper's statistics are computed on)."""
        return self.regret.mean(axis=0)


def run_online(agent, losses, *, seed: int = 0) -> OnlineRun:
    """Play ``agent`` against ``losses`` (``(T, d)`` or ``(n_seeds, T, d)``) with its own feedback model.

    Examples
    --------
    >>> from iclr25.llm_regret import Hedge, loss_sequences
    >>> run = run_online(Hedge(), loss_sequences("uniform", T=100, d=3, n_seeds=4, seed=0))
    >>> run.regret.shape
    (4, 100)
    """
    L = check_losses(losses)
    n_seeds, T, d = L.shape
    rng = np.random.default_rng(seed)
    agent.reset(d, T, n_seeds, rng)
    feedback = getattr(agent, "feedback", "full")
    if feedback not in ("full", "bandit"):
        raise ValueError(f"agent.feedback must be 'full' or 'bandit', got {feedback!r}")
    policies = np.empty_like(L)
    actions = np.empty((n_seeds, T), dtype=np.int64) if feedback == "bandit" else None
    rows = np.arange(n_seeds)
    for t in range(T):
        p = np.asarray(agent.policy(), dtype=np.float64)
        if p.shape != (n_seeds, d):
            raise ValueError(f"{getattr(agent, 'name', 'agent')}.policy() must return shape {(n_seeds, d)}, "
                             f"got {p.shape}")
        policies[:, t] = p
        if feedback == "full":
            agent.update(L[:, t], None)
        else:
            a = (rng.random((n_seeds, 1)) > np.cumsum(p, axis=1)).sum(axis=1).clip(0, d - 1)
            actions[:, t] = a
            agent.update(L[rows, t, a], a)
    return OnlineRun(getattr(agent, "name", "agent"), feedback, L, policies, regret_curves(L, policies), actions)
