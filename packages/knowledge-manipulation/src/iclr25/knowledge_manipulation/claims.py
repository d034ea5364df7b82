"""The paper's claims that this package checks, declared once for tests, ``repro`` and the README table.

One measurement per seed is one run of the paper's protocol (:func:`.experiments.run_experiment`): a seeded
population (half train, half test people), Stage A pretraining of a rotary GPT on their biographies plus
birth-date retrieval QAs of everyone (extractable mode), then one fine-tune per task from that checkpoint
(month parity without and with CoT, inverse search), each evaluated on train and test people; the no-CoT
month-parity fine-tune is also scored with a CoT prompt (CoT at inference only, the second half of R3).
Every claim of a seed comes from that one run. The seed draws the people, the biographies, the initialisation
and the batches.

Both rungs run :func:`.experiments.test_config` (N = 100 people; the demo's setting). ``test`` (the default test
suite) loads the Stage A models of seeds 0-4 that ship with the package (:mod:`.checkpoints`), so only the
fine-tunes run; ``repro`` trains Stage A at every seed as well, which also checks that the shipped checkpoints
are what the code makes.

The ``repro`` rung adds the paper's fine-tune data / epoch ladder (reduced): month parity without and with CoT
fine-tuned for three times the epochs (90) and on half the train people (25, for 60 epochs: the same number
of steps), month comparison without and with CoT (200 pairs of train people, 15 epochs), and, from a Stage A
model of twice the people (N = 200, the same recipe), month parity without and with CoT on 50 and on all 100
of its train people (30 epochs), each decided over the same five seeds. :data:`DETAILS` keeps every fine-tune's numbers per seed for ``repro``'s per-seed table.
"""

from __future__ import annotations

from iclr25.utils.claims import Claim, ClaimRegistry, Measurement

__all__ = ["REGISTRY", "rung_config"]

#: the CoT claims decide on 10 seeds at the ``repro`` rung (issue 58: at 5 seeds a gap of the size measured passes
#: with well under 95 % probability); calibration seeds 100-104, five because one seed of the repro rung costs
#: about 72 s of CPU (100 s wall at seed 105, 2026-12-05, load ~2)
REGISTRY = ClaimRegistry("iclr25-knowledge-manipulation",
                         seeds={"test": (0, 1, 2, 3, 4), "repro": tuple(range(10))},
                         calibration={"test": range(100, 105), "repro": range(100, 105)})

NO_COT, COT, INVERSE = ("classification:birth_month:mod2", "classification:birth_month:mod2:cot",
                        "inverse:birth_date+birth_city")
CMP_NO_COT, CMP_COT = "comparison:birth_month", "comparison:birth_month:cot"

#: the repro rung's ladder of month-parity fine-tunes: name -> (train people used, None = all 50; epochs)
LADDER = {"3x epochs": (None, 90), "half data": (25, 60)}
#: the repro rung's larger-data rungs: a population of N = 200 (100 train people) with its own Stage A (the same
#: recipe), month parity without and with CoT fine-tuned for 30 epochs on 50 and on all 100 train people
LARGER_N, LARGER_TRAIN = 200, (50, 100)
#: the repro rung's comparison fine-tunes: pairs of train people and epochs (one pair per person, 50, covers too
#: few of the 132 ordered month pairs; 200 pairs x 15 epochs is twice the steps of the parity fine-tune)
COMPARE_PAIRS, COMPARE_EPOCHS = 200, 15

#: (seed, rung) -> one row per fine-tune (condition, task, train / test accuracy, majority label, CoT step,
#: CoT-prompt accuracy): what ``repro`` prints as its per-seed table
DETAILS: dict[tuple[int, str], list[dict]] = {}


def rung_config(rung: str):
    """The experiment a rung runs at every seed."""
    from .experiments import test_config

    REGISTRY.rung_seeds(rung)  # unknown rungs raise here
    return test_config()


