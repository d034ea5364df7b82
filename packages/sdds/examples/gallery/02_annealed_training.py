# %% [markdown]
# # Annealed training, read from the sampler's history
# The shipped sampler was trained with the forward-KL objective while its temperature was annealed from 4 to the
# critical temperature. Its `history` holds one value per epoch; the figure compares the batch's variational free
# energy with the exact free energy at each epoch's temperature, and shows the effective sample size of the
# importance weights. Nothing is trained or sampled here.

# %%
import numpy as np

from iclr25.sdds import exact_ising, load_demo_sampler
from iclr25.utils.plotting import show, subplots

sampler = load_demo_sampler()
h = {k: np.asarray(v) for k, v in sampler.history.items()}
n = sampler.energy.n_nodes
epoch = np.arange(1, len(h["temperature"]) + 1)
exact = {t: exact_ising(4, 1.0 / t).free_energy for t in np.unique(h["temperature"])}
f_exact = np.array([exact[t] for t in h["temperature"]])
gap = h["free_energy"] / n - f_exact
print(f"{len(epoch)} epochs, T {h['temperature'][0]:.2f} -> {h['temperature'][-1]:.3f}; objective "
      f"{sampler.config.objective}, {sampler.config.n_steps} diffusion steps")
print(f"bound gap F_q/N - F/N over the last 20 epochs: {gap[-20:].mean():.3f} (it is >= 0 in expectation)")
print(f"ESS/M over the last 20 epochs: {h['ess'][-20:].mean():.3f}")

# %%
fig, ax = subplots(1, 2, size=(4.2, 3.2), layout="constrained", sharex=True)
ax[0].plot(epoch, h["free_energy"] / n, lw=1, label="variational F_q/N (batch of 64)")
ax[0].plot(epoch, f_exact, "k--", lw=1, label="exact F/N at the epoch's T")
ax[0].set(ylim=(f_exact.min() - 0.3, f_exact.max() + 1.0), xlabel="epoch", ylabel="free energy per spin",
          title="free energy while annealing")
ax[0].legend(fontsize=8)
ax[1].plot(epoch, h["ess"], lw=1, color="tab:orange")
ax[1].set(xlabel="epoch", ylabel="ESS / M of the batch", title="effective sample size")
fig.suptitle("fKL w/ MC training on the 4x4 Ising model, T: 4 -> T_c")
show(fig)
