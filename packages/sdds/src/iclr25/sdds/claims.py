"""The paper's claims that this package checks, declared once for the tests, ``repro`` and the README table.

Each measuring function takes ``(seed, rung)`` and trains from scratch with that seed: the network's
initialisation, the training draws, the evaluation draws and (for MIS) the graph data set all change with the
seed. ``rung="test"`` is the default test suite's scale (3 seeds, within its 90 s budget); ``rung="repro"``
trains longer, draws more and runs 5 seeds (``iclr25 sdds repro`` writes ``claims.json`` from it).

Thresholds and margins come from seeds 0-4 measured at the test rung on 2026-12-02 (see each ``Claim.note``);
``tests/test_claims.py`` decides every claim with :meth:`ClaimRegistry.pytest_test`.

References: Sanokowski et al., ICLR 2025: Sec. 3 and Fig. 1 (memory), Sec. 4 (SN-NIS, neural MCMC), Sec. 5
(unsupervised CO).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

from iclr25.utils.claims import Claim, ClaimRegistry, Measurement

__all__ = ["REGISTRY", "RUNGS", "MIS_GRAPHS", "MIS_CONFIG", "trained_ising", "trained_mis"]

REGISTRY = ClaimRegistry("iclr25-sdds", seeds={"test": (0, 1, 2), "repro": (0, 1, 2, 3, 4)})

#: Per rung: fKL training epochs on the 4x4 lattice, SN-NIS draws, neural-MCMC proposals (64 chains of
#: ``n_mcmc / 64`` states; the first ``n_eval`` are the SN-NIS draws) and its burn-in, MIS training epochs.
#: The repro rung runs the chains 4x longer than its SN-NIS draws: at 255 states per chain a sampler whose
#: importance weights are concentrated (low ESS) leaves the chains near their q-distributed first states, and
#: the estimate near the raw draws' (README, "Neural MCMC").
RUNGS: dict[str, dict[str, int]] = {
    "test": {"ising_epochs": 200, "n_eval": 4096, "n_mcmc": 4096, "burn_in": 8, "mis_epochs": 100},
    "repro": {"ising_epochs": 200, "n_eval": 16384, "n_mcmc": 65536, "burn_in": 32, "mis_epochs": 100},
}
#: Improvement over the baseline (baseline minus ours, or ours minus baseline for MIS) at seeds 0-4, measured
#: at the test rung on 2026-12-02 (2 CPU cores, XLA on one thread); each margin is a third of the smallest.
MEASURED: dict[str, tuple[float, ...]] = {
    "sn-nis-beats-the-variational-bound": (0.0736, 0.0512, 0.0379, 0.1149, 0.0859),
    "neural-mcmc-corrects-the-sampler": (0.2136, 0.2551, 0.0342, 0.0423, 0.3118),
    "mis-beats-the-no-model-decode": (0.0994, 0.0863, 0.1300, 0.1277, 0.0828),
}


def _margin(claim_id: str) -> float:
    """A third of the smallest measured improvement, rounded down to 3 decimals."""
    return math.floor(min(MEASURED[claim_id]) / 3 * 1000) / 1000


def _note(claim_id: str) -> str:
    gaps = ", ".join(f"{g:.3g}" for g in MEASURED[claim_id])
    return (f"improvement over the baseline at seeds 0-4 (test rung, 2026-12-02): {gaps}; margin = a third of the "
            f"smallest, {_margin(claim_id):g}")


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
    return RUNGS[rung]


@functools.lru_cache(maxsize=8)
def trained_ising(seed: int, rung: str = "test") -> Any:
    """The demo's fKL w/ MC configuration (plain network) trained on the 4x4 critical Ising model."""
    import jax  # noqa: PLC0415

    from .demo import DEMO_CONFIG  # noqa: PLC0415
    from .energy import IsingEnergy  # noqa: PLC0415
    from .objectives import train  # noqa: PLC0415

    config = dataclasses.replace(DEMO_CONFIG, n_epochs=_rung(rung)["ising_epochs"])
    return train(config, IsingEnergy(ISING_L), jax.random.key(seed), show_progress=False)


