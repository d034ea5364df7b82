"""The paper's claims that this package checks, declared once for the tests, ``repro`` and the README table.

Each measuring function takes ``(seed, rung)`` and trains from scratch with that seed: the network's
initialisation, the training draws, the evaluation draws and (for MIS) the graph data set all change with the
seed. ``rung="test"`` is the default test suite's scale (3 seeds, within its 90 s budget); ``rung="repro"``
trains longer, draws more and runs 5 seeds (``iclr25 sdds repro`` writes ``claims.json`` from it);
``rung="paper"`` (seeds 0-2, for a GPU: ``iclr25 claims sdds --rung paper --estimate``) runs the paper's
configurations (:data:`PAPER`), and ``--smoke`` runs its code path once at a CPU size (:data:`PAPER_SMOKE`). Every
measuring function computes on ``$ICLR25_DEVICE`` (``iclr25 claims sdds --device``), else ``auto``.

Margins are set on calibration seeds disjoint from the decision seeds (each ``Claim.note`` says which):
``claims-calibration.json`` (test rung, seeds 100-109) and ``claims-calibration-repro.json`` (repro-only claims,
``iclr25 claims sdds --calibrate --rung repro --only ID,...``; the SN-NIS entry from
``iclr25 claims sdds --calibrate --rung repro --only ID,...``); ``tests/test_claims.py`` decides every test-rung claim with
:meth:`ClaimRegistry.pytest_test` and checks the committed files with :meth:`ClaimRegistry.pytest_committed_test`.
A seed whose SN-NIS estimate has an ESS fraction below ``MIN_ESS_FRACTION`` is not alive (never holds).

References: Sanokowski et al., ICLR 2025: Sec. 3 and Fig. 1 (memory), Sec. 4 (SN-NIS, neural MCMC), Sec. 5
(unsupervised CO).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

from iclr25.utils.claims import Claim, ClaimRegistry, Measurement, RungCost, smoke_run
from iclr25.utils.device import default_device

__all__ = ["REGISTRY", "RUNGS", "MIS_GRAPHS", "MIS_CONFIG", "PAPER", "PAPER_SMOKE", "trained_ising", "trained_mis"]

#: The paper rung: the paper's configurations (Sanokowski et al., ICLR 2025, App. C; the repository's argparse
#: configs), on this package's networks. Critical Ising 24x24, 300 "exp" diffusion steps, 200 samples per epoch,
#: lr 5e-4, T 4 -> T_c over 450 annealing epochs (+50 at T_c), step minibatches 100 (fKL) / 10 (PPO), the lattice
#: CNN (3 x 64) in place of the paper's one-layer U-Net. MIS at RB-small's size (200-300 nodes; an Erdos-Renyi
#: stand-in of mean degree 6 for the RB generator), 8 GNN layers x 64, batches of 30 graphs x 10 samples, T0 0.1 ->
#: 0 over 2500 epochs, DiffUCO 6 steps vs SDDS 12. The memory claims stay at the repro rung (an XLA buffer
#: analysis of the compiled step, whatever the scale).
PAPER: dict[str, Any] = dict(
    ising_L=24, ising_steps=300, ising_samples=200, ising_epochs=500, ising_anneal=450, ising_hidden=64,
    ising_layers=3, ising_lr=5e-4, fkl_minibatch=100, ppo_minibatch=10, n_eval=16384, n_mcmc=65536, burn_in=32,
    mis_graphs=dict(n_graphs=600, n_min=200, n_max=300, mean_degree=6.0), mis_test=100, mis_steps=6,
    mis_hidden=64, mis_layers=8, mis_graphs_per_batch=30, mis_samples=10, mis_epochs=2500, mis_lr=1e-3,
    ar_hidden=256, ar_max_epochs=4000)
#: ``iclr25 claims sdds --rung paper --smoke``: the paper rung's code path for one epoch at a size the CPU finishes
#: in seconds: the test rung's 4x4 sampler (the same compiled programs: JAX's compilation cache serves them) and
#: three 10-14-node graphs
PAPER_SMOKE: dict[str, Any] = dict(
    ising_L=4, ising_steps=16, ising_samples=64, ising_epochs=1, ising_anneal=1, ising_hidden=16, ising_layers=1,
    ising_lr=5e-3, fkl_minibatch=4, ppo_minibatch=4, n_eval=4096, n_mcmc=4096, burn_in=8,
    mis_graphs=dict(n_graphs=3, n_min=10, n_max=14, mean_degree=3.0), mis_test=1, mis_steps=2, mis_hidden=8,
    mis_layers=1, mis_graphs_per_batch=2, mis_samples=2, mis_epochs=1, mis_lr=1e-3, ar_hidden=8, ar_max_epochs=1)

PAPER_COST = RungCost(
    gpu_hours=6.0, memory_gb=20, hardware="one 80 GB GPU (A100/H100)",
    what="the paper's configurations: fKL and PPO samplers on the 24x24 critical Ising model (300 steps, 200 "
         "samples, 500 epochs) with SN-NIS on 16,384 and neural MCMC on 65,536 draws, the autoregressive baseline "
         "for the same wall time, and MIS at RB-small's size (600 graphs of 200-300 nodes; SDDS 12 steps vs "
         "DiffUCO 6, 8 GNN layers x 64, 2,500 epochs of 30 graphs x 10 samples) with MILP optima. Estimated, not "
         "measured: one epoch costs about samples x steps x nodes (Ising: 35 M node-steps, 500 epochs, three "
         "trainings; MIS: 0.9 M, 2,500 epochs, two trainings), at ~10^9 node-steps per GPU-minute for these small "
         "networks about 2 GPU-hours of training and 1 of sampling per seed, doubled for the autoregressive run "
         "and compilation; plus ~1 CPU-hour of HiGHS for 100 MILP optima",
    data="nothing to provide: the lattices and graphs are generated here (an Erdos-Renyi stand-in for the RB "
         "generator at RB-small's node counts)")

REGISTRY = ClaimRegistry("iclr25-sdds", seeds={"test": (0, 1, 2), "repro": (0, 1, 2, 3, 4), "paper": (0, 1, 2)},
                         costs={"paper": PAPER_COST})


def _paper() -> dict[str, Any]:
    """The paper rung's sizes (:data:`PAPER`), or :data:`PAPER_SMOKE` in a smoke run."""
    return PAPER_SMOKE if smoke_run() else PAPER

