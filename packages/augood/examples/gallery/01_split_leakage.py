# %% [markdown]
# # How close is the test set? Random, scaffold, CCPart splits
#
# Three ways to hold out 20% of a solubility set, judged by each test molecule's highest Tanimoto similarity to
# any training or validation molecule. Random and scaffold splits leave near-duplicates across the split;
# CCPart at λ = 0.4 puts every test molecule below λ by construction. The figure shows the three distributions.

# %%
import numpy as np

from iclr25.augood import (
    ccpart,
    fingerprints,
    load_dataset,
    max_similarity,
    random_partition,
    scaffold_partition,
    similarity_matrix,
)
from iclr25.utils.plotting import show, subplots

ds = load_dataset("solubility")  # 1,282 measured molecules, log S (shipped with the package)
fp = fingerprints(ds.smiles)  # ECFP4, 2048 bits
sim = similarity_matrix(fp)  # sparse Tanimoto, pairs >= 0.30 stored

# %% [markdown]
# The three partitions, with the same 70/10/20 target sizes and seed.

# %%
parts = {
    "random": random_partition(len(ds), seed=0),
    "scaffold": scaffold_partition(ds.smiles, seed=0),
    "CCPart λ = 0.4": ccpart(sim, 0.4, seed=0),
}
nearest = {}
for name, p in parts.items():
    rest = np.concatenate([p.train, p.valid])
    nearest[name] = max_similarity(fp[p.test], fp[rest])  # each test molecule's closest train/valid molecule
    print(f"{name:15s} test {p.test.size:4d} molecules, median nearest similarity {np.median(nearest[name]):.2f}, "
          f"share >= 0.4: {np.mean(nearest[name] >= 0.4):.0%}")

# %%
fig, ax = subplots(size=(5.5, 3.4))
bins = np.linspace(0.0, 1.0, 26)
for name, s in nearest.items():
    ax.hist(s, bins=bins, histtype="step", linewidth=1.8, label=f"{name} (n = {s.size})")
ax.axvline(0.4, color="k", linestyle=":", linewidth=1, label="λ = 0.4")
ax.set(title="Test molecules' nearest training neighbour", xlabel="max Tanimoto similarity to train/valid",
       ylabel="test molecules")
ax.legend(fontsize=8, loc="upper right")
show(fig)
