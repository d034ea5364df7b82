"""Where overtraining computes (issue 59): the network's forward (``to_torch``) and its GD (``train_mlp``, SGD
too, and ``epochs_to_learn``) with everything on a non-CPU device (torch's meta stand-in); the torch gradients
equal the numpy ones; ``--device cpu`` and ``--device auto`` giving the same recordings here; no ``.numpy()`` on
a tensor that may be on the device; one step of the paper rung."""

from pathlib import Path

import numpy as np
import pytest
import torch

from iclr25.overtraining import TrainConfig, init_mlp, loss_and_grad, make_odour_task, to_torch, train_mlp
from iclr25.overtraining.claims import REGISTRY
from iclr25.overtraining.cli import main
from iclr25.overtraining.network import _grad_torch, accelerator
from iclr25.overtraining.protocols import epochs_to_learn
from iclr25.utils.device import check_device_conformance, torch_device
from iclr25.utils.testing import check_numpy_lint, check_paper_rung

META = torch.device("meta")
SRC = Path(__file__).parents[1] / "src" / "iclr25" / "overtraining"


@pytest.fixture(scope="module")
def task():
    return make_odour_task(16, 4, n_train=16, n_test=20, input_dim=12, seed=0)


def test_forward_on_a_non_cpu_device(task):
    p = init_mlp(12, 8, seed=0)
    out = check_device_conformance(lambda d: (to_torch(p, device=d), torch.zeros(5, 12, dtype=torch.float64,
                                                                                   device=d)))
    assert out.device == META and out.shape == (5,)


@pytest.mark.parametrize("batch_size", [None, 4])
def test_gradient_descent_on_a_non_cpu_device(task, batch_size):
    cfg = TrainConfig(width=8, n_epochs=3, n_checkpoints=2, batch_size=batch_size)

    def step(_, device):
        run = train_mlp(task.X_train, task.y_train, task.X_test, task.y_test, cfg, epochs=[0, 2], measure=False,
                        device=device)
        e = epochs_to_learn(init_mlp(12, 8, seed=0), task.X_train, task.y_train, cfg, max_epochs=2, device=device)
        return run, e

    run, e = check_device_conformance(lambda d: (torch.nn.Module(), d), step)
    assert [c.epoch for c in run.checkpoints] == [0, 2] and run.checkpoints[1].params.W.shape == (8, 12)
    assert e is None  # on the stand-in every accuracy reads 0: never learned within 2 epochs