@REGISTRY.measures(
    Claim("knowledge-extractable", kind="main", statement="Stage A stores every person's birth date and it is retrievable on "
          "test people (the premise of the manipulation claims)", paper="retrieval ~100 % (extractable mode)",
          metric="birth-date retrieval, test people, after Stage A", direction="higher", threshold=0.9,
          rule="every_seed", note="1.00 at seeds 0-4 (train and test people); 0.9 allows 5 of 50 test people "
          "missed"),
    Claim("inverse-search-fails", kind="main", statement="inverse search (name from birth date and city) fails on test "
          "people although it is learned on train people", paper="R4: inverse search ~0 % on test people",
          metric="inverse search exact match, test people", direction="lower", threshold=0.05,
          rule="every_seed", note="0.00 at seeds 0-4; 0.05 allows 2 of 50 test people (chance is 1/50)"),
    Claim("inverse-search-fits-train", kind="sanity", statement="the inverse-search fine-tune fits its train people (the failure "
          "on test people is not a failure to learn the format)", paper="R4 (train accuracy high)",
          metric="inverse search exact match, train people", direction="higher", threshold=0.8,
          rule="every_seed", note="0.98-1.00 at seeds 0-4 (30 fine-tune epochs at lr 2e-3; 0.94-1.00 at lr 1e-3; "
          "15 epochs at 1e-3 gave 0.16-0.42, an under-fit); 0.8 is 0.18 below the worst seed"),
    Claim("cot-beats-no-cot", kind="main", statement="month-parity classification of test people is better when the answer "
          "first states the month (CoT in training and inference) than without CoT",
          paper="R2/R3: no-CoT near chance, CoT near retrieval accuracy", metric="month-parity accuracy, test "
          "people, CoT fine-tune", direction="higher", baseline="no-CoT fine-tune", rule="mean_ci", rungs=("repro",),
          note="repro rung, seeds 0-9 (issue 58: at the test rung's 5 seeds the claim failed in one of two unseen "
          "5-seed blocks, gap +0.11 vs +0.23 at seeds 0-4, so a real gap of this size passes 5 seeds with well "
          "under 95 % probability); margin 0 (the claim is that CoT helps). NOT robust at 10 seeds: calibration "
          "seeds 100-104 (5, not 10: one repro seed costs about 72 s of CPU; claims-calibration-repro.json) "
          "give gaps +0.08, -0.02, -0.08, +0.34, -0.04 (mean +0.056, sd 0.17), max margin -0.16 < 0: a gap "
          "this size passes 10 seeds with well under 95 % probability; re-examination pending (2026-12-05). Every fine-tune "
          "fits its train people; at fine-tune lr 1e-3 (0.2.0) the CoT fine-tune under-fitted at seed 2"),
    Claim("cot-at-inference-only-does-not-help", kind="main", statement="CoT at inference only does not help: the no-CoT "
          "fine-tune, prompted with the CoT step (the question, then the true month, then 'so'), classifies test "
          "people no better than it does without the CoT prompt",
          paper="R3: CoT at inference only, without CoT training, does not help",
          metric="month-parity accuracy, test people, no-CoT fine-tune with a CoT prompt (forced choice of the "
          "label)", direction="lower", baseline="no-CoT fine-tune, no-CoT prompt", rule="mean_ci", rungs=("repro",),
          note="repro rung, seeds 0-9 (issue 58: failed in one of two unseen 5-seed blocks at the test rung); "
          "margin 0: the interval of the mean drop must exclude 'no drop'. Calibration seeds 100-104 (5, not 10: one "
          "repro seed costs about 72 s of CPU; claims-calibration-repro.json) give drops +0.28, +0.36, +0.06, "
          "+0.22, 0 (mean +0.18, sd 0.15), max margin -0.010 < 0: just short of 95 % at 10 seeds; "
          "re-examination (more seeds) pending (2026-12-05). The oracle month in the "
          "prompt is the most a CoT prompt can supply"),
)
def _protocol(seed: int, rung: str) -> dict[str, Measurement | float]:
    from iclr25.utils.cli import set_torch_threads

    from .experiments import pretrain, run_experiment

    set_torch_threads(1)
    from .checkpoints import load_stage_a, shipped_seeds

    # test: Stage A shipped (checkpoints.py) where the seed has one, only the fine-tunes run; repro, and a seed
    # that ships none (calibration and fresh seeds): Stage A trained here with the same recipe
    shipped = rung == "test" and seed in shipped_seeds()
    pre = load_stage_a(seed) if shipped else pretrain(rung_config(rung), seed=seed)
    res = run_experiment(rung_config(rung), seed=seed, pre=pre, retrieval_after=rung != "test")
    no_cot, cot, inv = res.finetune_of(NO_COT), res.finetune_of(COT), res.finetune_of(INVERSE)
    rows = [_row("30 epochs, 50 train people", f) for f in res.finetunes]
    out: dict[str, Measurement | float] = {
        "knowledge-extractable": res.retrieval["birth_date"][1],
        "inverse-search-fails": inv.test.accuracy,
        "inverse-search-fits-train": inv.train.accuracy,
        "cot-beats-no-cot": Measurement(cot.test.accuracy, reference=no_cot.test.accuracy,
                                        extra={"chance": no_cot.test.chance, "no_cot_train": no_cot.train.accuracy,
                                               "cot_train": cot.train.accuracy}),
        "cot-at-inference-only-does-not-help": Measurement(
            no_cot.cot_prompt[1].accuracy, reference=no_cot.test.accuracy,
            extra={"chance": no_cot.test.chance, "cot_prompt_train": no_cot.cot_prompt[0].accuracy})}
    DETAILS[(seed, rung)] = rows
    _PRE[(seed, rung)] = pre
    return out


