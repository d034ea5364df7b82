"""The paper's claims as the package checks them, decided over seeds (``iclr25.utils.claims``).

Rungs: ``"test"`` (the default test suite: 422-node meshes, width 16, 300 Adam steps, 3 seeds) and ``"repro"``
(``iclr25 piorf repro``'s models: ~720-node meshes, 2 blocks of width 32, 3000 steps, 5 seeds; the repro's
trained models are reused, not trained twice).

Kinds (issue 58): ``main`` = a headline of the abstract, ``secondary`` = a claim of the paper's body, ``sanity`` =
a precondition or a property true by construction. ``models-beat-trivial`` and ``long-range-mechanism`` are
decided at the repro rung only: at the test rung's scale they missed at 3 of 10 calibration seeds.

- ``piorf-beats-mgn`` (main): MGN+PIORF has a lower rollout error than MGN (up to 26.2 %). It does not
  reproduce here (expected to fail); the README's regime ladder and its ablation of causes say why.
- ``rewiring-is-cheap`` (main): PIORF's preprocessing (one curvature pass) costs < 0.2x BORF's.
- ``models-beat-trivial`` (sanity): the rollout metric is decidable: MGN beats the better of the two trivial
  predictors (hold the first frame, the test trajectory's own time-mean field).
- ``long-range-mechanism`` (secondary): PIORF's edges do carry long-range information: on the mechanism task
  (bottleneck nodes must read a node many hops away) MGN+PIORF's error is far below plain MGN's.
- ``rewiring-lowers-resistance`` (sanity): the mean effective resistance from the bottleneck nodes falls.

- ``piorf-beats-other-rewirings`` (main, repro rung only): the abstract's "outperforms existing rewiring methods",
  against SDRF, the strongest of SDRF/FoSR/BORF/DIGL in the README's regime ladder. It does not reproduce here
  (expected to fail); ``benchmarks/measured/regime/vs_rewirings.md`` has its budget ladder and ablation.

``paper`` (seeds 0, 1, 2; for a GPU: ``iclr25 claims piorf --rung paper --estimate``): the three main claims (and
``models-beat-trivial``) in the paper's configuration: MeshGraphNets with 15 blocks of width 128, 10M Adam steps
(lr 1e-4 to 1e-6), one frame a step, on the user's CylinderFlow trajectories (``$ICLR25_PIORF_DATA``: MeshGraphNets' folder, ``meta.json`` +
``train.tfrecord``/``test.tfrecord``, or ``train/`` and ``test/`` of trajectory ``.npz`` files:
:func:`~iclr25.piorf.load_flow_data`), rollout RMSE over
whole test trajectories; ``rewiring-is-cheap`` on the data's own mesh. The device is ``$ICLR25_DEVICE``
(``iclr25 claims piorf --device``), else ``auto``; ``--smoke`` runs it for one step on a 3-step rollout.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from iclr25.utils.claims import Claim, ClaimRegistry, Measurement, RungCost, smoke_run
from iclr25.utils.device import default_device

__all__ = ["REGISTRY", "TEST_DATA", "TEST_MODEL", "PAPER_MODEL", "DATA_ENV"]

#: where the paper rung reads the user's CylinderFlow trajectories (a folder with train/ and test/ of .npz files)
DATA_ENV = "ICLR25_PIORF_DATA"

REGISTRY = ClaimRegistry(
    "iclr25-piorf", seeds={"test": (0, 1, 2), "repro": (0, 1, 2, 3, 4), "paper": (0, 1, 2)},
    costs={"paper": RungCost(
        gpu_hours=60, memory_gb=4, hardware="one CUDA GPU of any size, with 32 GB of host RAM",
        what="MeshGraphNets (15 blocks of width 128) trained 10M Adam steps (lr 1e-4 to 1e-6, noise 0.02, one frame "
             "a step) three times per seed: MGN, MGN+PIORF (3 %, feature-difference partner) and MGN+SDRF, on "
             "CylinderFlow (1,000 train / 100 test trajectories of 600 frames, ~1.9k nodes); velocity RMSE over "
             "the whole rollout. Estimated, not measured on a GPU: ~6 ms a step (launch-bound small graph; PIORF "
             "adds a copy of the velocity to the CPU and its rewiring each step), so ~17 h per model plus ~10 min "
             "of rollouts; on the package's CPU a step of this model takes ~0.1 s (about 300 core-hours a model)",
        data=f"${DATA_ENV}: MeshGraphNets' CylinderFlow folder as published (meta.json, train.tfrecord, "
             "test.tfrecord; read without TensorFlow), or a folder with train/ and test/ holding one .npz per "
             "trajectory (pos, cells, node_type, velocity, pressure); not shipped")})

#: The paper rung's model and optimiser (Pfaff et al. 2021; PIORF's reference code): one frame per step.
PAPER_MODEL = {"steps": 10_000_000, "layers": 15, "latent": 128, "lr": 1e-4, "lr_final": 1e-6}

#: The test rung's data (cached like every data set) and models.
TEST_DATA = {"n_trajectories": 5, "steps": 50, "lattice": (110, 24), "radius": 3.0, "mesh_size": (1.0, 3.0),
             "spinup": 3000, "save_every": 15, "n_train": 4}
#: (0.4.0 trained 600 steps at lr 1e-3: MGN 318.9/248.8/269.2 at seeds 0-2; 300 steps at lr 3e-3 decayed to 3e-4
#: give 335.6/257.7/279.5 in half the time, while 300 steps at lr 1e-3 do not beat the trivial predictor,
#: 389.4/345.6/355.4 against 356.8)
TEST_MODEL = {"steps": 300, "layers": 2, "latent": 16, "lr": 3e-3, "lr_final": 3e-4}
#: Rollout horizon of the claims per rung (frames; within one shedding period of the test trajectories).
HORIZON = {"test": 5, "repro": 16, "paper": None}  # paper: the whole test trajectory (599 steps on CylinderFlow)
#: Mechanism task per rung: message-passing layers, Adam steps and learning rate (the 0.3 test used 4 layers and
#: 400 steps at lr 1e-3, seed 0 only, 20 s; the test rung is cheaper: 2 layers, 150 steps at lr 3e-3).
MECHANISM = {"test": {"layers": 2, "steps": 150, "lr": 3e-3}, "repro": {"layers": 4, "steps": 400, "lr": 1e-3}}


def _check_rung(rung: str) -> None:
    if rung not in HORIZON:
        raise ValueError(f"rung must be one of {sorted(HORIZON)}, got {rung!r}")


@functools.cache
def _test_data():
    from .datasets import cylinder_flow

    d = TEST_DATA
    ds = cylinder_flow(d["n_trajectories"], d["steps"], lattice=d["lattice"], radius=d["radius"],
                       mesh_size=d["mesh_size"], spinup=d["spinup"], save_every=d["save_every"])
    return ds.split(d["n_train"])


def _trivial(rung: str) -> float:
    """The better trivial predictor's RMSE at the rung's horizon (x1e3)."""
    return _trivial_at(rung, smoke_run() if rung == "paper" else False)


@functools.cache
def _trivial_at(rung: str, smoke: bool) -> float:
    from .metrics import HoldFirstFrame, TimeMean, rollout_errors

    h = HORIZON[rung]
    if rung == "paper":
        te = _paper_data()[1]
        h = _paper_horizon(te)
        return 1e3 * min(rollout_errors(p, te, (h,), starts=1).rollout[h] for p in (HoldFirstFrame(), TimeMean()))
    if rung == "test":
        te = _test_data()[1]
        return 1e3 * min(rollout_errors(p, te, (h,)).rollout[h] for p in (HoldFirstFrame(), TimeMean()))
    from .experiments import repro_data, trivial_rows

    return min(r[f"rmse_{h}"] for r in trivial_rows(repro_data()[1]))


def _rollout_rmse(method: str, seed: int, rung: str) -> float:
    """RMSE@horizon x1e3 of one trained model (MGN for ``"none"``, MGN+PIORF for ``"piorf"``)."""
    h = HORIZON[rung]
    if rung == "paper":
        return _paper_rmse(method, seed, default_device(), smoke_run())
    if rung == "repro":
        from .experiments import run_job

        return float(run_job({"method": method, "seed": seed})[f"rmse_{h}"])
    import torch

    from .metrics import rollout_errors
    from .training import TrainConfig, train

    torch.set_num_threads(1)
    tr, te = _test_data()
    sim = train(tr, rewiring=method, config=TrainConfig(**TEST_MODEL), seed=seed)
    return 1e3 * float(rollout_errors(sim, te, (h,)).rollout[h])


@REGISTRY.measures(
    Claim("piorf-beats-mgn", kind="main",
          statement="MGN+PIORF predicts cylinder flow with a lower rollout error than MGN",
          paper="up to 26.2 % lower RMSE (abstract; best of 3 data sets, 15 blocks of width 128)",
          metric="velocity RMSE x1e3, MGN+PIORF (test: @5, 422-node meshes, width 16; repro: @16, 2 blocks x 32)",
          baseline="MGN, same seed", direction="lower", rule="mean_ci", expect="fails",
          ladder="README.md#regime-ladder",
          note="margin 0: any significant gain would count; at the repro rung (5 seeds) PIORF is worse on "
               "every seed (-5.2 % +- 3.9, the README's regime ladder)"),
    Claim("models-beat-trivial", kind="sanity",
          statement="the trained simulator beats the trivial predictors, so the rollout comparison is decidable",
          metric="velocity RMSE x1e3, MGN, the baseline of piorf-beats-mgn (test: @5; repro: @16)",
          baseline="better of hold-first-frame and time-mean field", direction="lower", rule="every_seed",
          margin=5.0, rungs=("repro", "paper"),
          note="decided at the repro (and paper) rung only (issue 58): at the test rung's 300 steps MGN missed the "
               "trivial predictor at 3 of the 10 calibration seeds 100-109 (388.6, 393.8, 377.2 vs 356.8) and at unseen "
               "seeds 11-20; at the repro rung margin 5 x1e3 (set in 0.4) <= max_margin 94.0 from calibration seeds 100-104 "
               "(claims-calibration-repro.json: MGN beats the better trivial predictor by 100.8 +- 2.9)"),
)
def _rollout(seed: int, rung: str) -> dict[str, Measurement]:
    _check_rung(rung)
    mgn, piorf = _rollout_rmse("none", seed, rung), _rollout_rmse("piorf", seed, rung)
    return {"piorf-beats-mgn": Measurement(piorf, reference=mgn),
            "models-beat-trivial": Measurement(mgn, reference=_trivial(rung), extra={"mgn+piorf": piorf})}


@REGISTRY.measures(
    Claim("piorf-beats-other-rewirings", kind="main",
          statement="MGN+PIORF predicts cylinder flow with a lower rollout error than MGN with the other rewiring "
                    "methods (the strongest here: SDRF)",
          paper="outperforms existing rewiring methods (abstract; SDRF, FoSR, BORF, DIGL on 3 data sets)",
          metric="velocity RMSE x1e3 @16, MGN+PIORF (repro: 2 blocks x 32, 3000 steps)",
          baseline="MGN+SDRF, same seed (the best of SDRF/FoSR/BORF/DIGL in the regime ladder)", direction="lower",
          rule="mean_ci", expect="fails", rungs=("repro", "paper"),
          ladder="benchmarks/measured/regime/vs_rewirings.md",
          note="margin 0: any significant gain would count; repro rung only (5 more models per rung, ~1 min "
               "each); SDRF ties MGN (+0.3 %) and PIORF is behind both; budget ladder (600/1500/3000 steps) and "
               "partner-rule ablation against SDRF in the ladder file (benchmarks/vs_rewirings.py)"),
)
def _vs_rewirings(seed: int, rung: str) -> dict[str, Measurement]:
    _check_rung(rung)
    piorf, sdrf = _rollout_rmse("piorf", seed, rung), _rollout_rmse("sdrf", seed, rung)
    return {"piorf-beats-other-rewirings": Measurement(piorf, reference=sdrf)}


@REGISTRY.measures(
    Claim("long-range-mechanism", kind="secondary",
          statement="PIORF's long-range edges let few message-passing layers read a distant node "
                    "(the mechanism behind the paper's over-squashing argument)",
          metric="test RMSE of the partner's velocity (~7.5 hops away) at the bottleneck nodes, MGN+PIORF "
                 "(test: 2 layers, 150 Adam steps; repro: 4 layers, 400 steps)",
          baseline="plain MGN (mesh edges only)", direction="lower", rule="every_seed", margin=0.25,
          rungs=("repro",),
          note="decided at the repro rung only (issue 58): at the test rung (2 layers, 150 steps) PIORF's gain "
               "missed the margin at 3 of the 10 calibration seeds 100-109 (gaps 0.21, 0.00, -0.01) and at unseen "
               "seeds 11-20; at the repro rung (4 layers, 400 steps) margin 0.25 (set in 0.4) <= max_margin 1.33 from "
               "calibration seeds 100-104 (claims-calibration-repro.json: gain 2.13 +- 0.34)"),
)
def _mechanism(seed: int, rung: str) -> dict[str, Measurement]:
    _check_rung(rung)
    import torch

    from .mechanism import long_range_task

    torch.set_num_threads(1)  # the same numbers in the tests, `iclr25 claims` and repro
    res = long_range_task(partner="speed", seed=seed, **MECHANISM[rung])
    return {"long-range-mechanism": Measurement(res.rmse_piorf, reference=res.rmse_plain,
                                                extra={"hops": res.hops})}


@REGISTRY.measures(
    Claim("rewiring-lowers-resistance", kind="sanity",
          statement="PIORF's edges mitigate over-squashing: the bottleneck nodes are better connected",
          metric="mean effective resistance from the bottleneck nodes, PIORF (feature-difference, 3 %)",
          baseline="the mesh", direction="lower", rule="every_seed", margin=0.03, rungs=("test", "repro"),
          note="true by construction (adding edges never raises effective resistance); margin 0.03 <= max_margin "
               "0.058 (3 seeds; 0.039 at 5) from calibration seeds 100-109 (drops 0.11-0.36, no training; 0.4 "
               "had 0.04)"),
    Claim("rewiring-is-cheap", kind="main",
          statement="PIORF rewires cheaply: one curvature pass, far below the cost of BORF's curvature flow",
          paper="computationally efficient in rewiring edges (abstract); the paper note's target: >= 5x faster "
                "than BORF (10 ORC passes)",
          metric="CPU time of PIORF's preprocessing (curvature + rewiring) / BORF's (10 iterations), same mesh",
          threshold=0.2, direction="lower", rule="every_seed",
          note="threshold 0.2 is the paper note's target (>= 5x faster), set before any run (0.2's benchmark: "
               "0.085 on a 725-node mesh); process CPU time, so load does not enter; margin 0, far below claims-calibration.json's max_margin"),
)
def _resistance(seed: int, rung: str) -> dict[str, Measurement | float]:
    _check_rung(rung)
    import time

    from .baselines import borf
    from .curvature import ollivier_ricci
    from .diagnostics import effective_resistance
    from .mesh import channel_mesh
    from .rewiring import rewire

    if rung == "paper":  # the data's own mesh and flow: test trajectory `seed` (mod their number), its first frame
        te = _paper_data()[1]
        traj = te.trajectories[seed % len(te)]
        mesh, field = traj, traj.velocity[0]
    else:
        mesh = channel_mesh(16.0, 4.0, (3.0, 2.1), 0.5, h_min=0.2, h_max=0.8, grade=2.0, seed=seed)
        rng = np.random.default_rng(seed)
        x, y = mesh.pos.T
        # a wake-like field: fast jets beside a slow wake behind the cylinder, plus noise
        u = 1.0 - np.exp(-((y - 2.1) ** 2) / 0.3) * (x > 3.0) + 0.05 * rng.normal(size=x.size)
        v = 0.3 * np.sin(2.0 * x) * np.exp(-((y - 2.1) ** 2)) + 0.05 * rng.normal(size=x.size)
        field = np.stack([u, v], axis=1)
    ollivier_ricci(mesh.edge_index)  # imports POT and warms up outside the timings
    t0 = time.process_time()
    curv = ollivier_ricci(mesh.edge_index)
    rw = rewire(mesh.edge_index, curv.node, field, ratio=0.03, seed=seed)
    t_piorf = time.process_time() - t0
    t0 = time.process_time()
    borf(mesh.edge_index, seed=seed)
    t_borf = time.process_time() - t0
    return {"rewiring-lowers-resistance": Measurement(effective_resistance(rw.edge_index, rw.bottleneck),
                                                      reference=effective_resistance(mesh.edge_index,
                                                                                     rw.bottleneck)),
            "rewiring-is-cheap": Measurement(t_piorf / t_borf, extra={"piorf_cpu_s": t_piorf, "borf_cpu_s": t_borf,
                                                                      "n_nodes": mesh.n_nodes})}


# ------------------------------------------------------------------------------------------ the paper rung
@functools.cache
def _paper_data_at(folder: str):
    from .meshgraphnets import load_flow_data  # noqa: PLC0415

    out = []
    for part in ("train", "test"):
        try:  # MeshGraphNets' own folder (meta.json + PART.tfrecord) or PART/*.npz
            out.append(load_flow_data(folder, part))
        except FileNotFoundError as exc:
            raise ValueError(f"${DATA_ENV}={folder}: {exc}") from None
    return tuple(out)


def _paper_data():
    """The user's CylinderFlow (train, test) from ``$ICLR25_PIORF_DATA`` (a missing folder is one line)."""
    folder = os.environ.get(DATA_ENV, "").strip()
    if not folder:
        raise ValueError(f"rung 'paper' needs the CylinderFlow trajectories: set {DATA_ENV} to MeshGraphNets' "
                         "cylinder_flow folder (meta.json, train.tfrecord, test.tfrecord) or a folder with train/ and "
                         "test/ of trajectory .npz files (not shipped)")
    return _paper_data_at(folder)


def _paper_horizon(te) -> int:
    """The whole test trajectory (the paper's RMSE over all steps); 3 steps in a smoke run."""
    longest = min(t.n_steps for t in te.trajectories) - 1
    return min(3, longest) if smoke_run() else longest


@functools.lru_cache(maxsize=8)
def _paper_rmse(method: str, seed: int, device: str, smoke: bool) -> float:
    """Velocity RMSE x1e3 over whole test rollouts from frame 0 of a paper-size MGN with ``method``'s rewiring."""
    from .metrics import rollout_errors  # noqa: PLC0415
    from .training import TrainConfig, train  # noqa: PLC0415

    tr, te = _paper_data()
    cfg = TrainConfig(**{**PAPER_MODEL, "steps": 1 if smoke else PAPER_MODEL["steps"]})
    sim = train(tr, rewiring=method, config=cfg, seed=seed, device=device, show_progress=not smoke)
    h = _paper_horizon(te)
    return 1e3 * float(rollout_errors(sim, te, (h,), starts=1).rollout[h])
