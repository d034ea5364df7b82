# %% [markdown]
# # iclr25-overtraining quickstart
# Train the odour-task network past the point where training accuracy saturates (E0) and watch the hidden
# layer keep separating the classes.

# %%
from iclr25.overtraining import HiddenProgressMonitor, TrainConfig, make_odour_task, to_torch, train_mlp

task = make_odour_task(n_odorants=20, n_components=6, n_train=40, n_test=400, seed=0)
mon = HiddenProgressMonitor(task.X_train, task.y_train, task.X_test, task.y_test)
run = train_mlp(task.X_train, task.y_train, task.X_test, task.y_test,
                TrainConfig(lr=0.05, n_epochs=400, n_checkpoints=20), callback=mon)
E0 = run.E0
for c in run.checkpoints[::4]:
    print(f"epoch {c.epoch:4d}  train {c.train_acc:.3f}  held-out {c.test_acc:.3f}  margin {c.margin:.3f}")

# %% [markdown]
# The same monitor on a torch model: a forward hook on the hidden layer gives the same numbers.

# %%
model = to_torch(run.checkpoints[-1].params)
tmon = HiddenProgressMonitor(task.X_train, task.y_train, task.X_test, task.y_test).watch(model, model[1])
print(tmon(run.checkpoints[-1].epoch, model).margin, mon.records[-1].margin)
