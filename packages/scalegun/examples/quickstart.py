# %% [markdown]
# # iclr25-scalegun quickstart
#
# Certified graph unlearning (ScaleGUN, ICLR 2025): train a linear model on propagated node embeddings,
# then remove edges, nodes and node features with a certificate instead of retraining.

# %%
import numpy as np

from iclr25.scalegun import CertifiedUnlearner, datasets

g = datasets.csbm(2000, 10000, 16, 4, seed=0)  # contextual SBM: 2000 nodes, 4 classes
u = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, epsilon=1.0, delta=1e-4, audit=True).fit()
print(f"test accuracy {u.score(g.test_idx):.3f}")

# %% [markdown]
# Each request updates the embeddings by a local push, takes one Newton step, and records the bounds.
# `audit=True` also computes the true gradient residual on exactly propagated embeddings.

# %%
rng = np.random.default_rng(0)
for e in g.edges[rng.choice(g.n_edges, 20, replace=False)]:
    u.unlearn_edges(e[None, :])
u.unlearn_nodes([int(g.train_idx[0])])
rec = u.unlearn_features([int(g.train_idx[1])])
print(f"true residual {max(rec.true_residual):.2e} <= data-dependent bound {max(rec.data_bound):.2e} "
      f"<= worst case {rec.worst_case_bound:.2e}; budget {rec.budget:.2e}")
print(f"{u.ledger.n_requests} requests, {u.ledger.n_retrains} retrains, accuracy {u.score(g.test_idx):.3f}")

# %% [markdown]
# The same requests with CGU (exact re-propagation each time) give the same model up to the push error.

# %%
cgu = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, mode="cgu").fit()
for e in g.edges[rng.choice(g.n_edges, 5, replace=False)]:
    cgu.unlearn_edges(e[None, :])
print(f"CGU accuracy {cgu.score(g.test_idx):.3f}; ScaleGUN ledger as JSON: {len(u.ledger.to_json())} chars")
