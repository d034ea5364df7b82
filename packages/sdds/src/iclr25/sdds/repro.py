"""``iclr25 sdds repro``: the reduced-scale reproduction (critical Ising, MIS, memory versus steps)."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import jax
import numpy as np

from iclr25.utils.io import atomic_write
from iclr25.utils.plotting import savefig, subplots
from iclr25.utils.progress import progress
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import jax_key

from .autoregressive import train_autoregressive
from .diffusion import SamplerConfig
from .energy import IsingEnergy, MISEnergy, decode_ce, random_graphs
from .estimators import MIN_ESS_FRACTION, estimate, neural_mcmc
from .exact import BETA_CRITICAL, exact_ising, exact_mis, greedy_mis
from .memory import peak_memory
from .metropolis import metropolis
from .objectives import train


@dataclasses.dataclass(frozen=True)
class ReproScale:
    lattices: tuple[int, ...] = (6, 8)
    ising_epochs: int = 250
    ising_samples: int = 64
    ising_steps: int = 16
    ar_epochs: int = 400
    n_eval: int = 8192
    mis_train: int = 100
    mis_test: int = 50
    mis_nodes: tuple[int, int] = (50, 100)
    mis_epochs: int = 200
    mis_steps: int = 4  # DiffUCO steps; rkl_rl gets twice as many
    memory_steps: tuple[int, ...] = (8, 16, 32, 64)
    ising_symmetric: bool = True  # spin-flip-equivariant network (not in the paper; see README)


QUICK = ReproScale(lattices=(4,), ising_epochs=20, ising_samples=32, ising_steps=4, ar_epochs=20, n_eval=1024,
                   mis_train=8, mis_test=4, mis_nodes=(10, 14), mis_epochs=4, mis_steps=2, memory_steps=(4, 8))


def _ising_section(run: RunResult, scale: ReproScale, seed: int, rows: list[str]) -> None:
    beta = BETA_CRITICAL
    for L in scale.lattices:
        energy = IsingEnergy(L)
        exact = exact_ising(L, beta)
        results = {}
        for objective in ("fkl_nis", "rkl_rl"):
            cfg = SamplerConfig(objective=objective, n_steps=scale.ising_steps, hidden=16, n_layers=1,
                                n_samples=scale.ising_samples, n_epochs=scale.ising_epochs, learning_rate=3e-3,
                                temperature_start=4.0, step_minibatch=4, symmetric=scale.ising_symmetric)
            t0 = time.perf_counter()
            sampler = train(cfg, energy, jax_key(seed))
            results[objective] = (sampler, time.perf_counter() - t0)
        t0 = time.perf_counter()
        ar = train_autoregressive(energy, temperature=1 / beta, temperature_start=4.0, n_epochs=scale.ar_epochs,
                                  n_samples=256, hidden=64, learning_rate=3e-3, key=jax_key(seed))
        results["autoregressive"] = (ar, time.perf_counter() - t0)
        for name, (sampler, t_train) in results.items():
            est = estimate(sampler, energy, beta, scale.n_eval, jax_key(seed + 1), seed=seed)
            mc = neural_mcmc(sampler, energy, beta, n_chains=64, n_steps=scale.n_eval // 64 - 1,
                             burn_in=max(1, scale.n_eval // 640), key=jax_key(seed + 2), seed=seed)
            rel_f = abs(est.free_energy / exact.free_energy - 1)
            rel_u = abs(est.internal_energy / exact.internal_energy - 1)
            rel_s = abs(est.entropy / exact.entropy - 1)
            rel_bound = abs(est.variational_free_energy / exact.free_energy - 1)
            rel_mc = abs(mc.internal_energy / exact.internal_energy - 1)
            tag = f"L={L} {name}"
            run.add(f"{tag} F rel. error (SN-NIS)", rel_f, higher_is_better=False)
            run.add(f"{tag} F rel. error (variational bound)", rel_bound, higher_is_better=False)
            run.add(f"{tag} U rel. error (SN-NIS)", rel_u, higher_is_better=False)
            run.add(f"{tag} S rel. error (SN-NIS)", rel_s, higher_is_better=False)
            run.add(f"{tag} ESS fraction", est.ess_fraction, higher_is_better=True)
            run.add(f"{tag} U rel. error (NMCMC)", rel_mc, higher_is_better=False)
            run.add(f"{tag} NMCMC acceptance", mc.acceptance_rate, higher_is_better=True)
            run.add(f"{tag} training time", t_train, unit="s", timing=True)
            warned = est.warnings(MIN_ESS_FRACTION)
            for w in warned:
                run.add(f"WARNING: {tag}: {w}", None)
            ess = f"{est.ess_fraction:.3f}" + (" ⚠" if warned else "")
            rows.append(f"| {L} | {name} | {rel_f:.2e} ± {est.free_energy_se / abs(exact.free_energy):.1e} | "
                        f"{rel_bound:.2e} | {rel_u:.2e} | {rel_s:.2e} | {ess} | {rel_mc:.2e} | "
                        f"{mc.acceptance_rate:.2f} | {t_train:.0f} |")
        # single-spin Metropolis with the same number of energy evaluations (one sweep = one evaluation)
        n_chains = 64
        mh = metropolis(energy, beta, n_chains=n_chains, n_sweeps=scale.n_eval // n_chains,
                        burn_in=max(1, scale.n_eval // (10 * n_chains)), key=jax_key(seed + 3))
        rel_mh = abs(mh.internal_energy / exact.internal_energy - 1)
        run.add(f"L={L} Metropolis U rel. error (equal budget)", rel_mh, higher_is_better=False)
        rows.append(f"| {L} | Metropolis (equal budget) | – | – | – | – | – | {rel_mh:.2e} | "
                    f"{mh.acceptance_rate:.2f} | – |")


def _mis_section(run: RunResult, scale: ReproScale, seed: int, rows: list[str]) -> None:
    lo, hi = scale.mis_nodes
    graphs = random_graphs(scale.mis_train + scale.mis_test, lo, hi, mean_degree=6.0, seed=seed)
    train_g, test_g = graphs[: scale.mis_train], graphs[scale.mis_train:]
    n_pad = hi
    e_train = MISEnergy.from_graphs(train_g, n_nodes=n_pad)
    e_test = MISEnergy.from_graphs(test_g, n_nodes=n_pad)
    opt = np.array([exact_mis(n, e).sum() for n, e in progress(test_g, desc="MILP")], dtype=float)
    greedy = np.array([greedy_mis(n, e).sum() for n, e in test_g], dtype=float)
    run.add("MIS MILP optimum (mean size)", float(opt.mean()), higher_is_better=True)
    run.add("MIS greedy / optimum", float((greedy / opt).mean()), higher_is_better=True)
    rows.append(f"| MILP (HiGHS) | – | {opt.mean():.2f} | 1.000 | 1.000 | – |")
    rows.append(f"| min-degree greedy | – | {greedy.mean():.2f} | {(greedy / opt).mean():.3f} | – | – |")
    n_eval = 8
    for objective, n_steps in (("diffuco", scale.mis_steps), ("rkl_rl", 2 * scale.mis_steps)):
        cfg = SamplerConfig(objective=objective, n_steps=n_steps, hidden=32, n_layers=3, n_random_features=3,
                            n_samples=8, instances_per_batch=4, n_epochs=scale.mis_epochs, learning_rate=1e-3,
                            temperature=0.0, temperature_start=0.4, step_minibatch=scale.mis_steps,
                            schedule="diffuco")
        mem = peak_memory(cfg, e_train)
        t0 = time.perf_counter()
        sampler = train(cfg, e_train, jax_key(seed))
        t_train = time.perf_counter() - t0
        test_sampler = dataclasses.replace(sampler, energy=e_test)
        sizes = np.zeros((len(test_g), n_eval))
        for g in range(len(test_g)):
            s = test_sampler.sample(n_eval, key=jax.random.fold_in(jax_key(seed + 1), g), index=g, chunk=n_eval)
            x = decode_ce(e_test, s.x.astype(np.float64), g)
            sizes[g] = x.sum(1)
        ratio_mean = float((sizes.mean(1) / opt).mean())
        ratio_best = float((sizes.max(1) / opt).mean())
        tag = f"MIS {objective} T={n_steps}"
        run.add(f"{tag} mean CE size / optimum", ratio_mean, higher_is_better=True)
        run.add(f"{tag} best-of-{n_eval} / optimum", ratio_best, higher_is_better=True)
        run.add(f"{tag} peak training memory", mem / 2**20, unit="MiB", higher_is_better=False)
        run.add(f"{tag} training time", t_train, unit="s", timing=True)
        rows.append(f"| {objective} | {n_steps} | {sizes.mean():.2f} | {ratio_mean:.3f} | {ratio_best:.3f} | "
                    f"{mem / 2**20:.1f} |")


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


def run_repro(out: Path, *, seed: int = 0, quick: bool = False) -> RunResult:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    scale = QUICK if quick else ReproScale()
    run = RunResult.start("iclr25-sdds", "repro", seed=seed, config={"quick": quick, **dataclasses.asdict(scale)})
    ising_rows: list[str] = []
    mis_rows: list[str] = []
    mem_rows: list[str] = []
    fig = _memory_section(run, scale, out, mem_rows)
    run.add_figure(fig, relative_to=out)
    _ising_section(run, scale, seed, ising_rows)
    _mis_section(run, scale, seed, mis_rows)
    tables = "\n".join([
        "### Critical Ising (beta_c), relative errors against the exact finite-lattice values", "",
        "| L | sampler | F (SN-NIS) ± SE | F (variational bound) | U (SN-NIS) | S (SN-NIS) | ESS/M | U (NMCMC "
        "or Metropolis) | acceptance | train s |",
        "|---|---|---|---|---|---|---|---|---|---|", *ising_rows, "",
        f"⚠: ESS/M below {MIN_ESS_FRACTION} (or an entropy outside [0, ln 2]): the SN-NIS columns of that row are "
        "unreliable (see the WARNING rows of results.json).", "",
        f"### MIS on {scale.mis_test} test graphs (ER, {scale.mis_nodes[0]}-{scale.mis_nodes[1]} nodes, mean degree 6)",
        "", "| method | steps | mean set size | mean CE / optimum | best-of-8 / optimum | peak train memory (MiB) |",
        "|---|---|---|---|---|---|", *mis_rows, "",
        "### Peak temporary memory of one training step (MiB), 6x6 Ising, 64 samples", "",
        "| steps | diffuco | rkl_rl | fkl_nis |", "|---|---|---|---|", *mem_rows, "",
    ])
    run.notes = tables
    with atomic_write(out / "tables.md") as f:
        f.write(tables)
    print(tables)
    run.finish().save(out / "results.json")
    return run
