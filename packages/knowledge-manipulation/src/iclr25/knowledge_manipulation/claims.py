"""The paper's claims that this package checks, declared once for tests, ``repro`` and the README table.

One measurement per seed is one run of the paper's protocol (:func:`.experiments.run_experiment`): a seeded
population (half train, half test people), Stage A pretraining of a rotary GPT on their biographies plus
birth-date retrieval QAs of everyone (extractable mode), then one fine-tune per task from that checkpoint
(month parity without and with CoT, inverse search), each evaluated on train and test people; a no-CoT
month-parity fine-tune is also scored with a CoT prompt (CoT at inference only, the second half of R3).
Every claim of a seed comes from that one run. The seed draws the people, the biographies, the initialisation
and the batches.

Rungs:

- ``test`` (the default suite) and ``repro`` run :func:`.experiments.test_config` (N = 100 people; the demo's
  setting). ``test`` loads the Stage A models of seeds 0-4 that ship with the package (:mod:`.checkpoints`), so
  only the fine-tunes run; ``repro`` trains Stage A at every seed as well, which also checks that the shipped
  checkpoints are what the code makes. ``repro`` adds the paper's fine-tune data / epoch ladder (reduced): month
  parity without and with CoT fine-tuned for three times the epochs (90) and on half the train people (25, for
  60 epochs: the same number of steps) and month comparison without and with CoT (200 pairs of train people,
  15 epochs), decided over seeds 0-4. (Until 0.7.0 it also fine-tuned month parity on 50 and 100 train people of
  an N = 200 population for 30 epochs, the claim ``no-cot-gap-at-double-data``: borderline at 5 seeds, its
  90-epoch form is now the cot rung.)
- ``cot`` decides the two main CoT claims alone, on the larger population (N = 200, 100 train people, its own
  Stage A with the same recipe) with the fine-tune budget that completes the CoT answer's second step (90 epochs,
  three times the test recipe's), over 10 seeds (10-19; calibration seeds 100-109): ``iclr25 claims
  knowledge-manipulation --rung cot --out docs/cot`` (about 50 s of CPU a seed). Issue 58's re-examination: at
  N = 100 and 30 epochs the CoT gap over seeds 0-4 and 100-104 is +0.40 +0.16 +0.16 +0.28 +0.14 +0.08 -0.02 -0.08
  +0.34 -0.04 (mean +0.14, sd 0.16: a noisy mean effect that 10 seeds do not decide), and the noise is the CoT
  fine-tune's month -> parity step, not the knowledge: Stage A retrieves every test person's birth date (1.00)
  and the CoT fine-tune writes the month right for 0.98-1.00 of them, but given the true month it answers only
  as often right as on its own (seed 1 of the N = 200 ablation: 0.61); 90 epochs complete that step
  (``benchmarks/data_ladder_ablation.py``: CoT 0.95, gap +0.22 [+0.14, +0.29] at seeds 0-4).
- ``paper`` (seeds 0-2; for a GPU: ``iclr25 claims knowledge-manipulation --rung paper --estimate``) runs
  :func:`paper_config`, the paper's main setting (N = 100,000 people, a 12-layer d = 768 rotary GPT, context 512,
  100 exposures), deciding the three protocol claims and the two CoT claims from one Stage A per seed. The device
  is ``$ICLR25_DEVICE`` (``iclr25 claims knowledge-manipulation --device``), else ``auto``.

:data:`DETAILS` keeps every fine-tune's numbers per seed and rung for ``repro``'s per-seed table.
"""

from __future__ import annotations

from iclr25.utils.claims import Claim, ClaimRegistry, Measurement, RungCost, smoke_run

__all__ = ["REGISTRY", "rung_config", "paper_config"]

