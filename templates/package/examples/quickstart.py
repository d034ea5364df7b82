# %% [markdown]
# # iclr25-{{slug}} quickstart

# %%
import numpy as np

from iclr25.{{module}} import example

# %%
print(example(np.arange(5.0)))
