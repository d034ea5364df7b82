"""Command line of ``iclr25 scalegun``: ``demo`` (:mod:`.demo`), ``repro`` (:mod:`.repro`) and ``unlearn`` (your own
graph and requests)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from iclr25.utils import cli as ucli
from iclr25.utils.io import DataFileError, atomic_write
from iclr25.utils.outputs import add_output
from iclr25.utils.progress import progress

from . import datasets

DESCRIPTION = ("ScaleGUN: certified edge, node and feature unlearning with lazy local propagation (Yi & Wei, "
               "ICLR 2025).")
DEMO_HELP = "digits kNN graph: ScaleGUN vs CGU on 80 requests, audited bounds (at most 60 s)"
REPRO_HELP = ("power-law graphs of 100k/300k/1M edges: time per request of ScaleGUN, CGU and retraining "
              "(at most 10 min)")


# torch-dependent modules are imported inside the commands, so that --help stays fast
MODES = ("scalegun", "cgu", "retrain")


def _check_options(args: argparse.Namespace) -> None:
    """Every option of ``unlearn``, before any file is read; messages name the flag."""
    def positive(flag: str, x: float, *, zero: bool = False, below: float | None = None) -> None:
        ok = math.isfinite(x) and (x >= 0 if zero else x > 0) and (below is None or x < below)
        if not ok:
            rule = (">= 0" if zero else "> 0") + (f" and < {below:g}" if below is not None else "")
            raise ValueError(f"{flag} must be a finite number {rule}, got {x}")

    if args.hops < 1:
        raise ValueError(f"--hops must be an integer >= 1, got {args.hops}")
    if args.r_max is not None:
        positive("--r-max", args.r_max, zero=args.mode != "scalegun")
    positive("--epsilon", args.epsilon)
    positive("--delta", args.delta, below=1.0)
    positive("--lam", args.lam)
    positive("--sigma", args.sigma, zero=True)
    if args.seed < 0:
        raise ValueError(f"--seed must be a non-negative integer, got {args.seed}")
    # --out and --mmap were checked before the command ran (add_output: not an input, writable, --overwrite);
    # a --mmap folder must hold nothing but the maps this command writes
    _check_mmap_folder(args.mmap)
    from .model import model_device  # noqa: PLC0415 - torch stays out of --help

    args.device = model_device(args.device)  # an absent device: one line naming --device, before any file is read


def _check_mmap_folder(folder: Path | None) -> None:
    if folder is not None and folder.is_dir():
        foreign = sorted(p.name for p in folder.iterdir() if p.name not in MMAP_FILES)
        if foreign:
            raise ValueError(f"--mmap {str(folder)!r} exists and is not a folder of mapped graph files written by "
                             f"'unlearn --mmap' ({', '.join(MMAP_FILES)}; it holds {foreign[0]}); name a new folder")


MMAP_STAMP = "source.json"
#: The files ``unlearn --mmap DIR`` writes in DIR (mapped.MAPPED_FILES and the stamp; mapped is imported late).
MMAP_FILES = ("indptr.npy", "indices.npy", MMAP_STAMP)


def _mapped_graph(graph: Path, folder: Path, n: int):
    """The ``--mmap`` folder's :class:`MappedGraph` of ``graph``: written from ``graph`` (read once, as without
    ``--mmap``) unless the folder already holds the maps of this very file (same path, size and mtime)."""
    import json

    from .mapped import MAPPED_FILES, MappedGraph, write_mapped_graph

    st = graph.stat() if graph.is_file() else None
    source = {"graph": str(graph.resolve()), "size": st.st_size if st else None,
              "mtime_ns": st.st_mtime_ns if st else None}
    stamp = folder / MMAP_STAMP
    if folder.exists():
        ours = folder.is_dir() and set(p.name for p in folder.iterdir()) <= {*MAPPED_FILES, MMAP_STAMP}
        if not ours:
            raise ValueError(f"--mmap {str(folder)!r} exists and is not a folder of mapped graph files written by "
                             f"'unlearn --mmap' ({', '.join(MAPPED_FILES)}, {MMAP_STAMP}); name a new folder")
        try:
            same = json.loads(stamp.read_text()) == source and all((folder / f).is_file() for f in MAPPED_FILES)
        except (OSError, ValueError):
            same = False
        if same:
            g = MappedGraph(folder)
            if g.n_nodes == n:
                return g
    try:
        write_mapped_graph(datasets.load_graph(graph, n_nodes=n), folder)
        with atomic_write(stamp) as f:
            json.dump(source, f)
    except OSError as exc:  # a full disk: name the folder the user gave, not a temporary file in it
        raise OSError(f"--mmap {folder}: cannot write the mapped graph: {exc.strerror or exc}") from None
    return MappedGraph(folder)


def _converted(args: argparse.Namespace):
    """Features (mapped), labels, graph (mapped) and training ids of a folder written by ``convert``."""
    from .mapped import MappedGraph  # noqa: PLC0415
    from .readers import DATA_FILES  # noqa: PLC0415

    d = args.data
    clash = [f for f in ("graph", "features", "labels", "train", "mmap") if getattr(args, f) is not None]
    if clash:
        raise ValueError(f"--data {d} holds the graph, features, labels and split; drop --{clash[0]}")
    if d.exists() and not d.is_dir():
        raise DataFileError(d, "not a folder written by `iclr25 scalegun convert` (--data takes that folder)")
    if not d.is_dir():
        raise FileNotFoundError(f"{d}: no such folder (write it with `iclr25 scalegun convert`)")
    missing = [f for f in DATA_FILES if not (d / f).is_file()]
    if missing:
        raise DataFileError(d, f"missing {missing[0]}: not a folder written by `iclr25 scalegun convert`")
    X = datasets.load_features(d / "features.npy", mmap=True)
    n = X.shape[0]
    y = datasets.load_labels(d / "labels.npy", n)
    adj = MappedGraph(d)
    if adj.n_nodes != n:
        raise DataFileError(d, f"the graph has {adj.n_nodes} nodes, features.npy {n} rows")
    train = datasets.load_train(d / "train.npy", n) if (d / "train.npy").is_file() else np.arange(n)
    return X, y, adj, train


def convert_cmd(args: argparse.Namespace) -> int:
    from .readers import convert  # noqa: PLC0415

    s = convert(args.source, args.out, split=args.split, force=args.force)
    split = f", split {s['split_scheme']} ({', '.join(s['split'])})" if s["split"] else ", no split (all nodes train)"
    print(f"{s['format']} {args.source}: {s['n_nodes']} nodes, {s['n_undirected_edges']} undirected edges, "
          f"{s['n_features']} features{split} -> {args.out} (run: iclr25 scalegun unlearn --data {args.out} ...)")
    return 0


def unlearn(args: argparse.Namespace) -> int:
    from .unlearner import CertifiedUnlearner

    _check_options(args)
    if args.data is not None:
        X, y, adj, train = _converted(args)
        n = X.shape[0]
    else:
        missing = [f for f in ("graph", "features", "labels") if getattr(args, f) is None]
        if missing:
            raise ValueError(f"unlearn needs --data DIR (from `iclr25 scalegun convert`) or --graph, --features and "
                             f"--labels (missing --{missing[0]})")
        # features first: their row count is the number of nodes, which bounds the ids of every other file
        X = datasets.load_features(args.features, mmap=args.mmap is not None)
        n = X.shape[0]
        y = datasets.load_labels(args.labels, n)
        adj = (datasets.load_graph(args.graph, n_nodes=n) if args.mmap is None
               else _mapped_graph(args.graph, args.mmap, n))
        train = np.arange(n) if args.train is None else datasets.load_train(args.train, n)
    requests = datasets.read_requests(args.requests)
    datasets.check_requests(requests, adj, args.requests)
    u = CertifiedUnlearner(adj, X, y, train, hops=args.hops, weights=args.weights, r_max=args.r_max,
                           epsilon=args.epsilon, delta=args.delta, lam=args.lam, sigma=args.sigma,
                           mode=args.mode, audit=args.audit, seed=args.seed, device=args.device).fit()
    for r in progress(requests, total=len(requests), desc="requests"):
        ids = np.array(r.ids, dtype=np.int64)
        try:
            if r.kind == "edge":
                u.unlearn_edges(ids.reshape(-1, 2))
            elif r.kind == "node":
                u.unlearn_nodes(ids)
            else:
                u.unlearn_features(ids)
        except ValueError as exc:  # e.g. a request that would leave no training node
            raise DataFileError(args.requests, f"line {r.line}: {exc}") from exc
    try:
        u.ledger.to_json(args.out)  # atomically: a failed write leaves no file
    except ValueError as exc:  # strict JSON: a NaN/inf bound is not a result
        raise ValueError(f"--out {args.out} not written: the ledger holds a non-finite number ({exc})") from None
    last = u.ledger[-1]
    kinds = {k: sum(len(r.ids) // (2 if k == "edge" else 1) for r in requests if r.kind == k)
             for k in ("edge", "node", "feature")}
    what = ", ".join(f"{v} {k}{'s' if v != 1 else ''}" for k, v in kinds.items() if v)
    print(f"{u.ledger.n_requests} requests ({what}) from {args.requests}, {u.ledger.n_retrains} retrains, "
          f"last data-dependent bound {max(last.data_bound):.3e} (budget {last.budget:.3e}); ledger written to "
          f"{args.out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    from iclr25.utils.device import add_device_argument  # noqa: PLC0415

    parser, sub, dp, rp = ucli.method_commands("scalegun", DESCRIPTION, demo="iclr25.scalegun.demo:demo", demo_help=DEMO_HELP,
                                              repro="iclr25.scalegun.repro:repro", repro_help=REPRO_HELP)
    rp.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000, 1_000_000],
                    help="numbers of edges (default: 100000 300000 1000000)")
    rp.add_argument("--requests", type=int, default=200, help="single-edge requests per size (default: 200)")
    ucli.add_force_argument(rp)
    un = ucli.add_command(
        sub, "unlearn", unlearn, seed="random seed (default: 0)", help="unlearn requests on your own graph and write the certificate ledger",
        description="Fit ScaleGUN on your graph, unlearn the requests in order, write the ledger as JSON.\n"
                    "graph: edge list .txt/.edges/.csv ('u v' per line: two node ids, unweighted) or CSR .npz\n"
                    "(scipy.sparse.save_npz); features: .npy (n, F), one row per node; labels: .npy (n,) ints;\n"
                    "train: .npy of node ids (default: all);\n"
                    "requests: text, one per line: 'edge U V [U2 V2 ...]', 'node A [B ...]', "
                    "'feature A [B ...]'.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    un.add_argument("--data", type=Path, default=None,
                    help="a folder written by `convert` (graph, features, labels, split; all memory-mapped)")
    un.add_argument("--graph", type=Path, default=None, help="edge list or CSR .npz")
    un.add_argument("--features", type=Path, default=None, help="node features .npy, shape (n, F)")
    un.add_argument("--labels", type=Path, default=None, help="class labels .npy, shape (n,)")
    un.add_argument("--train", type=Path, default=None, help="training node ids .npy (default: all nodes)")
    un.add_argument("--requests", type=Path, required=True, help="requests file (see above)")
    add_output(un, "--out", kind="file", default="ledger.json", suffixes=(".json",),
               help="the certificate ledger written as JSON")
    un.add_argument("--hops", type=int, default=2, help="propagation hops (default: 2)")
    un.add_argument("--weights", default=None, choices=["sgc", "ppr", "avg", "hetero"],
                    help="GPR weights (default: sgc)")
    un.add_argument("--r-max", type=float, default=None,
                    help="relative push threshold (default: chosen from n and the budget, see r_max_rule)")
    un.add_argument("--epsilon", type=float, default=1.0, help="certificate epsilon (default: 1)")
    un.add_argument("--delta", type=float, default=1e-4, help="certificate delta (default: 1e-4)")
    un.add_argument("--lam", type=float, default=1e-2, help="L2 regularisation (default: 0.01)")
    un.add_argument("--sigma", type=float, default=0.1, help="objective noise std (default: 0.1)")
    un.add_argument("--mode", default="scalegun", choices=list(MODES), help="unlearning mode (default: scalegun)")
    un.add_argument("--audit", action="store_true",
                    help="also record the true gradient residual on exact embeddings (the paper's compare_gnorm)")
    add_output(un, "--mmap", kind="folder", resumes=True, run_files=MMAP_FILES, metavar="DIR",
               help="memory-map the graph and the features: the graph's CSR index arrays are written to DIR "
                    "(a new folder, reused on later runs with the same --graph file) and read from there; "
                    "--features (float64 .npy) is mapped read-only")
    cv = ucli.add_command(sub, "convert", convert_cmd, help="stream an OGB folder or an Amazon CSR .npz into a "
                          "memory-mapped folder for `unlearn --data`")
    cv.add_argument("source", type=Path, help="OGB node-property folder (raw/*.csv.gz, split/) or Amazon-style .npz")
    cv.add_argument("--split", default=None, help="OGB split scheme under split/ (default: the only one)")
    add_output(cv, "--out", kind="folder", required=True, run_files=("indptr.npy", "indices.npy", "source.json"),
               help="the converted folder")
    ucli.add_force_argument(cv)
    for p in (dp, rp, un):  # the model's algebra (float64) on the GPU when torch sees one; the push on the CPU
        add_device_argument(p)
    return ucli.run_main(parser, argv)


__all__ = ["main"]
