"""The paper's claims at small scale (claim 2 of the issue), seeded: N = 200 people (100 train / 100 test),
a 2-layer d = 64 rotary GPT pretrained on biographies + retrieval QAs of everyone (extractable mode), then
one fine-tune per task from that checkpoint.

- R4: inverse search is learned for train people (>= 0.8) and fails for test people (<= 0.05);
- R2/R3: month-parity classification on test people is at least 0.2 better with CoT than without;
- retrieval of test people stays high after every fine-tune, so no failure is forgetting.
"""

import pytest

from iclr25.knowledge_manipulation.commands import claim_config
from iclr25.knowledge_manipulation.experiments import run_experiment


@pytest.fixture(scope="module")
def small_run():
    from iclr25.utils.cli import set_torch_threads

    set_torch_threads(1)
    return run_experiment(claim_config(), seed=0)


def test_knowledge_is_stored_and_extractable(small_run):
    train, test = small_run.retrieval["birth_date"]
    assert train >= 0.9 and test >= 0.9
    for f in small_run.finetunes:
        assert f.retrieval_test_after >= 0.8, f.task


def test_inverse_search_fails_on_test_people(small_run):
    inv = small_run.finetune_of("inverse:birth_date+birth_city")
    assert inv.train.accuracy >= 0.8
    assert inv.test.accuracy <= 0.05


def test_cot_beats_no_cot_on_test_people(small_run):
    no_cot = small_run.finetune_of("classification:birth_month:mod2")
    cot = small_run.finetune_of("classification:birth_month:mod2:cot")
    assert cot.test.accuracy - no_cot.test.accuracy >= 0.2
    assert no_cot.train.accuracy >= 0.8  # memorised on train people: fitting is not the bottleneck
