# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Will my property model hold up on the molecules my generator proposes? RxnFlow samples scored by AU-GOOD
#
# Two methods on one set of molecules:
#
# - **rxnflow** (synthesis-aware GFlowNet over reaction templates and building blocks, Seo et al., ICLR 2025)
#   proposes molecules together with their synthesis routes;
# - **augood** (AU-GOOD, González et al., ICLR 2025) scores a property model by how well it generalises at each
#   train/test similarity, weighted by how similar a *deployment set* is to the training data.
#
# We train a solubility model (ridge regression on ECFP4), and ask what AU-GOOD expects of it on (a) ChEMBL
# drugs and (b) the molecules a briefly trained RxnFlow proposes.

# %%
import numpy as np
import torch
from sklearn.linear_model import Ridge

from iclr25 import augood, rxnflow
from iclr25.utils import plotting

torch.set_num_threads(1)
ds = augood.load_dataset("solubility")  # 1,282 molecules, log S
fp = augood.fingerprints(ds.smiles)
sim = augood.similarity_matrix(fp, min_threshold=0.3)
curve = augood.good_curve(Ridge, fp, ds.y, sim, augood.threshold_grid(0.3, 0.9, 0.1), show_progress=False)
print("GOOD curve (Spearman rho of the model on test sets at most lambda similar to training):")
for lam, v, ok in zip(curve.thresholds, curve.performance.mean(axis=0), curve.viable):
    print(f"  lambda {lam:.1f}: {v:.3f}" + ("" if ok else "  (partition not viable)"))


# %%
fig, ax = plotting.subplots(size=(5.0, 3.2))
perf = curve.performance.mean(axis=0)
ax.plot(curve.thresholds, perf, "o-", label="Ridge on Morgan fingerprints")
ax.plot(np.asarray(curve.thresholds)[~np.asarray(curve.viable)], perf[~np.asarray(curve.viable)], "x", color="r",
        ms=9, label="partition not viable")
ax.set(xlabel="lambda: max similarity of a test molecule to training", ylabel="Spearman rho", title="GOOD curve")
ax.legend()
_ = plotting.show(fig)

# %% [markdown]
# A short RxnFlow run on the built-in toy space (QED reward), then samples with their routes.

# %%
space = rxnflow.toy_space(20, 30, n_other=10)
model = rxnflow.RxnFlow(space, "qed", beta=4.0)
rxnflow.train(model, rxnflow.TrainConfig(steps=60, batch_size=32, rho=0.2, min_sampling=5), show_progress=False)
samples = model.sample(200, seed=1)
generated = sorted({s.smiles for s in samples})
print(f"{len(generated)} distinct generated molecules; every route replays:",
      all(rxnflow.verify_route(s.route) for s in samples))

# %%
drugs = augood.load_deployment_set("chembl_drugs")
for name, smiles in (("ChEMBL drugs", drugs), ("RxnFlow samples", generated)):
    s = augood.max_similarity(smiles, fp)
    score = augood.au_good(curve, s)
    print(f"{name:16s} median max-similarity to the training set {np.median(s):.2f}; "
          f"AU-GOOD {score.value:.3f}")
print(f"{'uniform prior':16s} AU-GOOD {augood.au_good(curve).value:.3f}")

# %% [markdown]
# The generated molecules sit further from the solubility training set than the drugs do, so AU-GOOD expects
# less of the same model on them: the number to quote before trusting its predictions for generated chemistry.
