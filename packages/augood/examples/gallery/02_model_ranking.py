# %% [markdown]
# # Ranking models over the GOOD curve, with paired tests
#
# Random forest, ridge regression and Tanimoto 5-NN are scored on CCPart test sets over a grid of similarity
# thresholds λ (their GOOD curves). The paper's one-sided paired Wilcoxon tests, Holm-corrected, and the
# Friedman mean ranks then say which model degrades least out of distribution. Left: the curves with 95%
# bootstrap bands; right: each model's mean rank over the thresholds, with the Nemenyi critical difference
# (models to the right of the dotted line rank significantly worse than the best). A 25-tree forest and nine
# thresholds keep it fast.

# %%
import numpy as np

from iclr25.augood import (
    compare_models,
    fingerprints,
    good_curve,
    load_dataset,
    similarity_matrix,
    threshold_grid,
)
from iclr25.augood.models import model_factory
from iclr25.utils.plotting import show, subplots

ds = load_dataset("solubility")  # 1,282 measured molecules, log S
fp = fingerprints(ds.smiles)
grid = threshold_grid(0.45, 0.85, 0.05)
sim = similarity_matrix(fp, thresholds=grid)  # stores only the pairs the grid needs (>= 0.45)

# %% [markdown]
# One GOOD curve per model (Spearman ρ on the CCPart test set at each λ, tie seed 0).

# %%
curves = {
    name: good_curve(model_factory(name, seed=0, n_trees=25), fp, ds.y, sim, grid, n_bootstrap=50,
                     name=name, show_progress=False)
    for name in ("rf", "ridge", "knn")
}
cmp = compare_models(curves)
print(f"ranking (best first): {', '.join(cmp.ranking)}; Friedman p = {cmp.friedman_p:.3g} over {cmp.n_blocks} λ")
for i in range(len(cmp.names)):
    for j in range(i + 1, len(cmp.names)):  # each pair once, in its better direction
        better, worse = (i, j) if cmp.p_holm[i, j] <= cmp.p_holm[j, i] else (j, i)
        print(f"{cmp.names[better]} > {cmp.names[worse]}: Holm-adjusted one-sided Wilcoxon "
              f"p = {cmp.p_holm[better, worse]:.3g}")

# %%
fig, (ax, ax_rank) = subplots(1, 2, size=(4.2, 3.3), gridspec_kw={"width_ratios": [1.6, 1]})
for name, c in curves.items():
    line, = ax.plot(c.thresholds, c.mean, marker="o", markersize=3, label=name)
    ax.fill_between(c.thresholds, c.ci_low, c.ci_high, color=line.get_color(), alpha=0.2)
ax.set(title="GOOD curves (CCPart test sets)", xlabel="similarity threshold λ", ylabel="Spearman ρ on test")
ax.legend(loc="lower right", fontsize=8)
order = np.argsort(cmp.mean_ranks)
ax_rank.barh([cmp.names[i] for i in order][::-1], cmp.mean_ranks[order][::-1], color="0.6")
ax_rank.set(title=f"Mean rank over {cmp.n_blocks} λ", xlabel="mean rank (1 = best)", ylabel="model",
            xlim=(0, len(cmp.names) + 0.2))
best = cmp.mean_ranks.min()
ax_rank.axvline(best + cmp.critical_difference, color="k", linestyle=":", linewidth=1)
ax_rank.text(best + cmp.critical_difference, len(cmp.names) - 0.45, f" best + CD\n ({cmp.critical_difference:.2f})",
             fontsize=8, va="top")
fig.tight_layout()
show(fig)
