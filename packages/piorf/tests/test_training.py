"""MeshGraphNet, training, rollouts and the data cache on a tiny data set."""

import numpy as np
import pytest
import torch

from iclr25.piorf import (
    MeshGraphNet,
    TrainConfig,
    cylinder_flow,
    load_trajectory,
    rollout_rmse,
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


@pytest.mark.parametrize("rewiring", ["none", "piorf", "digl"])
def test_train_and_rollout(tiny, rewiring):
    tr, te = tiny.split(1)
    sim = train(tr, rewiring=rewiring, config=TrainConfig(steps=4, layers=2, latent=16), seed=0)
    assert sim.losses.shape == (4,) and np.all(np.isfinite(sim.losses))
    roll = sim.rollout(te[0], 3)
    assert roll.velocity.shape == (4, te[0].n_nodes, 2) and roll.rmse_velocity.shape == (3,)
    m = rollout_rmse(sim, te, horizon=3)
    assert set(m) == {"rmse_1", "rmse_3", "rmse_p_3"} and all(np.isfinite(v) for v in m.values())
    again = train(tr, rewiring=rewiring, config=TrainConfig(steps=4, layers=2, latent=16), seed=0)
    assert np.allclose(sim.losses, again.losses)


def test_rollout_horizon_is_not_clamped(tiny):
    tr, te = tiny.split(1)
    sim = train(tr, rewiring="none", config=TrainConfig(steps=2, layers=1, latent=8), seed=0)
    with pytest.raises(ValueError, match=r"horizon must be an integer in \[1, 4\].*got 50"):
        rollout_rmse(sim, te, 50)
