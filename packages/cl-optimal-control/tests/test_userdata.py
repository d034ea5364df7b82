"""`simulate --data X.npz`: a user's two tasks in the package's documented layout, written here; the reader gives
the digits construction exactly; malformed files are one line naming them; sizes that cannot fit are refused."""

import json

import numpy as np
import pytest

from iclr25.cl_optimal_control import digits_tasks, read_tasks
from iclr25.cl_optimal_control.cli import main
from iclr25.utils.testing import one_error_line


def _digits_npz(path, shared=3, seed=0):
    """The digits tasks written as a user's file: classes + task_a/task_b + the same test rows."""
    from sklearn.datasets import load_digits

    X, digit = load_digits(return_X_y=True)
    perm = np.random.default_rng(seed).permutation(len(digit))
    test = np.zeros(len(digit), bool)
    test[perm[: int(round(0.3 * len(digit)))]] = True
    np.savez(path, features=X, labels=digit, task_a=np.arange(5),
             task_b=np.concatenate([np.arange(shared), np.arange(5, 10 - shared)]), test=test)
    return test


def test_class_labels_give_the_digits_tasks_exactly(tmp_path):
    test = _digits_npz(tmp_path / "digits.npz")
    got, used = read_tasks(tmp_path / "digits.npz")
    ref = digits_tasks(3, seed=0)
    assert got.gamma_raw == pytest.approx(ref.gamma_raw, abs=1e-12) and got.gamma == pytest.approx(ref.gamma)
    # the same rows in another order: compare as sets of (features, labels) rows
    key = lambda X, y: sorted(map(tuple, np.round(np.column_stack([X, y.T]), 9)))  # noqa: E731
    assert key(got.X_test, got.y_test) == key(ref.X_test, ref.y_test)
    assert "task_a [0, 1, 2, 3, 4], task_b [0, 1, 2, 5, 6]" in used and f"{int(test.sum())} test rows" in used


def test_two_column_labels_and_random_split(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 12))
    w = rng.normal(size=(2, 12))
    np.savez(tmp_path / "two.npz", features=X, labels=(X @ w.T > 0).astype(int))  # 0/1 per task
    tasks, used = read_tasks(tmp_path / "two.npz", seed=1)
    assert tasks.X_train.shape == (140, 12) and tasks.X_test.shape == (60, 12)
    assert set(np.unique(tasks.y_train)) == {-1.0, 1.0} and "random 0.3 test split (seed 1)" in used
    cos = float(w[0] @ w[1] / np.linalg.norm(w[0]) / np.linalg.norm(w[1]))
    assert abs(tasks.gamma_raw - cos) < 0.3  # the ridge probes recover the teachers' overlap roughly


def test_simulate_data_end_to_end(tmp_path, capsys):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 8))
    w = rng.normal(size=(2, 8))
    np.savez(tmp_path / "mine.npz", features=X, labels=np.where(X @ w.T > 0, 1, -1))
    out = tmp_path / "run"
    # the default problem (its programs are compiled by the demo and the device tests of this session) with
    # --problem's fields: alpha_1 and eta are values, not shapes, so nothing new is compiled
    (tmp_path / "p.json").write_text(json.dumps({"alpha_1": 3.0, "eta": 2.5}))
    assert main(["simulate", "--data", str(tmp_path / "mine.npz"), "--problem", str(tmp_path / "p.json"), "--seeds",
                 "2", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "--data" in printed and "measured gamma" in printed
    res = json.loads((out / "results.json").read_text())
    names = [m["name"] for m in res["metrics"]]
    assert "test error theory (optimal on the ODE)" in names and "test error sequential" in names
    sched = json.loads((out / "schedule.json").read_text())
    assert sched["problem"]["gamma"] == pytest.approx(res["config"]["gamma_measured"])
    assert sched["problem"]["alpha_1"] == 3.0 and sched["problem"]["eta"] == 2.5


@pytest.mark.parametrize("case", ["text", "no-labels", "one-class", "pickle"])
def test_malformed_files_are_one_line_naming_them(tmp_path, capsys, case):
    f = tmp_path / "bad.npz"
    X = np.random.default_rng(0).normal(size=(20, 4))
    if case == "text":
        f.write_text("features,labels\n" * 10)
    elif case == "no-labels":
        np.savez(f, features=X)
    elif case == "one-class":
        np.savez(f, features=X, labels=np.ones((20, 2)))
    else:
        np.savez(f, features=X, labels=np.array([{"a": 1}] * 20, dtype=object))
    assert main(["simulate", "--data", str(f), "--out", str(tmp_path / "run")]) == 2
    assert str(f) in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "run").exists()


def test_sizes_that_cannot_fit_are_refused(tmp_path, monkeypatch, capsys):
    np.savez(tmp_path / "d.npz", features=np.zeros((50, 4)), labels=np.zeros((50, 2)))
    import iclr25.utils.memory as memory

    monkeypatch.setattr(memory, "available_memory_bytes", lambda: 100)
    assert main(["simulate", "--data", str(tmp_path / "d.npz"), "--out", str(tmp_path / "run")]) == 2
    assert "(50 x 4 features) needs about" in one_error_line(capsys.readouterr().err)
