# %% [markdown]
# # Reading the image or copying the report?
#
# RAG-PT targets a failure of retrieval-augmented VLMs: answering from the retrieved report instead of the image.
# Here each test question gets one report that states the asked finding as present or as absent, whatever the image
# shows. The figure shows P(yes) by what the report says, for images with and without the finding and for a pure
# noise image: a model that reads the image separates the lines; a model that copies follows the report.

# %%
import numpy as np
import torch

from iclr25.mmed_rag import load_system, make_report, noise_images, question, vqa_items, yes_probability
from iclr25.utils.plotting import show, subplots

torch.set_num_threads(1)

# %% [markdown]
# The trained system shipped in the wheel: its tiny VLM after supervised fine-tuning (SFT, the reference model) and
# after RAG-PT (DPO on preference pairs mined from the SFT model's failures). 40 fresh test images per domain, 4
# questions each, each asked twice: with a report saying "present" and with one saying "absent" (the other three
# findings as the image shows them).

# %%
trained = load_system()
test = trained.test_split(40, seed=0)
img, finding, answer = vqa_items(test)
rng = np.random.default_rng(0)
items = [(i, f, a, said) for i, f, a in zip(img, finding, answer) for said in (0, 1)]
contexts, questions = [], []
for i, f, _, said in items:
    stated = test.labels[i].copy()
    stated[f] = said
    contexts.append([make_report(int(test.domains[i]), stated, rng=rng)])
    questions.append(question(int(test.domains[i]), int(f)))
images = test.images[[i for i, *_ in items]]
truth, said = np.array([a for _, _, a, _ in items]), np.array([s for *_, s in items])
p_yes = {}
for name, model in (("SFT", trained.sft), ("RAG-PT", trained.rag_pt)):
    p_yes[name] = {"image shows the finding": yes_probability(model, images, contexts, questions),
                   "noise image": yes_probability(model, noise_images(images.shape, seed=0), contexts, questions)}
    real = p_yes[name]["image shows the finding"]
    follows = np.mean((real > 0.5) == (said == 1))
    reads = np.mean((real > 0.5) == (truth == 1))
    print(f"{name}: answer agrees with the report in {follows:.0%}, with the image in {reads:.0%} of {len(items)} items")

# %% [markdown]
# At this toy scale both models mostly copy: P(yes) rises with what the report says and hardly depends on the image,
# noise included. RAG-PT shifts P(yes) up but does not make the model read the image; over seeds the package's
# claims rag-pt-reduces-copying and rag-pt-grounded are decided "does not hold" (`iclr25 claims mmed-rag`).

# %%
fig, axes = subplots(1, 2, size=(3.8, 3.4), layout="constrained", sharey=True)
for ax, (name, p) in zip(axes, p_yes.items()):
    real, noise = p["image shows the finding"], p["noise image"]
    for value, style, label in ((1, "o-", "image: finding present"), (0, "s-", "image: finding absent")):
        ax.plot([0, 1], [real[(truth == value) & (said == s)].mean() for s in (0, 1)], style, label=label)
    ax.plot([0, 1], [noise[said == s].mean() for s in (0, 1)], "^:", c="0.4", label="pure noise image")
    ax.set(title=name, xticks=[0, 1], xlim=(-0.2, 1.2), ylim=(0, 1), xlabel="the report says the finding is")
    ax.set_xticklabels(["absent", "present"])
axes[0].set_ylabel("mean P(yes)")
axes[0].legend(fontsize=8, loc="upper left")
fig.suptitle("P(yes) follows the report, barely the image (shipped tiny VLM)")
show(fig)