#: Per rung: fKL training epochs on the 4x4 lattice, SN-NIS draws, neural-MCMC proposals (64 chains of
#: ``n_mcmc / 64`` states; the first ``n_eval`` are the SN-NIS draws) and its burn-in, MIS training epochs.
#: The repro rung runs the chains 4x longer than its SN-NIS draws: at 255 states per chain a sampler whose
#: importance weights are concentrated (low ESS) leaves the chains near their q-distributed first states, and
#: the estimate near the raw draws' (README, "Neural MCMC").
RUNGS: dict[str, dict[str, int]] = {
    "test": {"ising_epochs": 200, "n_eval": 4096, "n_mcmc": 4096, "burn_in": 8, "mis_epochs": 100},
    "repro": {"ising_epochs": 200, "n_eval": 16384, "n_mcmc": 65536, "burn_in": 32, "mis_epochs": 100},
    "paper": {k: PAPER[k] for k in ("ising_epochs", "n_eval", "n_mcmc", "burn_in", "mis_epochs")},
}

#: neural-mcmc-corrects-the-sampler: the 95 % interval of the mean of 1 - ratio must clear this (set on calibration
#: seeds 100-109)
NMCMC_MARGIN = 0.1
#: sn-nis-beats-the-variational-bound: set on calibration seeds 100-109 at the repro rung
SNNIS_MARGIN = 0.03
#: mis-beats-the-no-model-decode: set on calibration seeds at the repro rung (0.6.0: 0.027, a third of the smallest
#: improvement at seeds 0-4, above the max_margin 0.020 of calibration seeds 100-104)
MIS_MARGIN = 0.02
#: sdds-beats-diffuco-on-mis: margin 0 (the claim is "larger sets than DiffUCO"), its rule checked on calibration
#: seeds 100-104 at the repro rung
MIS_DIFFUCO_MARGIN = 0.0


