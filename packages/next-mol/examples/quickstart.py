# %% [markdown]
# # iclr25-next-mol quickstart
#
# NExT-Mol in three pieces: a SELFIES language model (always-valid 1D molecules), pseudo-GEOM reference
# conformers, and DMT, the relational-attention diffusion model that predicts conformers. Toy sizes so that this
# runs in seconds; `iclr25 next-mol repro` is the real comparison.

# %%
import torch

from iclr25.next_mol import (
                             EnsembleSettings,
                             cov_mat,
                             decode_to_smiles,
                             fit_lm,
                             graphs_of,
                             load_moses,
                             prepare,
                             reference_ensembles,
                             sample_conformers,
                             sample_lm,
)
from iclr25.next_mol.shipped import load_shipped_dmt

torch.set_num_threads(1)

# %% [markdown]
# A tiny SELFIES LM trained for a few seconds already decodes to valid molecules only.

# %%
lm = fit_lm("selfies", load_moses("train", 300), steps=30, d_model=32, n_layers=1, batch_size=32, lr=3e-3)
smiles = decode_to_smiles(sample_lm(lm.model, lm.tokenizer, 20), "selfies")
print("valid:", sum(s is not None for s in smiles), "/ 20;", smiles[:3])

# %% [markdown]
# Each SELFIES token maps to the heavy atom it created: the map of the 1D-to-3D transfer.

# %%
mol = prepare("CC(=O)Nc1ccc(O)cc1")
print(mol.tokens, mol.token_map.sum(0))

# %% [markdown]
# Reference ensembles (ETKDGv3 + MMFF + energy window + RMSD pruning), then conformers from the small trained
# DMT-mini shipped in the wheel (pickle-free `.npz`; how it was made is in `how`), and COV/MAT against the
# references. A DMT trained for seconds would write exploded conformers; `iclr25.next_mol.shipped` has the recipe.

# %%
ens = reference_ensembles(["CC(=O)Nc1ccc(O)cc1", "CCOC(=O)c1ccccc1"], EnsembleSettings(n_embed=6, max_confs=3))
dmt, how = load_shipped_dmt()
gen = sample_conformers(dmt, graphs_of(ens), 4, steps=50)
print(how["command"])
print(cov_mat(ens[0].molecule, ens[0].coords, gen[0]))
