"""RxnFlow's claims as this package checks them (the federation's claims registry, :mod:`iclr25.utils.claims`).

Rungs: ``test`` (the default suite: a 1e5-action space for the estimator claims; the enumerable toy of the
paper's appendix, 100 blocks, trained 200 TB steps) and ``repro`` (more estimates, 400 steps). Each seed draws
its own action space, policy initialisation, training noise and samples (the toy library is the same). Margins are
checked on calibration seeds 100-109 at the test rung (``claims-calibration.json``, see each claim's note); the
main claims of the abstract (pocket-specific optimisation on a docking proxy, the cost of a step over a large
library, unseen blocks without retraining) are decided at the ``repro`` rung.

``paper`` (seeds 0, 1, 2; for a GPU: ``iclr25 claims rxnflow --rung paper --estimate``): the two main claims at the
paper's scale: pocket-specific optimisation with the paper's budget (1,000 TB steps of 64, ρ = 0.02, at least 100
actions per block set, top-100 diverse modes) on the user's block library and templates (``$ICLR25_RXNFLOW_BLOCKS``,
``$ICLR25_RXNFLOW_TEMPLATES``: the paper's Enamine catalog of 1.2M blocks and its 71 templates are not shipped), and
the cost of a step over a 1.2M-block library. The device is ``$ICLR25_DEVICE`` (``iclr25 claims rxnflow
--device``), else ``auto``; ``--smoke`` runs the rung for one step on small sizes.
"""

from __future__ import annotations

import functools
import math
import os

import numpy as np

from iclr25.utils.claims import Claim, ClaimRegistry, Measurement, RungCost, smoke_run
from iclr25.utils.device import default_device

__all__ = ["REGISTRY", "PAPER", "BLOCKS_ENV", "TEMPLATES_ENV"]

#: where the paper rung reads the user's building blocks (.smi/.csv[.gz]) and reaction templates (a file or a name)
BLOCKS_ENV, TEMPLATES_ENV = "ICLR25_RXNFLOW_BLOCKS", "ICLR25_RXNFLOW_TEMPLATES"

REGISTRY = ClaimRegistry(
    "iclr25-rxnflow", seeds={"test": (0, 1, 2), "repro": (0, 1, 2, 3, 4), "paper": (0, 1, 2), "docking": (0, 1, 2)},
    # docking: every seed docks 3 x DOCKING["budget"] molecules with CPU Vina, so it calibrates on 3 seeds
    calibration={"test": tuple(range(100, 110)), "repro": tuple(range(100, 110)), "paper": tuple(range(100, 110)),
                 "docking": (100, 101, 102)},
    costs={"paper": RungCost(
        gpu_hours=1.5, memory_gb=24, hardware="one 40-80 GB CUDA GPU with 32 GB of host RAM",
        what="the paper's pocket-specific budget: 1,000 TB steps of 64 trajectories (64k oracle calls) at rho = 0.02 "
             "(>= 100 blocks per set), <= 3 blocks, top-100 diverse modes vs enumerate-and-rank at the same oracle "
             "calls, on your library (the paper: Enamine's 1.2M blocks, 71 templates), scored by the package's "
             "docking proxy (not UniDock Vina), with the fingerprint-MLP policy (not the paper's graph "
             "transformer); and one TB step over a 1.2M-block synthetic library, rho = 0.02 vs the full softmax "
             "(~20 GB on the GPU). Estimated, not measured on a GPU: the run is CPU-bound by RDKit (featurising "
             "and template-matching 1.2M blocks ~40 min, once per process; ~0.5 s of reactions and proxy per "
             "step; ~5 min of screening); the GPU part is minutes",
        data=f"${BLOCKS_ENV}: your building blocks (.smi/.csv, e.g. Enamine's catalog, on request, or ZINCFrag); "
             f"${TEMPLATES_ENV}: your templates file (the paper's hb_edited.txt, 71 SMARTS) or builtin/datamol")})

#: the paper rung's configuration (Seo et al. 2025, pocket-specific optimisation; exp5's largest library)
PAPER = {"steps": 1000, "batch_size": 64, "rho": 0.02, "min_sampling": 100, "k": 100, "max_len": 3,
         "beta": 16.0, "scale_blocks": 1_200_000, "scale_steps": 10}

_RUNG = {"test": {"n_subsets": 5000, "n_var": 2000, "steps": 200, "n_samples": 200, "k": 30},
         "repro": {"n_subsets": 20000, "n_var": 5000, "steps": 400, "n_samples": 1000, "k": 100}}