ISING_L = 4
#: MIS data set: ``n_graphs`` ER graphs (the last 10 held out for testing); the seed of each claim run replaces
#: ``seed``.
MIS_GRAPHS: dict[str, Any] = dict(n_graphs=40, n_min=20, n_max=30, mean_degree=6.0)
MIS_CONFIG: dict[str, Any] = dict(objective="rkl_rl", n_steps=4, hidden=16, n_layers=2, n_random_features=3,
                                  n_samples=8, instances_per_batch=4, learning_rate=2e-3, temperature=0.0,
                                  temperature_start=0.4, step_minibatch=4, schedule="diffuco", ppo_epochs=2)
N_MIS_TEST = 10


def _rung(rung: str) -> dict[str, int]:
    if rung not in RUNGS:
        raise ValueError(f"unknown rung {rung!r}; rungs: {sorted(RUNGS)}")
    if rung == "paper" and smoke_run():
        return {k: PAPER_SMOKE[k] for k in RUNGS["paper"]}
    return RUNGS[rung]


def _ising_l(rung: str) -> int:
    return _paper()["ising_L"] if rung == "paper" else ISING_L


def trained_ising(seed: int, rung: str = "test", symmetric: bool = False) -> Any:
    """The demo's fKL w/ MC configuration (plain network; ``symmetric=True``: the spin-flip-symmetric one, as in
    ``repro``) trained on the 4x4 critical Ising model; at the paper rung, the paper's 24x24 configuration
    (:data:`PAPER`). Trained on ``$ICLR25_DEVICE`` (``auto``: a GPU when JAX sees one); memoised per device and
    smoke run, as the registry's own cache is."""
    return _trained_ising(seed, rung, symmetric, default_device(), smoke_run())


@functools.lru_cache(maxsize=8)
def _trained_ising(seed: int, rung: str, symmetric: bool, device: str, smoke: bool) -> Any:
    import jax  # noqa: PLC0415

    from .demo import DEMO_CONFIG  # noqa: PLC0415
    from .energy import IsingEnergy  # noqa: PLC0415
    from .objectives import train  # noqa: PLC0415

    config = dataclasses.replace(DEMO_CONFIG, n_epochs=_rung(rung)["ising_epochs"], symmetric=symmetric)
    if rung == "paper":
        P = _paper()
        config = dataclasses.replace(config, n_steps=P["ising_steps"], n_samples=P["ising_samples"],
                                     hidden=P["ising_hidden"], n_layers=P["ising_layers"],
                                     learning_rate=P["ising_lr"], n_anneal=P["ising_anneal"],
                                     step_minibatch=P["fkl_minibatch"])
    return train(config, IsingEnergy(_ising_l(rung)), jax.random.key(seed), show_progress=False, device=device)


def trained_mis(seed: int, rung: str = "test", objective: str = "rkl_rl", n_steps: int | None = None
                ) -> tuple[Any, list, Any]:
    """A GNN sampler (``MIS_CONFIG``: rkl_rl with 4 steps, unless ``objective``/``n_steps`` say otherwise) trained
    on 30 small ER graphs of the seed's data set; returns it with the 10 held-out graphs and their
    :class:`MISEnergy`. At the paper rung: RB-small's sizes and the paper's GNN and batches (:data:`PAPER`).
    Trained on ``$ICLR25_DEVICE`` (``auto``), memoised per device and smoke run."""
    return _trained_mis(seed, rung, objective, n_steps, default_device(), smoke_run())


