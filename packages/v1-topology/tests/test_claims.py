"""The paper's claims at small scale, from the claims registry (3 seeds, a stated rule per claim), plus exact
resume from a checkpoint, the spike-learning switch and the GCAL baseline."""

from pathlib import Path

import numpy as np

from iclr25.v1_topology.claims import REGISTRY
from iclr25.v1_topology.experiments import train
from iclr25.v1_topology.network import SESNN, NetworkConfig

# the paper's claims, decided over seeds 0-2 at the "test" rung (iclr25.v1_topology.claims)
test_claim = REGISTRY.pytest_test("test")
# the committed claims.json (repro rung, this version) and claims-calibration.json agree with the registry
test_committed_claims = REGISTRY.pytest_committed_test(Path(__file__).parents[1])


def test_resume_from_checkpoint_is_exact(tmp_path):
    cfg = NetworkConfig(n_side=8, patch=4, stride=1, r_ee=1.0, r_ei=2.0, r_ii=2.0, batch=20)
    straight = train(cfg, 80, seed=3, desc=None).net
    ck = tmp_path / "ck.npz"
    half = train(cfg, 40, seed=3, checkpoint=ck, desc=None).net
    assert half.samples_seen == 40
    resumed = train(cfg, 80, net=SESNN.load(ck), desc=None).net
    for k in SESNN.ARRAYS:
        np.testing.assert_allclose(getattr(resumed, k), getattr(straight, k), rtol=1e-6, atol=1e-7)


def test_spike_learning_mode_runs_and_learns():
    cfg = NetworkConfig(n_side=8, patch=4, stride=1, r_ee=1.0, r_ei=2.0, r_ii=2.0, batch=20, learning="spike")
    net = train(cfg, 100, seed=0, desc=None).net
    assert np.all(np.isfinite(net.Q)) and net.W_ee.max() > 0


def test_gcal_baseline_runs_on_the_same_sheet():
    from iclr25.v1_topology.gcal import GCAL
    from iclr25.v1_topology.images import builtin_images

    cfg = NetworkConfig(n_side=8, patch=4, stride=1, r_ee=1.0, r_ei=2.0, r_ii=2.0)
    g = GCAL(cfg, seed=0).train(builtin_images(), 40, batch=20)
    t = g.orientation_map()
    assert t.theta.shape == (8, 8) and np.all(np.isfinite(t.osi))
    np.testing.assert_allclose(g.A.sum(1), 1.0, rtol=1e-9)
