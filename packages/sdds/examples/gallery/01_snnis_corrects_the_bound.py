# %% [markdown]
# # Importance weights turn a sampler into an unbiased estimator
# A trained diffusion sampler only approximates the Boltzmann distribution: its own free energy is a variational
# bound, above the exact value. Self-normalised neural importance sampling (SN-NIS) reweights the same draws;
# the figure shows its free-energy estimate against the exact value (Kaufman's formula) for the shipped sampler of
# the 4x4 Ising model at the critical temperature. With few draws M, log Ẑ is biased low (F/N too high, towards the
# bound); the bias and the error bars shrink as M grows.

# %%
import jax

from iclr25.sdds import BETA_CRITICAL, Samples, estimate, exact_ising, load_demo_sampler
from iclr25.utils.plotting import show, subplots

sampler = load_demo_sampler()  # fKL w/ MC, 16 diffusion steps, trained 200 epochs (shipped, no training here)
energy = sampler.energy
draws = sampler.sample(2048, key=jax.random.key(1))
exact = exact_ising(4, BETA_CRITICAL)

sizes = [64, 128, 256, 512, 1024, 2048]
ests = [estimate(sampler, energy, BETA_CRITICAL, m, samples=Samples(draws.x[:m], draws.log_q[:m], draws.log_aux[:m]),
                 seed=0) for m in sizes]
for m, e in zip(sizes, ests):
    if m in (128, 512, 2048):
            print(f"M = {m:4d}: F/N = {e.free_energy:.4f} +- {e.free_energy_se:.4f}, ESS/M = {e.ess_fraction:.3f}")
print(f"exact F/N = {exact.free_energy:.4f}; the sampler's variational bound {ests[-1].variational_free_energy:.4f}")

# %%
fig, ax = subplots(1, 1, size=(5.0, 3.4))
ax.errorbar(sizes, [e.free_energy for e in ests], yerr=[e.free_energy_se for e in ests], fmt="o-", capsize=3,
            label="SN-NIS estimate (± bootstrap SE)")
ax.plot(sizes, [e.variational_free_energy for e in ests], "s--", color="tab:gray",
        label="variational bound (no weights)")
ax.axhline(exact.free_energy, color="k", lw=1, label="exact (Kaufman)")
ax.set_xscale("log", base=2)
ax.set(xlabel="number of sampler draws M", ylabel="free energy per spin F/N",
       title="4x4 Ising at T_c: SN-NIS vs the sampler's bound")
ax.legend(fontsize=8, loc="center right")
show(fig)
