"""Unit tests of the solvers, the estimator and the command line."""

import numpy as np
import pytest
import scipy.sparse as sp

from iclr25.weighted_lowrank import WeightedLowRank, planted, weighted_low_rank, weighted_regression
from iclr25.weighted_lowrank.cli import main
from iclr25.weighted_lowrank.costmodel import round_flops


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    n, d, k = 40, 60, 4
    mask = rng.random((n, d)) < 0.5
    return rng.normal(size=(n, d)), rng.uniform(0.5, 1.5, (n, d)) * mask, rng.normal(size=(d, k))


@pytest.mark.parametrize("solver", ["exact", "sketch", "pcg"])
@pytest.mark.parametrize("sparse", [False, True])
def test_every_solver_matches_the_normal_equations(data, solver, sparse):
    M, W, F = data
    reg = 0.7
    X = weighted_regression(M, sp.csr_array(W) if sparse else W, F, solver=solver, reg=reg, tol=1e-13,
                            refine_steps=100).X
    for i in (0, 17, 39):
        G = F.T @ (W[i][:, None] ** 2 * F) + reg * np.eye(F.shape[1])
        x = np.linalg.solve(G, F.T @ (W[i] ** 2 * M[i]))
        np.testing.assert_allclose(X[i], x, rtol=1e-8, atol=1e-10)


def test_row_blocks_do_not_change_the_answer(data):
    M, W, F = data
    a = weighted_regression(M, W, F, solver="exact").X
    b = weighted_regression(M, W, F, solver="exact", max_batch_bytes=2000).X
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_rows_with_fewer_than_k_weights_get_a_finite_solution(data):
    M, W, F = data
    W = W.copy()
    W[0] = 0.0
    W[1, 3:] = 0.0
    for solver in ("exact", "sketch", "pcg"):
        X = weighted_regression(M, W, F, solver=solver).X
        assert np.all(np.isfinite(X))
        np.testing.assert_allclose(X[0], 0.0, atol=1e-12)


def test_sparse_and_dense_weights_agree():
    prob = planted(120, 90, 3, weights="mask", noise=1e-3, seed=2)
    a = weighted_low_rank(prob.M, prob.W, 3, solver="exact", n_iter=5)
    b = weighted_low_rank(prob.M, prob.W.toarray(), 3, solver="exact", n_iter=5)
    np.testing.assert_allclose(a.reconstruct(), b.reconstruct(), rtol=1e-8, atol=1e-8)


def test_rectangular_history_and_callback_stop():
    prob = planted(90, 50, 3, noise=0.0, seed=1)
    seen = []
    res = weighted_low_rank(prob.M, prob.W, 3, n_iter=10, truth=prob.truth,
                            callback=lambda info: seen.append(info.round) or info.round == 4)
    assert res.n_iter == 4 and seen == [1, 2, 3, 4]
    assert res.X.shape == (90, 3) and res.Y.shape == (50, 3)
    np.testing.assert_allclose(res.X.T @ res.X, np.eye(3), atol=1e-10)
    assert np.all(np.diff(res.objectives) <= 1e-9 * res.objectives[0])  # alternating minimisation descends
    h = res.history[-1]
    assert h.seconds > 0 and h.recovery_error is not None and h.relative_residual < 1e-3


def test_random_init_and_clipping_and_reg():
    prob = planted(100, 80, 2, noise=0.0, seed=4)
    res = weighted_low_rank(prob.M, prob.W, 2, init="random", n_iter=25, truth=prob.truth)
    assert res.recovery_errors[-1] < 1e-6
    spiky = prob.M.copy()
    spiky[0] *= 1e4  # one huge row: clipping removes it from the whitened factor
    clipped = weighted_low_rank(spiky, prob.W, 2, n_iter=1)
    assert clipped.history[0].clipped >= 1
    assert np.allclose(clipped.X[0], 0.0)  # the spiky row left the whitened factor
    assert weighted_low_rank(spiky, prob.W, 2, n_iter=1, clip=False).history[0].clipped == 0
    ridge = weighted_low_rank(prob.M, prob.W, 2, reg=1e3, n_iter=5)
    plain = weighted_low_rank(prob.M, prob.W, 2, n_iter=5)
    assert np.linalg.norm(ridge.Y) < np.linalg.norm(plain.Y)


