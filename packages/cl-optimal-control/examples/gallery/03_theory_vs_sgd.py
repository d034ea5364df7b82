# %% [markdown]
# # The ODEs against finite-size online SGD
#
# The learning curves the solver optimises come from order-parameter ODEs, exact when the input dimension N
# goes to infinity. Here the same protocol (task 1 alone until α = 4, then 40 % replay of task 1) runs as
# online SGD of the two-layer network at N = 100 and N = 500, five seeds each, against the ODE. Lines: each
# task's error; shaded: the SGD runs' spread (mean ± one standard deviation). Already at N = 100 the ODE
# follows the mean of the runs, through the forgetting at the switch and the replay phase.

# %%
import numpy as np

from iclr25.cl_optimal_control import Problem, constant_mix, integrate, simulate
from iclr25.utils.plotting import show, subplots

problem = Problem(gamma=0.5)
protocol = constant_mix(problem, 0.4)  # u = (0.4 task 1, 0.6 task 2) on the whole control window
ode = integrate(problem, protocol, seed=0)
sgd = {n: simulate(problem, protocol, n=n, n_seeds=5, seed=0, record_every=0.25, show_progress=False)
       for n in (100, 500)}
for n, run in sgd.items():
    final = run.errors[:, -1, :]
    print(f"N = {n:3d}: final errors (mean over 5 seeds) task 1 {final[:, 0].mean():.4f}, "
          f"task 2 {final[:, 1].mean():.4f}; spread of the mean error {run.final_cost.std():.4f}")
print(f"ODE:     final errors task 1 {ode.errors[-1, 0]:.4f}, task 2 {ode.errors[-1, 1]:.4f}")

# %%
fig, axes = subplots(1, 2, size=(4.0, 3.3), sharey=True)
for task, ax in enumerate(axes):
    for k, (n, run) in enumerate(sgd.items()):
        m, s = run.errors[:, :, task].mean(axis=0), run.errors[:, :, task].std(axis=0)
        ax.plot(run.alpha, m, color=f"C{k}", linewidth=1.2, label=f"SGD, N = {n}")
        ax.fill_between(run.alpha, np.maximum(m - s, 1e-4), m + s, color=f"C{k}", alpha=0.25)
    ax.plot(ode.alpha, ode.errors[:, task], color="k", linestyle="--", linewidth=1.5, label="ODE (N → ∞)")
    ax.axvline(problem.alpha_1, color="0.5", linestyle=":", linewidth=1)
    ax.set(yscale="log", title=f"Task {task + 1}", xlabel="training time α (samples / N)")
axes[0].set_ylabel("generalisation error")
axes[1].legend(fontsize=8, loc="upper right")
fig.suptitle("Online SGD at finite N against the ODE (40 % replay after α = 4)")
fig.tight_layout()
show(fig)
