"""Command line of ``iclr25 augood``: ``demo``, ``repro``, ``partition`` and ``evaluate``."""

from __future__ import annotations

import argparse
import csv
import io
import math
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from iclr25.utils import cli as ucli
from iclr25.utils.io import DataFileError, atomic_write, existing_file
from iclr25.utils.outputs import add_output
from iclr25.utils.parallel import add_backend_arguments, cluster
from iclr25.utils.results import RunResult

DESCRIPTION = """AU-GOOD: similarity-based partitioning (CCPart) and model comparison for out-of-distribution
evaluation of biochemical models (Fernandez-Diaz et al., ICLR 2025).

  demo       GOOD curves of RF/ridge/kNN on the built-in solubility set, AU-GOOD for ChEMBL drugs
  repro      the reduced-scale reproduction (5 seeds, 14 thresholds, sequence variant)
  partition  CCPart (or random/scaffold) partition of your own molecules (CSV with a SMILES column)
  evaluate   GOOD curves, AU-GOOD and model ranking on your own labelled molecules
"""
DEMO_HELP = "GOOD curves and AU-GOOD on the built-in solubility set (< 60 s)"
REPRO_HELP = "the reduced-scale reproduction (at most 10 min)"


# ------------------------------------------------------------------------------------------------ helpers
def _read_table(path: Path, columns: Sequence[str]) -> dict[str, list[str]]:
    """Named columns of a CSV file; errors name the file, the line and what was expected. The file line of
    each row is under the key ``"__line__"`` (as strings)."""
    existing_file(path, None, "table")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataFileError(path, f"not UTF-8 text ({exc})") from exc
    if "\x00" in text:
        raise DataFileError(path, "not a CSV text file (it holds NUL bytes)")
    reader = csv.DictReader(io.StringIO(text))
    try:
        fields = reader.fieldnames or []
    except csv.Error as exc:
        raise DataFileError(path, f"not a readable CSV file ({exc})") from exc
    for c in columns:
        if c not in fields:
            raise DataFileError(path, f"column {c!r} not found among {[f[:40] for f in fields[:10]]} "
                                      f"(the first line must be a header)")
    out: dict[str, list[str]] = {c: [] for c in (*columns, "__line__")}
    try:
        for row in reader:
            line = reader.line_num
            for c in columns:
                value = (row.get(c) or "").strip()
                if not value:
                    raise DataFileError(path, f"line {line}: empty value in column {c!r}")
                out[c].append(value)
            out["__line__"].append(str(line))
    except csv.Error as exc:
        raise DataFileError(path, f"line {reader.line_num}: not valid CSV ({exc})") from exc
    if not out[columns[0]]:
        raise DataFileError(path, "no rows")
    return out


def _molecules(table: dict[str, list[str]], path: Path, column: str, fingerprint: str, n_bits: int):
    """Fingerprints of a SMILES column; an invalid SMILES is reported with the file, its line and column."""
    from .similarity import InvalidMoleculeError, fingerprints

    try:
        return fingerprints(table[column], fingerprint=fingerprint, n_bits=n_bits)
    except InvalidMoleculeError as exc:
        lines = table["__line__"]
        shown = ", ".join(f"line {lines[r]}: {s!r}" for r, s in zip(exc.rows[:3], exc.examples[:3], strict=False))
        more = f" and {len(exc.rows) - 3} more" if len(exc.rows) > 3 else ""
        raise DataFileError(path, f"{len(exc.rows)} invalid SMILES in column {column!r} ({shown}{more})") from exc


def _check_fraction(flag: str, x: float, *, zero: bool) -> None:
    if not (math.isfinite(x) and (0.0 <= x if zero else 0.0 < x) and x < 1.0):
        raise ValueError(f"--{flag} must be a number in {'[0, 1)' if zero else '(0, 1)'}, got {x}")


def _check_fp(args: argparse.Namespace) -> None:
    from .similarity import FINGERPRINTS

    if args.fingerprint not in FINGERPRINTS:
        raise ValueError(f"--fingerprint must be one of {', '.join(FINGERPRINTS)}, got {args.fingerprint!r}")
    if not 8 <= args.n_bits <= 16384:
        raise ValueError(f"--n-bits must be an integer in [8, 16384], got {args.n_bits}")


