# %% [markdown]
# # New building blocks, no retraining
# RxnFlow embeds every building block from its fingerprint, so blocks added after training enter the action space
# at once. A policy trained briefly on a 60-block toy library (25 trajectory-balance steps: enough to see it)
# gets 20 amines it never saw; the figure compares their first-step probabilities with the known amines' and
# counts how often sampled molecules use them.

# %%
import numpy as np
import torch

from iclr25.rxnflow import RxnFlow, TrainConfig, builtin_blocks, toy_space, train, verify_route
from iclr25.utils.plotting import show, subplots

torch.set_num_threads(1)
torch.manual_seed(0)
space = toy_space(20, 30, n_other=10, seed=0)  # 20 electrophiles, 30 amines, 10 others; 4 amine couplings
model = RxnFlow(space, "qed", beta=4.0, seed=0)
train(model, TrainConfig(steps=25, batch_size=32, rho=0.2, min_sampling=5, beta=4.0), seed=0, show_progress=False)

known = list(space.blocks.smiles)
new = [s for s in builtin_blocks(kinds=["amine"], seed=0).smiles if s not in set(known)][:20]
bigger = model.with_blocks(new)  # the same trained policy over 80 blocks
p_first = np.exp(bigger.first_block_log_probs())
p_known_amines, p_new = p_first[20:50], p_first[len(known):]
print(f"mean first-block probability: known amines {p_known_amines.mean():.4f}, new amines {p_new.mean():.4f}")


# %%
def blocks_of(route: dict) -> list[str]:
    """The building blocks (leaves) of a synthesis route."""
    kids = route.get("reactants", [])
    return [route["smiles"]] if not kids else [b for k in kids for b in blocks_of(k)]


samples = bigger.sample(200, seed=1)
uses_new = np.array([any(b in set(new) for b in blocks_of(s.route)) for s in samples])
replays = np.mean([bool(verify_route(s.route)) for s in samples if s.valid])
print(f"{uses_new.mean():.0%} of 200 samples use a new block; routes replay: {replays:.0%}")
print(f"mean QED: with a new block {np.mean([s.reward for s, u in zip(samples, uses_new) if u]):.3f}, "
      f"without {np.mean([s.reward for s, u in zip(samples, uses_new) if not u]):.3f}")

# %%
fig, ax = subplots(1, 2, size=(4.0, 3.2), layout="constrained")
jitter = np.random.default_rng(0).uniform(-0.15, 0.15, size=50)
ax[0].scatter(jitter[:30], p_known_amines, s=14)
ax[0].scatter(1 + jitter[30:], p_new, s=14, color="tab:orange")
ax[0].hlines([p_known_amines.mean(), p_new.mean()], [-0.3, 0.7], [0.3, 1.3], color="k", lw=1.5)
ax[0].set_xticks([0, 1], ["known (30)", "added after\ntraining (20)"])
ax[0].set(yscale="log", xlabel="amine block", ylabel="first-step probability", title="policy over blocks (bar: mean)")
share_lib = len(new) / (len(new) + 30)
ax[1].bar(["new share of\nthe amines", "samples using\na new block"], [share_lib, uses_new.mean()],
          color=["0.6", "tab:orange"])
ax[1].set(ylabel="fraction", xlabel="library vs samples", title="new blocks in 200 samples")
fig.suptitle("Blocks added after training are used at once")
show(fig)
