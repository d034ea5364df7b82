"""Bad input raises ValueError/TypeError naming the argument; the CLI turns it into one line and exit 2."""

import numpy as np
import pytest

from iclr25.bopito import (
    ModelConfig,
    ScoreModel,
    cross_correlation,
    estimate_lambda,
    exact_reference,
    fit_model,
    load_trajectories,
    sample,
    simulate,
)


def _bop():
    prior = ScoreModel(ModelConfig(kind="bg", n_diffusion=10, width=8, emb_dim=4))
    return ScoreModel(ModelConfig(kind="bopito", n_diffusion=10, width=8, emb_dim=4, max_lag=10, lambda_hat=0.9),
                      prior=prior)


def test_negative_lags():
    m = _bop()
    with pytest.raises(ValueError, match="lag"):
        sample(m, np.zeros(4), -1)
    with pytest.raises(ValueError, match="lag"):
        sample(m, np.zeros(4), np.array([1, 2, -3, 4]))
    with pytest.raises(ValueError, match="lag"):
        exact_reference().correlation([10, -5])
    with pytest.raises(ValueError, match="lag"):
        exact_reference().propagator(-1)


def test_wrong_dimensions():
    m = _bop()
    with pytest.raises(ValueError, match="x0"):
        sample(m, np.zeros((4, 2)), 5)
    with pytest.raises(ValueError, match="lag"):
        sample(m, np.zeros(4), np.ones(3))
    with pytest.raises(ValueError, match="x0"):
        simulate("prinz", 3, 2, x0=np.zeros((3, 2)), desc=None)
    with pytest.raises(ValueError, match=r"data\[0\]"):
        fit_model("ito", np.zeros((2, 5, 2)), steps=1)
    with pytest.raises(ValueError, match="box"):
        ModelConfig(kind="bg", dim=2, box=((-1, 1),))
    with pytest.raises(ValueError, match="same shape"):
        cross_correlation(np.zeros(5), np.zeros(4))


@pytest.mark.parametrize("bad", [0.0, 1.0, 1.5, -0.2, float("nan")])
def test_lambda_outside_unit_interval(bad):
    with pytest.raises(ValueError, match="lambda_hat"):
        ModelConfig(kind="bopito", lambda_hat=bad)
    with pytest.raises(ValueError, match="lambda_int"):
        ModelConfig(kind="bopito", lambda_hat=0.9, lambda_int=bad)
    with pytest.raises(ValueError, match="lambda_hat"):
        _bop().with_lambda(lambda_hat=bad)


def test_lambda_type_and_missing():
    with pytest.raises(TypeError, match="lambda_hat"):
        ModelConfig(kind="bopito", lambda_hat="0.9")
    with pytest.raises(ValueError, match="lambda_hat is required"):
        ModelConfig(kind="bopito")


def test_nan_data(tmp_path):
    x = np.zeros((3, 20, 1))
    x[1, 4, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fit_model("bg", x, steps=1)
    with pytest.raises(ValueError, match="NaN"):
        estimate_lambda(x[..., 0])
    with pytest.raises(ValueError, match="x0"):
        sample(_bop(), np.array([0.0, np.nan]), 3)
    np.save(tmp_path / "nan.npy", x)
    with pytest.raises(ValueError, match="nan.npy.*NaN"):
        load_trajectories(tmp_path / "nan.npy")
    with pytest.raises(ValueError, match="x0"):
        simulate("prinz", 2, 2, x0=np.nan, desc=None)


def test_impossible_parameters():
    with pytest.raises(ValueError, match="n_traj"):
        simulate("prinz", 0, 10, desc=None)
    with pytest.raises(ValueError, match="h must"):
        simulate("prinz", 2, 10, h=-1.0, desc=None)
    with pytest.raises(ValueError, match="system"):
        simulate("nope", 2, 10, desc=None)
    with pytest.raises(ValueError, match="steps"):
        sample(_bop(), np.zeros(2), 3, steps=1)
    with pytest.raises(ValueError, match="prior"):
        ScoreModel(ModelConfig(kind="bopito", lambda_hat=0.9))
    with pytest.raises(ValueError, match="inf"):
        sample(ScoreModel(ModelConfig(kind="ito", n_diffusion=10, width=8, emb_dim=4)), np.zeros(2), np.inf)
    with pytest.raises(ValueError, match="n_grid"):
        exact_reference(n_grid=3)
    with pytest.raises(ValueError, match="steps"):
        fit_model("bg", np.zeros((2, 5, 1)), steps=0)


def _cli(capsys, monkeypatch, cwd, *args):
    from iclr25.bopito.cli import main

    monkeypatch.chdir(cwd)
    rc = main(list(args))
    return rc, capsys.readouterr().err


def test_cli_bad_files_exit_2_with_one_line_and_write_nothing(tmp_path, capsys, monkeypatch):
    (tmp_path / "empty.npz").write_bytes(b"")
    (tmp_path / "garbage.npz").write_bytes(b"\x00not a numpy file at all" * 10)
    np.save(tmp_path / "d.npy", np.zeros((2, 10)))
    for name in ("missing.npz", "empty.npz", "garbage.npz"):
        out = tmp_path / f"out-{name}"
        for argv in (["train", name, "--out", str(out)],
                     ["sample", "--model", name, "--lag", "10", "--out", str(out) + ".npz"],
                     ["train", "d.npy", "--prior", name, "--out", str(out)]):
            before = set(tmp_path.iterdir())
            rc, err = _cli(capsys, monkeypatch, tmp_path, *argv)
            assert rc == 2, (argv, err)
            lines = err.strip().splitlines()
            assert len(lines) == 1 and name in lines[0], (argv, err)
            assert set(tmp_path.iterdir()) == before, argv


def test_cli_bad_flags(tmp_path, capsys, monkeypatch):
    np.save(tmp_path / "d.npy", np.zeros((2, 10)))
    for argv, flag in ((["train", "d.npy", "--out", "m", "--lambda-hat", "1.5"], "--lambda-hat"),
                       (["train", "d.npy", "--out", "m", "--max-lag", "-3"], "--max-lag"),
                       (["simulate", "prinz", "--out", "x.npz", "--n-traj", "0"], "--n-traj"),
                       (["simulate", "prinz", "--out", "x.txt"], "--out"),
                       (["sample", "--model", "m", "--lag", "-1", "--out", "s.npz"], "--lag")):
        rc, err = _cli(capsys, monkeypatch, tmp_path, *argv)
        assert rc == 2 and flag in err, (argv, err)
    assert not (tmp_path / "m").exists()


def test_cli_bad_start_points_file(tmp_path, capsys, monkeypatch, trained_model_dir=None):
    from iclr25.bopito import ModelConfig, ScoreModel, save_model

    save_model(ScoreModel(ModelConfig(kind="ito", n_diffusion=10, width=8, emb_dim=4)), tmp_path / "m")
    (tmp_path / "garbage.npy").write_bytes(b"\x93NUMPY garbage")
    for name in ("missing.npy", "garbage.npy"):
        rc, err = _cli(capsys, monkeypatch, tmp_path, "sample", "--model", "m", "--lag", "3", "--x0", name,
                       "--out", "s.npz")
        assert rc == 2 and name in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "s.npz").exists()