def _floats(values: list[str], path: Path, column: str) -> np.ndarray:
    try:
        y = np.array([float(v) for v in values])
    except ValueError as exc:
        raise DataFileError(path, f"column {column!r} must hold numbers ({exc})") from exc
    if not np.all(np.isfinite(y)):
        raise DataFileError(path, f"column {column!r} must be finite (no NaN or inf)")
    return y


def _thresholds(text: str) -> np.ndarray:
    """``START:STOP:STEP`` or a comma-separated list."""
    from .partition import check_thresholds, threshold_grid

    try:
        if ":" in text:
            start, stop, step = (float(v) for v in text.split(":"))
            return threshold_grid(start, stop, step)
        return check_thresholds([float(v) for v in text.split(",")])
    except ValueError as exc:
        raise ValueError(f"--thresholds must be START:STOP:STEP or a comma list in [0, 1]: {exc}") from exc


# ----------------------------------------------------------------------------------------------- commands
def demo(args: argparse.Namespace) -> int:
    from .casestudy import add_study_metrics, plot_case_study, run_case_study, study_table
    from .partition import threshold_grid

    config = {"dataset": "solubility", "models": ["rf", "ridge", "knn"], "n_trees": 20,
              "thresholds": "0.30:0.90:0.10", "seeds": [args.seed], "n_bootstrap": 100,
              "fingerprint": "ecfp4-2048 tanimoto", "deployment": "chembl_drugs + 20% control"}
    run = RunResult.start("iclr25-augood", "demo", seed=args.seed, config=config)
    study = run_case_study("solubility", models=("rf", "ridge", "knn"), seeds=(args.seed,), n_trees=20,
                           thresholds=threshold_grid(0.3, 0.9, 0.1), n_bootstrap=100, seed=args.seed)
    add_study_metrics(run, study)
    # the paper's point, as the demo's headline: evaluation on data like the training set (a random split, an
    # in-distribution control) overestimates what to expect on data unlike it; AU-GOOD and CCPart show the gap
    from .casestudy import lowest_viable

    rf = study.curves["rf"]
    run.add("rf: AU-GOOD for ChEMBL drugs (Spearman ρ expected)", study.scores[("rf", "chembl_drugs")].value,
            peer=study.scores[("rf", "control")].value, peer_name="AU-GOOD for the in-distribution control",
            higher_is_better=False, headline=True, claim="augood-sees-deployment-shift")
    run.add("rf: P on the CCPart test set at the lowest viable λ", lowest_viable(rf),
            peer=float(np.nanmean(rf.random_performance)), peer_name="random split (overestimates)",
            higher_is_better=False, headline=True, claim="ccpart-harder-than-random")
    fig = plot_case_study(study, args.out / "good_curves.png")
    run.add_figure(fig, relative_to=args.out)
    run.finish().save(args.out / "results.json")
    print(study_table(study))
    print(f"wrote {args.out / 'results.json'} and {fig}")
    return 0


def repro(args: argparse.Namespace) -> int:
    from .repro import run_reproduction

    return run_reproduction(args.out, seed=args.seed)


def partition_cmd(args: argparse.Namespace) -> int:
    """Partition the molecules of a CSV file. Writes a CSV with columns row,smiles,split (split:
    train/valid/test)."""
    from .partition import ccpart, random_partition, scaffold_partition
    from .similarity import similarity_matrix

    if not (math.isfinite(args.threshold) and 0.0 <= args.threshold <= 1.0):
        raise ValueError(f"--threshold must be in [0, 1], got {args.threshold}")
    _check_fraction("test-size", args.test_size, zero=False)
    _check_fraction("valid-size", args.valid_size, zero=True)
    if args.test_size + args.valid_size >= 1.0:
        raise ValueError(f"--test-size + --valid-size must be below 1, got {args.test_size + args.valid_size:g}")
    _check_fp(args)
    if args.seed < 0:
        raise ValueError(f"--seed must be a non-negative integer, got {args.seed}")
    out = args.output  # checked (and its default filled in) by run_main before this: add_output
    cols = [args.smiles_col] + ([args.label_col] if args.label_col else [])
    table = _read_table(args.data, cols)
    smiles = table[args.smiles_col]
    labels = _floats(table[args.label_col], args.data, args.label_col) if args.label_col else None
    t0 = time.perf_counter()
    if args.method == "ccpart":
        # pairs below λ are never edges, so they need not be stored
        fp = _molecules(table, args.data, args.smiles_col, args.fingerprint, args.n_bits)
        with cluster(args.backend, address=args.address, workers=args.workers) as (engine, n_jobs):
            sim = similarity_matrix(fp, min_threshold=args.threshold, n_jobs=n_jobs, backend=engine)
        part = ccpart(sim, args.threshold, test_size=args.test_size, valid_size=args.valid_size,
                      labels=labels, seed=args.seed, tie_rule=args.tie_rule)
    elif args.method == "scaffold":
        _molecules(table, args.data, args.smiles_col, "ecfp2", 64)  # names the file and line of a bad SMILES
        part = scaffold_partition(smiles, test_size=args.test_size, valid_size=args.valid_size, seed=args.seed)
    else:
        part = random_partition(len(smiles), test_size=args.test_size, valid_size=args.valid_size, seed=args.seed)
    split = np.full(part.n, "train", dtype=object)
    split[part.valid] = "valid"
    split[part.test] = "test"
    with atomic_write(out, newline="") as f:
        w = csv.writer(f)
        w.writerow(["row", "smiles", "split"])
        for i, (s, p) in enumerate(zip(smiles, split, strict=True)):
            w.writerow([i, s, p])
    print(f"{args.method}: train {part.train.size}, valid {part.valid.size}, test {part.test.size} "
          f"(test fraction {part.test_fraction:.3f}, {'viable' if part.viable else 'NOT viable'}) "
          f"in {time.perf_counter() - t0:.2f} s; wrote {out}")
    return 0


