"""``iclr25 sdds repro``: the reduced-scale reproduction (critical Ising ladder, MIS, memory versus steps).

Budgets are stated beside every comparison: *equal samples* (every sampler sees the same number of training
samples, epochs x samples per epoch) and *equal wall time* (the autoregressive baseline, or DiffUCO on MIS,
trains for as long as rkl_rl did).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import jax
import numpy as np

from iclr25.utils.io import atomic_write
from iclr25.utils.plotting import savefig, subplots
from iclr25.utils.progress import progress
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import jax_key

from .autoregressive import train_autoregressive
from .decoding import decode_ce, decode_no_model
from .diffusion import SamplerConfig
from .energy import Energy, IsingEnergy, MISEnergy
from .estimators import MIN_ESS_FRACTION, estimate, neural_mcmc
from .exact import BETA_CRITICAL, exact_ising, exact_mis, greedy_mis
from .graphs import random_graphs
from .memory import peak_memory
from .metropolis import metropolis
from .objectives import train

__all__ = ["ReproScale", "QUICK", "run_repro", "mis_config", "mis_problem", "mis_evaluate", "ising_lattice",
           "ising_samplers", "ising_verdict", "ISING_HEADER"]


@dataclasses.dataclass(frozen=True)
class ReproScale:
    lattices: tuple[int, ...] = (6, 8, 12)
    ising_epochs: int = 250
    ising_samples: int = 64
    ising_steps: int = 16
    ising_hidden: int = 16      # rkl_rl and diffuco: 1 layer x 16 channels
    ising_layers: int = 1
    fkl_hidden: int = 16        # fkl_nis 3 x 32 (~5x slower per epoch): benchmarks/ising_ladder.py
    fkl_layers: int = 1
    ising_ppo_epochs: int = 1
    ising_diffuco_max_L: int = 6  # DiffUCO at L = 8, 12: benchmarks/ising_ladder.py (the budget)
    ar_hidden: int = 64
    ar_max_epochs: int = 2000  # caps the equal-wall-time autoregressive run at 8x the samples
    n_eval: int = 8192
    mis_train: int = 100
    mis_test: int = 30
    mis_nodes: tuple[int, int] = (50, 100)
    mis_epochs: int = 300
    mis_steps: int = 4  # DiffUCO steps; rkl_rl gets twice as many (equal memory)
    mis_ppo_epochs: int = 1
    memory_steps: tuple[int, ...] = (8, 16, 32, 64)
    ising_symmetric: bool = True  # spin-flip-equivariant network (not in the paper; see README)


QUICK = ReproScale(lattices=(4,), ising_epochs=20, ising_samples=32, ising_steps=4, n_eval=1024, mis_train=8,
                   mis_test=4, mis_nodes=(10, 14), mis_epochs=4, mis_steps=2, memory_steps=(4, 8))


class _EpochClock:
    """Wall time of a training call, split into the first epoch (compilation included) and the rest, so that
    an equal-wall-time budget can be turned into a number of epochs."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.stamps: list[float] = []

    def __call__(self, epoch: int, *_: object) -> None:
        self.stamps.append(time.perf_counter())

    @property
    def total(self) -> float:
        return (self.stamps[-1] if self.stamps else time.perf_counter()) - self.t0

    def epochs_for(self, seconds: float, *, at_least: int = 1, at_most: int = 100_000) -> int:
        """Epochs of this training that fit in ``seconds`` of wall time (first epoch with compilation included)."""
        first = self.stamps[0] - self.t0
        per = (self.stamps[-1] - self.stamps[0]) / max(1, len(self.stamps) - 1)
        return int(min(at_most, max(at_least, 1 + (seconds - first) / max(per, 1e-9))))


