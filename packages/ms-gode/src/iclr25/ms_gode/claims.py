"""The paper's claims that this package checks, in the federation's claims registry (``iclr25.utils.claims``).

Every number is measured on **fresh** physics test tasks (springs → charged → springs, simulated with seeds no
model was trained on, :func:`iclr25.ms_gode.pretrained.measure`), 16 batches of 10 trajectories per task (the
paper's test batch of 10 trajectories of one system):

- ``oracle-no-forgetting``: with its own mask, every earlier task's test MSE after the last task equals the MSE
  right after learning it (frozen weights, one binary sub-network per task);
- ``mode-switching``: the fraction of the 48 test batches for which self-prediction picks the true mask,
  against issue 44's 0.9;
- ``unseen-system-flagged``: batches of a system never learned (stiff springs, k = 4) flagged unknown;
- ``known-not-flagged``: test batches of the learned tasks flagged unknown (false alarms), against 0.25;
- ``near-zero-forgetting`` (``long`` rung): AF-MSE of MS-GODE with mode switching against 0.1 × fine-tuning's;
- ``ap-mse-vs-baselines`` (``repro`` rung): AP-MSE of MS-GODE against the best of fine-tune / EWC / replay /
  LwF (the paper: best AP among the continual learners), with joint training's beside it.

Rungs: ``test`` (seeds 0, 1, 2) scores the checkpoints shipped in the wheel (``checkpoints/physics-seed{S}``,
trained by ``iclr25 ms-gode pretrain --seed S`` at :data:`~iclr25.ms_gode.pretrained.PRETRAIN`; any other seed,
such as the calibration seeds 100-109 and fresh seeds, gets a checkpoint trained here with the same recipe) and
measures zero forgetting on a tiny sequence trained in the test; ``repro`` (seeds 0, 1, 2) retrains every model
from scratch at the same rung, the baselines included, and decides ``mode-switching`` (issue 58: not robust at
calibration seeds, so decided by the mean's interval on models trained here). Ladders are in the README.

``long`` (seeds 0, 1, 2): ``near-zero-forgetting`` alone, MS-GODE and fine-tuning trained at the repro rung's
data and sizes but :data:`LONG_EPOCHS` epochs per task instead of 16 (issue 58: at 16 epochs mode switching sends
a whole task to another sub-network at some calibration seeds, and forgetting follows; the budget ladder 8 / 16 /
24 is in ``docs/ladder_ranking.json``). Calibrated at seeds 100-109 (``claims-calibration-long.json``), decided
there in the side report ``docs/long/claims.json`` (``iclr25 claims ms-gode --rung long --out
packages/ms-gode/docs/long``).

``paper`` (seeds 0, 1, 2; for a GPU: ``iclr25 claims ms-gode --rung paper --estimate``): the repro rung's claims at
the paper's configuration: hidden 64, ODE hidden 128, 64 augmented dimensions, AdamW lr 5e-4, 20 epochs per task of
batches of 10, on 20,000 training trajectories per task of the physics sequence (simulated here; nothing to
download). The device is ``$ICLR25_DEVICE`` (``iclr25 claims ms-gode --device``), else ``auto``; ``--smoke`` runs it
for one step (the first task, four trajectories, fine-tuning as the only baseline, one test batch).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from iclr25.utils.claims import Claim, ClaimRegistry, Measurement, RungCost, smoke_run
from iclr25.utils.device import default_device

__all__ = ["REGISTRY", "BASELINE_METHODS", "LONG_EPOCHS", "PAPER", "centroid_rival", "forgetting_drift",
           "run_checkpoint", "run_repro"]

REGISTRY = ClaimRegistry(
    "iclr25-ms-gode", seeds={"test": (0, 1, 2), "repro": (0, 1, 2), "long": (0, 1, 2), "paper": (0, 1, 2)},
    costs={"paper": RungCost(
        gpu_hours=10, memory_gb=4, hardware="one CUDA GPU of any size",
        what="the physics sequence (springs, charged, springs; 5 objects, 120 frames) with 20,000 training and "
             "2,000 validation trajectories per task (the paper's largest), LG-ODE backbone at the paper's sizes "
             "(hidden 64, latent 16 + 64 augmented, ODE hidden 128, rk4), AdamW lr 5e-4, 20 epochs of batches of "
             "10 per task: MS-GODE and the five baselines (fine-tune, EWC, replay, LwF, joint). Estimated, not "
             "measured on a GPU: 120k steps per method (joint 240k, replay and LwF two passes a step) at ~40 ms "
             "(launch-bound rk4 over ~30 steps x 4 evaluations), ~1.5 h per method; plus ~1.5 CPU-hours of "
             "simulation once (cached)",
        data="nothing to provide: the trajectories are simulated here (the paper's Bio-CDL needs the VCell GUI)")})

#: the continual learners MS-GODE is ranked against (joint training is the upper bound, reported beside)
BASELINE_METHODS = ("finetune", "ewc", "replay", "lwf")

#: the paper rung's scale (Zhang et al. 2025: LG-ODE sizes, AdamW 5e-4, 20 epochs, batch 10; 20,000 trajectories)
PAPER = {"n_train": 20_000, "n_valid": 2_000, "epochs": 20, "batch_size": 10, "lr": 5e-4, "hidden": 64,
         "ode_hidden": 128, "augment": 64}


def forgetting_drift(seed: int, *, n_train: int = 6, epochs: int = 2) -> float:
    """``max_j |a_Kj - a_jj|`` with the oracle mask over a tiny physics sequence trained at ``seed``."""
    from .data import task_sequence  # noqa: PLC0415
    from .pretrained import PRETRAIN, TEST_SEED_OFFSET, train_pretrained  # noqa: PLC0415

    scale = dataclasses.replace(PRETRAIN, n_train=n_train, n_valid=4, epochs=epochs)

    tests = task_sequence("physics", 12, seed=TEST_SEED_OFFSET + seed)
    diag: list[float] = []

    def after(learner: Any, j: int) -> None:
        diag.append(learner.evaluate(tests[j], task_id=j).mse)

    learner, _ = train_pretrained(seed, scale, after_task=after)
    final = [learner.evaluate(tests[j], task_id=j).mse for j in range(len(diag))]
    return float(max(abs(f - d) for f, d in zip(final, diag, strict=True)))


def run_repro(seed: int, rung: str = "repro") -> dict[str, Any]:
    """Every method retrained at the checkpoint rung (:func:`iclr25.ms_gode.experiments.run_repro`), or at the
    paper's scale (``rung="paper"``; one step of four trajectories a task in a smoke run)."""
    from .experiments import COMPARED_METHODS  # noqa: PLC0415
    from .experiments import run_repro as _run  # noqa: PLC0415

    if rung != "paper":
        r = _run(seed)
        _FULL_REPRO[seed] = r
        return r
    from .pretrained import PretrainScale  # noqa: PLC0415

    scale = PretrainScale(**PAPER)
    if smoke_run():
        scale = dataclasses.replace(scale, n_train=4, n_valid=2, epochs=1, batch_size=4)
        return _run(seed, scale=scale, methods=("finetune",), baseline_lr=PAPER["lr"], n_test_batches=1,
                    n_tasks=1, device=default_device())
    return _run(seed, scale=scale, methods=COMPARED_METHODS, baseline_lr=PAPER["lr"], device=default_device())


