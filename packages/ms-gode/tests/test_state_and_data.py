"""Mask export / import, add_task without preallocation, task files and the graph rule."""

import numpy as np
import pytest

from iclr25.ms_gode import (
    MSGODE,
    ModelConfig,
    TrainConfig,
    egfr_network,
    load_task,
    save_task,
    simulate_charged,
)
from iclr25.ms_gode.cli import main


def test_state_roundtrip_is_exact_and_bit_packed(tiny_task, tmp_path):
    mc = ModelConfig(hidden=8, ode_hidden=8, augment=4)
    learner = MSGODE(4, mc, TrainConfig(epochs=2, batch_size=3), seed=1)
    for _ in range(3):  # more tasks than anything preallocates: add_task grows the lists
        learner.fit_task(tiny_task)
    path = learner.export_state(tmp_path / "state.npz")
    again = MSGODE.load_state(path)
    assert again.n_tasks == 3 and again.thresholds == learner.thresholds
    for t in range(3):
        a = learner.evaluate(tiny_task, task_id=t).mse
        b = again.evaluate(tiny_task, task_id=t).mse
        assert a == b
    with np.load(path, allow_pickle=False) as z:
        n_weights = learner.model.n_weights()
        mask_bytes = sum(z[k].nbytes for k in z.files if k.startswith("mask_") and k.endswith("_0"))
    assert mask_bytes <= n_weights / 8 + 64  # one bit per weight (+ padding of each layer to a byte)
    assert learner.state_bytes_per_task() < 4 * n_weights / 8  # far below a float copy of the weights


def test_task_file_roundtrip_and_raw_user_file(tiny_task, tmp_path):
    p = save_task(tiny_task, tmp_path / "t.npz")
    back = load_task(p)
    assert np.array_equal(back.values, tiny_task.values) and np.array_equal(back.obs_mask, tiny_task.obs_mask)
    raw = simulate_charged(4, n_frames=20, seed=5)
    np.savez(tmp_path / "raw.npz", values=raw.values, times=raw.times, adjacency=raw.adjacency[0])
    user = load_task(tmp_path / "raw.npz")
    assert user.values.shape == (4, 3, 20, 4) and user.n_obs == 10
    assert user.values.min() >= -1 and user.values.max() <= 1


def test_reaction_graph_rule():
    net = egfr_network()
    a = net.to_graph()
    i = {s: k for k, s in enumerate(net.species)}
    assert a[i["L"], i["R"]] == 1 and a[i["L"], i["LR"]] == 1  # reactant-reactant, reactant-product
    assert a[i["Grb2"], i["ShcU"]] == 0  # never in one reaction
    assert np.array_equal(a, a.T) and not np.diag(a).any()
    sub = net.to_graph(selected=["L", "R", "LR"])
    assert sub.shape == (3, 3)
    assert net.to_graph(hops=2).sum() >= a.sum()


def test_cli_simulate_train_predict(tmp_path, capsys):
    for name, k in (("a", "0.1"), ("b", "1.0")):
        assert main(["simulate", "springs", "--n", "8", "--frames", "24", "--balls", "3", "--k", k,
                     "--seed", "1", "--out", str(tmp_path / f"{name}.npz")]) == 0
    assert main(["train", "--tasks", str(tmp_path / "a.npz"), str(tmp_path / "b.npz"), "--out",
                 str(tmp_path / "model"), "--epochs", "2", "--batch-size", "4", "--hidden", "8"]) == 0
    capsys.readouterr()
    assert main(["predict", "--model", str(tmp_path / "model"), str(tmp_path / "b.npz"), "--out",
                 str(tmp_path / "pred.npz")]) == 0
    report = capsys.readouterr().out
    assert '"mode"' in report and '"unknown"' in report and '"separable"' in report
    # train checked mode switching on every task's validation trajectories and kept the check with the model
    assert "validation trajectories given their own sub-network" in (tmp_path / "model" / "results.json").read_text()
    with np.load(tmp_path / "pred.npz") as z:
        assert z["prediction"].shape[:2] == (8, 3)
    # the model folder is whole or refused (issue 57): state.npz from another save, or a save cut short
    model = tmp_path / "model"
    assert sorted(p.name for p in model.iterdir()) == ["manifest.json", "results.json", "state.npz"]
    state = (model / "state.npz").read_bytes()
    (model / "state.npz").write_bytes(state[:-1] + bytes([state[-1] ^ 1]))
    argv = ["predict", "--model", str(model), str(tmp_path / "b.npz")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--model" in err and "state.npz is not the file" in err, err
    assert main(["predict", "--model", str(model / "state.npz"), str(tmp_path / "b.npz")]) == 2  # the file too
    assert "state.npz is not the file" in capsys.readouterr().err
    (model / "state.npz").write_bytes(state)
    (model / "manifest.json").unlink()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no manifest.json" in err, err


def test_trajectories_from_your_own_arrays_by_keyword():
    from iclr25.ms_gode import Trajectories

    rng = np.random.default_rng(0)
    pos, vel = rng.standard_normal((4, 3, 12, 2)), rng.standard_normal((4, 3, 12, 2))
    times = np.cumsum(rng.uniform(0.1, 1.0, 12))  # irregular
    traj = Trajectories.from_arrays(positions=pos, velocities=vel, times=times, edges=[(0, 1), (1, 2)])
    assert traj.values.shape == (4, 3, 12, 4) and traj.system == "user"
    np.testing.assert_array_equal(traj.times, times)
    assert traj.adjacency[0].tolist() == [[0, 1, 0], [1, 0, 1], [0, 1, 0]]
    assert traj.node_names == ("node0", "node1", "node2")
    task = traj.to_task(n_obs=6, n_targets=6)
    np.testing.assert_allclose(task.times, (times - times[0]) / (times[6] - times[0]), rtol=1e-6)
    # one trajectory (N, T, d), no times (0, 1, ...), no edges (fully connected), positions only
    one = Trajectories.from_arrays(positions=pos[0])
    assert one.values.shape == (1, 3, 12, 2) and one.times.tolist() == list(range(12))
    assert one.adjacency[0].sum() == 6
    # the plain constructor needs only values, times and adjacency now
    assert Trajectories(pos, np.arange(12.0), np.ones((3, 3))).node_names[2] == "node2"
    for kwargs, msg in (
            ({}, "positions"),
            ({"positions": pos, "velocities": vel[..., :1]}, "velocities must have the shape"),
            ({"positions": pos, "times": times[:5]}, r"times must have shape \(12,\)"),
            ({"positions": pos, "times": times[::-1]}, "times must be strictly increasing"),
            ({"positions": pos, "edges": [(0, 3)]}, r"edges must be pairs of object indices in \[0, 2\]"),
            ({"positions": pos, "edges": np.ones((4, 4))}, "edges must be"),
            ({"positions": np.full((3, 12, 2), np.nan)}, "positions must be finite"),
            ({"values": pos, "positions": pos}, "either values or positions"),
            ({"positions": pos, "node_names": ["a"]}, "node_names must have 3")):
        with pytest.raises(ValueError, match=msg):
            Trajectories.from_arrays(**kwargs)
