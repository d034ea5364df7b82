"""Command line of ``iclr25 bopito``: ``demo``, ``repro``, ``simulate``, ``train``, ``sample``, ``alanine-md``.

torch, scipy and deeptime are imported inside the commands, so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iclr25.utils import cli as ucli
from iclr25.utils.device import add_device_argument, describe_device, device_scope, torch_device
from iclr25.utils.guards import check_size
from iclr25.utils.io import naming_write_errors
from iclr25.utils.outputs import add_output, check_output_path
from iclr25.utils.results import RunResult

DESCRIPTION = ("BoPITO (ICLR 2025): Boltzmann priors for implicit transfer operators — lag-conditioned diffusion "
               "models with a frozen equilibrium prior")
DEMO_HELP = "prior, ITO and BoPITO on 100 short Prinz trajectories (seconds)"
REPRO_HELP = "the reduced-scale reproduction and the claims at the repro rung (claims.json; about 7 min)"

PACKAGE = "iclr25-bopito"
#: what each command writes at the top of its --out folder: any of them there is a previous run, kept without
#: --overwrite (``repro`` writes its simulation cache in OUT/cache and reuses it)
DEMO_FILES = ("results.json", "acf.png", "density.png")
REPRO_FILES = ("results.json", "claims.json", "details.json", "tables.md", "table.md", "acf.png", "density.png",
               "ladder.png")
MODEL_FILES = ("model.pt", "config.json", "manifest.json", "results.json")


def _positive_int(v: Any, flag: str, minimum: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise ValueError(f"{flag} must be an integer >= {minimum}, got {v!r}")
    return v


# rough costs on one core of this machine kind, for the size guard (an order of magnitude is enough)
_EM_STEP_S = 8e-6          # one Euler-Maruyama step of the Prinz gradient, fixed numpy overhead
_EM_STEP_PER_WALKER_S = 3e-8
_TRAIN_STEP_S = 3e-3       # one Adam step of the default MLP (3 x 64) on 512 pairs, incl. the prior for BoPITO
_SAMPLE_S = 2e-6           # one denoising step of one sample


def _guard_simulate(args: argparse.Namespace) -> None:
    steps = args.steps_per_frame if args.steps_per_frame is not None else 500
    frames = args.n_frames + args.burn_in
    check_size(f"--n-traj {args.n_traj} --n-frames {args.n_frames} --burn-in {args.burn_in}",
               bytes_needed=8.0 * args.n_traj * (args.n_frames + 2 * steps + 4),
               seconds_needed=frames * steps * (_EM_STEP_S + _EM_STEP_PER_WALKER_S * args.n_traj),
               force=args.force)


def _train_step_seconds(args: argparse.Namespace) -> float:
    scale = max(1.0, args.batch_size * args.width ** 2 * args.depth / (512 * 64 ** 2 * 3))
    return _TRAIN_STEP_S * scale


def _lambda_flag(v: Any, flag: str) -> float:
    if not (isinstance(v, float) and math.isfinite(v) and 0.0 < v < 1.0):
        raise ValueError(f"{flag} must be a number in the open interval (0, 1), got {v!r}")
    return v


# ------------------------------------------------------------------------------------------------------ demo
def _check_run_folder(args: argparse.Namespace, files: tuple[str, ...]) -> None:
    """``--out`` of demo/repro: the shared declaration looks for results.json; the figures and tables the command
    writes there are a previous run too."""
    check_output_path(args.out, flag="--out", kind="folder", overwrite=args.overwrite, run_files=files)


def _save_results(run: RunResult, path: Path) -> None:
    with naming_write_errors(path):
        run.finish().save(path)


def demo(args: argparse.Namespace) -> int:
    _check_run_folder(args, DEMO_FILES)
    dev = torch_device(args.device)  # an absent device is one line, before any work
    run = RunResult.start(PACKAGE, "demo", seed=args.seed, config={})
    run.machine["device"] = describe_device(dev)
    ucli.set_torch_threads(args.threads)
    from iclr25.utils.seeding import seed_everything

    from .experiments import DEMO_BUDGET, run_demo
    from .figures import plot_acf, plot_densities

    seed_everything(args.seed)
    res = run_demo(seed=args.seed, device=dev)
    ref = res["ref"]
    run.config.update({"budget": DEMO_BUDGET.__dict__, "n_traj": res["data"].n_traj,
                       "n_frames": res["data"].n_frames, "max_lag": 100, "lambda_hat": 0.994,
                       "long_lag": res["long_lag"], "x_start": res["x_start"], "lags": res["lags"]})
    # the headline: BoPITO's long-lag samples are equilibrium samples (the paper's "asymptotically unbiased")
    run.add(f"W1(BoPITO at lag {res['long_lag']} from x0={res['x_start']}, Boltzmann)", res["w1"]["bopito"],
            peer=res["w1"]["ito"], peer_name="ITO (same data, size, budget)", higher_is_better=False,
            headline=True, claim="long-lag-equilibrium")
    err_b = float(res["acf"]["bopito"].mean_error[0])
    err_i = float(res["acf"]["ito"].mean_error[0])
    run.add(f"mean |C(N) error|, N in {res['lags']}", err_b, peer=err_i, peer_name="ITO", higher_is_better=False)
    run.add("exact slowest implied timescale (frames)", float(ref.timescales[0]))
    run.add("prior final loss", float(res["bg"].final_loss[0]), higher_is_better=False)
    run.add("BoPITO training s", res["bopito"].seconds, peer=res["ito"].seconds, peer_name="ITO", unit="s",
            higher_is_better=False, timing=True)
    args.out.mkdir(parents=True, exist_ok=True)
    fine = list(range(1, 1001))
    f1 = plot_acf(args.out / "acf.png", res["lags"],
                  {"ITO": res["acf"]["ito"].c_model[0], "BoPITO": res["acf"]["bopito"].c_model[0]},
                  fine, ref.correlation(fine), title="Prinz, 100 short trajectories")
    f2 = plot_densities(args.out / "density.png", ref.axes[0], ref.density(),
                        {"ITO": res["long"]["ito"][0, :, 0], "BoPITO": res["long"]["bopito"][0, :, 0]},
                        title=f"lag {res['long_lag']} from x0 = {res['x_start']}")
    run.add_figure(f1, relative_to=args.out)
    run.add_figure(f2, relative_to=args.out)
    _save_results(run, args.out / "results.json")
    print(run.to_markdown())
    return 0


# ----------------------------------------------------------------------------------------------------- repro
def repro(args: argparse.Namespace) -> int:
    _check_run_folder(args, REPRO_FILES)
    torch_device(args.device)  # an absent device is one line, before any work
    from .repro import repro_command

    # every model, sampler and claim of the repro computes on --device (device=None reads $ICLR25_DEVICE)
    with device_scope(args.device):
        return repro_command(args)


# -------------------------------------------------------------------------------------------------- simulate
def simulate_cmd(args: argparse.Namespace) -> int:
    """Euler-Maruyama (h = 1e-5, 500 steps per frame for Prinz) for all walkers at once; writes x (n_traj,
    n_frames, dim), frame_dt and the parameters."""
    _positive_int(args.n_traj, "--n-traj")
    _positive_int(args.n_frames, "--n-frames")
    _positive_int(args.burn_in, "--burn-in", 0)
    if args.steps_per_frame is not None:
        _positive_int(args.steps_per_frame, "--steps-per-frame")
    _guard_simulate(args)
    from .simulation import simulate
    from .systems import get_system

    pot = get_system(args.system)
    if args.x0 == "boltzmann":
        x0: Any = "boltzmann"
    else:
        x0 = ucli.number_list(args.x0, "--x0 (or 'boltzmann')")
        if len(x0) != pot.dim:
            raise ValueError(f"--x0 must be 'boltzmann' or {pot.dim} comma-separated numbers, got {args.x0!r}")
    tr = simulate(pot, args.n_traj, args.n_frames, x0=x0, h=args.h, steps_per_frame=args.steps_per_frame,
                  burn_in=args.burn_in, seed=args.seed)
    with naming_write_errors(args.out):
        tr.save(args.out)
    print(f"wrote {args.out}: x {tr.x.shape} (n_traj, n_frames, dim), frame_dt {tr.frame_dt:g}")
    return 0


# ----------------------------------------------------------------------------------------------------- train
def _load_train_data(args: argparse.Namespace) -> Any:
    """DATA of ``train``: one .npz/.npy of features, or MD trajectory files (.xtc/.dcd/.h5, or .npy coordinates
    with --top) featurised as backbone dihedrals (:mod:`iclr25.bopito.mdfiles`)."""
    from .mdfiles import MD_SUFFIXES, load_md_trajectories
    from .systems import load_trajectories

    _positive_int(args.stride, "--stride")
    paths = list(args.data)
    md_files = [p for p in paths if Path(p).suffix.lower() in MD_SUFFIXES and Path(p).suffix.lower() != ".npy"]
    if args.top is None and not md_files:
        if len(paths) != 1:
            raise ValueError(f"DATA: {len(paths)} files given without --top; several files are MD trajectories "
                             "(.xtc, .dcd, .h5, or .npy coordinates) and need --top PDB, features are one .npz/.npy")
        if args.stride != 1:
            raise ValueError("--stride applies to MD trajectories (with --top or .xtc/.dcd/.h5 DATA)")
        return load_trajectories(paths[0])
    data = load_md_trajectories(paths, args.top, stride=args.stride)
    print(f"read {data.n_traj} trajectory file(s): {data.n_frames} frames each ({data.frame_dt:g} "
          f"{data.params['frame_unit']} apart), {data.dim} features: {data.params['features']}")
    return data


#: --lambda-hat auto's regular grid has 40^dim cells; above this many, it is refused before any training
_MAX_GRID_CELLS = 100_000


def _auto_lambda_hat(data: Any, estimate_lambda: Any) -> float:
    """λ̂ for ``--lambda-hat auto``: MD dihedral features of one φ and one ψ (alanine dipeptide) as the alanine
    experiment does (deeptime's MSM on the 10 × 10 φ/ψ grid, λ̂ = exp(−1/t_2)); other data by TICA on a regular
    grid (1-D or 2-D; more dimensions are refused: pass --lambda-hat)."""
    lag = min(10, data.n_frames - 1)
    if data.system == "md" and data.dim == 4:
        from .alanine import angles_from_features
        from .alanine_experiment import fit_grid_msm

        try:
            lam = fit_grid_msm(angles_from_features(data.x), lag).lambda_hat
        except (ValueError, RuntimeError) as exc:  # deeptime: no connected set of grid states
            raise ValueError(f"--lambda-hat auto: no phi/psi grid MSM at lag {lag} can be estimated from "
                             f"{data.n_traj} x {data.n_frames} frames ({exc}); pass --lambda-hat") from None
        if not 0.0 < lam < 1.0:
            raise ValueError(f"--lambda-hat auto: the phi/psi grid MSM at lag {lag} gives lambda_hat {lam:.4g}, "
                             "outside (0, 1) (too few or too short trajectories); pass --lambda-hat")
        print(f"lambda_hat estimated from the data (MSM on the 10 x 10 phi/psi grid, lag {lag}): {lam:.5f}")
        return lam
    if 40 ** data.dim > _MAX_GRID_CELLS:
        raise ValueError(f"--lambda-hat auto estimates lambda_hat on a regular grid of 40^{data.dim} cells, too many "
                         f"for {data.dim}-dimensional data; pass --lambda-hat (a number in (0, 1), e.g. "
                         "exp(-1/t_2) of the slowest implied timescale t_2 in frames)")
    lam = estimate_lambda(data.x, lagtime=lag)
    print(f"lambda_hat estimated from the data (TICA): {lam:.5f}")
    return lam


def train_cmd(args: argparse.Namespace) -> int:
    """DATA is an .npz with x (n_traj, n_frames[, dim]) (from `simulate`) or an .npy array of that shape, or your
    own MD: .xtc/.dcd/.h5 files (or .npy coordinates) with --top PDB, one trajectory per file, featurised as
    (sin, cos) of the backbone φ/ψ dihedrals. Writes config.json, model.pt (state dict, loaded with
    weights_only=True) and results.json to --out. A BoPITO model without --prior trains its prior on the frames
    of DATA first."""
    lam_hat = _check_train_options(args)
    dev = torch_device(args.device)
    data = _load_train_data(args)  # validates the files before any work
    max_lag = _train_max_lag(args, data)
    prior_model = _load_prior(args)
    run = RunResult.start(PACKAGE, "train", seed=args.seed, config={})
    run.machine["device"] = describe_device(dev)
    ucli.set_torch_threads(args.threads)
    import numpy as np

    from .analysis import estimate_lambda
    from .checkpoint import save_model
    from .training import fit_model

    lo, hi = data.x.min(axis=(0, 1)), data.x.max(axis=(0, 1))
    pad = 0.1 * np.maximum(hi - lo, 1e-3)
    box = tuple((float(a - p), float(b + p)) for a, b, p in zip(lo, hi, pad, strict=True))
    if prior_model is not None:
        box = prior_model.config.box
    common = {"dim": data.dim, "width": args.width, "depth": args.depth, "n_diffusion": args.n_diffusion,
              "steps": args.steps, "batch_size": args.batch_size, "lr": args.lr, "seed": args.seed, "box": box,
              "device": dev}
    if args.kind == "bopito" and lam_hat is None:
        lam_hat = _auto_lambda_hat(data, estimate_lambda)
    if args.kind == "bopito" and prior_model is None:
        prior_res = fit_model("bg", data, desc="prior", **{**common, "steps": args.prior_steps or args.steps})
        prior_model = prior_res.model
        run.add("prior final loss", float(prior_res.final_loss[0]), higher_is_better=False)
    res = fit_model(args.kind, data, prior=prior_model if args.kind == "bopito" else None,
                    max_lag=max_lag,
                    lambda_hat=lam_hat if args.kind == "bopito" else None,
                    lambda_int=args.lambda_int if args.kind == "bopito" else None, desc=args.kind, **common)
    data_files = [str(p) for p in args.data] if len(args.data) > 1 else str(args.data[0])
    run.config.update({"data": data_files, "kind": args.kind, **res.model.config.to_dict(),
                       "steps": args.steps, "batch_size": args.batch_size, "lr": args.lr,
                       "data_params": data.params})
    run.add("final training loss", float(res.final_loss[0]), higher_is_better=False)
    run.add("training s", res.seconds, unit="s", higher_is_better=False, timing=True)
    if not all(math.isfinite(float(v)) for v in np.ravel(res.final_loss)):
        raise ValueError(f"training diverged (final loss {np.ravel(res.final_loss).tolist()}); nothing written to "
                         f"{args.out}: lower --lr")
    save_model(res.model, args.out, extra={"data": data_files, "frame_dt": data.frame_dt})
    _save_results(run, args.out / "results.json")
    print(run.to_markdown())
    print(f"wrote {args.out / 'model.pt'}, {args.out / 'config.json'}, {args.out / 'manifest.json'} and "
          f"{args.out / 'results.json'}")
    return 0


# ---------------------------------------------------------------------------------------------------- sample
def _check_train_options(args: argparse.Namespace) -> float | None:
    """Every option of ``train`` and ``--out``, before any work; returns λ̂ (``None`` for ``auto``)."""
    if args.max_lag is not None:
        _positive_int(args.max_lag, "--max-lag")
    if args.prior_steps is not None:
        _positive_int(args.prior_steps, "--prior-steps")
    for v, flag, lo in ((args.steps, "--steps", 1),
                        (args.batch_size, "--batch-size", 1), (args.width, "--width", 1),
                        (args.depth, "--depth", 1), (args.n_diffusion, "--n-diffusion", 2)):
        _positive_int(v, flag, lo)
    lam_hat: float | None = None
    if args.lambda_hat != "auto":
        try:
            lam_hat = float(args.lambda_hat)
        except ValueError:
            raise ValueError(f"--lambda-hat must be 'auto' or a number in (0, 1), got {args.lambda_hat!r}") from None
        _lambda_flag(lam_hat, "--lambda-hat")
    if args.lambda_int is not None:
        _lambda_flag(args.lambda_int, "--lambda-int")
    n_steps = args.steps + ((args.prior_steps or args.steps) if args.kind == "bopito" and args.prior is None else 0)
    check_size(f"--steps {args.steps}" + (f" --prior-steps {args.prior_steps}" if args.prior_steps else ""),
               seconds_needed=n_steps * _train_step_seconds(args), force=args.force)
    return lam_hat


def _data_name(args: argparse.Namespace) -> str:
    return " ".join(str(p) for p in args.data) if isinstance(args.data, list) else str(args.data)


def _train_max_lag(args: argparse.Namespace, data: Any) -> int:
    """N_max: ``--max-lag``, checked against the trajectories, or the longest lag in the data (at most 1000)."""
    longest = data.n_frames - 1
    if args.kind != "bg":
        if longest < 1:
            raise ValueError(f"{_data_name(args)}: trajectories of {data.n_frames} frame(s) hold no lagged pairs; ITO "
                             "and BoPITO need at least 2 frames per trajectory")
        if args.max_lag is not None and args.max_lag > longest:
            raise ValueError(f"--max-lag {args.max_lag} is longer than the trajectories allow: {_data_name(args)} has "
                             f"{data.n_frames} frames, so the longest lag is {longest}; pass --max-lag {longest} "
                             "or less (or omit it)")
    max_lag = args.max_lag if args.max_lag is not None else min(1000, max(longest, 1))
    if args.kind != "bg" and args.max_lag is None:
        print(f"N_max (--max-lag) = {max_lag}: the longest lag in the data, at most 1000")
    return max_lag


def _load_prior(args: argparse.Namespace) -> Any:
    """The ``--prior`` checkpoint (a ``bg`` model), or ``None``."""
    if args.prior is None:
        return None
    from .checkpoint import load_model

    prior_model = load_model(args.prior, device=torch_device(args.device))
    if prior_model.config.kind != "bg":
        raise ValueError(f"--prior {args.prior}: expected a prior (kind 'bg'), got kind {prior_model.config.kind!r}")
    return prior_model


def sample_cmd(args: argparse.Namespace) -> int:
    """Writes an .npz with x (n, dim) — or (n, chain+1, dim) with --chain — x0 and lag."""
    if not (math.isfinite(args.lag) and args.lag >= 0) and not (args.lag == math.inf):
        raise ValueError(f"--lag must be a non-negative number of frames, got {args.lag!r}")
    if args.lag < 0:
        raise ValueError(f"--lag must be a non-negative number of frames, got {args.lag!r}")
    _positive_int(args.n, "--n")
    if args.steps != 0:
        _positive_int(args.steps, "--steps", 2)
    if args.chain < 0:
        raise ValueError(f"--chain must be an integer >= 0, got {args.chain}")
    if args.lambda_int is not None:
        _lambda_flag(args.lambda_int, "--lambda-int")
    n_denoise = (args.steps or 500) * max(1, args.chain)
    check_size(f"--n {args.n} --chain {args.chain} --steps {args.steps}",
               bytes_needed=8.0 * args.n * (max(1, args.chain) + 1) * 4,
               seconds_needed=args.n * n_denoise * _SAMPLE_S, force=args.force)
    dev = torch_device(args.device)
    from .checkpoint import load_model

    model = load_model(args.model, device=dev)
    if args.member < 0 or args.member >= model.n_models:
        raise ValueError(f"--member must be in [0, {model.n_models}), got {args.member}")
    model = model.member(args.member) if model.n_models > 1 else model
    import numpy as np

    from .reference import exact_reference
    from .systems import load_points

    if args.x0 == "boltzmann":
        x0 = exact_reference("prinz").sample_boltzmann(args.n, seed=args.seed) if model.config.dim == 1 else None
        if x0 is None:
            x0 = exact_reference("triple-well-2d").sample_boltzmann(args.n, seed=args.seed)
    elif args.x0.endswith((".npy", ".npz")):
        x0 = load_points(args.x0, model.config.dim)
    else:
        point = ucli.number_list(args.x0, "--x0 (or 'boltzmann', or a .npy/.npz file)")
        if len(point) != model.config.dim:
            raise ValueError(f"--x0 must have {model.config.dim} coordinate(s), got {args.x0!r}")
        x0 = np.tile(np.array(point), (args.n, 1))
    if model.config.kind == "bopito" and args.lambda_int is not None:
        model = model.with_lambda(lambda_int=args.lambda_int)
    run = RunResult.start(PACKAGE, "sample", seed=args.seed, config={})
    run.machine["device"] = describe_device(dev)
    ucli.set_torch_threads(args.threads)
    from iclr25.utils.io import atomic_path

    from .sampling import sample, sample_chain, sample_equilibrium

    steps = None if args.steps == 0 else args.steps
    if model.config.kind == "bg":
        xs = sample_equilibrium(model, args.n, steps=steps, seed=args.seed, device=dev)[0]
    elif args.chain:
        xs = sample_chain(model, x0, args.lag, args.chain, steps=steps, seed=args.seed, desc="chain", device=dev)[0]
    else:
        xs = sample(model, x0, args.lag, steps=steps, seed=args.seed, device=dev)[0]
    if not np.all(np.isfinite(xs)):
        raise ValueError(f"the samples are not finite ({int((~np.isfinite(xs)).sum())} entries); nothing written to "
                         f"{args.out}")
    with naming_write_errors(args.out), atomic_path(args.out) as tmp:
        np.savez(tmp, x=xs, x0=np.asarray(x0), lag=np.float64(args.lag))
    run.config.update({"model": str(args.model), "lag": args.lag, "n": int(len(x0)), "steps": args.steps,
                       "chain": args.chain, "kind": model.config.kind})
    run.add("sample mean", float(np.mean(xs[..., 0])))
    run.add("sample std", float(np.std(xs[..., 0])))
    run.finish()
    print(run.to_markdown())
    print(f"wrote {args.out}: x {xs.shape}")
    return 0


# ----------------------------------------------------------------------------------------------- alanine-md
PLATFORMS = ("auto", "CPU", "CUDA", "OpenCL", "Reference")
# molecule-ns of alanine dipeptide (2 fs) per CPU second with many copies: vacuum; OBC GBSA (the shipped GBSA set:
# 13.8 ns in 1434 s CPU under load 3-4, 2026-12-05; 50 copies x 20 ps had taken 58 s CPU under load 2); TIP3P water, one molecule per context (2269 atoms, PME:
# 4 ps in 22.5 s CPU, about 11 ms per 2-fs step, load 2.8, 2026-12-05: docs/alanine-gbsa/tip3p-cost.json)
_MD_NS_PER_CPU_S = {"vacuum": 0.15, "gbsa": 0.0096, "tip3p": 0.00018}


def alanine_md_cmd(args: argparse.Namespace) -> int:
    """Needs the extra `md` (OpenMM). Ace-Ala-NMe built offline, Amber ff14SB in vacuum (or, --solvent gbsa,
    openmmtools' alanine-dipeptide-gbsa files: Amber ff96 in OBC GBSA; --solvent tip3p, its
    alanine-dipeptide-explicit files: Amber ff96 in TIP3P water, PME; extra `solvent`), Langevin 300 K, 2 fs,
    frames of 1 ps (--steps-per-frame 500; 50: frames of 0.1 ps, the shipped explicit-water set's). Writes an .npz with equilibrium (n_eq, eq_frames, 2) and short (n_short, short_frames, 2)
    angles in radians (int16, 1e-4 rad) and meta (JSON). The defaults made the data set shipped in the wheel.
    """
    import time

    from .alanine import MDConfig, generate_data, openmm_platform, save_data

    for flag in ("n_eq", "eq_frames", "n_short", "short_frames"):
        _positive_int(getattr(args, flag), "--" + flag.replace("_", "-"))
    _positive_int(args.burn_in, "--burn-in", minimum=0)
    _positive_int(args.steps_per_frame, "--steps-per-frame")
    out = args.out
    config = MDConfig(solvent=args.solvent, steps_per_frame=args.steps_per_frame)
    if args.solvent in ("gbsa", "tip3p"):
        from .alanine import gbsa_files

        gbsa_files(args.solvent)  # openmmtools' files missing: one line, before any work
    platform = openmm_platform(args.platform)  # a platform OpenMM lacks is one line, before any work
    frame_ps = config.timestep_fs * config.steps_per_frame / 1000.0
    ns = (args.n_eq * (args.eq_frames + args.burn_in) + args.n_short * args.short_frames) * frame_ps / 1000.0
    check_size(f"--n-eq {args.n_eq} --eq-frames {args.eq_frames} --n-short {args.n_short} "
               f"--short-frames {args.short_frames}",
               bytes_needed=2000.0 * (args.n_eq + args.n_short) + 16.0 * (args.n_eq * args.eq_frames
                                                                          + args.n_short * args.short_frames),
               seconds_needed=ns / _MD_NS_PER_CPU_S[args.solvent], force=args.force)
    print(f"alanine dipeptide MD ({args.solvent}) on OpenMM's {platform} platform: {ns:.1f} ns in all (about "
          f"{ns / _MD_NS_PER_CPU_S[args.solvent] / 60:.0f} min on one CPU core)")
    t0 = time.time()
    data = generate_data(n_eq=args.n_eq, eq_frames=args.eq_frames, n_short=args.n_short,
                         short_frames=args.short_frames, burn_in=args.burn_in, seed=args.seed, config=config,
                         platform=platform)
    data.meta["command"] = (f"iclr25 bopito alanine-md --out {out.name} --n-eq {args.n_eq} --eq-frames "
                            f"{args.eq_frames} --n-short {args.n_short} --short-frames {args.short_frames} "
                            f"--burn-in {args.burn_in} --seed {args.seed}"
                            + (f" --steps-per-frame {args.steps_per_frame}" if args.steps_per_frame != 500 else "")
                            + (f" --solvent {args.solvent}" if args.solvent != "vacuum" else ""))
    import openmm

    data.meta["openmm"] = openmm.__version__
    data.meta["platform"] = platform
    with naming_write_errors(out):
        save_data(out, data)
    print(f"wrote {out} ({out.stat().st_size / 1e3:.0f} kB) in {time.time() - t0:.0f} s")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub, d, r = ucli.method_commands("bopito", DESCRIPTION, demo=demo, demo_help=DEMO_HELP,
                                             repro=repro, repro_help=REPRO_HELP)
    s = ucli.add_command(sub, "simulate", simulate_cmd, seed=True, overwrite=True, force=True, help="simulate overdamped Langevin trajectories and save them as .npz")
    s.add_argument("system", choices=["prinz", "triple-well-2d"])
    add_output(s, "--out", kind="file", required=True, suffixes=(".npz",),
               help="the trajectories: x (n_traj, n_frames, dim), frame_dt, system and parameters")
    s.add_argument("--n-traj", type=int, default=100, help="number of trajectories (default 100)")
    s.add_argument("--n-frames", type=int, default=1000, help="saved frames per trajectory (default 1000)")
    s.add_argument("--x0", default="boltzmann",
                   help="'boltzmann' (exact equilibrium samples, default) or a point, e.g. 0 or 0.5,1")
    s.add_argument("--burn-in", type=int, default=0, help="frames discarded first (default 0)")
    s.add_argument("--h", type=float, default=None, help="integrator step (default: the system's, 1e-5)")
    s.add_argument("--steps-per-frame", type=int, default=None, help="steps per frame (default 500 for prinz)")
    t = ucli.add_command(sub, "train", train_cmd, seed=True, overwrite="write over a model already in --out (other files there are kept)", force=True, help="train a prior, ITO or BoPITO model on trajectories")
    t.add_argument("data", type=Path, nargs="+",
                   help="trajectories: one .npz (key x) or .npy of shape (n_traj, n_frames[, dim]), or your own MD: "
                        ".xtc, .dcd, .h5 (mdtraj's HDF5) or .npy coordinates (n_frames, n_atoms, 3), one "
                        "trajectory per file, with --top (extra 'traj': mdtraj)")
    t.add_argument("--top", type=Path, default=None,
                   help="PDB topology of the MD trajectories in DATA (an .h5 carries its own); the features are "
                        "(sin, cos) of every backbone phi, then psi: (sin φ, cos φ, sin ψ, cos ψ) for alanine dipeptide")
    t.add_argument("--stride", type=int, default=1, help="keep every STRIDE-th frame of MD trajectories (default 1)")
    add_output(t, "--out", kind="folder", required=True, run_files=MODEL_FILES,
               help="model folder: model.pt, config.json, manifest.json (written last) and results.json")
    t.add_argument("--kind", choices=["bopito", "ito", "bg"], default="bopito", help="model (default bopito)")
    t.add_argument("--prior", type=Path, default=None, help="a prior model folder (kind bg) for BoPITO")
    t.add_argument("--max-lag", type=int, default=None,
                   help="N_max, the largest training lag, at most n_frames - 1 of DATA (default: n_frames - 1, "
                        "at most 1000; a larger value is refused)")
    t.add_argument("--lambda-hat", default="auto",
                   help="λ̂ in (0, 1), or 'auto' to estimate it from DATA by TICA (default auto)")
    t.add_argument("--lambda-int", type=float, default=None, help="λ_int for lags above N_max (default none)")
    t.add_argument("--steps", type=int, default=3000, help="training steps (default 3000)")
    t.add_argument("--prior-steps", type=int, default=None, help="steps of the prior (default: --steps)")
    t.add_argument("--batch-size", type=int, default=512, help="pairs per step (default 512)")
    t.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate (default 1e-3)")
    t.add_argument("--width", type=int, default=64, help="MLP width (default 64)")
    t.add_argument("--depth", type=int, default=3, help="MLP hidden layers (default 3)")
    t.add_argument("--n-diffusion", type=int, default=500, help="diffusion steps T (default 500)")
    p = ucli.add_command(sub, "sample", sample_cmd, seed=True, overwrite=True, force=True, help="sample x_N given x_0 at lag N (or chains of lag-N steps) from a model")
    p.add_argument("--model", type=Path, required=True, help="model folder written by `train`")
    p.add_argument("--lag", type=float, required=True, help="lag N in frames (BoPITO accepts inf: the prior)")
    add_output(p, "--out", kind="file", required=True, suffixes=(".npz",), inputs=("x0",),
               help="the samples: x (n, dim) or (n, chain+1, dim), x0 and lag")
    p.add_argument("--x0", default="0.75",
                   help="start: a point (default 0.75), 'boltzmann' (exact equilibrium samples of the built-in "
                        "system of the model's dimension) or a .npy/.npz file of points")
    p.add_argument("--n", type=int, default=1000, help="samples when --x0 is a point or 'boltzmann' (default 1000)")
    p.add_argument("--steps", type=int, default=0, help="DDIM steps; 0 = ancestral with all T steps (default 0)")
    p.add_argument("--chain", type=int, default=0, help="chain length of repeated lag-N steps (default 0: one step)")
    p.add_argument("--lambda-int", type=float, default=None, help="override λ_int of a BoPITO model")
    p.add_argument("--member", type=int, default=0, help="ensemble member (default 0)")
    a = ucli.add_command(sub, "alanine-md", alanine_md_cmd, seed=True, overwrite=True, force=True, help="alanine dipeptide MD with OpenMM (--platform): equilibrium runs and "
                                            "many short trajectories, saved as φ/ψ dihedrals (.npz)")
    a.add_argument("--platform", default="auto", choices=PLATFORMS,
                   help="OpenMM platform: auto (CUDA when OpenMM has it, else CPU), CPU (one thread), CUDA, OpenCL "
                        "or Reference (default auto); a platform OpenMM lacks is an error")
    a.add_argument("--solvent", default="vacuum", choices=["vacuum", "gbsa", "tip3p"],
                   help="vacuum (the built molecule, Amber ff14SB: the shipped data; default), gbsa (openmmtools' "
                        "alanine-dipeptide-gbsa files, Amber ff96 in OBC GBSA implicit solvent, about 15x slower; "
                        "extra 'solvent') or tip3p (openmmtools' alanine-dipeptide-explicit files, Amber ff96 in 749 "
                        "TIP3P waters with PME, one molecule per context: far slower, for reduced lengths or a GPU; "
                        "extra 'solvent')")
    add_output(a, "--out", kind="file", required=True, suffixes=(".npz",),
               help="the φ/ψ data set: equilibrium and short trajectories (int16) and meta")
    a.add_argument("--n-eq", type=int, default=32, help="equilibrium runs (default 32)")
    a.add_argument("--eq-frames", type=int, default=1000, help="frames per equilibrium run (1 ps each by default; default 1000)")
    a.add_argument("--n-short", type=int, default=500, help="short trajectories (default 500)")
    a.add_argument("--short-frames", type=int, default=50, help="frames per short trajectory (1 ps each by default; default 50)")
    a.add_argument("--burn-in", type=int, default=100, help="frames discarded before the equilibrium runs (default 100)")
    a.add_argument("--steps-per-frame", type=int, default=500,
                   help="2-fs MD steps per saved frame (default 500: frames of 1 ps, the paper's spacing; 50: 0.1 ps, "
                        "the reduced explicit-water set's)")
    r.add_argument("--system", choices=["prinz", "alanine", "triple-well"], default="prinz",
                   help="prinz (default: the Prinz ladder and claims, about 7 min), alanine (the alanine-dipeptide "
                        "ladder and claims on the shipped MD, no MD run) or triple-well (the 2-D triple-well table)")
    r.add_argument("--readme", type=Path, default=None,
                   help="also write the tables into this file (the package's EVIDENCE.md), between its "
                        "<!-- prinz-tables:begin/end -->, "
                        "<!-- triple-well-table:begin/end --> or <!-- alanine-tables:begin/end --> markers")
    r.add_argument("--data", type=Path, default=None,
                   help="with --system alanine: a data set from `alanine-md` instead of the shipped one")
    for q in (d, r, t, p):
        # one intra-op thread: these networks are tiny and the machine is shared
        q.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
        add_device_argument(q)
    return ucli.run_main(parser, argv)
