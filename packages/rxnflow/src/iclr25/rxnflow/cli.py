"""Command line of ``iclr25 rxnflow``: ``demo``, ``repro``, ``train``, ``sample`` and ``doctor``.

Heavy libraries (torch, RDKit) are imported inside the commands, so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from iclr25.utils import cli as ucli
from iclr25.utils.device import add_device_argument
from iclr25.utils.guards import check_size
from iclr25.utils.outputs import add_output, check_output_path

DESCRIPTION = ("RxnFlow (ICLR 2025): a GFlowNet that assembles molecules from building blocks and reaction "
               "templates, with action-space subsampling")
DEMO_HELP = "toy run on 60 built-in blocks: train, sample, exact fit (seconds)"
REPRO_HELP = "the reduced-scale reproduction (at most 10 min)"
#: what each command writes at the top of its --out folder (a previous run there is kept without --overwrite)
DEMO_FILES = ("results.json", "fit.png")
REPRO_FILES = ("results.json", "rows.json", "claims.json", "fit_rho0.1.png", "fit_rho1.png", "speed_vs_rho.png")
MODEL_FILES = ("model.pt", "blocks.smi", "templates.txt", "manifest.json", "results.json")

PACKAGE = "iclr25-rxnflow"

DEMO = {"n_electrophiles": 20, "n_amines": 30, "n_other": 10, "templates": "toy", "beta": 4.0, "steps": 200,
        "batch_size": 64, "rho": 0.1, "min_sampling": 5, "n_samples": 150, "reward": "qed",
        "pocket": "mixed", "pocket_blocks": 200, "pocket_steps": 20, "pocket_k": 20}


def _check_run_folder(args: argparse.Namespace, files: tuple[str, ...]) -> None:
    """``--out`` of demo/repro: the shared declaration knows results.json; every other file the command writes
    there (figures, rows.json) is a previous run too, kept without --overwrite."""
    check_output_path(args.out, flag="--out", kind="folder", overwrite=args.overwrite, run_files=files)


def demo(args: argparse.Namespace) -> int:
    _check_run_folder(args, DEMO_FILES)
    from iclr25.utils.results import RunResult

    cfg = dict(DEMO)
    run = RunResult.start(PACKAGE, "demo", seed=args.seed, config=cfg)
    ucli.set_torch_threads(args.threads)
    dev = _device(args, run)
    from iclr25.utils.seeding import seed_everything

    from .figures import plot_fit
    from .gflownet import RxnFlow, TrainConfig, train
    from .rewards import parse_reward
    from .routes import verify_route
    from .toy import (
        distribution_fit,
        diverse_top_k,
        diversity,
        enumerate_terminals,
        exact_log_probs,
        random_synthesis,
        toy_space,
    )

    seed_everything(args.seed)
    space = toy_space(cfg["n_electrophiles"], cfg["n_amines"], n_other=cfg["n_other"], templates=cfg["templates"],
                      seed=args.seed)
    reward = parse_reward(cfg["reward"])
    enum = enumerate_terminals(space, reward)
    space.parent_counts = enum.in_degree()
    model = RxnFlow(space, reward, beta=cfg["beta"], seed=args.seed, device=dev)
    fit0 = distribution_fit(model, enum)
    res = train(model, TrainConfig(steps=cfg["steps"], batch_size=cfg["batch_size"], rho=cfg["rho"],
                                   min_sampling=cfg["min_sampling"], beta=cfg["beta"]), seed=args.seed)
    fit = distribution_fit(model, enum)
    samples = model.sample(cfg["n_samples"], seed=args.seed)
    rand = random_synthesis(model, cfg["n_samples"], seed=args.seed)
    replay = sum(verify_route(s.route) for s in samples if s.valid) / max(1, sum(s.valid for s in samples))

    def modes(ss):
        idx = diverse_top_k([s.smiles for s in ss], [s.reward for s in ss], k=20)
        return float(sum(ss[i].reward for i in idx) / max(1, len(idx))), diversity([ss[i].smiles for i in idx])

    (m_q, m_div), (r_q, r_div) = modes(samples), modes(rand)
    run.add("terminal molecules enumerated", len(enum.terminals))
    _demo_pocket(run, cfg, args.seed, dev)
    run.add("distribution fit r(log p_θ, β log R)", fit.pearson, peer=fit0.pearson, peer_name="untrained policy",
            higher_is_better=True)
    run.add("mean QED of samples", float(sum(s.reward for s in samples) / len(samples)),
            peer=float(sum(s.reward for s in rand) / len(rand)), peer_name="random synthesis", higher_is_better=True)
    run.add("mean QED of top-20 diverse modes", m_q, peer=r_q, peer_name="random synthesis", higher_is_better=True)
    run.add("diversity of the modes", m_div, peer=r_div, peer_name="random synthesis", higher_is_better=True)
    run.add("routes that replay to the same SMILES", replay, higher_is_better=True)
    run.add("training steps/s (rho=0.1)", res.steps_per_s, unit="1/s", higher_is_better=True, timing=True)
    args.out.mkdir(parents=True, exist_ok=True)
    fig = plot_fit(args.out / "fit.png", exact_log_probs(model, enum), enum.log_target(cfg["beta"]),
                   title=f"demo: {len(space.blocks)} blocks, {res.steps} TB steps, ρ={cfg['rho']}")
    run.add_figure(fig, relative_to=args.out)
    return run.publish(args.out)


def _device(args: argparse.Namespace, run) -> object:
    """The torch device of ``--device`` (a missing one is a one-line error before any work), recorded in the run's
    ``machine.device``."""
    from iclr25.utils.device import describe_device, torch_device

    dev = torch_device(args.device)
    run.machine["device"] = describe_device(dev)
    return dev


def _demo_pocket(run, cfg: dict, seed: int, device: object = None) -> None:
    """The headline: the main claim pocket-modes-beat-screening at demo scale (one pocket of the docking proxy,
    RxnFlow's top diverse modes against enumerate-and-rank at the same number of distinct oracle calls)."""
    from .blocks import builtin_blocks
    from .pocket import pocket_vs_screening
    from .space import SynthesisSpace
    from .templates import builtin_templates

    space = SynthesisSpace(builtin_blocks(cfg["pocket_blocks"], seed=0), builtin_templates(), max_len=3,
                           allow_dead=True)
    r = pocket_vs_screening(space, cfg["pocket"], steps=cfg["pocket_steps"], seed=seed, k=cfg["pocket_k"],
                            device=device)
    run.add(f"pocket '{r.pocket}' (docking proxy): mean score of the top-{cfg['pocket_k']} diverse modes", r.ours,
            peer=r.screening, peer_name=f"enumerate-and-rank, same {r.oracle_calls} oracle calls",
            unit="kcal/mol (proxy)", higher_is_better=False, headline=True, claim="pocket-modes-beat-screening")
    if not r.ours < r.screening:
        run.headline_note = (f"main claim pocket-modes-beat-screening does not hold in this {r.steps}-step demo "
                             f"({r.ours:.2f} vs {r.screening:.2f}); it is decided over seeds at the repro rung "
                             "(claims.json)")


# ------------------------------------------------------------------------------------------------- train
#: rough cost of one trajectory of one training step (policy forward/backward, RDKit reactions; one thread)
_S_PER_TRAJECTORY = 2e-3
_NAMED_BLOCKS = ("builtin", "moses")
_NAMED_TEMPLATES = ("builtin", "toy", "datamol")


def _rho(flag: str):
    return ucli.bounded_float(flag, lambda v: 0 < v <= 1, "a number in (0, 1]")


def _input_file(flag: str, spec: str, named: tuple[str, ...], what: str) -> None:
    """A user's input file must exist before anything heavy is imported (RDKit and torch take seconds)."""
    if str(spec) in named:
        return
    p = Path(spec)
    if p.is_dir():
        raise ValueError(f"{flag} {p} is a folder; give a {what} file or one of {', '.join(named)}")
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such {what} file ({flag}; or one of {', '.join(named)})")


#: the largest Vina exhaustiveness accepted (Vina's default is 8; one ligand at 256 is several CPU-minutes)
MAX_EXHAUSTIVENESS = 256


def _exhaustiveness(text: str) -> int:
    """``--exhaustiveness``: an integer from 1 to :data:`MAX_EXHAUSTIVENESS`, refused in one line otherwise (a
    size that cannot finish is refused before any work, with or without ``--reward vina``)."""
    value = ucli.positive_int("--exhaustiveness")(text)
    if value > MAX_EXHAUSTIVENESS:
        raise argparse.ArgumentTypeError(f"--exhaustiveness must be at most {MAX_EXHAUSTIVENESS}, got {value}")
    return value


def _triple(flag: str, positive: bool = False):
    """An argparse ``type=`` for ``x,y,z`` (three finite numbers, each > 0 when ``positive``)."""
    import math

    def parse(text: str) -> tuple[float, float, float]:
        try:
            vals = tuple(float(v) for v in text.split(","))
        except ValueError:
            vals = ()
        if len(vals) != 3 or not all(math.isfinite(v) for v in vals) or (positive and min(vals) <= 0):
            raise argparse.ArgumentTypeError(f"{flag} must be three {'positive ' if positive else ''}finite numbers "
                                             f"x,y,z (Angstrom), got {text!r}")
        return vals  # type: ignore[return-value]

    return parse


def _vina_args(args: argparse.Namespace) -> bool:
    """Check the docking options before any work: ``True`` when the reward is AutoDock Vina. Your own --receptor
    needs --center; the options are refused with another reward."""
    vina = str(args.reward).strip().lower() == "vina" if args.reward is not None else False
    given = [f for f, v in (("--receptor", args.receptor), ("--center", args.center), ("--box", args.box),
                            ("--vina-cache", args.vina_cache)) if v is not None]
    if not vina:
        if given:
            raise ValueError(f"{given[0]} is only used with --reward vina (got --reward {args.reward})")
        return False
    if args.receptor is not None:
        p = Path(args.receptor)
        if not p.is_file():
            raise FileNotFoundError(f"{p}: no such receptor file (--receptor: a protein .pdb with hydrogens, or "
                                    ".pdbqt)")
        if p.suffix.lower() not in (".pdb", ".pdbqt"):
            raise ValueError(f"--receptor {p}: expected a .pdb (with hydrogens) or .pdbqt file")
        if args.center is None:
            raise ValueError("--center x,y,z is needed with your own --receptor (the pocket's centre, Angstrom)")
    if args.vina_cache is not None and Path(args.vina_cache).is_dir():
        raise ValueError(f"--vina-cache {args.vina_cache} is a folder; give a .json file (read if it exists, "
                         "then written)")
    return True


def _vina_estimate(args: argparse.Namespace, n_calls: int, what: str) -> None:
    """Print the CPU estimate per oracle call before any work and refuse (``--force`` overrides) ``n_calls``
    Vina calls that cannot finish."""
    from .docking import estimate_cpu_s

    per = estimate_cpu_s(1, args.exhaustiveness)
    print(f"vina: about {per:.1f} s CPU per oracle call at exhaustiveness {args.exhaustiveness} (one thread; "
          f"bigger ligands take longer); {what}: at most {n_calls} calls, about {per * n_calls / 60:.1f} CPU-min",
          flush=True)
    check_size(f"{what} with --reward vina ({n_calls} Vina calls)", seconds_needed=per * n_calls, force=args.force)


def _vina_reward(args: argparse.Namespace):
    """The Vina reward of --receptor/--center/--box (default: T4 lysozyme L99A, bundled), with its score cache
    (--vina-cache)."""
    import tempfile

    from .docking import VinaOracle, receptor_pdbqt, t4_lysozyme, vina_reward
    from .rewards import Reward

    if args.receptor is None:
        t = t4_lysozyme()
        receptor, center, size = t.receptor_pdb, args.center or t.center, args.box or t.size
    else:
        receptor, center, size = Path(args.receptor), args.center, args.box or (20.0, 20.0, 20.0)
    with tempfile.TemporaryDirectory() as tmp:
        rec = receptor if receptor.suffix.lower() == ".pdbqt" else receptor_pdbqt(receptor, Path(tmp) / "r.pdbqt")
        oracle = VinaOracle(rec, center, size, exhaustiveness=args.exhaustiveness, seed=args.seed)
        oracle.receptor = Path(receptor)  # the cache key: the user's file
    if args.vina_cache is not None and Path(args.vina_cache).is_file():
        n = oracle.load_cache(args.vina_cache, flag="--vina-cache")
        print(f"vina: {n} cached scores from {args.vina_cache}")
    return Reward("vina", vina_reward(oracle)), oracle


def _vina_done(args: argparse.Namespace, oracle, run=None) -> None:
    """Save the score cache (--vina-cache) and report the measured CPU time per oracle call."""
    import numpy as np

    if args.vina_cache is not None:
        from iclr25.utils.io import naming_write_errors

        with naming_write_errors(args.vina_cache):
            oracle.save_cache(args.vina_cache)
    if oracle.cpu_per_call:
        per = float(np.mean(oracle.cpu_per_call))
        print(f"vina: {len(oracle.cpu_per_call)} oracle calls, {per:.2f} s CPU per call (mean)")
        if run is not None:
            run.add("Vina CPU seconds per oracle call", per, unit="s", higher_is_better=False, timing=True)
            run.add("Vina oracle calls", float(len(oracle.cpu_per_call)))


def train_cmd(args: argparse.Namespace) -> int:
    """Train RxnFlow with trajectory balance. --blocks: .smi (SMILES [name] a line) or .csv (smiles column),
    or 'builtin'. --templates: text file with 'NAME SMARTS' or 'SMARTS' a line ('#' comments), a datamol-style
    .json, 'builtin', 'toy' or 'datamol'. Writes model.pt, blocks.smi, templates.txt and results.json to
    --out."""
    _input_file("--blocks", args.blocks, _NAMED_BLOCKS, "building-block")
    _input_file("--templates", args.templates, _NAMED_TEMPLATES, "template")
    if args.beta_range is not None:
        lo, hi = args.beta_range
        if not (0 <= lo < hi and hi != float("inf")):
            raise ValueError(f"--beta-range must be two finite numbers LO HI with 0 <= LO < HI, got {lo} {hi}")
    if args.min_len > args.max_len:
        raise ValueError(f"--min-len {args.min_len} is larger than --max-len {args.max_len}")
    vina = _vina_args(args)
    check_size(f"--steps {args.steps} --batch-size {args.batch_size}",
               seconds_needed=float(args.steps) * args.batch_size * _S_PER_TRAJECTORY,
               bytes_needed=float(args.batch_size) * args.max_len * 1e6, force=args.force)
    if vina:
        _vina_estimate(args, args.steps * args.batch_size, f"--steps {args.steps} --batch-size {args.batch_size}")
    from iclr25.utils.results import RunResult

    run = RunResult.start(PACKAGE, "train", seed=args.seed, config={
        "blocks": str(args.blocks), "templates": str(args.templates), "reward": args.reward, "steps": args.steps,
        "batch_size": args.batch_size, "rho": args.rho, "min_sampling": args.min_sampling, "beta": args.beta,
        "beta_range": args.beta_range, "max_len": args.max_len, "min_len": args.min_len, "lr": args.lr,
        "lr_z": args.lr_z, "pb": args.pb, "receptor": None if args.receptor is None else str(args.receptor),
        "center": args.center, "box": args.box, "exhaustiveness": args.exhaustiveness})
    ucli.set_torch_threads(args.threads)
    dev = _device(args, run)
    from .blocks import load_blocks
    from .gflownet import RxnFlow, TrainConfig, train
    from .rewards import parse_reward
    from .space import SynthesisSpace
    from .templates import load_templates

    cfg = TrainConfig(steps=args.steps, batch_size=args.batch_size, rho=args.rho, min_sampling=args.min_sampling,
                      beta=args.beta, beta_range=tuple(args.beta_range) if args.beta_range else None, lr=args.lr,
                      lr_z=args.lr_z, pb=args.pb, time_budget_s=args.time_budget)
    reward = None if vina else parse_reward(args.reward)
    blocks = load_blocks(args.blocks)
    templates = load_templates(args.templates)
    try:
        space = SynthesisSpace(blocks, templates, max_len=args.max_len, min_len=args.min_len,
                               allow_dead=args.allow_dead_templates)
    except ValueError as exc:
        raise ValueError(str(exc).replace("or pass allow_dead", "or pass --allow-dead-templates")) from None
    oracle = None
    if vina:
        reward, oracle = _vina_reward(args)
    model = RxnFlow(space, reward, beta=args.beta, seed=args.seed, device=dev)
    res = train(model, cfg, seed=args.seed)
    import numpy as np

    if not np.all(np.isfinite(res.losses)):
        bad = int(np.argmin(np.isfinite(res.losses)))
        raise ValueError(f"training diverged (a non-finite TB loss at step {bad}); nothing written to {args.out}: "
                         "lower --lr or --beta")
    model.save(args.out)  # a failed write names its file; the manifest is written last
    run.add("final TB loss (mean of last 50 steps)", float(res.losses[-50:].mean()), higher_is_better=False)
    run.add("log Z", float(res.log_z[-1]))
    run.add("mean reward of the last 50 batches", float(res.mean_reward[-50:].mean()), higher_is_better=True)
    run.add("training steps/s", res.steps_per_s, unit="1/s", higher_is_better=True, timing=True)
    if oracle is not None:
        _vina_done(args, oracle, run)
    from iclr25.utils.io import naming_write_errors

    with naming_write_errors(args.out / "results.json"):
        run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    print(f"wrote {args.out}/model.pt, blocks.smi, templates.txt, manifest.json, results.json")
    return 0


# ------------------------------------------------------------------------------------------------ sample
def sample_cmd(args: argparse.Namespace) -> int:
    """Sample from a model folder written by `train`. --add-blocks FILE.smi extends the library without
    retraining. --out: .sdf (routes as JSON in the 'route' SD property), .json or .smi."""
    if args.add_blocks is not None and not Path(args.add_blocks).is_file():
        raise FileNotFoundError(f"{args.add_blocks}: no such building-block file (--add-blocks)")
    vina = _vina_args(args)
    check_size(f"--n {args.n}", seconds_needed=float(args.n) * _S_PER_TRAJECTORY,
               bytes_needed=float(args.n) * 2e4, force=args.force)
    if vina:
        _vina_estimate(args, args.n, f"--n {args.n}")
    from .blocks import read_blocks

    new = read_blocks(args.add_blocks) if args.add_blocks is not None else None  # validate before loading
    if not args.model.is_dir():
        raise FileNotFoundError(f"{args.model}: no such model folder (--model; written by `iclr25 rxnflow train`)")
    ucli.set_torch_threads(args.threads)
    from iclr25.utils.device import torch_device

    dev = torch_device(args.device)
    from .gflownet import load_model
    from .output import write_samples

    oracle = None
    if vina:
        reward, oracle = _vina_reward(args)
    else:
        reward = args.reward
    model = load_model(args.model, device=dev, reward=reward)
    if new is not None:
        model = model.with_blocks(new)
    samples = model.sample(args.n, rho=args.rho, beta=args.beta, seed=args.seed)
    from iclr25.utils.io import naming_write_errors

    with naming_write_errors(args.out):
        path, n_ok = write_samples(args.out, samples)
    print(f"wrote {path}: {len(samples)} molecules, {n_ok} with a route that replays; mean reward "
          f"{sum(s.reward for s in samples) / len(samples):.3f}")
    if oracle is not None:
        _vina_done(args, oracle)
    return 0


# ------------------------------------------------------------------------------------------------ doctor
def doctor_cmd(args: argparse.Namespace) -> int:
    """Report invalid SMILES by line, duplicates, compatible blocks per template and reactant position, and
    dead templates."""
    from .doctor import doctor

    report = doctor(args.blocks, args.templates)
    print(report.to_text())
    if args.json is not None:
        from iclr25.utils.io import atomic_write, naming_write_errors

        with naming_write_errors(args.json), atomic_write(args.json) as f:
            json.dump(report.to_dict(), f, indent=1)
    return 0 if report.ok or not args.strict else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub, d, r = ucli.method_commands("rxnflow", DESCRIPTION, demo=demo, demo_help=DEMO_HELP,
                                             repro="iclr25.rxnflow.repro:run_repro", repro_help=REPRO_HELP)
    t = ucli.add_command(sub, "train", train_cmd, seed=True, overwrite="write over a previous model in --out", force=True, help="train on your blocks and templates")
    t.add_argument("--blocks", default="builtin", help="building blocks file or 'builtin' (default builtin)")
    t.add_argument("--templates", default="builtin", help="templates file, or builtin|toy|datamol (default builtin)")
    t.add_argument("--reward", default="qed", help="qed, sa, PROP[lo,hi] (logp, tpsa, mw, hbd, hba, rotb, heavy), "
                                                    "a product like 'qed*sa', or vina (AutoDock Vina docking, "
                                                    "the docking extra; see --receptor) (default qed)")
    add_output(t, "--out", kind="folder", default="results/rxnflow-model", run_files=MODEL_FILES,
               inputs=("blocks", "templates"),
               help="model folder: model.pt, blocks.smi, templates.txt, manifest.json (written last) and results.json")
    t.add_argument("--steps", type=ucli.positive_int("--steps"), default=1000, help="TB steps (default 1000)")
    t.add_argument("--batch-size", type=ucli.positive_int("--batch-size"), default=64, help="trajectories per step (default 64)")
    t.add_argument("--rho", type=_rho("--rho"), default=0.02, help="subsampling ratio in (0, 1] (default 0.02)")
    t.add_argument("--min-sampling", type=ucli.positive_int("--min-sampling"), default=100, help="smallest block subset (default 100)")
    t.add_argument("--beta", type=ucli.positive_float("--beta"), default=4.0, help="reward exponent β (default 4)")
    t.add_argument("--beta-range", type=ucli.nonnegative_float("--beta-range"), nargs=2, default=None, metavar=("LO", "HI"),
                   help="sample β ~ U(LO, HI) per trajectory (temperature conditioning; paper 0 64)")
    t.add_argument("--max-len", type=ucli.positive_int("--max-len"), default=2, help="most blocks per molecule (default 2)")
    t.add_argument("--min-len", type=ucli.positive_int("--min-len"), default=1, help="fewest blocks before stop (default 1)")
    t.add_argument("--lr", type=ucli.positive_float("--lr"), default=1e-3, help="policy learning rate (default 1e-3)")
    t.add_argument("--lr-z", type=ucli.positive_float("--lr-z"), default=0.05, help="log Z learning rate (default 0.05)")
    t.add_argument("--pb", choices=["uniform", "none"], default="uniform", help="backward policy (default uniform)")
    t.add_argument("--time-budget", type=ucli.positive_float("--time-budget"), default=None, help="stop after this many training seconds")
    t.add_argument("--allow-dead-templates", action="store_true",
                   help="drop templates no block is compatible with instead of failing")
    s = ucli.add_command(sub, "sample", sample_cmd, seed=True, overwrite=True, force=True, help="sample molecules with routes from a trained model")
    s.add_argument("--model", type=Path, required=True, help="model folder (from `iclr25 rxnflow train`)")
    s.add_argument("--n", type=ucli.positive_int("--n"), default=100, help="number of molecules (default 100)")
    s.add_argument("--add-blocks", type=Path, default=None, help="extra building blocks (.smi/.csv)")
    s.add_argument("--rho", type=_rho("--rho"), default=1.0, help="subsampling ratio while sampling (default 1: exact)")
    s.add_argument("--beta", type=ucli.positive_float("--beta"), default=None, help="β condition (default: the training β)")
    s.add_argument("--reward", default=None, help="score the samples with this reward (same names as train; "
                                                  "default: the model's own; a Vina-trained model needs --reward vina)")
    add_output(s, "--out", kind="file", default="mols.sdf", suffixes=(".sdf", ".json", ".smi"),
               help="the samples with their routes: .sdf (route in an SD property), .json or .smi")
    dc = ucli.add_command(sub, "doctor", doctor_cmd, help="check a block library against templates")
    dc.add_argument("--blocks", required=True, help="building blocks file (.smi/.csv)")
    dc.add_argument("--templates", default="builtin", help="templates file or builtin|toy|datamol (default builtin)")
    add_output(dc, "--json", kind="file", inputs=("blocks", "templates"), help="also write the report as JSON here")
    dc.add_argument("--strict", action="store_true", help="exit 1 when problems are found")
    for p in (t, s):
        g = p.add_argument_group("docking (--reward vina; pip install \"iclr25-rxnflow[docking]\")")
        g.add_argument("--receptor", default=None, help="protein .pdb with hydrogens (or .pdbqt); default: T4 "
                       "lysozyme L99A, bundled (openmmtools' files), with its ligand's box")
        g.add_argument("--center", type=_triple("--center"), default=None, metavar="X,Y,Z",
                       help="box centre in Angstrom (needed with --receptor; default: the T4L ligand's centre; a "
                            "negative first number: --center=-1.5,2,3)")
        g.add_argument("--box", type=_triple("--box", positive=True), default=None, metavar="SX,SY,SZ",
                       help="box edges in Angstrom (default: the T4L ligand's box, 20,20,20 with --receptor)")
        g.add_argument("--exhaustiveness", type=_exhaustiveness, default=1,
                       help=f"Vina exhaustiveness, 1 to {MAX_EXHAUSTIVENESS} (default 1: about 1.5 s CPU a ligand)")
        g.add_argument("--vina-cache", type=Path, default=None, metavar="FILE.json",
                       help="Vina scores by SMILES: read if it exists (same receptor, box, exhaustiveness, seed), "
                            "written after the run")
    for p in (d, r, t, s):
        p.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
        add_device_argument(p)
    return ucli.run_main(parser, argv)
