"""Bad input: inconsistent shapes, unknown task ids, NaN observations, bad files and flags."""

import dataclasses

import numpy as np
import pytest

from iclr25.ms_gode import (
    MSGODE,
    MassActionNetwork,
    ModelConfig,
    TrainConfig,
    af_mse,
    ap_mse,
    load_task,
    observe,
    simulate_oscillators,
    simulate_springs,
    simulate_system,
)
from iclr25.ms_gode.cli import main
from iclr25.ms_gode.simulators import Reaction


def test_task_shapes_must_agree(tiny_task):
    with pytest.raises(ValueError, match="adjacency must have shape"):
        dataclasses.replace(tiny_task, adjacency=tiny_task.adjacency[:, :2, :2])
    with pytest.raises(ValueError, match="obs_mask must have shape"):
        dataclasses.replace(tiny_task, obs_mask=tiny_task.obs_mask[:, :, :5])
    with pytest.raises(ValueError, match="times must have shape"):
        dataclasses.replace(tiny_task, times=tiny_task.times[:-1])
    with pytest.raises(ValueError, match=r"values must be an array of shape \(S, N, T, D\)"):
        dataclasses.replace(tiny_task, values=tiny_task.values[0])


def test_nan_observations_are_refused(tiny_task):
    bad = tiny_task.values.copy()
    bad[0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="values must be finite"):
        dataclasses.replace(tiny_task, values=bad)


def test_unknown_task_ids(tiny_task):
    learner = MSGODE(4, ModelConfig(hidden=8, ode_hidden=8, augment=0), TrainConfig(epochs=1, batch_size=3))
    with pytest.raises(ValueError, match="select_mode"):
        learner.select_mode(tiny_task)
    learner.fit_task(tiny_task)
    with pytest.raises(ValueError, match=r"task_id must be an integer in \[0, 0\]"):
        learner.evaluate(tiny_task, task_id=3)
    with pytest.raises(ValueError, match="task_id"):
        learner.fit_task(tiny_task, task_id=-1)
    with pytest.raises(ValueError, match="n_features"):
        MSGODE(2).evaluate(tiny_task)
    with pytest.raises(TypeError, match="task must be a TaskData"):
        learner.evaluate(np.zeros((2, 3, 4, 4)))
    with pytest.raises(ValueError, match="idx must be"):
        learner.select_mode(tiny_task, [99])
    with pytest.raises(ValueError, match=r"n_masks must be an integer in \[1, 1\]"):
        learner.select_mode(tiny_task, n_masks=2)
    with pytest.raises(ValueError, match="batch_size must be an integer >= 1"):
        learner.evaluate(tiny_task, batch_size=0)


def test_bad_parameters():
    with pytest.raises(ValueError, match="n_balls must be an integer >= 2"):
        simulate_springs(3, n_balls=1)
    with pytest.raises(ValueError, match="box must be a finite number > 0"):
        simulate_springs(3, box=-1.0)
    with pytest.raises(ValueError, match="system must be one of"):
        simulate_system("lotka-volterra", 3)
    with pytest.raises(ValueError, match="sample_percent"):
        observe(simulate_springs(2, n_frames=10), sample_percent=0.0)
    with pytest.raises(ValueError, match="hidden must be an integer >= 1"):
        ModelConfig(hidden=0)
    with pytest.raises(ValueError, match="lr must be a finite number > 0"):
        TrainConfig(lr=float("nan"))
    with pytest.raises(ValueError, match="criterion"):
        MSGODE(4, criterion="accuracy")
    with pytest.raises(ValueError, match="acc must be a square"):
        ap_mse([[1.0, 2.0]])
    with pytest.raises(ValueError, match="acc must be a square"):
        af_mse(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="unknown species"):
        MassActionNetwork("x", ("A",), (Reaction(("A",), ("B",), "k"),), {"k": 1.0}, {"A": 1.0})
    with pytest.raises(ValueError, match="omega must be a finite number > 0"):
        simulate_oscillators(3, omega=float("inf"))
    with pytest.raises(ValueError, match="dt must be a finite number > 0"):
        simulate_oscillators(3, omega=1.0, dt=0.0)
    learner = MSGODE(4)
    with pytest.raises(ValueError, match="needs at least one learned task"):
        learner.selection_check([])  # no task learned: nothing to check


