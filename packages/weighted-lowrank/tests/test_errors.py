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
    assert "W.npy: W must be non-negative" in capsys.readouterr().err
    assert main(["fit", str(tmp_path / "M.npy"), "--k", "2", "--out", str(tmp_path / "f.txt")]) == 2
    assert not out.exists() and not list(tmp_path.glob("*factors*"))


@pytest.mark.parametrize(("extra", "message"), [
    (["--k", "0"], "--k must be an integer >= 1"),
    (["--k", "2", "--n-iter", "0"], "--n-iter must be an integer >= 1"),
    (["--k", "2", "--tol", "-1"], "--tol must be a finite number >= 0"),
    (["--k", "2", "--reg", "nan"], "--reg must be a finite number >= 0"),
    (["--k", "2", "--sketch-size", "0"], "--sketch-size must be an integer >= 1"),
    (["--k", "2", "--out", "f.txt"], "--out must name a .npz file"),
    (["--k", "2", "--out", "factors"], "--out must name a .npz file"),
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
    assert "W.npy: W must have the shape of M (6, 5) (" in capsys.readouterr().err
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


# ------------------------------------------------------------------------------------------ outputs (issue 57)
def _files(folder, *, W="npy"):
    prob = planted(12, 10, 2, seed=0)
    np.savez(folder / "M.npz", M=prob.M)
    if W == "npy":
        np.save(folder / "W.npy", prob.W)
        return folder / "M.npz", folder / "W.npy"
    sp.save_npz(folder / "W.npz", sp.csr_array(prob.W))
    return folder / "M.npz", folder / "W.npz"


def _no_work(monkeypatch):
    """Fail the test if ``fit`` reads a matrix: its --out must be refused before any work."""
    import iclr25.weighted_lowrank.cli as cli

    def fail(*args, **kwargs):
        raise AssertionError("fit started its work before refusing --out")
    monkeypatch.setattr(cli, "read_matrix", fail)


@pytest.mark.parametrize("W", ["npy", "npz"])
def test_cli_out_naming_an_input_is_refused_before_work_and_the_input_kept(tmp_path, monkeypatch, capsys, W):
    M, Wf = _files(tmp_path, W=W)
    before = {f: f.read_bytes() for f in (M, Wf)}
    _no_work(monkeypatch)
    hard = tmp_path / "hard.npz"
    hard.hardlink_to(M)  # the same file under another name: caught by its inode
    targets = [M, hard, tmp_path / "." / "M.npz"] + ([Wf] if W == "npz" else [])
    for out in targets:
        for extra in ([], ["--overwrite"]):
            assert main(["fit", str(M), str(Wf), "--k", "2", "--out", str(out), *extra]) == 2
            err = capsys.readouterr().err
            assert "--out " in err and "is also an input" in err, err
    assert {f: f.read_bytes() for f in (M, Wf)} == before


def test_cli_existing_out_and_default_are_kept_without_overwrite(tmp_path, monkeypatch, capsys):
    M, W = _files(tmp_path)
    out = tmp_path / "mine.npz"
    out.write_bytes(b"the user's own file")
    assert main(["fit", str(M), str(W), "--k", "2", "--out", str(out)]) == 2
    assert f"--out {out} exists; pass --overwrite" in capsys.readouterr().err
    assert out.read_bytes() == b"the user's own file"
    assert main(["fit", str(M), str(W), "--k", "2", "--n-iter", "2", "--out", str(out), "--overwrite"]) == 0
    assert np.load(out)["X"].shape == (12, 2)
    # the default --out factors.npz, in the working folder
    monkeypatch.chdir(tmp_path)
    (tmp_path / "factors.npz").write_bytes(b"mine too")
    assert main(["fit", str(M), str(W), "--k", "2", "--n-iter", "2"]) == 2
    assert "--out factors.npz exists; pass --overwrite" in capsys.readouterr().err
    assert (tmp_path / "factors.npz").read_bytes() == b"mine too"
    assert not [f for f in tmp_path.iterdir() if f.name.startswith(".")]  # no temporary file left


def test_cli_symlink_out_is_never_replaced(tmp_path, monkeypatch, capsys):
    M, W = _files(tmp_path)
    _no_work(monkeypatch)
    target = tmp_path / "target.npz"
    target.write_bytes(b"kept")
    link = tmp_path / "link.npz"
    link.symlink_to(target)
    assert main(["fit", str(M), str(W), "--k", "2", "--out", str(link), "--overwrite"]) == 2
    assert "is a symbolic link" in capsys.readouterr().err
    assert link.is_symlink() and target.read_bytes() == b"kept"


def test_cli_unwritable_out_is_refused_before_work(tmp_path, monkeypatch, capsys):
    import os

    M, W = _files(tmp_path)
    _no_work(monkeypatch)
    (tmp_path / "afile").write_text("x")
    assert main(["fit", str(M), str(W), "--k", "2", "--out", str(tmp_path / "afile" / "f.npz")]) == 2
    assert "--out " in capsys.readouterr().err
    ro = tmp_path / "ro"
    ro.mkdir()
    real_access = os.access
    # a read-only folder (chmod does not stop root, so the permission check is what is simulated)
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if os.fspath(p) == str(ro) else real_access(p, mode))
    assert main(["fit", str(M), str(W), "--k", "2", "--out", str(ro / "sub" / "f.npz")]) == 2
    assert f"--out {ro / 'sub' / 'f.npz'} cannot be written" in capsys.readouterr().err
    assert list(ro.iterdir()) == []


@pytest.mark.parametrize(("which", "value", "message"), [
    ("M", 1e200, "M.npy (where W > 0) has entries up to 1e+200 in magnitude"),
    ("M", np.inf, "M.npy (where W > 0) has 1 infinite values"),
    ("M", 1j, "M.npy (where W > 0) holds complex numbers"),
    ("W", 1e200, "W.npy has entries up to 1e+200"),
    ("W", np.nan, "W.npy has 1 NaN or infinite values"),
    ("W", -1.0, "W.npy: W must be non-negative"),
])
def test_cli_values_of_m_and_w_are_refused_naming_the_file(tmp_path, capsys, which, value, message):
    prob = planted(12, 10, 2, seed=0)
    M, W = prob.M.copy(), prob.W.copy()
    W[0, 0] = 1.0
    target = M if which == "M" else W
    if isinstance(value, complex):
        target = target + value
    else:
        target[0, 0] = value
    np.save(tmp_path / "M.npy", target if which == "M" else M)
    np.save(tmp_path / "W.npy", target if which == "W" else W)
    out = tmp_path / "f.npz"
    assert main(["fit", str(tmp_path / "M.npy"), str(tmp_path / "W.npy"), "--k", "2", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not out.exists()


def test_cli_m_may_hold_anything_where_w_is_zero(tmp_path, capsys):
    prob = planted(12, 10, 2, seed=0)
    M, W = prob.M.copy(), prob.W.copy()
    M[0, 0], W[0, 0] = 1e200, 0.0
    np.save(tmp_path / "M.npy", M)
    sp.save_npz(tmp_path / "W.npz", sp.csr_array(W))
    out = tmp_path / "f.npz"
    assert main(["fit", str(tmp_path / "M.npy"), str(tmp_path / "W.npz"), "--k", "2", "--n-iter", "2",
                 "--out", str(out)]) == 0
    assert np.isfinite(np.load(out)["X"]).all()
    # a sparse M too (its stored entries under a zero weight are never read)
    M[1, 1], W[1, 1] = np.nan, 0.0
    sp.save_npz(tmp_path / "Ms.npz", sp.csr_array(M))
    np.save(tmp_path / "W.npy", W)
    sp.save_npz(tmp_path / "W.npz", sp.csr_array(W))
    for wfile in ("W.npy", "W.npz"):
        assert main(["fit", str(tmp_path / "Ms.npz"), str(tmp_path / wfile), "--k", "2", "--n-iter", "2",
                     "--out", str(out), "--overwrite"]) == 0
    M[2, 2] = 1e200  # under a positive weight: refused, naming the file
    sp.save_npz(tmp_path / "Ms.npz", sp.csr_array(M))
    assert main(["fit", str(tmp_path / "Ms.npz"), str(tmp_path / "W.npy"), "--k", "2", "--out", str(out),
                 "--overwrite"]) == 2
    assert "Ms.npz (where W > 0) has entries up to 1e+200" in capsys.readouterr().err


def test_api_refuses_entries_whose_squares_overflow():
    prob = planted(12, 10, 2, seed=0)
    M = prob.M * 1e200
    with pytest.raises(ValueError, match="M has entries where W > 0 up to .* rescale"):
        weighted_low_rank(M, prob.W, 2)
    with pytest.raises(ValueError, match="W has weights up to"):
        weighted_low_rank(prob.M, prob.W * 1e200, 2)
    with pytest.raises(ValueError, match="M weighted by W"):
        weighted_low_rank(prob.M * 1e100, np.maximum(prob.W, 1.0) * 1e100, 2)


def test_cli_fit_that_is_not_finite_exits_non_zero_and_writes_nothing(tmp_path, monkeypatch, capsys):
    """Whatever makes the factors non-finite (here a solver made to return NaN), nothing that looks like a result
    is written and the exit status is not 0."""
    import iclr25.weighted_lowrank.cli as cli

    M, W = _files(tmp_path)
    real = cli.weighted_low_rank

    def nan_fit(*args, **kwargs):
        res = real(*args, **kwargs)
        res.X[0, 0] = np.nan
        return res
    monkeypatch.setattr(cli, "weighted_low_rank", nan_fit)
    out = tmp_path / "f.npz"
    assert main(["fit", str(M), str(W), "--k", "2", "--n-iter", "2", "--out", str(out)]) != 0
    err = capsys.readouterr().err
    assert "is not finite" in err and f"nothing written to --out {out}" in err, err
    assert not out.exists() and not [f for f in tmp_path.iterdir() if f.name.startswith(".")]
