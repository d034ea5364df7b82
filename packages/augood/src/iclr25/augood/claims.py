"""AU-GOOD's claims as this package checks them (the federation's claims registry, :mod:`iclr25.utils.claims`).

Rungs: ``test`` (the default suite: the solubility case study with ridge regression on a coarse threshold grid,
one partition seed per claim seed), ``repro`` (random forest, the full 0.30-0.95 grid) and ``paper`` (the paper's
model settings: random forest of 200 trees, the 0.30-0.95 grid, 1,000 bootstrap resamples; on the shipped
solubility set, since the paper's TDC ADMET sets are downloads; CPU work, ``--estimate`` prints its cost and
``--smoke`` runs it once, shrunk). Each seed draws its
own control hold-out, CCPart tie-breaking and model seed. Margins are checked on the calibration seeds 100-109
at the test rung (``claims-calibration.json``; see each claim's note).
"""

from __future__ import annotations

import numpy as np

from iclr25.utils.claims import Claim, ClaimRegistry, Measurement, RungCost, smoke_run

__all__ = ["REGISTRY"]

#: Estimated, not measured: twice the repro rung's trees and five times its bootstrap resamples on the same 1,282
#: molecules; the similarity matrix and CCPart sweep cost seconds, the forests dominate.
PAPER_COST = RungCost(
    gpu_hours=0, cpu_hours=0.1, memory_gb=2, hardware="one CPU core (scikit-learn, RDKit)",
    what="the paper's model settings: random forest of 200 trees on ECFP4-2048, CCPart over the 0.30-0.95 grid "
         "in 0.05 steps, AU-GOOD with 1,000 bootstrap resamples",
    data="the shipped RDKit solubility set and ChEMBL drugs as the deployment set (the paper's TDC ADMET sets "
         "are downloads and are not read by this rung)")
REGISTRY = ClaimRegistry("iclr25-augood", seeds={"test": (0, 1, 2), "repro": (0, 1, 2, 3, 4), "paper": (0, 1, 2)},
                         costs={"paper": PAPER_COST})

_RUNG = {"test": {"model": "ridge", "grid": (0.3, 0.9, 0.1), "n_bootstrap": 50, "n_trees": 20},
         "repro": {"model": "rf", "grid": (0.3, 0.95, 0.05), "n_bootstrap": 200, "n_trees": 100},
         "paper": {"model": "rf", "grid": (0.3, 0.95, 0.05), "n_bootstrap": 1000, "n_trees": 200}}
#: What a smoke run (``--smoke``) measures instead, at any rung: the code path once, in seconds.
_SMOKE = {"model": "rf", "grid": (0.3, 0.9, 0.3), "n_bootstrap": 5, "n_trees": 2}


def _cfg(rung: str) -> dict:
    if rung not in _RUNG:
        raise ValueError(f"unknown rung {rung!r}; rungs: {sorted(_RUNG)}")
    return _SMOKE if smoke_run() else _RUNG[rung]


@REGISTRY.measures(
    Claim("good-curve-rises", kind="secondary",
          statement="with a suitable similarity function the GOOD curve rises with the train-test threshold",
          paper="monotone GOOD curves (Sec. 4.1)", metric="Spearman rho(lambda, P) of the seed's GOOD curve",
          direction="higher", threshold=0.5, rule="every_seed",
          note="bound 0.5 (a clearly rising curve) with margin 0 below max_margin at calibration seeds 100-109 (claims-calibration.json)"),
    Claim("ccpart-harder-than-random", kind="main",
          statement="CCPart at a low threshold gives a much harder test set than a random split",
          paper="", metric="Spearman rho of predictions at the lowest viable lambda", direction="lower",
          baseline="random split, same model", margin=0.14, rule="every_seed",
          note="margin 0.14 < max_margin 0.142 from calibration seeds 100-109 (improvement mean 0.309, sd 0.079; "
               "claims-calibration.json); 0.5.0 had 0.15, set on seeds 0-4"),
    Claim("augood-sees-deployment-shift", kind="main",
          statement="AU-GOOD expects lower performance on a deployment set unlike the training data (ChEMBL drugs) "
                    "than on one like it (a held-out control)",
          paper="", metric="AU-GOOD for ChEMBL approved drugs", direction="lower",
          baseline="AU-GOOD for the in-distribution control", margin=0.04, rule="every_seed",
          note="margin 0.04 < max_margin 0.0402 from calibration seeds 100-109 (improvement mean 0.106, sd 0.031; "
               "claims-calibration.json); 0.5.0 had 0.05, set on seeds 0-4"),
    Claim("ccpart-no-leakage", kind="sanity",
          statement="CCPart never puts a pair with similarity >= lambda across the train/test boundary",
          paper="guarantee of CCPart", metric="max over viable lambda of (max train-test similarity - lambda)",
          direction="lower", threshold=0.0, rule="every_seed",
          note="brute force over every viable partition (a leak gives >= 0); margin 0 below max_margin at calibration seeds 100-109 (claims-calibration.json)"),
)
def _study(seed: int, rung: str) -> dict[str, Measurement | float]:
    from .casestudy import lowest_viable, run_case_study  # noqa: PLC0415
    from .data import load_dataset  # noqa: PLC0415
    from .partition import ccpart_sweep, threshold_grid  # noqa: PLC0415
    from .similarity import fingerprints, similarity_matrix  # noqa: PLC0415

    c = _cfg(rung)
    grid = threshold_grid(*c["grid"])
    study = run_case_study("solubility", models=(c["model"],), seeds=(seed,), seed=seed, thresholds=grid,
                           n_bootstrap=c["n_bootstrap"], n_trees=c["n_trees"], show_progress=False)
    curve = study.curves[c["model"]]
    # leakage, brute force on a 400-molecule subset drawn with this seed
    ds = load_dataset("solubility")
    idx = np.sort(np.random.default_rng(seed).choice(len(ds), 400, replace=False))
    sim = similarity_matrix(fingerprints([ds.smiles[i] for i in idx]))
    dense = sim.toarray()
    worst = -1.0
    for p in ccpart_sweep(sim, grid, seed=seed):
        if p.viable:
            rest = np.concatenate([p.train, p.valid])
            worst = max(worst, float(dense[np.ix_(p.test, rest)].max() - p.threshold))
    return {
        "good-curve-rises": float(curve.seed_monotonicity()[0]),
        "ccpart-harder-than-random": Measurement(lowest_viable(curve),
                                                 reference=float(np.nanmean(curve.random_performance))),
        "augood-sees-deployment-shift": Measurement(study.scores[(c["model"], "chembl_drugs")].value,
                                                    reference=study.scores[(c["model"], "control")].value),
        "ccpart-no-leakage": worst,
    }
