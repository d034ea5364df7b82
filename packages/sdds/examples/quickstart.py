# %% [markdown]
# # iclr25-sdds quickstart
# The demo's discrete diffusion sampler for the 4x4 critical Ising model, trained with the paper's forward-KL
# objective (fKL w/ MC), is shipped with the package: `load_demo_sampler()` loads it without training (the
# README's Quickstart trains the same sampler from scratch with `train`). Estimate the free energy with
# self-normalised neural importance sampling (SN-NIS), compare with the exact value, then correct the internal
# energy with neural MCMC.

# %%
import jax
import numpy as np

from iclr25.sdds import BETA_CRITICAL, estimate, exact_ising, load_demo_sampler, neural_mcmc

sampler = load_demo_sampler()
energy = sampler.energy  # IsingEnergy(4)
print(sampler.config.objective, sampler.config.n_steps, "steps,", len(sampler.history["loss"]), "epochs trained")

# %% [markdown]
# SN-NIS estimates (with bootstrap standard errors) against the exact values (Kaufman's formula), and the
# sampler's own variational bound, which SN-NIS corrects.

# %%
draws = sampler.sample(2048, key=jax.random.key(1))
est = estimate(sampler, energy, BETA_CRITICAL, 2048, samples=draws)
exact = exact_ising(4, BETA_CRITICAL)
print(f"F/N  = {est.free_energy:.4f} +- {est.free_energy_se:.4f}   exact {exact.free_energy:.4f}"
      f"   variational bound {est.variational_free_energy:.4f}")
print(f"U/N  = {est.internal_energy:.4f} +- {est.internal_energy_se:.4f}   exact {exact.internal_energy:.4f}")
print(f"ESS / M = {est.ess_fraction:.3f}")

# %% [markdown]
# Neural MCMC: independent Metropolis-Hastings with whole diffusion trajectories as proposals (32 chains over the
# same 2048 draws), against the raw draws' internal energy.

# %%
mc = neural_mcmc(sampler, energy, BETA_CRITICAL, n_chains=32, n_steps=63, burn_in=4, samples=draws)
raw_u = float(np.mean(energy(np.asarray(draws.x)))) / energy.n_nodes
print(f"U/N (NMCMC) = {mc.internal_energy:.4f} +- {mc.internal_energy_se:.4f}, acceptance {mc.acceptance_rate:.2f}"
      f"   raw draws {raw_u:.4f}   exact {exact.internal_energy:.4f}")
