# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # iclr25-teochat quickstart
# Generated dated sequences (stored shuffled), TEOChatlas-style questions, the shipped TEOChat checkpoint beside
# the single-image (last-frame) checkpoint and the trivial answerers, and a few steps of training from scratch.

# %%
import torch

from iclr25.teochat import (
    TrainConfig,
    generate_sequences,
    load_pretrained,
    make_examples,
    pixel_f1,
    train_assistant,
)
from iclr25.teochat.experiments import trivial_localisation

torch.set_num_threads(1)
seqs = generate_sequences(48, seed=0)
examples = make_examples(seqs)
s = seqs[0]
print(s.scene, s.dates, "-> chronological order", list(s.order))
for e in examples[:6]:
    print(f"{e.task:6s} {e.question} -> {e.answer}")

# %% [markdown]
# Change localisation: the shipped checkpoints against the trivial answers (every building of the last frame,
# of the first frame, every building, "no change").

# %%
loc = [e for e in examples if e.task == "loc"]
for name in ("temporal", "last_frame"):
    print(name, pixel_f1(load_pretrained(name).predict(loc, seqs), [e.boxes for e in loc]))
print(trivial_localisation(loc, seqs))

# %%
asst = train_assistant(seqs, examples, config=TrainConfig(steps=5, batch_size=8))  # from scratch: a few steps
print(asst.predict(loc[:2], seqs))
