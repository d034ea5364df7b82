# %% [markdown]
# # Repeated games: no-regret self-play finds the equilibrium
#
# When both players of a zero-sum game are no-regret, their time-averaged strategies approach a Nash
# equilibrium: the duality gap of the average play is at most the sum of the two average regrets. Hedge plays
# itself for 2,000 rounds in six random 3×3 zero-sum games. Left: the duality gap of the average play over time
# (one line per game); right: in the first game, player 1's last iterate against its running average and the
# equilibrium strategy from the linear program: the last iterate cycles ever wider, the average settles.

# %%
import numpy as np

from iclr25.llm_regret import Hedge, duality_gap, play, random_zero_sum, zero_sum_value
from iclr25.utils.plotting import show, subplots

T = 2000
games = [random_zero_sum(3, 3, seed=s) for s in range(6)]
checkpoints = np.unique(np.geomspace(1, T, 40).astype(int))
gaps, runs = [], []
for s, game in enumerate(games):
    run = play(game, [Hedge(), Hedge()], T=T, seed=0)  # full information: each sees its expected loss vector
    avg = [np.cumsum(p, axis=0) / np.arange(1, T + 1)[:, None] for p in run.policies]  # running averages
    gaps.append([duality_gap(game.losses[0], avg[0][t - 1], avg[1][t - 1]) for t in checkpoints])
    runs.append((run, avg))
    print(f"game {s}: duality gap of the average play at T = {T}: {gaps[-1][-1]:.4f} "
          f"(average regrets {run.regret[0][-1] / T:.4f} + {run.regret[1][-1] / T:.4f})")

# %%
value, x_star, _ = zero_sum_value(games[0].losses[0])  # the equilibrium of game 0, by linear programming
print(f"game 0: value {value:.3f}, player 1's equilibrium strategy {np.round(x_star, 2)}")
fig, (ax, ax_p) = subplots(1, 2, size=(4.0, 3.3))
for k, g in enumerate(gaps):
    ax.plot(checkpoints, g, color="C3" if k == 0 else "0.6", linewidth=2 if k == 0 else 1,
            label="game 0" if k == 0 else ("games 1-5" if k == 1 else None))
ax.set(xscale="log", yscale="log", title="Average play → equilibrium", xlabel="round t",
       ylabel="duality gap of the average strategies")
ax.legend(fontsize=8, loc="lower left")
run, avg = runs[0]
t = np.arange(1, T + 1)
for a in range(3):
    line, = ax_p.plot(t, run.policies[0][:, a], linewidth=0.8, alpha=0.5)
    ax_p.plot(t, avg[0][:, a], color=line.get_color(), linewidth=2, label=f"action {a + 1}")
    ax_p.axhline(x_star[a], color=line.get_color(), linestyle=":", linewidth=1.2)
ax_p.set(xscale="log", title="Game 0, player 1", xlabel="round t", ylabel="probability of the action",
         ylim=(-0.03, 1.12))
ax_p.legend(fontsize=8, loc="upper left", title="thin: last iterate\nthick: average\ndotted: equilibrium",
            title_fontsize=8)
fig.tight_layout()
show(fig)