@functools.lru_cache(maxsize=8)
def _trained_mis(seed: int, rung: str, objective: str, n_steps: int | None, device: str, smoke: bool
                 ) -> tuple[Any, list, Any]:
    import jax  # noqa: PLC0415

    from .diffusion import SamplerConfig  # noqa: PLC0415
    from .energy import MISEnergy  # noqa: PLC0415
    from .graphs import random_graphs  # noqa: PLC0415
    from .objectives import train  # noqa: PLC0415

    spec, n_test, base = MIS_GRAPHS, N_MIS_TEST, MIS_CONFIG
    if rung == "paper":
        P = _paper()
        spec, n_test = P["mis_graphs"], P["mis_test"]
        base = {**MIS_CONFIG, "hidden": P["mis_hidden"], "n_layers": P["mis_layers"], "n_samples": P["mis_samples"],
                "instances_per_batch": P["mis_graphs_per_batch"], "learning_rate": P["mis_lr"],
                "temperature_start": 0.1, "step_minibatch": P["ppo_minibatch"], "n_steps": 2 * P["mis_steps"]}
    graphs = random_graphs(**spec, seed=seed)
    n_train = spec["n_graphs"] - n_test
    e_train = MISEnergy.from_graphs(graphs[:n_train], n_nodes=spec["n_max"])
    e_test = MISEnergy.from_graphs(graphs[n_train:], n_nodes=spec["n_max"])
    over = {"objective": objective} | ({} if n_steps is None else {"n_steps": n_steps})
    config = SamplerConfig(**{**base, **over}, n_epochs=_rung(rung)["mis_epochs"])
    sampler = train(config, e_train, jax.random.key(seed), show_progress=False, device=device)
    return sampler, graphs[n_train:], e_test


@REGISTRY.measures(
    Claim("sn-nis-beats-the-variational-bound",
          statement="SN-NIS with a trained diffusion sampler estimates the free energy far better than the "
                    "sampler's own (biased) variational bound",
          paper="F rel. error <= 1e-3 and >= 5x below the bound (note: L = 6)",
          metric="|F_SN-NIS / F_exact - 1|, 4x4 Ising at beta_c, fKL w/ MC, spin-flip-symmetric network",
          baseline="variational bound of the same sampler", direction="lower", rule="every_seed",
          margin=SNNIS_MARGIN, kind="main", rungs=("repro", "paper"),
          note=f"margin {SNNIS_MARGIN:g} <= max_margin 0.034 from calibration seeds 100-109 at the repro rung "
               "(claims-calibration-repro.json, `iclr25 claims sdds --calibrate --rung repro --only ...`); a seed is alive when the ESS fraction is >= 0.1 "
               "(the estimator's own reliability bound), which the demo's plain network misses at every seed "
               "(ESS/M 0.0003-0.086), hence the symmetric network and the repro rung's 16384 draws; the 1e-3 "
               "target is not a claim here (README)"),
)
def _sn_nis(seed: int, rung: str) -> dict[str, Measurement]:
    import jax  # noqa: PLC0415

    from .energy import IsingEnergy  # noqa: PLC0415
    from .estimators import MIN_ESS_FRACTION, estimate  # noqa: PLC0415
    from .exact import BETA_CRITICAL, exact_ising  # noqa: PLC0415

    n_eval, L = _rung(rung)["n_eval"], _ising_l(rung)
    sampler = trained_ising(seed, rung, symmetric=True)
    exact = exact_ising(L, BETA_CRITICAL)
    draws = sampler.sample(n_eval, key=jax.random.fold_in(jax.random.key(seed), 1))
    est = estimate(sampler, IsingEnergy(L), BETA_CRITICAL, n_eval, seed=seed, n_bootstrap=50, samples=draws)
    f = exact.free_energy
    # the estimate's own sanity check: below MIN_ESS_FRACTION, SN-NIS is unreliable and the seed is not evidence
    return {"sn-nis-beats-the-variational-bound": Measurement(
        abs(est.free_energy / f - 1), reference=abs(est.variational_free_energy / f - 1),
        extra={"ess_fraction": est.ess_fraction, "free_energy_se_rel": est.free_energy_se / abs(f)},
        alive=bool(est.ess_fraction >= MIN_ESS_FRACTION))}


