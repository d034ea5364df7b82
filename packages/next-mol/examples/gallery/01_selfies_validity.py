# %% [markdown]
# # SELFIES: validity is free, the distribution is learned
#
# NExT-Mol's language model writes SELFIES, whose every token string decodes to a valid molecule. The figure shows
# validity for SMILES and SELFIES (random token strings and a tiny LM trained on each), and why validity is not the
# goal: random SELFIES are valid too, but they are tiny fragments; the LM's molecules move toward the training set.

# %%
import numpy as np
import torch
from rdkit import Chem, RDLogger

from iclr25.next_mol import (
    SelfiesTokenizer,
    SmilesTokenizer,
    canonical_smiles,
    decode_to_smiles,
    fit_lm,
    load_moses,
    random_token_strings,
    sample_lm,
    to_selfies_corpus,
)
from iclr25.utils.plotting import show, subplots

torch.set_num_threads(1)
RDLogger.DisableLog("rdApp.*")  # RDKit reports every SMILES it cannot parse

# %% [markdown]
# 300 molecules of the built-in MOSES subset; per representation, 200 random token strings (uniform tokens, lengths
# from the corpus) and 200 samples of a 1-layer LM (width 32) trained for 60 steps: the same tiny budget for both,
# so the SMILES LM is far from its trained validity (the paper's SMILES baselines are much better trained), and
# the SELFIES LM has only begun to learn the molecules' size.

# %%
train = load_moses("train", 300)
corpora = {"SMILES": [canonical_smiles(s) for s in train], "SELFIES": to_selfies_corpus(train)}
validity, molecules = {}, {}
for kind, corpus in corpora.items():
    tok = (SelfiesTokenizer() if kind == "SELFIES" else SmilesTokenizer()).fit(corpus)
    rand = decode_to_smiles(random_token_strings(tok, corpus, 200, seed=0), kind.lower())
    lm = fit_lm(kind.lower(), train, steps=60, d_model=32, n_layers=1, batch_size=32, lr=3e-3, seed=0)
    samp = decode_to_smiles(sample_lm(lm.model, lm.tokenizer, 200, seed=0), kind.lower())
    validity[kind] = [np.mean([s is not None for s in x]) for x in (rand, samp)]
    molecules[kind] = {"random tokens": [s for s in rand if s], "LM samples": [s for s in samp if s]}
    print(f"{kind}: valid {validity[kind][0]:.0%} of random strings, {validity[kind][1]:.0%} of LM samples")


def heavy_atoms(smiles):
    return [Chem.MolFromSmiles(s).GetNumHeavyAtoms() for s in smiles]


# %%
fig, (ax0, ax1) = subplots(1, 2, size=(4.2, 3.4), layout="constrained")
x = np.arange(2)
for k, (kind, v) in enumerate(validity.items()):
    ax0.bar(x + (k - 0.5) * 0.38, 100 * np.array(v), width=0.36, label=kind)
ax0.set_xticks(x, ["random token strings", "tiny LM, 60 steps"])
ax0.set(title="valid molecules", ylabel="valid (% of 200 strings)", xlabel="generator", ylim=(0, 125))
ax0.legend(fontsize=8, loc="upper center", ncol=2)
bins = np.arange(0, 41, 2)
for name, smi, style in (("MOSES training set", train, "-"),
                         ("SELFIES LM samples", molecules["SELFIES"]["LM samples"], "--"),
                         ("random SELFIES", molecules["SELFIES"]["random tokens"], ":")):
    ax1.hist(heavy_atoms(smi), bins=bins, density=True, histtype="step", ls=style, lw=1.6, label=name)
ax1.set(title="size of the valid molecules", xlabel="heavy atoms per molecule", ylabel="share of molecules (density)")
ax1.legend(fontsize=8)
show(fig)
