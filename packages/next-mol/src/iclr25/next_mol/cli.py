"""Command line of ``iclr25 next-mol``: ``demo``, ``repro``, ``train``, ``generate`` and ``conformers``.

torch and RDKit are imported inside the commands, so that ``--help`` answers at once.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from iclr25.utils import cli as ucli
from iclr25.utils.device import add_device_argument, describe_device, device_scope, torch_device
from iclr25.utils.guards import check_size
from iclr25.utils.outputs import add_output, check_output_path
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import check_seed

PACKAGE = "iclr25-next-mol"

DESCRIPTION = """NExT-Mol (Liu et al., ICLR 2025): a SELFIES language model for 1D molecules, the DMT diffusion
model for their 3D conformers, and the 1D-to-3D transfer.

  demo                               toy-scale run of the whole pipeline (< 60 s)
  repro                              the claims over seeds 0-4 into OUT/claims.json (< 10 min);
                                     --full adds the one-seed experiments of README Results (~2x longer)
  train --out DIR                    train the SELFIES LM and DMT-mini on the built-in MOSES data: DIR/lm.pt, DIR/dmt.pt
  generate --n 100 --out mols.sdf    LM molecules, then DMT conformers, to one SDF file
  conformers in.smi --k 10 --out confs.sdf
                                     DMT conformers of your molecules (.smi: one SMILES per line, optional name
                                     after a space; .csv: a 'smiles' column)

