"""The experiments of ``demo`` and ``repro``: regret statistics per agent and family, bandits, repeated games
and the regret-loss, each returning plain rows that the command line turns into tables and results.json."""

from __future__ import annotations

import math

import numpy as np

from .agents import EXP3, FTL, FTPL, FTRL, Hedge, Uniform
from .environments import FAMILIES, loss_sequences
from .games import (
    cce_gap,
    classic_game,
    duality_gap,
    play,
    random_general_sum,
    random_zero_sum,
    zero_sum_value,
)
from .online import run_online
from .regret_loss import RegretLossConfig, lsa_structure, sequence_regret, train_regret_loss
from .stats import regret_statistics

__all__ = ["statistics_table", "bandit_rows", "game_rows", "cce_rows", "lsa_rows", "simplex_rows", "horizon_rows",
           "loglog_slope", "default_agents"]


def default_agents() -> dict:
    return {"hedge": Hedge, "ftrl_l2": FTRL, "ftpl": FTPL, "ftl": FTL, "uniform": Uniform}


def statistics_table(*, T: int, d: int, n_seeds: int, seed: int = 0, agents: dict | None = None,
                     families=FAMILIES, n_boot: int = 200) -> tuple[list[dict], dict]:
    """One row per agent × family: Regret/T, the trend test (stride 1 and 2), β̂₀ with a bootstrap interval,
    and for Hedge whether every seed is within its bound. Also returns the mean curves for figures."""
    rows, curves = [], {}
    for fam_i, family in enumerate(families):
        L = loss_sequences(family, T=T, d=d, n_seeds=n_seeds, seed=seed + 1000 * fam_i)
        for name, make in (agents or default_agents()).items():
            agent = make()
            run = run_online(agent, L, seed=seed)
            st = regret_statistics(run.regret, n_boot=n_boot, seed=seed)
            st2 = regret_statistics(run.regret, stride=2, n_boot=0, seed=seed)
            row = {"family": family, "agent": name, "T": T, "d": d, "regret_over_T": st.regret_over_T,
                   "p": st.trend.p_value, "p_stride2": st2.trend.p_value, "beta": st.slope.beta,
                   "beta_low": st.slope.low, "beta_high": st.slope.high}
            if isinstance(agent, Hedge):
                row["within_bound"] = bool(np.all(run.final_regret <= agent.bound(T, d) + 1e-9))
            rows.append(row)
            curves[(family, name)] = run.mean_curve
    return rows, curves


def bandit_rows(*, T: int = 2000, d: int = 3, n_seeds: int = 20, seed: int = 0) -> list[dict]:
    """EXP3 and uniform with bandit feedback on the uniform family (with a gap between the means)."""
    out = []
    L = loss_sequences("uniform", T=T, d=d, n_seeds=n_seeds, seed=seed + 77)
    for agent in (EXP3(), Uniform(feedback="bandit", name="uniform (bandit)")):
        run = run_online(agent, L, seed=seed)
        st = regret_statistics(run.regret, n_boot=100, seed=seed)
        out.append({"agent": agent.name, "T": T, "d": d, "regret_over_T": st.regret_over_T,
                    "p": st.trend.p_value, "beta": st.slope.beta, "beta_low": st.slope.low,
                    "beta_high": st.slope.high})
    return out


def game_rows(*, T: int = 2000, n_games: int = 5, seed: int = 0) -> list[dict]:
    """Hedge self-play in zero-sum games: value of the averaged play against the LP / nashpy value."""
    import nashpy

    games = [classic_game("rock_paper_scissors"), classic_game("matching_pennies")]
    games += [random_zero_sum(3, 3, seed=seed + i) for i in range(n_games)]
    out = []
    for g in games:
        run = play(g, T=T, seed=seed)
        x, y = run.average_policies()
        A = g.losses[0]
        v_lp = zero_sum_value(A)[0]
        eq = next(iter(nashpy.Game(-A).support_enumeration()))  # nashpy maximises payoffs: payoff = -loss
        v_nash = float(eq[0] @ A @ eq[1])
        out.append({"game": g.name, "T": T, "value_play": float(x @ A @ y), "value_nashpy": v_nash,
                    "value_lp": v_lp, "abs_error": abs(float(x @ A @ y) - v_nash),
                    "duality_gap": duality_gap(A, x, y),
                    "regret_bound_gap": (run.regret[0][-1] + run.regret[1][-1]) / T})
    return out


