# %% [markdown]
# # Choosing λ̂ from short trajectories
#
# BoPITO weighs its dynamic score by λ̂^N, so the model hands over to the Boltzmann prior at the pace of the
# system's slowest process. λ̂ is the slowest transfer-operator eigenvalue per frame; `estimate_lambda` gets it
# from trajectories by TICA on grid indicators (deeptime). Left: estimates from 10, 30 and 100 trajectories of
# 200 frames (three data seeds each) against the exact value; right: the weight λ̂^N against the exact
# correlation function C(N) it is meant to follow.

# %%
import numpy as np

from iclr25.bopito import estimate_lambda, exact_reference
from iclr25.utils.plotting import show, subplots

ref = exact_reference("prinz")
lam_exact = float(ref.eigenvalues[1])  # λ_2 per frame, exp(q_2 Δt)
print(f"exact λ_2 = {lam_exact:.5f} per frame (slowest implied timescale {ref.timescales[0]:.0f} frames)")

# %%
sizes, seeds = (10, 30, 100), (0, 1, 2)
est = {n: [estimate_lambda(ref.sample_trajectories(n, 200, seed=s), lagtime=10) for s in seeds] for n in sizes}
for n, lams in est.items():
    ts = [-1.0 / np.log(v) for v in lams]
    print(f"{n:3d} trajectories: λ̂ = {', '.join(f'{v:.5f}' for v in lams)}  "
          f"(timescales {', '.join(f'{t:.0f}' for t in ts)} frames)")

# %%
fig, (ax, ax_w) = subplots(1, 2, size=(4.0, 3.2))
for n, lams in est.items():
    ax.scatter([n] * len(lams), lams, color="C0", s=18, zorder=3)
ax.axhline(lam_exact, color="k", linestyle="--", linewidth=1, label=rf"exact $\lambda_2$ = {lam_exact:.4f}")
ax.set_xscale("log")
ax.set_xticks(sizes, [str(n) for n in sizes])
ax.set(title="λ̂ from short trajectories", xlabel="trajectories (200 frames each)",
       ylabel="λ̂ (per frame)")
ax.legend(fontsize=8, loc="lower right")
lags = np.unique(np.geomspace(1, 3000, 120).round())
ax_w.plot(lags, ref.correlation(lags), color="k", linewidth=1.5, label="exact C(N) of x")
ax_w.plot(lags, lam_exact ** lags, color="C1", linestyle="--", label=r"$\lambda_2^N$ (exact $\lambda_2$)")
worst = min(v for lams in est.values() for v in lams)
ax_w.plot(lags, worst ** lags, color="C0", linestyle=":", label=rf"$\hat\lambda^N$, lowest estimate {worst:.4f}")
ax_w.axvline(100, color="0.5", linewidth=1)
ax_w.text(105, 0.92, r"$N_{max}$ = 100", fontsize=8, color="0.3")
ax_w.set(xscale="log", title="Weight of the dynamic score", xlabel="lag N (frames)", ylabel="weight / correlation")
ax_w.legend(fontsize=8, loc="lower left")
fig.tight_layout()
show(fig)