generate and conformers use --lm/--dmt checkpoints from `train`; without --dmt they use the small trained
DMT-mini shipped in the wheel; without --lm a small LM is trained on the built-in data first (a few minutes) and
cached in ~/.cache/iclr25-next-mol ($ICLR25_NEXT_MOL_CACHE).
"""
#: what each command writes at the top of its --out folder: any of them there is a previous run, kept without
#: --overwrite
DEMO_FILES = ("results.json", "conformers.png", "generated.sdf")
REPRO_FILES = ("results.json", "claims.json", "tables.json", "tables.md", "conformers.png", "ladder_fcd.png",
               "ladder_matr.png")
TRAIN_FILES = ("lm.pt", "dmt.pt", "results.json")
TRAIN_HELP = "train the SELFIES LM and DMT-mini; write lm.pt and dmt.pt"
DEMO_HELP = "toy-scale run of the whole pipeline (at most 60 s)"
REPRO_HELP = "the claims over seeds 0-4 into OUT/claims.json (at most 10 min)"


# rough costs measured on one CPU thread (DMT-mini, 100 ancestral steps: ~0.3 s per conformer of ~15 heavy atoms;
# sampling holds a few float64 copies of each conformer); the guard only has to refuse what cannot finish
_S_PER_CONFORMER_STEP = 3e-3
_BYTES_PER_CONFORMER_ATOM = 3 * 8 * 6
_S_PER_DMT_STEP, _S_PER_LM_STEP, _S_PER_ENSEMBLE = 0.2, 0.15, 0.3


def _guard_sampling(args: argparse.Namespace, n_molecules: int, n_atoms: int, what: str) -> None:
    total = float(n_molecules) * float(args.k)
    check_size(what, bytes_needed=total * max(n_atoms, 1) * _BYTES_PER_CONFORMER_ATOM,
               seconds_needed=total * args.steps * _S_PER_CONFORMER_STEP, force=args.force)


def _check_run_folder(args: argparse.Namespace, files: tuple[str, ...]) -> None:
    """``--out`` of demo/repro: the shared declaration looks for results.json; the figures, tables and samples the
    command writes there are a previous run too."""
    check_output_path(args.out, flag="--out", kind="folder", overwrite=args.overwrite, run_files=files)


def demo(args: argparse.Namespace) -> int:
    _check_run_folder(args, DEMO_FILES)
    torch_device(args.device)  # an absent device is one line, before any work
    ucli.set_torch_threads(args.threads)
    from .demo import run_demo  # noqa: PLC0415 - keeps --help light

    with device_scope(args.device):  # every model of the demo computes there (device=None reads it)
        run = run_demo(args.out, seed=check_seed(args.seed))
    print(run.to_markdown())
    return 0


def repro(args: argparse.Namespace) -> int:
    _check_run_folder(args, REPRO_FILES)
    torch_device(args.device)
    ucli.set_torch_threads(args.threads)
    from .repro import run_repro  # noqa: PLC0415

    with device_scope(args.device):  # the experiments and the registry's claims compute there
        run = run_repro(args.out, seed=check_seed(args.seed), quick=args.quick, full=args.full)
    print(run.to_markdown())
    return 0


def _models(args: argparse.Namespace, *, need_lm: bool):
    from .checkpoint import load_dmt, load_lm  # noqa: PLC0415
    from .models import default_models  # noqa: PLC0415
    from .shipped import load_shipped_dmt  # noqa: PLC0415

    lm = load_lm(args.lm) if need_lm and args.lm is not None else None
    dmt = load_dmt(args.dmt) if args.dmt is not None else load_shipped_dmt()[0]
    if need_lm and lm is None:
        print("no --lm given: training (or loading cached) the default LM on the built-in MOSES data")
        lm = default_models(seed=args.seed)[0]
    return lm, dmt


def train_cmd(args: argparse.Namespace) -> int:
    check_size(f"--lm-steps {args.lm_steps} --dmt-steps {args.dmt_steps} --n-molecules {args.n_molecules}",
               seconds_needed=args.lm_steps * _S_PER_LM_STEP + args.dmt_steps * _S_PER_DMT_STEP
               + args.n_molecules * _S_PER_ENSEMBLE, bytes_needed=args.n_molecules * 2e5, force=args.force)
    dev = torch_device(args.device)
    ucli.set_torch_threads(args.threads)
    from .models import train_models  # noqa: PLC0415

    run = RunResult.start(PACKAGE, "train", seed=args.seed, config={"lm_steps": args.lm_steps,
                                                                    "dmt_steps": args.dmt_steps})
    run.machine["device"] = describe_device(dev)
    with device_scope(args.device):
        paths, info = train_models(args.out, lm_steps=args.lm_steps, dmt_steps=args.dmt_steps,
                                   n_dmt_train=args.n_molecules, seed=check_seed(args.seed))
    for k, v in info.items():
        run.add(k, v)
    from iclr25.utils.io import naming_write_errors  # noqa: PLC0415

    with naming_write_errors(args.out / "results.json"):
        run.finish().save(args.out / "results.json")
    print(f"wrote {', '.join(str(p) for p in paths)}")
    return 0


def generate_cmd(args: argparse.Namespace) -> int:
    """LM molecules, then DMT conformers, to an SDF file"""
    out = args.out  # checked before the command runs (add_output)
    _guard_sampling(args, args.n, 30, f"--n {args.n} --k {args.k} --steps {args.steps}")
    for flag, p in (("--lm", args.lm), ("--dmt", args.dmt)):
        if p is not None and not p.is_file():
            raise FileNotFoundError(f"{flag} {p}: no such checkpoint file")
    dev = torch_device(args.device)
    ucli.set_torch_threads(args.threads)
    from .pipeline import generate_smiles, predict_conformers  # noqa: PLC0415

    with device_scope(args.device):  # a default LM trained here trains there too
        (lm, tok), dmt = _models(args, need_lm=True)
    smiles = generate_smiles(lm, tok, args.n, temperature=args.temperature, top_k=args.top_k, seed=args.seed,
                             unique=args.unique, device=dev)
    sets = predict_conformers(dmt, smiles, args.k, steps=args.steps, sampler=args.sampler, seed=args.seed,
                              device=dev)
    _write(out, sets, args.add_hydrogens)
    _report(out, sets, args.k)
    return 0


def _write(out: Path, sets, add_hydrogens: bool) -> None:
    """The SDF, atomically; a conformer set with non-finite coordinates is an error (nothing written)."""
    import numpy as np  # noqa: PLC0415

    from iclr25.utils.io import naming_write_errors  # noqa: PLC0415

    from .pipeline import write_sdf  # noqa: PLC0415

    bad = [cs.molecule.smiles for cs in sets if not np.all(np.isfinite(cs.coords))]
    if bad:
        raise ValueError(f"the conformers of {len(bad)} molecule(s) are not finite (first: {bad[0]}); nothing "
                         f"written to {out}")
    with naming_write_errors(out):
        write_sdf(out, sets, add_hydrogens=add_hydrogens)


def _report(out: Path, sets, k: int) -> None:
    n_all = sum(len(cs.sane) for cs in sets)
    n_bad = n_all - sum(int(cs.sane.sum()) for cs in sets)
    n_graph = sum(len(cs.graph_ok) - int(cs.graph_ok.sum()) for cs in sets if cs.graph_ok is not None)
    cats: dict[str, int] = {}
    for cs in sets:
        for why in cs.reasons or ():
            if why != "ok":
                cats[why.split(":")[0]] = cats.get(why.split(":")[0], 0) + 1
    why = " (" + ", ".join(f"{c} {n}" for c, n in sorted(cats.items(), key=lambda x: -x[1])) + ")" if cats else ""
    print(f"wrote {out}: {len(sets)} molecules x {k} conformers"
          + (f"; {n_bad} of {n_all} conformers FAIL the bond-length/clash checks{why} (SDF properties sane=0, "
             "sanity=why)" if n_bad else "; all pass the bond-length/clash checks (SDF property sane=1)")
          + (f"; the bonds perceived from {n_graph} of {n_all} are not the molecule's (bonds_from_3d=0)"
             if n_graph else ""))


def _read_molecules(path: Path) -> list[str]:
    """The SMILES of a user's .smi/.csv file, each validated; errors name the file and the molecule's number."""
    from iclr25.utils.io import read_smiles  # noqa: PLC0415

    from .chem import prepare  # noqa: PLC0415

    try:
        smiles = read_smiles(path)
    except ValueError as exc:
        raise ValueError(str(exc).replace("; pass column=", "; give the column the header 'smiles'")) from None
    for i, s in enumerate(smiles):
        try:
            prepare(s, name=f"molecule {i + 1}")
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    return smiles


def conformers_cmd(args: argparse.Namespace) -> int:
    """DMT conformers of the molecules of a .smi/.csv file, to an SDF file"""
    out = args.out  # checked before the command runs (add_output): never the input, never replaced silently
    if not args.input.is_file():
        raise FileNotFoundError(f"{args.input}: no such molecule file (.smi or .csv)")
    _guard_sampling(args, 1, 30, f"--k {args.k} --steps {args.steps} (per molecule)")
    smiles = _read_molecules(args.input)  # every molecule validated before any model work (and before torch)
    ucli.set_torch_threads(args.threads)
    _guard_sampling(args, len(smiles), 30, f"--k {args.k} --steps {args.steps} for {len(smiles)} molecules")
    if args.dmt is not None and not args.dmt.is_file():
        raise FileNotFoundError(f"--dmt {args.dmt}: no such checkpoint file")
    dev = torch_device(args.device)
    from .pipeline import predict_conformers  # noqa: PLC0415

    with device_scope(args.device):  # a --dmt checkpoint is loaded straight onto the device
        _, dmt = _models(args, need_lm=False)
    sets = predict_conformers(dmt, smiles, args.k, steps=args.steps, sampler=args.sampler, seed=args.seed,
                              device=dev)
    _write(out, sets, args.add_hydrogens)
    _report(out, sets, args.k)
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default: 1)")
    add_device_argument(p)  # every command that takes --threads computes with torch


def _sdf_out(p: argparse.ArgumentParser) -> None:
    add_output(p, "--out", kind="file", required=True, suffixes=(".sdf",),
               help="the conformers as SDF (properties smiles, conformer, sane, sanity, bonds_from_3d)")


def _sampling(p: argparse.ArgumentParser, k_default: int) -> None:
    p.add_argument("--k", type=ucli.positive_int("--k"), default=k_default,
                   help=f"conformers per molecule (default: {k_default})")
    p.add_argument("--steps", type=ucli.positive_int("--steps"), default=50, help="diffusion steps (default: 50)")
    p.add_argument("--sampler", choices=("ancestral", "ddim"), default="ancestral",
                   help="ancestral (the paper's) or the deterministic DDIM update (fewer steps)")
    p.add_argument("--dmt", type=Path, default=None,
                   help="DMT checkpoint (.pt) from `train` (default: the DMT-mini shipped in the wheel)")
    p.add_argument("--add-hydrogens", action="store_true", help="place hydrogens (RDKit) in the SDF")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    ucli.add_force_argument(p)
    _common(p)


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub, d, p = ucli.method_commands("next-mol", DESCRIPTION, demo=demo, demo_help=DEMO_HELP,
                                             repro=repro, repro_help=REPRO_HELP,
                                             quick="the claims at the test rung, seeds 0-2 (a smoke test)")
    _common(d)
    p.add_argument("--full", action="store_true",
                   help="also the one-seed experiments of README Results (LMs, DMT ladder, ablations, transfer; "
                        "about twice the time, over 10 min)")
    _common(p)
    p = ucli.add_command(sub, "train", train_cmd, help=TRAIN_HELP, description=TRAIN_HELP,
                         seed="random seed (default: 0)", overwrite="write over a previous train in --out (lm.pt, "
                         "dmt.pt, results.json; other files are kept)")
    add_output(p, "--out", kind="folder", default="results/next-mol-models", run_files=TRAIN_FILES,
               help="folder for lm.pt, dmt.pt and results.json")
    p.add_argument("--lm-steps", type=ucli.positive_int("--lm-steps"), default=800, help="LM steps (default: 800)")
    p.add_argument("--dmt-steps", type=ucli.positive_int("--dmt-steps"), default=800, help="DMT steps (default: 800)")
    p.add_argument("--n-molecules", type=ucli.positive_int("--n-molecules"), default=200,
                   help="training molecules of DMT (default: 200)")
    ucli.add_force_argument(p)
    _common(p)
    p = ucli.add_command(sub, "generate", generate_cmd, help="LM molecules, then DMT conformers, to an SDF file")
    p.add_argument("--n", type=ucli.positive_int("--n"), default=100, help="molecules (default: 100)")
    p.add_argument("--lm", type=Path, default=None, help="LM checkpoint (.pt) from `train`")
    p.add_argument("--temperature", type=ucli.positive_float("--temperature"), default=1.0,
                   help="sampling temperature (default: 1.0)")
    p.add_argument("--top-k", type=ucli.positive_int("--top-k"), default=None, help="top-k sampling (default: off)")
    p.add_argument("--unique", action="store_true", help="redraw duplicate molecules")
    _sampling(p, 1)
    _sdf_out(p)
    p = ucli.add_command(sub, "conformers", conformers_cmd, help="DMT conformers of the molecules of a .smi/.csv file")
    p.add_argument("input", type=Path, help=".smi (SMILES [name] per line) or .csv with a 'smiles' column")
    _sampling(p, 10)
    _sdf_out(p)
    return ucli.run_main(parser, argv)
