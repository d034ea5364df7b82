# %% [markdown]
# # Where the long-range edges go: PIORF's three partner rules
# PIORF joins each bottleneck node to one partner picked from the current velocity field. The package has the
# three readings of the paper: the reference code's largest projected-velocity difference (the default), the
# paper text's fastest node, and the abstract's largest velocity gradient. The figure draws the edges each rule
# adds on the same mesh and the same (analytic, wake-like) velocity field.

# %%
import numpy as np

from iclr25.piorf import PARTNER_RULES, channel_mesh, ollivier_ricci, rewire
from iclr25.utils.plotting import show, subplots

mesh = channel_mesh(16.0, 4.0, (3.0, 2.1), 0.5, h_min=0.2, h_max=0.8, grade=2.0, seed=0)
curv = ollivier_ricci(mesh.edge_index, alpha=0.5)
x, y = mesh.pos.T
velocity = np.stack([1.0 - np.exp(-(y - 2.1) ** 2 / 0.3) * (x > 3.0), 0.3 * np.sin(2 * x)], axis=1)
speed = np.linalg.norm(velocity, axis=1)
rules = {rule: rewire(mesh.edge_index, curv.node, velocity, ratio=0.03, partner=rule, pos=mesh.pos, seed=0)
         for rule in PARTNER_RULES}
for rule, rw in rules.items():
    hops = np.hypot(*(mesh.pos[rw.added[:, 0]] - mesh.pos[rw.added[:, 1]]).T)
    print(f"{rule:18s}: partners {sorted(set(rw.added[:, 1].tolist()))}, edge length {hops.mean():.1f} on average")

# %%
fig, ax = subplots(len(rules) + 1, 1, size=(8.0, 2.0), layout="constrained", sharex=True)
tpc = ax[0].tripcolor(x, y, mesh.cells, speed, shading="gouraud", cmap="viridis")
fig.colorbar(tpc, ax=list(ax), label="speed |v| (top panel)", shrink=0.22, anchor=(0.0, 1.0))
ax[0].set(title="the velocity field the rules read")
for a, (rule, rw) in zip(ax[1:], rules.items()):
    a.triplot(x, y, mesh.cells, lw=0.3, color="0.7")
    for i, (s, t) in enumerate(rw.added):
        a.plot(x[[s, t]], y[[s, t]], color="tab:red", lw=1.2, label="added edge" if i == 0 else None)
    a.set(title=f"partner = {rule!r}")
for a in ax:
    a.scatter(x[rules["speed"].bottleneck], y[rules["speed"].bottleneck], s=16, color="tab:orange", zorder=3,
              label="bottleneck node")
    a.set(aspect="equal", ylabel="y (channel units)")
    a.grid(False)
    a.legend(loc="upper right", fontsize=8, framealpha=0.8, frameon=True)
ax[-1].set_xlabel("x (channel units)")
fig.suptitle("PIORF's added edges under its three partner rules (3 % of nodes)")
show(fig)
