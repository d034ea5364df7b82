"""Command line of ``iclr25 sdds``: ``demo``, ``repro``, ``train --config FILE``, ``estimate --checkpoint DIR``."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iclr25.utils import cli as ucli
from iclr25.utils.device import add_device_argument
from iclr25.utils.guards import check_size
from iclr25.utils.io import read_json
from iclr25.utils.outputs import add_output
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import check_seed, jax_key

# The commands import the JAX modules when they run, so that `--help` answers without loading JAX.
#: Default of `estimate --min-ess` (the same as iclr25.sdds.MIN_ESS_FRACTION, kept here without importing JAX).
MIN_ESS_FRACTION = 0.1

DESCRIPTION = """Scalable discrete diffusion samplers (Sanokowski et al., ICLR 2025).

  demo                       a small Ising sampler (fKL w/ MC; the shipped seed-0 checkpoint, or --train), SN-NIS
                             and neural MCMC vs exact values
  repro                      reduced-scale reproduction: critical Ising L = 6, 8, 12, MIS, memory versus steps
  train --config FILE        train a sampler from a JSON config, write a checkpoint folder
  estimate --checkpoint DIR  SN-NIS estimates (and exact values for Ising lattices) of a checkpoint; estimates
                             with an ESS fraction below --min-ess (0.1) carry a warning