def test_bad_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.npz"):
        load_task(tmp_path / "missing.npz")
    (tmp_path / "empty.npz").write_bytes(b"")
    with pytest.raises(ValueError, match="empty.npz"):
        load_task(tmp_path / "empty.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip at all" * 10)
    with pytest.raises(ValueError, match="junk.npz"):
        load_task(tmp_path / "junk.npz")
    np.savez(tmp_path / "shapes.npz", values=np.zeros((2, 3, 10, 4)), times=np.arange(10.0),
             adjacency=np.zeros((4, 4)))
    with pytest.raises(ValueError, match=r"shapes.npz: adjacency must have shape \(3, 3\)"):
        load_task(tmp_path / "shapes.npz")
    v = np.zeros((2, 3, 10, 4))
    v[1, 1, 1, 1] = np.nan
    np.savez(tmp_path / "nan.npz", values=v, times=np.arange(10.0), adjacency=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="nan.npz: values has 1 NaN or infinite values"):
        load_task(tmp_path / "nan.npz")


@pytest.mark.parametrize("kind", ["missing", "empty", "garbage"])
def test_cli_file_errors_exit_2_with_one_line_and_no_output(tmp_path, capsys, kind):
    f = tmp_path / "task.npz"
    if kind == "empty":
        f.write_bytes(b"")
    elif kind == "garbage":
        f.write_bytes(b"\x00garbage" * 50)
    out = tmp_path / "out"
    for argv in (["train", "--tasks", str(f), "--out", str(out)], ["predict", "--model", str(f), str(f)]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "task.npz" in err[0], err
        assert "allow_pickle" not in err[0] and "Errno" not in err[0], err  # the file's problem, not numpy's
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ([] if kind == "missing" else ["task.npz"])


def test_cli_bad_flags(tmp_path, capsys):
    assert main(["simulate", "springs", "--n", "0", "--out", str(tmp_path / "a.npz")]) == 2
    assert "--n must be" in capsys.readouterr().err
    assert main(["simulate", "springs", "--out", str(tmp_path / "a.txt")]) == 2
    assert "--out must name a .npz file" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def _raw_task_file(path, times, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.standard_normal((4, 3, len(times), 2))
    adjacency = np.ones((3, 3)) - np.eye(3)
    np.savez(path, values=values, times=np.asarray(times, dtype=float), adjacency=adjacency)
    return path


def test_user_times_are_honoured_not_replaced_by_frame_numbers(tmp_path):
    # issue 40: times used to be replaced by arange(T) / n_obs, so irregular timestamps were lost
    irregular = [0.0, 0.3, 1.1, 1.5, 2.7, 3.0, 4.0, 4.2, 6.0, 7.5, 9.0, 13.0]
    task = load_task(_raw_task_file(tmp_path / "irr.npz", irregular))
    assert task.n_obs == 6
    np.testing.assert_allclose(task.times, np.asarray(irregular) / 4.0, rtol=1e-6)  # window length t[6] - t[0]
    assert task.params["time_unit"] == 4.0 and task.params["time_origin"] == 0.0
    # regular frames keep the old normalisation frame / n_obs, whatever the time unit
    regular = load_task(_raw_task_file(tmp_path / "reg.npz", 0.25 * np.arange(12) + 3.0))
    np.testing.assert_allclose(regular.times, np.arange(12) / 6, rtol=1e-6, atol=1e-7)
    for bad, msg in (([0.0, 1.0, 1.0, 2.0], "strictly increasing"), ([0.0, np.nan, 1.0, 2.0], "finite")):
        with pytest.raises(ValueError, match=msg):
            load_task(_raw_task_file(tmp_path / "bad.npz", bad))


def test_retimed_copy_is_predicted_at_its_own_times_through_the_ode_solver(tmp_path):
    # the same observed window, the extrapolation frames at other times: the prediction must follow the ODE to
    # the given times (equal where the absolute times agree, different where they do not)
    t_a = [0.0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    t_b = [0.0, 1, 2, 3, 4, 5, 6, 6.5, 7, 9, 10, 14]
    a = load_task(_raw_task_file(tmp_path / "a.npz", t_a))
    b = load_task(_raw_task_file(tmp_path / "b.npz", t_b))
    np.testing.assert_array_equal(a.values, b.values)
    learner = MSGODE(2, ModelConfig(hidden=8, ode_hidden=8, augment=2), TrainConfig(epochs=1, batch_size=4))
    learner.fit_task(a)
    pa, _ = learner.predict(a, task_id=0)
    pb, _ = learner.predict(b, task_id=0)
    assert pa.shape == pb.shape == (4, 3, 6, 2)  # target frames 6..11
    # frame times a: 6 7 8 9 10 11 ; b: 6 6.5 7 9 10 14
    for ia, ib in ((0, 0), (1, 2), (3, 3), (4, 4)):  # same absolute time -> same prediction
        np.testing.assert_allclose(pb[:, :, ib], pa[:, :, ia], atol=2e-4)
    for ia, ib in ((1, 1), (5, 5)):  # 7 vs 6.5, 11 vs 14 -> the state has moved
        assert np.abs(pb[:, :, ib] - pa[:, :, ia]).max() > 1e-3


@pytest.mark.parametrize("argv, flag", [
    (["simulate", "springs", "--n", "1000000000000"], "--n 1000000000000"),
    (["simulate", "egfr", "--frames", "1000000000000"], "--frames 1000000000000"),
    (["train", "--epochs", "1000000000000"], "--epochs 1000000000000"),
])
def test_cli_refuses_impossible_sizes_in_one_line_before_work(tmp_path, capsys, argv, flag):
    # issue 40: 10^12 simulations, frames or epochs are refused with the estimate (exit 2), not started
    task = _raw_task_file(tmp_path / "t.npz", np.arange(12.0))
    out = tmp_path / "out.npz" if argv[0] == "simulate" else tmp_path / "model"
    full = argv[:1] + (["--tasks", str(task)] if argv[0] == "train" else []) + argv[1:] + ["--out", str(out)]
    assert main(full) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and flag in err[0] and "--force" in err[0], err
    assert not out.exists()


def test_cli_out_is_checked_before_work(tmp_path, capsys):
    task = _raw_task_file(tmp_path / "t.npz", np.arange(12.0))
    (tmp_path / "x.npz").write_bytes(b"user's file")
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "results.json").write_text("{}")
    for argv in (["simulate", "springs", "--n", "2", "--out", str(tmp_path / "x.npz")],
                 ["train", "--tasks", str(task), "--out", str(tmp_path / "m")],
                 ["train", "--tasks", str(task), "--out", str(task)],
                 ["pretrain", "--seed", "0", "--out", str(tmp_path / "x.npz")],
                 ["pretrain", "--seed", "0", "--out", str(tmp_path / "m")]):  # a previous run: refused up front
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--out" in err[0], (argv, err)
    assert (tmp_path / "x.npz").read_bytes() == b"user's file"
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["results.json"]


def test_pickled_npz_is_refused_in_one_line_naming_the_file(tmp_path, capsys):
    f = tmp_path / "obj.npz"
    np.savez(f, values=np.array([{"a": 1}], dtype=object), times=np.arange(3.0), adjacency=np.zeros((1, 1)))
    for argv in (["train", "--tasks", str(f), "--out", str(tmp_path / "o")], ["predict", "--model", str(f), str(f)]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "obj.npz" in err[0] and "allow_pickle" not in err[0], err
    assert not (tmp_path / "o").exists()


def test_demo_names_a_seed_without_a_shipped_checkpoint(tmp_path, capsys):
    assert main(["demo", "--seed", "7", "--out", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--seed 7" in err[0] and "shipped" in err[0], err
    assert not (tmp_path / "d").exists()
