"""Where memno computes (issue 59): the models, one training step, evaluation and rollouts with everything on a
non-CPU device (torch's meta stand-in), ``--device cpu`` and ``--device auto`` giving the same numbers here, no
``.numpy()`` on a tensor that may be on the device, and one step of the paper rung."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from iclr25.memno import MODEL_NAMES, PDEDataset, evaluate, make_model, rollout, rollout_full, train
from iclr25.memno.cli import main
from iclr25.utils.device import check_device_conformance, torch_device
from iclr25.utils.results import RunResult
from iclr25.utils.testing import check_numpy_lint

META = torch.device("meta")
SRC = Path(__file__).parents[1] / "src" / "iclr25" / "memno"


def _data(n=4, n_t=6, resolution=16):
    u = np.random.default_rng(0).normal(size=(n, n_t, resolution)).astype(np.float32)
    return PDEDataset(u=u, target=u, x=np.arange(resolution) / resolution, t=np.arange(n_t) * 0.1, params={})


def _model(name="memno"):
    return lambda device: (make_model(name, width=4, n_layers=2, modes=4, device=device), _data())


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_forward_on_a_non_cpu_device(name):
    out = check_device_conformance(lambda d: (make_model(name, width=4, n_layers=2, modes=4, device=d),
                                              torch.zeros(2, 5, 16, device=d)))
    assert out.device == META and out.shape == (2, 5, 16)


def test_one_training_step_evaluation_and_rollouts_on_a_non_cpu_device():
    res = check_device_conformance(_model(), lambda m, data: train(m, data, epochs=1, batch_size=4, device=META))
    assert res.losses.shape == (1,) and next(res.model.parameters()).device == META
    ev = check_device_conformance(_model(), lambda m, data: evaluate(m, data, device=META))
    assert ev.per_step.shape == ev.per_step_rollout.shape == (5,)  # on the CPU, as numpy
    for fn in (rollout, rollout_full):
        out = check_device_conformance(_model(), lambda m, data, fn=fn: fn(m, torch.zeros(2, 16), 3, device=META))
        assert out.device.type == "cpu" and out.shape == (2, 3, 16)


def test_the_conformance_check_catches_data_left_on_the_cpu():
    # the 0.6 training loop (data made on the CPU, model on the device) is what the check must reject
    def cpu_data_step(model, data):
        u = torch.as_tensor(data.u)
        return model(u[:, :-1])

    with pytest.raises(AssertionError, match="non-CPU device"):
        check_device_conformance(_model(), cpu_data_step)


def test_device_cpu_and_auto_give_the_same_numbers_and_say_where(tmp_path, capsys):
    data = _data(n=6, n_t=5)
    data.save(tmp_path / "d.npz")
    runs = {}
    for device in ("cpu", "auto"):
        out = tmp_path / device
        assert main(["train", "--data", str(tmp_path / "d.npz"), "--epochs", "2", "--width", "4", "--layers", "1",
                     "--modes", "4", "--batch-size", "2", "--device", device, "--out", str(out)]) == 0
        runs[device] = RunResult.load(out / "results.json")
    assert runs["cpu"].machine["device"] == "cpu"
    if torch_device("auto").type == "cpu":  # this machine: auto is the CPU, and must give the CPU's numbers
        assert runs["auto"].machine["device"] == "cpu"
        values = {d: {m.name: m.value for m in r.metrics if not m.timing} for d, r in runs.items()}
        assert values["cpu"] == values["auto"] and all(np.isfinite(v) for v in values["cpu"].values())


def test_an_absent_device_is_one_line_naming_the_flag(tmp_path, capsys):
    _data().save(tmp_path / "d.npz")
    if not torch.cuda.is_available():
        assert main(["train", "--data", str(tmp_path / "d.npz"), "--device", "cuda", "--out",
                     str(tmp_path / "run")]) == 2
        err = capsys.readouterr().err.strip()
        assert "--device cuda" in err and len(err.splitlines()) == 1
    with pytest.raises(SystemExit) as exc:  # refused by argparse before any work
        main(["demo", "--device", "gpu", "--out", str(tmp_path / "demo")])
    assert exc.value.code == 2 and "argument --device" in capsys.readouterr().err


def test_no_numpy_on_a_tensor_that_may_be_on_the_device():
    check_numpy_lint(SRC)  # a tensor reaches numpy only through .cpu()


def test_paper_rung_runs_one_step_on_the_cpu():
    # `iclr25 claims memno --rung paper --smoke`: the paper configuration's code path, one optimiser step per model
    env = {k: v for k, v in os.environ.items() if k not in ("ICLR25_DEVICE", "ICLR25_SMOKE")}
    proc = subprocess.run([str(Path(sys.executable).parent / "iclr25"), "claims", "memno", "--rung", "paper",
                           "--smoke", "--device", "cpu"], capture_output=True, text=True, env=env, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert "smoke run of memno's rung 'paper': 4 claim(s)" in proc.stdout
    est = subprocess.run([str(Path(sys.executable).parent / "iclr25"), "claims", "memno", "--rung", "paper",
                          "--estimate"], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert est.returncode == 0 and "GPU-hours per seed" in est.stdout
