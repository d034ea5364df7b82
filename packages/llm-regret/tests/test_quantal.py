"""The quantal-response model of the paper's Sec. 4: it is FTPL, and fitting it to what an agent played
recovers the agent's noise scale, or says the agent is closer to uniform or FTL."""

import numpy as np
import pytest

from iclr25.llm_regret import FTL, FTPL, LLMAgent, Uniform, fit_quantal_response, loss_sequences, run_online


@pytest.mark.parametrize("scale", [0.3, 2.0])
def test_fit_recovers_the_noise_scale_of_ftpl(scale):
    run = run_online(FTPL(scale=scale), loss_sequences("uniform", T=40, d=2, n_seeds=5, seed=2))
    fit = fit_quantal_response(run.losses, run.policies)
    assert abs(np.log(fit.scale / scale)) < 0.05 and fit.mse < 1e-5 and not fit.at_edge
    assert fit.mse < 0.01 * min(fit.mse_uniform, fit.mse_ftl)


def test_uniform_and_ftl_fit_at_the_edges_of_the_grid():
    L = loss_sequences("uniform", T=30, d=2, n_seeds=3)
    unif = fit_quantal_response(*(lambda r: (r.losses, r.policies))(run_online(Uniform(), L)))
    ftl = fit_quantal_response(*(lambda r: (r.losses, r.policies))(run_online(FTL(), L)))
    assert unif.at_edge and unif.scale == 1e3 and ftl.at_edge and ftl.scale == 1e-3


def test_an_llm_transcript_can_be_fitted():
    """An 'LLM' that answers with FTPL's probabilities (scale 0.8) through the text protocol."""
    from scipy.special import ndtr

    def model(prompt):
        rows = [line for line in prompt.splitlines() if line.startswith("Round ")]
        L = np.zeros(2)
        for line in rows:
            L += [float(x.split("=")[1]) for x in line.split(":", 1)[1].split(",")]
        p0 = float(ndtr((L[1] - L[0]) / (0.8 * np.sqrt(max(len(rows), 1)) * np.sqrt(2))))
        return f"[{p0:.4f}, {1 - p0:.4f}]"

    agent = LLMAgent(model)
    run = run_online(agent, loss_sequences("gaussian", T=30, d=2, n_seeds=1, seed=1))
    assert agent.parse_failures == 0
    fit = fit_quantal_response(run.losses, run.policies)
    assert abs(np.log(fit.scale / 0.8)) < 0.1 and fit.mse < 1e-3


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="losses and policies must both be"):
        fit_quantal_response(np.zeros((2, 5, 2)), np.zeros((2, 4, 2)))
    with pytest.raises(ValueError, match="scales must be"):
        fit_quantal_response(np.zeros((1, 5, 2)), np.full((1, 5, 2), 0.5), scales=[-1.0, 1.0])
    from iclr25.llm_regret import quantal_response

    with pytest.raises(ValueError, match="noise must be one of"):
        quantal_response(np.zeros(2), 1, 1.0, noise="cauchy")
