"""The paper's claims at small scale, from the claims registry (``iclr25.knowledge_manipulation.claims``): at the
``test`` rung, five seeds of Stage B (month parity without and with CoT, inverse search) on the shipped Stage A
checkpoints of N = 100 people, each claim decided by its stated rule over seeds 0-4. The ``repro`` rung trains
Stage A too (same N = 100), decides every claim over seeds 0-4 and adds the fine-tune data / epoch ladder and
comparison (``repro`` only); the ``cot`` rung decides the two CoT claims alone (N = 200, 90 epochs, seeds 10-19).
The committed files of every rung are checked against the registry (``test_committed_claims``)."""

import json
from pathlib import Path

from iclr25.knowledge_manipulation.checkpoints import STAGE_A_DIR, load_stage_a, shipped_seeds, stage_a_fields
from iclr25.knowledge_manipulation.claims import REGISTRY
from iclr25.knowledge_manipulation.experiments import test_config as rung_config

test_claim = REGISTRY.pytest_test("test")
# the committed claims.json (written by repro), claims-calibration.json and claims-calibration-<rung>.json agree with
# the registry
test_committed_claims = REGISTRY.pytest_committed_test(Path(__file__).resolve().parents[1])


def test_shipped_checkpoints_cover_the_test_rung_and_match_the_code():
    man = json.loads((STAGE_A_DIR / "stage_a.json").read_text())
    assert json.loads((STAGE_A_DIR / "manifest.json").read_text())["files"].keys() == {
        "stage_a.json", *(f"seed{s}.npz" for s in shipped_seeds())}  # every shipped file's hash
    assert set(REGISTRY.rung_seeds("test")) <= set(shipped_seeds())
    assert stage_a_fields(man["config"]) == stage_a_fields(rung_config().to_dict())
    assert man["command"].startswith("python -m iclr25.knowledge_manipulation.checkpoints")
    assert not list(STAGE_A_DIR.glob("*.pt")) and not list(STAGE_A_DIR.glob("*.pkl"))  # no pickle shipped
    pre = load_stage_a(0)
    assert pre.model.cfg.vocab_size == pre.tokenizer.vocab_size and len(pre.population) == rung_config().n_people


def test_repro_rung_has_the_ladder_and_comparison_claims():
    at_repro, at_test = set(REGISTRY.claims_at("repro")), set(REGISTRY.claims_at("test"))
    assert at_test < at_repro
    assert {"no-cot-memorises-train-3x-epochs", "comparison-cot-beats-no-cot",
            "comparison-cot-prompt-stays-at-chance"} <= at_repro - at_test
    assert len(REGISTRY.rung_seeds("repro")) >= 5


def test_cot_claims_have_their_own_rung_of_ten_untuned_seeds():
    at_cot = set(REGISTRY.claims_at("cot"))
    assert at_cot == {"cot-beats-no-cot", "cot-at-inference-only-does-not-help"}
    assert not at_cot & (set(REGISTRY.claims_at("test")) | set(REGISTRY.claims_at("repro")))
    seeds, cal = set(REGISTRY.rung_seeds("cot")), set(REGISTRY.calibration_seeds("cot"))
    assert len(seeds) >= 10 and len(cal) >= 10 and not seeds & cal
    assert not seeds & {0, 1, 2, 3, 4}  # the ablation that chose the cot rung's 90 epochs ran seeds 0-4


def test_per_seed_table():
    from iclr25.knowledge_manipulation.repro import per_seed_markdown

    row = {"condition": "30 epochs", "task": "classification:birth_month:mod2", "train": 1.0, "test": 0.6,
           "chance": 0.5, "cot_step_test": None, "cot_prompt_test": 0.4, "retrieval_test_after": 1.0}
    text = per_seed_markdown({0: [row], 1: [dict(row, test=0.8)]})
    assert "| 30 epochs | classification:birth_month:mod2 | 0.60 (1.00) | 0.80 (1.00) | 0.70 | 0.50 |" in text
    assert "+ CoT prompt (CoT at inference only) | 0.40 | 0.40 | 0.40 |" in text
