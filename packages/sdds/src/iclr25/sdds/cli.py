"""Command line of ``iclr25 sdds``: ``demo``, ``repro``, ``train --config FILE``, ``estimate --checkpoint DIR``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iclr25.utils.cli import add_run_command, method_parser, run_main
from iclr25.utils.io import read_json
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import check_seed, jax_key

# The commands import the JAX modules when they run, so that `--help` answers without loading JAX.

DESCRIPTION = """Scalable discrete diffusion samplers (Sanokowski et al., ICLR 2025).

  demo                       train a small Ising sampler (fKL w/ MC), SN-NIS and neural MCMC vs exact values
  repro                      reduced-scale reproduction: critical Ising, MIS, memory versus steps
  train --config FILE        train a sampler from a JSON config, write a checkpoint folder
  estimate --checkpoint DIR  SN-NIS estimates (and exact values for Ising lattices) of a checkpoint

Config file (JSON): {"problem": {...}, "sampler": {SamplerConfig fields}, "seed": 0}, where problem is
{"kind": "ising", "L": 6, "spin_glass": false} or
{"kind": "mis", "n_graphs": 100, "n_min": 50, "n_max": 100, "mean_degree": 6}.
"""


def demo(args: argparse.Namespace) -> int:
    from .demo import run_demo  # noqa: PLC0415 - keeps --help fast

    run = run_demo(args.out, seed=check_seed(args.seed))
    print(run.to_markdown())
    return 0


def repro(args: argparse.Namespace) -> int:
    from .repro import run_repro  # noqa: PLC0415 - keeps --help fast

    run = run_repro(args.out, seed=check_seed(args.seed), quick=args.quick)
    print(run.to_markdown())
    return 0


def _problem_from_spec(spec: Any) -> Any:
    from .energy import IsingEnergy, MISEnergy, random_graphs  # noqa: PLC0415

    if not isinstance(spec, dict) or "kind" not in spec:
        raise ValueError(f"config 'problem' must be an object with a 'kind', got {spec!r}")
    kind = spec["kind"]
    if kind == "ising":
        return IsingEnergy(spec.get("L", 4), spin_glass=bool(spec.get("spin_glass", False)),
                           seed=int(spec.get("seed", 0)))
    if kind == "mis":
        graphs = random_graphs(int(spec.get("n_graphs", 100)), int(spec.get("n_min", 50)),
                               int(spec.get("n_max", 100)), mean_degree=float(spec.get("mean_degree", 6.0)),
                               seed=int(spec.get("seed", 0)))
        return MISEnergy.from_graphs(graphs)
    raise ValueError(f"config problem kind must be 'ising' or 'mis', got {kind!r}")


def cmd_train(args: argparse.Namespace) -> int:
    from .checkpoint import save_sampler  # noqa: PLC0415
    from .diffusion import SamplerConfig  # noqa: PLC0415
    from .objectives import train  # noqa: PLC0415

    spec = read_json(args.config, what="config file")
    if not isinstance(spec, dict):
        raise ValueError(f"{args.config}: expected a JSON object with 'problem' and 'sampler'")
    energy = _problem_from_spec(spec.get("problem"))
    config = SamplerConfig.from_dict(spec.get("sampler", {}))
    seed = check_seed(spec.get("seed", 0))
    sampler = train(config, energy, jax_key(seed))
    out = save_sampler(sampler, args.out)
    last = {k: float(v[-1]) for k, v in sampler.history.items() if len(v)}
    print(f"wrote {out}; last epoch: {last}")
    return 0


def cmd_estimate(args: argparse.Namespace) -> int:
    from .checkpoint import load_sampler  # noqa: PLC0415
    from .energy import IsingEnergy  # noqa: PLC0415
    from .estimators import estimate, neural_mcmc  # noqa: PLC0415
    from .exact import exact_ising  # noqa: PLC0415

    sampler = load_sampler(args.checkpoint)
    energy = sampler.energy
    beta = args.beta if args.beta is not None else 1.0 / sampler.config.temperature
    est = estimate(sampler, energy, beta, args.n_samples, jax_key(args.seed), seed=args.seed, epsilon=args.epsilon)
    mc = neural_mcmc(sampler, energy, beta, n_chains=64, n_steps=max(2, args.n_samples // 64 - 1),
                     burn_in=1, key=jax_key(args.seed + 1), seed=args.seed)
    run = RunResult.start("iclr25-sdds", "estimate", seed=args.seed,
                          config={"checkpoint": str(args.checkpoint), "beta": beta, "n_samples": args.n_samples})
    exact = None
    if isinstance(energy, IsingEnergy) and not energy.spin_glass and energy.L <= 12:
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
    if args.out is not None:
        run.finish().save(Path(args.out) / "results.json")
    print(run.finish().to_markdown())
    return 0


def enable_compilation_cache() -> None:
    """Keep compiled XLA programs across runs (JAX's persistent cache), so a second run starts fast.

    The folder is ``$ICLR25_SDDS_JAX_CACHE`` or ``~/.cache/iclr25-sdds/jax``; set the variable to an empty
    string to turn the cache off. An explicit ``JAX_COMPILATION_CACHE_DIR`` is left alone.
    """
    if os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        return
    folder = os.environ.get("ICLR25_SDDS_JAX_CACHE", str(Path.home() / ".cache" / "iclr25-sdds" / "jax"))
    if not folder:
        return
    if "jax" in sys.modules:  # already imported (e.g. main() called from a notebook): configure it directly
        jax = sys.modules["jax"]
        jax.config.update("jax_compilation_cache_dir", folder)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    else:  # JAX reads these when it is imported; setting them here keeps `--help` from importing JAX
        os.environ["JAX_COMPILATION_CACHE_DIR"] = folder
        os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")


def main(argv: Sequence[str] | None = None) -> int:
    enable_compilation_cache()
    parser, sub = method_parser("sdds", DESCRIPTION)
    add_run_command(sub, "demo", demo, help="a small Ising sampler vs exact values (at most 60 s)",
                    default_out="results/sdds")
    p = add_run_command(sub, "repro", repro, help="the reduced-scale reproduction (at most 10 min)",
                        default_out="results/sdds-repro")
    p.add_argument("--quick", action="store_true", help="a much smaller run, for smoke tests")
    t = sub.add_parser("train", help="train a sampler from a JSON config file",
                       description="Train a sampler; the config is JSON: "
                                   '{"problem": {"kind": "ising", "L": 4}, "sampler": {...}, "seed": 0}.')
    t.add_argument("--config", required=True, type=Path, help="JSON config file")
    t.add_argument("--out", type=Path, default=Path("results/sdds-checkpoint"),
                   help="checkpoint folder (default: results/sdds-checkpoint)")
    t.set_defaults(func=cmd_train)
    e = sub.add_parser("estimate", help="SN-NIS and neural-MCMC estimates of a checkpoint",
                       description="SN-NIS estimates of log Z, F, U, S with bootstrap SEs and neural MCMC.")
    e.add_argument("--checkpoint", required=True, type=Path, help="folder written by 'train'")
    e.add_argument("--n-samples", type=int, default=4096, help="number of samples M (default: 4096)")
    e.add_argument("--beta", type=float, default=None, help="inverse temperature (default: 1 / trained T)")
    e.add_argument("--epsilon", type=float, default=0.0, help="uniform mixture of the last step (default: 0)")
    e.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    e.add_argument("--out", type=Path, default=None, help="folder for results.json (default: none)")
    e.set_defaults(func=cmd_estimate)
    return run_main(parser, argv)


