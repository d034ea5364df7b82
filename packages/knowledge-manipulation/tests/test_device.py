"""Where knowledge-manipulation computes (issue 59): the rotary GPT's forward, one training step (packed batches
and the AdamW update), greedy generation and the CoT-prompt scoring with everything on a non-CPU device (torch's
meta stand-in); ``--device cpu`` and ``--device auto`` giving the same numbers here; an absent device as one line;
no ``.numpy()`` on a tensor that may be on the device; one step of the paper rung (its smoke run)."""

from pathlib import Path

import numpy as np
import pytest
import torch

from iclr25.knowledge_manipulation.biography import make_population
from iclr25.knowledge_manipulation.cli import main
from iclr25.knowledge_manipulation.experiments import build_tokenizer
from iclr25.knowledge_manipulation.model import GPTConfig, RotaryGPT
from iclr25.knowledge_manipulation.tasks import build_task
from iclr25.knowledge_manipulation.training import (
    Docs,
    TrainConfig,
    evaluate,
    evaluate_cot_prompt,
    pack,
    train_steps,
)
from iclr25.utils.device import check_device_conformance, torch_device
from iclr25.utils.results import RunResult

META = torch.device("meta")
SRC = Path(__file__).parents[1] / "src" / "iclr25" / "knowledge_manipulation"
CFG = GPTConfig(vocab_size=40, n_layers=1, d_model=16, n_heads=2, max_len=32)


def _rows(device):
    """Six toy documents packed into rows of 16 tokens on ``device`` (None: the CPU)."""
    rng = np.random.default_rng(0)
    ids = [[int(x) for x in rng.integers(3, 40, size=n)] + [1] for n in (5, 9, 7, 4, 11, 6)]
    return pack(Docs(ids, [[0] + [1] * (len(d) - 1) for d in ids]), 16, rng=rng, device=device)


def _model_and_batches(device):
    return RotaryGPT(CFG, seed=0, device=device), _rows(device)


def test_forward_on_a_non_cpu_device():
    out = check_device_conformance(lambda d: (RotaryGPT(CFG, device=d), torch.zeros(2, 8, dtype=torch.long,
                                                                                       device=d)))
    assert out.device == META and out.shape == (2, 8, 40)
    b = _model_and_batches(META)[1]  # packed rows with per-document positions and masks
    out = check_device_conformance(lambda d: _model_and_batches(d), lambda m, b: m(b.ids, b.pos, b.doc))
    assert out.device == META and out.shape == (*b.ids.shape, 40)


def test_one_training_step_on_a_non_cpu_device():
    cfg = TrainConfig(epochs=1, batch_size=64, seq_len=16)  # every row in one mini-batch: one optimiser step
    stats = check_device_conformance(_model_and_batches, lambda m, b: train_steps(m, b, cfg, device=META))
    assert stats.steps == 1 and isinstance(stats.final_loss, float)


def test_generation_and_cot_prompt_scoring_on_a_non_cpu_device():
    pop = make_population(6, seed=0)
    tok = build_tokenizer(pop)
    cfg = GPTConfig(vocab_size=tok.vocab_size, n_layers=1, d_model=16, n_heads=2, max_len=64)

    def build(d):
        return RotaryGPT(cfg, device=d), None

    qas = build_task(pop, "retrieval:birth_city", people="test")
    res = check_device_conformance(build, lambda m, _: evaluate(m, tok, qas))
    assert res.n == len(qas) and 0.0 <= res.accuracy <= 1.0
    cot = build_task(pop, "classification:birth_month:mod2:cot", people="test")
    res = check_device_conformance(build, lambda m, _: evaluate_cot_prompt(m, tok, cot))
    assert res.n == len(cot)


def test_the_conformance_check_catches_batches_left_on_the_cpu():
    # 0.7's training loop (rows packed on the CPU and never moved, model on the device) is what the check rejects
    def cpu_rows_step(model, batches):
        cpu = _rows(None)
        return model(cpu.ids, cpu.pos, cpu.doc)

    with pytest.raises(AssertionError, match="non-CPU device"):
        check_device_conformance(_model_and_batches, cpu_rows_step)


