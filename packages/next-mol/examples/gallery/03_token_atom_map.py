# %% [markdown]
# # From SELFIES tokens to atoms: the 1D-to-3D link
#
# NExT-Mol hands what its language model learned to the 3D model atom by atom: each heavy atom takes the features
# of the SELFIES token that created it. The figure shows a molecule with its atom numbers and the token-to-atom map
# (`Molecule.token_map`); branch and ring tokens, and the index tokens after them, create no atom.

# %%
import io

import matplotlib.image as mpimg
import numpy as np
from rdkit.Chem.Draw import rdMolDraw2D

from iclr25.next_mol import prepare
from iclr25.utils.plotting import show, subplots

# %% [markdown]
# Paracetamol: `prepare` canonicalises the SMILES, encodes it as SELFIES, decodes it back (the atom order of the 3D
# model) and records which token made each atom. Per-atom LM features are then `M.T @ token_features / M.sum(0)`.

# %%
mol = prepare("CC(=O)Nc1ccc(O)cc1")
M = mol.token_map
print(mol.selfies)
print(f"{len(mol.tokens)} tokens, {mol.n_atoms} heavy atoms; every atom has exactly one token: {bool((M.sum(0) == 1).all())}")
print("tokens that create no atom (branch/ring tokens and their index tokens):", [t for t, row in zip(mol.tokens, M) if row.sum() == 0])

# %%
drawer = rdMolDraw2D.MolDraw2DCairo(360, 300)
drawer.drawOptions().addAtomIndices = True
drawer.DrawMolecule(mol.mol)
drawer.FinishDrawing()
picture = mpimg.imread(io.BytesIO(drawer.GetDrawingText()), format="png")

fig, (ax0, ax1) = subplots(1, 2, size=(4.0, 3.8), layout="constrained", gridspec_kw={"width_ratios": [1, 1.1]})
ax0.imshow(picture)
ax0.set_axis_off()
ax0.set_title("paracetamol, atoms numbered in SELFIES order")
tok, atom = np.nonzero(M)
ax1.scatter(atom, tok, s=40, marker="s", c="tab:blue", label="token created atom")
ax1.set_xticks(range(mol.n_atoms), [f"{a.GetSymbol()}{a.GetIdx()}" for a in mol.mol.GetAtoms()], fontsize=8,
               rotation=90)
ax1.set_yticks(range(len(mol.tokens)), mol.tokens, fontsize=8)
ax1.set(title="token-to-atom map M", xlabel="heavy atom (element, index)", ylabel="SELFIES token (in order)",
        xlim=(-0.5, mol.n_atoms - 0.5), ylim=(len(mol.tokens) - 0.5, -0.5))
ax1.legend(fontsize=8, loc="lower left")
show(fig)
