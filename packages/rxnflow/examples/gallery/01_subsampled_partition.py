# %% [markdown]
# # Subsampling the action space keeps Z unbiased
# RxnFlow scores only a random fraction ρ of each building-block space per step and reweights those logits by
# |A_i|/n_i. The figure shows the partition-function estimate Ẑ over many random subsets of a generated
# 20,000-action space: centred on the exact Z with the weight, far too small without it, and a variance that
# grows as (1 - ρ)/ρ.

# %%
import numpy as np

from iclr25.rxnflow import draw_subsets, partition_estimates
from iclr25.utils.plotting import show, subplots

rng = np.random.default_rng(0)
fixed = rng.normal(0.0, 1.5, size=11)  # stop + 10 unimolecular actions: never subsampled
spaces = [rng.normal(0.0, 1.5, size=n) for n in (8000, 6000, 4000, 2000)]  # logits of four block spaces
exact = np.exp(fixed).sum() + sum(np.exp(s).sum() for s in spaces)

rhos = [0.02, 0.05, 0.1, 0.2, 0.5]
ratio = {r: partition_estimates(spaces, fixed, r, 400, seed=1) / exact for r in rhos}  # Ẑ / Z, 400 subsets each
naive = {}
for r in rhos:  # the same subsets without the importance weight |A_i|/n_i
    draws = [draw_subsets([len(s) for s in spaces], r, np.random.default_rng(k), min_sampling=1) for k in range(50)]
    naive[r] = np.mean([np.exp(fixed).sum() + sum(np.exp(s[i]).sum() for s, i in zip(spaces, d.index)) for d in draws])
    naive[r] /= exact
for r in rhos:
    print(f"rho {r:4.2f}: mean Ẑ/Z {ratio[r].mean():.4f} (sd {ratio[r].std():.4f}); without the weight {naive[r]:.3f}")

# %%
fig, ax = subplots(1, 2, size=(4.2, 3.2), layout="constrained")
ax[0].boxplot([ratio[r] for r in rhos], positions=range(len(rhos)), widths=0.5, showfliers=False)
ax[0].plot(range(len(rhos)), [ratio[r].mean() for r in rhos], "o", color="tab:red", label="mean, weighted Ẑ")
ax[0].plot(range(len(rhos)), [naive[r] for r in rhos], "s", color="tab:gray", label="mean, no weight")
ax[0].axhline(1.0, color="k", lw=0.8, ls="--")
ax[0].set_xticks(range(len(rhos)), [str(r) for r in rhos])
ax[0].set(xlabel="subsampling ratio ρ", ylabel="Ẑ / Z", title="estimate over 400 subsets")
ax[0].legend(fontsize=8, loc="center right")
var = np.array([ratio[r].var() for r in rhos])
ax[1].loglog(rhos, var, "o-", label="measured Var(Ẑ/Z)")
theory = (1 - np.array(rhos)) / np.array(rhos)
ax[1].loglog(rhos, theory * var[0] / theory[0], "--", color="0.4", label="∝ (1 - ρ)/ρ")
ax[1].minorticks_off()
ax[1].set_xticks(rhos, [str(r) for r in rhos])
ax[1].set(xlabel="subsampling ratio ρ", ylabel="variance of Ẑ / Z", title="variance vs ρ")
ax[1].legend(fontsize=8)
fig.suptitle("Importance-weighted partition estimate on a subsampled action space")
show(fig)
