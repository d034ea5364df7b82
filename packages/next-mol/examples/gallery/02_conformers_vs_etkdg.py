# %% [markdown]
# # DMT conformers against RDKit's ETKDG
#
# NExT-Mol's second step predicts 3D conformers with DMT, a diffusion model over atoms and atom pairs. Here the
# small DMT-mini shipped in the wheel samples conformers of held-out MOSES molecules, scored by COV-R and MAT-R
# against reference ensembles, beside RDKit's ETKDG at the same budget. The figure shows both scores per molecule.

# %%
import numpy as np
import torch
from rdkit import Chem

from iclr25.next_mol import (
    EnsembleSettings,
    cov_mat,
    etkdg_conformers,
    graphs_of,
    load_moses,
    reference_ensembles,
    sample_conformers,
    sanity,
)
from iclr25.next_mol.shipped import load_shipped_dmt
from iclr25.utils.plotting import show, subplots

torch.set_num_threads(1)

# %% [markdown]
# Three test-set molecules of at most 18 heavy atoms (DMT-mini's training range). References: the package's
# pseudo-GEOM recipe at reduced size (12 ETKDG embeddings, MMFF94, 10 kcal/mol window, 0.5 A pruning, at most 3
# conformers). Each method gets 2K conformers for K references, as in the paper; DMT uses its ancestral sampler
# with 50 steps. The references are made from ETKDG + MMFF, which favours ETKDG: over the claims' held-out sets and
# seeds DMT-mini loses to ETKDG (claim dmt-beats-etkdg: does not hold) while staying within 1.5x of its MAT-R
# (dmt-etkdg-parity: holds). Three molecules decide nothing either way.

# %%
smiles = [s for s in load_moses("test", 200) if Chem.MolFromSmiles(s).GetNumHeavyAtoms() <= 18][:3]
ens = reference_ensembles(smiles, EnsembleSettings(n_embed=12, max_confs=3), cache_dir=False)
dmt, how = load_shipped_dmt()
k = 2 * max(e.n_confs for e in ens)
generated = {"DMT-mini (shipped)": sample_conformers(dmt, graphs_of(ens), k, steps=50, seed=0),
             "RDKit ETKDG": [etkdg_conformers(e.molecule, k, seed=0) for e in ens]}
scores = {name: [cov_mat(e.molecule, e.coords, g) for e, g in zip(ens, gens)] for name, gens in generated.items()}
for name, gens in generated.items():
    sane = np.mean([sanity(e.molecule, g).fraction_sane for e, g in zip(ens, gens)])
    mat = np.mean([s.mat_r for s in scores[name]])
    print(f"{name}: mean MAT-R {mat:.2f} A, mean COV-R {np.mean([s.cov_r for s in scores[name]]):.0%}, "
          f"{sane:.0%} of conformers pass the bond/clash checks")

# %%
fig, (ax0, ax1) = subplots(1, 2, size=(4.2, 3.4), layout="constrained")
x = np.arange(len(ens))
for j, (name, sc) in enumerate(scores.items()):
    ax0.bar(x + (j - 0.5) * 0.38, [s.mat_r for s in sc], width=0.36, label=name)
    ax1.bar(x + (j - 0.5) * 0.38, [100 * s.cov_r for s in sc], width=0.36, label=name)
labels = [f"mol {i + 1}\n({e.molecule.n_atoms} heavy atoms)" for i, e in enumerate(ens)]
ax0.set_xticks(x, labels)
ax1.set_xticks(x, labels)
ax0.set(title="MAT-R (lower is better)", ylabel="mean best RMSD to a reference (A)", xlabel="held-out molecule")
ax1.set(title="COV-R at 0.75 A (higher is better)", ylabel="references covered (%)", xlabel="held-out molecule",
        ylim=(0, 119))
ax1.legend(fontsize=8, loc="upper center", ncol=2)
show(fig)
