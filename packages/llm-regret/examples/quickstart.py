# %% [markdown]
# # iclr25-llm-regret quickstart
# Is an agent no-regret? Run it against the paper's loss families and read the two statistics of the paper:
# the trend test on Regret_t / t and the slope of log Regret_t against log t.

# %%
import numpy as np

from iclr25.llm_regret import FTL, CallableAgent, Hedge, loss_sequences, regret_statistics, run_online

L = loss_sequences("alternating", T=200, d=2, n_seeds=20, seed=0)  # the sequence that defeats FTL
for agent in (Hedge(), FTL()):
    st = regret_statistics(run_online(agent, L).regret)
    print(f"{agent.name:6s} Regret/T {st.regret_over_T:.3f}  trend p {st.trend.p_value:.2g}  "
          f"slope {st.slope.beta:.2f} [{st.slope.low:.2f}, {st.slope.high:.2f}]")

# %% [markdown]
# Any function of the loss history is an agent — an LLM is one (`LLMAgent(OpenAIChat(url, model))`).

# %%
def lazy_follower(history: np.ndarray) -> np.ndarray:
    """Play the last round's better action with probability 0.9."""
    if len(history) == 0:
        return np.array([0.5, 0.5])
    return np.where(history[-1] == history[-1].min(), 0.9, 0.1)


st = regret_statistics(run_online(CallableAgent(lazy_follower, name="lazy"), L[:2]).regret)
print(f"lazy   Regret/T {st.regret_over_T:.3f}  slope {st.slope.beta:.2f}")
