"""MeshGraphNet, training, rollouts and the data cache on a tiny data set."""

import numpy as np
import pytest
import torch

from iclr25.piorf import (
    HoldFirstFrame,
    MeshGraphNet,
    TimeMean,
    TrainConfig,
    cylinder_flow,
    load_trajectory,
    paired_test,
    rollout_errors,
    save_trajectory,
    train,
)
from iclr25.piorf.datasets import cache_dir

TINY = {"spinup": 100, "lattice": (110, 24), "radius": 3.0, "mesh_size": (1.0, 3.0)}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("ICLR25_PIORF_CACHE", str(tmp_path_factory.mktemp("cache")))
    ds = cylinder_flow(2, 5, **TINY)
    yield ds
    mp.undo()


def test_dataset_cache_roundtrip(tiny, tmp_path):
    files = sorted(cache_dir().glob("cylinder-*.npz"))
    assert len(files) == 2 and not list(cache_dir().glob(".*tmp"))
    again = cylinder_flow(2, 5, **TINY)
    assert np.array_equal(again[1].velocity, tiny[1].velocity)
    save_trajectory(tmp_path / "t.npz", tiny[0])
    back = load_trajectory(tmp_path / "t.npz")
    assert np.array_equal(back.edge_index, tiny[0].edge_index) and back.reynolds == tiny[0].reynolds
    t = tiny[0]
    assert t.velocity.shape == (5, t.n_nodes, 2) and np.all(np.isfinite(t.velocity))
    assert set(np.unique(t.node_type)) == {0, 4, 5, 6}
    assert np.allclose(t.velocity[:, t.node_type == 6], 0.0)


def test_mgn_is_permutation_equivariant():
    torch.manual_seed(0)
    model = MeshGraphNet(3, 3, 2, latent=16, layers=2, separate_long_range=True)
    n = 6
    x = torch.randn(n, 3)
    ei = torch.tensor([[0, 1, 1, 2, 3, 4, 0, 5], [1, 0, 2, 1, 4, 3, 5, 0]])
    ea = torch.randn(ei.shape[1], 3)
    lr = torch.tensor([False] * 6 + [True, True])
    perm = torch.randperm(n)
    inv = torch.argsort(perm)
    out = model(x, ea, ei, lr)
    out_p = model(x[perm], ea, inv[ei], lr)
    assert torch.allclose(out[perm], out_p, atol=1e-5)


def test_split_first_layer_equals_concatenation():
    # the edge MLP's first layer is applied before the gather: same function as W [h_i, h_j, e_ij]
    torch.manual_seed(0)
    model = MeshGraphNet(3, 3, 2, latent=8, layers=2)
    x, ea = torch.randn(6, 3), torch.randn(6, 3)
    ei = torch.tensor([[0, 1, 1, 2, 3, 4], [1, 0, 2, 1, 4, 3]])
    h, e = model.node_encoder(x), model.edge_encoders[0](ea)
    for block in model.blocks:
        m = block.edge[0](torch.cat([h[ei[0]], h[ei[1]], e], dim=1))
        h = h + block.node(torch.cat([h, torch.zeros_like(h).index_add_(0, ei[1], m)], dim=1))
        e = e + m
    assert torch.allclose(model(x, ea, ei), model.decoder(h), atol=1e-5)


def test_reynolds_number_is_visible_in_the_inflow(tiny):
    # vary="speed" (default): the peak inflow speed is Re / 120 in units of U_REF
    for t in tiny:
        inflow = t.velocity[0, t.node_type == 4, 0]
        assert abs(inflow.max() / (t.reynolds / 120.0) - 1.0) < 0.05


@pytest.mark.parametrize("rewiring", ["none", "piorf", "digl"])
def test_train_and_rollout(tiny, rewiring):
    tr, te = tiny.split(1)
    cfg = TrainConfig(steps=4, layers=2, latent=16, partner="gradient", top_k=2)
    sim = train(tr, rewiring=rewiring, config=cfg, seed=0)
    assert sim.losses.shape == (4,) and np.all(np.isfinite(sim.losses)) and sim.step_seconds > 0
    roll = sim.rollout(te[0], 3, start=1)
    assert roll.velocity.shape == (4, te[0].n_nodes, 2) and roll.rmse_velocity.shape == (3,)
    err = rollout_errors(sim, te, (1, 3), starts=2, stride=1)
    assert err.starts == (0, 1) and set(err.as_dict()) == {"rmse_1step", "rmse_1", "rmse_3"}
    assert all(np.isfinite(v) for v in err.as_dict().values())
    again = train(tr, rewiring=rewiring, config=cfg, seed=0)
    assert np.allclose(sim.losses, again.losses)


def test_trivial_predictors(tiny):
    t = tiny[0]
    hold = HoldFirstFrame().rollout(t, 3, start=1)
    assert np.array_equal(hold.velocity[3], t.velocity[1])
    want = np.sqrt(np.mean(np.sum((t.velocity[2] - t.velocity[1]) ** 2, axis=1)))
    assert np.isclose(hold.rmse_velocity[0], want)
    mean = TimeMean().rollout(t, 2)
    fluid = (t.node_type == 0) | (t.node_type == 5)
    assert np.allclose(mean.velocity[1][fluid], t.velocity.mean(0)[fluid], atol=1e-6)
    assert np.array_equal(mean.velocity[1][~fluid], t.velocity[0][~fluid])


def test_paired_test_known_values():
    pt = paired_test([1.0, 1.1, 0.9, 1.2, 1.0], [0.8, 1.0, 0.85, 1.0, 0.9])
    assert np.isclose(pt.improvement, 12.5) and pt.wins == 5 and np.isclose(pt.p_sign, 0.0625)
    assert 0.01 < pt.p_t < 0.02  # t = 4.33 with 4 degrees of freedom
    with pytest.raises(ValueError, match="same length >= 2"):
        paired_test([1.0], [2.0])


def test_rollout_horizon_is_not_clamped(tiny):
    tr, te = tiny.split(1)
    sim = train(tr, rewiring="none", config=TrainConfig(steps=2, layers=1, latent=8), seed=0)
    with pytest.raises(ValueError, match=r"horizons must be integers in \[1, 4\].*got 50"):
        rollout_errors(sim, te, 50)
    with pytest.raises(ValueError, match=r"n_steps must be an integer in \[1, 2\] from frame 2"):
        sim.rollout(te[0], 3, start=2)
