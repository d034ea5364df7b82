"""Bad input raises ValueError/TypeError naming the argument and what was expected."""

import numpy as np
import pytest
import scipy.sparse as sp

from iclr25.weighted_lowrank import WeightedLowRank, planted, weighted_low_rank, weighted_regression
from iclr25.weighted_lowrank.cli import main


@pytest.fixture(scope="module")
def prob():
    return planted(30, 20, 2, seed=0)


def test_negative_weights(prob):
    W = prob.W.copy()
    W[0, 0] = -1.0
    with pytest.raises(ValueError, match="W must be non-negative"):
        weighted_low_rank(prob.M, W, 2)


def test_negative_sparse_weights(prob):
    W = sp.csr_array(prob.W)
    W.data[0] = -0.5
    with pytest.raises(ValueError, match="W must be non-negative"):
        weighted_low_rank(prob.M, W, 2)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_or_inf_weights(prob, bad):
    W = prob.W.copy()
    W[1, 1] = bad
    with pytest.raises(ValueError, match="W must be finite"):
        weighted_low_rank(prob.M, W, 2)


def test_nan_in_M_where_W_positive(prob):
    M = prob.M.copy()
    M[2, 3] = np.nan
    with pytest.raises(ValueError, match="M must be finite wherever W > 0"):
        weighted_low_rank(M, prob.W, 2)


def test_nan_in_M_where_W_zero_is_fine(prob):
    M, W = prob.M.copy(), prob.W.copy()
    M[2, 3], W[2, 3] = np.nan, 0.0
    res = weighted_low_rank(M, W, 2, n_iter=2)
    assert np.all(np.isfinite(res.reconstruct()))
    res = weighted_low_rank(M, sp.csr_array(W), 2, n_iter=2)
    assert np.all(np.isfinite(res.reconstruct()))


def test_shape_mismatch(prob):
    with pytest.raises(ValueError, match="W must have the shape of M"):
        weighted_low_rank(prob.M, prob.W[:, :-1], 2)
    with pytest.raises(ValueError, match="F must have shape"):
        weighted_regression(prob.M, prob.W, np.ones((5, 2)))


@pytest.mark.parametrize("k", [0, 21, 100])
def test_k_out_of_range(prob, k):
    with pytest.raises(ValueError, match="k must satisfy"):
        weighted_low_rank(prob.M, prob.W, k)


def test_wrong_types(prob):
    with pytest.raises(TypeError, match="k must be a positive integer"):
        weighted_low_rank(prob.M, prob.W, 2.5)
    with pytest.raises(TypeError, match="M must be a 2-D array of real numbers"):
        weighted_low_rank(np.array([["a", "b"], ["c", "d"]]), None, 1)
    with pytest.raises(TypeError, match="M must be real"):
        weighted_low_rank(prob.M + 1j, prob.W, 2)
    with pytest.raises(TypeError, match="seed must be"):
        weighted_low_rank(prob.M, prob.W, 2, seed=1.5)


@pytest.mark.parametrize("M", [np.zeros((0, 3)), np.zeros(5), np.zeros((2, 2, 2))])
def test_empty_or_wrong_rank_input(M):
    with pytest.raises(ValueError, match="M must be"):
        weighted_low_rank(M, None, 1)


def test_all_zero_weights(prob):
    with pytest.raises(ValueError, match="at least one positive weight"):
        weighted_low_rank(prob.M, np.zeros_like(prob.M), 2)


@pytest.mark.parametrize("kwargs, match", [
    ({"solver": "newton"}, "solver must be one of"),
    ({"sketch": "fourier"}, "sketch must be one of"),
    ({"refine": "lsqr"}, "refine must be one of"),
    ({"sketch_size": 0}, "sketch_size must be >= 1"),
    ({"refine_steps": -1}, "refine_steps must be >= 0"),
    ({"tol": -1e-3}, "tol must be a finite number >= 0"),
    ({"reg": float("nan")}, "reg must be a finite number >= 0"),
    ({"n_iter": 0}, "n_iter must be >= 1"),
    ({"init": "pca"}, "init must be one of"),
    ({"init": np.ones((20, 3))}, "init must have shape"),
    ({"mu": -1.0}, "mu must be a positive finite number"),
])
def test_impossible_parameters(prob, kwargs, match):
    with pytest.raises(ValueError, match=match):
        weighted_low_rank(prob.M, prob.W, 2, **kwargs)