def _cfg(rung: str) -> dict:
    if rung not in _RUNG:
        raise ValueError(f"unknown rung {rung!r}; rungs: {sorted(_RUNG)}")
    return _RUNG[rung]


def _action_space(seed: int, scale: float):
    """A 1e5-action space: stop + 10 unimolecular actions + 4 block spaces (40k, 30k, 20k, 9,989)."""
    rng = np.random.default_rng(seed)
    fixed = rng.normal(0, scale, size=11)
    spaces = [rng.normal(0, scale, size=n) for n in (40000, 30000, 20000, 9989)]
    exact = np.exp(fixed).sum() + sum(np.exp(s).sum() for s in spaces)
    return fixed, spaces, exact


@REGISTRY.measures(
    Claim("subsampled-z-unbiased", kind="secondary",
          statement="the importance-weighted partition estimate on a subsampled action space is unbiased",
          paper="Eq. 8-9 (unbiased Z-hat at rho << 1)", metric="|mean(Z-hat)/Z - 1|, 1e5 actions, rho = 0.02",
          direction="lower", threshold=0.01, rule="every_seed", rungs=("test", "repro"),
          note="5,000 subsets per seed; the 1 % bound is the issue's; calibration seeds 100-109: 0.02-0.63 %, "
               "max_margin 0.0032 >= margin 0 (claims-calibration.json)"),
    Claim("importance-weight-matters", kind="secondary",
          statement="without the importance weight the subsampled estimate is far too small",
          paper="", metric="naive Z-hat / Z (no weight), rho = 0.02", direction="lower", threshold=0.1,
          rule="every_seed", rungs=("test", "repro"),
          note="bound 0.1 (about 5 rho); calibration seeds 100-109: 0.015-0.025, max_margin 0.075 >= "
               "margin 0 (claims-calibration.json)"),
    Claim("variance-one-over-rho", kind="secondary",
          statement="the variance of Z-hat scales as (1 - rho)/rho",
          paper="", metric="max/min of Var(Z-hat) rho/(1-rho) over rho = 0.01-0.08", direction="lower",
          threshold=1.35, rule="every_seed", rungs=("test", "repro"),
          note="2,000 subsets per rho; bound 1.35 (a 1/rho^2 law would give ~8); calibration seeds 100-109: "
               "1.01-1.12, max_margin 0.23 >= margin 0 (claims-calibration.json)"),
)
def _estimator(seed: int, rung: str) -> dict[str, float]:
    from .estimator import draw_subsets, partition_estimates  # noqa: PLC0415

    c = _cfg(rung)
    fixed, spaces, exact = _action_space(1000 + seed, 2.0)
    z = partition_estimates(spaces, fixed, 0.02, c["n_subsets"], seed=seed)
    sub = draw_subsets([len(s) for s in spaces], 0.02, np.random.default_rng(seed), min_sampling=1)
    naive = np.exp(fixed).sum() + sum(np.exp(s[i]).sum() for s, i in zip(spaces, sub.index, strict=True))
    fixed1, spaces1, exact1 = _action_space(2000 + seed, 1.0)
    rhos = np.array([0.01, 0.02, 0.04, 0.08])
    var = np.array([partition_estimates(spaces1, fixed1, r, c["n_var"], seed=seed + 7).var() for r in rhos])
    scaled = var / exact1 ** 2 * rhos / (1 - rhos)
    return {"subsampled-z-unbiased": float(abs(z.mean() / exact - 1)),
            "importance-weight-matters": float(naive / exact),
            "variance-one-over-rho": float(scaled.max() / scaled.min())}


@functools.lru_cache(maxsize=1)
def _toy_space():
    """The enumerable toy (100 blocks, 4 amine couplings, <= 2 blocks) and its exact enumeration; one library for
    every seed (enumerating it is the expensive part), the seeds vary the policy's initialisation, the training
    noise and the samples."""
    from .rewards import parse_reward  # noqa: PLC0415
    from .toy import enumerate_terminals, toy_space  # noqa: PLC0415

    space = toy_space(30, 50, n_other=20, seed=0)
    reward = parse_reward("qed")
    enum = enumerate_terminals(space, reward)
    space.parent_counts = enum.in_degree()
    return space, reward, enum


