"""The repro's claim checks apply the issue's thresholds exactly (the full repro is too slow for this suite)."""

import pytest

from iclr25.mmed_rag.repro import claims

PASS = {"router_accuracy": 0.995, "recall@5": 0.8, "recall@5_random": 0.3, "recall@5_pooled": 0.7,
        "precision_gap": 0.80, "precision_fixed_k": 0.75, "mean_k_gap": 2.5, "mean_k_fixed": 3.0,
        "acc_no_rag": 0.70, "acc_sft_fixed_k": 0.72, "acc_mmed_rag": 0.74, "copy_rate_sft": 0.60,
        "copy_rate_mmed_rag": 0.45, "harm_rate_sft": 0.20, "harm_rate_mmed_rag": 0.14, "bleu_no_rag": 40.0,
        "bleu_mmed_rag": 41.0, "rouge_l_no_rag": 60.0, "rouge_l_mmed_rag": 61.0}


def test_all_hold_at_the_thresholds():
    assert all(ok for _, _, ok in claims(PASS)), [c for c in claims(PASS) if not c[2]]


@pytest.mark.parametrize("key, value, claim", [
    ("router_accuracy", 0.985, "router"),
    ("recall@5_random", 0.41, "2× random"),
    ("recall@5_pooled", 0.81, "pooled"),
    ("precision_gap", 0.79, "gap-rule"),
    ("mean_k_gap", 3.0, "gap-rule"),
    ("acc_mmed_rag", 0.73, "SFT + fixed-k RAG + 0.02"),
    ("copy_rate_mmed_rag", 0.51, "copy rate"),
    ("copy_rate_sft", 0.54, "copy rate"),
    ("harm_rate_mmed_rag", 0.15, "harm rate"),
    ("acc_no_rag", 0.72, "ordering"),
    ("bleu_mmed_rag", 39.0, "BLEU"),
])
def test_each_claim_can_fail(key, value, claim):
    failed = [name for name, _, ok in claims(dict(PASS, **{key: value})) if not ok]
    assert len(failed) == 1 and claim in failed[0], failed
