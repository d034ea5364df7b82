# %% [markdown]
# # iclr25-knowledge-manipulation quickstart
# Synthetic people, their biographies, the four manipulation tasks with and without chain of thought, and
# the shipped Stage A model of seed 0 (a tiny rotary GPT that stores 100 people's birth dates; `demo` fine-tunes
# it on month parity with and without chain of thought).

# %%
from iclr25.knowledge_manipulation import build_task, make_population, parse_bio, render_bio, suggest_model
from iclr25.knowledge_manipulation.checkpoints import load_stage_a
from iclr25.knowledge_manipulation.training import evaluate

pop = make_population(100, seed=0)
bio = render_bio(pop.people[0], 0)
print(bio)
print(parse_bio(bio))

# %%
for spec in ["retrieval:birth_city", "classification:birth_month:mod2", "classification:birth_month:mod2:cot",
             "comparison:birth_month:cot", "inverse:birth_date+birth_city"]:
    qa = build_task(pop, spec, people="train")[0]
    print(f"{spec:40s} {qa.prompt} -> {qa.answer}")

# %%
print(suggest_model(1000, exposures=40))  # capacity accounting: the smallest shape that can store N = 1000
pre = load_stage_a(0)  # people and tokenizer rebuilt from the seed, weights from stage_a/seed0.npz (no pickle)
res = evaluate(pre.model, pre.tokenizer, build_task(pre.population, "retrieval:birth_date", people="test"))
print(f"birth-date retrieval on test people of the shipped Stage A model: {res.accuracy:.2f}")
print(res.examples[0])