@functools.lru_cache(maxsize=8)
def trained_mis(seed: int, rung: str = "test") -> tuple[Any, list, Any]:
    """An rkl_rl GNN sampler trained on 30 small ER graphs of the seed's data set; returns it with the 10
    held-out graphs and their :class:`MISEnergy`."""
    import jax  # noqa: PLC0415

    from .diffusion import SamplerConfig  # noqa: PLC0415
    from .energy import MISEnergy  # noqa: PLC0415
    from .graphs import random_graphs  # noqa: PLC0415
    from .objectives import train  # noqa: PLC0415

    graphs = random_graphs(**MIS_GRAPHS, seed=seed)
    n_train = MIS_GRAPHS["n_graphs"] - N_MIS_TEST
    e_train = MISEnergy.from_graphs(graphs[:n_train], n_nodes=MIS_GRAPHS["n_max"])
    e_test = MISEnergy.from_graphs(graphs[n_train:], n_nodes=MIS_GRAPHS["n_max"])
    config = SamplerConfig(**MIS_CONFIG, n_epochs=_rung(rung)["mis_epochs"])
    sampler = train(config, e_train, jax.random.key(seed), show_progress=False)
    return sampler, graphs[n_train:], e_test


@REGISTRY.measures(
    Claim("sn-nis-beats-the-variational-bound",
          statement="SN-NIS with a trained diffusion sampler estimates the free energy far better than the "
                    "sampler's own (biased) variational bound",
          paper="F rel. error <= 1e-3 and >= 5x below the bound (note: L = 6)",
          metric="|F_SN-NIS / F_exact - 1|, 4x4 Ising at beta_c, fKL w/ MC",
          baseline="variational bound of the same sampler", direction="lower", rule="every_seed",
          margin=_margin("sn-nis-beats-the-variational-bound"),
          note=_note("sn-nis-beats-the-variational-bound") + "; the 1e-3 target is not a test-rung claim (README)"),
    Claim("neural-mcmc-corrects-the-sampler",
          statement="Neural MCMC with the diffusion sampler as proposal removes the sampler's bias in the "
                    "internal energy",
          paper="U within 3 SE of exact (note)",
          metric="|U_NMCMC / U_exact - 1|, 4x4 Ising at beta_c",
          baseline="the sampler's raw draws (no correction)", direction="lower", rule="every_seed",
          margin=_margin("neural-mcmc-corrects-the-sampler"), note=_note("neural-mcmc-corrects-the-sampler")),
)
def _ising(seed: int, rung: str) -> dict[str, Measurement]:
    import jax  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    from .energy import IsingEnergy  # noqa: PLC0415
    from .estimators import estimate, neural_mcmc  # noqa: PLC0415
    from .exact import BETA_CRITICAL, exact_ising  # noqa: PLC0415

    r = _rung(rung)
    n_eval, n_mcmc = r["n_eval"], r["n_mcmc"]
    sampler = trained_ising(seed, rung)
    energy = IsingEnergy(ISING_L)
    exact = exact_ising(ISING_L, BETA_CRITICAL)
    # one set of independent draws: the first n_eval for SN-NIS, all n_mcmc as the chains' proposals
    draws = sampler.sample(n_mcmc, key=jax.random.fold_in(jax.random.key(seed), 1))
    first = type(draws)(draws.x[:n_eval], draws.log_q[:n_eval], draws.log_aux[:n_eval])
    est = estimate(sampler, energy, BETA_CRITICAL, n_eval, seed=seed, n_bootstrap=50, samples=first)
    mc = neural_mcmc(sampler, energy, BETA_CRITICAL, n_chains=64, n_steps=n_mcmc // 64 - 1, burn_in=r["burn_in"],
                     seed=seed, samples=draws)
    raw_u = float(np.mean(energy(np.asarray(draws.x)))) / energy.n_nodes

    def rel(a: float, b: float) -> float:
        return abs(a / b - 1.0)

    return {
        "sn-nis-beats-the-variational-bound": Measurement(
            rel(est.free_energy, exact.free_energy), reference=rel(est.variational_free_energy, exact.free_energy),
            extra={"ess_fraction": est.ess_fraction, "free_energy_se_rel": est.free_energy_se / abs(exact.free_energy)}),
        "neural-mcmc-corrects-the-sampler": Measurement(
            rel(mc.internal_energy, exact.internal_energy), reference=rel(raw_u, exact.internal_energy),
            extra={"acceptance": mc.acceptance_rate, "u_se_rel": mc.internal_energy_se / abs(exact.internal_energy)}),
    }