def _new_blocks(model) -> float:
    """|log ratio| of the mean first-block probability of 20 amines the model never saw to that of its amines."""
    from .blocks import _grammar  # noqa: PLC0415

    have = set(model.space.blocks.smiles)
    new = [s for s in _grammar()["amine"] if s not in have][:20]
    lp = model.with_blocks(new).first_block_log_probs()
    p_new, p_old = np.exp(lp[-len(new):]), np.exp(lp[:-len(new)])
    amines = np.arange(30, 80)  # the toy library: 30 electrophiles, then 50 amines, then 20 others
    return float(abs(np.log(p_new.mean() / p_old[amines].mean())))


def trained_toy(seed: int, steps: int = 200, device: str | None = None):
    """``(model, TrainResult)``: RxnFlow trained ``steps`` TB steps on the toy at rho = 0.1 (batch 64, beta 4) on
    ``device`` (``None``: ``$ICLR25_DEVICE``, else ``auto``); cached, so the claims and the tests that need a
    trained model share one training per seed."""
    return _trained_toy(seed, steps, default_device() if device is None else str(device))


@functools.lru_cache(maxsize=4)
def _trained_toy(seed: int, steps: int, device: str):
    import torch  # noqa: PLC0415

    from .gflownet import RxnFlow, TrainConfig, train  # noqa: PLC0415

    torch.set_num_threads(1)  # tiny tensors: more intra-op threads only contend (and spin) on a busy machine
    torch.manual_seed(seed)
    space, reward, _ = _toy_space()
    model = RxnFlow(space, reward, beta=4.0, seed=seed, device=device)
    res = train(model, TrainConfig(steps=steps, batch_size=64, rho=0.1, min_sampling=5, beta=4.0), seed=seed,
                show_progress=False)
    return model, res


@REGISTRY.measures(
    Claim("fits-target-distribution", kind="sanity",
          statement="trained with trajectory balance on a subsampled action space (rho = 0.1), RxnFlow's terminal "
                    "distribution matches p* proportional to R^beta",
          paper="App. D.1 (toy, exact target)", metric="Pearson r(log p_theta(x), beta log R(x)), exact",
          direction="higher", baseline="same policy untrained", margin=0.4, rule="every_seed", rungs=("test", "repro"),
          note="200 TB steps on the 100-block toy; margin 0.4 < max_margin 0.78 from calibration seeds 100-109 "
               "(r 0.85-0.91 vs untrained -0.08-0.09; claims-calibration.json)"),
    Claim("samples-beat-random-synthesis", kind="sanity",
          statement="RxnFlow samples have higher reward than uniform-random synthesis in the same space",
          paper="", metric="mean QED of samples", direction="higher", baseline="uniform-random synthesis",
          margin=0.03, rule="every_seed", rungs=("test", "repro"),
          note="200 samples at the test rung; margin 0.03 < max_margin 0.081 from calibration seeds 100-109 (gap "
               "+0.085-0.11; claims-calibration.json)"),
    Claim("routes-replay", kind="sanity",
          statement="every sample carries a synthesis route that replays to the same molecule",
          paper="", metric="fraction of samples whose route replays", direction="higher", threshold=0.999,
          rule="every_seed", rungs=("test", "repro"),
          note="1.0 at every seed (calibration seeds 100-109 too); any failure breaks the claim"),
    Claim("modes-beat-random-by-0.1", kind="secondary",
          statement="the top diverse modes' reward exceeds random synthesis's by a wide margin",
          paper="top-100 diverse modes, QED well above baselines", metric="mean QED of the top-k diverse modes",
          direction="higher", baseline="uniform-random synthesis, same k", margin=0.1, rule="every_seed",
          rungs=("test", "repro"),
          expect="fails", ladder="README.md#why-the-modes-gap-is-below-01",
          note="top-30 modes: gap +0.014-0.033 at calibration seeds 100-109 (max_margin 0.010 < 0.1); in these toys "
               "the best diverse modes that exist sit less than 0.1 above what random synthesis finds (README: "
               "ladder over budgets and the ceiling ablation)"),
    Claim("new-blocks-without-retraining", kind="main",
          statement="blocks added after training are scored from their fingerprints like the known blocks of their "
                    "kind, so the expanded action space is used without retraining",
          paper="modified or expanded action spaces without retraining (abstract; exp4 unseen blocks)",
          metric="|log(mean first-block probability of 20 unseen amines / that of the known amines)|",
          direction="lower", threshold=1.609, rule="every_seed", rungs=("repro",),
          note="threshold log 5 (a factor of 5 either way): the bound of the package's test "
               "test_blocks_added_after_training_are_sampled, set before this claim was registered; calibration "
               "seeds 100-104 at the repro rung: 0.12-0.27, max_margin 1.29 >= margin 0 "
               "(claims-calibration-repro.json); largely true by construction (blocks enter the policy only through "
               "their fingerprints)"),
)
def _toy(seed: int, rung: str) -> dict[str, Measurement | float]:
    from .gflownet import RxnFlow  # noqa: PLC0415
    from .routes import verify_route  # noqa: PLC0415
    from .toy import distribution_fit, diverse_top_k, random_synthesis  # noqa: PLC0415

    c = _cfg(rung)
    space, reward, enum = _toy_space()
    untrained = distribution_fit(RxnFlow(space, reward, beta=4.0, seed=seed), enum)
    model, _ = trained_toy(seed, c["steps"])
    fit = distribution_fit(model, enum)
    ours = model.sample(c["n_samples"], seed=seed + 1)
    rand = random_synthesis(model, c["n_samples"], seed=seed + 1)
    valid = [s for s in ours if s.valid]
    replay = sum(bool(verify_route(s.route)) for s in valid) / len(ours)
    top_o = diverse_top_k([s.smiles for s in ours], [s.reward for s in ours], k=c["k"])
    top_r = diverse_top_k([s.smiles for s in rand], [s.reward for s in rand], k=c["k"])
    return {
        "new-blocks-without-retraining": _new_blocks(model),
        "fits-target-distribution": Measurement(fit.pearson, reference=untrained.pearson),
        "samples-beat-random-synthesis": Measurement(float(np.mean([s.reward for s in ours])),
                                                     reference=float(np.mean([s.reward for s in rand]))),
        "routes-replay": float(replay),
        "modes-beat-random-by-0.1": Measurement(float(np.mean([ours[i].reward for i in top_o])),
                                                reference=float(np.mean([rand[i].reward for i in top_r]))),
    }


