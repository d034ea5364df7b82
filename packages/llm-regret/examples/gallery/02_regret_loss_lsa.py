# %% [markdown]
# # The regret-loss turns linear self-attention into OGD
#
# The paper's unsupervised regret-loss trains a sequence model to play well on loss sequences without any
# expert policy to imitate. Its theorem: for one layer of linear self-attention, Gaussian losses and the
# squared loss, the minimiser plays x_t = −c Σ_{s<t} ℓ_s, i.e. online gradient descent (FTRL), so the learned
# matrix A = bV is −c·I. Left: the regret-loss over training against the best possible scalar c (OGD with the
# best step size, found on a grid); right: the learned A, with d = 4 actions. 800 Adam steps of batch 512.

# %%
import numpy as np
import torch

from iclr25.llm_regret import RegretLossConfig, lsa_structure, train_regret_loss
from iclr25.llm_regret.regret_loss import sequence_regret
from iclr25.utils.plotting import show, subplots

torch.set_num_threads(1)
cfg = RegretLossConfig(d=4, T=10, model="lsa", head="ball", distribution="gaussian", h="square", steps=800,
                       batch=512)
res = train_regret_loss(cfg, seed=0, device="cpu", progress_desc="regret-loss")
st = lsa_structure(res.model)
print(f"A = bV ≈ −c I with c = {st.c:.3f}; relative distance ‖A + cI‖/‖A‖ = {st.rel_distance:.3f}; "
      f"extra terms ‖w‖/|b| = {st.w_over_b:.3f}, ‖v_c‖/‖V‖ = {st.vc_over_V:.3f}")

# %% [markdown]
# The baseline: OGD's policy −c Σ_{s<t} ℓ_s with the best c of a grid, scored on fresh losses like the model.

# %%
ell = torch.randn(8192, cfg.T, cfg.d, generator=torch.Generator().manual_seed(10_000), dtype=torch.float64)
cums = torch.cat([torch.zeros_like(ell[:, :1]), torch.cumsum(ell, 1)[:, :-1]], 1)  # Σ_{s<t} ℓ_s
with torch.no_grad():
    trained = float((sequence_regret(ell, res.model(ell), head="ball") ** 2).mean())
    grid = {c: float((sequence_regret(ell, -c * cums, head="ball") ** 2).mean()) for c in np.linspace(0.02, 1, 50)}
c_best = min(grid, key=grid.get)
print(f"regret-loss on fresh losses: trained LSA {trained:.3f}, best OGD (c = {c_best:.2f}) {grid[c_best]:.3f}")

# %%
fig, (ax, ax_a) = subplots(1, 2, size=(4.0, 3.3))
ax.plot(np.arange(1, cfg.steps + 1), res.losses, color="C0", linewidth=0.8, alpha=0.6, label="LSA, per batch")
ax.axhline(grid[c_best], color="k", linestyle="--", label=f"best OGD step c = {c_best:.2f}")
ax.set(xscale="log", title="Regret-loss during training", xlabel="Adam step", ylabel="mean squared regret",
       ylim=(0, None))
ax.legend(fontsize=8, loc="upper right")
lim = float(np.abs(st.A).max())
im = ax_a.imshow(st.A, cmap="RdBu_r", vmin=-lim, vmax=lim)
fig.colorbar(im, ax=ax_a, label="entry of A = bV")
for (i, j), v in np.ndenumerate(st.A):
    ax_a.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8, color="w" if abs(v) > lim / 2 else "k")
ax_a.set(title=f"Learned A ≈ −{st.c:.2f} I", xlabel="action j", ylabel="action i",
         xticks=range(cfg.d), yticks=range(cfg.d))
ax_a.grid(False)
fig.tight_layout()
show(fig)
