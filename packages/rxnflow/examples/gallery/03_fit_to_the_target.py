# %% [markdown]
# # Sampling in proportion to the reward, checked exactly
# A GFlowNet should sample each molecule x with probability p*(x) ∝ R(x)^β. On the enumerable toy space (60
# blocks, 4 amine couplings, at most 2 blocks: 633 terminal molecules) the model's exact probability of every
# molecule can be computed; the figure plots it against the target, before training and after 60
# trajectory-balance steps on a subsampled action space (ρ = 0.2).

# %%
import numpy as np
import torch

from iclr25.rxnflow import (
    RxnFlow,
    TrainConfig,
    distribution_fit,
    enumerate_terminals,
    exact_log_probs,
    parse_reward,
    toy_space,
    train,
)
from iclr25.utils.plotting import show, subplots

torch.set_num_threads(1)
torch.manual_seed(0)
space = toy_space(20, 30, n_other=10, seed=0)
reward = parse_reward("qed")
enum = enumerate_terminals(space, reward)  # every terminal molecule and its reward
model = RxnFlow(space, reward, beta=4.0, seed=0)
target = enum.log_target(4.0)  # log p*(x), normalised over the terminals
before = exact_log_probs(model, enum)
fit_before = distribution_fit(model, enum)
train(model, TrainConfig(steps=60, batch_size=32, rho=0.2, min_sampling=5, beta=4.0), seed=0, show_progress=False)
after = exact_log_probs(model, enum)
fit_after = distribution_fit(model, enum)
print(f"{len(target)} terminal molecules; Pearson r of log p vs log p*: untrained {fit_before.pearson:.2f}, "
      f"trained {fit_after.pearson:.2f}")
print(f"L1 distance to the target: untrained {fit_before.l1:.2f}, trained {fit_after.l1:.2f} (2 = disjoint)")

# %%
fig, ax = subplots(1, 2, size=(3.8, 3.5), layout="constrained", sharex=True, sharey=True)
lim = (target[np.isfinite(target)].min() - 1, target.max() + 1)
for a, lp, name, fit in ((ax[0], before, "untrained", fit_before), (ax[1], after, "after 60 steps", fit_after)):
    ok = np.isfinite(lp) & np.isfinite(target)
    a.scatter(target[ok] / np.log(10), lp[ok] / np.log(10), s=6, alpha=0.5)
    a.plot(np.array(lim) / np.log(10), np.array(lim) / np.log(10), "k--", lw=0.8, label="p = p*")
    a.set(xlabel="target log10 p*(x)", title=f"{name}: r = {fit.pearson:.2f}")
    a.legend(fontsize=8, loc="upper left")
ax[0].set_ylabel("model log10 p(x), exact")
fig.suptitle(f"RxnFlow's exact distribution over {len(target)} toy molecules vs QED^4")
show(fig)