#: (seed, rung) -> the Stage A model of :func:`_protocol`, reused by the repro rung's ladder
_PRE: dict = {}


@REGISTRY.measures(
    Claim("no-cot-gap-survives-3x-epochs", kind="secondary", statement="three times the fine-tune epochs (90) do not close the gap: "
          "the CoT fine-tune still classifies test people's month parity better than the no-CoT fine-tune, which "
          "has memorised its train people", paper="R2: no-CoT test accuracy rises only slowly with more "
          "fine-tuning epochs while train accuracy reaches ~100 %", metric="month-parity accuracy, test people, "
          "CoT fine-tune, 90 epochs", direction="higher", baseline="no-CoT fine-tune, 90 epochs", rule="mean_ci",
          rungs=("repro",), note="repro rung only (Stage A trained at seeds 0-4); margin 0, the 95 % interval of "
          "the mean gap (50 test people: the gap moves by several of them from seed to seed). Measured "
          "2026-12-02: gaps +0.38, +0.16, +0.20, +0.38, +0.08 (mean +0.24, interval [+0.07, +0.41]); at 30 "
          "epochs the same seeds give +0.40, +0.16, +0.16, +0.28, +0.14. Calibration seeds 100-104 "
          "(claims-calibration-repro.json): mean +0.15, sd 0.16, max margin -0.05 < 0 at 10 seeds: not robust; "
          "re-examination pending"),
    Claim("no-cot-memorises-train-3x-epochs", kind="sanity", statement="the no-CoT fine-tune at 90 epochs fits its train people "
          "(so its test accuracy is not an under-fit)", paper="R2: p_train accuracy ~100 %",
          metric="month-parity accuracy, train people, no-CoT fine-tune, 90 epochs", direction="higher",
          threshold=0.95, rule="every_seed", rungs=("repro",), note="1.00 at seeds 0-4; 0.95 allows 2 of 50 "
          "train people"),
    Claim("no-cot-gap-at-half-data", kind="secondary", statement="on half the train people (25, 60 epochs, the same number of steps) "
          "CoT still beats no-CoT on test people", paper="R2/R3: the gap at every amount of fine-tuning data",
          metric="month-parity accuracy, test people, CoT fine-tune on 25 train people", direction="higher",
          baseline="no-CoT fine-tune on 25 train people", rule="mean_ci", rungs=("repro",),
          note="margin 0, 95 % interval of the mean gap. Measured: gaps +0.28, +0.02, +0.08, +0.08, +0.20 (mean "
          "+0.13, interval [+0.001, +0.26]: holds by a hair). Neither fine-tune fits 25 people (train 0.76-0.96): "
          "the CoT one writes the month right for 0.90-1.00 of test people but maps only some months to their "
          "parity (the month -> parity table is learned from 25 examples). Calibration seeds 100-104 "
          "(claims-calibration-repro.json): mean +0.14, sd 0.11, max margin -0.003 < 0 at 10 seeds: not robust; "
          "re-examination pending"),
    Claim("comparison-cot-beats-no-cot", kind="main", statement="month comparison of two test people is better when the answer "
          "first states both months (CoT in training and inference) than without CoT",
          paper="R3: with CoT, comparison accuracy ~ the product of two retrievals", metric="month-comparison "
          "accuracy, test pairs, CoT fine-tune (200 train pairs)", direction="higher", baseline="no-CoT fine-tune "
          "(200 train pairs)", rule="mean_ci", rungs=("repro",), expect="fails",
          ladder="#why-cot-comparison-does-not-reproduce-ladder-and-ablation",
          note="margin 0, 95 % interval of the mean gap. Measured: gaps +0.08, -0.02, -0.10, +0.10, +0.16 (mean "
          "+0.04, interval [-0.08, +0.17]): does not hold. Both months are written right for 0.82-0.90 of test "
          "pairs; the comparison of two months is what fails (ladder and ablation in the README)"),
    Claim("comparison-cot-prompt-stays-at-chance", kind="secondary", statement="CoT at inference only does not help comparison: the "
          "no-CoT comparison fine-tune, prompted with both true months and 'so', stays near chance on test pairs",
          paper="R3: CoT at inference only, without CoT training, does not help", metric="month-comparison "
          "accuracy, test pairs, no-CoT fine-tune with a CoT prompt (forced choice)", direction="lower",
          threshold=0.6, rule="mean_ci", rungs=("repro",), note="chance 0.50 (labels alternate); bound chance + 5 "
          "of 50 pairs. Measured: 0.50, 0.50, 0.50, 0.54, 0.62 (the no-CoT prompt: 0.48, 0.68, 0.70, 0.58, 0.56). "
          "First declared every_seed from seeds 0 and 1 only (0.50, 0.50); seed 4's 0.62 is within the binomial "
          "spread of 50 pairs at chance (sd 0.07), so the rule is the interval of the mean, as for the "
          "classification claim: mean below the bound by 0.07, interval [+0.003, +0.13]"),
)
def _ladder_claims(seed: int, rung: str) -> dict[str, Measurement | float]:
    """The repro rung's fine-tune ladder and comparison, from the Stage A model of :func:`_protocol`."""
    if (seed, rung) not in _PRE:
        REGISTRY.measure("knowledge-extractable", seed, rung)  # runs _protocol (cached) for this seed
    pre = _PRE[(seed, rung)]
    return _repro_ladder(pre, pre.config.finetune, seed, DETAILS[(seed, rung)])


