"""The paper's claims as this package checks them, decided over seeds (``iclr25.utils.claims``).

Per seed and rung, two tiny assistants are trained from scratch on the same generated sequences, questions,
seed and budget (temporal scene classification and change localisation): TEOChat (every frame, ``image i :``
references) and the single-image baseline (the last frame only, the GeoChat analog). Every claim is measured
beside its trivial reference: the answer prior (the most common training scene) for scene classification; for
change localisation the best of the trivial answerers (:data:`iclr25.teochat.experiments.TRIVIAL_LOCALISATION`:
every visible building in the last frame, in the first frame, every building, no change) and the last-frame-only
model. Since 0.3 the generator keeps unchanged buildings beside the changed ones, and since 0.5 static distractor
footprints (cleared lots, rubble, foundations that never change) beside them (issue 42), so neither the buildings
of the last frame, nor every footprint, nor a reading of the last frame alone scores high.

Four rungs. ``test`` (the default suite): region temporal QA, TEOChat vs the last-frame model, in domain and
zero shot (its localisation claims, F1 0 for both models there, were removed in 0.7: issue 58). ``scene``
(``benchmarks/scene/claims.json``, ten seeds): scene classification vs the answer prior at 240 steps (balanced
generator). ``budget`` (``benchmarks/budget/claims.json``): damage classification on the damage questions only,
levels balanced (balanced generator).
``repro`` (``iclr25 teochat
repro``, which writes the committed ``claims.json``): per seed (0-2) the reduced-scale reproduction
(:func:`iclr25.teochat.repro.run_repro` at :data:`~iclr25.teochat.repro.REPRO_RUNG`): TEOChat, the
same model without image references (the Video-LLaVA analog), the same model on the last frame only (the GeoChat
analog), all trained on every temporal task and single-image detection, and the siamese specialist; the
paper's orderings between them on change localisation, damage classification, referring expressions, temporal
referring and region temporal QA, each beside its trivial reference (temporal referring beside the stronger
of the last-frame model and the question / frame-count prior, issue 60). The ladder of training budgets of change
localisation (seeds 0-2) is ``benchmarks/make_demo_checkpoints.py`` (README "Results").

``paper`` (issue 59; ``iclr25 claims teochat --rung paper --estimate``): the paper's own configuration for the
region-temporal-QA claims (:mod:`iclr25.teochat.finetune`): a LoRA fine-tune (r = 128, alpha = 256, lr 2e-5,
2 epochs, batch 1 x 8, loss on the answers only) of a local LLaVA folder (Video-LLaVA-7B converted to
``LlavaForConditionalGeneration``; ``$ICLR25_TEOCHAT_BASE``) on TEOChatlas as released (``train/instruct.json``;
``$ICLR25_TEOCHATLAS``, read by :mod:`iclr25.teochat.teochatlas`), then QFabric region temporal QA
(``eval/QFabric_TRE_RTQA.json``) and the zero-shot ABCD and CDVQA sets, each asked of the fine-tuned model with
every frame and with the last frame only; its cost is :data:`PAPER_COST` (refused on a CPU unless ``--force``).
A missing folder is one line naming its variable. ``--smoke`` runs exactly that path on the CPU with a tiny
random LLaVA and a few TEOChatlas-format records written to a temporary folder, one optimiser step; the suite
runs it, and ``tests/test_paper_rung.py`` runs the rung itself (no smoke) on hand-written TEOChatlas files. The
device is ``$ICLR25_DEVICE`` (``iclr25 claims teochat --device``), else ``auto``.

References: Irvin et al., *TEOChat*, ICLR 2025 (Table 1: temporal scene classification, change localisation,
TEOChat vs GeoChat).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from iclr25.utils.claims import Claim, ClaimRegistry, ClaimsReport, Measurement, RungCost, decide, smoke_run

from .conversation import TASKS

if TYPE_CHECKING:
    from .experiments import ExperimentData
    from .repro import ReproResult

__all__ = ["REGISTRY", "RUNGS", "RTQA_RUNGS", "repro_measurements", "repro_report", "rtqa_measurements"]

#: ``scene``: the scene-classification claim's own rung, ten seeds (issue 58: at 240 steps its gain over the
#: prior is real but spread, sd 0.11 at calibration seeds 100-109, so it is decided by the mean's interval); on the
#: balanced generator since 0.8 + [Unreleased] (issue 60)
#: the paper rung's cost (issue 59), estimated from FLOPs, not measured: 554,071 TEOChatlas examples x 2 epochs,
#: about 1,000 tokens each (256 image tokens per frame, about 3 frames, plus text), ~1.1 B tokens through a 7B LLM
#: at ~4 x 7e9 FLOPs a token (frozen bf16 backbone, LoRA r = 128 on every linear layer, plus gradient
#: checkpointing's second forward: ~5 x 7e9), ~4e19 FLOPs; at 25-30 % of an H100's dense bf16 about 40-50 hours;
#: the evaluation (the QFabric RTQA, ABCD and CDVQA questions, greedy, each asked twice) adds a few hours;
#: memory: 14 GB of bf16 weights, LoRA (~0.3 B parameters) + projector + AdamW states ~6 GB, activations at
#: context 2048 with checkpointing and the CLIP ViT-L tower, ~30-40 GB
PAPER_COST = RungCost(
    gpu_hours=50, memory_gb=40, hardware="one 80 GB GPU (A100/H100)",
    what="the paper's configuration (iclr25.teochat.finetune): Video-LLaVA-7B (LLaVA-1.5-style, Vicuna 7B, "
         "LanguageBind ViT-L/14 image tower, 256 tokens a frame) fine-tuned on TEOChatlas (554,071 examples) for 2 "
         "epochs, frozen bf16 LLM (the paper: 8-bit) + LoRA r = 128, alpha = 256, lr 2e-5, batch 8 (1 x 8 "
         "accumulation), context 2048, then QFabric RTQA and zero-shot ABCD / CDVQA asked with every frame and "
         "with the last frame; estimated from FLOPs (~1.1 B tokens, ~4e19 FLOPs at 25-30 % of an H100), not "
         "measured; the paper does not report its GPU time",
    data="TEOChatlas (jirvin16/TEOChatlas, about 28 GB: train/instruct.json, eval/QFabric_TRE_RTQA.json, "
         "eval/ABCD.json, eval/CDVQA.json and the extracted images) in the folder $ICLR25_TEOCHATLAS and the base "
         "model (Video-LLaVA-7B as a LlavaForConditionalGeneration folder) in $ICLR25_TEOCHAT_BASE, both on your disk")
#: the environment variables naming the paper rung's data and base model on the user's disk
PAPER_DATA_ENV, PAPER_BASE_ENV = "ICLR25_TEOCHATLAS", "ICLR25_TEOCHAT_BASE"

REGISTRY = ClaimRegistry("iclr25-teochat", seeds={"test": (0, 1, 2), "repro": (0, 1, 2), "budget": (0, 1, 2),
                                                  "scene": tuple(range(10)), "paper": (0, 1, 2)},
                         costs={"paper": PAPER_COST})

#: (training sequences, test sequences, steps, batch size) of the region-temporal-QA pair per rung (issue 58):
#: TEOChat and the last-frame model trained on the flooded-road sequences' "status of the road in each image"
#: question only, scored in domain and zero-shot on 64 px sequences (twice the training resolution, never seen)
RTQA_RUNGS = {"test": (200, 128, 60, 16), "repro": (400, 240, 120, 16)}
RTQA_SCENES = ("flooded_road",)
#: the zero-shot data set: frames at this size (the training frames are 32 px)
ZERO_SHOT_SIZE = 64
#: margin of the two rtqa claims: 0.1 of accuracy (13 of the 128 test questions, about two standard errors),
#: checked below both claims' max margins at calibration seeds 100-109 (test rung; claims-calibration.json)
RTQA_MARGIN = 0.1
_RTQA_CAL = ("margin 0.1 of accuracy (13 of 128 questions, about two standard errors); below max_margin "
             "(0.338 and 0.218) at calibration seeds 100-109 at the test rung (claims-calibration.json; "
             "every_seed at 3 seeds with probability 95 %)")
_LAST_RTQA = "the same model trained and asked with the last frame only (GeoChat analog; same data, seed, budget)"


@REGISTRY.measures(
    Claim("rtqa-temporal-beats-last-frame", statement="region temporal QA (the road's status in each image) needs "
          "the sequence: TEOChat beats the single-image model", paper="TEOChat QFabric RTQA 71.7 % vs 26.5 % for "
          "Video-LLaVA, GeoChat cannot answer it (Table 1)",
          metric="region temporal QA accuracy (flooded-road sequences; 60 steps at test, 120 at repro)",
          direction="higher", baseline=_LAST_RTQA, margin=RTQA_MARGIN, rule="every_seed", kind="main",
          rungs=("test", "repro", "paper"), note=_RTQA_CAL + "; a seed whose answers are one constant is not alive"),
    Claim("zero-shot-rtqa-beats-last-frame", statement="zero shot: on a held-out data set (64 px frames, twice the "
          "training resolution, never seen) TEOChat still answers region temporal QA above the single-image model",
          paper="TEOChat zero-shot ABCD 85.6 vs Video-LLaVA 50.0, CDVQA 47.2 vs 29.8 (abstract, Sec. 5)",
          metric="region temporal QA accuracy on 64 px flooded-road sequences (trained on 32 px)",
          direction="higher", baseline=_LAST_RTQA + ", also zero shot", margin=RTQA_MARGIN, rule="every_seed",
          kind="main", rungs=("test", "repro", "paper"),
          note=_RTQA_CAL + " (0.8.0 + [Unreleased]: the same values again); at the repro rung's size, calibration "
               "seeds 105-119 on the balanced generator (claims-calibration-repro.json): max margin 0.248, calibrated; "
               "one seed of 15 is below the margin (seed 110 gains 0.096: 0.350 vs 0.254, in domain 0.842; at seeds "
               "105-110 alone the max margin was -0.021), the others gain 0.38-0.80; the held-out set changes the sensor "
               "resolution, not the task (the paper's ABCD is a task TEOChat was trained on, from another data set)"),
)
def _rtqa(seed: int, rung: str) -> dict[str, Measurement]:
    return rtqa_measurements(seed, rung)


def check_paper_data() -> tuple[str, str]:
    """The paper rung's inputs on the user's disk: the folders in :data:`PAPER_DATA_ENV` (TEOChatlas) and
    :data:`PAPER_BASE_ENV` (a LLaVA model folder), else a one-line error naming what is missing."""
    import os
    from pathlib import Path

    out = []
    for env, what in ((PAPER_DATA_ENV, "TEOChatlas (jirvin16/TEOChatlas, about 28 GB)"),
                      (PAPER_BASE_ENV, "the base model (Video-LLaVA-7B as a LlavaForConditionalGeneration folder)")):
        v = os.environ.get(env, "").strip()
        if not v or not Path(v).is_dir():
            raise FileNotFoundError(f"rung 'paper' reads {what} from the folder in ${env}: "
                                    + ("not set" if not v else f"{v} is not a folder"))
        out.append(v)
    return out[0], out[1]


def paper_measurements(seed: int) -> dict[str, Measurement]:
    """The paper rung at ``seed`` (:func:`iclr25.teochat.finetune.run_paper` at the paper's configuration): the
    LoRA fine-tune of the base model in :data:`PAPER_BASE_ENV` on TEOChatlas in :data:`PAPER_DATA_ENV`, then
    region temporal QA (QFabric) and the zero-shot ABCD / CDVQA sets, each asked with every frame and with the
    last frame only. In a smoke run (``--smoke``) the same path runs on a tiny random LLaVA and a few
    TEOChatlas-format records written to a temporary folder, one optimiser step."""
    import dataclasses
    import tempfile

    from .finetune import PAPER_CONFIG, run_paper, write_tiny_llava, write_tiny_teochatlas

    if smoke_run():
        with tempfile.TemporaryDirectory(prefix="teochat-paper-smoke-") as tmp:
            words = write_tiny_teochatlas(f"{tmp}/data", seed=seed)
            write_tiny_llava(f"{tmp}/base", words, seed=seed)
            res = run_paper(f"{tmp}/data", f"{tmp}/base", seed=seed,
                            config=dataclasses.replace(PAPER_CONFIG, max_steps=1, max_new_tokens=4))
    else:
        data, base = check_paper_data()
        res = run_paper(data, base, seed=seed, config=PAPER_CONFIG)
    zs = ("abcd", "cdvqa")
    train = {f"train_{k}": v for k, v in res.training.items()}
    return {
        "rtqa-temporal-beats-last-frame": Measurement(
            res.accuracy["rtqa"], reference=res.last_frame["rtqa"], alive=res.distinct["rtqa"] > 1,
            extra={"questions": float(res.n_questions["rtqa"]), "distinct_answers": float(res.distinct["rtqa"]),
                   "best_constant_answer": res.constant["rtqa"], **train}),
        "zero-shot-rtqa-beats-last-frame": Measurement(
            float(sum(res.accuracy[k] for k in zs) / len(zs)),
            reference=float(sum(res.last_frame[k] for k in zs) / len(zs)),
            alive=all(res.distinct[k] > 1 for k in zs),
            extra={**{k: res.accuracy[k] for k in zs}, **{f"{k}_last_frame": res.last_frame[k] for k in zs},
                   **{f"{k}_questions": float(res.n_questions[k]) for k in zs},
                   **{f"{k}_best_constant_answer": res.constant[k] for k in zs}, "in_domain": res.accuracy["rtqa"]}),
    }


def rtqa_measurements(seed: int, rung: str) -> dict[str, Measurement]:
    """Train TEOChat and the last-frame model at ``rung``'s :data:`RTQA_RUNGS` size; score both in domain and
    zero shot (:data:`ZERO_SHOT_SIZE` px)."""
    import torch

    from .assistant import TrainConfig, train_assistant
    from .conversation import make_examples
    from .experiments import ExperimentData, answer_prior, evaluate, make_data
    from .model import ModelConfig
    from .repro import _vocab_size
    from .synth import generate_sequences

    if rung == "paper":
        return paper_measurements(seed)
    n_train, n_test, steps, batch = RTQA_RUNGS[rung]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    data = make_data(n_train, n_test, seed=seed, tasks=["rtqa"], scenes=RTQA_SCENES)
    zs = generate_sequences(n_test, seed=seed + 20_000, size=ZERO_SHOT_SIZE, scenes=RTQA_SCENES)
    zdata = ExperimentData(data.train_seqs, zs, data.train, make_examples(zs, seed=seed + 2, tasks=["rtqa"]))
    score, zscore, distinct = {}, {}, {}
    try:
        for name, last in (("teochat", False), ("last_frame", True)):
            asst = train_assistant(data.train_seqs, data.train, seed=seed,
                                   model_config=ModelConfig(vocab_size=_vocab_size(), d_model=64, n_layers=2),
                                   config=TrainConfig(steps=steps, batch_size=batch, lr=3e-3, last_frame=last),
                                   desc=f"rtqa {name} {seed}")
            s, preds = evaluate(asst, data)
            z, zpreds = evaluate(asst, zdata)
            score[name], zscore[name] = s.scores["rtqa"], z.scores["rtqa"]
            distinct[name] = (len(set(preds)), len(set(zpreds)))
    finally:
        torch.set_num_threads(threads)
    prior = answer_prior(data.train, data.test, "rtqa")
    return {
        "rtqa-temporal-beats-last-frame": Measurement(
            score["teochat"], reference=score["last_frame"], alive=distinct["teochat"][0] > 1,
            extra={"answer_prior": prior, "distinct_answers": float(distinct["teochat"][0]),
                   "distinct_answers_last_frame": float(distinct["last_frame"][0])}),
        "zero-shot-rtqa-beats-last-frame": Measurement(
            zscore["teochat"], reference=zscore["last_frame"], alive=distinct["teochat"][1] > 1,
            extra={"answer_prior": answer_prior(zdata.train, zdata.test, "rtqa"),
                   "in_domain": score["teochat"], "distinct_answers": float(distinct["teochat"][1])}),
    }

#: (training sequences, test sequences, steps, batch size) of the scene-classification claim per rung; the
#: scene rung (4x the test rung's steps, ten seeds) is new in 0.7 (issue 58: the test rung's model was not alive
#: at seed 1)
RUNGS = {"test": (200, 64, 60, 16), "scene": (200, 64, 240, 16)}


@REGISTRY.measures(
    Claim("tsc-beats-answer-prior", statement="the assistant classifies the scene of a temporal sequence",
          paper="TEOChat fMoW temporal scene classification 75.1 % (Table 1)",
          metric="temporal scene classification accuracy (240 steps on scene classification and localisation)",
          direction="higher", baseline="answer prior (most common training scene)", margin=0.05,
          rule="mean_ci", rungs=("scene",), kind="sanity",
          note="decided at its own `scene` rung since 0.7 (issue 58; `iclr25 claims teochat --rung scene`, "
               "benchmarks/scene/claims.json), on the balanced generator since 0.8 + [Unreleased] (issue 60): at "
               "calibration seeds 100-109 the gain over the prior is positive at 9 of 10 seeds (mean 0.208, sd "
               "0.110) and spread, so it is decided by the 95 % interval of the mean over ten seeds, margin 0.05 of "
               "accuracy (3 of the 64 test sequences), below its max_margin 0.066 (claims-calibration-scene.json; "
               "on the 0.7 generator: mean 0.225, sd 0.11, max margin 0.086, benchmarks/scene/"
               "calibration-scene-0.7.json; every_seed at three seeds was not robust there: max margin -0.005); "
               "no shortcut on average: the best rule that reads no pixel (the most common training scene per "
               "number of frames, as construction sites have 3 or more) is `frame_count_rule` in the extras "
               "(mean 0.227 over seeds 0-9 against the model's 0.473; above the model at seed 0, 0.328 vs 0.234); "
               "at the test rung (60 steps) the assistant gave one answer to every sequence at seed 1 and was at "
               "or below the prior at seeds 0-2 (not alive there); the test rung's two localisation claims were "
               "removed in 0.7 (issue 58): both models score F1 0 there, so they measured nothing (repro-loc-* "
               "decide them on a live model)"),
)
def _assistant(seed: int, rung: str) -> dict[str, Measurement | float]:
    import torch

    from .assistant import TrainConfig, train_assistant
    from .conversation import Vocabulary
    from .experiments import answer_prior, evaluate, make_data
    from .model import ModelConfig

    n_train, n_test, steps, batch = RUNGS[rung]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        data = make_data(n_train, n_test, seed=seed, tasks=["tsc", "loc"])  # the balanced generator (issue 60)
        asst = train_assistant(data.train_seqs, data.train, seed=seed,
                               config=TrainConfig(steps=steps, batch_size=batch, lr=3e-3),
                               model_config=ModelConfig(vocab_size=len(Vocabulary()), d_model=64, n_layers=2),
                               desc=f"claims seed {seed} temporal")
        scores, preds = evaluate(asst, data)
    finally:
        torch.set_num_threads(threads)
    tsc = [p for p, e in zip(preds, data.test, strict=True) if e.task == "tsc"]
    return {
        "tsc-beats-answer-prior": Measurement(scores["tsc"], reference=answer_prior(data.train, data.test, "tsc"),
                                              extra={"distinct_answers": float(len(set(tsc))),
                                                     "frame_count_rule": frame_count_rule(data)},
                                              alive=len(set(tsc)) > 1),
    }


def frame_count_rule(data: ExperimentData) -> float:
    """Accuracy on the scene-classification questions of the shortcut that reads no pixel: the most common
    training scene among the sequences with as many frames (the prompt says how many; construction sites have at
    least 3), the answer prior for a count never seen in training."""
    from collections import Counter

    by: dict[int, Counter[str]] = {}
    for e in data.train:
        if e.task == "tsc":
            by.setdefault(data.train_seqs[e.seq].n_frames, Counter())[e.answer] += 1
    test = [e for e in data.test if e.task == "tsc"]
    if not by or not test:
        return math.nan
    prior = sum(by.values(), Counter()).most_common(1)[0][0]
    rule = {n: c.most_common(1)[0][0] for n, c in by.items()}
    return sum(rule.get(data.test_seqs[e.seq].n_frames, prior) == e.answer for e in test) / len(test)


_MARGIN = ("margin 0.05: about two standard errors of an accuracy on the ~100 test questions of a task per seed, "
           "and the per-seed spread of two runs of one recipe on the localisation ladder (about 0.04)")
_REPRO = "README.md#iclr25-teochat-repro-seeds-0-2"
#: the ladder (250 / 500 / 1000 steps, every model) and the per-task budget ablation of the five repro claims
#: that lacked one (``benchmarks/ladder_five.py``, issue 58)
_FIVE = "README.md#ladder-of-five-repro-claims-issue-58"


def _c(cid: str, statement: str, paper: str, metric: str, baseline: str, *, margin: float = 0.05,
       expect: str = "holds", note: str = _MARGIN, ladder: str = _FIVE, kind: str = "main") -> Claim:
    return Claim(cid, statement=statement, paper=paper, metric=metric, direction="higher", baseline=baseline,
                 margin=margin, rule="every_seed", expect=expect, ladder=ladder if expect == "fails" else "",
                 note=note, rungs=("repro",), kind=kind)


#: the ladder (250 / 500 / 1000 steps) and ablation (task mix, linear probe) of the scene-classification and
#: temporal-referring claims, ``benchmarks/ablation_claims.py`` (0.4.1)
_BUDGET = "README.md#ladder-and-ablation-of-the-repro-claims-that-missed-041"


#: the localisation ladder of the shipped checkpoints (``benchmarks/make_demo_checkpoints.py``, 0.5.0)
_LOC_LADDER = "README.md#change-localisation-on-the-05-generator-the-shipped-checkpoints-and-their-ladder-issue-42"
_LOC_NOTE = ("does not hold at the repro's 500 steps on nine tasks; with a budget of its own (localisation + "
             "single-image detection, 16 000 change scenes, 3 layers) it holds at every seed at 2500 and 5000 "
             "steps, not at 1000 (the ladder, generated from benchmarks/ladder_localisation.json)")
_LAST = "the same model trained and asked with the last frame only (GeoChat analog; same data, seed, budget)"
_NOREF = "the same model without `image i :` references (Video-LLaVA analog; same data, seed, budget)"
_ONE_FRAME = ("the strongest one-frame reference: best last-frame rule (chosen on the training split), "
              "question / frame-count prior, every building, last-frame model told the frame count")
#: the generated ladder (125 / 250 / 500 steps) and cause ablation (TEOChat asked with the last frame only) of the
#: one-frame claims (``benchmarks/one_frame_claims.py`` from claims.json)
_ONE_FRAME_LADDER = "docs/one-frame-claims.md"
_ONE_FRAME_NOTE = (_MARGIN + "; on the balanced generator (0.8, issue 60: P(change | look) <= 0.5 for every first- "
                   "and last-frame look); declared to fail before the run: at fresh seeds on the 0.7 generator "
                   "TEOChat was below the strongest one-frame reference on every temporal task "
                   "(docs/references-0.7.md; on the balanced generator: docs/references.md); the ladder is TEOChat scored at 125 / 250 / 500 steps of the same run, "
                   "the ablation (`teochat_last_frame_at_test`) the same TEOChat asked with the last frame only: "
                   "where it scores as TEOChat does, its answers do not use the earlier frames (the cause)")
#: the specialist claim's note (0.8): the loss weight that keeps the specialist off "no change", chosen at
#: calibration seeds with the specialist measured alone
_SPECIALIST_NOTE = (
    "margin 0: calibrated at seeds 100-104 on the 0.7 generator (claims-calibration-repro.json: max margin 0.650); "
    "decided since 0.8 on the balanced generator, where the specialist with the plain BCE of 0.4-0.7 answered "
    "'no change' everywhere (F1 0) at seed 2 (benchmarks/balanced-repro/record-claims.json); since 0.8 it is "
    "trained with the changed pixels' loss weighted 4 (REPRO_RUNG['specialist_pos_weight']), chosen at "
    "calibration seeds 100-104 with the specialist measured alone (benchmarks/specialist_calibration.json: "
    "F1 0.741, 0.772, 0.698, 0.711, 0.787 at seeds 100-104, never 'no change' everywhere; the plain BCE: 0.779 at "
    "seed 100, that run stopped there for time: benchmarks/specialist_calibration_w1_partial.json); only the "
    "specialist was re-calibrated on the balanced generator in 0.8; the whole repro rung at calibration seeds "
    "105-107 since (benchmarks/calibration-repro-balanced-seeds-105-107.json): specialist 0.741, 0.656, 0.696 vs "
    "TEOChat 0.068, 0.069, 0.052, max margin 0.542, margin 0 calibrated")
_REPRO_CLAIMS = (
    _c("repro-tsc-beats-answer-prior", "the assistant classifies the scene of a temporal sequence",
       "TEOChat fMoW temporal scene classification 75.1 % (Table 1)", "temporal scene classification accuracy",
       "answer prior (most common training scene)", expect="fails", ladder=_BUDGET, kind="sanity",
       note=_MARGIN + "; does not hold at the repro's 500 steps (a ninth of them on this task); on the 0.4 "
            "generator: at the prior at "
            "250 steps, above it at 2 of 3 seeds at 1000 steps, at every seed (0.58-0.78 vs 0.21-0.25) when the "
            "500 steps go to scene classification and temporal referring only; a linear probe reads the scene "
            "from the pixels at 0.57-0.63, so the cause is the per-task budget, not the generator"),
    _c("repro-loc-beats-trivial-answer", "the assistant localises the buildings that changed",
       "TEOChat xBD change localisation F1 38.9 (Table 1)", "change localisation pixel F1",
       "best trivial answer (every visible building in the last / first frame, every building, no change)",
       margin=0.0, expect="fails", ladder=_LOC_LADDER, note=_LOC_NOTE, kind="sanity"),
    _c("repro-loc-temporal-beats-one-frame", "change localisation: temporal beats every one-frame answerer",
       "TEOChat 38.9 vs GeoChat 7.4 xBD localisation F1 (Table 1)", "change localisation pixel F1", _ONE_FRAME,
       expect="fails", ladder=_ONE_FRAME_LADDER, note=_ONE_FRAME_NOTE + "; " + _LOC_NOTE + " (0.5 generator); the "
       "two-frame pixel difference (no model) is in the extras"),
    _c("repro-loc-references-beat-no-references", "change localisation: image references beat a video-style "
       "model", "TEOChat 38.9 vs Video-LLaVA 7.0 xBD localisation F1 (Table 1)", "change localisation pixel F1",
       _NOREF, expect="fails"),
    _c("repro-sre-temporal-beats-one-frame", "change referring expressions: temporal beats every one-frame "
       "answerer", "TEOChat 25.1 vs GeoChat 8.7 xBD SRE F1 (Table 1)", "referring expression pixel F1", _ONE_FRAME,
       expect="fails", ladder=_ONE_FRAME_LADDER, note=_ONE_FRAME_NOTE),
    _c("repro-tre-temporal-beats-one-frame", "temporal referring (in which images ...?) needs the sequence: "
       "TEOChat beats every one-frame answerer", "TEOChat QFabric TRE 74.9 % (Table 1; single-image models cannot "
       "answer it)", "temporal referring accuracy", _ONE_FRAME, expect="fails", ladder=_ONE_FRAME_LADDER,
       note=_ONE_FRAME_NOTE + "; replaces repro-tre-temporal-beats-last-frame (issue 58 / 60): against the "
            "last-frame model alone TEOChat was ahead at seeds 0-2 on the 0.7 generator, but not robustly "
            "(calibration seeds 100-104: max margin -0.068; benchmarks/calibration-repro-seeds-100-104.json)"),
    _c("repro-rtqa-temporal-beats-one-frame", "region temporal QA needs the sequence: TEOChat beats every "
       "one-frame answerer", "TEOChat QFabric RTQA 71.7 % vs Video-LLaVA 26.5 % (Table 1)",
       "region temporal QA accuracy", _ONE_FRAME, expect="fails", ladder=_ONE_FRAME_LADDER,
       note=_ONE_FRAME_NOTE + "; replaces repro-rtqa-temporal-beats-last-frame, which held against the last-frame "
            "model not told the frame count (0.7)"),
    _c("repro-tre-references-beat-no-references", "temporal referring: image references beat a video-style "
       "model", "TEOChat 74.9 vs Video-LLaVA 1.9 QFabric TRE accuracy (Table 1)", "temporal referring accuracy",
       _NOREF, expect="fails"),
    _c("repro-tre-uses-frame-order", "temporal referring uses the chronological order of the frames",
       "frames sorted by date, 'in chronological order' prompt (Sec. 3.1)", "temporal referring accuracy",
       "the same model asked with its frames in a shuffled order", expect="fails", kind="secondary"),
    Claim("repro-single-image-detection-parity", statement="single image: training on temporal sequences costs "
          "TEOChat no single-image ability (building detection within 0.07 F1 of the single-image model)",
          paper="TEOChat's single-image average 83.4 vs GeoChat 79.9 (AID, UCMerced, LRBEN, HRBEN; abstract: "
                "'stronger single image capabilities')",
          metric="single-image building detection pixel F1, TEOChat minus the last-frame model",
          direction="higher", threshold=-0.07, margin=0.0, rule="every_seed", kind="main", rungs=("repro",),
          note="parity, not the paper's 'stronger': both models are trained on the same instructions (the "
               "single-image model sees the last frame of each temporal question), so TEOChat's extra is the "
               "earlier frames, not the paper's extra data; tolerance 0.07 set at calibration seeds 105-110 on the "
               "balanced generator (claims-calibration-repro.json, benchmarks/calibrate_repro_balanced.py): gaps "
               "-0.025, -0.007, +0.064, -0.010, +0.016, -0.014, and 0.07 is the smallest tolerance in steps of 0.01 "
               "that every seed clears at three new seeds with probability >= 95 % (0.05, the package's margin until "
               "then, about two standard errors of a per-seed score, had max margin -0.014: not calibrated); in "
               "0.5.0 the gaps were -0.044, +0.015, -0.015, on the 0.7 generator calibrated at seeds 100-104"),
    _c("repro-specialist-beats-assistant", "a change-detection specialist localises changes better than the "
       "assistant", "specialist 85.9 vs TEOChat 38.9 xBD localisation F1 (Table 1)",
       "change localisation pixel F1 of the siamese U-Net-lite specialist", "TEOChat (the assistant)",
       margin=0.0, kind="secondary", note=_SPECIALIST_NOTE),
)


#: the damage claim's rung (issue 58): at the repro's 500 steps on nine tasks every model answers the prior on
#: damage (TEOChat = last frame at every seed: a declared fail that measured nothing), and so it did in 0.7's
#: first budget rung (500 steps on loc, damage, sre, det1): 70 % of the damage answers are ``no_damage``, and a
#: model trained on that mix answers ``no_damage`` to every question at every seed (value = reference). Since
#: then the rung trains on the damage questions only, each damage level drawn equally often
#: (``TrainConfig.balance_answers``): the pipeline's fix, not the metric's (the inverse-prevalence F1 weights the
#: rare levels most). The ladder is one cosine schedule per model scored at :data:`BUDGET_LADDER` steps.
BUDGET_TASKS = ("damage",)
BUDGET_STEPS = 500
BUDGET_LADDER = (125, 250)
_DAMAGE_NOTE = (_MARGIN + "; decided at the `budget` rung (`iclr25 claims teochat --rung budget`), not by repro: at "
                "the repro's nine-task 500 steps, and on the box + damage mix, every model answers `no_damage` "
                "(70 % of the answers) to every question, so value = reference at every seed (0.036 / 0.030 / "
                "0.037); the rung trains on the damage questions only with every level drawn equally often, and "
                "a seed whose damage answers are one constant is not alive; the ladder (125 / 250 / 500 steps) "
                "and the per-level F1 are in the extras: `destroyed` (a rubble patch in the last frame, which one "
                "frame shows) near chance for both models names the cause: neither reads the building the box "
                "in the question names (as on localisation at this budget); on the balanced generator since 0.8 + "
                "[Unreleased] (issue 60): calibrated at seeds 100-102 (claims-calibration-budget.json, max margin "
                "-0.169), still a declared fail at seeds 0-2")


@REGISTRY.measures(
    Claim("budget-damage-temporal-beats-last-frame", statement="damage classification: temporal beats single "
          "image", paper="TEOChat 50.0 vs GeoChat 11.8 xBD damage F1 (Table 1)",
          metric="damage classification inverse-prevalence F1 (500 steps on the damage questions only, every "
                 "damage level drawn equally often)",
          direction="higher", baseline=_LAST, margin=0.05, rule="every_seed", expect="fails", ladder=_FIVE,
          kind="main", rungs=("budget",), note=_DAMAGE_NOTE),
)
def _budget(seed: int, rung: str) -> dict[str, Measurement]:
    import torch

    from .assistant import Assistant, TrainConfig, train_assistant
    from .experiments import make_data
    from .metrics import damage_f1
    from .model import ModelConfig
    from .repro import REPRO_RUNG, _vocab_size

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    data = make_data(REPRO_RUNG["n_train"], REPRO_RUNG["n_test"], seed=seed, tasks=BUDGET_TASKS)  # balanced (issue 60)
    ex = [e for e in data.test if e.task == "damage"]
    truths, regions = [e.answer for e in ex], [e.region for e in ex]
    train_answers = [e.answer for e in data.train if e.task == "damage"]
    out: dict[str, float] = {"train_no_damage_share": train_answers.count("no_damage") / len(train_answers)}

    def score(name: str, step: int, asst: Assistant) -> None:
        preds = asst.predict(ex, data.test_seqs)
        d = damage_f1(preds, truths, regions)
        tag = "" if step == BUDGET_STEPS else f"_{step}_steps"
        out[f"{name}{tag}"] = d.inv_weighted_f1
        out[f"{name}_distinct_answers{tag}"] = float(len(set(preds)))
        if step == BUDGET_STEPS:
            out.update({f"{name}_f1_{k}": v for k, v in d.per_class.items()})

    try:
        for name, last in (("teochat", False), ("last_frame", True)):
            asst = train_assistant(data.train_seqs, data.train, seed=seed,
                                   model_config=ModelConfig(vocab_size=_vocab_size(), d_model=64, n_layers=2),
                                   config=TrainConfig(steps=BUDGET_STEPS, batch_size=REPRO_RUNG["batch_size"],
                                                      lr=3e-3, last_frame=last, balance_answers=BUDGET_TASKS),
                                   callback=lambda step, a, name=name: score(name, step, a),
                                   callback_steps=BUDGET_LADDER, desc=f"budget {name} {seed}")
            score(name, BUDGET_STEPS, asst)
    finally:
        torch.set_num_threads(threads)
    return {"budget-damage-temporal-beats-last-frame": Measurement(
        out["teochat"], reference=out["last_frame"], alive=out["teochat_distinct_answers"] > 1,
        extra={k: v for k, v in out.items() if k not in ("teochat", "last_frame")})}



#: the one-frame references of the repro's claims (issue 60): :data:`iclr25.teochat.references.ONE_FRAME` and the
#: last-frame model told the frame count
ONE_FRAME_REFERENCES = ("question prior", "one frame (annotations)", "one frame (pixels)", "every building (no cap)",
                        "every building (4-box cap)", "last-frame model")


def strongest_one_frame(res: ReproResult, task: str) -> dict[str, float]:
    """The one-frame references' test-split scores on ``task`` (:data:`ONE_FRAME_REFERENCES`); the claim's
    reference is their maximum."""
    refs = {k: v for k, v in res.one_frame.get(task, {}).items() if k in ONE_FRAME_REFERENCES}
    lf = res.scores["last_frame"].get(task)
    if lf is not None:
        refs["last-frame model"] = lf
    return {k: v for k, v in refs.items() if not math.isnan(v)}


def repro_measurements(res: ReproResult) -> dict[str, Measurement]:
    """The repro rung's claims measured on one seed's :class:`~iclr25.teochat.repro.ReproResult`."""
    from .repro import LAST_AT_TEST

    # a task without a question in the test split (a toy size) is NaN: a failure at that seed, never a pass
    t, lf, nr, sh = ({task: v.get(task, math.nan) for task in TASKS}
                     for v in (res.scores["teochat"], res.scores["last_frame"], res.scores["no_references"],
                               res.scores["teochat (shuffled frames)"]))
    pf = res.parse_failures["teochat"]
    triv = dict(res.trivial)

    def vs(task: str, ref: dict[str, float], **extra: float) -> Measurement:
        return Measurement(t[task], reference=ref[task], extra={"parse_failures": pf.get(task, 0.0), **extra})

    def one_frame(task: str, **extra: float) -> Measurement:
        """TEOChat against the strongest one-frame reference (:data:`ONE_FRAME_REFERENCES`), with every
        reference, the two-frame pixel difference, the ladder and the cause ablation in the extras."""
        refs = strongest_one_frame(res, task)
        ladder = {f"teochat_{r['steps']}_steps": r.get("scores", {}).get(task, math.nan) for r in res.ladder
                  if r["steps"] != res.config.get("steps")}
        other = {k: v for k, v in res.one_frame.get(task, {}).items() if k not in refs}
        return Measurement(t[task], reference=max(refs.values()) if refs else math.nan, extra={
            "parse_failures": pf.get(task, 0.0), **refs, **other, **ladder,
            "teochat_last_frame_at_test": res.scores.get(LAST_AT_TEST, {}).get(task, math.nan), **extra})

    return {
        "repro-tsc-beats-answer-prior": Measurement(t["tsc"], reference=res.prior["tsc"],
                                                    extra={"last_frame": lf["tsc"], "no_references": nr["tsc"]}),
        "repro-loc-beats-trivial-answer": Measurement(t["loc"], reference=max(triv.values()),
                                                      extra={**triv, "last_frame_model": lf["loc"],
                                                             "specialist": res.specialist_loc_f1}),
        "repro-loc-temporal-beats-one-frame": one_frame("loc", best_trivial=max(triv.values())),
        "repro-loc-references-beat-no-references": vs("loc", nr),
        "repro-sre-temporal-beats-one-frame": one_frame("sre"),
        "repro-tre-temporal-beats-one-frame": one_frame(
            "tre", answer_prior=res.prior["tre"],
            **{k: v for k, v in res.beyond_prior.items() if k.startswith("tre_")}),
        "repro-rtqa-temporal-beats-one-frame": one_frame("rtqa", answer_prior=res.prior["rtqa"]),
        "repro-tre-references-beat-no-references": vs("tre", nr),
        "repro-tre-uses-frame-order": Measurement(t["tre"], reference=sh["tre"],
                                                  extra={"shuffled_label_chance": res.chance["tre"]}),
        "repro-single-image-detection-parity": Measurement(t["det1"] - lf["det1"], extra={
            "teochat": t["det1"], "last_frame": lf["det1"], "no_references": nr["det1"]}),
        "repro-specialist-beats-assistant": Measurement(res.specialist_loc_f1, reference=t["loc"],
                                                        extra={"best_trivial": max(triv.values())}),
    }


@REGISTRY.measures(*_REPRO_CLAIMS)
def _repro(seed: int, rung: str) -> dict[str, Measurement]:
    from .repro import run_repro

    return repro_measurements(run_repro(seed=seed))


def repro_report(results: Mapping[int, ReproResult], *, command: str,
                 load: tuple[float, float, float] | None = None,
                 extra: Mapping[int, Mapping[str, Measurement]] | None = None) -> ClaimsReport:
    """The repro rung's claims decided over the seeds of ``results`` (``{seed: ReproResult}``), with the
    measurements of ``extra`` (``{seed: {claim id: Measurement}}``: :func:`rtqa_measurements` at the repro rung)."""
    import importlib.metadata

    per_seed = {s: {**repro_measurements(r), **(extra or {}).get(s, {})} for s, r in results.items()}
    decided = [decide(REGISTRY.claims[cid], {s: m[cid] for s, m in per_seed.items()}, rung="repro")
               for cid in REGISTRY.claims_at("repro") if all(cid in m for m in per_seed.values())]
    report = ClaimsReport("iclr25-teochat", importlib.metadata.version("iclr25-teochat"), "repro", decided,
                          command=command)
    if load is not None:
        report.load = load
    return report