@REGISTRY.measures(
    Claim("neural-mcmc-corrects-the-sampler",
          statement="Neural MCMC with the diffusion sampler as proposal removes the sampler's bias in the "
                    "internal energy",
          paper="U within 3 SE of exact (note)",
          metric="|U_NMCMC - U_exact| / |U_raw - U_exact|: the share of the raw draws' bias left by neural MCMC, "
                 "4x4 Ising at beta_c",
          threshold=1.0, direction="lower", rule="mean_ci", margin=NMCMC_MARGIN, kind="main",
          note=f"rule mean_ci, margin {NMCMC_MARGIN:g} <= max_margin 0.14 from calibration seeds 100-109 (test rung, "
               "claims-calibration.json): the mean share of the raw draws' bias left by neural MCMC is below 0.9 "
               "with 95 % confidence. With every_seed and margin 0.4 (max_margin 0.48 on the calibration seeds) the "
               "repro rung failed at seed 2 (0.63: the chains stuck near their first states, README); the "
               "difference of the two errors (0.1.x-0.6.0's metric) had a skewed spread (max_margin -0.066)"),
)
def _ising(seed: int, rung: str) -> dict[str, Measurement]:
    import jax  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    from .energy import IsingEnergy  # noqa: PLC0415
    from .estimators import neural_mcmc  # noqa: PLC0415
    from .exact import BETA_CRITICAL, exact_ising  # noqa: PLC0415

    r = _rung(rung)
    sampler = trained_ising(seed, rung)
    energy = IsingEnergy(_ising_l(rung))
    exact = exact_ising(_ising_l(rung), BETA_CRITICAL)
    # one set of independent draws, the chains' proposals
    draws = sampler.sample(r["n_mcmc"], key=jax.random.fold_in(jax.random.key(seed), 1))
    mc = neural_mcmc(sampler, energy, BETA_CRITICAL, n_chains=64, n_steps=r["n_mcmc"] // 64 - 1,
                     burn_in=r["burn_in"], seed=seed, samples=draws)
    raw_u = float(np.mean(energy(np.asarray(draws.x)))) / energy.n_nodes
    u = exact.internal_energy
    err, raw = abs(mc.internal_energy / u - 1), abs(raw_u / u - 1)
    return {"neural-mcmc-corrects-the-sampler": Measurement(
        err / raw, extra={"nmcmc_error": err, "raw_error": raw, "acceptance": mc.acceptance_rate,
                          "u_se_rel": mc.internal_energy_se / abs(u)})}


@REGISTRY.measures(
    Claim("mis-beats-the-no-model-decode",
          statement="Unsupervised CO: an rkl_rl (PPO) diffusion sampler trained without labels decodes larger "
                    "independent sets than the same decoder without a model",
          paper="MIS RB-small: rKL w/ RL 2.5 % from the optimum (mean CE)",
          metric="mean CE-decoded set size / MILP optimum, 10 held-out ER graphs",
          baseline="CE decode of all-zeros (no model)", direction="higher", rule="every_seed",
          margin=MIS_MARGIN, kind="sanity",
          note=f"margin {MIS_MARGIN:g} <= max_margin from calibration seeds 100-104 at the repro rung "
               "(claims-calibration-repro.json; 5 seeds: one seed costs > 15 s; 0.6.0's 0.027 was above it); "
               "decided at the repro rung only (3 MIS trainings, ~90 s of CPU, do not fit the default suite's "
               "budget beside the Ising claims)",
          rungs=("repro",)),
)
def _mis(seed: int, rung: str) -> dict[str, Measurement]:
    import numpy as np  # noqa: PLC0415

    from .decoding import decode_no_model  # noqa: PLC0415

    sampler, graphs, e_test = trained_mis(seed, rung)
    plain = np.array([decode_no_model(e_test, g).sum() for g in range(len(graphs))], float)
    return {"mis-beats-the-no-model-decode": Measurement(_mis_ratio(sampler, graphs, e_test, seed),
                                                         reference=float(np.mean(plain / _mis_optima(graphs))))}


def _mis_optima(graphs: list) -> Any:
    import numpy as np  # noqa: PLC0415

    from .exact import exact_mis  # noqa: PLC0415

    return np.array([exact_mis(n, edges).sum() for n, edges in graphs], float)