def test_device_cpu_and_auto_give_the_same_numbers_and_say_where(tmp_path):
    runs = {}
    for device in ("cpu", "auto"):
        out = tmp_path / device
        assert main(["train", "--n", "10", "--epochs", "2", "--layers", "1", "--d-model", "16", "--heads", "2",
                     "--batch-size", "4", "--device", device, "--out", str(out)]) == 0
        runs[device] = RunResult.load(out / "results.json")
    assert runs["cpu"].machine["device"] == "cpu"
    if torch_device("auto").type == "cpu":  # this machine: auto is the CPU, and must give the CPU's numbers
        assert runs["auto"].machine["device"] == "cpu"
        values = {d: {m.name: m.value for m in r.metrics if not m.timing} for d, r in runs.items()}
        assert values["cpu"] == values["auto"] and all(np.isfinite(v) for v in values["cpu"].values())
        a, b = (torch.load(tmp_path / d / "model.pt", weights_only=True)["state_dict"] for d in ("cpu", "auto"))
        assert all(torch.equal(a[k], b[k]) for k in a)


def test_an_absent_device_is_one_line_naming_the_flag(tmp_path, capsys):
    if not torch.cuda.is_available():
        assert main(["train", "--n", "10", "--device", "cuda", "--out", str(tmp_path / "run")]) == 2
        err = capsys.readouterr().err.strip()
        assert "--device cuda" in err and len(err.splitlines()) == 1
        assert not (tmp_path / "run").exists() or not any((tmp_path / "run").iterdir())
    with pytest.raises(SystemExit) as exc:  # refused by argparse before any work
        main(["demo", "--device", "gpu", "--out", str(tmp_path / "demo")])
    assert exc.value.code == 2 and "argument --device" in capsys.readouterr().err


def test_no_numpy_on_a_tensor_that_may_be_on_the_device():
    from iclr25.utils.testing import check_numpy_lint

    check_numpy_lint(SRC)  # a tensor reaches numpy only through .cpu()


def test_paper_rung_smoke_runs_one_step_on_the_cpu(monkeypatch):
    # `iclr25 claims knowledge-manipulation --rung paper --smoke`: the paper configuration's code path (12 heads,
    # context 512) at a toy size, one optimiser step per stage; `--estimate` prints its cost
    from iclr25.knowledge_manipulation.claims import REGISTRY, paper_config
    from iclr25.utils.testing import check_paper_rung

    monkeypatch.setenv("ICLR25_DEVICE", "cpu")
    values = check_paper_rung(REGISTRY)
    assert set(values) == {"knowledge-extractable", "inverse-search-fails", "inverse-search-fits-train",
                           "cot-beats-no-cot", "cot-at-inference-only-does-not-help"}
    cfg = paper_config()
    assert (cfg.n_people, cfg.n_layers, cfg.d_model, cfg.n_heads, cfg.pretrain.seq_len, cfg.pretrain.epochs) == (
        100_000, 12, 768, 12, 512, 100)
    assert GPTConfig(vocab_size=1218, n_layers=12, d_model=768, n_heads=12).non_embedding_params == 85_019_136
    est = REGISTRY.costs["paper"].explain("paper", 3)
    assert "about 5 GPU-hours per seed" in est and "one 80 GB GPU" in est


def test_a_gpu_run_is_not_refused_by_the_cpu_time_estimate(tmp_path, capsys, monkeypatch):
    # issue 59: --device cuda needed --force for a paper-size run, judged by the CPU-time estimate; now only its
    # memory is checked (here no GPU is visible, so the run then stops naming --device, before any work)
    big = ["train", "--n", "1000", "--epochs", "1000", "--layers", "6", "--d-model", "512", "--out", str(tmp_path / "m")]
    assert main([*big, "--device", "cpu"]) == 2
    assert "would take about" in capsys.readouterr().err
    if not torch.cuda.is_available():
        assert main([*big, "--device", "cuda"]) == 2
        err = capsys.readouterr().err
        assert "would take about" not in err and "--device cuda" in err
    assert not (tmp_path / "m").exists()