def evaluate_cmd(args: argparse.Namespace) -> int:
    """Fit models on CCPart partitions of a labelled CSV over a threshold grid, then report AU-GOOD
    (deployment-weighted, or uniform without --deployment) and Wilcoxon model comparisons. Writes
    OUT/results.json."""
    from .comparison import compare_models
    from .good import good_curve
    from .metrics import METRICS
    from .models import MODELS, model_factory
    from .score import au_good
    from .similarity import max_similarity, similarity_matrix

    thresholds = _thresholds(args.thresholds)
    seeds = tuple(ucli.seed_list(args.seeds))
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in models if m not in MODELS]
    if not models or unknown:
        raise ValueError(f"--models must be a comma list from {','.join(MODELS)}, got {args.models!r}")
    if args.metric not in METRICS:
        raise ValueError(f"--metric must be one of {', '.join(METRICS)}, got {args.metric!r}")
    _check_fp(args)
    run = RunResult.start("iclr25-augood", "evaluate", seed=seeds[0],
                          config={"data": str(args.data), "models": models, "thresholds": thresholds.tolist(),
                                  "seeds": list(seeds), "fingerprint": args.fingerprint})
    table = _read_table(args.data, [args.smiles_col, args.label_col])
    y = _floats(table[args.label_col], args.data, args.label_col)
    dep_table = None
    if args.deployment is not None:
        dep_table = _read_table(args.deployment, [args.deployment_smiles_col])
    fp = _molecules(table, args.data, args.smiles_col, args.fingerprint, args.n_bits)
    deploy = None
    with cluster(args.backend, address=args.address, workers=args.workers) as (engine, n_jobs):
        if dep_table is not None:
            dep_fp = _molecules(dep_table, args.deployment, args.deployment_smiles_col, args.fingerprint,
                                args.n_bits)
            deploy = max_similarity(dep_fp, fp, n_jobs=n_jobs, backend=engine)
        sim = similarity_matrix(fp, thresholds=thresholds, n_jobs=n_jobs, backend=engine)
    X = fp.astype(np.float32)
    curves = {}
    for m in models:
        curves[m] = good_curve(model_factory(m, seed=seeds[0]), X, y, sim, thresholds, metric=args.metric,
                               seeds=seeds, name=m, tie_rule=args.tie_rule)
    print("| model | viable λ | ρ(λ, P) | AU-GOOD | 95% CI |\n|---|---|---|---|---|")
    for m, c in curves.items():
        r = au_good(c, deploy, n_bootstrap=200)
        run.add(f"{m}: AU-GOOD", r.value, higher_is_better=c.higher_is_better)
        run.add(f"{m}: monotonicity", c.monotonicity())
        print(f"| {m} | {int(c.viable.sum())} | {c.monotonicity():.3f} | {r.value:.4f} | "
              f"[{r.ci_low:.4f}, {r.ci_high:.4f}] |")
    if len(curves) >= 2:
        cmp = compare_models(curves)
        print("ranking (best first):", ", ".join(cmp.ranking))
        for i, a in enumerate(cmp.names):
            for j, b in enumerate(cmp.names):
                if i != j:
                    run.add(f"Wilcoxon p({a} > {b})", float(cmp.p_values[i, j]))
    run.finish().save(args.out / "results.json")
    print(f"wrote {args.out / 'results.json'}")
    return 0


