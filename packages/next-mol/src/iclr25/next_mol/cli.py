"""Command line of ``iclr25 next-mol``: ``demo``, ``repro``, ``train``, ``generate`` and ``conformers``.

torch and RDKit are imported inside the commands, so that ``--help`` answers at once.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from iclr25.utils.cli import add_run_command, method_parser, run_main, set_torch_threads
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import check_seed

PACKAGE = "iclr25-next-mol"

DESCRIPTION = """NExT-Mol (Liu et al., ICLR 2025): a SELFIES language model for 1D molecules, the DMT diffusion
model for their 3D conformers, and the 1D-to-3D transfer.

  demo                               toy-scale run of the whole pipeline (< 60 s)
  repro                              the reduced-scale reproduction behind the README Results (< 10 min)
  train --out DIR                    train the SELFIES LM and DMT-mini on the built-in MOSES data: DIR/lm.pt, DIR/dmt.pt
  generate --n 100 --out mols.sdf    LM molecules, then DMT conformers, to one SDF file
  conformers in.smi --k 10 --out confs.sdf
                                     DMT conformers of your molecules (.smi: one SMILES per line, optional name
                                     after a space; .csv: a 'smiles' column)

generate and conformers use --lm/--dmt checkpoints from `train`; without them a small model is trained on the
built-in data first (about a minute) and cached in ~/.cache/iclr25-next-mol ($ICLR25_NEXT_MOL_CACHE).
"""


def _positive(name: str):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer, got {text!r}") from None
        if v < 1:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer, got {v}")
        return v
    return parse


def _positive_float(name: str):
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a positive number, got {text!r}") from None
        if not v > 0 or v == float("inf"):
            raise argparse.ArgumentTypeError(f"{name} must be a positive finite number, got {v}")
        return v
    return parse


def demo(args: argparse.Namespace) -> int:
    set_torch_threads(args.threads)
    from .demo import run_demo  # noqa: PLC0415 - keeps --help light

    run = run_demo(args.out, seed=check_seed(args.seed))
    print(run.to_markdown())
    return 0


def repro(args: argparse.Namespace) -> int:
    set_torch_threads(args.threads)
    from .repro import run_repro  # noqa: PLC0415

    run = run_repro(args.out, seed=check_seed(args.seed), quick=args.quick)
    print(run.to_markdown())
    return 0


def _check_out(path: Path, suffix: str, flag: str = "--out") -> Path:
    if path.suffix.lower() != suffix:
        raise ValueError(f"{flag} {path} must end in {suffix}")
    if path.exists() and path.is_dir():
        raise ValueError(f"{flag} {path} is a folder; give a file name ending in {suffix}")
    return path


def _models(args: argparse.Namespace, *, need_lm: bool):
    from .checkpoint import load_dmt, load_lm  # noqa: PLC0415
    from .models import default_models  # noqa: PLC0415

    lm = load_lm(args.lm) if need_lm and args.lm is not None else None
    dmt = load_dmt(args.dmt) if args.dmt is not None else None
    if (need_lm and lm is None) or dmt is None:
        print("no checkpoint given: training (or loading cached) default models on the built-in MOSES data")
        d_lm, d_dmt = default_models(seed=args.seed)
        lm = lm or d_lm
        dmt = dmt or d_dmt
    return lm, dmt


def train_cmd(args: argparse.Namespace) -> int:
    set_torch_threads(args.threads)
    from .models import train_models  # noqa: PLC0415

    run = RunResult.start(PACKAGE, "train", seed=args.seed, config={"lm_steps": args.lm_steps,
                                                                    "dmt_steps": args.dmt_steps})
    paths, info = train_models(args.out, lm_steps=args.lm_steps, dmt_steps=args.dmt_steps,
                               n_dmt_train=args.n_molecules, seed=check_seed(args.seed))
    for k, v in info.items():
        run.add(k, v)
    run.finish().save(args.out / "results.json")
    print(f"wrote {', '.join(str(p) for p in paths)}")
    return 0


def generate_cmd(args: argparse.Namespace) -> int:
    set_torch_threads(args.threads)
    out = _check_out(args.out, ".sdf")
    for flag, p in (("--lm", args.lm), ("--dmt", args.dmt)):
        if p is not None and not p.is_file():
            raise FileNotFoundError(f"{flag} {p}: no such checkpoint file")
    from .pipeline import generate_smiles, predict_conformers, write_sdf  # noqa: PLC0415

    (lm, tok), dmt = _models(args, need_lm=True)
    smiles = generate_smiles(lm, tok, args.n, temperature=args.temperature, top_k=args.top_k, seed=args.seed,
                             unique=args.unique)
    sets = predict_conformers(dmt, smiles, args.k, steps=args.steps, sampler=args.sampler, seed=args.seed)
    write_sdf(out, sets, add_hydrogens=args.add_hydrogens)
    print(f"wrote {out}: {len(sets)} molecules x {args.k} conformers")
    return 0


def conformers_cmd(args: argparse.Namespace) -> int:
    set_torch_threads(args.threads)
    from iclr25.utils.io import read_smiles  # noqa: PLC0415

    from .chem import prepare_many  # noqa: PLC0415

    smiles = read_smiles(args.input)
    try:
        prepare_many(smiles)  # validate every molecule before any model work
    except ValueError as exc:
        raise ValueError(f"{args.input}: {exc}") from None
    out = _check_out(args.out, ".sdf")
    if args.dmt is not None and not args.dmt.is_file():
        raise FileNotFoundError(f"--dmt {args.dmt}: no such checkpoint file")
    from .pipeline import predict_conformers, write_sdf  # noqa: PLC0415

    _, dmt = _models(args, need_lm=False)
    sets = predict_conformers(dmt, smiles, args.k, steps=args.steps, sampler=args.sampler, seed=args.seed)
    write_sdf(out, sets, add_hydrogens=args.add_hydrogens)
    print(f"wrote {out}: {len(sets)} molecules x {args.k} conformers")
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default: 1)")


def _sampling(p: argparse.ArgumentParser) -> None:
    p.add_argument("--k", type=_positive("--k"), default=10, help="conformers per molecule (default: 10)")
    p.add_argument("--steps", type=_positive("--steps"), default=50, help="diffusion steps (default: 50)")
    p.add_argument("--sampler", choices=("ancestral", "ddim"), default="ancestral",
                   help="ancestral (the paper's) or the deterministic DDIM update (fewer steps)")
    p.add_argument("--dmt", type=Path, default=None, help="DMT checkpoint (.pt) from `train`")
    p.add_argument("--add-hydrogens", action="store_true", help="place hydrogens (RDKit) in the SDF")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    _common(p)


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub = method_parser("next-mol", DESCRIPTION)
    p = add_run_command(sub, "demo", demo, help="toy-scale run of the whole pipeline (at most 60 s)",
                        default_out="results/next-mol")
    _common(p)
    p = add_run_command(sub, "repro", repro, help="the reduced-scale reproduction (at most 10 min)",
                        default_out="results/next-mol-repro")
    p.add_argument("--quick", action="store_true", help="a smaller, faster run (a smoke test of repro)")
    _common(p)
    p = add_run_command(sub, "train", train_cmd, help="train the SELFIES LM and DMT-mini; write lm.pt and dmt.pt",
                        default_out="results/next-mol-models")
    p.add_argument("--lm-steps", type=_positive("--lm-steps"), default=800, help="LM steps (default: 800)")
    p.add_argument("--dmt-steps", type=_positive("--dmt-steps"), default=800, help="DMT steps (default: 800)")
    p.add_argument("--n-molecules", type=_positive("--n-molecules"), default=200,
                   help="training molecules of DMT (default: 200)")
    _common(p)
    p = sub.add_parser("generate", help="LM molecules, then DMT conformers, to an SDF file",
                       description="LM molecules, then DMT conformers, to an SDF file")
    p.add_argument("--n", type=_positive("--n"), default=100, help="molecules (default: 100)")
    p.add_argument("--out", type=Path, required=True, help="output .sdf")
    p.add_argument("--lm", type=Path, default=None, help="LM checkpoint (.pt) from `train`")
    p.add_argument("--temperature", type=_positive_float("--temperature"), default=1.0,
                   help="sampling temperature (default: 1.0)")
    p.add_argument("--top-k", type=_positive("--top-k"), default=None, help="top-k sampling (default: off)")
    p.add_argument("--unique", action="store_true", help="redraw duplicate molecules")
    _sampling(p)
    p.set_defaults(func=generate_cmd, k=1)
    p = sub.add_parser("conformers", help="DMT conformers of the molecules of a .smi/.csv file",
                       description="DMT conformers of the molecules of a .smi/.csv file, to an SDF file")
    p.add_argument("input", type=Path, help=".smi (SMILES [name] per line) or .csv with a 'smiles' column")
    p.add_argument("--out", type=Path, required=True, help="output .sdf")
    _sampling(p)
    p.set_defaults(func=conformers_cmd)
    return run_main(parser, argv)