#: ``test`` and ``repro`` decide over seeds 0-4 (calibration seeds 100-104: one repro seed costs about 72 s of CPU);
#: ``cot`` over seeds 10-19 (10 seeds, none of which any earlier run of its recipe looked at: the ablation that
#: chose its 90 epochs ran seeds 0-4), calibrated on seeds 100-109
REGISTRY = ClaimRegistry("iclr25-knowledge-manipulation",
                         seeds={"test": (0, 1, 2, 3, 4), "repro": (0, 1, 2, 3, 4), "cot": tuple(range(10, 20)),
                                "paper": (0, 1, 2)},
                         calibration={"test": range(100, 105), "repro": range(100, 105), "cot": range(100, 110)},
                         costs={"paper": RungCost(
                             gpu_hours=5, memory_gb=50, hardware="one 80 GB GPU (H100 or A100)",
                             what="the paper's configuration: N = 100,000 people (50,000 train / 50,000 test), a "
                                  "GPT-2-small-shape rotary GPT (12 layers, 12 heads, d = 768, context 512; 85 M "
                                  "non-embedding parameters), Stage A 100 exposures of every person's biography "
                                  "(fresh templates and order each time) and birth-date retrieval QA at lr 1e-3, wd "
                                  "0.1, cosine, batch 96 x 512; then the test recipe's fine-tunes (month parity "
                                  "without / with CoT and inverse search, 30 epochs) and the two 90-epoch parity "
                                  "fine-tunes of the CoT claims. Estimated from FLOPs, not measured on a GPU: Stage A "
                                  "3.7e8 tokens (36 per person and exposure) x 6 x 85 M + attention = 2.1e17 FLOPs, "
                                  "about 2.3 h at ~25 TFLOP/s of float32 on an H100; the fine-tunes 2.3e8 tokens, "
                                  "~1.5 h; greedy evaluation of 50,000 people per question set (no KV cache), ~1 h. "
                                  "Peak ~50 GB: the float32 attention scores of batch 96 x 512 kept for backward",
                             data="nothing to provide: the people and biographies are generated here (the paper's "
                                  "bioS data is synthetic too; its templates are not copied)")})

NO_COT, COT, INVERSE = ("classification:birth_month:mod2", "classification:birth_month:mod2:cot",
                        "inverse:birth_date+birth_city")
CMP_NO_COT, CMP_COT = "comparison:birth_month", "comparison:birth_month:cot"

#: the repro rung's ladder of month-parity fine-tunes: name -> (train people used, None = all 50; epochs)
LADDER = {"3x epochs": (None, 90), "half data": (25, 60)}
#: the cot rung: the population (100 train people, all fine-tuned on) and the fine-tune epochs of both parity fine-tunes
COT_N, COT_EPOCHS = 200, 90
#: the repro rung's comparison fine-tunes: pairs of train people and epochs (one pair per person, 50, covers too
#: few of the 132 ordered month pairs; 200 pairs x 15 epochs is twice the steps of the parity fine-tune)
COMPARE_PAIRS, COMPARE_EPOCHS = 200, 15

#: (seed, rung) -> one row per fine-tune (condition, task, train / test accuracy, majority label, CoT step,
#: CoT-prompt accuracy): what ``repro`` prints as its per-seed table
DETAILS: dict[tuple[int, str], list[dict]] = {}


def paper_config(*, smoke: bool = False):
    """The paper rung's experiment: the paper's main setting (N = 100,000 people, a GPT-2-small-shape rotary GPT:
    12 layers, 12 heads, d = 768, context 512; Stage A 100 exposures at lr 1e-3, wd 0.1, batch 96 rows of 512
    tokens; fine-tunes of 30 epochs at the test recipe's lr 2e-3, batch 96), the test recipe's data (biographies
    of birth date and city, birth-date retrieval QAs of everyone). ``smoke``: the same code path at a toy size
    for one optimiser step per stage (20 people, 1 layer of width 48 with the paper's 12 heads and context 512,
    one epoch each): ``iclr25 claims knowledge-manipulation --rung paper --smoke``."""
    import dataclasses

    from .experiments import test_config
    from .training import TrainConfig

    cfg = dataclasses.replace(test_config(), n_people=100_000, n_layers=12, d_model=768, n_heads=12,
                              pretrain=TrainConfig(epochs=100, lr=1e-3, weight_decay=0.1, batch_size=96, seq_len=512),
                              finetune=TrainConfig(epochs=30, lr=2e-3, batch_size=96, seq_len=512))
    if smoke:
        cfg = dataclasses.replace(cfg, n_people=20, n_layers=1, d_model=48,
                                  pretrain=dataclasses.replace(cfg.pretrain, epochs=1),
                                  finetune=dataclasses.replace(cfg.finetune, epochs=1))
    return cfg


def rung_config(rung: str):
    """The experiment a rung runs at every seed (the paper rung: :func:`paper_config`, shrunk to one step in a
    smoke run)."""
    from .experiments import test_config

    REGISTRY.rung_seeds(rung)  # unknown rungs raise here
    if rung == "paper":
        return paper_config(smoke=smoke_run())
    return test_config()


