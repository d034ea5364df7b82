"""The paper's claims from the claims registry (``iclr25.ms_gode.claims``, ``test`` rung: the shipped checkpoints
of seeds 0, 1, 2 on fresh test tasks, and zero forgetting on a tiny sequence trained here; each decided by its
rule), the shipped checkpoints, and the simulators and estimator the claims rest on."""

from pathlib import Path

import numpy as np
import pytest
import torch

from iclr25.ms_gode import (
    MaskLinear,
    egfr_network,
    ran_network,
    simulate_egfr,
    simulate_ran,
    simulate_springs,
    springs_energy,
)
from iclr25.ms_gode.claims import REGISTRY

# every registered claim, decided at the "test" rung over seeds 0, 1, 2
test_claim = REGISTRY.pytest_test("test")
# the committed claims.json (written by repro) and claims-calibration.json agree with the registry
test_committed_claims = REGISTRY.pytest_committed_test(Path(__file__).resolve().parents[1])


def test_shipped_checkpoints_load_and_switch_modes():
    # the demo's checkpoints: no pickle, their .json record names the command and seed that made them
    import json

    from iclr25.ms_gode.pretrained import checkpoint_path, load_pretrained, wilson_interval

    for seed in (0, 1, 2):
        p = checkpoint_path(seed)
        record = json.loads(p.with_suffix(".json").read_text())
        assert record["seed"] == seed and f"--seed {seed}" in record["command"]
        with np.load(p, allow_pickle=False) as z:
            assert all(z[k].dtype != object for k in z.files)
    learner, meta = load_pretrained(0)
    assert learner.n_tasks == 3 and meta["task_names"] == learner.task_names
    lo, hi = wilson_interval(22, 24)
    assert 0.7 < lo < 22 / 24 < hi <= 1.0
    with pytest.raises(FileNotFoundError, match="no shipped checkpoint for seed 99"):
        checkpoint_path(99)


def test_springs_conserve_energy_within_integrator_tolerance():
    coarse = simulate_springs(20, n_frames=60, seed=1)
    fine = simulate_springs(20, n_frames=60, seed=1, dt=5e-4, sample_every=200)
    drift = []
    for tr in (coarse, fine):
        e = springs_energy(tr)
        drift.append(float(np.max(np.abs(e - e[:, :1]) / e[:, :1])))
    assert drift[0] < 2e-3
    assert drift[1] < 0.7 * drift[0]  # first-order symplectic Euler: the error shrinks with dt


def test_mass_action_systems_conserve_moieties():
    for net, sim in ((egfr_network(), simulate_egfr(3, n_frames=30, seed=2, randomise_rates=True)),
                     (ran_network(), simulate_ran(3, n_frames=30, seed=2, config_seed=4))):
        w = net.conserved_moieties()
        assert w.shape[0] >= 2
        assert np.abs(w @ net.stoichiometry).max() < 1e-12
        totals = np.einsum("cs,nst->nct", w, sim.values[..., 0])
        scale = np.abs(sim.values).max()
        assert np.abs(totals - totals[..., :1]).max() <= 1e-8 * scale
        # the dynamics are not trivial: concentrations move by far more than the conservation error
        assert np.ptp(sim.values, axis=2).max() > 1e-2 * scale


def test_straight_through_estimator_trains_scores_not_weights():
    lin = MaskLinear(4, 3, masked=True, generator=torch.Generator().manual_seed(0))
    lin.add_task()
    w0 = lin.weight.clone()
    x = torch.randn(5, 4)
    lin(x).sum().backward()
    g = lin.scores[0].grad
    assert g is not None and torch.allclose(g, (torch.ones(5, 3).T @ x) * w0)  # dL/dM ⊙ W, passed straight through
    assert not lin.weight.requires_grad
    assert set(torch.unique(lin.weight.abs()).tolist()) == {float(w0.abs().max())}


def test_measure_reproduces_the_learner_right_after_each_task_and_masks_are_frozen():
    # acc[i][j] from the final model (mode switching among the first i + 1 masks) equals what the learner
    # measured right after task i, because later tasks change nothing of earlier ones
    import dataclasses

    from iclr25.ms_gode import task_sequence
    from iclr25.ms_gode.pretrained import PRETRAIN, TEST_SEED_OFFSET, measure, train_pretrained

    tests = task_sequence("physics", 6, seed=TEST_SEED_OFFSET + 5)
    during = {}

    def after(learner, i):
        for j in range(i + 1):
            during[(i, j)] = learner.evaluate(tests[j], batch_size=3).mse

    learner, _ = train_pretrained(5, dataclasses.replace(PRETRAIN, n_train=6, n_valid=3, epochs=1),
                                  after_task=after)
    m = measure(learner, seed=5, n_batches=2, batch_size=3, n_unseen_batches=1)
    # each earlier task's scores are frozen once its task is learned (the oracle masks cannot drift)
    n = 0
    for mod in learner.model.modules():
        if isinstance(mod, MaskLinear):
            n += 1
            assert len(mod.scores) == 3
            assert all(not sc.requires_grad for sc in mod.scores)
    assert n > 0
    for (i, j), v in during.items():
        assert abs(m["acc"][i][j] - v) <= 1e-6 * max(1.0, abs(v)), (i, j)
    assert m["mode_batches"] == 6 and 0.0 <= m["mode_ci95"][0] <= m["mode_fraction"] <= m["mode_ci95"][1]
