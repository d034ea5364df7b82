# %% [markdown]
# # iclr25-weighted-lowrank quickstart
#
# Weighted low-rank approximation `min ‖W ∘ (M − X Yᵀ)‖_F` by alternating minimisation, with the paper's
# sketch-and-precondition regression solver (cost `‖W‖₀ k` per refinement step) next to the exact LLR16
# solver (`‖W‖₀ k²`).

# %%
import numpy as np

from iclr25.weighted_lowrank import WeightedLowRank, planted, weighted_low_rank

# %% [markdown]
# A planted rank-4 problem: dense spectral-gap weights W ~ U(0.5, 1.5), noise 1e-3 · max|M*|.

# %%
prob = planted(200, 150, 4, weights="dense", noise=1e-3, seed=0)
for solver in ("exact", "sketch"):
    res = weighted_low_rank(prob.M, prob.W, 4, solver=solver, n_iter=10, truth=prob.truth)
    print(f"{solver:>6}: error per round", np.array2string(res.recovery_errors[:5], formatter={"float": "{:.1e}".format}),
          f"final {res.recovery_errors[-1]:.3e}")

# %% [markdown]
# Matrix completion: a 30% mask stored as scipy.sparse CSR, through the scikit-learn style estimator.

# %%
mask = planted(200, 150, 4, weights="mask", p=0.3, noise=0.0, seed=1)
est = WeightedLowRank(4, solver="sketch", sketch="countsketch", n_iter=15).fit(mask.M, mask.W)
print("completion error", mask.recovery_error(est.reconstruct()), "rounds", est.n_iter_)