def _row(condition: str, f) -> dict:
    return {"condition": condition, "task": f.task, "train": f.train.accuracy, "test": f.test.accuracy,
            "chance": f.test.chance, "cot_step_test": f.test.cot_step,
            "cot_prompt_test": None if f.cot_prompt is None else f.cot_prompt[1].accuracy,
            "retrieval_test_after": f.retrieval_test_after}


def _finetune_row(pre, base, seed: int, rows: list[dict], task: str, condition: str, *, epochs: int,
                  n_train: int | None = None, n_pairs: int | None = None):
    """One fine-tune of ``task`` from ``pre`` (``base`` recipe at ``epochs``), scored on train and test people
    (and with the CoT prompt when it has no CoT); its row is appended to ``rows``."""
    import dataclasses

    from .experiments import FinetuneResult, eval_cot_prompt, eval_task, finetune, retrieval_accuracy

    model, stats = finetune(pre, task, config=dataclasses.replace(base, epochs=epochs), n_train=n_train,
                            n_pairs=n_pairs, seed=seed)
    tr, te = eval_task(model, pre, task, "train", seed=seed), eval_task(model, pre, task, "test", seed=seed)
    cp = None if task.endswith(":cot") else (eval_cot_prompt(model, pre, task, "train", seed=seed),
                                              eval_cot_prompt(model, pre, task, "test", seed=seed))
    f = FinetuneResult(task, tr, te, retrieval_accuracy(model, pre, "birth_date", "test").accuracy, stats, cp)
    rows.append(_row(condition, f))
    return f


def _repro_ladder(pre, base, seed: int, rows: list[dict]) -> dict[str, Measurement | float]:
    """The repro rung's extra fine-tunes from the same Stage A model: the month-parity ladder and comparison."""

    def run(task: str, condition: str, **kw):
        return _finetune_row(pre, base, seed, rows, task, condition, **kw)

    n3, e3 = LADDER["3x epochs"]
    nc3, c3 = (run(t, f"{e3} epochs, 50 train people", epochs=e3, n_train=n3) for t in (NO_COT, COT))
    nh, eh = LADDER["half data"]
    nch, ch = (run(t, f"{eh} epochs, {nh} train people", epochs=eh, n_train=nh) for t in (NO_COT, COT))
    cond = f"{COMPARE_EPOCHS} epochs, {COMPARE_PAIRS} train pairs"
    cmp_nc, cmp_c = (run(t, cond, epochs=COMPARE_EPOCHS, n_pairs=COMPARE_PAIRS) for t in (CMP_NO_COT, CMP_COT))
    return {
        "no-cot-gap-survives-3x-epochs": Measurement(c3.test.accuracy, reference=nc3.test.accuracy,
                                                     extra={"chance": nc3.test.chance, "no_cot_train": nc3.train.accuracy,
                                                            "cot_train": c3.train.accuracy}),
        "no-cot-memorises-train-3x-epochs": nc3.train.accuracy,
        "no-cot-gap-at-half-data": Measurement(ch.test.accuracy, reference=nch.test.accuracy,
                                               extra={"chance": nch.test.chance, "no_cot_train": nch.train.accuracy,
                                                      "cot_train": ch.train.accuracy}),
        "comparison-cot-beats-no-cot": Measurement(
            cmp_c.test.accuracy, reference=cmp_nc.test.accuracy,
            extra={"chance": cmp_nc.test.chance, "no_cot_train": cmp_nc.train.accuracy,
                   "cot_train": cmp_c.train.accuracy, "cot_step_test": cmp_c.test.cot_step or 0.0}),
        "comparison-cot-prompt-stays-at-chance": Measurement(cmp_nc.cot_prompt[1].accuracy,
                                                             extra={"chance": cmp_nc.test.chance,
                                                                    "no_cot_test": cmp_nc.test.accuracy}),
    }


