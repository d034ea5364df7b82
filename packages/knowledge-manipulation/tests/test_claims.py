"""The paper's claims at small scale, from the claims registry (``iclr25.knowledge_manipulation.claims``): at the
``test`` rung, five seeds of Stage B (month parity without and with CoT, inverse search) on the shipped Stage A
checkpoints of N = 100 people, each claim decided by its stated rule over seeds 0-4. The ``repro`` rung trains
Stage A too, at N = 200."""

import json

from iclr25.knowledge_manipulation.checkpoints import STAGE_A_DIR, load_stage_a, shipped_seeds, stage_a_fields
from iclr25.knowledge_manipulation.claims import REGISTRY
from iclr25.knowledge_manipulation.commands import test_config as rung_config

test_claim = REGISTRY.pytest_test("test")


def test_shipped_checkpoints_cover_the_test_rung_and_match_the_code():
    man = json.loads((STAGE_A_DIR / "manifest.json").read_text())
    assert set(REGISTRY.rung_seeds("test")) <= set(shipped_seeds())
    assert stage_a_fields(man["config"]) == stage_a_fields(rung_config().to_dict())
    assert man["command"].startswith("python -m iclr25.knowledge_manipulation.checkpoints")
    assert not list(STAGE_A_DIR.glob("*.pt")) and not list(STAGE_A_DIR.glob("*.pkl"))  # no pickle shipped
    pre = load_stage_a(0)
    assert pre.model.cfg.vocab_size == pre.tokenizer.vocab_size and len(pre.population) == rung_config().n_people