def default_partition_output(args: argparse.Namespace) -> Path:
    """``partition``'s default ``--output``: ``DATA.partition.csv`` beside the input (``mols.partition.csv``)."""
    return args.data.with_name(args.data.stem + ".partition.csv")


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub, _, _ = ucli.method_commands("augood", DESCRIPTION, demo=demo, demo_help=DEMO_HELP,
                                             repro=repro, repro_help=REPRO_HELP,
                                             demo_files=("good_curves.png",),
                                             repro_files=("good_curves.png", "results.md"))

    p = ucli.add_command(sub, "partition", partition_cmd, seed="tie-breaking seed (default: 0)", help="partition your own molecules (CSV with a SMILES column)")
    p.add_argument("data", type=Path, help="CSV file with a header row")
    p.add_argument("--smiles-col", default="smiles", help="column holding SMILES (default: smiles)")
    p.add_argument("--label-col", default=None, help="optional numeric label column to balance")
    p.add_argument("--method", choices=("ccpart", "random", "scaffold"), default="ccpart",
                   help="partitioning algorithm (default: ccpart)")
    p.add_argument("--threshold", type=float, default=0.4,
                   help="CCPart similarity threshold λ in [0, 1] (default: 0.4)")
    p.add_argument("--test-size", type=float, default=0.2, help="test fraction (default: 0.2)")
    p.add_argument("--valid-size", type=float, default=0.1, help="validation fraction (default: 0.1)")
    p.add_argument("--fingerprint", default="ecfp4", help="ecfp2/ecfp4/ecfp6/maccs (default: ecfp4)")
    p.add_argument("--n-bits", type=int, default=2048, help="fingerprint length (default: 2048)")
    add_backend_arguments(p)  # the similarity matrix's row blocks on local processes, Dask or Ray
    p.add_argument("--tie-rule", choices=(">=", ">"), default=">=",
                   help="a pair at exactly λ is an edge with '>=' (hestia-good 1.2.2) and not with '>' "
                        "(hestia-ood 0.0.36) (default: >=)")
    add_output(p, "--output", kind="file", suffixes=(".csv",), default=default_partition_output,
               help="the partition, a CSV with columns row,smiles,split (default: DATA.partition.csv beside the "
                    "input)")

    e = ucli.add_command(sub, "evaluate", evaluate_cmd, help="GOOD curves, AU-GOOD and model ranking on your own molecules")
    e.add_argument("data", type=Path, help="CSV file with SMILES and a numeric label")
    e.add_argument("--smiles-col", default="smiles", help="SMILES column (default: smiles)")
    e.add_argument("--label-col", required=True, help="numeric label column")
    e.add_argument("--deployment", type=Path, default=None, help="CSV of deployment molecules (optional)")
    e.add_argument("--deployment-smiles-col", default="smiles", help="its SMILES column (default: smiles)")
    e.add_argument("--models", default="rf,ridge,knn", help="comma list from rf,ridge,knn (default: all)")
    e.add_argument("--metric", default="spearman",
                   help="spearman, pearson, r2, mae, rmse, accuracy, mcc or auroc (default: spearman)")
    e.add_argument("--thresholds", default="0.30:0.95:0.05",
                   help="START:STOP:STEP or a comma list (default: 0.30:0.95:0.05)")
    e.add_argument("--seeds", default="0", help="comma list of CCPart tie seeds (default: 0)")
    add_backend_arguments(e)
    e.add_argument("--tie-rule", choices=(">=", ">"), default=">=",
                   help="CCPart edge at exactly λ: '>=' (hestia-good 1.2.2) or '>' (hestia-ood 0.0.36) "
                        "(default: >=)")
    e.add_argument("--fingerprint", default="ecfp4", help="ecfp2/ecfp4/ecfp6/maccs (default: ecfp4)")
    e.add_argument("--n-bits", type=int, default=2048, help="fingerprint length (default: 2048)")
    add_output(e, "--out", kind="folder", default="results/augood-evaluate", run_files=("results.json",),
               help="folder for results.json")
    return ucli.run_main(parser, argv)
