"""The paper's claims that this package checks, declared once for tests, ``repro`` and the README table.

Each measuring function runs one seed: the seed draws the loss sequences (50 runs per family), the random
zero-sum games, and the regret-loss model's initialisation and training data.

- ``ftl-linear-regret``: Follow-the-Leader has linear regret on the alternating ("regrettable") sequence;
- ``no-regret-baselines-sublinear``: Hedge and FTPL pass the paper's regret statistics on every family
  (trend-test p-value and log-log slope β̂₀ < 1);
- ``hedge-beats-uniform``: Hedge's Regret/T is far below the do-nothing uniform policy's;
- ``self-play-nash``: Hedge self-play in zero-sum games reaches the game's value (no-regret → equilibrium);
- ``regret-loss-recovers-ftrl``: minimising the regret-loss on single-layer linear self-attention gives
  bV ≈ −cI, a step of gradient descent on the cumulative loss (the paper's optimisation theorem);
- ``regret-loss-sublinear-on-regrettable``: regret-loss models have sublinear regret on the alternating
  sequence across horizons 25-200 (slope below horizon-tuned Hedge's; FTL's is 1);
- ``regret-loss-beats-hedge-on-regrettable`` (expected to fail): at T = 25 the model's regret on that
  sequence is below horizon-tuned Hedge's. It is not: the ladder and ablation are in the README.

Rungs: ``test`` (seeds 0-2), ``repro`` (seeds 0-19) and ``paper`` (seeds 0-19; ``iclr25 claims llm-regret --rung paper
--estimate``): the regret-loss at the paper's model class (:data:`PAPER_LSA`, :data:`PAPER_HORIZONS`). The models
train on ``$ICLR25_DEVICE`` (``iclr25 claims llm-regret --device``), else ``auto``.
"""

from __future__ import annotations

from iclr25.utils.claims import Claim, ClaimRegistry, Measurement, RungCost, smoke_run

__all__ = ["REGISTRY", "PAPER_LSA", "PAPER_HORIZONS"]

#: the paper rung's theorem check: single-layer linear self-attention at d = 5, T = 25, batch 4096, 4,500 Adam steps
#: (the paper notes' E4 setting: d in {2, 5}, T <= 25, batch 4096)
PAPER_LSA = {"d": 5, "T": 25, "batch": 4096, "steps": 4500}
#: its horizon ladder: the multi-layer GPT-2-style transformer of the paper's Sec. 5.3 (2 layers, width 32, 2 heads)
#: trained by the regret-loss at each horizon, 2,000 steps of batch 512
PAPER_HORIZONS = {"model": "transformer", "steps": 2000, "batch": 512}

#: the repro rung decides on 20 seeds: the main claim ``regret-loss-sublinear-on-regrettable`` is a mean effect
#: (calibration seeds 100-109) that a 95 % interval resolves at 20 seeds, not at 5 (issue 58); so does the paper rung
REGISTRY = ClaimRegistry(
    "iclr25-llm-regret", seeds={"test": (0, 1, 2), "repro": tuple(range(20)), "paper": tuple(range(20))},
    costs={"paper": RungCost(
        gpu_hours=0.05, memory_gb=2, hardware="one CUDA GPU of any size",
        what="the regret-loss at the paper's model class: single-layer linear self-attention at d = 5, T = 25, "
             "batch 4096, 4,500 Adam steps (the theorem's bV = -cI), and a 2-layer GPT-2-style transformer (width "
             "32, 2 heads) trained at each horizon T = 25-200, 2,000 steps of batch 512, on the regrettable "
             "sequence; float64. The paper's own sizes are not in its notes. Estimated, not measured on a GPU: "
             "~12,500 launch-bound Adam steps per seed at <= 15 ms; on one CPU core a seed takes ~1.5 h (--force)",
        data="nothing to provide: the loss sequences are generated (the paper's GPT-4 runs need an endpoint: "
             "iclr25 llm-regret run --agent llm)")})

_T, _D, _RUNS = 200, 2, 50