def test_unfitted_estimator():
    with pytest.raises(ValueError, match="not fitted"):
        WeightedLowRank(2).reconstruct()


def test_planted_bad_parameters():
    with pytest.raises(ValueError, match="k must be <= min"):
        planted(5, 4, 6)
    with pytest.raises(ValueError, match="weights must be one of"):
        planted(5, 4, 2, weights="heavy")
    with pytest.raises(ValueError, match="p must be in"):
        planted(5, 4, 2, p=0.0)


def test_cli_invalid_files_leave_no_output(tmp_path, capsys):
    out = tmp_path / "factors.npz"
    (tmp_path / "M.npy").write_bytes(b"not an npy file")
    assert main(["fit", str(tmp_path / "M.npy"), "--k", "2", "--out", str(out)]) == 2
    assert "cannot read M" in capsys.readouterr().err
    assert main(["fit", str(tmp_path / "missing.npy"), "--k", "2", "--out", str(out)]) == 2
    np.save(tmp_path / "M3.npy", np.zeros((2, 2, 2)))
    assert main(["fit", str(tmp_path / "M3.npy"), "--k", "1", "--out", str(out)]) == 2
    assert "2-D" in capsys.readouterr().err
    np.save(tmp_path / "M.npy", np.ones((6, 5)))
    np.save(tmp_path / "W.npy", -np.ones((6, 5)))
    assert main(["fit", str(tmp_path / "M.npy"), str(tmp_path / "W.npy"), "--k", "2", "--out", str(out)]) == 2
    assert "W must be non-negative" in capsys.readouterr().err
    assert main(["fit", str(tmp_path / "M.npy"), "--k", "2", "--out", str(tmp_path / "f.txt")]) == 2
    assert not out.exists() and not list(tmp_path.glob("*factors*"))


@pytest.mark.parametrize(("extra", "message"), [
    (["--k", "0"], "--k must be an integer >= 1"),
    (["--k", "2", "--n-iter", "0"], "--n-iter must be an integer >= 1"),
    (["--k", "2", "--tol", "-1"], "--tol must be a finite number >= 0"),
    (["--k", "2", "--reg", "nan"], "--reg must be a finite number >= 0"),
    (["--k", "2", "--sketch-size", "0"], "--sketch-size must be an integer >= 1"),
    (["--k", "2", "--out", "f.txt"], "--out must name a .npz file"),
    (["--k", "2", "--out", "no/such/f.npz"], "--out 'no/such/f.npz': no such folder"),
])
def test_cli_fit_options_checked_before_reading(tmp_path, monkeypatch, capsys, extra, message):
    monkeypatch.chdir(tmp_path)  # M.npy does not exist: the option error comes first
    assert main(["fit", "M.npy", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert list(tmp_path.iterdir()) == []


def test_cli_fit_rank_and_shape_errors_name_flag_and_file(tmp_path, capsys):
    np.save(tmp_path / "M.npy", np.ones((6, 5)))
    np.save(tmp_path / "W.npy", np.ones((6, 4)))
    assert main(["fit", str(tmp_path / "M.npy"), "--k", "9", "--out", str(tmp_path / "f.npz")]) == 2
    assert "--k must satisfy 1 <= k <= min(n, d) = 5" in capsys.readouterr().err
    assert main(["fit", str(tmp_path / "M.npy"), str(tmp_path / "W.npy"), "--k", "2",
                 "--out", str(tmp_path / "f.npz")]) == 2
    assert "W.npy: W must have the shape of M (6, 5)" in capsys.readouterr().err
    (tmp_path / "T.npy").write_text("1 2 3\n4 5 6\n")
    assert main(["fit", str(tmp_path / "T.npy"), "--k", "1", "--out", str(tmp_path / "f.npz")]) == 2
    err = capsys.readouterr().err
    assert "T.npy" in err and "not a NumPy .npy file" in err and "pickle" not in err
    assert not (tmp_path / "f.npz").exists()


def test_round_axis_has_integer_ticks():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from iclr25.weighted_lowrank.figures import plot_errors

    fig, ax = plt.subplots()
    plot_errors(ax, {"exact": list(np.logspace(0, -9, 10)), "sketch": list(np.logspace(0, -9, 10))}, "t")
    fig.canvas.draw()
    ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    assert ticks and all(float(t).is_integer() for t in ticks), ticks
    plt.close(fig)
