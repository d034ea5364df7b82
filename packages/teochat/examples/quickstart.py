# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # iclr25-teochat quickstart
# Generated dated sequences (stored shuffled), TEOChatlas-style questions, a few steps of the tiny TEOChat,
# and the paper's pixel F1 (invalid answers count as misses).

# %%
import torch

from iclr25.teochat import TrainConfig, generate_sequences, make_examples, pixel_f1, train_assistant

torch.set_num_threads(1)
seqs = generate_sequences(48, seed=0)
examples = make_examples(seqs)
s = seqs[0]
print(s.scene, s.dates, "-> chronological order", list(s.order))
for e in examples[:6]:
    print(f"{e.task:6s} {e.question} -> {e.answer}")

# %%
asst = train_assistant(seqs, examples, config=TrainConfig(steps=5, batch_size=8))
loc = [e for e in examples if e.task == "loc"][:8]
answers = asst.predict(loc, seqs)  # greedy decoding: deterministic
print(answers[:2])
print(pixel_f1(answers, [e.boxes for e in loc]))
