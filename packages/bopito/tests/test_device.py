"""Where bopito computes (issue 59): every model kind's ε-prediction, one training step and the samplers with
everything on a non-CPU device (torch's meta stand-in), ``--device cpu`` and ``--device auto`` giving the same
numbers here, no ``.numpy()`` on a tensor that may be on the device, OpenMM's ``--platform``, and one step of the
paper rung."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from iclr25.bopito import ModelConfig, ScoreModel, sample, sample_chain, sample_equilibrium, train
from iclr25.bopito.cli import main
from iclr25.utils.device import check_device_conformance, torch_device
from iclr25.utils.optim import Adam
from iclr25.utils.testing import check_numpy_lint

META = torch.device("meta")
SRC = Path(__file__).parents[1] / "src" / "iclr25" / "bopito"
BIN = Path(sys.executable).parent


def _model(kind, device, n_models=2):
    small = {"n_diffusion": 10, "width": 8, "emb_dim": 4, "max_lag": 5, "n_models": n_models}
    prior = ScoreModel(ModelConfig(kind="bg", **small), device=device) if kind == "bopito" else None
    return ScoreModel(ModelConfig(kind=kind, lambda_hat=0.9 if kind == "bopito" else None, **small), prior=prior,
                      device=device)


def _data(n=4, frames=8):
    return np.random.default_rng(0).uniform(-1, 1, size=(n, frames, 1))


@pytest.mark.parametrize("kind", ["bg", "ito", "bopito"])
def test_eps_on_a_non_cpu_device(kind):
    def build(d):
        x, t = torch.zeros(2, 3, 1, device=d), torch.zeros(2, 3, dtype=torch.long, device=d)
        lag = torch.full((2, 3), 7.0, device=d)
        return _model(kind, d), (x, t) if kind == "bg" else (x, t, x, lag)

    out = check_device_conformance(build, lambda m, inp: m.eps(*inp))
    assert out.device == META and out.shape == (2, 3, 1)


@pytest.mark.parametrize("kind", ["bg", "bopito"])
def test_one_training_step_and_the_samplers_on_a_non_cpu_device(kind):
    res = check_device_conformance(lambda d: (_model(kind, d), _data()),
                                   lambda m, data: train(m, data, steps=1, batch_size=4, device=META))
    assert res.losses.shape == (1, 2) and res.model.device == META
    if kind == "bg":
        xs = check_device_conformance(lambda d: (_model(kind, d), None),
                                      lambda m, _: sample_equilibrium(m, 3, steps=2, device=META))
        assert xs.shape == (2, 3, 1)
        return
    for steps in (None, 3):  # ancestral and DDIM
        xs = check_device_conformance(lambda d: (_model(kind, d), None),
                                      lambda m, _, s=steps: sample(m, np.zeros(3), 20.0, steps=s, device=META))
        assert xs.shape == (2, 3, 1)
    ch = check_device_conformance(lambda d: (_model(kind, d), None),
                                  lambda m, _: sample_chain(m, np.zeros(3), 2, 2, steps=2, device=META))
    assert ch.shape == (2, 3, 3, 1)


def test_adam_state_lives_beside_the_parameters():
    # the shared Adam (iclr25.utils.optim, no torch._dynamo import) makes its moments with zeros_like: on the
    # parameters' device
    p = torch.nn.Parameter(torch.zeros(3, device=META))
    p.grad = torch.ones(3, device=META)
    opt = Adam([p], lr=1e-3)
    opt.step()
    _, m, v = opt.state[id(p)]
    assert m.device == v.device == META


def test_the_conformance_check_catches_noise_made_on_the_cpu():
    # 0.7's training drew its noise on the CPU: with the model on a device that is a mismatch
    def cpu_noise_step(model, x):
        t = torch.zeros(2, 3, dtype=torch.long, device=x.device)
        return model.eps(x + torch.randn(2, 3, 1), t)

    with pytest.raises(AssertionError, match="non-CPU device"):
        check_device_conformance(lambda d: (_model("bg", d), torch.zeros(2, 3, 1, device=d)), cpu_noise_step)


def test_device_cpu_and_auto_give_the_same_numbers_and_say_where(tmp_path, capsys):
    np.save(tmp_path / "d.npy", _data(6, 12)[..., 0])
    out = {}
    for device in ("cpu", "auto"):
        folder = tmp_path / device
        assert main(["train", str(tmp_path / "d.npy"), "--kind", "ito", "--steps", "3", "--batch-size", "16",
                     "--width", "8", "--depth", "1", "--n-diffusion", "10", "--device", device,
                     "--out", str(folder)]) == 0
        assert main(["sample", "--model", str(folder), "--lag", "5", "--n", "4", "--steps", "3", "--device", device,
                     "--out", str(tmp_path / f"{device}.npz")]) == 0
        res = (folder / "results.json").read_text(encoding="utf-8")
        out[device] = (res, np.load(tmp_path / f"{device}.npz")["x"])
    assert '"device": "cpu"' in out["cpu"][0]
    if torch_device("auto").type == "cpu":  # this machine: auto is the CPU, and must give the CPU's numbers
        assert '"device": "cpu"' in out["auto"][0]
        assert np.array_equal(out["cpu"][1], out["auto"][1]) and np.all(np.isfinite(out["cpu"][1]))
        loss = [re.search(r'"name": "final training loss",\s*"value": ([^,]+)', r).group(1) for r, _ in out.values()]
        assert loss[0] == loss[1]


def test_an_absent_device_or_platform_is_one_line_naming_the_flag(tmp_path, capsys):
    np.save(tmp_path / "d.npy", _data()[..., 0])
    if not torch.cuda.is_available():
        assert main(["train", str(tmp_path / "d.npy"), "--device", "cuda", "--out", str(tmp_path / "m")]) == 2
        err = capsys.readouterr().err.strip()
        assert "--device cuda" in err and len(err.splitlines()) == 1
        assert not (tmp_path / "m").exists()
    with pytest.raises(SystemExit) as exc:  # refused by argparse before any work
        main(["demo", "--device", "gpu", "--out", str(tmp_path / "demo")])
    assert exc.value.code == 2 and "argument --device" in capsys.readouterr().err
    openmm = pytest.importorskip("openmm")  # the extra md
    from iclr25.bopito.alanine import openmm_platform

    names = [openmm.Platform.getPlatform(i).getName() for i in range(openmm.Platform.getNumPlatforms())]
    assert openmm_platform("auto") == ("CUDA" if "CUDA" in names else "CPU")
    if "CUDA" not in names:
        assert main(["alanine-md", "--platform", "CUDA", "--out", str(tmp_path / "a.npz")]) == 2
        err = capsys.readouterr().err.strip()
        assert "--platform CUDA" in err and len(err.splitlines()) == 1 and not (tmp_path / "a.npz").exists()


def test_no_numpy_on_a_tensor_that_may_be_on_the_device():
    check_numpy_lint(SRC)  # a tensor reaches numpy only through .cpu()


def test_paper_rung_runs_one_step_on_the_cpu():
    # `iclr25 claims bopito --rung paper --smoke`: the paper configuration's code path, one Adam step per model
    env = {k: v for k, v in os.environ.items() if k not in ("ICLR25_DEVICE", "ICLR25_SMOKE")}
    proc = subprocess.run([str(BIN / "iclr25"), "claims", "bopito", "--rung", "paper", "--smoke", "--device", "cpu"],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "smoke run of bopito's rung 'paper': 3 claim(s)" in proc.stdout, proc.stdout
    est = subprocess.run([str(BIN / "iclr25"), "claims", "bopito", "--rung", "paper", "--estimate"],
                         capture_output=True, text=True, env=env, timeout=120, check=False)
    assert est.returncode == 0 and "GPU-hours per seed" in est.stdout, est.stdout + est.stderr
