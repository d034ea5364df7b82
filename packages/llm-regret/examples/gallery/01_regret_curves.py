# %% [markdown]
# # Regret curves: who is no-regret, and where FTL fails
#
# A learner is no-regret when its average regret Regret_t / t goes to zero. Hedge, FTPL, Follow-the-Leader and
# EXP3 (bandit feedback: it sees only the loss of the action it played) play the paper's loss families, 20
# sequences each, beside the uniform policy for reference. Left: a drifting best action (linear trend), where
# every learner's average regret falls; right: the alternating sequence, on which FTL keeps switching to the
# action about to lose. Lines: Regret_t / t averaged over the sequences; the legend gives the paper's slope β̂₀
# of log Regret_t in log t (below 1: sublinear regret).

# %%
import numpy as np

from iclr25.llm_regret import EXP3, FTL, FTPL, Hedge, Uniform, loss_sequences, regret_statistics, run_online
from iclr25.utils.plotting import show, subplots

T = 500
families = ("linear_trend", "alternating")
agents = (Hedge(), FTPL(), FTL(), EXP3(), Uniform())
runs = {}
for fam in families:
    L = loss_sequences(fam, T=T, d=2, n_seeds=20, seed=0)  # (sequences, rounds, actions), losses in [0, 1]
    for agent in agents:
        runs[fam, agent.name] = run_online(agent, L, seed=0)
        st = regret_statistics(runs[fam, agent.name].regret)
        runs[fam, agent.name, "stats"] = st
        print(f"{fam:12s} {agent.name:8s} Regret/T {st.regret_over_T:.3f}  trend p {st.trend.p_value:.2g}  "
              f"slope {st.slope.beta:.2f} [{st.slope.low:.2f}, {st.slope.high:.2f}]")

# %%
fig, axes = subplots(1, 2, size=(4.0, 3.3), sharey=True)
t = np.arange(1, T + 1)
for ax, fam in zip(axes, families):
    for k, agent in enumerate(agents):
        st = runs[fam, agent.name, "stats"]
        ax.plot(t, runs[fam, agent.name].mean_curve / t, color=f"C{k}", linestyle="--" if agent.name == "uniform"
                else "-", label=f"{agent.name} (β̂₀ = {st.slope.beta:.2f})")
    ax.set(xscale="log", title=fam.replace("_", " ") + " losses", xlabel="round t")
    ax.legend(fontsize=8, loc="upper right" if fam == "linear_trend" else "center right")
axes[0].set_ylabel(r"average regret  $\mathrm{Regret}_t\,/\,t$")
fig.tight_layout()
show(fig)
