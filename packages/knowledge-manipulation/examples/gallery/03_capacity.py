# %% [markdown]
# # How large a model must be to store N people
#
# Before training, the package sizes a model by knowledge-capacity accounting: a bioS person carries
# Σ_a log2 |V_a| bits (birth date, city, university, major, company), and Part 3.3 of the series measures about
# 2 bits per parameter after 1,000 exposures of each fact and about 1 after 100. The figure shows how many
# people each of the package's model shapes can store at 100 and at 1,000 exposures; `suggest_model` picks the
# smallest shape with twice the bits needed (a safety factor). A rough guide, not a law: no training here.

# %%
import numpy as np

from iclr25.knowledge_manipulation import GPTConfig, bits_per_person, capacity_report, suggest_model
from iclr25.utils.plotting import show, subplots

bpp = bits_per_person()
print(f"bits per person: {bpp:.1f} (birth date alone {bits_per_person(attributes=('birth_date',)):.1f})")
shapes = ((2, 64, 4), (3, 96, 4), (4, 128, 4), (6, 192, 6), (8, 256, 8), (12, 384, 6))  # (layers, d, heads)
configs = [GPTConfig(vocab_size=1500, n_layers=L, d_model=d, n_heads=h) for L, d, h in shapes]
for n in (100, 1000, 10_000, 100_000):
    cfg = suggest_model(n, exposures=100)
    rep = capacity_report(n, cfg, exposures=100)
    print(f"N = {n:6d}: {rep.total_bits / 1e3:8.1f} kbit -> {cfg.n_layers} layers, d = {cfg.d_model} "
          f"({cfg.n_params / 1e6:.2f} M parameters, headroom {rep.headroom:.1f}x at 100 exposures)")

# %%
fig, ax = subplots(size=(5.6, 3.4))
xs = np.arange(len(configs))
for k, (exp, dx) in enumerate(((100, -0.2), (1000, 0.2))):
    people = [capacity_report(1, cfg, exposures=exp).rate_bits_per_param * cfg.n_params / bpp for cfg in configs]
    ax.bar(xs + dx, people, width=0.4, color=f"C{k}", label=f"{exp:,} exposures per fact")
ax.set_xticks(xs, [f"{c.n_layers}L d={c.d_model}\n{c.n_params / 1e6:.2f} M" for c in configs], fontsize=8)
ax.set(yscale="log", title="How many people each model shape can store", xlabel="model shape (parameters)",
       ylabel="people N (capacity / bits per person)")
ax.legend(fontsize=8, loc="upper left")
show(fig)
