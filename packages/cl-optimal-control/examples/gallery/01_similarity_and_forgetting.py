# %% [markdown]
# # How task similarity sets forgetting
#
# Task 1 is learned alone until α_1 = 4, then training switches to task 2 for good (the sequential protocol).
# The exact order-parameter ODEs of online SGD give task 1's error for every teacher similarity γ at once (one
# vmapped call). Left: task 1's error over training for five similarities; right: how much of it is forgotten
# at the end, over a fine grid of γ: the less similar the tasks, the more is forgotten, and at γ = 1 (one
# teacher) training on task 2 keeps improving task 1.

# %%
import numpy as np

from iclr25.cl_optimal_control import Problem, integrate_gammas, sequential
from iclr25.utils.plotting import show, subplots

problem = Problem()  # K = 2 hidden units, two tasks, eta = 3, task 1 on [0, 4], task 2 on [4, 20]
gammas = np.linspace(0.0, 1.0, 41)
errs = integrate_gammas(problem, sequential(problem), gammas, seed=0)  # (n_gamma, n_steps + 1, n_tasks)
alpha = problem.dt * np.arange(errs.shape[1])
i1 = int(round(problem.alpha_1 / problem.dt))  # the step where task 2 starts
forgetting = errs[:, -1, 0] - errs[:, i1, 0]  # task 1's error at the end minus at the switch
worst = int(np.argmax(forgetting))
print(f"task 1 error at the switch: {errs[0, i1, 0]:.4f} (every γ: task 2 is not trained yet)")
print(f"most forgetting at γ = {gammas[worst]:.3f} ({forgetting[worst]:+.4f}); "
      f"γ = 0.5: {forgetting[20]:+.4f}; γ = 1: {forgetting[-1]:+.4f}")

# %%
fig, (ax, ax_f) = subplots(1, 2, size=(4.0, 3.2))
for g in (0.0, 0.25, 0.5, 0.75, 1.0):
    k = int(np.argmin(np.abs(gammas - g)))
    ax.plot(alpha, errs[k, :, 0], label=f"γ = {g:.2f}")
ax.axvline(problem.alpha_1, color="0.5", linestyle=":", linewidth=1)
ax.set(yscale="log", title="Task 1 error, sequential training", xlabel="training time α (samples / N)",
       ylabel=r"generalisation error $\epsilon_1$")
ax.legend(fontsize=8, ncols=2, loc="lower left")
ax_f.plot(gammas, forgetting, color="C3", marker="o", markersize=2.5)
ax_f.axhline(0.0, color="0.5", linewidth=1)
ax_f.set(title=r"Forgetting of task 1 at $\alpha_f$ = 20", xlabel="teacher similarity γ",
         ylabel=r"$\epsilon_1(\alpha_f) - \epsilon_1(\alpha_1)$")
fig.tight_layout()
show(fig)