@REGISTRY.measures(
    Claim("knowledge-extractable", kind="main", statement="Stage A stores every person's birth date and it is retrievable on "
          "test people (the premise of the manipulation claims)", paper="retrieval ~100 % (extractable mode)",
          metric="birth-date retrieval, test people, after Stage A", direction="higher", threshold=0.9,
          rule="every_seed", rungs=("test", "repro", "paper"), note="1.00 at seeds 0-4 (train and test people); 0.9 allows 5 of 50 test people "
          "missed"),
    Claim("inverse-search-fails", kind="main", statement="inverse search (name from birth date and city) fails on test "
          "people although it is learned on train people", paper="R4: inverse search ~0 % on test people",
          metric="inverse search exact match, test people", direction="lower", threshold=0.05,
          rule="every_seed", rungs=("test", "repro", "paper"), note="0.00 at seeds 0-4; 0.05 allows 2 of 50 test people (chance is 1/50)"),
    Claim("inverse-search-fits-train", kind="sanity", statement="the inverse-search fine-tune fits its train people (the failure "
          "on test people is not a failure to learn the format)", paper="R4 (train accuracy high)",
          metric="inverse search exact match, train people", direction="higher", threshold=0.8,
          rule="every_seed", rungs=("test", "repro", "paper"), note="0.98-1.00 at seeds 0-4 (30 fine-tune epochs at lr 2e-3; 0.94-1.00 at lr 1e-3; "
          "15 epochs at 1e-3 gave 0.16-0.42, an under-fit); 0.8 is 0.18 below the worst seed"),
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
    inv = res.finetune_of(INVERSE)
    rows = [_row("30 epochs, 50 train people", f) for f in res.finetunes]
    out: dict[str, Measurement | float] = {
        "knowledge-extractable": res.retrieval["birth_date"][1],
        "inverse-search-fails": inv.test.accuracy,
        "inverse-search-fits-train": inv.train.accuracy}
    DETAILS[(seed, rung)] = rows
    _PRE[(seed, rung)] = pre
    return out


#: (seed, rung) -> the Stage A model of :func:`_protocol`, reused by the repro rung's ladder
_PRE: dict = {}


@REGISTRY.measures(
    Claim("no-cot-memorises-train-3x-epochs", kind="sanity", statement="the no-CoT fine-tune at 90 epochs fits its train people "
          "(so its test accuracy is not an under-fit)", paper="R2: p_train accuracy ~100 %",
          metric="month-parity accuracy, train people, no-CoT fine-tune, 90 epochs", direction="higher",
          threshold=0.95, rule="every_seed", rungs=("repro",), note="1.00 at seeds 0-4; 0.95 allows 2 of 50 "
          "train people"),
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
    if task.endswith(":cot"):  # the CoT answer's second step alone: the true attribute given, forced choice
        rows[-1]["cot_given_true_test"] = eval_cot_prompt(model, pre, task.removesuffix(":cot"), "test",
                                                          seed=seed).accuracy
    return f


def _repro_ladder(pre, base, seed: int, rows: list[dict]) -> dict[str, Measurement | float]:
    """The repro rung's extra fine-tunes from the same Stage A model: the month-parity ladder and comparison."""

    def run(task: str, condition: str, **kw):
        return _finetune_row(pre, base, seed, rows, task, condition, **kw)

    n3, e3 = LADDER["3x epochs"]
    nc3, c3 = (run(t, f"{e3} epochs, 50 train people", epochs=e3, n_train=n3) for t in (NO_COT, COT))
    nh, eh = LADDER["half data"]
    for t in (NO_COT, COT):  # the bottom of the data ladder: per-seed table only (both fine-tunes under-fit)
        run(t, f"{eh} epochs, {nh} train people", epochs=eh, n_train=nh)
    cond = f"{COMPARE_EPOCHS} epochs, {COMPARE_PAIRS} train pairs"
    cmp_nc, cmp_c = (run(t, cond, epochs=COMPARE_EPOCHS, n_pairs=COMPARE_PAIRS) for t in (CMP_NO_COT, CMP_COT))
    return {
        "no-cot-memorises-train-3x-epochs": nc3.train.accuracy,
        "comparison-cot-beats-no-cot": Measurement(
            cmp_c.test.accuracy, reference=cmp_nc.test.accuracy,
            extra={"chance": cmp_nc.test.chance, "no_cot_train": cmp_nc.train.accuracy,
                   "cot_train": cmp_c.train.accuracy, "cot_step_test": cmp_c.test.cot_step or 0.0}),
        "comparison-cot-prompt-stays-at-chance": Measurement(cmp_nc.cot_prompt[1].accuracy,
                                                             extra={"chance": cmp_nc.test.chance,
                                                                    "no_cot_test": cmp_nc.test.accuracy}),
    }


#: how the CoT claims' margins were chosen (decided at the ``cot`` rung, 10 seeds)
COT_NOTE = ("cot rung: N = 200 (100 train people, all fine-tuned on; its own Stage A, the test recipe), both parity "
            "fine-tunes 90 epochs, seeds 10-19; margin 0 (the claim is the direction), 95 % interval of the mean over "
            "10 seeds. Calibration seeds 100-109 (claims-calibration-cot.json): CALIBRATION. Moved here from the "
            "repro rung (N = 100, 30 epochs), where the gap over seeds 0-4 and 100-104 was too noisy to decide at "
            "10 seeds (issue 58): the CoT fine-tune's month -> parity step is learned incompletely at 30 epochs")


@REGISTRY.measures(
    Claim("cot-beats-no-cot", kind="main", statement="month-parity classification of test people is better when the answer "
          "first states the month (CoT in training and inference) than without CoT, at a fine-tune budget (90 "
          "epochs) at which the no-CoT fine-tune has memorised its train people",
          paper="R2/R3: no-CoT near chance, CoT near retrieval accuracy; more fine-tuning epochs do not close the gap",
          metric="month-parity accuracy, 100 test people, CoT fine-tune (N = 200, 90 epochs)", direction="higher",
          baseline="no-CoT fine-tune (N = 200, 90 epochs)", rule="mean_ci", rungs=("cot", "paper"),
          note=COT_NOTE.replace("CALIBRATION", "gaps +0.27 +0.08 +0.14 +0.11 +0.25 +0.22 +0.08 +0.22 +0.15 +0.19 (CoT "
          "0.83-1.00, no CoT 0.71-0.88), mean +0.171, sd 0.069, max margin 0.082 > 0")),
    Claim("cot-at-inference-only-does-not-help", kind="main", statement="CoT at inference only does not help: the no-CoT "
          "fine-tune, prompted with the CoT step (the question, then the true month, then 'so'), classifies test "
          "people no better than it does without the CoT prompt",
          paper="R3: CoT at inference only, without CoT training, does not help",
          metric="month-parity accuracy, 100 test people, no-CoT fine-tune (N = 200, 90 epochs) with a CoT prompt "
          "(forced choice of the label)", direction="lower", baseline="no-CoT fine-tune, no-CoT prompt",
          rule="mean_ci", rungs=("cot", "paper"), note=COT_NOTE.replace("CALIBRATION", "drops +0.14 +0.19 +0.35 +0.32 +0.28 +0.24 +0.38 +0.19 +0.33 "
          "+0.08 (CoT prompt 0.44-0.72), mean +0.25, sd 0.099, max margin 0.123 > 0") + "; the oracle month "
          "in the prompt is the most a CoT prompt can supply"),
)
def _cot_claims(seed: int, rung: str) -> dict[str, Measurement | float]:
    """The cot rung: Stage A at N = 200 people, then month parity without and with CoT fine-tuned on all 100 train
    people for :data:`COT_EPOCHS`; the no-CoT fine-tune is also scored with the CoT prompt, the CoT fine-tune
    given the true month (its month -> parity step alone)."""
    import dataclasses

    from iclr25.utils.cli import set_torch_threads

    from .experiments import pretrain, retrieval_accuracy

    set_torch_threads(1)
    if rung == "paper":  # the paper rung's own Stage A (that of _protocol), fine-tunes of the CoT budget
        if (seed, rung) not in _PRE:
            REGISTRY.measure("knowledge-extractable", seed, rung)  # runs _protocol (cached) for this seed
        pre = _PRE[(seed, rung)]
        cfg, epochs = pre.config, pre.config.finetune.epochs if smoke_run() else COT_EPOCHS
        cond = f"{epochs} epochs, {len(pre.population.train)} train people (N = {len(pre.population)})"
    else:
        cfg, epochs = dataclasses.replace(rung_config(rung), n_people=COT_N), COT_EPOCHS
        pre = pretrain(cfg, seed=seed)
        cond = f"{COT_EPOCHS} epochs, {COT_N // 2} train people (N = {COT_N})"
    rows: list[dict] = []
    nc, c = (_finetune_row(pre, cfg.finetune, seed, rows, t, cond, epochs=epochs) for t in (NO_COT, COT))
    given = rows[-1]["cot_given_true_test"]
    DETAILS[(seed, rung) if rung != "paper" else (seed, "paper-cot")] = rows
    base = {"chance": nc.test.chance,
            "stage_a_retrieval_test": retrieval_accuracy(pre.model, pre, "birth_date", "test").accuracy}
    return {
        "cot-beats-no-cot": Measurement(
            c.test.accuracy, reference=nc.test.accuracy,
            extra={**base, "no_cot_train": nc.train.accuracy, "cot_train": c.train.accuracy,
                   "cot_step_test": c.test.cot_step or 0.0, "cot_given_true_month_test": given}),
        "cot-at-inference-only-does-not-help": Measurement(
            nc.cot_prompt[1].accuracy, reference=nc.test.accuracy,
            extra={**base, "cot_prompt_train": nc.cot_prompt[0].accuracy}),
    }
