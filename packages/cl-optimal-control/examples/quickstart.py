# %% [markdown]
# # iclr25-cl-optimal-control quickstart
#
# Two tasks with teacher similarity gamma = 0.5: task 1 is trained alone until alpha_1 = 4, then on the
# control window [4, 20] every SGD step picks task 1 (replay) or task 2 with a probability u(alpha). We find the
# u(alpha) that minimises the final average error on the exact ODEs, compare it with the tuned heuristics,
# and run it in finite-N online SGD.

# %%
import numpy as np

from iclr25.cl_optimal_control import Problem, heuristics, simulate, solve

problem = Problem(gamma=0.5)
res = solve(problem, "pmp", show_progress=False)
print(f"optimal J = {res.cost:.5f} after {res.n_iter} sweeps")
for name, (sched, J) in heuristics(problem).items():
    print(f"{name:>20s}: {sched.name:>22s}  J = {J:.5f}  ratio = {res.cost / J:.3f}")

# %% [markdown]
# The optimal protocol: focus on the new task first (u_1 = 0), then interleave replay, then revise task 1.

# %%
print(np.round(res.schedule.u[:, 0], 2))

# %%
sim = simulate(problem, res.schedule, n=300, n_seeds=3, show_progress=False)
print("SGD (N=300) final errors per task:", np.round(sim.mean[-1], 4), " ODE:", np.round(res.trajectory.errors[-1], 4))
