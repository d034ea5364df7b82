"""Where ms-gode computes (issue 59): the LG-ODE's loss, MS-GODE's training of a task (with its calibration and
mode switching) and a baseline's with everything on a non-CPU device (torch's meta stand-in), ``--device cpu`` and
``--device auto`` giving the same numbers here, no ``.numpy()`` on a tensor that may be on the device, and one step
of the paper rung."""

from pathlib import Path

import numpy as np
import pytest
import torch

from iclr25.ms_gode.cli import main
from iclr25.ms_gode.continual import MSGODE, Baseline, TrainConfig
from iclr25.ms_gode.data import save_task
from iclr25.ms_gode.model import LGODE, ModelConfig, TaskTensors
from iclr25.utils.device import check_device_conformance, torch_device
from iclr25.utils.results import RunResult
from iclr25.utils.testing import check_numpy_lint

META = torch.device("meta")
SRC = Path(__file__).parents[1] / "src" / "iclr25" / "ms_gode"
SMALL = ModelConfig(hidden=8, ode_hidden=8, augment=4)
ONE = TrainConfig(epochs=1, batch_size=6)


@pytest.fixture(autouse=True)
def _euler_on_meta(monkeypatch, request):
    # torchdiffeq checks its time grid's values (strictly increasing) and sizes its rk4 grid from them: data that
    # torch's meta stand-in does not hold. In the meta tests the solver is a plain Euler step per output time
    # (torchdiffeq itself is device-generic; what is checked is where this package puts its tensors)
    if "non_cpu" not in request.node.name and "catches" not in request.node.name:
        return
    import torchdiffeq

    def euler(func, y0, t, **_):
        ys = [y0]
        for i in range(len(t) - 1):
            ys.append(ys[-1] + (t[i + 1] - t[i]) * func(t[i], ys[-1]))
        return torch.stack(ys)

    monkeypatch.setattr(torchdiffeq, "odeint", euler)


def _lgode(task):
    def build(device):
        model = LGODE(4, SMALL, masked=True, seed=0, device=device)
        model.add_task()
        return model, TaskTensors(task, SMALL.max_gap, device).batch(np.arange(3))
    return build


def test_loss_training_mode_switching_and_baselines_on_a_non_cpu_device(tiny_task):
    out = check_device_conformance(_lgode(tiny_task), lambda m, bt: m.loss(bt))
    assert out.loss.device == META and out.pred.shape[:2] == (3, 3)

    def ms_gode(_, __):
        learner = MSGODE(4, SMALL, ONE, seed=0, device=META)
        learner.fit_task(tiny_task)
        return learner, learner.predict(tiny_task)

    learner, (pred, sel) = check_device_conformance(_lgode(tiny_task), ms_gode)
    assert learner.model.device == META and isinstance(pred, np.ndarray) and sel.best == 0
    # a baseline, with EWC's Fisher (its generator on the device) after the task
    base = Baseline("ewc", 4, SMALL, ONE, seed=0, device=META)
    check_device_conformance(_lgode(tiny_task), lambda _, __: base.fit_task(tiny_task))
    assert base.n_tasks == 1 and base.model.device == META and base._fisher[0][0][0].device == META


def test_the_conformance_check_catches_data_left_on_the_cpu(tiny_task):
    # 0.6 built every batch on the CPU (TaskTensors had no device): with the model on the device it must fail
    with pytest.raises(AssertionError, match="non-CPU device"):
        check_device_conformance(_lgode(tiny_task), lambda m, _: m.loss(
            TaskTensors(tiny_task, SMALL.max_gap).batch(np.arange(3))))


def test_device_cpu_and_auto_give_the_same_numbers_and_say_where(tiny_task, tmp_path, capsys):
    save_task(tiny_task, tmp_path / "t.npz")
    runs = {}
    for device in ("cpu", "auto"):
        out = tmp_path / device
        assert main(["train", "--tasks", str(tmp_path / "t.npz"), "--epochs", "1", "--batch-size", "3",
                     "--hidden", "4", "--device", device, "--out", str(out)]) == 0
        runs[device] = RunResult.load(out / "results.json")
    assert runs["cpu"].machine["device"] == "cpu"
    if torch_device("auto").type == "cpu":  # this machine: auto is the CPU, and must give the CPU's numbers
        assert runs["auto"].machine["device"] == "cpu"
        values = {d: {m.name: m.value for m in r.metrics if not m.timing} for d, r in runs.items()}
        assert values["cpu"] == values["auto"] and all(np.isfinite(v) for v in values["cpu"].values())
    if not torch.cuda.is_available():  # an absent device: one line naming the flag, nothing written
        assert main(["train", "--tasks", str(tmp_path / "t.npz"), "--device", "cuda", "--out",
                     str(tmp_path / "c")]) == 2
        err = capsys.readouterr().err.strip()
        assert "--device cuda" in err and len(err.splitlines()) == 1 and not (tmp_path / "c").exists()


def test_no_numpy_on_a_tensor_that_may_be_on_the_device():
    check_numpy_lint(SRC)  # a tensor reaches numpy only through .cpu()


def test_paper_rung_runs_one_step_on_the_cpu(monkeypatch, capsys):
    # `iclr25 claims ms-gode --rung paper --smoke` in this process (the claims command sets $ICLR25_SMOKE and
    # $ICLR25_DEVICE; monkeypatch restores both): the paper-size LG-ODE for one step of the first two tasks
    from iclr25.utils.cli import main as iclr25

    for k in ("ICLR25_SMOKE", "ICLR25_DEVICE"):
        monkeypatch.setenv(k, "")
    assert iclr25(["claims", "ms-gode", "--rung", "paper", "--smoke", "--device", "cpu"]) == 0
    assert "smoke run of ms-gode's rung 'paper': 6 claim(s)" in capsys.readouterr().out
    assert iclr25(["claims", "ms-gode", "--rung", "paper", "--estimate"]) == 0
    assert "GPU-hours per seed" in capsys.readouterr().out
