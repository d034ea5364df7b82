"""Bad input raises ValueError/TypeError naming the argument; failed runs leave no half-written files."""

import numpy as np
import pytest
import torch

from iclr25.memno import (
    S4D,
    MemNO,
    add_noise,
    evaluate,
    ks,
    load_dataset,
    make_model,
    nrmse,
    solve_burgers,
    solve_ks,
    subsample,
    train,
)
from iclr25.memno.cli import main
from iclr25.utils.io import DataFileError


@pytest.fixture(scope="module")
def model():
    return make_model("memno", width=8, n_layers=1, modes=4)


@pytest.mark.parametrize("shape", [(32,), (2, 32), (1, 2, 3, 32)])
def test_forward_wrong_rank(model, shape):
    with pytest.raises(ValueError, match=r"u must have shape \(batch, T, X\)"):
        model(torch.zeros(shape))


def test_resolution_below_fourier_modes():
    m = make_model("ffno", width=8, n_layers=1, modes=16)
    with pytest.raises(ValueError, match="resolution 16.*16 Fourier modes"):
        m(torch.zeros(1, 3, 16))


def test_integer_tensor_and_non_tensor(model):
    with pytest.raises(TypeError, match="floating-point"):
        model(torch.zeros(1, 3, 16, dtype=torch.int64))
    with pytest.raises(TypeError, match="torch tensor"):
        model(np.zeros((1, 3, 16)))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_initial_condition(bad):
    u0 = np.zeros((2, 64))
    u0[1, 3] = bad
    with pytest.raises(ValueError, match="u0 .*finite"):
        solve_ks(u0)
    with pytest.raises(ValueError, match="u0 .*finite"):
        solve_burgers(u0)


def test_solver_bad_shapes_and_parameters():
    with pytest.raises(ValueError, match="u0 must have shape"):
        solve_ks(np.zeros(64))
    with pytest.raises(ValueError, match="u0 must hold"):
        solve_ks(np.zeros((0, 64)))
    with pytest.raises(TypeError, match="u0 must be a real"):
        solve_ks(np.zeros((1, 64), dtype=complex))
    with pytest.raises(ValueError, match="nu must be"):
        solve_ks(np.zeros((1, 64)), nu=-1.0)
    with pytest.raises(ValueError, match="save_dt must be a whole multiple"):
        solve_ks(np.zeros((1, 64)), save_dt=0.0123)


def test_dataset_parameters():
    with pytest.raises(ValueError, match="n \\(number of trajectories\\)"):
        ks(0)
    with pytest.raises(ValueError, match="resolution must divide"):
        ks(1, resolution=48, t_final=0.1)
    with pytest.raises(ValueError, match="noise must be"):
        add_noise(np.zeros((2, 8)), -0.1)
    with pytest.raises(ValueError, match="noise must be"):  # was silently ignored by observe()
        ks(1, noise=-0.1, t_final=0.1)
    with pytest.raises(ValueError, match="u must be finite"):
        subsample(np.array([[np.nan] * 8]), 4)


def test_model_parameters():
    with pytest.raises(ValueError, match="memory must be one of"):
        MemNO(memory="transformer")
    with pytest.raises(ValueError, match="memory_position"):
        MemNO(n_layers=2, memory_position=3)
    with pytest.raises(ValueError, match="name must be one of"):
        make_model("unet")
    with pytest.raises(ValueError, match="d_state must be an even"):
        S4D(4, 7)
    with pytest.raises(ValueError, match=r"u must have shape \(batch, T, \.\.\., 4\)"):
        S4D(4)(torch.zeros(2, 5, 3))


def test_training_arguments(model):
    data = ks(3, resolution=16, t_final=0.3, seed=0)
    with pytest.raises(ValueError, match="epochs must be"):
        train(model, data, epochs=0)
    with pytest.raises(ValueError, match="lr must be"):
        train(model, data, lr=float("nan"))
    with pytest.raises(TypeError, match="data must be a PDEDataset"):
        evaluate(model, np.zeros((2, 3, 16)))
    with pytest.raises(ValueError, match="pred and target"):
        nrmse(torch.zeros(2, 3), torch.zeros(2, 4))


def test_invalid_data_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_dataset(tmp_path / "missing.npz")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip file")
    with pytest.raises(DataFileError, match="not a memno data set"):
        load_dataset(bad)
    partial = tmp_path / "partial.npz"
    np.savez(partial, u=np.zeros((2, 3, 8)))
    with pytest.raises(DataFileError, match="not a memno data set"):
        load_dataset(partial)
    nan = tmp_path / "nan.npz"
    np.savez(nan, u=np.full((2, 3, 8), np.nan), target=np.zeros((2, 3, 8)), x=np.zeros(8), t=np.zeros(3),
             params=np.array("{}"))
    with pytest.raises(DataFileError, match="finite"):
        load_dataset(nan)


def test_cli_bad_input_is_one_line_error_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "d.npz"
    assert main(["generate", "ks", "--n", "2", "--resolution", "48", "--out", str(out)]) == 2
    assert "resolution must divide" in capsys.readouterr().err
    assert not out.exists() and list(tmp_path.iterdir()) == []
    assert main(["train", "--data", str(tmp_path / "none.npz"), "--out", str(tmp_path / "o")]) == 2
    assert "does not exist" in capsys.readouterr().err