def cce_rows(*, Ts=(100, 1000, 5000), n_players: int = 3, n_actions: int = 2, seed: int = 0) -> list[dict]:
    """General-sum games: the CCE gap of the averaged joint play equals max_i Regret_i/T and shrinks with T."""
    out = []
    g = random_general_sum(n_players, n_actions, seed=seed)
    for T in Ts:
        run = play(g, T=T, seed=seed)
        gap = cce_gap(g, run.joint_distribution())
        max_r = max(r[-1] for r in run.regret) / T
        out.append({"game": g.name, "T": T, "cce_gap": gap, "max_regret_over_T": max_r, "difference": abs(gap - max_r)})
    return out


def lsa_rows(*, ds=(2, 5), seeds=(0, 1, 2), steps: int = 1500, T: int = 10, cov=None, batch: int = 1024,
             device=None) -> list[dict]:
    """Regret-loss on single-layer linear self-attention, the theorem's setting (N = 1, h = x², Gaussian
    losses, ball head): the extras vanish and bV ≈ −cI; the loss against the best scalar c of a grid. Trained
    and evaluated on ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``; the evaluation losses are drawn on the
    CPU and moved there)."""
    import torch

    from iclr25.utils.device import torch_device

    dev = torch_device(device)

    out = []
    for d in ds:
        for s in seeds:
            cfg = RegretLossConfig(d=d, T=T, steps=steps, cov=cov, batch=batch)
            res = train_regret_loss(cfg, seed=s, device=dev)
            st = lsa_structure(res.model)
            gen = torch.Generator().manual_seed(10_000 + s)
            ell = torch.randn(8192, T, d, generator=gen, dtype=torch.float64).to(dev)
            with torch.no_grad():
                trained = float((sequence_regret(ell, res.model(ell), head="ball") ** 2).mean())
                cums = torch.cat([torch.zeros_like(ell[:, :1]), torch.cumsum(ell, 1)[:, :-1]], 1)
                grid = {c: float((sequence_regret(ell, -c * cums, head="ball") ** 2).mean())
                        for c in np.linspace(0.02, 1.0, 50)}
            c_best = min(grid, key=grid.get)
            out.append({"d": d, "seed": s, "steps": steps, "c": st.c, "rel_distance": st.rel_distance, "w_over_b": st.w_over_b,
                        "vc_over_V": st.vc_over_V, "A": st.A.tolist(), "loss": trained, "best_scalar_c": float(c_best),
                        "loss_best_c": grid[c_best], "seconds": res.seconds})
    return out


def tuned_hedge_eta(L_train: np.ndarray, etas) -> tuple[float, float]:
    """The Hedge rate with the smallest mean regret on training sequences (the tuned baseline)."""
    best = None
    for eta in etas:
        r = float(run_online(Hedge(eta=eta), L_train).final_regret.mean())
        if best is None or r < best[1]:
            best = (float(eta), r)
    return best


