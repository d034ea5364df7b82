# %% [markdown]
# # Streaming MemNO: same predictions, constant cost per frame
#
# MemNO's S4 memory is a linear recurrence, so a model that ran over the history once can take each new frame in
# O(1) (`init_state`, `step`) instead of re-running the whole history (`forward`, a causal convolution over time).
# The figure shows that both give the same predictions, and what each costs per new frame as the history grows.

# %%
import time

import numpy as np
import torch
from matplotlib.ticker import ScalarFormatter

from iclr25.memno import ks, make_model
from iclr25.utils.plotting import show, subplots

torch.set_num_threads(1)

# %% [markdown]
# A small untrained MemNO (2 layers, width 16; equality does not depend on training) on 4 KS trajectories of 128
# frames observed on 32 points.

# %%
data = ks(4, resolution=32, t_final=12.7, seed=0)
u = torch.as_tensor(data.u)  # (4, 128, 32)
model = make_model("memno", width=16, n_layers=2, modes=8, seed=0, device="cpu").eval()
lengths = [8, 16, 32, 64, 128]
with torch.no_grad():
    full = model(u)  # every next-step prediction in one causal pass
    state, streamed, step_s = model.init_state(u[:, 0]), [], []
    for t in range(u.shape[1]):
        t0 = time.perf_counter()
        pred, state = model.step(u[:, t], state)
        step_s.append(time.perf_counter() - t0)
        streamed.append(pred)
    model(u[:, :8])  # one warm-up call, so the first timing below is not paying for it
    rerun_s = []
    for n in lengths:  # the cost of a new frame without a state: forward over the whole history again
        runs = []
        for _ in range(3):  # the fastest of 3, the usual guard against a busy machine
            t0 = time.perf_counter()
            model(u[:, :n])
            runs.append(time.perf_counter() - t0)
        rerun_s.append(min(runs))
diff = (torch.stack(streamed, 1) - full).abs().amax(dim=(0, 2)).numpy()
scale = float(full.abs().max())
print(f"largest |step - forward| over {u.shape[1]} frames: {diff.max():.1e} (outputs up to {scale:.2f})")
print(f"per new frame at 128 frames of history: step {1e3 * np.median(step_s[-16:]):.2f} ms, "
      f"re-running forward {1e3 * rerun_s[-1]:.1f} ms")

# %% [markdown]
# The differences are float32 round-off (outputs reach about 14). The timings are this run's, on one thread: they
# change with the machine and its load, but re-running grows with the history while a step does not.

# %%
fig, (ax0, ax1) = subplots(1, 2, size=(4.2, 3.4), layout="constrained")
ax0.semilogy(np.arange(1, len(diff) + 1), np.maximum(diff, 1e-12), ".", ms=4)
ax0.set(title="streaming equals the full pass", xlabel="frame t", ylabel="max |step - forward| (float32)")
ax1.loglog(lengths, 1e3 * np.array(rerun_s), "s-", ms=4, label="re-run forward on the history")
ax1.loglog(lengths, [1e3 * np.median(step_s[n // 2:n]) for n in lengths], "o-", ms=4, label="step with the state")
ax1.set(title="cost of one new frame", xlabel="frames of history", ylabel="wall time (ms, one thread)")
ax1.yaxis.set_major_formatter(ScalarFormatter())
ax1.legend(fontsize=8)
show(fig)
