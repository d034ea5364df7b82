# %% [markdown]
# # What one removal costs: local push vs re-propagation
# ScaleGUN updates the propagated embeddings by a local push, so a removed edge touches only the rows near it;
# CGU re-propagates the whole graph and retraining also refits the model. The figure shows, on a 20,000-node
# power-law graph, the seconds per single-edge request of the three modes and how many embedding rows each
# request changed (the gap in time widens with the graph: the Evidence page times 1M edges).

# %%
import numpy as np

from iclr25.scalegun import CertifiedUnlearner, datasets
from iclr25.utils.plotting import show, subplots

g = datasets.powerlaw(20000, 200000, 32, 5, seed=0)  # Chung-Lu graph, 5 classes, 10 % training nodes
rng = np.random.default_rng(0)
requests = g.edges[rng.choice(g.n_edges, 20, replace=False)]
seconds, rows = {}, {}
for mode, n_req in (("scalegun", 20), ("cgu", 20), ("retrain", 5)):  # retraining: 5 requests are enough
    u = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, mode=mode, seed=0, torch_threads=1).fit()
    recs = [u.unlearn_edges(e[None, :]) for e in requests[:n_req]]
    seconds[mode] = np.array([r.total_s for r in recs])
    rows[mode] = np.array([r.rows_changed for r in recs])
    print(f"{mode:8s}: median {1e3 * np.median(seconds[mode]):6.1f} ms per request, median rows changed "
          f"{int(np.median(rows[mode])):5d} of {g.n_nodes}; accuracy {u.score(g.test_idx):.3f}")

# %%
labels = {"scalegun": "ScaleGUN\n(local push)", "cgu": "CGU\n(exact)", "retrain": "retrain\n(exact + refit)"}
fig, ax = subplots(1, 2, size=(4.0, 3.3), layout="constrained")
for i, mode in enumerate(seconds):
    x = i + np.random.default_rng(i).uniform(-0.12, 0.12, len(seconds[mode]))
    ax[0].scatter(x, 1e3 * seconds[mode], s=12)
    ax[1].scatter(x, rows[mode], s=12)
for a in ax:
    a.set_xticks(range(3), [labels[m] for m in seconds])
    a.tick_params(axis="x", labelsize=8)
    a.set_xlabel("mode")
ax[0].set(yscale="log", ylabel="milliseconds per request", title="time per edge removal")
ax[1].set(yscale="log", ylabel="embedding rows changed", title="rows touched")
fig.suptitle(f"Single-edge requests on a {g.n_nodes:,}-node power-law graph ({g.n_edges:,} edges)")
show(fig)
