import numpy as np
import pytest

from iclr25.overtraining import (
    HiddenProgressMonitor,
    NotSeparableError,
    Recordings,
    TrainConfig,
    example_flips,
    load_recordings,
    make_odour_task,
    normalised_margin,
    svm_margin,
    train_mlp,
)
from iclr25.overtraining.cli import main


def test_non_separable_data_is_refused_by_the_hard_margin_svm():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    with pytest.raises(NotSeparableError, match="not linearly separable"):
        svm_margin(X, y)
    with pytest.raises(ValueError, match="not linearly separable"):
        normalised_margin(X, y)
    assert np.isnan(normalised_margin(X, y, require_separable=False))


@pytest.mark.parametrize("X, y, match", [
    (np.zeros((4, 2)), np.ones(3), "y must have shape"),
    (np.zeros(4), np.ones(4), "X must be"),
    (np.full((2, 2), np.nan), np.array([1.0, -1.0]), "finite"),
    (np.zeros((3, 2)), np.array([1.0, 2.0, -1.0]), "-1 and \\+1"),
    (np.zeros((3, 2)), np.ones(3), "both classes"),
])
def test_svm_margin_bad_input(X, y, match):
    with pytest.raises(ValueError, match=match):
        svm_margin(X, y)


def test_recordings_shapes_and_day_order():
    R = np.zeros((3, 4, 5))
    L = np.ones((3, 4), dtype=int)
    stim = np.zeros((3, 4), dtype=int)
    with pytest.raises(ValueError, match="strictly increasing"):
        Recordings(R, L, np.array([1, 3, 2]), stim, np.zeros((3, 4), bool))
    with pytest.raises(ValueError, match="labels must have shape"):
        Recordings(R, L[:, :3], np.array([1, 2, 3]), stim, np.zeros((3, 4), bool))
    with pytest.raises(ValueError, match="days must have shape"):
        Recordings(R, L, np.array([1, 2]), stim, np.zeros((3, 4), bool))
    with pytest.raises(ValueError, match="responses must be"):
        Recordings(R[0], L, np.array([1, 2, 3]), stim, np.zeros((3, 4), bool))


def test_load_recordings_names_the_file(tmp_path):
    f = tmp_path / "rec.npz"
    np.savez(f, responses=np.zeros((3, 4, 5)), labels=np.ones((3, 4)), days=np.array([2, 1, 3]))
    with pytest.raises(ValueError, match="rec.npz.*strictly increasing"):
        load_recordings(f)


def test_cli_days_out_of_order_exits_2(tmp_path, capsys):
    f = tmp_path / "rec.npz"
    np.savez(f, responses=np.zeros((3, 4, 5)), labels=np.ones((3, 4)), days=np.array([2, 1, 3]))
    assert main(["analyze", str(f), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "rec.npz" in err and "strictly increasing" in err
    assert not (tmp_path / "out").exists()


def test_simulate_rejects_a_bad_out(tmp_path, capsys):
    assert main(["simulate", "--out", str(tmp_path / "r.txt")]) == 2
    assert "--out must name a .npz" in capsys.readouterr().err


def test_bad_task_and_training_parameters():
    with pytest.raises(ValueError, match="n_components must be below"):
        make_odour_task(8, 8)
    with pytest.raises(ValueError, match="label_noise"):
        make_odour_task(label_noise=0.7)
    with pytest.raises(ValueError, match="lr must be"):
        TrainConfig(lr=-1.0)
    with pytest.raises(ValueError, match="batch_size"):
        TrainConfig(batch_size=0)
    t = make_odour_task(n_train=20, n_test=10)
    with pytest.raises(ValueError, match="X_test must be"):
        train_mlp(t.X_train, t.y_train, t.X_test[:, :5], t.y_test)


def test_monitor_and_flips_bad_input():
    with pytest.raises(ValueError, match="y_train must have 3 labels"):
        HiddenProgressMonitor(np.zeros((3, 2)), np.ones(4))
    with pytest.raises(ValueError, match="given together"):
        HiddenProgressMonitor(np.zeros((3, 2)), np.array([1, -1, 1]), X_test=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="correct must be"):
        example_flips(np.ones(5, bool))
    with pytest.raises(ValueError, match="watch"):
        HiddenProgressMonitor(np.zeros((3, 2)), np.array([1, -1, 1]))(0, object())