def test_fit_interpolation_needs_lags_above_max_lag():
    from iclr25.bopito import fit_interpolation

    with pytest.raises(ValueError, match="max_lag"):
        fit_interpolation(_bop(), np.zeros(4), [5, 20], [0.5, 0.1])
    with pytest.raises(ValueError, match="BoPITO"):
        fit_interpolation(ScoreModel(ModelConfig(kind="ito", n_diffusion=10, width=8, emb_dim=4)), np.zeros(4),
                          [50], [0.1])


@pytest.mark.parametrize("argv, flag", [
    (["simulate", "prinz", "--out", "x.npz", "--n-traj", "1000000000000"], "--n-traj 1000000000000"),
    (["simulate", "prinz", "--out", "x.npz", "--n-frames", "1000000000000"], "--n-frames 1000000000000"),
    (["train", "d.npy", "--out", "m", "--steps", "1000000000000"], "--steps 1000000000000"),
    (["sample", "--model", "m", "--lag", "10", "--n", "1000000000000", "--out", "s.npz"], "--n 1000000000000"),
    (["sample", "--model", "m", "--lag", "10", "--chain", "1000000000000", "--out", "s.npz"], "--chain"),
    (["alanine-md", "--out", "a.npz", "--n-eq", "1000000", "--eq-frames", "1000000"], "--n-eq 1000000"),
])
def test_cli_refuses_impossible_sizes_in_one_line_before_work(tmp_path, capsys, monkeypatch, argv, flag):
    # issue 40: 10^12 walkers, frames, steps or samples are refused with the estimate (exit 2), not a traceback
    # after minutes of work
    np.save(tmp_path / "d.npy", np.zeros((2, 10)))
    before = set(tmp_path.iterdir())
    rc, err = _cli(capsys, monkeypatch, tmp_path, *argv)
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and flag in lines[0] and "--force" in lines[0], err
    assert set(tmp_path.iterdir()) == before


def test_cli_max_lag_longer_than_the_data_is_refused_not_clamped(tmp_path, capsys, monkeypatch):
    # issue 40: --max-lag 1000 on 10-frame trajectories used to be clamped to 9 without a word
    np.save(tmp_path / "d.npy", np.zeros((2, 10)))
    rc, err = _cli(capsys, monkeypatch, tmp_path, "train", "d.npy", "--kind", "ito", "--max-lag", "1000",
                   "--steps", "1", "--out", "m")
    assert rc == 2 and "--max-lag 1000" in err and "9" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "m").exists()


def test_cli_out_is_checked_before_work(tmp_path, capsys, monkeypatch):
    np.save(tmp_path / "d.npy", np.zeros((2, 10)))
    (tmp_path / "x.npz").write_bytes(b"user's file")
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "results.json").write_text("{}")
    for argv in (["simulate", "prinz", "--out", "x.npz", "--n-traj", "2", "--n-frames", "2"],
                 ["alanine-md", "--out", "x.npz", "--n-eq", "1", "--eq-frames", "1"],
                 ["train", "d.npy", "--out", "m", "--steps", "1"],
                 ["train", "d.npy", "--out", "d.npy", "--steps", "1"]):
        rc, err = _cli(capsys, monkeypatch, tmp_path, *argv)
        assert rc == 2 and "--out" in err and len(err.strip().splitlines()) == 1, (argv, err)
    assert (tmp_path / "x.npz").read_bytes() == b"user's file"
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["results.json"]


def test_cli_alanine_md_bad_flags(tmp_path, capsys, monkeypatch):
    for argv, flag in ((["alanine-md", "--out", "a.txt"], "--out"), (["alanine-md", "--out", "a.npz", "--n-eq", "0"],
                                                                   "--n-eq"),
                       (["alanine-md", "--out", "a.npz", "--short-frames", "-3"], "--short-frames"),
                       (["repro", "--system", "alanine", "--data", "missing.npz", "--out", "r"], "missing.npz")):
        rc, err = _cli(capsys, monkeypatch, tmp_path, *argv)
        assert rc == 2 and flag in err and len(err.strip().splitlines()) == 1, (argv, err)
    assert list(tmp_path.iterdir()) == []
