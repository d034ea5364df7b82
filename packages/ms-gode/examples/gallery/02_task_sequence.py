# %% [markdown]
# # The continual task: systems that arrive one after another
#
# Continual dynamics learning sees systems in sequence, each as irregularly observed trajectories of interacting
# objects. The figure shows one simulation of each system of the physics sequence (springs -> charged -> springs):
# the frames the encoder sees in the observed window, and the later frames the model must extrapolate to.

# %%
from iclr25.ms_gode import PHYSICS_SEQUENCE, make_task
from iclr25.utils.plotting import show, subplots

# %% [markdown]
# `make_task` simulates a system of the sequence (120 frames) and observes it: each object keeps 60 % of the 60
# frames of the observed window at random (frame 0 always), and 40 random later frames are the extrapolation
# targets. Positions are scaled to [-1, 1] per feature over the set. `cache=False`: nothing is written to disk.

# %%
tasks = [make_task(spec, 4, seed=1000 * i, cache=False) for i, spec in enumerate(PHYSICS_SEQUENCE)]
for task in tasks:
    obs, tgt = task.obs_mask[0], task.target_mask[0]
    print(f"{task.name}: {task.values.shape[1]} objects, {task.values.shape[2]} frames, observed window "
          f"{task.n_obs} frames ({obs[:, :task.n_obs].mean():.0%} seen per object), {tgt[0].sum()} target frames, "
          f"{int((task.adjacency[0] != 0).sum() // 2)} interacting pairs")

# %%
fig, axes = subplots(1, 3, size=(3.4, 3.4), layout="constrained")
for k, (ax, task) in enumerate(zip(axes, tasks)):
    for i, colour in zip(range(task.values.shape[1]), ("C0", "C1", "C2", "C3", "C4")):
        xy = task.values[0, i, :, :2]
        obs, tgt = task.obs_mask[0, i], task.target_mask[0, i]
        ax.plot(xy[:, 0], xy[:, 1], c=colour, lw=0.6, alpha=0.4)
        ax.plot(xy[obs, 0], xy[obs, 1], "o", c=colour, ms=2.5, label="observed (encoder input)" if i == 0 else None)
        ax.plot(xy[tgt, 0], xy[tgt, 1], "x", c=colour, ms=4, label="extrapolation target" if i == 0 else None)
    ax.set(title=f"task {k + 1}: {task.name}", xlabel="x (scaled)", ylabel="y (scaled)")
axes[0].legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2))
fig.suptitle("The physics sequence, one simulation per system (colour: object; line: full path)")
show(fig)