def test_the_conformance_check_catches_data_left_on_the_cpu(task):
    def cpu_data_step(_, device):  # weights on the device, data made on the CPU
        p = init_mlp(12, 8, seed=0)
        W, a = (torch.as_tensor(v, device=device) for v in (p.W, p.a))
        return _grad_torch(W, a, torch.as_tensor(task.X_train), torch.as_tensor(task.y_train), 1.0, "relu", 0.0)

    with pytest.raises(AssertionError, match="non-CPU device"):
        check_device_conformance(lambda d: (torch.nn.Module(), d), cpu_data_step)


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_the_device_path_has_the_numpy_gradients(task, activation):
    # what a GPU runs (torch, float64) against the numpy reference, here on CPU tensors
    p = init_mlp(12, 8, alpha=0.7, activation=activation, seed=1)
    _, gW, ga = loss_and_grad(p, task.X_train, task.y_train, weight_decay=1e-3)
    tW, ta = _grad_torch(*(torch.as_tensor(v) for v in (p.W, p.a, task.X_train, task.y_train)), 0.7, activation,
                         1e-3)
    np.testing.assert_allclose(tW.numpy(), gW, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ta.numpy(), ga, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("batch_size", [None, 5])
def test_the_device_loop_gives_the_numpy_loops_weights(task, monkeypatch, batch_size):
    # the accelerator's loop (torch float64), run here on CPU tensors, against the numpy loop: same epochs, same
    # minibatches, same weights to rounding
    cfg = TrainConfig(width=8, lr=0.5, n_epochs=30, n_checkpoints=3, batch_size=batch_size)
    p0 = init_mlp(12, 8, seed=3)
    ref = train_mlp(task.X_train, task.y_train, task.X_test, task.y_test, cfg, init=p0, seed=3, device="cpu")
    e_ref = epochs_to_learn(p0, task.X_train, task.y_train, cfg, max_epochs=500, device="cpu")
    monkeypatch.setattr("iclr25.overtraining.network.accelerator", lambda device=None: torch.device("cpu"))
    dev = train_mlp(task.X_train, task.y_train, task.X_test, task.y_test, cfg, init=p0, seed=3, device="cuda")
    assert epochs_to_learn(p0, task.X_train, task.y_train, cfg, max_epochs=500, device="cuda") == e_ref
    assert [c.epoch for c in dev.checkpoints] == [c.epoch for c in ref.checkpoints]
    for a, b in zip(dev.checkpoints, ref.checkpoints, strict=True):
        np.testing.assert_allclose(a.params.W, b.params.W, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(a.params.a, b.params.a, rtol=1e-9, atol=1e-12)
        assert a.train_acc == b.train_acc


def test_device_cpu_and_auto_give_the_same_recordings_and_say_where(tmp_path):
    from iclr25.overtraining.recordings import save_recordings, simulate_recordings

    files = {"auto": tmp_path / "auto.npz", "cpu": tmp_path / "cpu.npz"}
    assert main(["simulate", "--days", "3", "--neurons", "4", "--trials", "1", "--device", "auto", "--out",
                 str(files["auto"])]) == 0
    save_recordings(files["cpu"], simulate_recordings(n_days=3, n_neurons=4, trials_per_stimulus=1, device="cpu"))
    assert accelerator("cpu") is None
    if torch_device("auto").type == "cpu":  # this machine: auto is the CPU (numpy), and must give its numbers
        assert accelerator("auto") is None
        a, b = np.load(files["cpu"]), np.load(files["auto"])
        assert sorted(a.files) == sorted(b.files)
        assert all(np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind == "f") for k in a.files)  # NaN: no margin


def test_an_absent_device_is_one_line_naming_the_flag(tmp_path, capsys, monkeypatch):
    if not torch.cuda.is_available():
        assert main(["simulate", "--device", "cuda", "--out", str(tmp_path / "r.npz")]) == 2
        err = capsys.readouterr().err.strip()
        assert "--device cuda" in err and len(err.splitlines()) == 1 and not (tmp_path / "r.npz").exists()
    with pytest.raises(SystemExit) as exc:  # refused by argparse before any work
        main(["demo", "--device", "gpu", "--out", str(tmp_path / "demo")])
    assert exc.value.code == 2 and "argument --device" in capsys.readouterr().err
    # MPS (had this machine one) has no float64, which the late-time GD needs: refused in one line
    monkeypatch.setattr("iclr25.utils.device.torch_device", lambda spec: torch.device("mps"))
    with pytest.raises(ValueError, match="--device mps: .*float64"):
        accelerator("mps")


def test_no_numpy_on_a_tensor_that_may_be_on_the_device():
    check_numpy_lint(SRC)  # a tensor reaches numpy only through .cpu()


def test_paper_rung_runs_one_step_on_the_cpu(monkeypatch):
    # as `iclr25 claims overtraining --rung paper --smoke`: the paper's network (H = 256, k = 20, n = 4, D = 100) on 40
    # training mixtures to 2·E₀, every claim finite; the rung's cost is what --estimate prints
    monkeypatch.delenv("ICLR25_DEVICE", raising=False)
    values = check_paper_rung(REGISTRY)
    assert len(values) == 6 and values["behaviour-flat-after-E0"] == 1.0
    assert "CPU core-hours per seed" in REGISTRY.costs["paper"].explain("paper", 5)