# ------------------------------------------------------------------------------ large action spaces
#: the subsampling-scales bound: a 3x speed-up (the issue's, fixed before the claim was measured), decided on the
#: log of the ratio (a speed ratio's spread is multiplicative)
SPEEDUP_BOUND = 3.0


@REGISTRY.measures(Claim(
    "subsampling-scales", kind="main",
    statement="action-space subsampling makes a training step over a large block library much cheaper than the "
              "full softmax (the paper's 1.2M blocks 'without significant computational overhead')",
    paper="1.2M blocks x 71 templates without significant overhead (abstract); exp5 action-space-size ablation",
    metric="ln(speed-up), speed-up = s/step of the full softmax (rho = 1) / s/step at rho = 0.02, 10,000 blocks "
           "(paper rung: 1.2M), batch 64, fresh process; ln 3 = 1.10, ln 10 = 2.30 (the x-fold speed-up: extra "
           "'speedup' in claims.json)",
    direction="higher", threshold=math.log(SPEEDUP_BOUND), rule="every_seed", rungs=("repro", "paper"),
    note="bound 3x (ln 3): the issue's speed bound (rho = 0.1 >= 3x rho = 1), fixed before this claim was "
         "measured and unchanged (a seed holds exactly when its speed-up is above 3x); decided on the log of the "
         "ratio because a speed ratio's spread is multiplicative; calibration seeds 100-104 at the repro rung: "
         "8.1-11.6x (ln 2.09-2.45), max_margin 0.90 >= margin 0 on the log scale (claims-calibration-repro.json); "
         "each seed draws its own synthetic library, policy and subsets; wall-clock timings on the shared 2-core "
         "machine"))
def _scaling(seed: int, rung: str) -> dict[str, Measurement]:
    from .scaling import scale_row, step_cost  # noqa: PLC0415

    if rung == "paper" and smoke_run():  # one step on a small library, in this process
        import torch  # noqa: PLC0415

        with torch.random.fork_rng():
            sub, full = (step_cost(2_000, rho, 1, seed=seed, device=default_device()) for rho in (0.02, 1.0))
    else:
        n = PAPER["scale_blocks"] if rung == "paper" else 10_000
        steps = PAPER["scale_steps"] if rung == "paper" else 10
        sub = scale_row(n, 0.02, steps, seed=seed)
        full = scale_row(n, 1.0, steps, seed=seed)
    speedup = float(full["s_per_step"] / sub["s_per_step"])
    return {"subsampling-scales": Measurement(math.log(speedup), extra={
        "speedup": speedup, "s_per_step_full": float(full["s_per_step"]),
        "s_per_step_rho_0.02": float(sub["s_per_step"])})}