@REGISTRY.measures(
    Claim("mis-beats-the-no-model-decode",
          statement="Unsupervised CO: an rkl_rl (PPO) diffusion sampler trained without labels decodes larger "
                    "independent sets than the same decoder without a model",
          paper="MIS RB-small: rKL w/ RL 2.5 % from the optimum (mean CE)",
          metric="mean CE-decoded set size / MILP optimum, 10 held-out ER graphs",
          baseline="CE decode of all-zeros (no model)", direction="higher", rule="every_seed",
          margin=_margin("mis-beats-the-no-model-decode"),
          note=_note("mis-beats-the-no-model-decode") + "; decided at the repro rung only (3 MIS trainings, ~90 s of "
               "CPU, do not fit the default suite's budget beside the Ising claims)",
          rungs=("repro",)),
)
def _mis(seed: int, rung: str) -> dict[str, Measurement]:
    import jax  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    from .decoding import decode_ce, decode_no_model  # noqa: PLC0415
    from .exact import exact_mis  # noqa: PLC0415

    sampler, graphs, e_test = trained_mis(seed, rung)
    test_sampler = type(sampler)(sampler.model, sampler.config, e_test, sampler.history)
    model, plain, opt = [], [], []
    for g, (n, edges) in enumerate(graphs):
        s = test_sampler.sample(16, key=jax.random.fold_in(jax.random.key(seed + 1000), g), index=g)
        model.append(decode_ce(e_test, np.asarray(s.x, np.float64), g).sum(1).mean())
        plain.append(decode_no_model(e_test, g).sum())
        opt.append(exact_mis(n, edges).sum())
    model, plain, opt = map(np.asarray, (model, plain, opt))
    return {"mis-beats-the-no-model-decode": Measurement(float(np.mean(model / opt)),
                                                         reference=float(np.mean(plain / opt)))}


_MEMORY_STEPS = (8, 64)


@functools.lru_cache(maxsize=4)
def _memory_ratios(rung: str) -> dict[str, float]:
    from .diffusion import SamplerConfig  # noqa: PLC0415
    from .energy import IsingEnergy  # noqa: PLC0415
    from .memory import peak_memory  # noqa: PLC0415

    _rung(rung)
    energy = IsingEnergy(ISING_L)
    out = {}
    for objective in ("rkl_rl", "fkl_nis", "diffuco"):
        mem = [peak_memory(SamplerConfig(objective=objective, n_steps=t, hidden=16, n_layers=1, n_samples=64,
                                         step_minibatch=4), energy) for t in _MEMORY_STEPS]
        out[objective] = mem[1] / mem[0]
    return out


_MEMORY_NOTE = ("XLA's temporary-buffer analysis of the compiled step does not depend on the seed (the same "
                "program for every initialisation), so it is compiled once per rung and the value repeats at "
                "every seed; measured x1.01 (SDDS) and x7.2 (DiffUCO) at L = 4 and 6; decided at the repro rung (six "
                "compilations, ~30 s, left out of the default suite's budget)")


@REGISTRY.measures(
    Claim("rkl-rl-memory-is-flat-in-steps",
          statement="rKL w/ RL (PPO over diffusion steps) trains with memory independent of the number of steps",
          paper="memory flat in steps (Fig. 1); note: <= 1.3x from 8 to 64 steps",
          metric="peak temporary memory of one training step, 64 steps / 8 steps", threshold=1.3,
          direction="lower", rule="every_seed", note=_MEMORY_NOTE, rungs=("repro",)),
    Claim("fkl-mc-memory-is-flat-in-steps",
          statement="fKL w/ MC (SN-NIS forward KL) trains with memory independent of the number of steps",
          paper="memory flat in steps (Fig. 1); note: <= 1.3x from 8 to 64 steps",
          metric="peak temporary memory of one training step, 64 steps / 8 steps", threshold=1.3,
          direction="lower", rule="every_seed", note=_MEMORY_NOTE, rungs=("repro",)),
    Claim("diffuco-memory-grows-with-steps",
          statement="DiffUCO (backpropagation through the trajectory) needs memory growing with the steps",
          paper="memory linear in steps (Fig. 1); note: >= 4x from 8 to 64 steps",
          metric="peak temporary memory of one training step, 64 steps / 8 steps", threshold=4.0,
          direction="higher", rule="every_seed", note=_MEMORY_NOTE, rungs=("repro",)),
)
def _memory(seed: int, rung: str) -> dict[str, float]:
    del seed  # see _MEMORY_NOTE
    r = _memory_ratios(rung)
    return {"rkl-rl-memory-is-flat-in-steps": r["rkl_rl"], "fkl-mc-memory-is-flat-in-steps": r["fkl_nis"],
            "diffuco-memory-grows-with-steps": r["diffuco"]}
