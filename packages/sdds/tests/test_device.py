"""Where sdds computes (issue 59): ``--device`` maps to ``jax.default_device`` (``cpu`` and ``auto`` give the same
numbers here; an absent GPU is one line naming the flag, before any work), the Python API's ``device=``, and the
paper rung (its estimate, and one epoch of its Ising path)."""

import json

import jax
import numpy as np
import pytest

from iclr25.sdds import load_demo_sampler, on_device
from iclr25.sdds.checkpoint import DEMO_CHECKPOINT
from iclr25.sdds.claims import PAPER, REGISTRY
from iclr25.sdds.cli import main
from iclr25.utils.results import RunResult

NO_GPU = not any(d.platform == "gpu" for d in jax.devices())


def test_estimate_on_cpu_and_auto_gives_the_same_numbers_and_says_where(tmp_path, capsys):
    # 4096 draws: the shipped sampler's program at the test rung's size, which the suite's compilation cache holds
    runs = {}
    for device in ("cpu", "auto"):
        out = tmp_path / device
        assert main(["estimate", "--checkpoint", str(DEMO_CHECKPOINT), "--n-samples", "4096", "--device", device,
                     "--out", str(out)]) == 0
        runs[device] = RunResult.load(out / "results.json")
    capsys.readouterr()
    assert runs["cpu"].machine["device"].startswith("cpu")
    values = {d: {m.name: m.value for m in r.metrics if not m.timing} for d, r in runs.items()}
    assert all(np.isfinite(v) for v in values["cpu"].values() if v is not None)
    if jax.devices()[0].platform == "cpu":  # this machine: auto is the CPU, and must give the CPU's numbers
        assert values["cpu"] == values["auto"]


def test_an_absent_device_is_one_line_naming_the_flag_before_any_work(tmp_path, capsys):
    if NO_GPU:
        out = tmp_path / "est"
        assert main(["estimate", "--checkpoint", str(DEMO_CHECKPOINT), "--device", "cuda", "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip()
        assert "--device cuda" in err and "JAX sees no GPU" in err and len(err.splitlines()) == 1
        assert not out.exists()
        cfg = tmp_path / "c.json"
        cfg.write_text(json.dumps({"problem": {"kind": "ising", "L": 3}, "sampler": {"n_epochs": 1}}))
        assert main(["train", "--config", str(cfg), "--device", "cuda:0", "--out", str(tmp_path / "ck")]) == 2
        assert "--device cuda:0" in capsys.readouterr().err and not (tmp_path / "ck").exists()
    assert main(["demo", "--device", "mps", "--out", str(tmp_path / "d")]) == 2
    assert "JAX has no MPS backend" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # refused by argparse
        main(["repro", "--device", "gpu", "--out", str(tmp_path / "r")])
    assert exc.value.code == 2 and "argument --device" in capsys.readouterr().err


def test_python_api_device_and_nesting():
    cpu = jax.devices("cpu")[0]
    sampler = load_demo_sampler()
    # 4096 draws: the program of the test rung's size, which the claims' tests compiled (8 compiled a new one)
    a = sampler.sample(4096, seed=3)
    b = sampler.sample(4096, seed=3, device="cpu")
    c = sampler.sample(4096, seed=3, device=cpu)
    for f in ("x", "log_q", "log_aux"):
        assert isinstance(getattr(b, f), np.ndarray)
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
        np.testing.assert_array_equal(getattr(a, f), getattr(c, f))
    with on_device("cpu") as outer:  # device=None inside keeps the outer device
        with on_device() as inner:
            assert inner == outer == cpu
            assert jax.numpy.zeros(2).devices() == {cpu}
    if NO_GPU:
        with pytest.raises(ValueError, match="--device cuda"):
            sampler.sample(8, device="cuda")


def test_paper_rung_estimate_and_one_epoch_of_its_ising_path(monkeypatch):
    # the paper's configuration, and `iclr25 claims sdds --rung paper --smoke` for the Ising claim that the test
    # rung also decides (the full smoke run trains 7 samplers: ~75 s of CPU, outside the suite's budget)
    assert PAPER["ising_L"] == 24 and PAPER["ising_steps"] == 300 and PAPER["mis_steps"] == 6
    assert set(REGISTRY.claims_at("paper")) == {"sn-nis-beats-the-variational-bound",
                                                "neural-mcmc-corrects-the-sampler", "sdds-beats-diffuco-on-mis",
                                                "diffusion-beats-autoregressive-on-ising"}
    cost = REGISTRY.costs["paper"]
    assert cost.needs_accelerator and "GPU-hours per seed" in cost.explain("paper", 3)
    monkeypatch.setenv("ICLR25_SMOKE", "1")
    m = REGISTRY.measure("neural-mcmc-corrects-the-sampler", 0, "paper")
    assert np.isfinite(m.value) and 0 < m.extra["acceptance"] <= 1