#: the rungs of every claim but near-zero-forgetting (the ``long`` rung is that one's alone)
_RUNGS = ("test", "repro", "paper")

#: epochs per task of the ``long`` rung (the repro rung's 16 is :data:`~iclr25.ms_gode.pretrained.PRETRAIN`'s)
LONG_EPOCHS = 24

#: full repro runs of this process by seed: near-zero-forgetting reads them when present (no second training)
_FULL_REPRO: dict[int, dict[str, Any]] = {}


def _forgetting_run(seed: int, rung: str) -> dict[str, Any]:
    """What ``near-zero-forgetting`` needs: MS-GODE and fine-tuning only (the other baselines train independently
    with their own seeds, so their absence changes neither number). A full run of the same seed made in this
    process serves it; the paper rung always runs in full."""
    if rung == "paper":
        return run_repro(seed, rung)
    from .experiments import run_repro as _run  # noqa: PLC0415

    if rung == "long":
        return _run(seed, LONG_EPOCHS, methods=("finetune",))
    if seed in _FULL_REPRO:
        return _FULL_REPRO[seed]
    return _run(seed, methods=("finetune",))


@functools.lru_cache(maxsize=16)
def centroid_rival(seed: int) -> float:
    """The shortcut beside mode switching: the fraction of the claim's 48 test batches that a nearest-centroid
    rule on the observed window's statistics, without a model, gives their own task
    (:func:`iclr25.ms_gode.pretrained.centroid_task_accuracy`, trained on the seed's training sets)."""
    import numpy as np  # noqa: PLC0415

    from .data import task_sequence  # noqa: PLC0415
    from .pretrained import (  # noqa: PLC0415
        PRETRAIN,
        TEST_BATCH_SIZE,
        TEST_BATCHES,
        TEST_SEED_OFFSET,
        centroid_task_accuracy,
    )

    train = [t.subset(np.arange(PRETRAIN.n_train))
             for t in task_sequence("physics", PRETRAIN.n_train + PRETRAIN.n_valid, seed=seed)]
    tests = task_sequence("physics", TEST_BATCHES * TEST_BATCH_SIZE, seed=TEST_SEED_OFFSET + seed)
    return float(centroid_task_accuracy(train, tests)["fraction"])


