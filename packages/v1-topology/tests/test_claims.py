"""The paper's claims at small scale (seeded): claim 2 (selectivity emerges) and the overlap → topology sign,
plus exact resume from a checkpoint."""

import numpy as np
import pytest

from iclr25.v1_topology import maps
from iclr25.v1_topology.experiments import train
from iclr25.v1_topology.network import SESNN, NetworkConfig
from iclr25.v1_topology.probe import measure_orientation_map

SMALL = dict(n_side=16, r_ee=1.5, r_ei=4.0, r_ii=4.0)


@pytest.fixture(scope="module")
def trained():
    out = {}
    for stride in (1, 8):
        cfg = NetworkConfig(stride=stride, **SMALL)
        untrained = measure_orientation_map(SESNN(cfg, seed=0))
        net = train(cfg, 4000, seed=0, desc=None).net
        out[stride] = (untrained, measure_orientation_map(net))
    return out


def test_training_makes_neurons_orientation_selective(trained):
    untrained, om = trained[1]
    assert om.tuning.median_osi > 0.3, om.tuning.median_osi
    assert om.tuning.median_osi > untrained.tuning.median_osi + 0.05, (om.tuning.median_osi,
                                                                       untrained.tuning.median_osi)


def test_high_overlap_gives_a_smoother_map_than_zero_overlap(trained):
    d_hi = maps.neighbour_orientation_difference(trained[1][1].z)
    d_lo = maps.neighbour_orientation_difference(trained[8][1].z)
    assert d_hi < d_lo - 8, (d_hi, d_lo)
    assert d_lo > 36, d_lo


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