@REGISTRY.measures(
    Claim("ftl-linear-regret", kind="secondary", statement="Follow-the-Leader has linear regret on the alternating loss sequence",
          paper="FTL fails on (1/2, 0), (0, 1), (1, 0), ... (the regrettable case, §3)",
          metric="FTL Regret/T, alternating, T = 200", direction="higher", threshold=0.4, rule="every_seed",
          seed_free=True,
          note="seed-free: the sequence and FTL are deterministic (0.499 at every seed), so it is decided once; "
               "the sequence makes FTL lose 1/2 per round; 0.4 is the 'clearly linear' bound, 0.1 below it"),
    Claim("hedge-sublinear-on-regrettable", kind="sanity", statement="Hedge with its horizon-tuned rate has "
          "sublinear regret on the alternating sequence, where FTL is linear",
          paper="β̂₀ < 1 for FTRL (Table 1) on the regrettable case (§3.4)",
          metric="Hedge's log-log slope β̂₀ of Regret_t, alternating, T = 200", direction="lower",
          threshold=0.8, rule="every_seed", seed_free=True,
          note="seed-free: Hedge and the sequence are deterministic (0.72 at every seed), decided once; until "
               "0.5.0 this value was the maximum of no-regret-baselines-sublinear at every seed"),
    Claim("no-regret-baselines-sublinear", kind="sanity", statement="Hedge and FTPL have sublinear regret on every loss family "
          "(the paper's regression test, β̂₀ < 1)", paper="β̂₀ < 1 and trend p < 0.05 for FTRL/FTPL (Table 1)",
          metric="worst log-log slope β̂₀ over 5 families × {Hedge, FTPL} but Hedge on the deterministic "
                 "alternating sequence (hedge-sublinear-on-regrettable), T = 200", direction="lower",
          threshold=0.8, rule="every_seed",
          note="every value here depends on the seed (random families, FTPL's perturbations); bound 0.8 as "
               "before 0.5.0; CALIBRATION"),
    Claim("no-regret-trend-test", kind="sanity", statement="the trend test rejects 'no decreasing Regret_t/t' for Hedge and "
          "FTPL on every family", paper="p < 0.05 (trend check, §3.1)",
          metric="worst trend-test p-value over 5 families × {Hedge, FTPL}", direction="lower", threshold=0.01,
          rule="every_seed", note="worst p 4e-11 (seed 0) to 8e-23 over seeds 0-4; 0.01 is five times stricter than the paper's 0.05"),
    Claim("hedge-beats-uniform", kind="sanity", statement="Hedge's regret is far below that of the uniform (do-nothing) policy",
          metric="Regret/T, uniform family with random means", direction="lower", baseline="uniform policy",
          margin=0.05, rule="every_seed",
          note="Hedge 0.020-0.021 vs uniform 0.10-0.15 (seeds 0-4, gaps 0.083-0.126); margin 0.05 is 60 % of the "
               "smallest gap"),
)
def _online(seed: int, rung: str) -> dict[str, Measurement | float]:
    from .agents import FTL, FTPL, Hedge, Uniform
    from .environments import FAMILIES, loss_sequences
    from .online import run_online
    from .stats import regret_statistics

    worst_beta, worst_p, out = -1.0, 0.0, {}
    for i, family in enumerate(FAMILIES):
        L = loss_sequences(family, T=_T, d=_D, n_seeds=_RUNS, seed=1000 * seed + i)
        for make in (Hedge, FTPL):
            st = regret_statistics(run_online(make(), L, seed=seed).regret, n_boot=0, seed=seed)
            worst_p = max(worst_p, st.trend.p_value)
            if family == "alternating" and make is Hedge:  # deterministic: its own seed-free claim
                out["hedge-sublinear-on-regrettable"] = st.slope.beta
            else:
                worst_beta = max(worst_beta, st.slope.beta)
        if family == "alternating":
            out["ftl-linear-regret"] = regret_statistics(run_online(FTL(), L).regret, n_boot=0).regret_over_T
        if family == "uniform":
            hedge = regret_statistics(run_online(Hedge(), L, seed=seed).regret, n_boot=0).regret_over_T
            unif = regret_statistics(run_online(Uniform(), L, seed=seed).regret, n_boot=0).regret_over_T
            out["hedge-beats-uniform"] = Measurement(hedge, reference=unif)
    out["no-regret-baselines-sublinear"] = worst_beta
    out["no-regret-trend-test"] = worst_p
    return out


@REGISTRY.measures(
    Claim("self-play-nash", kind="secondary", statement="Hedge self-play in zero-sum games converges to the game's value",
          paper="no-regret play → equilibrium (§3.2)", metric="worst |value of the averaged play − Nash value| "
          "over rock-paper-scissors and 3 random 3×3 games, T = 2000", direction="lower", threshold=0.05,
          rule="every_seed", note="worst error 0.0017-0.0106 over seeds 0-4; 0.05 (the issue's bound) is 4x the worst seed"),
)
def _games(seed: int, rung: str) -> dict[str, float]:
    import nashpy

    from .games import classic_game, play, random_zero_sum

    worst = 0.0
    for g in [classic_game("rock_paper_scissors")] + [random_zero_sum(3, 3, seed=10 * seed + i) for i in range(3)]:
        x, y = play(g, T=2000, seed=seed).average_policies()
        A = g.losses[0]
        eq = next(iter(nashpy.Game(-A).support_enumeration()))  # nashpy maximises payoffs: payoff = -loss
        worst = max(worst, abs(float(x @ A @ y) - float(eq[0] @ A @ eq[1])))
    return {"self-play-nash": worst}