@functools.lru_cache(maxsize=4)
def run_checkpoint(seed: int) -> dict[str, Any]:
    """The checkpoint of ``seed`` measured on fresh test tasks (``pretrained.measure``): the shipped one, or, for
    a seed that ships none (calibration and fresh seeds), one trained here with the same recipe
    (:func:`iclr25.ms_gode.pretrained.learner_for_seed`); ``source`` says which."""
    from .pretrained import learner_for_seed, measure  # noqa: PLC0415

    learner, source = learner_for_seed(seed)
    # the test rung decides mode switching and the unknown flags only: no extrapolation MSEs (half the time)
    return {**measure(learner, seed=seed, errors=False), "source": source}


_PER_SEED = "16 fresh test batches of 10 trajectories per task, 3 tasks: 48 decisions"


@REGISTRY.measures(
    Claim("oracle-no-forgetting", kind="sanity",
          statement="with the task's own binary mask over frozen weights, learning later tasks leaves an earlier "
                    "task's error exactly unchanged",
          paper="near-zero forgetting (AF-MSE ≈ 0)",
          metric="max_j |a_Kj − a_jj|, test MSE with the oracle mask, physics sequence",
          direction="lower", threshold=1e-6, rule="every_seed", rungs=_RUNGS,
          note="0.0 exactly at every seed measured (0-4, every rung since 0.1): frozen weights, per-task scores "
               "and LayerNorms; 1e-6 allows float reordering"),
    Claim("mode-switching", kind="main",
          statement="mode switching by self-prediction on the observed window picks the sub-network of the true "
                    "system, without the task id",
          paper="mode switching recovers the task (issue 44's bar: >= 0.9 of test batches)",
          metric=f"fraction of test batches given their own mask ({_PER_SEED})",
          direction="higher", threshold=0.9, rule="mean_ci", rungs=("repro", "paper"), expect="fails",
          ladder="README.md#mode-switch-ladder",
          note="issue 58: models trained here at calibration seeds 100-109 give 1, 0.67, 0.88, 1, 0.98, 1, 1, 1, "
               "1, 1 (seed 101 sends all 16 charged batches to another sub-network, seed 102 6 of them): mean "
               "0.95, sd 0.11, so 'every seed >= 0.9' would pass at 3 new seeds with probability well under 95 % "
               "(max margin -0.17); decided instead by the 95 % interval of the mean at the repro rung (models "
               "retrained here, not the shipped checkpoints made on another CPU). The 0.9 bar is kept. A "
               "nearest-centroid rule on the observed window's statistics, no model, scores 47-48 of 48 on the "
               "same batches (per seed: extra 'centroid_no_model'): this sequence cannot show that self-prediction "
               "finds a task a simple rule cannot (the data is issue 62). Ladder in the README"),
    Claim("unseen-system-flagged", kind="secondary",
          statement="a system never learned is flagged unknown (best self-prediction error above the chosen "
                    "mask's calibrated threshold, 1.5 × its worst validation batch)",
          metric="fraction of unseen-system batches (stiff springs k = 4, 4 batches of 10) flagged unknown",
          direction="higher", threshold=0.5, rule="every_seed", expect="fails", rungs=_RUNGS,
          ladder="README.md#unknown-system-check",
          note="bar: more than half of the unseen batches at every seed, set before any run and never moved. "
               "Ladder (8 / 16 / 24 epochs per task, seeds 0-2) and the ablation of its causes (factor 1.0-3.0, "
               "10 fresh validation batches instead of 2, the AUROC of the signal, the unseen set scaled by a "
               "training set's ranges): docs/unknown_ablation.json, written by `python "
               "benchmarks/unknown_ablation.py --out docs`; summary in the README"),
    Claim("known-not-flagged", kind="sanity",
          statement="test batches of the learned systems are not flagged unknown (few false alarms)",
          metric=f"fraction of known-task test batches flagged unknown ({_PER_SEED})",
          direction="lower", threshold=0.25, rule="every_seed", rungs=_RUNGS,
          note="0.25: at most 12 of 48 batches"),
)
def _physics(seed: int, rung: str) -> dict[str, Any]:
    if rung in ("repro", "paper"):
        r = run_repro(seed, rung)
        drift = r["oracle_drift"]
    else:
        r = run_checkpoint(seed)
        drift = forgetting_drift(seed)
    # the no-model rival reads the checkpoint rung's training sets; mode-switching is decided at the repro rung
    # only, so the test rung skips the rival's simulations
    rival = {"centroid_no_model": centroid_rival(seed)} if rung == "repro" else {}
    ex = {"ci95_low": r["mode_ci95"][0], "ci95_high": r["mode_ci95"][1], **rival,
          **{f"task{j + 1}": a for j, a in enumerate(r["mode_per_task"])}}
    return {"oracle-no-forgetting": drift,
            "mode-switching": Measurement(r["mode_fraction"], extra=ex),
            "unseen-system-flagged": r["unknown_unseen"],
            "known-not-flagged": r["unknown_known"]}


