"""Where mmed-rag computes (issue 59): the tiny VLM's forward, one SFT step and one DPO step with everything on a
non-CPU device (torch's meta stand-in), ``--device cpu`` and ``--device auto`` giving the same numbers here, an
absent device in one line, the HF adapter's ``--dtype``/``--device-map`` checks, no ``.numpy()`` on a tensor that
may be on the device, and one step of the paper rung (``--smoke``)."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from iclr25.mmed_rag import Examples, TinyVLM, Vocab, generate
from iclr25.mmed_rag.claims import PAPER_BASE_ENV, PAPER_DATA_ENV, REGISTRY, check_paper_data
from iclr25.mmed_rag.cli import main
from iclr25.mmed_rag.preference import PreferencePairs, train_dpo, train_sft
from iclr25.mmed_rag.vlm import VLMConfig, encode_prompts
from iclr25.utils.device import check_device_conformance
from iclr25.utils.testing import check_numpy_lint, check_paper_rung

META = torch.device("meta")
SRC = Path(__file__).parents[1] / "src" / "iclr25" / "mmed_rag"
CFG = VLMConfig(d=16, layers=1, heads=2, width=4, grid=2)


@pytest.fixture(scope="module")
def data():
    ds = generate(1, seed=0)  # 3 images, one per domain
    vocab = Vocab.build(list(ds.reports) + ["is there an opacity ? yes no"])
    ex = Examples(ds.images, [[r] for r in ds.reports], ["is there an opacity ?"] * 3, ["yes", "no", "yes"])
    return vocab, ex


def test_forward_sft_and_dpo_steps_on_a_non_cpu_device(data):
    vocab, ex = data
    pr = encode_prompts(vocab, ex.contexts, ex.questions, ex.answers)

    def build(d):
        return TinyVLM(vocab, CFG).to(d), (torch.as_tensor(ex.images, device=d), pr.ids.to(d))

    out = check_device_conformance(build)
    assert out.device == META and out.shape[:2] == (3, pr.ids.shape[1])
    m = check_device_conformance(build, lambda model, x: train_sft(model, ex, steps=1, batch_size=2, device=META))
    assert next(m.parameters()).device == META
    pairs = PreferencePairs(ex, Examples(ex.images, ex.contexts, ex.questions, ["no", "yes", "no"]),
                            np.array(["oa1"] * 3), {}, np.array(["vqa"] * 3))
    pol, _ = check_device_conformance(build, lambda model, x: train_dpo(model, pairs, steps=1, batch_size=2,
                                                                        device=META))
    assert next(pol.parameters()).device == META


def test_the_conformance_check_catches_images_left_on_the_cpu(data):
    vocab, ex = data
    pr = encode_prompts(vocab, ex.contexts, ex.questions)
    with pytest.raises(AssertionError, match="non-CPU device"):  # 0.9's train_sft: images made on the CPU
        check_device_conformance(lambda d: (TinyVLM(vocab, CFG).to(d), None),
                                 lambda m, _: m(torch.as_tensor(ex.images), pr.ids))


def test_device_cpu_and_auto_give_the_same_numbers_and_say_where(tmp_path):
    assert main(["generate", "--n-train", "3", "--n-db", "3", "--n-test", "3", "--out", str(tmp_path / "d")]) == 0
    assert main(["build-index", str(tmp_path / "d"), "--steps", "1", "--router-steps", "1", "--device", "cpu",
                 "--out", str(tmp_path / "i")]) == 0
    got = {}
    for device in ("cpu", "auto"):
        assert main(["evaluate", str(tmp_path / "d"), "--index", str(tmp_path / "i"), "--device", device,
                     "--out", str(tmp_path / f"e-{device}")]) == 0
        got[device] = json.loads((tmp_path / f"e-{device}" / "results.json").read_text())
    assert got["cpu"]["machine"]["device"] == "cpu"
    if not (torch.cuda.is_available() or torch.backends.mps.is_available()):  # auto is the CPU here
        assert got["auto"]["machine"]["device"] == "cpu"
        values = {d: {m["name"]: m["value"] for m in r["metrics"] if not m.get("timing")} for d, r in got.items()}
        assert values["cpu"] == values["auto"] and values["cpu"]


def test_an_absent_device_and_misplaced_dtype_are_one_line(tmp_path, capsys):
    if not torch.cuda.is_available():
        (tmp_path / "in").mkdir()
        assert main(["evaluate", str(tmp_path / "in"), "--index", str(tmp_path / "in"), "--device", "cuda",
                     "--out", str(tmp_path / "e")]) == 2
        err = capsys.readouterr().err.strip()
        assert "--device cuda" in err and len(err.splitlines()) == 1
    (tmp_path / "in").mkdir(exist_ok=True)
    assert main(["ask", str(tmp_path / "in"), "--index", str(tmp_path / "in"), "--endpoint", "http://127.0.0.1:9/v1", "--model",
                 "m", "--dtype", "bfloat16", "--out", str(tmp_path / "a")]) == 2
    assert "--dtype and --device-map are for --hf-path" in capsys.readouterr().err


def test_hf_device_map_needs_accelerate_in_one_line(tmp_path, monkeypatch):
    import importlib.util

    from iclr25.mmed_rag import hf

    folder = tmp_path / "llava"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llava", "vision_config": {}}')
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "accelerate" else real(name, *a))
    with pytest.raises(ImportError, match="--device-map auto needs accelerate"):
        hf.load_hf_vlm(folder, device="cpu", device_map="auto")
    with pytest.raises(ValueError, match="--dtype bfloat16"):
        hf.load_hf_vlm(folder, device="cpu", dtype="bfloat16")


def test_no_numpy_on_a_tensor_that_may_be_on_the_device():
    check_numpy_lint(SRC)  # a tensor reaches numpy only through .cpu()


def test_paper_rung_smoke_and_its_data_in_one_line(monkeypatch):
    # `iclr25 claims mmed-rag --rung paper --smoke`: the rung's code path, one optimiser step per model
    monkeypatch.setenv("ICLR25_DEVICE", "cpu")
    monkeypatch.delenv(PAPER_DATA_ENV, raising=False)
    monkeypatch.delenv(PAPER_BASE_ENV, raising=False)  # neither set: a tiny random LLaVA and tiny data (paper.py)
    values = check_paper_rung(REGISTRY)
    assert set(values) == {"vqa-accuracy-beats-standard-rag"}
    assert "GPU-hours per seed" in REGISTRY.costs["paper"].explain("paper", 3)
    with pytest.raises(FileNotFoundError, match=f"\\${PAPER_DATA_ENV}: not set"):
        check_paper_data()
    monkeypatch.setenv(PAPER_DATA_ENV, str(SRC))
    with pytest.raises(FileNotFoundError, match=f"\\${PAPER_BASE_ENV}: not set"):
        check_paper_data()
    monkeypatch.setenv(PAPER_BASE_ENV, str(SRC / "nope"))
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        check_paper_data()
    monkeypatch.setenv(PAPER_BASE_ENV, str(SRC))
    assert check_paper_data() == (SRC, SRC)