def test_estimator_fit_warm_start_and_seed():
    prob = planted(70, 60, 2, noise=1e-3, seed=5)
    est = WeightedLowRank(2, n_iter=3, warm_start=True)
    assert est.fit(prob.M, prob.W) is est
    first = prob.recovery_error(est.reconstruct())
    est.fit(prob.M, prob.W)
    assert prob.recovery_error(est.reconstruct()) <= first * 1.01
    assert est.get_params()["k"] == 2 and est.n_iter_ == 3 and len(est.history_) == 3
    a = WeightedLowRank(2, n_iter=3, seed=7).fit(prob.M, prob.W).reconstruct()
    b = WeightedLowRank(2, n_iter=3, seed=7).fit(prob.M, prob.W).reconstruct()
    np.testing.assert_array_equal(a, b)


def test_block_weights_failure_mode_is_reproducible():
    # weights without a spectral gap: documented in the README as a case outside the guarantee
    prob = planted(80, 80, 3, weights="block", noise=1e-3, seed=0)
    res = weighted_low_rank(prob.M, prob.W, 3, n_iter=5, truth=prob.truth)
    assert np.isfinite(res.recovery_errors[-1])
    again = weighted_low_rank(prob.M, prob.W, 3, n_iter=5, truth=prob.truth)
    np.testing.assert_array_equal(res.recovery_errors, again.recovery_errors)


def test_cost_model_exact_grows_faster_in_k():
    e = [round_flops(4000, 4000, k, solver="exact") for k in (16, 128)]
    s = [round_flops(4000, 4000, k, solver="sketch", steps=10) for k in (16, 128)]
    assert e[1] / e[0] > s[1] / s[0]


def test_cli_fit_roundtrip(tmp_path, capsys):
    prob = planted(80, 60, 2, weights="mask", p=0.6, noise=0.0, seed=0)
    np.save(tmp_path / "M.npy", np.where(prob.W.toarray() > 0, prob.M, np.nan))
    sp.save_npz(tmp_path / "W.npz", sp.csr_matrix(prob.W))
    out = tmp_path / "factors.npz"
    assert main(["fit", str(tmp_path / "M.npy"), str(tmp_path / "W.npz"), "--k", "2", "--out", str(out)]) == 0
    z = np.load(out)
    assert z["X"].shape == (80, 2) and z["Y"].shape == (60, 2)
    assert prob.recovery_error(z["X"] @ z["Y"].T) < 1e-3
    assert "wrote" in capsys.readouterr().out


def test_flop_model_ratio_and_where_2x_starts():
    from iclr25.weighted_lowrank.costmodel import flop_ratio, two_x_threshold

    # dense: the ratio is ~1 / (60/k + 9k/n) (15 operator products, s = 4k), below 2x at every k for n = 4000
    assert max(flop_ratio(4000, 4000, k, steps=14, sketch_size=4 * k) for k in range(16, 513, 16)) < 1.5
    assert 2.3 < flop_ratio(16000, 16000, 256, steps=14, sketch_size=1024) < 2.9
    n2 = two_x_threshold(256, steps=14, sketch_size=1024)
    assert flop_ratio(n2, n2, 256, steps=14, sketch_size=1024) >= 2.0 > flop_ratio(n2 - 1, n2 - 1, 256, steps=14,
                                                                                    sketch_size=1024)
    # sparse rows with m < 8k weights: the sketched Gram alone costs more than the exact one
    assert flop_ratio(16000, 16000, 128, nnz=int(0.05 * 16000**2), steps=14, sketch_size=512) < 1.0
    assert two_x_threshold(128, density=0.05, steps=14, sketch_size=512) > 10**6
    # the default s = 8k: fewer steps buy a 2x limit at k = 128 (never with 16 steps at s = 4k)
    assert two_x_threshold(128, steps=16, sketch_size=512) is None
    assert flop_ratio(16000, 16000, 128, steps=9) > 2.0 > flop_ratio(16000, 16000, 128, steps=16, sketch_size=512)
