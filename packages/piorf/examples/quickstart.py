# %% [markdown]
# # iclr25-piorf quickstart
# Ollivier-Ricci curvature of a graded cylinder mesh, PIORF rewiring at its bottleneck nodes, and the
# over-squashing diagnostics before and after.

# %%
import numpy as np

from iclr25.piorf import channel_mesh, effective_resistance, ollivier_ricci, rewire, sdrf, spectral_gap

mesh = channel_mesh(16.0, 4.0, (3.0, 2.1), 0.5, h_min=0.2, h_max=0.8, grade=2.0)
curv = ollivier_ricci(mesh.edge_index, alpha=0.5)
print(f"{mesh.n_nodes} nodes, edge curvature in [{curv.edge.min():.3f}, {curv.edge.max():.3f}]")

# %%
x, y = mesh.pos.T
velocity = np.stack([1.0 - np.exp(-(y - 2.1) ** 2 / 0.3) * (x > 3.0), 0.3 * np.sin(2 * x)], axis=1)
for partner in ("feature-difference", "speed", "gradient"):
    rw = rewire(mesh.edge_index, curv.node, velocity, ratio=0.03, partner=partner, pos=mesh.pos)
    print(partner, rw.n_added, "edges; spectral gap", round(spectral_gap(mesh.edge_index), 5), "->",
          round(spectral_gap(rw.edge_index), 5), "; resistance from S",
          round(effective_resistance(mesh.edge_index, rw.bottleneck), 3), "->",
          round(effective_resistance(rw.edge_index, rw.bottleneck), 3))

# %%
print("SDRF adds", sdrf(mesh.edge_index, loops=10).n_added, "edges")