def _mis_ratio(sampler: Any, graphs: list, e_test: Any, seed: int) -> float:
    """Mean over the held-out graphs of the mean CE-decoded set size of 16 draws / the MILP optimum."""
    import jax  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    from .decoding import decode_ce  # noqa: PLC0415

    test_sampler = type(sampler)(sampler.model, sampler.config, e_test, sampler.history)
    sizes = [decode_ce(e_test, np.asarray(test_sampler.sample(
        16, key=jax.random.fold_in(jax.random.key(seed + 1000), g), index=g).x, np.float64), g).sum(1).mean()
        for g in range(len(graphs))]
    return float(np.mean(np.asarray(sizes) / _mis_optima(graphs)))


#: sdds-beats-diffuco-on-mis: DiffUCO with MIS_DIFFUCO_STEPS steps against rkl_rl with twice as many (the paper's
#: MIS protocol: 6 vs 12 steps at equal memory)
MIS_DIFFUCO_STEPS = 4


@REGISTRY.measures(
    Claim("sdds-beats-diffuco-on-mis",
          statement="Unsupervised CO: SDDS (rKL w/ RL, twice the diffusion steps in no more memory) finds larger "
                    "independent sets than DiffUCO, the previous diffusion-based solver",
          paper="MIS RB-small mean CE energy: rKL w/ RL -19.63 vs DiffUCO -19.42 (12 vs 6 steps); note: 20-30 "
                "node ER graphs here",
          metric=f"mean CE-decoded set size / MILP optimum, 10 held-out ER graphs (20-30 nodes), rkl_rl with "
                 f"{2 * MIS_DIFFUCO_STEPS} steps",
          baseline=f"DiffUCO (rKL w/o RL, backpropagation through the trajectory) with {MIS_DIFFUCO_STEPS} steps, "
                   "same GNN, graphs and samples",
          direction="higher", rule="mean_ci", margin=MIS_DIFFUCO_MARGIN, kind="main", rungs=("repro", "paper"),
          note=f"margin {MIS_DIFFUCO_MARGIN:g} (the claim itself: larger sets than DiffUCO, set before the "
               "calibration run), rule mean_ci (the paper's numbers are means over seeds); ok = margin <= "
               "max_margin on calibration seeds 100-104 at the repro rung (claims-calibration-repro.json, "
               "`iclr25 claims sdds --calibrate --rung repro --only ...`; 5 seeds: one seed trains two samplers, "
               "> 15 s). Equal samples (100 epochs x 4 graphs x 8 samples); extra holds min-degree greedy / "
               "optimum (the classical heuristic beside them) and both samplers' peak training memory"),
)
def _mis_diffuco(seed: int, rung: str) -> dict[str, Measurement]:
    import numpy as np  # noqa: PLC0415

    from .exact import greedy_mis  # noqa: PLC0415
    from .memory import peak_memory  # noqa: PLC0415

    steps = _paper()["mis_steps"] if rung == "paper" else MIS_DIFFUCO_STEPS  # the paper's 6 vs 12
    sdds, graphs, e_test = trained_mis(seed, rung, "rkl_rl", 2 * steps)
    diffuco = trained_mis(seed, rung, "diffuco", steps)[0]
    greedy = np.array([greedy_mis(n, edges).sum() for n, edges in graphs], float)
    extra = {"min_degree_greedy": float(np.mean(greedy / _mis_optima(graphs))),
             "sdds_memory_mib": peak_memory(sdds.config, sdds.energy) / 2**20,
             "diffuco_memory_mib": peak_memory(diffuco.config, diffuco.energy) / 2**20}
    return {"sdds-beats-diffuco-on-mis": Measurement(_mis_ratio(sdds, graphs, e_test, seed),
                                                     reference=_mis_ratio(diffuco, graphs, e_test, seed),
                                                     extra=extra)}


#: The autoregressive comparison: 6x6 critical Ising, the repro's protocol (rkl_rl 1 x 16, spin-flip symmetric,
#: 16 steps, 250 epochs x 64 samples; 8192 draws for SN-NIS), L = 6 being the largest lattice where both samplers'
#: ESS was above MIN_ESS_FRACTION in the repro table.
AR_L = 6
AR_LADDER = "README.md#what-reproduces-and-what-does-not-at-this-scale"


