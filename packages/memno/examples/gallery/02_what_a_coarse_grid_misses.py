# %% [markdown]
# # What a 32-point grid misses of Kuramoto-Sivashinsky
#
# The paper's setting: KS is solved on 512 points (ETDRK4) but a model only sees it on a coarse grid. The lower the
# viscosity `nu`, the more energy sits in modes the coarse grid cannot resolve: the regime where the paper finds
# memory helps most. The figure shows one trajectory at full and at observed resolution, and the energy spectrum per `nu`.

# %%
import numpy as np
import torch

from iclr25.memno import ks_initial_condition, observe, solve_ks
from iclr25.utils.plotting import show, subplots

torch.set_num_threads(1)

# %% [markdown]
# Eight trajectories per viscosity on `[0, 64)`, started after a burn-in of 5 time units (developed chaos), saved
# every 0.1 up to T = 2.5 (the paper's window). `observe(..., 32)` sub-samples to 32 points, as the data sets of
# `ks(...)` do (aliasing included).

# %%
u0 = ks_initial_condition(8, n_x=512, length=64.0, seed=0)
trajs = {nu: solve_ks(u0, nu=nu, length=64.0, t_burn=5.0) for nu in (0.3, 0.15, 0.075)}
low = trajs[0.075]
seen = observe(low, 32)
cut = 16  # the 32-point grid resolves wavenumbers m <= 16 (of 2 pi m / L)
for nu, tr in trajs.items():
    energy = (np.abs(np.fft.rfft(tr.u, axis=-1)) ** 2).mean(axis=(0, 1))
    print(f"nu = {nu}: {energy[cut + 1:].sum() / energy[1:].sum():.1%} of the energy is above the 32-point cutoff")

# %%
fig, axes = subplots(1, 3, size=(3.5, 3.2), layout="constrained")
lim = np.abs(low.u[0]).max()
for ax, u, title in ((axes[0], low.u[0], "truth, 512 points (nu = 0.075)"),
                     (axes[1], seen.u[0], "what the model sees, 32 points")):
    im = ax.imshow(u, aspect="auto", cmap="RdBu_r", vmin=-lim, vmax=lim, extent=(0, 64, low.t[-1], 0),
                   interpolation="nearest")
    ax.set(title=title, xlabel="x", ylabel="time t")
    ax.grid(False)
    fig.colorbar(im, ax=ax, label="u(x, t)", shrink=0.9)
m = np.arange(257)
for nu, tr in trajs.items():
    energy = (np.abs(np.fft.rfft(tr.u, axis=-1)) ** 2).mean(axis=(0, 1))
    axes[2].semilogy(m[1:], energy[1:] / energy[1:].sum(), label=f"nu = {nu}")
axes[2].axvspan(cut + 0.5, 256, color="0.85", label="lost by the 32-point grid")
axes[2].set(title="energy spectrum (time mean)", xlabel="wavenumber m (2 pi m / L)", ylabel="energy share",
            xlim=(0, 64), ylim=(1e-9, 1))
axes[2].legend(fontsize=8, loc="lower left")
show(fig)
