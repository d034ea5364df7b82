# %% [markdown]
# # Why memory helps: the Mori-Zwanzig toy
#
# On the linear PDE `u_t = nu u_xx + 2a cos(6x) u` the potential `cos(6x)` couples the observed Fourier modes
# `|m| <= K` to unobserved ones, so by Mori-Zwanzig the observed modes' future depends on their past. The figure
# shows the test error of least-squares linear predictors that see the last `h` frames, for several couplings `a`
# and observed bands `K`.

# %%
import numpy as np
import torch

from iclr25.memno import mori_zwanzig_toy
from iclr25.utils.plotting import show, subplots

torch.set_num_threads(1)

# %% [markdown]
# `history=(0, 1, ...)` are the extra past frames (0 = Markovian). With `a = 0` nothing couples the observed modes
# to the rest, so a Markovian predictor is already exact; with coupling, each of the first past frames removes
# orders of magnitude of error, until round-off (about 1e-12) is reached.

# %%
history = (0, 1, 2, 3, 4)
couplings = (0.0, 0.25, 0.75, 1.5)
by_a = {a: mori_zwanzig_toy(history, a=a, seed=0).errors for a in couplings}
bands = (4, 6, 8, 12, 16)
by_k = [mori_zwanzig_toy((0, 1), n_resolved=k, seed=0).errors for k in bands]
for a, e in by_a.items():
    print(f"a = {a:4}: relative error with 0..4 past frames", np.array2string(e, precision=1))
print("memory gain (Markovian / one past frame) at K = 4..16:", [round(float(e[0] / e[1])) for e in by_k])

# %%
fig, (ax0, ax1) = subplots(1, 2, size=(4.2, 3.4), layout="constrained")
for a, e in by_a.items():
    ax0.semilogy(history, np.maximum(e, 1e-16), "o-", ms=4, label=f"a = {a}" + (" (no coupling)" if a == 0 else ""))
ax0.set(title="observed modes |m| <= 8", xlabel="past frames seen by the predictor (h)",
        ylabel="relative one-step test error", xticks=history)
ax0.legend(fontsize=8)
ax1.semilogy(bands, [e[0] for e in by_k], "o-", ms=4, label="Markovian (h = 0)")
ax1.semilogy(bands, [e[1] for e in by_k], "s--", ms=4, label="one past frame (h = 1)")
ax1.set(title="coupling a = 0.75", xlabel="observed band K (modes |m| <= K)", ylabel="relative one-step test error")
ax1.legend(fontsize=8)
fig.suptitle("Linear predictors of the observed modes: memory removes the unresolved-mode error")
show(fig)
