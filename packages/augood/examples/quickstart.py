# %% [markdown]
# # iclr25-augood quickstart
#
# CCPart partitions of a measured solubility set, a GOOD curve (test performance as train–test
# similarity falls) and its AU-GOOD for a ChEMBL-drugs deployment set.

# %%
import numpy as np
from sklearn.linear_model import Ridge

from iclr25.augood import (
    au_good,
    ccpart,
    fingerprints,
    good_curve,
    load_dataset,
    load_deployment_set,
    max_similarity,
    similarity_matrix,
    threshold_grid,
)

# %% [markdown]
# ECFP4 fingerprints and the sparse Tanimoto similarity of 1,282 molecules.

# %%
ds = load_dataset("solubility")
fp = fingerprints(ds.smiles)
sim = similarity_matrix(fp)
print(f"{len(ds)} molecules, {sim.nnz} similar pairs")

# %% [markdown]
# CCPart at λ = 0.5: no test molecule has Tanimoto ≥ 0.5 to any training or validation molecule.

# %%
part = ccpart(sim, 0.5)
print(f"train {part.train.size}, valid {part.valid.size}, test {part.test.size}, viable={part.viable}")
cross = sim[part.test][:, np.concatenate([part.train, part.valid])]
print(f"max train-test similarity {cross.max():.3f} < 0.5")

# %% [markdown]
# The GOOD curve of ridge regression (Spearman ρ) and its AU-GOOD for ChEMBL drugs vs the uniform prior.

# %%
curve = good_curve(Ridge, fp, ds.y, sim, threshold_grid(0.3, 0.9, 0.1), show_progress=False)
for t, p, lo, hi in zip(curve.thresholds, curve.mean, curve.ci_low, curve.ci_high):
    print(f"λ = {t:.1f}: ρ = {p:.3f} [{lo:.3f}, {hi:.3f}]")
drugs = max_similarity(load_deployment_set("chembl_drugs"), fp)
score = au_good(curve, drugs)
print(f"AU-GOOD (ChEMBL drugs) = {score.value:.3f}; uniform prior = {au_good(curve).value:.3f}; "
      f"random split = {curve.random_performance.mean():.3f}")