@REGISTRY.measures(
    Claim("no-cot-gap-at-double-data", kind="secondary", statement="on twice the train people (100 of a population of N = 200, whose "
          "Stage A is trained with the same recipe; 30 fine-tune epochs) CoT still beats no-CoT on test people",
          paper="R2: no-CoT test accuracy rises only slowly with more fine-tuning data (the paper's figure: "
          "accuracy against the amount of fine-tuning data)", metric="month-parity accuracy, 100 test people, "
          "CoT fine-tune on 100 train people (N = 200)", direction="higher",
          baseline="no-CoT fine-tune on 100 train people (N = 200)", rule="mean_ci", rungs=("repro",),
          expect="fails", ladder="#why-the-cot-gap-is-not-shown-on-the-n-200-population-data-ladder-and-ablation",
          note="the top rung of the fine-tune data ladder (25 and 50 train people at N = 100; 50 and 100 at "
          "N = 200, the 50-people rung a control for the population size); margin 0, the 95 % interval of the "
          "mean gap over seeds 0-4, the rule of the other gap claims. Measured 2026-12-03 (first run, 0.4.1): "
          "gaps +0.14, +0.01, +0.20, +0.03, +0.25 (mean +0.13, interval [-0.004, +0.26]): does not hold, by a "
          "hair; every fine-tune fits its 100 train people (1.00) and the CoT fine-tune writes the month right "
          "for 0.99-1.00 of test people, so the shortfall is the month -> parity step (seeds 1 and 3: 0.61, "
          "0.78). Stage A retrieval of the N = 200 model and both fine-tunes' train accuracy are in each seed's "
          "extra; ablation in the README"),
)
def _larger_population_claims(seed: int, rung: str) -> dict[str, Measurement | float]:
    """The repro rung's larger-data rungs: Stage A at N = 200 people, then month parity without and with CoT
    fine-tuned on 50 and on 100 of its train people."""
    import dataclasses

    from .experiments import pretrain, retrieval_accuracy

    if (seed, rung) not in DETAILS:
        REGISTRY.measure("knowledge-extractable", seed, rung)  # runs _protocol (cached) for this seed
    rows = DETAILS[(seed, rung)]
    cfg = dataclasses.replace(rung_config(rung), n_people=LARGER_N)
    pre = pretrain(cfg, seed=seed)
    fts = {}
    for n in LARGER_TRAIN:
        for t in (NO_COT, COT):
            fts[n, t] = _finetune_row(pre, cfg.finetune, seed, rows, t, f"{cfg.finetune.epochs} epochs, {n} train "
                                      f"people (N = {LARGER_N})", epochs=cfg.finetune.epochs, n_train=n)
    nc, c = fts[LARGER_TRAIN[-1], NO_COT], fts[LARGER_TRAIN[-1], COT]
    return {"no-cot-gap-at-double-data": Measurement(
        c.test.accuracy, reference=nc.test.accuracy,
        extra={"chance": nc.test.chance, "no_cot_train": nc.train.accuracy, "cot_train": c.train.accuracy,
               "cot_step_test": c.test.cot_step or 0.0,
               "stage_a_retrieval_test": retrieval_accuracy(pre.model, pre, "birth_date", "test").accuracy,
               "no_cot_test_50": fts[LARGER_TRAIN[0], NO_COT].test.accuracy,
               "cot_test_50": fts[LARGER_TRAIN[0], COT].test.accuracy})}