# ------------------------------------------------------------------------------ pocket-specific optimisation
_POCKET_RUNG = {"repro": {"blocks": 600, "steps": 100, "k": 30}}


@REGISTRY.measures(Claim(
    "pocket-modes-beat-screening", kind="main",
    statement="pocket-specific optimisation: the top diverse modes RxnFlow generates while it trains dock better "
              "than the strongest simple method at the same oracle budget (enumerate-and-rank: screening as many "
              "distinct random-synthesis products and keeping the best)",
    paper="RxnFlow beats reaction- and fragment-based models on 15 LIT-PCBA pockets (UniDock Vina, 64k oracle calls)",
    metric="mean proxy docking score of the top-30 diverse modes (kcal/mol-like; pocket proxy, seed s docks "
           "pocket s mod 3: polar, lipophilic, mixed)",
    direction="lower", baseline="enumerate-and-rank, same number of distinct oracle calls", margin=0.0,
    rule="mean_ci", rungs=("repro", "paper"),
    note="margin 0 (better than the baseline at all, decided by the 95 % interval of the mean over seeds 0-4; "
         "no margin tuned on any seed); calibration seeds 100-104 at the repro rung: gains 0.27-0.42, max_margin "
         "0.18 >= margin 0 (claims-calibration-repro.json); 600 built-in blocks, 11 templates, <= 3 blocks, beta 16, 100 TB steps "
         "of 64 at rho = 0.1; the proxy is a descriptor surrogate of docking (iclr25.rxnflow.pocket), not Vina"))
def _pocket(seed: int, rung: str) -> dict[str, Measurement]:
    import torch  # noqa: PLC0415

    from .blocks import builtin_blocks  # noqa: PLC0415
    from .pocket import POCKETS, pocket_vs_screening  # noqa: PLC0415
    from .space import SynthesisSpace  # noqa: PLC0415
    from .templates import builtin_templates  # noqa: PLC0415

    if rung == "paper":
        space = _paper_space(*_paper_data())
        steps = 1 if smoke_run() else PAPER["steps"]
        r = pocket_vs_screening(space, list(POCKETS)[seed % len(POCKETS)], steps=steps, seed=seed, k=PAPER["k"],
                                beta=PAPER["beta"], rho=PAPER["rho"], batch_size=PAPER["batch_size"],
                                min_sampling=PAPER["min_sampling"], device=default_device())
        return {"pocket-modes-beat-screening": Measurement(r.ours, reference=r.screening,
                                                           extra={"oracle_calls": float(r.oracle_calls)})}
    c = _POCKET_RUNG[rung]
    torch.set_num_threads(1)
    space = SynthesisSpace(builtin_blocks(c["blocks"], seed=0), builtin_templates(), max_len=3, allow_dead=True)
    r = pocket_vs_screening(space, list(POCKETS)[seed % len(POCKETS)], steps=c["steps"], seed=seed, k=c["k"])
    return {"pocket-modes-beat-screening": Measurement(r.ours, reference=r.screening,
                                                       extra={"pocket_index": float(list(POCKETS).index(r.pocket)),
                                                              "oracle_calls": float(r.oracle_calls)})}


def _paper_data() -> tuple[str, str]:
    """The paper rung's building blocks and templates, from ``$ICLR25_RXNFLOW_BLOCKS`` and
    ``$ICLR25_RXNFLOW_TEMPLATES`` (a missing one is a one-line error naming what to provide)."""
    blocks, templates = os.environ.get(BLOCKS_ENV, "").strip(), os.environ.get(TEMPLATES_ENV, "").strip()
    if not blocks:
        raise ValueError(f"rung 'paper' needs your building blocks: set {BLOCKS_ENV} to a .smi/.csv file (the paper's "
                         "Enamine catalog of 1.2M blocks is not shipped; ZINCFrag or your own library work too)")
    if not templates:
        raise ValueError(f"rung 'paper' needs reaction templates: set {TEMPLATES_ENV} to a templates file (the paper's "
                         "hb_edited.txt, 71 SMARTS) or to builtin or datamol")
    return blocks, templates


@functools.lru_cache(maxsize=1)
def _paper_space(blocks: str, templates: str):
    """The synthesis space of the paper rung (featurising and matching a 1.2M-block library takes long: once)."""
    from .blocks import load_blocks  # noqa: PLC0415
    from .space import SynthesisSpace  # noqa: PLC0415
    from .templates import load_templates  # noqa: PLC0415

    return SynthesisSpace(load_blocks(blocks), load_templates(templates), max_len=PAPER["max_len"], allow_dead=True)


