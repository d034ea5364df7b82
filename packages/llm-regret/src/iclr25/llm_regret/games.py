"""Repeated normal-form games between online learners.

Each player ``i`` gets only its expected loss vector ``ℓ_{i,t}(a) = E_{a_{−i} ~ π_{−i,t}} loss_i(a, a_{−i})``,
never the payoff tensor. If every player has regret ``R_i``, the time-averaged joint play
``σ = (1/T) Σ_t ⊗_i π_{i,t}`` is an ε-coarse-correlated equilibrium with ``ε = max_i R_i / T`` (an identity
here, with expected losses); in two-player zero-sum games the duality gap of the averaged policies is at most
``(R_1 + R_2) / T``.

References: Park et al., ICLR 2025, Sec. 3.3 (repeated games); Cesa-Bianchi & Lugosi (2006), Sec. 7.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .agents import Hedge
from .online import regret_curves

__all__ = ["Game", "GameRun", "play", "random_zero_sum", "random_general_sum", "classic_game", "CLASSIC_GAMES",
           "zero_sum_value", "duality_gap", "cce_gap"]


@dataclasses.dataclass(frozen=True)
class Game:
    """``losses[i]`` is player ``i``'s loss tensor over joint actions, shape ``(a_1, ..., a_n)``, values in
    ``[0, 1]``."""

    losses: tuple[np.ndarray, ...]
    name: str = "game"

    def __post_init__(self):
        if len(self.losses) < 2:
            raise ValueError(f"a game needs at least 2 players, got {len(self.losses)}")
        shape = np.shape(self.losses[0])
        if len(shape) != len(self.losses) or min(shape) < 2:
            raise ValueError(f"each loss tensor must have one axis of >= 2 actions per player ({len(self.losses)}), "
                             f"got shape {shape}")
        for i, L in enumerate(self.losses):
            L = np.asarray(L, dtype=np.float64)
            if L.shape != shape or not np.all(np.isfinite(L)):
                raise ValueError(f"losses[{i}] must be finite with shape {shape}, got {L.shape}")
        object.__setattr__(self, "losses", tuple(np.asarray(L, dtype=np.float64) for L in self.losses))

    @property
    def n_players(self) -> int:
        return len(self.losses)

    @property
    def n_actions(self) -> tuple[int, ...]:
        return self.losses[0].shape

    def expected_losses(self, policies: list[np.ndarray]) -> list[np.ndarray]:
        """Each player's expected loss vector given the others' mixed strategies."""
        out = []
        for i, L in enumerate(self.losses):
            x = L
            for j in reversed(range(self.n_players)):  # contract the other players' axes, last first
                if j != i:
                    x = np.tensordot(x, policies[j], axes=([j], [0]))
            out.append(x)
        return out


def random_zero_sum(m: int = 3, n: int = 3, *, seed: int = 0) -> Game:
    """Two players, player 1 loses ``A ~ U(0, 1)``, player 2 loses ``1 − A`` (constant-sum = zero-sum)."""
    A = np.random.default_rng(seed).uniform(0, 1, (m, n))
    return Game((A, 1.0 - A), name=f"random zero-sum {m}x{n}")


def random_general_sum(n_players: int = 3, n_actions: int = 2, *, seed: int = 0) -> Game:
    """``n_players`` players with independent ``U(0, 1)`` loss tensors."""
    rng = np.random.default_rng(seed)
    shape = (n_actions,) * n_players
    return Game(tuple(rng.uniform(0, 1, shape) for _ in range(n_players)),
                name=f"random general-sum {n_players}p x {n_actions}")


# losses in [0, 1] (payoffs mapped by (max - payoff) / (max - min))
_CLASSIC = {
    "rock_paper_scissors": np.array([[0.5, 1.0, 0.0], [0.0, 0.5, 1.0], [1.0, 0.0, 0.5]]),
    "matching_pennies": np.array([[0.0, 1.0], [1.0, 0.0]]),
}
_CLASSIC_GENERAL = {
    # (row payoff, column payoff) of the textbook 2x2 games
    "prisoners_dilemma": (np.array([[3, 0], [5, 1]]), np.array([[3, 5], [0, 1]])),
    "stag_hunt": (np.array([[4, 0], [3, 3]]), np.array([[4, 3], [0, 3]])),
    "battle_of_sexes": (np.array([[3, 0], [0, 2]]), np.array([[2, 0], [0, 3]])),
    "chicken": (np.array([[0, -1], [1, -10]]), np.array([[0, 1], [-1, -10]])),
}
CLASSIC_GAMES = tuple(_CLASSIC) + tuple(_CLASSIC_GENERAL)


def classic_game(name: str) -> Game:
    """A representative game: ``rock_paper_scissors``, ``matching_pennies`` (zero-sum), ``prisoners_dilemma``,
    ``stag_hunt``, ``battle_of_sexes``, ``chicken``."""
    if name in _CLASSIC:
        A = _CLASSIC[name]
        return Game((A, 1.0 - A), name=name)
    if name in _CLASSIC_GENERAL:
        u1, u2 = _CLASSIC_GENERAL[name]
        lo, hi = min(u1.min(), u2.min()), max(u1.max(), u2.max())
        return Game(((hi - u1) / (hi - lo), (hi - u2) / (hi - lo)), name=name)
    raise ValueError(f"game must be one of {CLASSIC_GAMES}, got {name!r}")


@dataclasses.dataclass(frozen=True)
class GameRun:
    """Policies ``policies[i]`` ``(T, a_i)``, expected losses ``losses[i]`` ``(T, a_i)`` and regret curves
    ``regret[i]`` ``(T,)`` of every player."""

    game: Game
    policies: tuple[np.ndarray, ...]
    losses: tuple[np.ndarray, ...]
    regret: tuple[np.ndarray, ...]

    def average_policies(self) -> list[np.ndarray]:
        return [p.mean(axis=0) for p in self.policies]

    def joint_distribution(self) -> np.ndarray:
        """``σ = (1/T) Σ_t ⊗_i π_{i,t}`` over joint actions."""
        T = self.policies[0].shape[0]
        sigma = np.zeros(self.game.n_actions)
        for t in range(T):
            outer = self.policies[0][t]
            for p in self.policies[1:]:
                outer = np.multiply.outer(outer, p[t])
            sigma += outer
        return sigma / T


def play(game: Game, agents=None, *, T: int = 1000, seed: int = 0) -> GameRun:
    """Repeated play of ``game`` for ``T`` rounds with full-information ``agents`` (default: Hedge for all)."""
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T < 1:
        raise ValueError(f"T must be an integer >= 1, got {T!r}")
    agents = [Hedge() for _ in range(game.n_players)] if agents is None else list(agents)
    if len(agents) != game.n_players:
        raise ValueError(f"agents must have one agent per player ({game.n_players}), got {len(agents)}")
    rng = np.random.default_rng(seed)
    for agent, d in zip(agents, game.n_actions, strict=True):
        if getattr(agent, "feedback", "full") != "full":
            raise ValueError(f"agent {agent.name!r} needs bandit feedback; repeated games give loss vectors")
        agent.reset(d, T, 1, rng)
    pols = [np.empty((T, d)) for d in game.n_actions]
    losses = [np.empty((T, d)) for d in game.n_actions]
    for t in range(T):
        current = [np.asarray(a.policy(), dtype=np.float64)[0] for a in agents]
        for i, (agent, ell) in enumerate(zip(agents, game.expected_losses(current), strict=True)):
            pols[i][t], losses[i][t] = current[i], ell
            agent.update(ell[None], None)
    regret = tuple(regret_curves(L[None], P[None])[0] for L, P in zip(losses, pols, strict=True))
    return GameRun(game, tuple(pols), tuple(losses), regret)


def zero_sum_value(A) -> tuple[float, np.ndarray, np.ndarray]:
    """Value ``min_x max_y xᵀAy`` of the row player's loss matrix and optimal strategies, by linear programming."""
    from scipy.optimize import linprog

    A = np.asarray(A, dtype=np.float64)
    m, n = A.shape

    def solve(M):  # min v s.t. (M^T x)_j <= v, x in simplex
        c = np.r_[np.zeros(M.shape[0]), 1.0]
        res = linprog(c, A_ub=np.c_[M.T, -np.ones(M.shape[1])], b_ub=np.zeros(M.shape[1]),
                      A_eq=np.r_[np.ones(M.shape[0]), 0.0][None], b_eq=[1.0],
                      bounds=[(0, None)] * M.shape[0] + [(None, None)], method="highs")
        return res.x[-1], res.x[:-1]

    v, x = solve(A)
    _, y = solve(-A.T)  # the column player maximises xᵀAy
    return float(v), x, y


def duality_gap(A, x, y) -> float:
    """``max_y' xᵀAy' − min_x' x'ᵀAy`` for the row player's loss matrix ``A``."""
    A = np.asarray(A, dtype=np.float64)
    return float(np.max(x @ A) - np.min(A @ y))


def cce_gap(game: Game, sigma) -> float:
    """``max_i max_{a'} (E_σ[loss_i(a)] − E_σ[loss_i(a', a_{−i})])``: 0 at a coarse correlated equilibrium."""
    sigma = np.asarray(sigma, dtype=np.float64)
    gaps = []
    for i, L in enumerate(game.losses):
        expected = float(np.sum(sigma * L))
        marg = sigma.sum(axis=i)  # distribution of the others' actions
        dev = [float(np.sum(marg * np.take(L, a, axis=i))) for a in range(L.shape[i])]
        gaps.append(expected - min(dev))
    return max(gaps)

