# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Ollivier-Ricci curvature finds the bottleneck edges; certified unlearning removes them
#
# Two methods on one graph:
#
# - **piorf** computes the Ollivier-Ricci curvature of every edge (exact optimal transport between the two
#   endpoints' neighbourhoods). Negative curvature marks bottlenecks: edges between communities.
# - **scalegun** (certified graph unlearning, Yi et al., ICLR 2025) removes edges from a trained linear GNN
#   with a certificate: the model after the request is (ε, δ)-indistinguishable from one retrained without
#   those edges.
#
# On a contextual stochastic block model (3 classes, 70 % of edges inside a class, weak features), we ask whether the most
# negatively curved edges are the inter-class ones, and what unlearning them does to accuracy — against
# unlearning as many random edges.

# %%
import numpy as np

from iclr25 import piorf, scalegun
from iclr25.utils import plotting

g = scalegun.datasets.csbm(600, 2400, 16, 3, seed=0, homophily=0.7, signal=0.15)
edges = g.edges  # (m, 2), u < v
inter = g.y[edges[:, 0]] != g.y[edges[:, 1]]
print(f"{g.adj.shape[0]} nodes, {len(edges)} edges, {inter.mean():.1%} of them between classes")

# %%
edge_index = np.concatenate([edges.T, edges.T[::-1]], axis=1)  # symmetric (2, 2m)
curv = piorf.ollivier_ricci(edge_index, alpha=0.5, n_nodes=g.adj.shape[0])
kappa = {tuple(e): k for e, k in zip(curv.edges.tolist(), curv.edge)}
k_edge = np.array([kappa[tuple(e)] for e in edges.tolist()])
print(f"mean curvature: intra-class {k_edge[~inter].mean():.3f}, inter-class {k_edge[inter].mean():.3f}")
n_remove = len(edges) // 10  # a tenth of the edges
order = np.argsort(k_edge)
bottleneck = edges[order[:n_remove]]
print(f"the {n_remove} most negatively curved edges: {inter[order[:n_remove]].mean():.1%} inter-class "
      f"(base rate {inter.mean():.1%})")


# %%
fig, ax = plotting.subplots(size=(6.0, 3.2))
bins = np.linspace(k_edge.min(), k_edge.max(), 40)
ax.hist(k_edge[~inter], bins=bins, alpha=0.6, label="intra-class edges")
ax.hist(k_edge[inter], bins=bins, alpha=0.6, label="inter-class edges")
ax.axvline(k_edge[order[n_remove - 1]], color="k", ls="--", lw=1, label="removal cut (lowest tenth)")
ax.set(xlabel="Ollivier-Ricci curvature of the edge", ylabel="edges", title="Inter-class edges are the negatively curved ones")
ax.legend()
_ = plotting.show(fig)

# %% [markdown]
# Unlearn them in one certified request, and, on a second model, as many random edges.

# %%
rng = np.random.default_rng(0)
random_edges = edges[rng.choice(len(edges), n_remove, replace=False)]
for name, batch in (("most negatively curved", bottleneck), ("random", random_edges)):
    u = scalegun.CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, epsilon=1.0, delta=1e-4).fit()
    before = u.score(g.test_idx)
    rec = u.unlearn_edges(batch)
    after = u.score(g.test_idx)
    print(f"{name:24s} test accuracy {before:.3f} -> {after:.3f}; bound {max(rec.data_bound):.2e} "
          f"<= budget {rec.budget:.2e}; retrained: {rec.retrained}")

# %% [markdown]
# The most negatively curved tenth of the edges is inter-class well above the base rate. Unlearning it, under
# the certificate's budget, leaves the classifier slightly better off; unlearning as many random edges costs it
# accuracy (one graph and one seed: a demonstration, not a benchmark).