# --------------------------------------------------------------------------------------------------- MIS
def mis_problem(n_train: int, n_test: int, nodes: tuple[int, int], *, seed: int = 0):
    """ER training and test graphs (mean degree 6) with their MILP optima and greedy / no-model baselines."""
    lo, hi = nodes
    graphs = random_graphs(n_train + n_test, lo, hi, mean_degree=6.0, seed=seed)
    train_g, test_g = graphs[:n_train], graphs[n_train:]
    e_train = MISEnergy.from_graphs(train_g, n_nodes=hi)
    e_test = MISEnergy.from_graphs(test_g, n_nodes=hi)
    opt = np.array([exact_mis(n, e).sum() for n, e in progress(test_g, desc="MILP")], dtype=float)
    greedy = np.array([greedy_mis(n, e).sum() for n, e in test_g], dtype=float)
    plain = decode_no_model(e_test, np.arange(len(test_g))).sum(1).astype(float)
    return e_train, e_test, opt, greedy, plain


def mis_config(objective: str, n_steps: int, n_epochs: int, *, ppo_epochs: int = 4, aggregation: str = "sum",
               step_minibatch: int = 4) -> SamplerConfig:
    """The MIS sampler of the README: 3-layer 32-unit GNN, 4 graphs x 8 samples per epoch, T 0.4 -> 0."""
    return SamplerConfig(objective=objective, n_steps=n_steps, hidden=32, n_layers=3, n_random_features=3,
                         aggregation=aggregation, n_samples=8, instances_per_batch=4, n_epochs=n_epochs,
                         learning_rate=1e-3, temperature=0.0, temperature_start=0.4, step_minibatch=step_minibatch,
                         schedule="diffuco", ppo_epochs=ppo_epochs)


def mis_evaluate(sampler, e_test: Energy, opt: np.ndarray, *, n_eval: int = 8, seed: int = 0) -> tuple[float, float]:
    """Mean over test graphs of (mean, best) CE-decoded set size over ``n_eval`` samples, divided by the optimum."""
    test_sampler = dataclasses.replace(sampler, energy=e_test)
    sizes = np.zeros((len(opt), n_eval))
    for g in range(len(opt)):
        s = test_sampler.sample(n_eval, key=jax.random.fold_in(jax_key(seed + 1), g), index=g, chunk=n_eval)
        sizes[g] = decode_ce(e_test, s.x.astype(np.float64), g).sum(1)
    return float((sizes.mean(1) / opt).mean()), float((sizes.max(1) / opt).mean())


