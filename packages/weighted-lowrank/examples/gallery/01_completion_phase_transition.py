# %% [markdown]
# # Matrix completion: how many entries are enough?
# A rank-4 300 x 200 matrix (noise 1e-3) is observed on a random fraction p of its entries (a 0/1 mask is the
# weight matrix W). The figure shows the recovery error of weighted alternating minimisation against p, beside
# its own starting point, the rank-4 SVD of the rescaled observed matrix: with 7 % of the entries or fewer both
# fail, from 9 % on alternating minimisation recovers the matrix to the noise level (errors of a few 1e-3).

# %%
import numpy as np

from iclr25.utils.plotting import show, subplots
from iclr25.weighted_lowrank import planted, weighted_low_rank

k = 4
ps = [0.05, 0.07, 0.09, 0.11, 0.14, 0.2, 0.3]
altmin, spectral = [], []
for p in ps:
    prob = planted(300, 200, k, weights="mask", p=p, noise=1e-3, seed=0)  # W = mask / p, scipy.sparse CSR
    observed = prob.W.multiply(np.nan_to_num(prob.M)).toarray()  # W ∘ M: unbiased for M*
    U, s, Vt = np.linalg.svd(observed, full_matrices=False)
    spectral.append(prob.recovery_error((U[:, :k] * s[:k]) @ Vt[:k]))
    res = weighted_low_rank(prob.M, prob.W, k, n_iter=15, truth=prob.truth, seed=0)
    altmin.append(res.recovery_errors[-1])
print("p:                      ", "  ".join(f"{p:8.2f}" for p in ps))
print("error, rank-4 SVD:      ", "  ".join(f"{e:8.2e}" for e in spectral))
print("error, alternating min.:", "  ".join(f"{e:8.2e}" for e in altmin))

# %%
fig, ax = subplots(1, 1, size=(5.0, 3.4))
ax.semilogy(ps, spectral, "s--", color="tab:gray", label="rank-4 SVD of W ∘ M (the start)")
ax.semilogy(ps, altmin, "o-", label="alternating minimisation, 15 rounds")
ax.axhline(1.0, color="k", lw=0.8, ls=":", label="error of the zero matrix")
ax.set(xlabel="observed fraction of entries p", ylabel="recovery error ‖M* − X Yᵀ‖ / ‖M*‖",
       title="Completing a rank-4 300 × 200 matrix")
ax.legend(fontsize=8)
show(fig)
