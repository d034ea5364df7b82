# %% [markdown]
# # Long lags: the Boltzmann prior keeps BoPITO unbiased
#
# ITO and BoPITO learn the transition density p(x_N | x_0, N) of the Prinz potential from 100 trajectories of
# 200 frames, with lags up to N_max = 100. At lag 10 both match the exact density; at lag 5000, 50× beyond
# N_max, ITO has nothing to go on, while BoPITO's weight λ̂^N has switched the dynamic score off and its samples
# come from the Boltzmann prior. The figure shows both models' samples against the exact density at each lag.
# Small networks (width 48) trained for 500 steps: enough to see the effect, not the paper's accuracy.

# %%
import numpy as np
import torch

from iclr25.bopito import exact_reference, fit_model, sample
from iclr25.utils.plotting import show, subplots

torch.set_num_threads(1)  # tiny networks: one thread is fastest
ref = exact_reference("prinz")  # exact grid reference (SqRA generator of the Prinz potential)
data = ref.sample_trajectories(100, 200, seed=0)  # 100 trajectories x 200 frames of the exact grid dynamics
print(f"slowest implied timescale {ref.timescales[0]:.0f} frames; training lags up to 100 frames")

# %% [markdown]
# The Boltzmann prior (an equilibrium score model), ITO, and BoPITO = frozen prior + λ̂^N × dynamic score, all
# with the same size, data and budget.

# %%
kw = dict(width=48, batch_size=256, steps=500, box=((-1.2, 1.2),))
prior = fit_model("bg", data, seed=0, **kw).model
ito = fit_model("ito", data, max_lag=100, seed=1, **kw).model
bopito = fit_model("bopito", data, prior=prior, max_lag=100, lambda_hat=0.994, seed=1, **kw).model

# %% [markdown]
# Samples from x_0 = 0.75 at lag 10 (inside the training lags) and 5000, against the exact transition density.

# %%
x0 = np.full(600, 0.75)
x, dx = ref.axes[0], float(ref.edges[0][1] - ref.edges[0][0])
start = np.searchsorted(ref.edges[0], 0.75) - 1  # the grid cell of x_0
fig, axes = subplots(1, 2, size=(4.0, 3.2), sharey=True)
for ax, lag in zip(axes, (10, 5000)):
    exact = ref.propagator(lag)[start] / dx  # p(x_N | x_0) on the grid
    exact_draws = ref.sample_transition(x0, lag, seed=3)[:, 0]
    ax.plot(x, exact, color="k", linewidth=1.5, label="exact")
    for name, model in (("ITO", ito), ("BoPITO", bopito)):
        s = sample(model, x0, lag, steps=50, seed=2)[0, :, 0]
        w1 = float(np.mean(np.abs(np.sort(s) - np.sort(exact_draws))))  # W1 between equal-size samples
        ax.hist(s, bins=48, range=(-1.2, 1.2), density=True, histtype="step", linewidth=1.5,
                label=f"{name} (W1 {w1:.3f})")
        print(f"lag {lag:5d}  {name:6s} W1 to exact = {w1:.3f}")
    ax.set(title=f"lag N = {lag} frames", xlabel="x (Prinz coordinate)")
    ax.legend(fontsize=8, loc="upper left")
axes[0].set_ylabel("p(x_N | x_0 = 0.75)")
fig.suptitle("Transition density inside (left) and far beyond (right) the training lags")
fig.tight_layout()
show(fig)
