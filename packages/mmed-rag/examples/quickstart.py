# %% [markdown]
# # iclr25-mmed-rag quickstart
# Procedural three-domain data, the paper's gap rule for adaptive context selection, a persistent index,
# and the DPO loss of RAG-PT.

# %%
import numpy as np
import torch

from iclr25.mmed_rag import VectorIndex, dpo_loss, gap_select, generate, to_positive

ds = generate(10, seed=0)  # 10 radiology, pathology and ophthalmology images each
print(len(ds), ds.reports[0])

# %%
cos = np.array([0.82, 0.80, 0.31, 0.30])  # sorted retrieval cosines: keep contexts until the first big drop
print(gap_select(to_positive(cos), gamma=0.1).k)

# %%
index = VectorIndex(8, backend="faiss-flat").add(np.random.default_rng(0).normal(size=(100, 8)))
print(index.search(np.ones(8), k=3).ids)
out = dpo_loss(torch.tensor([-1.0]), torch.tensor([-2.0]), torch.tensor([-1.5]), torch.tensor([-1.5]))
print(float(out.loss), float(out.margins[0]))
