# %% [markdown]
# # Parity of a stored month needs chain of thought
#
# The shipped Stage A model (seed 0) has stored the birth dates of 100 people and retrieves them for all. Is a
# person's birth month *even*? Fine-tuned on the 50 train people's answers, the model is scored on the 50 test
# people it never saw an answer for: without CoT, with CoT ("October, so even") in training and inference, and
# fine-tuned without CoT but given the true month in the prompt (CoT at inference only, scored as a forced
# choice between the labels). Bars: accuracy per condition beside the majority label. Two 30-epoch fine-tunes
# of a tiny rotary GPT, one seed.

# %%
import torch

from iclr25.knowledge_manipulation import build_task, evaluate, finetune
from iclr25.knowledge_manipulation.checkpoints import load_stage_a
from iclr25.knowledge_manipulation.training import evaluate_cot_prompt
from iclr25.utils.plotting import show, subplots

torch.set_num_threads(1)
pre = load_stage_a(0)  # 100 people (50 train, 50 test) and the Stage A weights, verified by hash
retr = evaluate(pre.model, pre.tokenizer, build_task(pre.population, "retrieval:birth_date", people="test"))
print(f"Stage A: birth-date retrieval on test people {retr.accuracy:.2f}")

# %% [markdown]
# Stage B: one fine-tune per answer format, from the same Stage A model, with replay of the biographies.

# %%
plain, cot = "classification:birth_month:mod2", "classification:birth_month:mod2:cot"
scores = {}
model, _ = finetune(pre, plain, seed=0)
scores["no CoT"] = [evaluate(model, pre.tokenizer, build_task(pre.population, plain, people=p)) for p in
                    ("train", "test")]
scores["CoT at inference only"] = [evaluate_cot_prompt(model, pre.tokenizer,
                                                       build_task(pre.population, cot, people=p), people=p)
                                   for p in ("train", "test")]
model, _ = finetune(pre, cot, seed=0)
scores["CoT in training and inference"] = [evaluate(model, pre.tokenizer, build_task(pre.population, cot, people=p))
                                           for p in ("train", "test")]
for name, (tr, te) in scores.items():
    print(f"{name:30s} train {tr.accuracy:.2f}  test {te.accuracy:.2f}  (majority label on test {te.chance:.2f})")

# %%
fig, ax = subplots(size=(5.6, 3.4))
names = list(scores)
xs = range(len(names))
for k, (who, dx) in enumerate((("train people", -0.2), ("test people", 0.2))):
    bars = ax.bar([x + dx for x in xs], [scores[n][k].accuracy for n in names], width=0.4, label=who)
    ax.bar_label(bars, fmt="%.2f", fontsize=8)
for x, n in zip(xs, names):
    ax.plot([x - 0.4, x + 0.4], [scores[n][1].chance] * 2, color="k", linestyle=":", linewidth=1.2,
            label="majority label (test)" if x == 0 else None)
ax.set_xticks(list(xs), [n.replace(" and ", "\nand ").replace(" only", "\nonly") for n in names])
ax.set(title="Is the birth month even? (tiny GPT, N = 100)", xlabel="fine-tune / prompt condition",
       ylabel="exact-match accuracy", ylim=(0, 1.25))
ax.legend(fontsize=8, loc="upper left", ncols=3)
show(fig)
