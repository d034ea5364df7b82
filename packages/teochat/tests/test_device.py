"""Where teochat computes (issue 59): the tiny TEOChat's forward, one training step, greedy generation and the
specialist with everything on a non-CPU device (torch's meta stand-in), ``--device cpu`` and ``--device auto``
giving the same numbers here, an absent device in one line, no ``.numpy()`` on a tensor that may be on the
device, the HF adapter's ``--dtype``/``--device-map`` checks, and one step of the paper rung."""

import functools
from pathlib import Path

import pytest
import torch

from iclr25.teochat import Vocabulary, generate_sequences, make_examples
from iclr25.teochat.assistant import Assistant, TrainConfig, train_assistant
from iclr25.teochat.claims import PAPER_BASE_ENV, PAPER_DATA_ENV, REGISTRY, check_paper_data
from iclr25.teochat.cli import main
from iclr25.teochat.model import ModelConfig, TinyTEOChat
from iclr25.teochat.specialist import train_specialist
from iclr25.utils.device import check_device_conformance, torch_device
from iclr25.utils.results import RunResult
from iclr25.utils.testing import check_numpy_lint, check_paper_rung

META = torch.device("meta")
SRC = Path(__file__).parents[1] / "src" / "iclr25" / "teochat"
VOCAB = Vocabulary()
CFG = ModelConfig(vocab_size=len(VOCAB), d_model=16, n_layers=1, n_heads=2, enc_channels=8)


@pytest.fixture(scope="module")
def data():
    seqs = generate_sequences(4, seed=0)
    return seqs, make_examples(seqs, seed=0, tasks=["rtqa", "loc"])


def _model(device):
    return TinyTEOChat(CFG, VOCAB.image, VOCAB.number_span).to(device)


def test_forward_training_step_generation_and_specialist_on_a_non_cpu_device(data, monkeypatch):
    # the answer-only loss indexes with a boolean mask: check_device_conformance lets meta assume it full
    seqs, ex = data
    n_tok = CFG.tokens_per_frame
    ids = torch.tensor([[VOCAB.bos] + [VOCAB.image] * n_tok + [VOCAB.eos]])

    def build(d):
        return _model(d), (ids.to(d), torch.ones_like(ids, dtype=torch.bool, device=d),
                           torch.zeros(1, 3, 32, 32, device=d))

    out = check_device_conformance(build)
    assert out.device == META and out.shape == (1, n_tok + 2, len(VOCAB))
    cfg = TrainConfig(steps=1, batch_size=2)
    asst = check_device_conformance(build, lambda m, x: train_assistant(seqs, ex, config=cfg, model_config=CFG,
                                                                        device=META))
    assert next(asst.model.parameters()).device == META and len(asst.history) == 1
    # greedy decoding never stops on meta (no answer is read): 3 new tokens instead of 26 keep the check cheap
    monkeypatch.setattr(TinyTEOChat, "generate", functools.partialmethod(TinyTEOChat.generate, max_new_tokens=3))
    answers = check_device_conformance(build, lambda m, x: Assistant(m, VOCAB, cfg, device=META).predict(ex[:2], seqs))
    assert len(answers) == 2 and all(isinstance(a, str) for a in answers)  # decoded on the CPU
    spec = check_device_conformance(build, lambda m, x: train_specialist(seqs, steps=1, batch_size=2, width=4,
                                                                         device=META))
    assert next(spec.model.parameters()).device == META
    assert len(check_device_conformance(build, lambda m, x: spec.predict_boxes(seqs[:2]))) == 2


def test_the_conformance_check_catches_a_batch_left_on_the_cpu():
    # 0.x's training loop (the batch made on the CPU, the model on the device) is what the check must reject
    ids = torch.tensor([[VOCAB.bos, VOCAB.eos]])
    with pytest.raises(AssertionError, match="non-CPU device"):
        check_device_conformance(lambda d: (_model(d), None),
                                 lambda m, _: m(ids, torch.ones_like(ids, dtype=torch.bool), torch.zeros(0, 3, 32, 32)))