@REGISTRY.measures(
    Claim("ap-mse-vs-baselines", kind="main",
          statement="MS-GODE has the lowest AP-MSE of the continual learners (fine-tune, EWC, replay, LwF)",
          paper="best AP-MSE of the CL methods",
          metric="AP-MSE with mode switching, fresh test tasks", baseline="best of fine-tune / EWC / replay / LwF",
          direction="lower", rule="every_seed", rungs=("repro", "paper"), expect="fails",
          ladder="README.md#ranking-ladder",
          note="16 epochs: beats every continual learner at seed 0, loses to replay at seeds 1 and 2 (MS-GODE "
               "0.1350 ± 0.0111 vs replay 0.1324 ± 0.0215); MS-GODE's AP-MSE equals its oracle-mask AP-MSE "
               "(no forgetting, every batch switched right), so the gap is single-task fit; epoch ladder and "
               "causes in the README"),
)
def _ranking(seed: int, rung: str) -> dict[str, Measurement]:
    r = run_repro(seed, rung)
    b = r["baselines"]
    best = min((k for k in BASELINE_METHODS if k in b), key=lambda k: b[k]["ap_mse"])
    return {"ap-mse-vs-baselines": Measurement(r["ap_mse"], reference=b[best]["ap_mse"],
                                               extra={**{f"{k}_ap_mse": v["ap_mse"] for k, v in b.items()}})}


@REGISTRY.measures(
    Claim("near-zero-forgetting", kind="main",
          statement="MS-GODE with mode switching forgets far less than fine-tuning (AF-MSE at most a tenth of "
                    "fine-tuning's)",
          paper="AF-MSE ≈ 0",
          metric="|AF-MSE| with mode switching, fresh test tasks", baseline="0.1 × fine-tune AF-MSE",
          direction="lower", rule="every_seed", rungs=("long", "paper"),
          note="issue 58: margin 0 calibrated at the long rung (24 epochs per task) on seeds 100-109 "
               "(claims-calibration-long.json; seeds 100-104 by `iclr25 claims ms-gode --calibrate --rung long "
               "--only near-zero-forgetting --seeds 100-104`, 105-109 by the same command with --seeds 105-109, "
               "joined by benchmarks/merge_calibration.py): |AF-MSE| 0 at 8 of 10 seeds, 0.0079 at 102 and "
               "0.0002 at 104, against 0.1 x fine-tuning's 0.011-0.024; improvement mean 0.0141, sd 0.0050, max "
               "margin 0.0035 (rule and margin fixed before seeds 105-109 had values, EVIDENCE.md). At the repro "
               "rung's 16 epochs it is not robust (calibration seeds 100-104, "
               "docs/near_zero_forgetting_calibration_repro.json: improvements 0.0148, -0.0222, 0.0089, 0.0158, "
               "0.0085, max margin -0.028; seed 101's mode switching sends the charged task to another "
               "sub-network), so the claim is decided at long (docs/long/claims.json), not at repro"),
)
def _forgetting(seed: int, rung: str) -> dict[str, Measurement]:
    r = _forgetting_run(seed, rung)
    ft = r["baselines"]["finetune"]["af_mse"]
    extra = {"finetune_af_mse": ft, "mode_fraction": r["mode_fraction"]}
    if len(r["mode_per_task"]) > 1:  # the paper rung's smoke run learns the first task only
        extra["charged_mode_fraction"] = r["mode_per_task"][1]
    return {"near-zero-forgetting": Measurement(abs(r["af_mse"]), reference=0.1 * ft, extra=extra)}
