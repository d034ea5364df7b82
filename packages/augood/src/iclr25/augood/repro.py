"""``iclr25 augood repro``: the reduced-scale reproduction of the paper's claims.

1. Solubility case study (5 seeds, RF/ridge/kNN, 14 thresholds): GOOD curves, AU-GOOD for ChEMBL drugs and
   an in-distribution control, model ranking; leakage and size checks of every CCPart partition.
2. Test-set difficulty of random, scaffold and CCPart partitions for the random forest.
3. Sequence variant: simulated protein families, global-alignment identity, one-hot ridge.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult

from .casestudy import (
    CaseStudy,
    add_study_metrics,
    control_split,
    lowest_viable,
    plot_case_study,
    run_case_study,
    study_table,
)
from .data import load_dataset, simulate_protein_families
from .good import good_curve
from .metrics import batch_metric
from .models import model_factory
from .partition import ccpart_sweep, random_partition, scaffold_partition, threshold_grid
from .sequence import identity_matrix
from .similarity import fingerprints, similarity_matrix

SEEDS = (0, 1, 2, 3, 4)
CONTROL_FRACTION = 0.2

Check = tuple[str, str, bool]


def _leakage(dense: np.ndarray, parts) -> tuple[int, int, float]:
    """(violating pairs, viable partitions checked, worst train/valid–test similarity minus λ)."""
    violations, checked, worst = 0, 0, -np.inf
    for p in parts:
        if not p.viable:
            continue
        checked += 1
        rest = np.concatenate([p.train, p.valid])
        cross = dense[np.ix_(p.test, rest)]
        violations += int((cross >= p.threshold).sum())
        worst = max(worst, float(cross.max(initial=0.0)) - p.threshold)
    return violations, checked, worst


def _nearest_train(sim_dense: np.ndarray, part) -> float:
    """Mean over test items of the similarity to their nearest training item."""
    return float(sim_dense[np.ix_(part.test, part.train)].max(axis=1).mean())


def _curve_checks(study: CaseStudy) -> list[Check]:
    """Monotonicity, CCPart harder than random, AU-GOOD control > drugs and AU-GOOD within the curve's range."""
    rf = study.curves["rf"]
    rho_seeds = rf.seed_monotonicity()
    lowest = lowest_viable(rf)
    checks = [
        ("mean per-seed Spearman ρ(λ, P_RF) ≥ 0.6", f"{np.nanmean(rho_seeds):.3f} "
         f"(seeds: {', '.join(f'{r:.2f}' for r in rho_seeds)})", bool(np.nanmean(rho_seeds) >= 0.6)),
        ("P_RF at lowest viable λ < P_RF on the random split", f"{lowest:.3f} vs "
         f"{np.nanmean(rf.random_performance):.3f}", bool(lowest < np.nanmean(rf.random_performance))),
    ]
    for name, curve in study.curves.items():
        c, d = study.scores[(name, "control")].value, study.scores[(name, "chembl_drugs")].value
        checks.append((f"AU-GOOD control > AU-GOOD ChEMBL drugs ({name})", f"{c:.3f} > {d:.3f}", bool(c > d)))
        lo, hi = np.nanmin(curve.mean), np.nanmax(curve.mean)
        inside = all(lo - 1e-12 <= study.scores[(name, k)].value <= hi + 1e-12
                     for k in ("chembl_drugs", "control", "uniform", "chembl_drugs/drop"))
        checks.append((f"min P ≤ AU-GOOD ≤ max P ({name}, all deployments)", f"[{lo:.3f}, {hi:.3f}]", inside))
    return checks


def _partition_checks(run: RunResult, sim: sp.csr_matrix, dense: np.ndarray) -> list[Check]:
    """Brute-force leakage and test-size checks of every CCPart partition of the sweep, all seeds."""
    violations = checked = 0
    worst = -np.inf
    size_ok = True
    nonviable: set[float] = set()
    for s in SEEDS:
        parts = ccpart_sweep(sim, threshold_grid(), seed=s)
        v, c, w = _leakage(dense, parts)
        violations, checked, worst = violations + v, checked + c, max(worst, w)
        size_ok &= all(0.18 <= p.test_fraction <= 0.2 for p in parts if p.viable)
        nonviable |= {p.threshold for p in parts if not p.viable}
    run.add("leakage: train/valid-test pairs with sim >= λ", violations, higher_is_better=False)
    run.add("leakage: viable partitions checked", checked)
    run.add("sizes: all viable test fractions in [0.18, 0.2]", float(size_ok))
    return [("leakage: no train/valid–test pair with sim ≥ λ (brute force)",
             f"{violations} violations in {checked} viable partitions; max(sim) − λ = {worst:.3f}", violations == 0),
            ("test fraction in [0.18, 0.20] for viable λ", f"non-viable λ: {sorted(nonviable) or 'none'}", size_ok)]