def _mis_section(run: RunResult, scale: ReproScale, seed: int, rows: list[str]) -> None:
    e_train, e_test, opt, greedy, plain = mis_problem(scale.mis_train, scale.mis_test, scale.mis_nodes, seed=seed)
    run.add("MIS MILP optimum (mean size)", float(opt.mean()), higher_is_better=True)
    run.add("MIS greedy / optimum", float((greedy / opt).mean()), higher_is_better=True)
    run.add("MIS no-model decode / optimum", float((plain / opt).mean()), higher_is_better=True)
    rows.append(f"| MILP (HiGHS) | – | – | – | {opt.mean():.2f} | 1.000 | 1.000 | – | – |")
    rows.append(f"| min-degree greedy | – | – | – | {greedy.mean():.2f} | {(greedy / opt).mean():.3f} | – | – | – |")
    rows.append(f"| no model (CE decode of all-zeros) | – | – | – | {plain.mean():.2f} | {(plain / opt).mean():.3f} "
                "| – | – | – |")
    def one(objective: str, n_steps: int, n_epochs: int, budget: str) -> _EpochClock:
        cfg = mis_config(objective, n_steps, n_epochs, ppo_epochs=scale.mis_ppo_epochs,
                         step_minibatch=scale.mis_steps)
        mem = peak_memory(cfg, e_train)
        clock = _EpochClock()
        sampler = train(cfg, e_train, jax_key(seed), callback=clock)
        t_train = clock.total
        ratio_mean, ratio_best = mis_evaluate(sampler, e_test, opt, seed=seed)
        tag = f"MIS {objective} T={n_steps} ({budget})"
        run.add(f"{tag} mean CE size / optimum", ratio_mean, higher_is_better=True)
        run.add(f"{tag} best-of-8 / optimum", ratio_best, higher_is_better=True)
        run.add(f"{tag} peak training memory", mem / 2**20, unit="MiB", higher_is_better=False)
        run.add(f"{tag} training time", t_train, unit="s", timing=True)
        rows.append(f"| {objective} | {n_steps} | {budget} | {n_epochs * 32} | {ratio_mean * opt.mean():.2f} | "
                    f"{ratio_mean:.3f} | {ratio_best:.3f} | {mem / 2**20:.1f} | {t_train:.0f} |")
        return clock

    # DiffUCO with T steps and rkl_rl with 2T steps (equal memory) at equal samples; then the cheaper one again
    # for the other's wall time, unless the two took within 25 % of each other's time already
    diffuco = one("diffuco", scale.mis_steps, scale.mis_epochs, "equal samples")
    rkl = one("rkl_rl", 2 * scale.mis_steps, scale.mis_epochs, "equal samples")
    slow, fast = max(rkl.total, diffuco.total), min(rkl.total, diffuco.total)
    run.add("MIS rkl_rl / diffuco training time (equal samples)", rkl.total / diffuco.total, higher_is_better=False)
    if slow > 1.25 * fast and rkl.total > diffuco.total:
        one("rkl_rl", 2 * scale.mis_steps, rkl.epochs_for(diffuco.total, at_most=scale.mis_epochs),
            "equal wall time with diffuco")
    elif slow > 1.25 * fast:
        one("diffuco", scale.mis_steps, diffuco.epochs_for(rkl.total, at_most=4 * scale.mis_epochs),
            "equal wall time with rkl_rl")
    else:
        rows.append(f"| (equal wall time) | – | within 25 %: rkl_rl {rkl.total:.0f} s, diffuco {diffuco.total:.0f} s "
                    "| – | – | – | – | – | – |")


