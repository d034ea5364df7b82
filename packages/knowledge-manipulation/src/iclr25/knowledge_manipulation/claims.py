"""The paper's claims that this package checks, declared once for tests, ``repro`` and the README table.

One measurement per seed is one run of the paper's protocol (:func:`.experiments.run_experiment`): a seeded
population (half train, half test people), Stage A pretraining of a rotary GPT on their biographies plus
birth-date retrieval QAs of everyone (extractable mode), then one fine-tune per task from that checkpoint
(month parity without and with CoT, inverse search), each evaluated on train and test people; the no-CoT
month-parity fine-tune is also scored with a CoT prompt (CoT at inference only, the second half of R3).
Every claim of a seed comes from that one run. The seed draws the people, the biographies, the initialisation
and the batches.

Both rungs run :func:`.commands.test_config` (N = 100 people; the demo's setting). ``test`` (the default test
suite) loads the Stage A models of seeds 0-4 that ship with the package (:mod:`.checkpoints`), so only the
fine-tunes run; ``repro`` trains Stage A at every seed as well, which also checks that the shipped checkpoints
are what the code makes.
"""

from __future__ import annotations

from iclr25.utils.claims import Claim, ClaimRegistry, Measurement

__all__ = ["REGISTRY", "rung_config"]

REGISTRY = ClaimRegistry("iclr25-knowledge-manipulation",
                         seeds={"test": (0, 1, 2, 3, 4), "repro": (0, 1, 2, 3, 4)})

NO_COT, COT, INVERSE = ("classification:birth_month:mod2", "classification:birth_month:mod2:cot",
                        "inverse:birth_date+birth_city")


def rung_config(rung: str):
    """The experiment a rung runs at every seed."""
    from .commands import test_config

    REGISTRY.rung_seeds(rung)  # unknown rungs raise here
    return test_config()


@REGISTRY.measures(
    Claim("knowledge-extractable", statement="Stage A stores every person's birth date and it is retrievable on "
          "test people (the premise of the manipulation claims)", paper="retrieval ~100 % (extractable mode)",
          metric="birth-date retrieval, test people, after Stage A", direction="higher", threshold=0.9,
          rule="every_seed", note="1.00 at seeds 0-4 (train and test people); 0.9 allows 5 of 50 test people "
          "missed"),
    Claim("inverse-search-fails", statement="inverse search (name from birth date and city) fails on test "
          "people although it is learned on train people", paper="R4: inverse search ~0 % on test people",
          metric="inverse search exact match, test people", direction="lower", threshold=0.05,
          rule="every_seed", note="0.00 at seeds 0-4; 0.05 allows 2 of 50 test people (chance is 1/50)"),
    Claim("inverse-search-fits-train", statement="the inverse-search fine-tune fits its train people (the failure "
          "on test people is not a failure to learn the format)", paper="R4 (train accuracy high)",
          metric="inverse search exact match, train people", direction="higher", threshold=0.8,
          rule="every_seed", note="0.98-1.00 at seeds 0-4 (30 fine-tune epochs at lr 2e-3; 0.94-1.00 at lr 1e-3; "
          "15 epochs at 1e-3 gave 0.16-0.42, an under-fit); 0.8 is 0.18 below the worst seed"),
    Claim("cot-beats-no-cot", statement="month-parity classification of test people is better when the answer "
          "first states the month (CoT in training and inference) than without CoT",
          paper="R2/R3: no-CoT near chance, CoT near retrieval accuracy", metric="month-parity accuracy, test "
          "people, CoT fine-tune", direction="higher", baseline="no-CoT fine-tune", rule="mean_ci",
          note="gaps +0.40, +0.16, +0.16, +0.28, +0.14 at seeds 0-4 (mean +0.23, sd 0.11; every fine-tune fits its "
          "train people, 1.00); margin 0 (the claim is that CoT helps); the mean's 95 % interval [+0.09, +0.37] "
          "measured, so the mean would have to fall by 0.09 (about 2 standard errors) to flip the verdict. At "
          "fine-tune lr 1e-3 (0.2.0) the CoT fine-tune under-fitted at seed 2 (train 0.52) and the interval was "
          "[+0.03, +0.22]"),
    Claim("cot-at-inference-only-does-not-help", statement="CoT at inference only does not help: the no-CoT "
          "fine-tune, prompted with the CoT step (the question, then the true month, then 'so'), classifies test "
          "people no better than it does without the CoT prompt",
          paper="R3: CoT at inference only, without CoT training, does not help",
          metric="month-parity accuracy, test people, no-CoT fine-tune with a CoT prompt (forced choice of the "
          "label)", direction="lower", baseline="no-CoT fine-tune, no-CoT prompt", rule="mean_ci",
          note="CoT-prompt accuracy 0.46, 0.44, 0.48, 0.48, 0.64 at seeds 0-4, at or below the majority label "
          "(0.54, 0.56, 0.60, 0.50, 0.50), against no-CoT 0.60-0.72: differences -0.14, -0.26, -0.22, -0.18, -0.08 "
          "(mean -0.18, sd 0.07); margin 0: the interval of the mean drop must exclude 'no drop' ([+0.09, +0.26] "
          "measured). The oracle month in the prompt is the most a CoT prompt can supply"),
)
def _protocol(seed: int, rung: str) -> dict[str, Measurement | float]:
    from iclr25.utils.cli import set_torch_threads

    from .experiments import run_experiment

    set_torch_threads(1)
    from .checkpoints import load_stage_a

    # test: Stage A shipped (checkpoints.py), only the fine-tunes run; repro: Stage A trained here
    res = run_experiment(rung_config(rung), seed=seed, pre=load_stage_a(seed) if rung == "test" else None,
                         retrieval_after=False)
    no_cot, cot, inv = res.finetune_of(NO_COT), res.finetune_of(COT), res.finetune_of(INVERSE)
    return {"knowledge-extractable": res.retrieval["birth_date"][1],
            "inverse-search-fails": inv.test.accuracy,
            "inverse-search-fits-train": inv.train.accuracy,
            "cot-beats-no-cot": Measurement(cot.test.accuracy, reference=no_cot.test.accuracy,
                                            extra={"chance": no_cot.test.chance,
                                                   "no_cot_train": no_cot.train.accuracy,
                                                   "cot_train": cot.train.accuracy}),
            "cot-at-inference-only-does-not-help": Measurement(
                no_cot.cot_prompt[1].accuracy, reference=no_cot.test.accuracy,
                extra={"chance": no_cot.test.chance, "cot_prompt_train": no_cot.cot_prompt[0].accuracy})}
