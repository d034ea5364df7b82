"""Where llm-regret computes (issue 59): the regret-loss models' forward, one training step and the trained agent
with everything on a non-CPU device (torch's meta stand-in); the Hugging Face adapter's --device, --dtype and
--device-map; ``--device cpu`` and ``--device auto`` giving the same numbers here; no ``.numpy()`` on a tensor that
may be on the device; one step of the paper rung."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from iclr25.llm_regret.claims import REGISTRY
from iclr25.llm_regret.cli import main
from iclr25.llm_regret.regret_loss import (
    RegretLossConfig,
    make_lsa,
    make_transformer,
    sample_training_losses,
    train_regret_loss,
)
from iclr25.utils.device import check_device_conformance, torch_device
from iclr25.utils.testing import check_numpy_lint, check_paper_rung

META = torch.device("meta")
SRC = Path(__file__).parents[1] / "src" / "iclr25" / "llm_regret"


@pytest.mark.parametrize("make", [make_lsa, lambda d, device: make_transformer(d, max_T=8, device=device)])
def test_forward_on_a_non_cpu_device(make):
    out = check_device_conformance(lambda dev: (make(3, device=dev), torch.zeros(4, 6, 3, dtype=torch.float64,
                                                                                  device=dev)))
    assert out.device == META and out.shape == (4, 6, 3)


@pytest.mark.parametrize(("model", "head"), [("lsa", "ball"), ("transformer", "simplex")])
def test_one_training_step_and_the_agent_on_a_non_cpu_device(model, head):
    def step(_, device):
        res = train_regret_loss(d=2, T=5, steps=1, batch=4, N=2, k=1.0, model=model, head=head,
                                distribution="uniform_box" if head == "simplex" else "gaussian", device=device)
        agent = res.agent()
        agent.reset(2, 5, 3, None)
        agent.update(np.full((3, 2), 0.5))
        return res, agent.policy()

    res, policy = check_device_conformance(lambda d: (torch.nn.Module(), d), step)
    assert next(res.model.parameters()).device == META and res.losses.shape == (1,)
    assert isinstance(policy, np.ndarray) and policy.shape == (3, 2)  # the policy comes back to the CPU


def test_the_conformance_check_catches_data_left_on_the_cpu():
    # 0.5 drew the training losses from a CPU generator beside the model (its transformer's causal mask too)
    def cpu_data_step(model, _):
        return model(sample_training_losses(RegretLossConfig(T=5), 4, torch.Generator()))

    with pytest.raises(AssertionError, match="non-CPU device"):
        check_device_conformance(lambda d: (make_lsa(2, device=d), None), cpu_data_step)


def test_hugging_face_model_device_and_dtype(tiny_hf_model, tmp_path, capsys):
    from iclr25.llm_regret import HFCausalLM

    hf = HFCausalLM(tiny_hf_model, max_new_tokens=2, device="cpu", dtype="float32")  # loaded with dtype=float32
    assert next(hf.model.parameters()).dtype == torch.float32 and hf.input_device.type == "cpu"
    assert isinstance(hf("Round 1 : action 1 = 0.5"), str)
    with pytest.raises(ValueError, match="--dtype bfloat16 is for accelerators"):  # half precision on a CPU
        HFCausalLM(tiny_hf_model, device="cpu", dtype="bfloat16")
    with pytest.raises(ValueError, match="--device-map must be one of auto"):
        HFCausalLM(tiny_hf_model, device_map="balanced")
    # the command line: the run record says where the model ran
    assert main(["run", "--agent", "llm", "--hf-path", str(tiny_hf_model), "--T", "3", "--max-tokens", "2",
                 "--on-parse-failure", "uniform", "--device", "cpu", "--dtype", "float32", "--out",
                 str(tmp_path / "run")]) == 0
    assert json.loads((tmp_path / "run" / "results.json").read_text())["machine"]["device"] == "cpu"


def test_device_map_without_accelerate_is_one_line(tiny_hf_model, monkeypatch, tmp_path, capsys):
    import importlib.util  # accelerate as if not installed

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "accelerate" else real(name, *a))
    argv = ["run", "--agent", "llm", "--hf-path", str(tiny_hf_model), "--T", "3", "--max-tokens", "2"]
    assert main([*argv, "--device-map", "auto"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--device-map auto needs accelerate" in err and len(err.splitlines()) == 1
    assert main(["run", "--agent", "hedge", "--dtype", "float32"]) == 2  # an option of --agent llm only
    assert "--dtype: is an option of --agent llm only" in capsys.readouterr().err
    assert main(["run", "--agent", "llm", "--replay", str(tmp_path / "t.jsonl"), "--dtype", "float16"]) == 2
    assert "--dtype is for --hf-path" in capsys.readouterr().err


def test_device_cpu_and_auto_give_the_same_numbers_and_say_where(tmp_path, capsys):
    runs = {}
    for device in ("cpu", "auto"):
        out = tmp_path / device
        assert main(["train-regret-loss", "--steps", "5", "--device", device, "--out", str(out)]) == 0
        runs[device] = json.loads((out / "results.json").read_text())
    assert runs["cpu"]["machine"]["device"] == "cpu"
    if torch_device("auto").type == "cpu":  # this machine: auto is the CPU, and must give the CPU's numbers
        values = {d: {m["name"]: m["value"] for m in r["metrics"] if not m.get("timing")} for d, r in runs.items()}
        assert values["cpu"] == values["auto"] and all(np.isfinite(v) for v in values["cpu"].values())


def test_an_absent_device_is_one_line_naming_the_flag(tmp_path, capsys, tiny_hf_model):
    if not torch.cuda.is_available():
        for argv in (["train-regret-loss", "--steps", "2", "--out", str(tmp_path / "t")],
                     ["run", "--agent", "llm", "--hf-path", str(tiny_hf_model), "--T", "3"]):
            assert main([*argv, "--device", "cuda"]) == 2
            err = capsys.readouterr().err.strip()
            assert "--device cuda" in err and len(err.splitlines()) == 1
    with pytest.raises(SystemExit) as exc:  # refused by argparse before any work
        main(["demo", "--device", "gpu", "--out", str(tmp_path / "demo")])
    assert exc.value.code == 2 and "argument --device" in capsys.readouterr().err


def test_no_numpy_on_a_tensor_that_may_be_on_the_device():
    check_numpy_lint(SRC)  # a tensor reaches numpy only through .cpu()


def test_paper_rung_runs_one_step_on_the_cpu(monkeypatch):
    # as `iclr25 claims llm-regret --rung paper --smoke`: one Adam step of each of the rung's models, every claim
    # finite; the rung's cost is what --estimate prints
    monkeypatch.delenv("ICLR25_DEVICE", raising=False)
    values = check_paper_rung(REGISTRY)
    assert len(values) == len(REGISTRY.claims_at("paper")) == 9
    assert "GPU-hours per seed" in REGISTRY.costs["paper"].explain("paper", 20)
