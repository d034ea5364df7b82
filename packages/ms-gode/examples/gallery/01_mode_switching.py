# %% [markdown]
# # Mode switching: which sub-network fits this batch?
#
# At test time the system is not named. MS-GODE runs each task's sub-network (its binary mask over the frozen
# weights) on a self-prediction sub-problem of the observed window and picks the one that predicts it best. The
# figure shows every mask's self-prediction error per fresh test batch, beside a rule that needs no model.

# %%
import numpy as np
import torch

from iclr25.ms_gode import task_sequence
from iclr25.ms_gode.pretrained import centroid_task_accuracy, load_pretrained
from iclr25.utils.plotting import show, subplots

torch.set_num_threads(1)

# %% [markdown]
# The checkpoint shipped with the package (`iclr25 ms-gode pretrain --seed 0`: springs -> charged -> springs,
# 16 epochs) and 20 fresh test trajectories per task from seeds it never saw, in batches of 5 (the paper uses 10;
# smaller batches make the choice harder). The rival: each batch goes to the task whose training trajectories'
# mean observed-window statistics are nearest (`centroid_task_accuracy`, 12 training trajectories per task).

# %%
learner, record = load_pretrained(seed=0)
names = learner.task_names
tests = task_sequence("physics", 20, seed=50_000, cache=False)  # fresh seeds; cache=False writes no files
batch = 5
rows = []  # (true task, per-mask MSEs, chosen mask, do-nothing MSE)
for j, te in enumerate(tests):
    for b in range(0, len(te), batch):
        sel = learner.select_mode(te, np.arange(b, b + batch))
        rows.append((j, sel.mses, sel.best, sel.trivial_mse))
hits = np.mean([best == j for j, _, best, _ in rows])
train = task_sequence("physics", 12, seed=0, cache=False)
rival = centroid_task_accuracy(train, tests, batch_size=batch)
print(f"mode switching picks the true sub-network in {hits:.0%} of {len(rows)} batches; "
      f"nearest centroid without a model: {rival['fraction']:.0%}")
for j, name in enumerate(names):
    own = np.mean([m[j] for t, m, _, _ in rows if t == j])
    still = np.mean([d for t, _, _, d in rows if t == j])
    print(f"  {name}: own mask's self-prediction MSE {own:.3f}, do-nothing {still:.3f}")

# %% [markdown]
# Each group of columns is one task's test batches; the chosen mask is the lowest marker. The own mask is lowest in
# most batches, yet on tasks 2 and 3 it predicts the window worse than holding the last value (the grey bars): the
# choice rests on relative errors, and the model-free rule tells these tasks apart at least as well. With models
# retrained over seeds the package's claim mode-switching is decided "does not hold" (`iclr25 claims ms-gode`).

# %%
fig, ax = subplots(1, 1, size=(7.0, 3.6))
x = np.arange(len(rows))
ax.bar(x, [d for *_, d in rows], color="0.85", label="do-nothing (hold last value)")
for m, (name, marker) in enumerate(zip(names, ("o", "s", "^"))):
    ax.scatter(x, [r[1][m] for r in rows], marker=marker, s=22, label=f"mask {m + 1}: {name}", zorder=3)
per = len(rows) // len(names)
for j in range(1, len(names)):
    ax.axvline(j * per - 0.5, c="0.3", lw=0.8)
ax.set_xticks([j * per + (per - 1) / 2 for j in range(len(names))], [f"test batches of task {j + 1}"
                                                                     for j in range(len(names))])
ax.set(title=f"Self-prediction error per mask: mode switching {hits:.0%} right, "
             f"nearest centroid {rival['fraction']:.0%}", xlabel="fresh test batch (5 trajectories)",
       ylabel="self-prediction MSE (normalised units)")
ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
show(fig)
