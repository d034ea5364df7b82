# %% [markdown]
# # iclr25-ms-gode quickstart
# Learn the physics task sequence (springs → charged → springs) with MS-GODE, one sub-network per task, then
# let mode switching find which task a test batch comes from.

# %%
import torch

from iclr25.ms_gode import MSGODE, ModelConfig, TrainConfig, task_sequence

torch.set_num_threads(1)
tasks = [t.split((0.6, 0.2, 0.2)) for t in task_sequence("physics", 30, seed=0)]
learner = MSGODE(4, ModelConfig(hidden=16, ode_hidden=16, augment=8), TrainConfig(epochs=3, lr=5e-2))
for train, valid, _ in tasks:
    learner.fit_task(train, valid=valid)

# %% [markdown]
# Mode switching: every sub-network predicts the second half of the observed window from its first half.

# %%
for j, (_, _, test) in enumerate(tasks):
    sel = learner.select_mode(test)
    print(f"task {j}: chosen mask {sel.best}, unknown={sel.unknown}, losses {[round(x, 1) for x in sel.losses]}")
    print("  extrapolation MSE with mode switching", round(learner.evaluate(test).mse, 4),
          "with the oracle mask", round(learner.evaluate(test, task_id=j).mse, 4))