# ------------------------------------------------------------------------------ docking a real pocket (Vina)
#: the docking rung: distinct Vina calls per method and seed, the top-k of the metric, Vina's exhaustiveness,
#: and the oracle budgets of the ladder (read from the same runs: the first B calls of each method)
DOCKING = {"budget": 40, "k": 10, "exhaustiveness": 1, "ladder": (10, 20, 40)}
_METHODS = {"RxnFlow": "rxnflow", "random synthesis": "random", "fragment GA": "fragments",
            "random fragments": "random_fragments"}
#: a folder for the docking rung's Vina score caches (optional; one JSON per seed)
VINA_CACHE_ENV = "ICLR25_RXNFLOW_VINA_CACHE"


@REGISTRY.measures(Claim(
    "docking-beats-baselines", kind="main",
    statement="pocket-specific optimisation with AutoDock Vina: at the same number of oracle calls, the top "
              "diverse molecules RxnFlow docks while it trains score better than those of a reaction-based baseline "
              "(enumerate-and-rank random synthesis) and of a fragment-based generator without synthesis "
              "constraints (a BRICS fragment GA), with every RxnFlow molecule carrying a route that replays",
    paper="RxnFlow beats reaction- (SynNet, RGFN, SynFlowNet) and fragment-based (FragGFN) generators on 15 "
          "LIT-PCBA pockets: better Vina top-100, diversity and synthesizability at 64k oracle calls (Table 2)",
    metric="mean Vina score (kcal/mol) of the top-10 diverse molecules (Tanimoto < 0.5) among the first 40 "
           "distinct molecules each method docks, T4 lysozyme L99A (its bound ligand's box), exhaustiveness 1",
    direction="lower", baseline="the better of random synthesis and the fragment GA, same 40 oracle calls",
    margin=0.0, rule="every_seed", rungs=("docking",),
    expect="fails", ladder="EVIDENCE.md#docking-a-real-pocket-with-autodock-vina",
    note="declared fail: at calibration seeds 100-102 RxnFlow's top-10 is 0.90 kcal/mol worse than the better "
         "baseline on average (sd 0.59; max margin -2.1 < margin 0), so the claim was declared to fail before "
         "seeds 0-2 were decided; rule and margin 0 written before any seed ran; calibration seeds 100-102 "
         "(claims-calibration-docking.json; "
         "3 seeds, not 10: each seed is ~130 Vina calls of ~1.8 s CPU); per seed the extra holds every method's top-10 "
         "Vina, diversity, route replay and SA at 10, 20 and 40 calls (the oracle-budget ladder), the ablation "
         "'random fragments' (the GA's random start, no selection), and Vina's CPU seconds per call"))
def _docking(seed: int, rung: str) -> dict[str, Measurement]:
    import torch  # noqa: PLC0415

    from .pocket import docking_comparison  # noqa: PLC0415

    torch.set_num_threads(1)
    budget = 4 if smoke_run() else DOCKING["budget"]
    cache = os.environ.get(VINA_CACHE_ENV, "").strip()
    if cache:  # Vina scores (and each docking's CPU time) kept per seed: a rerun docks nothing twice
        os.makedirs(cache, exist_ok=True)
        cache = os.path.join(cache, f"vina-t4l-seed{seed}-ex{DOCKING['exhaustiveness']}.json")
    c = docking_comparison(budget, seed=seed, exhaustiveness=DOCKING["exhaustiveness"], device=default_device(),
                           cache=cache or None, methods=("rxnflow", "random", "fragments", "random-fragments"))
    extra: dict[str, float] = {"cpu_s_per_call": float(np.mean(c.cpu_per_call)),
                               "cpu_s_per_call_median": float(np.median(c.cpu_per_call)),
                               "vina_calls": float(len(c.cpu_per_call)), "maps_cpu_s": float(c.setup_cpu_s)}
    for b in DOCKING["ladder"] if not smoke_run() else (budget,):
        for name, m in c.metrics(b, k=DOCKING["k"]).items():
            for key, v in m.items():
                if key != "calls" and math.isfinite(v):
                    extra[f"{_METHODS[name]}_{key}_{b}"] = float(v)
    top = {name: m["top_k_vina"] for name, m in c.metrics(k=DOCKING["k"]).items()}
    ref = min(top["random synthesis"], top["fragment GA"])
    return {"docking-beats-baselines": Measurement(top["RxnFlow"], reference=ref, extra=extra)}
