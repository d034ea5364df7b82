# %% [markdown]
# # Forward retrieval works, inverse search does not
#
# The shipped Stage A model (seed 0) answers "When was A born?" for every one of its 100 people. Fine-tuned to
# answer the inverse question ("Who was born on October 2, 1996 in Laxburg?") on the 50 train people, it learns
# those answers, yet finds none of the 50 test people, whose biographies it stored in the same way. Bars: exact
# match on train and test people for forward retrieval (before fine-tuning) and inverse search (after).
# One 30-epoch fine-tune of a tiny rotary GPT, one seed.

# %%
import torch

from iclr25.knowledge_manipulation import build_task, evaluate, finetune
from iclr25.knowledge_manipulation.checkpoints import load_stage_a
from iclr25.utils.plotting import show, subplots

torch.set_num_threads(1)
pre = load_stage_a(0)  # 100 people (50 train, 50 test) and the Stage A weights
pop, tok = pre.population, pre.tokenizer
inverse = "inverse:birth_date+birth_city"
print(build_task(pop, inverse, people="train")[0].prompt, "->", build_task(pop, inverse, people="train")[0].answer)

# %%
rows = {"birth-date retrieval\n(Stage A)": [
    evaluate(pre.model, tok, build_task(pop, "retrieval:birth_date", people=p)).accuracy for p in ("train", "test")]}
model, _ = finetune(pre, inverse, seed=0)  # Stage B on the train people's inverse questions, with replay
res = [evaluate(model, tok, build_task(pop, inverse, people=p)) for p in ("train", "test")]
rows["inverse search\n(after fine-tune)"] = [r.accuracy for r in res]
for name, (tr, te) in rows.items():
    print(f"{name.replace(chr(10), ' '):36s} train {tr:.2f}  test {te:.2f}")
print("a test person:", res[1].examples[0])

# %%
fig, ax = subplots(size=(5.0, 3.4))
xs = range(len(rows))
for k, (who, dx) in enumerate((("train people", -0.2), ("test people", 0.2))):
    bars = ax.bar([x + dx for x in xs], [v[k] for v in rows.values()], width=0.4, label=who)
    ax.bar_label(bars, fmt="%.2f", fontsize=8)  # a zero bar is otherwise invisible
ax.set_xticks(list(xs), list(rows))
ax.set(title="Stored facts, asked forwards and backwards", xlabel="task", ylabel="exact-match accuracy",
       ylim=(0, 1.2))
ax.legend(fontsize=8, loc="upper right", ncols=2)
show(fig)
