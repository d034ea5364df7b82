# %% [markdown]
# # The classical peer: a Markov state model from the same data
#
# Before any generative model, a Markov state model (deeptime's maximum-likelihood MSM on a 40-state grid) is
# what short Prinz trajectories give: here 60 Euler-Maruyama trajectories of 200 frames. Left: the MSM's slowest
# implied timescale against its lag time, the usual Markovianity check, beside the exact value: too fast at
# short lags, where the grid states are not Markovian, and drifting again at long lags, where 200-frame
# trajectories hold few transitions. Right: the correlation function C(N) that the MSM at lag 10 predicts by
# powers of its transition matrix, against the exact one.

# %%
import numpy as np

from iclr25.bopito import exact_reference, fit_msm, simulate
from iclr25.utils.plotting import show, subplots

ref = exact_reference("prinz")
data = simulate("prinz", 60, 200, seed=0).x  # 60 Euler-Maruyama trajectories x 200 frames (500 steps each)
lagtimes = (1, 2, 5, 10, 20, 40)
msms = {tau: fit_msm(data, tau, n_bins=40) for tau in lagtimes}
for tau, m in msms.items():
    print(f"MSM at lag {tau:2d}: slowest implied timescale {m.timescales[0]:6.1f} frames "
          f"(exact {ref.timescales[0]:.1f})")

# %%
lags = np.arange(0, 201, 10)  # multiples of the lag-10 MSM
c_msm = msms[10].correlation(lags)
c_exact = ref.correlation(lags)
print(f"mean |C_MSM(N) - C_exact(N)| over N = 10..200: {np.mean(np.abs(c_msm - c_exact)[1:]):.3f}")

# %%
fig, (ax, ax_c) = subplots(1, 2, size=(4.0, 3.3))
ax.plot(lagtimes, [msms[t].timescales[0] for t in lagtimes], marker="o", label="MSM (40 grid states)")
ax.axhline(ref.timescales[0], color="k", linestyle="--", label="exact")
ax.set(xscale="log", title="Slowest implied timescale", xlabel="MSM lag time τ (frames)",
       ylabel="implied timescale (frames)", ylim=(0, 200))
ax.legend(fontsize=8, loc="lower right")
ax_c.plot(lags, c_exact, color="k", linestyle="--", label="exact")
ax_c.plot(lags, c_msm, marker="o", markersize=3, label="MSM at τ = 10")
ax_c.set(title="Correlation function of x", xlabel="lag N (frames)", ylabel="C(N)")
ax_c.legend(fontsize=8, loc="upper right")
fig.tight_layout()
show(fig)