def simplex_rows(*, d: int = 2, T: int = 25, steps: int = 600, Ns=(1, 8), ks=(0.0, 5.0), seed: int = 0,
                 model: str = "lsa", n_test: int = 500, step_ladder=(200, 1800),
                 with_transformer: bool = True, device=None) -> list[dict]:
    """Regret-loss with the simplex head on the online box distribution: held-out regret against tuned Hedge,
    and the same model on the alternating (FTL-killing) family; the models train on ``device``."""
    import torch

    from .regret_loss import sample_training_losses

    cfg0 = RegretLossConfig(d=d, T=T, model=model, head="simplex", distribution="uniform_box", h="relu2",
                            steps=steps, batch=256)
    gen = torch.Generator().manual_seed(seed + 99)
    L_test = sample_training_losses(cfg0, n_test, gen).cpu().numpy()
    L_tune = sample_training_losses(cfg0, n_test, gen).cpu().numpy()
    eta, _ = tuned_hedge_eta(L_tune, np.geomspace(0.05, 200.0, 37))
    hedge_test = float(run_online(Hedge(eta=eta), L_test).final_regret.mean())
    alt = loss_sequences("alternating", T=T, d=d, n_seeds=1)
    hedge_alt = run_online(Hedge(eta=eta), alt)
    ftl_alt = run_online(FTL(), alt)
    out = [{"model": f"tuned Hedge (η = {eta:.3g})", "N": "–", "k": "–", "test_regret": hedge_test, "ratio": 1.0,
            "alt_regret_over_T": float(hedge_alt.regret[0, -1] / T), "worst_of_N": math.nan},
           {"model": "FTL", "N": "–", "k": "–", "test_regret": float(run_online(FTL(), L_test).final_regret.mean()),
            "ratio": math.nan, "alt_regret_over_T": float(ftl_alt.regret[0, -1] / T), "worst_of_N": math.nan}]
    runs = [(model, N, k, steps) for N in Ns for k in ks if not (N == 1 and k > 0)]  # k weighs the N sequences
    runs += [(model, 1, 0.0, s) for s in step_ladder]
    runs += [("transformer", 1, 0.0, steps)] if with_transformer else []
    for name, N, k, n_steps in runs:
        res = train_regret_loss(cfg0, seed=seed, N=N, k=k, steps=n_steps, model=name, device=device)
        test = run_online(res.agent(), L_test)
        worst = test.final_regret[: (n_test // 8) * 8].reshape(-1, 8).max(axis=1).mean()
        alt_run = run_online(res.agent(), alt)
        out.append({"model": f"regret-loss {name}", "N": N, "k": k, "steps": n_steps,
                    "test_regret": float(test.final_regret.mean()),
                    "ratio": float(test.final_regret.mean() / hedge_test),
                    "alt_regret_over_T": float(alt_run.regret[0, -1] / T), "worst_of_N": float(worst)})
    return out


def loglog_slope(Ts, regrets) -> float:
    """Slope of ``log Regret_T`` against ``log T`` across horizons (1 = linear regret, 0.5 = √T); NaN when a
    regret is not positive."""
    r = np.asarray(regrets, dtype=np.float64)
    if np.any(r <= 0) or not np.all(np.isfinite(r)):
        return math.nan
    return float(np.polyfit(np.log(np.asarray(Ts, dtype=np.float64)), np.log(r), 1)[0])


def horizon_rows(*, Ts=(25, 50, 100, 200), d: int = 2, steps: int = 300, seed: int = 0, model: str = "lsa",
                 batch: int = 256, n_tune: int = 256, device=None) -> tuple[list[dict], dict]:
    """The regret-loss on the regrettable (alternating) sequence across horizons, against both Hedge tunings.

    For each horizon ``T`` a model is trained with the regret-loss (simplex head, h = relu², N = 1) on the
    online box distribution at that ``T`` and played on the alternating sequence, beside Hedge with the
    horizon-tuned rate ``η = sqrt(8 ln d / T)`` (the worst-case rate, which needs no data), Hedge with the rate
    tuned on the training distribution, and FTL. Returns one row per (agent, T) with ``Regret_T / T`` and, per
    agent, the slope of ``log Regret_T`` in ``log T`` across the horizons. The models train on ``device``
    (``None``: ``$ICLR25_DEVICE`` or ``auto``).
    """
    import torch

    from .regret_loss import sample_training_losses

    regrets: dict[str, list[float]] = {}
    rows = []
    for T in Ts:
        cfg = RegretLossConfig(d=d, T=T, model=model, head="simplex", distribution="uniform_box", h="relu2",
                               steps=steps, batch=batch)
        L_tune = sample_training_losses(cfg, n_tune, torch.Generator().manual_seed(seed + 99)).cpu().numpy()
        eta_dist, _ = tuned_hedge_eta(L_tune, np.geomspace(0.05, 200.0, 25))
        res = train_regret_loss(cfg, seed=seed, device=device)
        alt = loss_sequences("alternating", T=T, d=d, n_seeds=1)
        agents = {f"regret-loss {model}": res.agent(), "Hedge, horizon-tuned η": Hedge(),
                  "Hedge, distribution-tuned η": Hedge(eta=eta_dist), "FTL": FTL()}
        for name, agent in agents.items():
            r = float(run_online(agent, alt).regret[0, -1])
            regrets.setdefault(name, []).append(r)
            eta = agent.eta_ if isinstance(agent, Hedge) else math.nan
            rows.append({"agent": name, "T": T, "steps": steps if name.startswith("regret-loss") else "–",
                         "eta": eta, "regret": r, "regret_over_T": r / T})
    slopes = {name: loglog_slope(Ts, r) for name, r in regrets.items()}
    return rows, slopes