@REGISTRY.measures(
    Claim("diffusion-beats-autoregressive-on-ising",
          statement="On Ising benchmarks the diffusion samplers (SN-NIS with an SDDS-trained sampler) outperform "
                    "autoregressive samplers",
          paper="lower F, U, S errors than autoregressive (VAN-style) samplers, 24x24 Ising at beta_c (note: "
                "L = 6 here)",
          metric="|F_SN-NIS / F_exact - 1|, 6x6 Ising at beta_c, rkl_rl 1x16, 250 epochs x 64 samples",
          baseline="autoregressive (MADE, rKL) trained for rkl_rl's wall time, at most 2000 epochs x 64 samples",
          direction="lower", rule="every_seed", expect="fails", kind="main", rungs=("repro", "paper"),
          ladder=AR_LADDER,
          note="equal wall time on this CPU: the autoregressive epochs are so cheap that it sees up to 8x the "
               "samples in less time; extra holds both ESS fractions, both budgets and the equal-samples "
               "autoregressive error (the ablation); a seed is alive when the autoregressive estimate has "
               "ESS >= 0.1; margin 0"),
)
def _autoregressive(seed: int, rung: str) -> dict[str, Measurement]:

    from iclr25.utils.seeding import jax_key  # noqa: PLC0415

    from .autoregressive import train_autoregressive  # noqa: PLC0415
    from .diffusion import SamplerConfig  # noqa: PLC0415
    from .energy import IsingEnergy  # noqa: PLC0415
    from .estimators import MIN_ESS_FRACTION, estimate  # noqa: PLC0415
    from .exact import BETA_CRITICAL, exact_ising  # noqa: PLC0415
    from .objectives import train  # noqa: PLC0415
    from .repro import ReproScale, _EpochClock  # noqa: PLC0415

    _rung(rung)
    sc, L, lr, minibatch = ReproScale(), AR_L, 3e-3, 4
    if rung == "paper":  # the paper's 24x24 protocol (PAPER), the autoregressive network widened to match
        P = _paper()
        sc, L = dataclasses.replace(sc, ising_steps=P["ising_steps"], ising_samples=P["ising_samples"],
                                    ising_epochs=P["ising_epochs"], ising_hidden=P["ising_hidden"],
                                    ising_layers=P["ising_layers"], n_eval=P["n_eval"], ar_hidden=P["ar_hidden"],
                                    ar_max_epochs=P["ar_max_epochs"]), P["ising_L"]
        lr, minibatch = P["ising_lr"], P["ppo_minibatch"]
    energy, beta = IsingEnergy(L), BETA_CRITICAL
    exact = exact_ising(L, beta)
    cfg = SamplerConfig(objective="rkl_rl", n_steps=sc.ising_steps, hidden=sc.ising_hidden,
                        n_layers=sc.ising_layers, n_samples=sc.ising_samples, n_epochs=sc.ising_epochs,
                        learning_rate=lr, temperature_start=4.0, step_minibatch=minibatch,
                        ppo_epochs=sc.ising_ppo_epochs, symmetric=sc.ising_symmetric)
    clock = _EpochClock()
    diffusion = train(cfg, energy, jax_key(seed), callback=clock, show_progress=False)
    ar_kw = dict(temperature=1 / beta, temperature_start=4.0, n_samples=sc.ising_samples, hidden=sc.ar_hidden,
                 learning_rate=lr, key=jax_key(seed), show_progress=False)
    clock_s = _EpochClock()
    ar_samples = train_autoregressive(energy, n_epochs=sc.ising_epochs, callback=clock_s, **ar_kw)
    n_time = clock_s.epochs_for(clock.total, at_least=sc.ising_epochs, at_most=sc.ar_max_epochs)
    clock_t = _EpochClock()
    ar_time = train_autoregressive(energy, n_epochs=n_time, callback=clock_t, **ar_kw)

    def f_error(sampler):
        est = estimate(sampler, energy, beta, sc.n_eval, seed=seed, n_bootstrap=20,
                       samples=sampler.sample(sc.n_eval, key=jax_key(seed + 1)))
        return abs(est.free_energy / exact.free_energy - 1), est.ess_fraction

    (e_d, ess_d), (e_t, ess_t), (e_s, ess_s) = f_error(diffusion), f_error(ar_time), f_error(ar_samples)
    extra = {"diffusion_ess": ess_d, "ar_ess": ess_t, "diffusion_train_s": clock.total, "ar_train_s": clock_t.total,
             "ar_epochs": float(n_time), "ar_equal_samples_error": e_s, "ar_equal_samples_ess": ess_s}
    alive = bool(ess_t >= MIN_ESS_FRACTION and math.isfinite(e_d) and math.isfinite(e_t))
    return {"diffusion-beats-autoregressive-on-ising": Measurement(e_d, reference=e_t, extra=extra, alive=alive)}