@REGISTRY.measures(
    Claim("regret-loss-recovers-ftrl", kind="main", statement="minimising the regret-loss on single-layer linear "
          "self-attention gives bV = −cI (one step of gradient descent on the cumulative loss)",
          paper="Theorem (optimisation of the regret-loss, §5)", metric="relative distance of bV to −cI, d = 2, "
          "T = 10, 1500 Adam steps", direction="lower", threshold=0.1, rule="every_seed",
          note="0.018, 0.028, 0.035, 0.057, 0.043 at seeds 0-4 (mean 0.036, sd 0.015); 0.1 is about 3 sd above "
               "the worst seed"),
)
def _lsa(seed: int, rung: str) -> dict[str, float]:
    from iclr25.utils.cli import set_torch_threads

    from .regret_loss import lsa_structure, train_regret_loss

    set_torch_threads(1)
    size = {"d": 2, "T": 10, "steps": 1500, "batch": 1024} if rung != "paper" else dict(PAPER_LSA)
    if smoke_run():  # one Adam step of the rung's model
        size |= {"steps": 1, "batch": 8}
    res = train_regret_loss(**size, seed=seed)
    return {"regret-loss-recovers-ftrl": lsa_structure(res.model).rel_distance}


#: the regret-loss horizon ladder of the claims: a model per horizon, LSA with the simplex head
HORIZONS, HORIZON_STEPS, HORIZON_BATCH = (25, 50, 100, 200), 150, 128


@REGISTRY.measures(
    Claim("regret-loss-sublinear-on-regrettable", kind="main", statement="a model trained with the regret-loss has sublinear "
          "regret on the regrettable (alternating) sequence, where FTL and Hedge tuned on the training "
          "distribution are linear", paper="regret-loss fixes the regrettable cases where GPT-4 fails (§5.3)",
          metric="slope of log Regret_T in log T over T = 25, 50, 100, 200 (a linear self-attention model "
                 "trained by the regret-loss at each T, 150 steps), alternating sequence",
          direction="lower", baseline="Hedge with the horizon-tuned rate (slope ≈ 0.47)", margin=0.1,
          rule="mean_ci", rungs=("repro", "paper"), min_seeds=20,
          note="margin 0.1 as before 0.5.0 (FTL and distribution-tuned Hedge: 1.01). Calibration seeds 100-109 "
               "(the test rung's configuration is the repro rung's): model slopes -0.15 to 0.49, mean gap to "
               "Hedge 0.29, sd 0.21; two of ten at or above Hedge's 0.47, so it cannot hold at every seed (it "
               "failed at 2 of 8 unseen seeds, issue 58). Decided by the mean's 95 % interval at 20 seeds, the "
               "number at which margin 0.1 passes with probability >= 95 % (max_margin 0.11 at 20 seeds, 0.02 at "
               "10, -0.17 at 5: claims-calibration.json); repro rung only"),
    Claim("regret-loss-beats-hedge-on-regrettable", kind="secondary", statement="on the regrettable sequence, the regret-loss "
          "model's regret is below that of Hedge with its horizon-tuned (worst-case) rate",
          paper="the issue's T = 25 comparison (the README of 0.2.0 compared only with distribution-tuned Hedge, "
                "which collapses to FTL)",
          metric="Regret_T / T at T = 25, alternating, linear self-attention trained by the regret-loss (150 steps)",
          direction="lower", baseline="Hedge with the horizon-tuned rate η = sqrt(8 ln 2 / 25)", rule="every_seed",
          expect="fails", ladder="README.md#the-regret-loss-on-the-regrettable-sequence-across-horizons",
          note="0.098, 0.21, 0.17 at seeds 0-2 vs 0.066 (worse at every seed); the horizon and budget ladder and "
               "the model-class ablation are in the README"),
)
def _horizons(seed: int, rung: str) -> dict[str, Measurement]:
    from iclr25.utils.cli import set_torch_threads

    from .experiments import horizon_rows

    set_torch_threads(1)
    size = {"steps": HORIZON_STEPS, "batch": HORIZON_BATCH} if rung != "paper" else dict(PAPER_HORIZONS)
    if smoke_run():  # one Adam step of the rung's model per horizon
        size |= {"steps": 1, "batch": 8}
    rows, slopes = horizon_rows(Ts=HORIZONS, **size, seed=seed)
    hedge = "Hedge, horizon-tuned η"
    model = next(k for k in slopes if k.startswith("regret-loss"))
    at = {(r["agent"], r["T"]): r["regret_over_T"] for r in rows}
    extra = {f"{name} slope": slopes[name] for name in slopes}
    extra |= {f"{name} Regret/T at T={T}": at[(name, T)] for name in slopes for T in HORIZONS}
    return {"regret-loss-sublinear-on-regrettable": Measurement(slopes[model], reference=slopes[hedge],
                                                                extra=extra),
            "regret-loss-beats-hedge-on-regrettable": Measurement(at[(model, HORIZONS[0])],
                                                                  reference=at[(hedge, HORIZONS[0])], extra=extra)}