Config file (JSON): {"problem": {...}, "sampler": {SamplerConfig fields}, "seed": 0}, where problem is
{"kind": "ising", "L": 6, "spin_glass": false} or
{"kind": "mis", "n_graphs": 100, "n_min": 50, "n_max": 100, "mean_degree": 6}.
"""
DEMO_HELP = "a small Ising sampler vs exact values (at most 60 s)"
REPRO_HELP = "the reduced-scale reproduction (at most 10 min)"
TRAIN_HELP = ("train the sampler from scratch (about 10 s) instead of loading the shipped seed-0 "
              "checkpoint (seeds other than 0 always train)")


def demo(args: argparse.Namespace) -> int:
    from .demo import run_demo  # noqa: PLC0415 - keeps --help fast

    run = run_demo(args.out, seed=check_seed(args.seed), train_from_scratch=args.train,
                   device=_device(args.device))
    print(run.to_markdown())
    return 0


def repro(args: argparse.Namespace) -> int:
    from .repro import run_repro  # noqa: PLC0415 - keeps --help fast

    dev = _device(args.device)
    run = run_repro(args.out, seed=check_seed(args.seed), quick=args.quick, device=dev)
    print(run.to_markdown())
    if not args.quick:
        # the paper's claims over the repro rung's 5 seeds (about 4 min at load ~3): claims.json beside results.json
        from iclr25.utils.device import device_scope  # noqa: PLC0415

        from .claims import REGISTRY  # noqa: PLC0415

        # the measuring code reads its device from $ICLR25_DEVICE (a registry's functions take seed and rung only)
        with device_scope(args.device):
            REGISTRY.run("repro", command="iclr25 sdds repro").publish(args.out)
    return 0


def _device(spec: str) -> Any:
    """The JAX device of ``--device`` (an absent one is a one-line error naming the flag, before any work)."""
    from .diffusion import resolve_device  # noqa: PLC0415

    return resolve_device(spec)


def _problem_from_spec(spec: Any, path: Path) -> Any:
    from .energy import IsingEnergy, MISEnergy
    from .graphs import random_graphs  # noqa: PLC0415

    kind = spec["kind"]
    try:
        if kind == "ising":
            return IsingEnergy(spec.get("L", 4), spin_glass=bool(spec.get("spin_glass", False)),
                               seed=int(spec.get("seed", 0)))
        graphs = random_graphs(int(spec.get("n_graphs", 100)), int(spec.get("n_min", 50)),
                               int(spec.get("n_max", 100)), mean_degree=float(spec.get("mean_degree", 6.0)),
                               seed=int(spec.get("seed", 0)))
        return MISEnergy.from_graphs(graphs)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: problem: {exc}") from exc


def _read_train_config(path: Path, *, force: bool = False, on_accelerator: bool = False) -> dict[str, Any]:
    """The JSON config of ``train``, checked (without JAX) before anything is built."""
    spec = read_json(path, what="config file")
    if not isinstance(spec, dict):
        raise ValueError(f"{path}: expected a JSON object with 'problem' and 'sampler', got {type(spec).__name__}")
    unknown = sorted(set(spec) - {"problem", "sampler", "seed"})
    if unknown:
        raise ValueError(f"{path}: unknown entries {unknown}; expected 'problem', 'sampler' and 'seed'")
    problem = spec.get("problem")
    if not isinstance(problem, dict) or problem.get("kind") not in ("ising", "mis"):
        raise ValueError(f"{path}: 'problem' must be an object with \"kind\": \"ising\" or \"mis\", got {problem!r}")
    if not isinstance(spec.get("sampler", {}), dict):
        raise ValueError(f"{path}: 'sampler' must be an object of SamplerConfig fields")
    epochs = spec["sampler"].get("n_epochs") if "sampler" in spec else None
    if isinstance(epochs, int) and not isinstance(epochs, bool) and epochs > 0:
        check_size(f"{path}: sampler n_epochs = {epochs}", seconds_needed=epochs * _SECONDS_PER_EPOCH_FLOOR,
                   force=force, on_accelerator=on_accelerator)
    try:
        check_seed(spec.get("seed", 0))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from exc
    return spec


def cmd_train(args: argparse.Namespace) -> int:
    """Train a sampler; the config is JSON: {"problem": {"kind": "ising", "L": 4}, "sampler": {...}, "seed":
    0}."""
    from iclr25.utils.device import on_accelerator  # noqa: PLC0415

    # a GPU run is not judged by the CPU-time floor per epoch (an absent GPU is refused later)
    gpu = on_accelerator(getattr(args, "device", None))
    spec = _read_train_config(args.config, force=args.force, on_accelerator=gpu)
    from .checkpoint import save_sampler  # noqa: PLC0415 - JAX only once the config has been read
    from .diffusion import SamplerConfig  # noqa: PLC0415
    from .objectives import train  # noqa: PLC0415

    dev = _device(args.device)
    energy = _problem_from_spec(spec["problem"], args.config)
    try:
        config = SamplerConfig.from_dict(spec.get("sampler", {}))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{args.config}: sampler: {exc}") from exc
    sampler = train(config, energy, jax_key(check_seed(spec.get("seed", 0))), device=dev)
    last = {k: float(v[-1]) for k, v in sampler.history.items() if len(v)}
    _check_finite_weights(sampler.model, f"{args.config}: training diverged", last)
    out = save_sampler(sampler, args.out)
    from iclr25.utils.device import describe_device  # noqa: PLC0415

    print(f"wrote {out} (trained on {describe_device(dev)}); last epoch: {last}")
    return 0


def _check_finite_weights(model: Any, what: str, last: dict[str, float]) -> None:
    """Refuse to save a network whose weights are not all finite (a diverged training): nothing is written."""
    import equinox as eqx  # noqa: PLC0415
    import jax  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    leaves = jax.tree_util.tree_leaves(eqx.filter(model, eqx.is_inexact_array))
    if not all(np.isfinite(np.asarray(a)).all() for a in leaves):
        raise ValueError(f"{what}: the network's weights are not finite (last epoch: {last}); no checkpoint "
                         "written (a smaller learning_rate may help)")


def _check_estimate_args(args: argparse.Namespace) -> None:
    if isinstance(args.n_samples, bool) or not isinstance(args.n_samples, int) or args.n_samples < 64:
        raise ValueError(f"--n-samples must be an integer >= 64 (64 neural-MCMC chains), got {args.n_samples!r}")
    if args.beta is not None and not (math.isfinite(args.beta) and args.beta > 0):
        raise ValueError(f"--beta must be a positive finite number, got {args.beta!r}")
    if not (math.isfinite(args.epsilon) and 0 <= args.epsilon < 1):
        raise ValueError(f"--epsilon must be a number in [0, 1), got {args.epsilon!r}")
    if not (math.isfinite(args.min_ess) and 0 <= args.min_ess <= 1):
        raise ValueError(f"--min-ess must be a number in [0, 1], got {args.min_ess!r}")
    check_seed(args.seed, "--seed")
    # the bootstrap resamples 25 x M indices and weights at a time (16 B each), plus the draws and energies
    check_size(f"--n-samples {args.n_samples}", bytes_needed=args.n_samples * _BYTES_PER_ESTIMATE_SAMPLE,
               force=args.force)


#: Every file ``train`` writes at the top of its --out folder (iclr25.sdds.checkpoint.WRITTEN, without importing it).
CHECKPOINT_FILES = ("config.json", "energy.npz", "model.eqx", "history.npz", "manifest.json")
#: Memory per SN-NIS sample of ``estimate`` (bootstrap blocks of 25 resamples x 16 B, draws, energies, weights).
_BYTES_PER_ESTIMATE_SAMPLE = 25 * 16 + 64
#: A floor on the seconds one training epoch takes on 2 CPU cores (a 4x4 lattice, 64 samples: ~0.05 s).
_SECONDS_PER_EPOCH_FLOOR = 0.01


def cmd_estimate(args: argparse.Namespace) -> int:
    """SN-NIS estimates of log Z, F, U, S with bootstrap SEs and neural MCMC."""
    run = RunResult.start("iclr25-sdds", "estimate", seed=args.seed)
    _check_estimate_args(args)
    from .checkpoint import load_sampler, read_checkpoint_spec  # noqa: PLC0415

    read_checkpoint_spec(args.checkpoint)  # a bad folder is reported before JAX is imported
    from iclr25.utils.device import describe_device  # noqa: PLC0415

    dev = _device(args.device)
    run.machine["device"] = describe_device(dev)
    from .energy import IsingEnergy  # noqa: PLC0415
    from .estimators import add_warnings, estimate, neural_mcmc  # noqa: PLC0415
    from .exact import exact_ising  # noqa: PLC0415

    sampler = load_sampler(args.checkpoint)
    energy = sampler.energy
    if args.beta is None and not sampler.config.temperature > 0:
        raise ValueError(f"{args.checkpoint} was trained at temperature {sampler.config.temperature} (combinatorial "
                         "optimisation), which has no inverse temperature to estimate at: pass --beta")
    beta = args.beta if args.beta is not None else 1.0 / sampler.config.temperature
    mc_steps = max(2, args.n_samples // 64 - 1)
    run.config = {"checkpoint": str(args.checkpoint), "beta": beta, "n_samples": args.n_samples,
                  "epsilon": args.epsilon, "min_ess_fraction": args.min_ess, "nmcmc_chains": 64,
                  "nmcmc_steps": mc_steps}
    est = estimate(sampler, energy, beta, args.n_samples, jax_key(args.seed), seed=args.seed, epsilon=args.epsilon,
                   device=dev)
    mc = neural_mcmc(sampler, energy, beta, n_chains=64, n_steps=mc_steps, burn_in=1, key=jax_key(args.seed + 1),
                     seed=args.seed, device=dev)
    exact = None
    if isinstance(energy, IsingEnergy) and not energy.spin_glass:
        exact = exact_ising(energy.L, beta)
    for name, value, se, ref in (
        ("free energy per spin", est.free_energy, est.free_energy_se, exact and exact.free_energy),
        ("internal energy per spin", est.internal_energy, est.internal_energy_se, exact and exact.internal_energy),
        ("entropy per spin", est.entropy, est.entropy_se, exact and exact.entropy),
    ):
        run.add(name, value, peer=ref, peer_name="exact" if ref is not None else None)
        run.add(name + " SE", se)
    run.add("ESS fraction", est.ess_fraction, higher_is_better=True)
    run.add("NMCMC internal energy per spin", mc.internal_energy, peer=exact and exact.internal_energy,
            peer_name="exact" if exact else None)
    run.add("NMCMC acceptance", mc.acceptance_rate, higher_is_better=True)
    bad = [name for name, v in (("free energy", est.free_energy), ("internal energy", est.internal_energy),
                                ("entropy", est.entropy), ("NMCMC internal energy", mc.internal_energy))
           if not math.isfinite(float(v))]
    if bad:
        raise ValueError(f"{args.checkpoint}: the {', '.join(bad)} estimate(s) are not finite (the sampler's "
                         "weights or log-probabilities overflow); nothing written")
    warnings = add_warnings(run, est, args.min_ess)
    run.finish()
    if args.out is not None:
        run.save(Path(args.out) / "results.json")
    print(run.to_markdown())
    for w in warnings:
        print(f"iclr25 sdds: warning: {w}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub, d, r = ucli.method_commands("sdds", DESCRIPTION, demo=demo, demo_help=DEMO_HELP, train=TRAIN_HELP,
                                             repro=repro, repro_help=REPRO_HELP, quick=True, jax_cache="ICLR25_SDDS_JAX_CACHE")
    t = ucli.add_command(sub, "train", cmd_train, force=True, help="train a sampler from a JSON config file")
    t.add_argument("--config", required=True, type=Path, help="JSON config file")
    add_output(t, "--out", kind="folder", default="results/sdds-checkpoint", run_files=CHECKPOINT_FILES,
               help="checkpoint folder: config.json, energy.npz, model.eqx, history.npz and manifest.json "
                    "(written last)")
    e = ucli.add_command(sub, "estimate", cmd_estimate, seed="random seed (default: 0)", force=True, help="SN-NIS and neural-MCMC estimates of a checkpoint")
    e.add_argument("--checkpoint", required=True, type=Path, help="folder written by 'train'")
    e.add_argument("--n-samples", type=int, default=4096, help="number of samples M, >= 64 (default: 4096)")
    e.add_argument("--beta", type=float, default=None, help="inverse temperature (default: 1 / trained T)")
    e.add_argument("--epsilon", type=float, default=0.0, help="uniform mixture of the last step (default: 0)")
    e.add_argument("--min-ess", type=float, default=MIN_ESS_FRACTION,
                   help=f"warn when the ESS fraction ESS / M is below this (default: {MIN_ESS_FRACTION})")
    add_output(e, "--out", kind="folder", default=None, run_files=("results.json",),
               help="folder for results.json (default: none; never the --checkpoint folder or inside it)")
    for p in (d, r, t, e):  # JAX computes there (a GPU with a CUDA jaxlib); numpy results on the host
        add_device_argument(p)
    return ucli.run_main(parser, argv)


