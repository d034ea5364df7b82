"""The paper's claims at small scale, from the claims registry (``iclr25.llm_regret.claims``: seeds 0, 1, 2,
each decided by its stated rule), and the exact properties the claims rest on (seeded; each can fail)."""

from pathlib import Path

import numpy as np
import pytest

from iclr25.llm_regret import (
    FAMILIES,
    Hedge,
    cce_gap,
    loss_sequences,
    play,
    random_general_sum,
    regret_statistics,
    run_online,
)
from iclr25.llm_regret.claims import REGISTRY

T, D, SEEDS = 200, 2, 50

test_claim = REGISTRY.pytest_test("test")

# the committed claims.json (written by the repro rung) and claims-calibration.json agree with the registry
test_committed_claims = REGISTRY.pytest_committed_test(Path(__file__).parents[1])


@pytest.fixture(scope="module")
def losses():
    return {f: loss_sequences(f, T=T, d=D, n_seeds=SEEDS, seed=i) for i, f in enumerate(FAMILIES)}


def test_hedge_within_its_bound_on_every_seed(losses):
    for family in FAMILIES:
        agent = Hedge()
        run = run_online(agent, losses[family])
        assert np.all(run.final_regret <= agent.bound(T, D)), family


def test_the_trend_test_can_reject_nothing_for_a_linear_learner(losses):
    # the uniform policy on a family with a gap between the means has linear regret: the tests must say so
    from iclr25.llm_regret import Uniform

    st = regret_statistics(run_online(Uniform(), losses["uniform"]).regret, n_boot=0)
    assert st.slope.beta > 0.95


def test_cce_gap_equals_max_regret_over_T():
    game = random_general_sum(3, 2, seed=4)
    for T_ in (50, 400):
        run = play(game, T=T_, seed=0)
        gap = cce_gap(game, run.joint_distribution())
        assert abs(gap - max(r[-1] for r in run.regret) / T_) < 1e-9
