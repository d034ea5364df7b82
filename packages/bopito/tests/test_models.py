"""Training, sampling, checkpoints, analysis and the command line on tiny budgets."""

import json

import numpy as np
import pytest
import torch

from iclr25.bopito import (
    cross_correlation,
    estimate_lambda,
    exact_reference,
    fit_lambda_int,
    fit_model,
    fit_msm,
    load_model,
    sample,
    sample_chain,
    sample_equilibrium,
    save_model,
    simulate,
    vamp2_score,
)


@pytest.fixture(scope="module")
def pairs_data():
    # exact lag-1..30 trajectories from the grid propagator are cheap and exactly Prinz-distributed
    ref = exact_reference()
    x = [ref.sample_boltzmann(60, seed=0)[:, 0]]
    for i in range(40):
        x.append(ref.sample_transition(x[-1][:, None], 1, seed=i + 1)[:, 0])
    return np.stack(x, axis=1)[..., None]


@pytest.fixture(scope="module")
def trained(pairs_data):
    kw = {"width": 16, "emb_dim": 8, "n_diffusion": 40, "steps": 150, "batch_size": 128, "box": ((-1.2, 1.2),)}
    bg = fit_model("bg", pairs_data, seed=0, **kw)
    bop = fit_model("bopito", [pairs_data, pairs_data[:20]], prior=bg.model, n_models=2, max_lag=20,
                    lambda_hat=0.99, seed=1, **kw)
    return bg, bop


def test_training_lowers_the_loss_and_ema_model_is_returned(trained):
    bg, bop = trained
    assert bg.losses.shape == (150, 1) and bop.losses.shape == (150, 2)
    assert bg.losses[-20:].mean() < bg.losses[:5].mean()
    assert all(not p.requires_grad for p in bop.model.prior.parameters())


def test_samplers_shapes_and_determinism(trained):
    _, bop = trained
    x0 = np.linspace(-0.8, 0.8, 7)
    a = sample(bop.model, x0, 5, seed=3)
    b = sample(bop.model, x0, 5, seed=3)
    assert a.shape == (2, 7, 1) and np.array_equal(a, b)
    d = sample(bop.model, x0, np.arange(7), steps=8, seed=3)
    assert d.shape == (2, 7, 1) and np.all(np.abs(d) <= 1.2 + 1e-6)
    eq = sample_equilibrium(bop.model, 9, steps=5)
    assert eq.shape == (1, 9, 1)
    ch = sample_chain(bop.model, x0, 10, 3, steps=5)
    assert ch.shape == (2, 7, 4, 1) and np.allclose(ch[:, :, 0, 0], x0)
    # at N = inf BoPITO samples its prior: same noise, same numbers as the prior alone
    inf = sample(bop.model.member(0), np.zeros(9), np.inf, steps=5, seed=4)
    pri = sample(bop.model.prior, np.zeros(9), 0, steps=5, seed=4)
    np.testing.assert_allclose(inf, pri, atol=1e-6)


def test_checkpoint_round_trip_is_weights_only(trained, tmp_path):
    _, bop = trained
    save_model(bop.model, tmp_path / "m")
    state = torch.load(tmp_path / "m" / "model.pt", weights_only=True)
    assert all(isinstance(v, torch.Tensor) for v in state.values())
    back = load_model(tmp_path / "m")
    x0 = np.zeros(5)
    np.testing.assert_array_equal(sample(back, x0, 7, steps=4, seed=1), sample(bop.model, x0, 7, steps=4, seed=1))
    assert json.loads((tmp_path / "m" / "config.json").read_text())["config"]["lambda_hat"] == 0.99


def test_lambda_estimate_msm_vamp_on_exact_data(pairs_data):
    ref = exact_reference()
    lam = estimate_lambda(pairs_data, lagtime=5, n_bins=30, box=((-1.2, 1.2),))
    assert 0.9 < lam < 1.0
    msm = fit_msm(pairs_data, 5, n_bins=30, box=((-1.2, 1.2),))
    c = msm.correlation([5, 10])
    assert np.all(np.abs(c - ref.correlation([5, 10])) < 0.1)
    assert 1.0 < vamp2_score(pairs_data, 5, box=((-1.2, 1.2),)) <= 4.0 + 1e-9
    x = np.random.default_rng(0).normal(size=500)
    assert abs(cross_correlation(x, x) - 1) < 1e-12


def test_fit_lambda_int_finds_the_minimum():
    fit = fit_lambda_int(lambda lam: (np.log(-np.log(lam)) - np.log(-np.log(0.993))) ** 2, lo=0.9, hi=0.9999)
    assert abs(fit.lambda_int - 0.993) < 5e-4


def test_cli_simulate_train_sample(tmp_path, monkeypatch, capsys):
    from iclr25.bopito.cli import main

    monkeypatch.chdir(tmp_path)

    def cli(*a):
        rc = main(list(a))
        assert rc == 0, capsys.readouterr().err

    cli("simulate", "prinz", "--out", "d.npz", "--n-traj", "20", "--n-frames", "12", "--steps-per-frame", "50",
        "--h", "1e-4")
    cli("train", "d.npz", "--out", "m", "--steps", "30", "--max-lag", "5", "--width", "8", "--n-diffusion", "20",
        "--batch-size", "32")
    cfg = json.loads((tmp_path / "m" / "config.json").read_text())
    assert cfg["config"]["kind"] == "bopito" and 0 < cfg["config"]["lambda_hat"] < 1
    cli("sample", "--model", "m", "--lag", "1000", "--out", "s.npz", "--n", "16", "--steps", "5")
    with np.load(tmp_path / "s.npz") as z:
        assert z["x"].shape == (16, 1)
    cli("sample", "--model", "m", "--lag", "3", "--out", "c.npz", "--n", "4", "--steps", "3", "--chain", "2",
        "--x0", "boltzmann")
    with np.load(tmp_path / "c.npz") as z:
        assert z["x"].shape == (4, 3, 1)


def test_potentials_match_deeptime_and_2d_system_runs():
    from deeptime.data import prinz_potential, triple_well_2d

    from iclr25.bopito import get_system

    rng = np.random.default_rng(0)
    for name, peer, pts in (("prinz", prinz_potential(), rng.uniform(-1, 1, (7, 1))),
                            ("triple-well-2d", triple_well_2d(), rng.uniform(-2, 2, (7, 2)))):
        pot = get_system(name)
        np.testing.assert_allclose(pot.energy(pts), peer.potential(pts), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(pot.gradient(pts), -np.stack([peer.f(0.0, p) for p in pts]).reshape(pts.shape), rtol=1e-8,
                                   atol=1e-8)
    tr = simulate("triple-well-2d", 4, 3, x0=[0.0, 1.5], steps_per_frame=20, desc=None)
    assert tr.x.shape == (4, 3, 2) and np.all(np.isfinite(tr.x))
    ref2 = exact_reference("triple-well-2d", n_grid=20)
    assert ref2.timescales[0] > ref2.timescales[1] > 0
