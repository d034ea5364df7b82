"""Where rxnflow computes (issue 59): the policy's forward, one TB step, sampling and the exact log-probabilities
with the model on a non-CPU device (torch's meta stand-in), ``--device cpu`` and ``--device auto`` giving the same
numbers here, no ``.numpy()`` on a tensor that may be on the device, and one step of the paper rung."""

from pathlib import Path

import numpy as np
import pytest
import torch

from iclr25.rxnflow import RxnFlow, toy_blocks, toy_space
from iclr25.rxnflow.cli import main
from iclr25.rxnflow.gflownet import TrainConfig, train
from iclr25.utils.device import check_device_conformance, torch_device
from iclr25.utils.results import RunResult
from iclr25.utils.testing import check_numpy_lint

META = torch.device("meta")
SRC = Path(__file__).parents[1] / "src" / "iclr25" / "rxnflow"


@pytest.fixture(scope="module")
def space():
    return toy_space(4, 6, n_other=2, seed=0)


def _build(space):
    def build(device):
        model = RxnFlow(space, "qed", beta=4.0, hidden=8, device=device)
        return model.policy, model
    return build


def test_policy_forward_a_tb_step_sampling_and_exact_log_probs_on_a_non_cpu_device(space):
    def forward(pol, model):
        cond = pol.cond(torch.full((3,), 4.0, device=META))
        h = pol.encode(torch.zeros(3, 2056, device=META), torch.ones(3, dtype=torch.long, device=META), cond)
        return pol.bi_queries(h), pol.first_logits(h, pol.embed_blocks(model.block_inputs(np.arange(5))))

    q, first = check_device_conformance(_build(space), forward)
    assert q.device == META and first.shape == (3, 5)
    res = check_device_conformance(_build(space), lambda pol, m: train(
        m, TrainConfig(steps=1, batch_size=4, rho=0.5, min_sampling=2), show_progress=False))
    assert res.losses.shape == (1,) and res.model.device == META
    assert next(res.model.policy.parameters()).device == META
    samples, lp_first, (stop, _, bi) = check_device_conformance(_build(space), lambda pol, m: (
        m.sample(3, seed=0), m.first_block_log_probs(), m.full_log_probs(space.blocks.smiles[:3], 1)))
    assert len(samples) == 3 and lp_first.shape == (space.n_blocks,) and stop.shape == (3,)  # numpy, on the CPU


def test_the_conformance_check_catches_tensors_left_on_the_cpu(space, monkeypatch):
    # 0.4 made its index tensors and masks on the CPU whatever the policy's device (model.py:89's mismatch)
    monkeypatch.setattr(RxnFlow, "_t", lambda self, a: torch.from_numpy(a))
    with pytest.raises(AssertionError, match="non-CPU device"):
        check_device_conformance(_build(space), lambda pol, m: m.full_log_probs(space.blocks.smiles[:2], 1))


def test_device_cpu_and_auto_give_the_same_numbers_and_say_where(tmp_path, capsys):
    toy_blocks(3, 4, seed=0).save(tmp_path / "b.smi")
    runs = {}
    for device in ("cpu", "auto"):
        out = tmp_path / device
        assert main(["train", "--blocks", str(tmp_path / "b.smi"), "--templates", "toy", "--steps", "3",
                     "--batch-size", "4", "--rho", "0.5", "--min-sampling", "2", "--device", device,
                     "--out", str(out)]) == 0
        runs[device] = RunResult.load(out / "results.json")
    assert runs["cpu"].machine["device"] == "cpu"
    if torch_device("auto").type == "cpu":  # this machine: auto is the CPU, and must give the CPU's numbers
        assert runs["auto"].machine["device"] == "cpu"
        values = {d: {m.name: m.value for m in r.metrics if not m.timing} for d, r in runs.items()}
        assert values["cpu"] == values["auto"] and all(np.isfinite(v) for v in values["cpu"].values())
        a, b = (torch.load(tmp_path / d / "model.pt", weights_only=True)["state_dict"] for d in ("cpu", "auto"))
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_an_absent_device_is_one_line_naming_the_flag(tmp_path, capsys):
    if not torch.cuda.is_available():
        assert main(["train", "--templates", "toy", "--device", "cuda", "--out", str(tmp_path / "m")]) == 2
        err = capsys.readouterr().err.strip()
        assert "--device cuda" in err and len(err.splitlines()) == 1
        assert not (tmp_path / "m").exists()
    with pytest.raises(SystemExit) as exc:  # refused by argparse before any work
        main(["demo", "--device", "gpu", "--out", str(tmp_path / "demo")])
    assert exc.value.code == 2 and "argument --device" in capsys.readouterr().err


def test_no_numpy_on_a_tensor_that_may_be_on_the_device():
    check_numpy_lint(SRC)  # a tensor reaches numpy only through .cpu()


def test_paper_rung_runs_one_step_on_the_cpu(tmp_path, monkeypatch, capsys):
    # `iclr25 claims rxnflow --rung paper --smoke` in this process (the claims command sets $ICLR25_SMOKE and
    # $ICLR25_DEVICE; monkeypatch restores both): the paper configuration's code path, one TB step, on a small
    # library of the user's kind (a .smi file) and a small synthetic library for the step cost
    from iclr25.rxnflow.claims import BLOCKS_ENV, TEMPLATES_ENV
    from iclr25.utils.cli import main as iclr25

    toy_blocks(3, 5, seed=0).save(tmp_path / "blocks.smi")
    for k in ("ICLR25_SMOKE", "ICLR25_DEVICE"):
        monkeypatch.setenv(k, "")
    monkeypatch.delenv(BLOCKS_ENV, raising=False)
    monkeypatch.setenv(TEMPLATES_ENV, "toy")
    assert iclr25(["claims", "rxnflow", "--rung", "paper", "--smoke", "--device", "cpu"]) == 2
    assert BLOCKS_ENV in capsys.readouterr().err  # the missing data, named in one line
    monkeypatch.setenv(BLOCKS_ENV, str(tmp_path / "blocks.smi"))
    assert iclr25(["claims", "rxnflow", "--rung", "paper", "--smoke", "--device", "cpu"]) == 0
    assert "smoke run of rxnflow's rung 'paper': 2 claim(s)" in capsys.readouterr().out
    assert iclr25(["claims", "rxnflow", "--rung", "paper", "--estimate"]) == 0
    assert "GPU-hours per seed" in capsys.readouterr().out
