# %% [markdown]
# # iclr25-knowledge-manipulation quickstart
# Synthetic people, their biographies, the four manipulation tasks with and without chain of thought, and
# a tiny rotary GPT pretrained on the biographies for a few seconds (far too short to store the knowledge:
# `iclr25 knowledge-manipulation demo` trains long enough for the paper's gaps to show).

# %%
from iclr25.knowledge_manipulation import (
    ExperimentConfig,
    TrainConfig,
    build_task,
    make_population,
    parse_bio,
    pretrain,
    render_bio,
    suggest_model,
)
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
cfg = ExperimentConfig(n_people=100, n_layers=1, d_model=32, n_heads=2, bio_attributes=("birth_date", "birth_city"),
                       qa_attributes=("birth_date",), pretrain=TrainConfig(epochs=3, batch_size=8, seq_len=64))
pre = pretrain(cfg, population=pop)
res = evaluate(pre.model, pre.tokenizer, build_task(pop, "retrieval:birth_date", people="test"))
print(f"birth-date retrieval on test people after 3 epochs: {res.accuracy:.2f}")
