# %% [markdown]
# # iclr25-rxnflow quickstart
# RxnFlow assembles molecules from building blocks with reaction templates. Here: a toy library of built-in
# acids/sulfonyl chlorides/aldehydes/isocyanates and amines, 4 amine-coupling templates, at most 2 blocks, QED reward.

# %%
import torch

from iclr25.rxnflow import (
    RxnFlow,
    TrainConfig,
    distribution_fit,
    enumerate_terminals,
    parse_reward,
    toy_space,
    train,
    verify_route,
)

torch.set_num_threads(1)
space = toy_space(20, 30, n_other=10, seed=0)
reward = parse_reward("qed")
print(len(space.blocks), "blocks,", len(space.protocols), "template orientations")

# %% [markdown]
# Train with trajectory balance on a subsampled action space (ρ = 0.2), then check the exact terminal
# distribution against the enumerated target p*(x) ∝ QED(x)^β.

# %%
enum = enumerate_terminals(space, reward)
model = RxnFlow(space, reward, beta=4.0)
res = train(model, TrainConfig(steps=80, batch_size=32, rho=0.2, min_sampling=5, beta=4.0), show_progress=False)
print(f"{res.steps_per_s:.1f} steps/s; fit r = {distribution_fit(model, enum).pearson:.3f}")

# %%
for s in model.sample(5, seed=1):
    print(f"QED {s.reward:.3f}  {s.smiles}  route replays: {verify_route(s.route)}")
