# %% [markdown]
# # Hidden progress: the margin grows after accuracy saturates
#
# A one-hidden-layer network learns the odour-mixture task by full-batch gradient descent. Training accuracy hits 1
# at epoch E0, yet the hidden layer keeps separating the classes: its normalised SVM margin grows, and held-out
# mixtures flip from wrong to right. The figure shows accuracy, margin and flips against epochs, with E0 marked.

# %%
import numpy as np

from iclr25.overtraining import TrainConfig, make_odour_task, train_mlp
from iclr25.utils.plotting import show, subplots

# %% [markdown]
# The package's default task (20 odorants, 6-component mixtures, 40 training and 400 held-out mixtures) and its
# rich-regime network (width 128, ReLU, alpha = 1), trained for 400 epochs (about 20 E0), checkpointed at
# log-spaced epochs.

# %%
task = make_odour_task(n_odorants=20, n_components=6, n_train=40, n_test=400, seed=0)
run = train_mlp(task.X_train, task.y_train, task.X_test, task.y_test,
                TrainConfig(width=128, alpha=1.0, lr=0.05, n_epochs=400, n_checkpoints=25), seed=0)
E0, end = run.E0, run.checkpoints[-1]
flips = run.flips(E0)
print(f"E0 = {E0}: margin {run.at(E0).margin:.3f} -> {end.margin:.3f} at epoch {end.epoch}")
print(f"held-out accuracy {run.at(E0).test_acc:.3f} -> {end.test_acc:.3f}; {flips.n} held-out mixtures flip "
      f"wrong -> right after E0 ({len(flips.right_to_wrong)} right -> wrong)")

# %%
epochs = run.epochs
first = epochs[np.searchsorted(epochs, E0):]  # checkpoints from E0 on
n_flipped = [int(np.sum(epochs[flips.flip_at] <= e)) for e in first]
x = epochs[1:]  # the log axis starts at epoch 1 (epoch 0, the initial network, is left out)
fig, axes = subplots(1, 3, size=(3.3, 3.0), layout="constrained")
axes[0].semilogx(x, run.curve("train_acc")[1:], "o-", ms=3, label="training")
axes[0].semilogx(x, run.curve("test_acc")[1:], "s-", ms=3, label="held-out")
axes[0].set(title="accuracy", ylabel="accuracy")
axes[1].semilogx(x, run.curve("margin")[1:], "o-", ms=3, c="tab:purple")
axes[1].set(title="hidden-layer SVM margin", ylabel="normalised margin")
axes[2].semilogx(first, n_flipped, "o-", ms=3, c="tab:green")
axes[2].set(title="held-out flips since E0", ylabel="mixtures flipped wrong -> right", xlim=axes[0].get_xlim())
for ax in axes:
    ax.axvline(E0, c="0.4", ls=":", label=f"E0 = {E0}")
    ax.set_xlabel("epoch")
axes[0].legend(fontsize=8)
fig.suptitle("Hidden progress: after E0 the margin grows and held-out mixtures flip")
show(fig)
