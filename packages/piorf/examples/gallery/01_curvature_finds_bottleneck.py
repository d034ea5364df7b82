# %% [markdown]
# # Ollivier-Ricci curvature finds the mesh bottleneck
# PIORF rewires at the nodes of lowest Ollivier-Ricci curvature. On a cylinder mesh graded towards the disc,
# those nodes sit where the fine rings around the cylinder meet the coarse background: the figure shows the node
# curvature over the mesh and against the distance from the cylinder.

# %%
import numpy as np

from iclr25.piorf import channel_mesh, ollivier_ricci
from iclr25.utils.plotting import show, subplots

center = (3.0, 2.1)
mesh = channel_mesh(16.0, 4.0, center, 0.5, h_min=0.2, h_max=0.8, grade=2.0, seed=0)
curv = ollivier_ricci(mesh.edge_index, alpha=0.5)  # exact curvature of every edge, node = mean over its edges
bottleneck = curv.bottleneck(ratio=0.03)  # the paper's 3 % of nodes, most negative first
dist = np.hypot(*(mesh.pos - center).T)
print(f"{mesh.n_nodes} nodes; node curvature in [{curv.node.min():.3f}, {curv.node.max():.3f}]")
print(f"bottleneck nodes {bottleneck.tolist()}: curvature {np.round(curv.node[bottleneck], 3).tolist()}, "
      f"{dist[bottleneck].min():.2f}-{dist[bottleneck].max():.2f} from the cylinder centre")

# %% [markdown]
# Left: node curvature over the mesh (negative = tree-like, where messages squeeze through few edges).
# Right: the same values against the distance from the cylinder centre; the bottleneck is the ring of
# transition, not the cylinder surface itself.

# %%
fig, ax = subplots(1, 2, size=(4.8, 3.0), width_ratios=[1.6, 1.0], layout="constrained")
x, y = mesh.pos.T
tpc = ax[0].tripcolor(x, y, mesh.cells, curv.node, shading="gouraud", cmap="coolwarm_r",
                      vmin=-np.abs(curv.node).max(), vmax=np.abs(curv.node).max())
ax[0].triplot(x, y, mesh.cells, lw=0.3, color="k", alpha=0.3)
ax[0].scatter(x[bottleneck], y[bottleneck], s=30, facecolor="none", edgecolor="k", lw=1.2, label="bottleneck (3 %)")
ax[0].set(aspect="equal", xlabel="x (channel units)", ylabel="y (channel units)", title="node curvature on the mesh")
ax[0].grid(False)
ax[0].legend(loc="lower right", fontsize=8)
fig.colorbar(tpc, ax=ax[0], label="node curvature", shrink=0.7)
ax[1].scatter(dist, curv.node, s=8, color="0.5", label="all nodes")
ax[1].scatter(dist[bottleneck], curv.node[bottleneck], s=30, color="tab:red", label="bottleneck")
ax[1].set(xlabel="distance from cylinder centre", ylabel="node curvature", title="curvature vs distance")
ax[1].legend(fontsize=8)
fig.suptitle("PIORF's bottleneck: lowest Ollivier-Ricci curvature (alpha = 0.5)")
show(fig)
