# %% [markdown]
# # Sketched regression: cost against rank k
# Each alternating half-step solves one weighted regression per row. The exact (LLR16) solver forms a k x k Gram
# matrix per row, about ‖W‖₀k² work; the paper's solver sketches, preconditions and refines in ‖W‖₀k per step.
# The figure times one half-step (150 rows, 3,000 dense weights each, one thread) for k = 16 to 128: both give the
# same solution, and the exact solver's time grows faster in k. At this small size, the sketch does not yet win
# in absolute time.

# %%
import time

import numpy as np
from matplotlib.ticker import NullLocator

from iclr25.utils.plotting import show, subplots
from iclr25.weighted_lowrank import weighted_regression

rng = np.random.default_rng(0)
n, d = 150, 3000
M = rng.normal(size=(n, d))
W = rng.uniform(0.5, 1.5, size=(n, d))  # dense weights with a spectral gap
ks = [16, 32, 64, 128]
cpu = {"exact": [], "sketch": []}
for k in ks:
    F = rng.normal(size=(d, k))  # the fixed factor of this half-step
    sol = {}
    for solver in cpu:
        best = np.inf
        for _ in range(2):  # best of two runs: less noise from a busy machine
            t = time.process_time()
            sol[solver] = weighted_regression(M, W, F, solver=solver, seed=0)
            best = min(best, time.process_time() - t)
        cpu[solver].append(best)
    gap = np.abs(sol["exact"].X - sol["sketch"].X).max()
    print(f"k = {k:3d}: exact {cpu['exact'][-1]:.3f} s, sketch {cpu['sketch'][-1]:.3f} s "
          f"({sol['sketch'].steps} refinement steps), largest difference of the solutions {gap:.1e}")
slope = {s: np.polyfit(np.log(ks[1:]), np.log(t[1:]), 1)[0] for s, t in cpu.items()}
print(f"log-log slope in k from 32 to 128: exact {slope['exact']:.2f}, sketch {slope['sketch']:.2f}")

# %%
fig, ax = subplots(1, 1, size=(5.0, 3.4))
ax.loglog(ks, cpu["exact"], "s-", label="exact (LLR16)")
ax.loglog(ks, cpu["sketch"], "o-", label="sketch + precondition + CG")
ax.xaxis.set_minor_locator(NullLocator())
ax.set_xticks(ks, [str(k) for k in ks])
ax.set(xlabel="rank k", ylabel="CPU seconds per half-step", title="One half-step: 150 rows × 3,000 weights")
ax.legend(fontsize=8)
show(fig)