def test_device_cpu_and_auto_give_the_same_numbers_and_say_where(tmp_path, capsys):
    assert main(["generate", "--n", "6", "--out", str(tmp_path / "d")]) == 0
    runs = {}
    for device in ("cpu", "auto"):
        assert main(["train", "--data", str(tmp_path / "d" / "sequences.npz"), "--steps", "2", "--batch-size", "2",
                     "--d-model", "16", "--test-fraction", "0.3", "--device", device, "--out",
                     str(tmp_path / device)]) == 0
        runs[device] = RunResult.load(tmp_path / device / "results.json")
    assert runs["cpu"].machine["device"] == "cpu"
    if torch_device("auto").type == "cpu":  # this machine: auto is the CPU and must give the CPU's numbers
        assert runs["auto"].machine["device"] == "cpu"
        values = {d: {m.name: m.value for m in r.metrics if not m.timing} for d, r in runs.items()}
        assert values["cpu"] == values["auto"] and values["cpu"]


def test_an_absent_device_is_one_line_naming_the_flag(tmp_path, capsys):
    if not torch.cuda.is_available():
        assert main(["repro", "--seeds", "0", "--device", "cuda", "--out", str(tmp_path / "r")]) == 2
        err = capsys.readouterr().err.strip()
        assert "--device cuda" in err and len(err.splitlines()) == 1
    with pytest.raises(SystemExit) as exc:  # refused by argparse before any work
        main(["demo", "--device", "gpu", "--out", str(tmp_path / "demo")])
    assert exc.value.code == 2 and "argument --device" in capsys.readouterr().err


def test_hf_dtype_and_device_map_are_checked_in_one_line(tmp_path, capsys, monkeypatch):
    from iclr25.teochat import hf

    folder = tmp_path / "llava"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llava", "vision_config": {}}')
    with pytest.raises(ValueError, match="--dtype bfloat16 is for accelerators"):
        hf.HFLlavaAssistant(folder, device="cpu", dtype="bfloat16")
    monkeypatch.setattr(hf.importlib.util if hasattr(hf, "importlib") else __import__("importlib").util,
                        "find_spec", lambda name, *a: None)
    with pytest.raises(ImportError, match="--device-map auto needs accelerate"):
        hf.HFLlavaAssistant(folder, device="cpu", device_map="auto")
    assert main(["chat", "--sequence", str(tmp_path), "--question", "q", "--model", str(tmp_path / "m.pt"),
                 "--dtype", "float16"]) == 2
    assert "--dtype and --device-map are for --hf-model" in capsys.readouterr().err


def test_no_numpy_on_a_tensor_that_may_be_on_the_device():
    check_numpy_lint(SRC)  # a tensor reaches numpy only through .cpu()


def test_paper_rung_smoke_and_its_data_in_one_line(monkeypatch, tmp_path):
    # `iclr25 claims teochat --rung paper --smoke`: the rung's code path (the LoRA fine-tune of a LLaVA folder on
    # TEOChatlas-format files, tests/test_paper_rung.py) on a tiny random LLaVA, one optimiser step
    pytest.importorskip("transformers")
    pytest.importorskip("peft")
    monkeypatch.setenv("ICLR25_DEVICE", "cpu")
    values = check_paper_rung(REGISTRY)
    assert set(values) == {"rtqa-temporal-beats-last-frame", "zero-shot-rtqa-beats-last-frame"}
    assert "GPU-hours per seed" in REGISTRY.costs["paper"].explain("paper", 3)
    monkeypatch.delenv(PAPER_DATA_ENV, raising=False)
    with pytest.raises(FileNotFoundError, match=f"\\${PAPER_DATA_ENV}: not set"):
        check_paper_data()
    monkeypatch.setenv(PAPER_DATA_ENV, str(SRC))
    monkeypatch.setenv(PAPER_BASE_ENV, str(tmp_path / "absent"))
    with pytest.raises(FileNotFoundError, match=f"\\${PAPER_BASE_ENV}: .*absent is not a folder"):
        check_paper_data()
    monkeypatch.setenv(PAPER_BASE_ENV, str(tmp_path))
    assert check_paper_data() == (str(SRC), str(tmp_path))
