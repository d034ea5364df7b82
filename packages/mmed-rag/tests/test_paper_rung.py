"""The paper rung (issue 59) on the CPU at one optimiser step: a tiny random LlavaForConditionalGeneration and a tiny
folder in the reference repo's data layout, given through the two environment variables, run end to end through
the rung's one code path (read, retrieve, standard RAG, RAG-PT with LoRA, MMed-RAG); the reader's one-line errors."""

import json
import math
import shutil

import pytest

from iclr25.mmed_rag import claims, paper
from iclr25.mmed_rag.claims import PAPER_BASE_ENV, PAPER_DATA_ENV, REGISTRY

CLAIM = "vqa-accuracy-beats-standard-rag"


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("paper")
    data = paper.write_tiny_paper_data(root / "data")
    return data, paper.write_tiny_llava(root / "base", data)


def test_paper_rung_one_step_on_the_cpu(folders, monkeypatch):
    data, base = folders
    monkeypatch.setenv(PAPER_DATA_ENV, str(data))
    monkeypatch.setenv(PAPER_BASE_ENV, str(base))
    monkeypatch.setenv("ICLR25_DEVICE", "cpu")
    monkeypatch.setenv("ICLR25_SMOKE", "1")  # --smoke: one optimiser step (the paper's settings otherwise)
    assert REGISTRY.claims_at("paper") == [CLAIM]
    m = claims._paper(0)[CLAIM]  # the registry's measurement at rung paper (not its cache: test_device runs it)
    e = m.extra
    assert math.isfinite(m.value) and math.isfinite(m.reference)
    assert m.value == e["acc_mmed_rag"] and m.reference == e["acc_standard_rag"]
    # every yes/no item of the three test sets read, the Harvard-style non-answer left out, every pair trained on
    assert e["vqa_items"] == 9 and e["vqa_skipped"] == 3 and e["pairs"] == 6 and e["pairs_cm"] == 3
    assert e["dpo_steps"] == 1 and abs(e["dpo_first_loss"] - math.log(2)) < 1e-4  # policy == reference at step 0
    assert {"acc_mmed_rag_iuxray", "acc_standard_rag_harvard", "acc_no_rag_quilt-1m"} <= set(e)
    assert 1 <= e["mean_k_gap"] <= 3 and 0 <= e["router_accuracy"] <= 1


def test_paper_config_is_the_papers():
    c = paper.PAPER
    assert (c.lora_r, c.lora_alpha, c.lr, c.projector_lr, c.epochs, c.batch_size, c.beta) == \
        (128, 256, 1e-7, 2e-5, 3, 1, 0.1)
    assert (c.retriever_lr, c.retriever_batch, c.retriever_epochs, c.max_steps, c.limit) == (1e-4, 512, 360, None, None)
    assert paper.SMOKE.max_steps == 1


def test_paper_rung_estimate_and_refusal_without_force(capsys, tmp_path, monkeypatch):
    from iclr25.utils import cli as ucli

    monkeypatch.setattr("iclr25.utils.device.accelerator_present", lambda: False)
    methods = [ucli.MethodEntry("mmed-rag", "iclr25-mmed-rag", "0", "", None)]
    assert ucli._cmd_claims(methods, "mmed-rag", "paper", None, None, None, mode="estimate") == 0
    assert "GPU-hours per seed" in capsys.readouterr().out
    assert ucli._cmd_claims(methods, "mmed-rag", "paper", None, tmp_path, None) == 2
    assert "--force" in capsys.readouterr().err and not list(tmp_path.iterdir())


def test_reader_errors_name_file_and_field(folders, tmp_path):
    data, _ = folders
    bad = tmp_path / "data"
    shutil.copytree(data, bad)
    f = bad / "training/alignment/radiology/radiology_vqa.json"
    rows = json.loads(f.read_text())
    rows[1]["rejected_noised"] = 2
    f.write_text(json.dumps(rows))
    with pytest.raises(paper.PaperDataError, match=r"radiology_vqa.json: item 1: field 'rejected_noised'"):
        paper.read_paper_data(bad)
    del rows[1]["rejected_noised"], rows[0]["conversations"][1]
    f.write_text(json.dumps(rows))
    with pytest.raises(paper.PaperDataError, match=r"item 0: field 'conversations' must be a list"):
        paper.read_paper_data(bad)
    shutil.copy(data / f.relative_to(bad), f)
    (bad / "images/radiology/study0/0.png").unlink()
    with pytest.raises(paper.PaperDataError, match=r"radiology_train.json: item 0: field 'image_path': image .* missing"):
        paper.read_paper_data(bad)
    shutil.copytree(data / "images", bad / "images", dirs_exist_ok=True)
    (bad / "test/vqa/other_test.jsonl").write_text("{}\n")
    with pytest.raises(paper.PaperDataError, match=r"other_test.jsonl: unknown dataset 'other'"):
        paper.read_paper_data(bad)
    (bad / "test/vqa/other_test.jsonl").unlink()
    (bad / "test/vqa/iuxray_test.jsonl").write_text('{"question": "q", "image": "study2/0.png"}\n')
    with pytest.raises(paper.PaperDataError, match=r"iuxray_test.jsonl: item 0: field 'answer'"):
        paper.read_paper_data(bad)
    (bad / "test/vqa/iuxray_test.jsonl").write_text("not json\n")
    with pytest.raises(paper.PaperDataError, match=r"iuxray_test.jsonl: line 1 is not JSON"):
        paper.read_paper_data(bad)
    shutil.rmtree(bad / "training/retriever")
    with pytest.raises(paper.PaperDataError, match=r"training/retriever: no such folder"):
        paper.read_paper_data(bad)