# ------------------------------------------------------------------------------------------------- Ising
def _ising_row(run, rows, L, name, sampler, t_train, n_train, energy, exact, scale, seed) -> float:
    beta = BETA_CRITICAL
    # one set of independent draws serves both estimators: SN-NIS weights them, neural MCMC chains them
    n_chains = 64
    draws = sampler.sample(scale.n_eval, key=jax_key(seed + 1))
    est = estimate(sampler, energy, beta, scale.n_eval, seed=seed, samples=draws)
    mc = neural_mcmc(sampler, energy, beta, n_chains=n_chains, n_steps=scale.n_eval // n_chains - 1,
                     burn_in=max(1, scale.n_eval // 640), seed=seed, samples=draws)
    rel_f = abs(est.free_energy / exact.free_energy - 1)
    se_f = est.free_energy_se / abs(exact.free_energy)
    rel_u = abs(est.internal_energy / exact.internal_energy - 1)
    rel_s = abs(est.entropy / exact.entropy - 1)
    rel_bound = abs(est.variational_free_energy / exact.free_energy - 1)
    rel_mc = abs(mc.internal_energy / exact.internal_energy - 1)
    tag = f"L={L} {name}"
    run.add(f"{tag} F rel. error (SN-NIS)", rel_f, higher_is_better=False)
    run.add(f"{tag} F rel. SE (SN-NIS)", se_f, higher_is_better=False)
    run.add(f"{tag} F rel. error (variational bound)", rel_bound, higher_is_better=False)
    run.add(f"{tag} U rel. error (SN-NIS)", rel_u, higher_is_better=False)
    run.add(f"{tag} S rel. error (SN-NIS)", rel_s, higher_is_better=False)
    run.add(f"{tag} ESS fraction", est.ess_fraction, higher_is_better=True)
    run.add(f"{tag} U rel. error (NMCMC)", rel_mc, higher_is_better=False)
    run.add(f"{tag} NMCMC acceptance", mc.acceptance_rate, higher_is_better=True)
    run.add(f"{tag} training samples", float(n_train))
    run.add(f"{tag} training time", t_train, unit="s", timing=True)
    warned = est.warnings(MIN_ESS_FRACTION)
    for w in warned:
        run.add(f"WARNING: {tag}: {w}", None)
    ess = f"{est.ess_fraction:.3f}" + (" ⚠" if warned else "")
    rows.append(f"| {L} | {name} | {n_train} | {t_train:.0f} | {rel_f:.2e} ± {se_f:.1e} | {rel_bound:.2e} | "
                f"{rel_u:.2e} | {rel_s:.2e} | {ess} | {rel_mc:.2e} | {mc.acceptance_rate:.2f} |")
    return rel_f


ISING_HEADER = ("| L | sampler | train samples | train s | F (SN-NIS) ± SE | F (variational bound) | U (SN-NIS) | "
                "S (SN-NIS) | ESS/M | U (NMCMC or Metropolis) | acceptance |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|")


def ising_samplers(L: int, scale: ReproScale) -> list[tuple[str, int, int]]:
    """The diffusion samplers of the repro's Ising table at lattice ``L``: (objective, layers, channels)."""
    out = [("rkl_rl", scale.ising_layers, scale.ising_hidden), ("fkl_nis", scale.fkl_layers, scale.fkl_hidden)]
    if L <= scale.ising_diffuco_max_L:
        out.append(("diffuco", scale.ising_layers, scale.ising_hidden))
    return out


def ising_lattice(run: RunResult, rows: list[str], L: int, samplers, scale: ReproScale, seed: int, *,
                  autoregressive: bool = True) -> dict[str, float]:
    """Train and evaluate the diffusion ``samplers`` [(objective, layers, channels)] on the L x L lattice, and
    (``autoregressive``) the autoregressive baseline at equal samples and, when rkl_rl is among the samplers,
    at equal wall time with it, plus single-spin Metropolis; returns the SN-NIS F errors by sampler name."""
    beta = BETA_CRITICAL
    n_train = scale.ising_epochs * scale.ising_samples
    energy = IsingEnergy(L)
    exact = exact_ising(L, beta)
    errors: dict[str, float] = {}
    t_rkl = None
    for objective, n_layers, hidden in samplers:
        cfg = SamplerConfig(objective=objective, n_steps=scale.ising_steps, hidden=hidden, n_layers=n_layers,
                            n_samples=scale.ising_samples, n_epochs=scale.ising_epochs, learning_rate=3e-3,
                            temperature_start=4.0, step_minibatch=4, ppo_epochs=scale.ising_ppo_epochs,
                            symmetric=scale.ising_symmetric)
        clock = _EpochClock()
        sampler = train(cfg, energy, jax_key(seed), callback=clock)
        if objective == "rkl_rl" and t_rkl is None:
            t_rkl = clock.total
        name = f"{objective} ({n_layers}x{hidden})"
        errors[name] = _ising_row(run, rows, L, name, sampler, clock.total, n_train, energy, exact, scale, seed)
    if not autoregressive:
        return errors
    # autoregressive (MADE, REINFORCE on the reverse KL): equal samples, then equal wall time with rkl_rl
    clock = _EpochClock()
    ar = train_autoregressive(energy, temperature=1 / beta, temperature_start=4.0, n_epochs=scale.ising_epochs,
                              n_samples=scale.ising_samples, hidden=scale.ar_hidden, learning_rate=3e-3,
                              key=jax_key(seed), callback=clock)
    errors["autoregressive"] = _ising_row(run, rows, L, "autoregressive (equal samples)", ar, clock.total,
                                          n_train, energy, exact, scale, seed)
    if t_rkl is not None:
        n_epochs_time = clock.epochs_for(t_rkl, at_least=scale.ising_epochs, at_most=scale.ar_max_epochs)
        clock_t = _EpochClock()
        ar_t = train_autoregressive(energy, temperature=1 / beta, temperature_start=4.0, n_epochs=n_epochs_time,
                                    n_samples=scale.ising_samples, hidden=scale.ar_hidden, learning_rate=3e-3,
                                    key=jax_key(seed), callback=clock_t)
        errors["autoregressive (time)"] = _ising_row(
            run, rows, L, "autoregressive (equal wall time with rkl_rl)", ar_t, clock_t.total,
            n_epochs_time * scale.ising_samples, energy, exact, scale, seed)
    # single-spin Metropolis with the same number of energy evaluations (one sweep = one evaluation)
    n_chains = 64
    mh = metropolis(energy, beta, n_chains=n_chains, n_sweeps=scale.n_eval // n_chains,
                    burn_in=max(1, scale.n_eval // (10 * n_chains)), key=jax_key(seed + 3))
    rel_mh = abs(mh.internal_energy / exact.internal_energy - 1)
    run.add(f"L={L} Metropolis U rel. error (equal budget)", rel_mh, higher_is_better=False)
    rows.append(f"| {L} | Metropolis (equal evaluations) | – | – | – | – | – | – | – | {rel_mh:.2e} | "
                f"{mh.acceptance_rate:.2f} |")
    return errors


def ising_verdict(run: RunResult, errors_by_L: dict[int, dict[str, float]]) -> list[str]:
    """One line per lattice: best diffusion sampler vs autoregressive at equal samples, and where diffusion wins."""
    verdict, wins = [], []
    for L, errors in errors_by_L.items():
        diffusion = {k: v for k, v in errors.items() if not k.startswith("autoregressive")}
        if "autoregressive" not in errors or not diffusion:
            continue
        best = min(diffusion, key=diffusion.get)
        ratio = errors[best] / errors["autoregressive"]
        run.add(f"L={L} best diffusion / autoregressive F error (equal samples)", ratio, higher_is_better=False)
        verdict.append(f"L = {L}: best diffusion sampler {best} {errors[best]:.1e} vs autoregressive "
                       f"{errors['autoregressive']:.1e} at equal samples (ratio {ratio:.2f}; "
                       f"{'diffusion' if ratio < 1 else 'autoregressive'} better)")
        if ratio < 1:
            wins.append(L)
    if wins:
        verdict.append(f"Diffusion beats autoregressive at equal samples from L = {min(wins)} on the lattices tried "
                       f"(wins at L = {', '.join(map(str, wins))}).")
    else:
        verdict.append("Diffusion does not beat autoregressive at equal samples on any lattice tried; "
                       "see the ratio's trend with L.")
    return verdict


def _ising_section(run: RunResult, scale: ReproScale, seed: int, rows: list[str]) -> list[str]:
    """Train every sampler on each lattice; returns the lines that compare diffusion with autoregressive."""
    errors = {L: ising_lattice(run, rows, L, ising_samplers(L, scale), scale, seed) for L in scale.lattices}
    return ising_verdict(run, errors)


# ------------------------------------------------------------------------------------------------ memory
def _memory_section(run: RunResult, scale: ReproScale, out: Path, rows: list[str]) -> Path:
    energy = IsingEnergy(6)
    mem: dict[str, list[float]] = {}
    for objective in ("diffuco", "rkl_rl", "fkl_nis"):
        mem[objective] = []
        for t in progress(scale.memory_steps, desc=f"memory {objective}"):
            cfg = SamplerConfig(objective=objective, n_steps=t, hidden=16, n_layers=1, n_samples=64,
                                step_minibatch=4)
            mem[objective].append(peak_memory(cfg, energy) / 2**20)
        run.add(f"memory growth {scale.memory_steps[0]}->{scale.memory_steps[-1]} steps {objective}",
                mem[objective][-1] / mem[objective][0], higher_is_better=False)
    for i, t in enumerate(scale.memory_steps):
        rows.append(f"| {t} | " + " | ".join(f"{mem[o][i]:.1f}" for o in ("diffuco", "rkl_rl", "fkl_nis")) + " |")
    fig, ax = subplots(1, 1, size=(4.5, 3.3))
    from matplotlib.ticker import NullLocator  # noqa: PLC0415 - matplotlib is loaded by subplots
    for o, label in (("diffuco", "DiffUCO (rKL w/o RL)"), ("rkl_rl", "SDDS rKL w/ RL"), ("fkl_nis", "SDDS fKL w/ MC")):
        ax.plot(scale.memory_steps, mem[o], "o-", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(scale.memory_steps), [str(t) for t in scale.memory_steps])  # whole numbers of steps
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_yscale("log")
    ax.set_xlabel("diffusion steps T")
    ax.set_ylabel("peak temp. memory of a training step (MiB)")
    ax.set_title("6x6 Ising, 64 samples")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return savefig(fig, out / "memory_vs_steps.png")


def run_repro(out: Path, *, seed: int = 0, quick: bool = False, device: Any = None) -> RunResult:
    """The reproduction's tables and figures in ``out``; JAX computes on ``device``
    (:func:`~iclr25.sdds.diffusion.on_device`), recorded in ``results.json``."""
    from iclr25.utils.device import describe_device  # noqa: PLC0415

    from .diffusion import on_device  # noqa: PLC0415

    with on_device(device) as dev:
        return _run_repro(out, seed=seed, quick=quick, where=describe_device(dev))


def _run_repro(out: Path, *, seed: int, quick: bool, where: str) -> RunResult:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    scale = QUICK if quick else ReproScale()
    run = RunResult.start("iclr25-sdds", "repro", seed=seed, config={"quick": quick, **dataclasses.asdict(scale)})
    run.machine["device"] = where
    ising_rows: list[str] = []
    mis_rows: list[str] = []
    mem_rows: list[str] = []
    fig = _memory_section(run, scale, out, mem_rows)
    run.add_figure(fig, relative_to=out)
    _mis_section(run, scale, seed, mis_rows)
    verdict = _ising_section(run, scale, seed, ising_rows)
    n_ising = scale.ising_epochs * scale.ising_samples
    tables = "\n".join([
        "### Critical Ising (beta_c), relative errors against the exact finite-lattice values", "",
        f"Equal samples: every sampler trains on {scale.ising_epochs} epochs x {scale.ising_samples} samples = "
        f"{n_ising}; the equal-wall-time autoregressive row trains as long as rkl_rl did, at most "
        f"{scale.ar_max_epochs} epochs (its train s column says how long it took). "
        f"{scale.ising_steps} diffusion steps; {scale.n_eval} samples per estimator, shared by SN-NIS and neural MCMC; "
        f"DiffUCO at L <= {scale.ising_diffuco_max_L} (larger L and fkl_nis 3 x 32: benchmarks/ising_ladder.py).", "",
        ISING_HEADER, *ising_rows, "",
        f"⚠: ESS/M below {MIN_ESS_FRACTION} (or an entropy outside [0, ln 2]): the SN-NIS columns of that row are "
        "unreliable (see the WARNING rows of results.json).", "",
        *[f"- {line}" for line in verdict], "",
        f"### MIS on {scale.mis_test} test graphs (ER, {scale.mis_nodes[0]}-{scale.mis_nodes[1]} nodes, mean "
        f"degree 6), {scale.mis_train} training graphs", "",
        "| method | steps | budget | train samples | mean set size | mean CE / optimum | best-of-8 / optimum | "
        "peak train memory (MiB) | train s |",
        "|---|---|---|---|---|---|---|---|---|", *mis_rows, "",
        "### Peak temporary memory of one training step (MiB), 6x6 Ising, 64 samples", "",
        "| steps | diffuco | rkl_rl | fkl_nis |", "|---|---|---|---|", *mem_rows, "",
    ])
    run.notes = tables
    with atomic_write(out / "tables.md") as f:
        f.write(tables)
    print(tables)
    run.finish().save(out / "results.json")
    return run
