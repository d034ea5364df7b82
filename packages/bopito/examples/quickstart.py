# %% [markdown]
# # iclr25-bopito quickstart
# The exact Prinz reference, a Boltzmann prior, and BoPITO sampling at a lag far beyond its training lags.

# %%
import numpy as np
import torch

from iclr25.bopito import exact_reference, fit_model, sample, simulate

torch.set_num_threads(1)  # tiny networks: one thread is fastest on a busy machine
ref = exact_reference("prinz")
print(f"exact slowest implied timescale: {ref.timescales[0]:.1f} frames")

# %%
data = simulate("prinz", 50, 120, seed=0)  # 50 trajectories x 120 frames, Euler-Maruyama h = 1e-5
prior = fit_model("bg", data, steps=200, width=32).model
bopito = fit_model("bopito", data, prior=prior, max_lag=100, lambda_hat=0.994, steps=200, width=32).model

# %%
x = sample(bopito, np.full(500, 0.75), 5000, steps=50)  # lag 5000 from x0 = 0.75
print(f"W1(BoPITO at lag 5000, Boltzmann) = {ref.w1_to_boltzmann(x[0]):.3f}")
