# %% [markdown]
# # iclr25-memno quickstart
#
# Simulate Kuramoto-Sivashinsky at low viscosity with ETDRK4, observe it on a coarse 32-point grid, and train
# a memoryless FFNO and a MemNO (S4 memory + FFNO layers) with identical Markovian layers and budget.
# Tiny sizes so that this runs in seconds; `iclr25 memno repro` is the real comparison.

# %%
import torch

from iclr25.memno import evaluate, ks, make_model, mori_zwanzig_toy, train

torch.set_num_threads(1)

# %% [markdown]
# The Mori-Zwanzig motivation on a linear PDE: one past frame reduces the error of the best linear predictor
# of the resolved modes by orders of magnitude.

# %%
mz = mori_zwanzig_toy()
print("linear predictor errors with 0, 1, 2 past frames:", mz.errors)

# %% [markdown]
# KS data (ν = 0.075, 512-point ground truth observed at 32 points), then FFNO vs MemNO.

# %%
data = ks(24, nu=0.075, resolution=32, seed=0, t_final=1.0)
train_set, test_set = data.split(16)
for name in ("ffno", "memno"):
    model = make_model(name, width=8, n_layers=1, modes=8, seed=0)
    train(model, train_set, epochs=2, batch_size=8)
    result = evaluate(model, test_set)
    print(f"{name}: one-step nRMSE {result.nrmse:.4f}, rollout nRMSE {result.nrmse_rollout:.4f}")
