"""The paper's claims as this package checks them, decided over seeds (``iclr25.utils.claims``).

One pipeline run per seed and rung (:func:`iclr25.mmed_rag.experiments.run_pipeline`) measures every claim:
the router, per-domain vs pooled retrieval, the gap rule, and the RAG-PT model's VQA accuracy and copy rate,
each beside its trivial reference: the training set's majority answer ("answer prior") for accuracy, and a
constant "yes" answer for the copy rate (a model that answers "yes" to every noise image has a copy rate equal
to the share of true "yes" answers, so a copy rate at that level measures a shortcut, not grounding).

One rung, ``test`` (36 / 24 / 16 images per domain, about 10 s per seed), used by the default suite and by
``repro`` (which writes ``claims.json`` beside its single-seed ladder; a larger rung at 3 seeds would not fit
the repro's 10 minutes). ``iclr25 claims mmed-rag --rung test --out DIR`` writes ``claims.json``.

References: Xia et al., *MMed-RAG*, ICLR 2025 (§3.1 domain-aware retrieval, §3.2 adaptive selection, §3.3
RAG-PT, Table 1; the copy-rate analysis of §2).
"""

from __future__ import annotations

import dataclasses

from iclr25.utils.claims import Claim, ClaimRegistry, Measurement

__all__ = ["REGISTRY"]

REGISTRY = ClaimRegistry("iclr25-mmed-rag", seeds={"test": (0, 1, 2)})

LADDER = "README.md#results"


def _configs() -> dict:
    from .experiments import PipelineConfig

    return {
        "test": PipelineConfig(n_train=36, n_db=24, n_test=16, router_steps=40, retriever_steps=10, sft_steps=30,
                               mine_images=16, dpo_steps=8, pooled_baseline=True, n_report_eval=1,
                               report_pairs=False),
    }


@REGISTRY.measures(
    Claim("router-accuracy", statement="the domain router sends each image to its own domain's retriever",
          paper="domain identification by a fine-tuned BiomedCLIP (no number given)",
          metric="router accuracy, test images", direction="higher", threshold=0.99, rule="every_seed",
          note="the issue's 0.99 target; measured 1.000 at each of seeds 0-4 of the test rung (no spread), so "
               "no extra margin"),
    Claim("per-domain-beats-pooled", statement="domain-aware retrieval (one retriever and shard per domain) "
          "retrieves better than one pooled retriever",
          paper="ablation: domain-aware retrieval improves every dataset", metric="recall@5 (exact label match)",
          direction="higher", baseline="pooled retriever (same data and steps)", margin=0.0, rule="mean_ci",
          expect="fails", ladder=LADDER,
          note="95 % CI of the mean difference must clear 0; at seeds 0-4 of the test rung the difference is "
               "+0.15, -0.02, +0.06, -0.02, +0.06 (mean +0.05), so the interval over seeds 0-2 includes 0 and "
               "the claim is not decided as holding; the README ladder has it holding at rung M (one seed)"),
    Claim("gap-rule-precision", statement="the gap rule keeps fewer, better contexts than fixed k",
          paper="adaptive selection improves accuracy (ablation, §4.3)",
          metric="context precision on the asked finding, gap rule (γ = 0.02)", direction="higher",
          baseline="fixed k = 3", margin=0.02, rule="mean_ci", expect="fails", ladder=LADDER,
          note="margin 0.02 of precision (the difference is 0 at each of seeds 0-4 of the test rung); "
               "does not hold: precision is flat in rank (README ladder, retrieval ablation) and at γ = 0.02 "
               "the rule keeps k = 3 almost always"),
    Claim("vqa-accuracy-beats-answer-prior", statement="MMed-RAG (router + gap rule + RAG-PT) improves VQA "
          "factual accuracy over the base model",
          paper="+43.8 % factual accuracy on average (Table 1)", metric="VQA accuracy, MMed-RAG",
          direction="higher", baseline="answer prior (training majority answer)", margin=0.0, rule="every_seed",
          expect="fails", ladder=LADDER,
          note="the answer prior, not the no-retrieval model, is the bar: the tiny SFT model answers 'no' to "
               "everything at these budgets, so no-RAG accuracy equals the prior; at each of seeds 0-4 of the test "
               "rung MMed-RAG is level with it (8 DPO steps leave it answering 'no' to everything)"),
    Claim("copy-rate-below-constant-answer", statement="RAG-PT reduces copying: with the image replaced by noise "
          "and the retrieved reports kept, the model no longer gives the right answer",
          paper="copy rate 55.08 % for standard RAG, reduced by RAG-PT (§2, Fig. 2)",
          metric="copy rate of MMed-RAG (accuracy with a noise image, contexts kept)", direction="lower",
          baseline="constant 'yes' answer (share of true 'yes')", margin=0.0, rule="every_seed", expect="fails",
          ladder=LADDER,
          note="the trivial reference of issue 41: at seeds 0-4 of the test rung RAG-PT still answers 'no' to "
               "every noise image (copy rate = share of 'no', 0.68-0.76, far above a constant 'yes'); where the "
               "ladder's RAG-PT lowers the copy rate (rungs S, M) it does so by answering 'yes' to noise images"),
)
def _pipeline(seed: int, rung: str) -> dict[str, Measurement | float]:
    import torch

    from .experiments import run_pipeline

    cfg = _configs()[rung]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        m = run_pipeline(dataclasses.replace(cfg), seed=seed).metrics
    finally:
        torch.set_num_threads(threads)
    return {
        "router-accuracy": m["router_accuracy"],
        "per-domain-beats-pooled": Measurement(m["recall@5"], reference=m["recall@5_pooled"]),
        "gap-rule-precision": Measurement(m["precision_gap"], reference=m["precision_fixed_k"],
                                          extra={"mean_k_gap": m["mean_k_gap"]}),
        "vqa-accuracy-beats-answer-prior": Measurement(
            m["acc_mmed_rag"], reference=m["acc_answer_prior"],
            extra={"acc_no_rag": m["acc_no_rag"], "acc_sft_fixed_k": m["acc_sft_fixed_k"]}),
        "copy-rate-below-constant-answer": Measurement(
            m["copy_rate_mmed_rag"], reference=m["copy_rate_always_yes"],
            extra={"copy_rate_sft": m["copy_rate_sft"], "yes_rate_noise_mmed_rag": m["yes_rate_noise_mmed_rag"]}),
    }
