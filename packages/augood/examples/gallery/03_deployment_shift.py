# %% [markdown]
# # AU-GOOD: what to expect where the model will be used
#
# A random 20 % of the solubility set is held out as an in-distribution control; approved drugs from ChEMBL are
# the out-of-distribution deployment set. AU-GOOD weights the GOOD curve of a model by how similar each
# deployment molecule is to the training data. Left: each deployment set's similarity to its nearest training
# molecule; right: the GOOD curve of ridge regression, its score on a random split, and the AU-GOOD of each
# deployment set (95 % bootstrap intervals): the same model, two very different expectations.

# %%
import numpy as np
from sklearn.linear_model import Ridge

from iclr25.augood import (
    au_good,
    fingerprints,
    good_curve,
    load_dataset,
    load_deployment_set,
    max_similarity,
    similarity_matrix,
    threshold_grid,
)
from iclr25.utils.plotting import show, subplots

ds = load_dataset("solubility")  # 1,282 molecules, log S
fp_all = fingerprints(ds.smiles)
perm = np.random.default_rng(0).permutation(len(ds))
control, pool = np.sort(perm[:256]), np.sort(perm[256:])  # the control plays no part in the curve
fp, y = fp_all[pool], ds.y[pool]
grid = threshold_grid(0.3, 0.9, 0.1)
curve = good_curve(Ridge, fp, y, similarity_matrix(fp, thresholds=grid), grid, n_bootstrap=200, show_progress=False)

# %% [markdown]
# Each deployment molecule's highest Tanimoto similarity to the molecules the curve was trained on.

# %%
deploy = {"ChEMBL approved drugs": max_similarity(load_deployment_set("chembl_drugs"), fp),
          "in-distribution control": max_similarity(fp_all[control], fp)}
scores = {name: au_good(curve, s, n_bootstrap=200, seed=0) for name, s in deploy.items()}
for name, sc in scores.items():
    print(f"{name:24s} {deploy[name].size:5d} molecules, median similarity {np.median(deploy[name]):.2f}, "
          f"AU-GOOD {sc.value:.3f} [{sc.ci_low:.3f}, {sc.ci_high:.3f}]")
print(f"random split: Spearman ρ {curve.random_performance.mean():.3f}")

# %%
fig, (ax_h, ax_c) = subplots(1, 2, size=(4.0, 3.3))
for k, (name, s) in enumerate(deploy.items()):
    ax_h.hist(s, bins=np.linspace(0, 1, 26), density=True, histtype="step", linewidth=1.8, color=f"C{k}", label=name)
ax_h.set(title="Deployment sets", xlabel="max Tanimoto similarity to training", ylabel="density")
ax_h.legend(fontsize=8, loc="upper right")
ax_c.plot(curve.thresholds, curve.mean, color="k", marker="o", markersize=3, label="GOOD curve (ridge)")
ax_c.fill_between(curve.thresholds, curve.ci_low, curve.ci_high, color="k", alpha=0.15)
ax_c.axhline(curve.random_performance.mean(), color="0.5", linestyle=":", label="random split")
for k, (name, sc) in enumerate(scores.items()):
    ax_c.axhspan(sc.ci_low, sc.ci_high, color=f"C{k}", alpha=0.25)
    ax_c.axhline(sc.value, color=f"C{k}", linestyle="--", label=f"AU-GOOD, {name.split()[0]}")
ax_c.set(title="What to expect", xlabel="similarity threshold λ", ylabel="Spearman ρ on test")
fig.legend(*ax_c.get_legend_handles_labels(), loc="lower center", ncols=4, fontsize=8)
fig.tight_layout(rect=(0, 0.07, 1, 1))
show(fig)