_MEMORY_STEPS = (8, 64)


def _memory_ratios(rung: str) -> dict[str, float]:
    return _memory_ratios_on(rung, default_device())


@functools.lru_cache(maxsize=4)
def _memory_ratios_on(rung: str, device: str) -> dict[str, float]:
    from .diffusion import SamplerConfig  # noqa: PLC0415
    from .energy import IsingEnergy  # noqa: PLC0415
    from .memory import peak_memory  # noqa: PLC0415

    _rung(rung)
    energy = IsingEnergy(ISING_L)
    out = {}
    for objective in ("rkl_rl", "fkl_nis", "diffuco"):
        mem = [peak_memory(SamplerConfig(objective=objective, n_steps=t, hidden=16, n_layers=1, n_samples=64,
                                         step_minibatch=4), energy, device=device) for t in _MEMORY_STEPS]
        out[objective] = mem[1] / mem[0]
    return out


_MEMORY_NOTE = ("seed-free: XLA's temporary-buffer analysis of the compiled step does not depend on the seed (the "
                "same program for every initialisation), so it is decided once; measured x1.01 (SDDS) and x7.2 (DiffUCO) at L = 4 and 6; decided at the repro rung (six "
                "compilations, ~30 s, left out of the default suite's budget)")


@REGISTRY.measures(
    Claim("rkl-rl-memory-is-flat-in-steps",
          statement="rKL w/ RL (PPO over diffusion steps) trains with memory independent of the number of steps",
          paper="memory flat in steps (Fig. 1); note: <= 1.3x from 8 to 64 steps",
          metric="peak temporary memory of one training step, 64 steps / 8 steps", threshold=1.3,
          direction="lower", rule="every_seed", note=_MEMORY_NOTE, rungs=("repro",), kind="main",
          seed_free=True),
    Claim("fkl-mc-memory-is-flat-in-steps",
          statement="fKL w/ MC (SN-NIS forward KL) trains with memory independent of the number of steps",
          paper="memory flat in steps (Fig. 1); note: <= 1.3x from 8 to 64 steps",
          metric="peak temporary memory of one training step, 64 steps / 8 steps", threshold=1.3,
          direction="lower", rule="every_seed", note=_MEMORY_NOTE, rungs=("repro",), kind="main",
          seed_free=True),
    Claim("diffuco-memory-grows-with-steps",
          statement="DiffUCO (backpropagation through the trajectory) needs memory growing with the steps",
          paper="memory linear in steps (Fig. 1); note: >= 4x from 8 to 64 steps",
          metric="peak temporary memory of one training step, 64 steps / 8 steps", threshold=4.0,
          direction="higher", rule="every_seed", note=_MEMORY_NOTE, rungs=("repro",), kind="secondary",
          seed_free=True),
)
def _memory(seed: int, rung: str) -> dict[str, float]:
    del seed  # see _MEMORY_NOTE
    r = _memory_ratios(rung)
    return {"rkl-rl-memory-is-flat-in-steps": r["rkl_rl"], "fkl-mc-memory-is-flat-in-steps": r["fkl_nis"],
            "diffuco-memory-grows-with-steps": r["diffuco"]}