def _difficulty_section(run: RunResult, fp: sp.csr_matrix, y: np.ndarray, smiles: list[str], sim: sp.csr_matrix,
                        dense: np.ndarray, first_viable: float, seed: int) -> list[str]:
    """Random vs scaffold vs CCPart test sets: nearest-train similarity and RF Spearman ρ over the seeds."""
    t0 = time.perf_counter()
    X = fp.astype(np.float32)
    make = model_factory("rf", seed=seed, n_trees=200)
    rows = ["| partition | test fraction | mean nearest-train Tanimoto of test items | RF Spearman ρ (5 seeds) |",
            "|---|---|---|---|"]
    for label, maker in (("random", lambda s: random_partition(len(y), seed=s)),
                         ("scaffold (Bemis–Murcko)", lambda s: scaffold_partition(smiles, seed=s)),
                         (f"CCPart λ = {first_viable:.2f}",
                          lambda s: ccpart_sweep(sim, [first_viable], seed=s)[0]),
                         ("CCPart λ = 0.60", lambda s: ccpart_sweep(sim, [0.6], seed=s)[0])):
        perf, near, frac = [], [], []
        for s in SEEDS:
            p = maker(s)
            model = make().fit(X[p.train], y[p.train])
            perf.append(batch_metric("spearman", y[p.test][None], model.predict(X[p.test])[None])[0])
            near.append(_nearest_train(dense, p))
            frac.append(p.test_fraction)
        rows.append(f"| {label} | {np.mean(frac):.3f} | {np.mean(near):.3f} | "
                    f"{np.mean(perf):.3f} ± {np.std(perf):.3f} |")
        run.add(f"difficulty {label}: RF ρ", float(np.mean(perf)), higher_is_better=True)
        run.add(f"difficulty {label}: nearest-train sim", float(np.mean(near)))
    return [f"### Test-set difficulty ({time.perf_counter() - t0:.0f} s)", "", *rows, ""]


def _sequence_section(run: RunResult, seed: int) -> tuple[list[str], list[Check]]:
    """Simulated protein families: one-hot ridge GOOD curve on NW-identity CCPart partitions, and leakage."""
    t0 = time.perf_counter()
    fam = simulate_protein_families(300, 120, seed=seed)
    ident = identity_matrix(list(fam.sequences))
    np.fill_diagonal(ident, 0.0)
    seq_sim = sp.csr_matrix(ident)
    seq_thr = threshold_grid(0.10, 0.95, 0.05)
    curve = good_curve(model_factory("ridge"), fam.one_hot(), fam.y, seq_sim, seq_thr, seeds=SEEDS,
                       name="ridge one-hot")
    v, c = 0, 0
    for s in SEEDS:
        vv, cc, _ = _leakage(ident, ccpart_sweep(seq_sim, seq_thr, seed=s))
        v, c = v + vv, c + cc
    rho = float(np.nanmean(curve.seed_monotonicity()))
    run.add("sequence: mean per-seed ρ(λ, P_ridge)", rho, higher_is_better=True)
    run.add("sequence: leakage violations", v, higher_is_better=False)
    checks = [("sequence variant: mean per-seed ρ(λ, P_ridge) ≥ 0.6",
               f"{rho:.3f} over {int(curve.viable.sum())} viable λ", rho >= 0.6),
              ("sequence variant: no train–test pair with identity ≥ λ", f"{v} violations in {c} viable partitions",
               v == 0)]
    rows = ["| λ | " + " | ".join(f"{t:.2f}" for t in seq_thr[curve.viable]) + " |",
            "|---" * (int(curve.viable.sum()) + 1) + "|",
            "| ridge ρ | " + " | ".join(f"{p:.3f}" for p in curve.mean[curve.viable]) + " |"]
    lines = [f"### Sequence variant (300 simulated sequences, parasail NW identity; "
             f"{time.perf_counter() - t0:.0f} s)", "", *rows,
             f"\nRandom split: {np.nanmean(curve.random_performance):.3f}.", ""]
    return lines, checks


def run_reproduction(out: Path, *, seed: int = 0) -> int:
    out = Path(out)
    run = RunResult.start("iclr25-augood", "repro", seed=seed,
                          config={"dataset": "solubility", "seeds": list(SEEDS), "models": ["rf", "ridge", "knn"],
                                  "n_trees": 200, "thresholds": "0.30:0.95:0.05", "test_size": 0.2,
                                  "valid_size": 0.1, "fingerprint": "ecfp4-2048 tanimoto",
                                  "sequence variant": "300 sequences x 120 aa, NW identity, one-hot ridge"})
    # 1. case study
    t0 = time.perf_counter()
    study = run_case_study("solubility", seeds=SEEDS, control_fraction=CONTROL_FRACTION, n_trees=200,
                           n_bootstrap=200, seed=seed)
    add_study_metrics(run, study)
    fig = plot_case_study(study, out / "good_curves.png")
    run.add_figure(fig, relative_to=out)
    lines = [f"### Solubility case study ({study.n_pool} pool molecules, {study.n_control} control, "
             f"{study.n_drugs} ChEMBL drugs; {len(SEEDS)} seeds; {time.perf_counter() - t0:.0f} s)", "",
             study_table(study)]
    # the case study's pool, all pairs: the brute-force checks and the nearest-train similarity need them
    ds = load_dataset("solubility")
    _, pool = control_split(len(ds), CONTROL_FRACTION, seed)
    fp = fingerprints(ds.smiles)[pool]
    sim = similarity_matrix(fp, min_threshold=0.0)
    dense = sim.toarray()
    checks = _curve_checks(study) + _partition_checks(run, sim, dense)
    # 2. difficulty of random vs scaffold vs CCPart
    rf = study.curves["rf"]
    lines += _difficulty_section(run, fp, ds.y[pool], [ds.smiles[i] for i in pool], sim, dense,
                                 float(rf.thresholds[rf.viable][0]), seed)
    # 3. sequence variant
    seq_lines, seq_checks = _sequence_section(run, seed)
    lines += seq_lines
    checks += seq_checks
    # summary
    check_rows = ["| claim | measured | holds |", "|---|---|---|"]
    check_rows += [f"| {c} | {m} | {'yes' if ok else '**no**'} |" for c, m, ok in checks]
    for c, _, ok in checks:
        run.add(f"claim holds: {c}", float(ok))
    text = "\n".join(["### Claims", "", *check_rows, "", *lines])
    run.finish().save(out / "results.json")
    with atomic_write(out / "results.md") as f:
        f.write(text + "\n")
    print(text)
    print(f"wrote {out / 'results.json'}, {out / 'results.md'} and {fig} in {run.wall_time_s:.0f} s")
    return 0
