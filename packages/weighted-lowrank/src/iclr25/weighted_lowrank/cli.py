"""Command line of ``iclr25 weighted-lowrank``: ``demo`` (:mod:`.demo`), ``fit`` and ``repro`` (:mod:`.repro`)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from iclr25.utils import cli as ucli
from iclr25.utils.guards import check_real
from iclr25.utils.io import save_npz
from iclr25.utils.outputs import add_output

from .altmin import INITS, weighted_low_rank
from .matrix_io import read_matrix
from .regression import REFINEMENTS, SOLVERS
from .sketch import SKETCHES
from .weights import as_weighted_matrix

DESCRIPTION = ("Weighted low-rank approximation min ‖W∘(M − XYᵀ)‖_F by robust alternating minimisation with the "
               "sketched high-accuracy regression solver (Song, Ye, Yin, Zhang, ICLR 2025).")
DEMO_HELP = "both solvers on a planted problem (a few seconds)"
REPRO_HELP = "the reduced-scale reproduction (a few minutes)"


# ------------------------------------------------------------------------------------------------- fit
def _check_fit_options(args: argparse.Namespace) -> None:
    """Every option of ``fit``, before the files are read; messages name the flag (``--out`` was checked by
    ``run_main`` before this: :func:`iclr25.utils.outputs.add_output`)."""
    for flag, value, low in (("--k", args.k, 1), ("--n-iter", args.n_iter, 1), ("--refine-steps", args.refine_steps, 0),
                             ("--seed", args.seed, 0)):
        if value < low:
            raise ValueError(f"{flag} must be an integer >= {low}, got {value}")
    if args.sketch_size is not None and args.sketch_size < 1:
        raise ValueError(f"--sketch-size must be an integer >= 1, got {args.sketch_size}")
    for flag, value in (("--tol", args.tol), ("--reg", args.reg)):
        if not (math.isfinite(value) and value >= 0):
            raise ValueError(f"{flag} must be a finite number >= 0, got {value}")


def _check_values(M: np.ndarray | sp.csr_array, W: np.ndarray | sp.csr_array | None,
                  args: argparse.Namespace) -> None:
    """The numbers of M (under a positive weight: elsewhere M may hold anything) and of W are real, finite and small
    enough that their squares do not overflow; each error names its file. The shapes agree (checked before)."""
    if W is None:
        check_real(M.data if sp.issparse(M) else M, str(args.M))
        return
    check_real(W.data if sp.issparse(W) else W, str(args.W))
    if sp.issparse(W):
        w = sp.csr_array(W)
        rows = np.repeat(np.arange(w.shape[0]), np.diff(w.indptr))
        keep = w.data != 0
        r, c = rows[keep], w.indices[keep]
    else:
        r, c = np.nonzero(np.asarray(W))
    under = np.asarray(sp.csr_array(M)[r, c]).ravel() if sp.issparse(M) else np.asarray(M)[r, c]
    check_real(under, f"{args.M} (where W > 0)")


def _named(exc: Exception, args: argparse.Namespace) -> Exception:
    """A check of M or W from the solver, with the file it is about in front ("w.npy: W must be ...")."""
    msg = str(exc)
    path = args.W if msg.startswith("W ") and args.W is not None else args.M if msg.startswith("M ") else None
    return type(exc)(f"{path}: {msg}" if path is not None else msg)


def fit(args: argparse.Namespace) -> int:
    """Fit a rank-k weighted low-rank approximation. M: .npy (dense; NaN allowed where W = 0). W: .npy (dense,
    non-negative) or .npz (scipy.sparse.save_npz, e.g. a 0/1 mask); omit for all ones. Writes X (n×k,
    orthonormal), Y (d×k), and the per-round objective to the .npz named by --out."""
    _check_fit_options(args)
    M = read_matrix(args.M, "M")
    W = None if args.W is None else read_matrix(args.W, "W")
    n, d = M.shape
    if args.k > min(n, d):
        raise ValueError(f"--k must satisfy 1 <= k <= min(n, d) = {min(n, d)} for M of shape {M.shape} "
                         f"({args.M}), got {args.k}")
    if W is not None and W.shape != M.shape:
        raise ValueError(f"{args.W}: W must have the shape of M {M.shape} ({args.M}), got {W.shape}")
    _check_values(M, W, args)
    try:
        as_weighted_matrix(M, W)  # the solver's own checks of M and W, here so that each error names its file
    except (TypeError, ValueError) as exc:
        raise _named(exc, args) from None
    res = weighted_low_rank(M, W, args.k, solver=args.solver, n_iter=args.n_iter, tol=args.tol, sketch=args.sketch,
                            sketch_size=args.sketch_size, refine=args.refine, refine_steps=args.refine_steps,
                            init=args.init, reg=args.reg, seed=args.seed)
    rel = np.array([h.relative_residual for h in res.history])
    last = res.history[-1]
    if not (np.isfinite(res.X).all() and np.isfinite(res.Y).all() and np.isfinite(res.objectives).all()
            and np.isfinite(rel).all()):
        raise ValueError(f"the fit of {args.M} is not finite (relative weighted residual {last.relative_residual:.4g} "
                         f"after {res.n_iter} rounds); nothing written to --out {args.out}: rescale M (divide by a "
                         "constant) or raise --reg")
    save_npz(args.out, X=res.X, Y=res.Y, objective=res.objectives, relative_residual=rel, seconds=res.round_seconds)
    print(f"rank {args.k}, {res.n_iter} rounds ({args.solver}): relative weighted residual "
          f"{last.relative_residual:.4g}; wrote X ({res.X.shape}), Y ({res.Y.shape}) to {args.out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub, _, r = ucli.method_commands("weighted-lowrank", DESCRIPTION, demo="iclr25.weighted_lowrank.demo:demo", demo_help=DEMO_HELP,
                                             repro="iclr25.weighted_lowrank.repro:repro", repro_help=REPRO_HELP,
                                             quick="small scaling sweep (n=1000, k<=32) for a smoke test",
                                             demo_files=("error_per_round.png",),
                                             repro_files=("repro.png", "table.md", "claims.json"))
    f = ucli.add_command(sub, "fit", fit, seed="random seed (default: 0)", help="fit M ≈ X Yᵀ under weights W from your own files")
    f.add_argument("M", type=Path, help="data matrix, .npy (or .npz with one array)")
    f.add_argument("W", type=Path, nargs="?", default=None, help="weights, .npy or sparse .npz (default: all ones)")
    f.add_argument("--k", type=int, required=True, help="target rank")
    add_output(f, "--out", kind="file", default="factors.npz", suffixes=(".npz",),
               help="the factors X, Y and the per-round objective, as a .npz file")
    f.add_argument("--solver", choices=SOLVERS, default="sketch", help="row-regression solver (default: sketch)")
    f.add_argument("--sketch", choices=SKETCHES, default="countsketch", help="sketch (default: countsketch)")
    f.add_argument("--sketch-size", type=int, default=None, help="sketch rows s (default: 8k, at most the row length)")
    f.add_argument("--refine", choices=REFINEMENTS, default="cg", help="refinement iteration (default: cg)")
    f.add_argument("--refine-steps", type=int, default=30, help="most refinement steps (default: 30)")
    f.add_argument("--tol", type=float, default=1e-6, help="solver tolerance (default: 1e-6)")
    f.add_argument("--n-iter", type=int, default=15, help="alternating rounds (default: 15)")
    f.add_argument("--init", choices=INITS, default="svd", help="initialisation (default: svd)")
    f.add_argument("--reg", type=float, default=0.0, help="ridge parameter (default: 0)")
    r.add_argument("--peer-python", default=None,
                   help="a Python interpreter with fancyimpute installed, for the SoftImpute peer "
                        "(default: this one, or $ICLR25_FANCYIMPUTE_PYTHON)")
    return ucli.run_main(parser, argv)
