"""The paper rung (issue 59) end to end on the CPU: TEOChatlas's on-disk layout, written here by hand in exactly
the released format, a tiny random LLaVA written here from a config (never downloaded), the paper's LoRA
configuration for one optimiser step, and both claims' Measurements; the reader's one-line errors."""

import json

import numpy as np
import pytest

pytest.importorskip("transformers")  # the hf extra; the isolated test env installs every extra
pytest.importorskip("peft")

from iclr25.teochat.claims import PAPER_BASE_ENV, PAPER_DATA_ENV, REGISTRY  # noqa: E402
from iclr25.teochat.teochatlas import frame_prompt, iter_records, read_records  # noqa: E402

Q_RTQA = ("<video>\nThis is a sequence of high resolution, optical satellite images captured at different "
          "times: What is the development status of the region [12, 30, 45, 70] in each image?")
Q_TRE = "<video>\nThis is a sequence of satellite images captured at different times: In which images was " \
        "construction finished in [10, 10, 50, 50]?"
Q_CD = "<video>\nThese are two satellite images captured at different times: Has the area changed?"


def _png(path, rng, size=40):
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8)).save(path)


def _turns(q, a):
    return [{"from": "human", "value": q}, {"from": "gpt", "value": a}]


@pytest.fixture(scope="module")
def teochatlas(tmp_path_factory):
    """train/instruct.json (Video-LLaVA records with per-frame metadata timestamps, stored out of date order,
    and a GeoChat single-image record), eval/QFabric_TRE_RTQA.json (RTQA and TRE records), eval/ABCD.json and
    eval/CDVQA.json (bitemporal, per-record timestamp lists); frames as PNG files beside them."""
    root = tmp_path_factory.mktemp("TEOChatlas")
    rng = np.random.default_rng(0)
    frames = {}
    for split, n in (("train", 10), ("eval", 14)):
        for k in range(n):
            rel = f"TEOChatlas_images/{split}_{k}.png"
            _png(root / split / rel, rng)
            frames[split, k] = rel
    train = [
        {"id": "qfabric_rtqa_0", "video": [frames["train", 2], frames["train", 0], frames["train", 1]],
         "metadata": [{"timestamp": "2019-05-01"}, {"timestamp": "2017-01-20"}, {"timestamp": "2018-03-02"}],
         "conversations": _turns(Q_RTQA, "Image 1: prior construction, Image 2: greenland, Image 3: finished"),
         "task": "qfabric_rtqa"},
        {"id": "xbd_qa_1", "video": [frames["train", 3], frames["train", 4]],
         "metadata": [{"timestamp": "2018-10-09"}, {"timestamp": "2018-10-20"}],
         "conversations": _turns(Q_CD, "Yes") + _turns("Is any building destroyed?", "No"), "task": "xbd_qa"},
        {"id": "geochat_2", "image": frames["train", 5],
         "conversations": _turns("<image>\nClassify the image.", "Residential area"), "task": "geochat"},
        {"id": "s2looking_3", "video": [frames["train", 6], frames["train", 7]],
         "metadata": [{"timestamp": "2016-02-01"}, {"timestamp": "2019-02-01"}],
         "conversations": _turns(Q_CD, "No"), "task": "s2looking_qa"},
    ]
    rtqa = [
        {"id": "rtqa_0", "video": [frames["eval", 0], frames["eval", 1], frames["eval", 2]],
         "timestamp": ["2018-01-01", "2016-06-30", "2017-03-15"],
         "conversations": _turns(Q_RTQA, "Image 1: greenland, Image 2: prior construction, Image 3: finished"),
         "task": "qfabric_rtqa", "polygon": [[0, 0], [10, 0], [10, 10]]},
        {"id": "tre_1", "video": [frames["eval", 3], frames["eval", 4]], "timestamp": ["2016-01-01", "2017-01-01"],
         "conversations": _turns(Q_TRE, "Image 2"), "task": "qfabric_tre"},
        {"id": "rtqa_2", "video": [frames["eval", 5], frames["eval", 6]], "timestamp": ["2016-01-01", "2017-01-01"],
         "conversations": _turns(Q_RTQA, "Image 1: greenland, Image 2: finished"), "task": "qfabric_rtqa"},
    ]
    abcd = [{"id": "abcd_0", "video": [frames["eval", 7], frames["eval", 8]], "timestamp": ["2011-03-01", "2011-03-12"],
             "conversations": _turns(Q_CD, "Yes"), "task": "abcd"}]
    cdvqa = [{"id": "cdvqa_0", "video": [frames["eval", 9], frames["eval", 10]],
              "timestamp": ["2012-01-01", "2015-01-01"], "conversations": _turns(Q_CD, "No"), "task": "cdvqa"}]
    for rel, recs in (("train/instruct.json", train), ("eval/QFabric_TRE_RTQA.json", rtqa), ("eval/ABCD.json", abcd),
                      ("eval/CDVQA.json", cdvqa)):
        (root / rel).write_text(json.dumps(recs, indent=1))
    return root


@pytest.fixture(scope="module")
def tiny_llava(tmp_path_factory, teochatlas):
    """A random LlavaForConditionalGeneration (2-layer CLIP at 32 px, 16 tokens a frame; 2-layer Llama) with a
    word-level tokenizer built here over the data's words and the Vicuna template."""
    import torch

    from iclr25.teochat.finetune import VICUNA_SYSTEM
    from iclr25.utils.hf import tiny_llava as build

    text = VICUNA_SYSTEM + " USER: ASSISTANT: Image 1: 2: 3: Image: in chronological order:"
    for f in teochatlas.rglob("*.json"):
        for rec in json.loads(f.read_text()):
            text += " " + " ".join(t["value"] for t in rec["conversations"])
    words = ["[UNK]", "<s>", "</s>", *sorted(set(text.split()) - {"<image>", "<video>"}), "<image>"]
    fast, model = build(words, unk="[UNK]", bos="<s>", eos="</s>", pad="</s>", seed=0)
    with torch.no_grad():  # leaning to end its answers at once: the paper's 256 new tokens cost no seconds here
        model.get_input_embeddings().weight[:, 0] = 1.0  # every token's residual stream is positive in dim 0
        head = model.get_output_embeddings().weight
        head[2] = 0.0
        head[2, 0] = 1.0  # so the end token's logit (~5) beats the random rows (~0.1)
    path = tmp_path_factory.mktemp("tiny-llava-paper")
    model.save_pretrained(path)
    fast.save_pretrained(path)
    return path


def test_teochatlas_reader_reads_the_released_layout(teochatlas):
    train = read_records(teochatlas / "train/instruct.json", root=teochatlas)
    assert [r.id for r in train] == ["qfabric_rtqa_0", "xbd_qa_1", "geochat_2", "s2looking_3"]
    r0 = train[0]  # stored 2019, 2017, 2018: sorted by the metadata timestamps
    assert [p.name for p in r0.frames] == ["train_0.png", "train_1.png", "train_2.png"]
    assert all(p.is_file() for r in train for p in r.frames)
    assert r0.answer.startswith("Image 1: prior construction") and r0.task == "qfabric_rtqa"
    assert len(train[1].turns) == 2 and not train[2].temporal and len(train[2].frames) == 1
    assert [f.shape for f in r0.load_frames()] == [(40, 40, 3)] * 3 and len(r0.load_frames(last_only=True)) == 1
    rtqa = read_records(teochatlas / "eval/QFabric_TRE_RTQA.json", root=teochatlas, task="rtqa")
    assert [r.id for r in rtqa] == ["rtqa_0", "rtqa_2"] and "polygon" in rtqa[0].extra
    assert [p.name for p in rtqa[0].frames] == ["eval_1.png", "eval_2.png", "eval_0.png"]
    assert len(read_records(teochatlas / "train/instruct.json", limit=2)) == 2
    from iclr25.teochat.teochatlas import _iter_json_list  # streamed: the same records at any chunk boundary

    whole = json.loads((teochatlas / "train/instruct.json").read_text())
    assert all(list(_iter_json_list(teochatlas / "train/instruct.json", chunk=c)) == whole for c in (1, 7, 64))
    capped = next(iter_records(teochatlas / "train/instruct.json", max_frames=2))
    assert len(capped.frames) == 2  # an order-preserving subset, still sorted by date
    # the reference's interleave strategy and chronological prefix
    p = frame_prompt(Q_RTQA, 3)
    assert p.startswith("Image 1: <image>Image 2: <image>Image 3: <image>\n") and "times in chronological order:" in p
    assert frame_prompt("<image>\nClassify the image.", 1, temporal=False) == "Image: <image>\nClassify the image."
    assert frame_prompt(Q_CD, 1).startswith("Image 1: <image>\n")


def test_paper_rung_runs_one_optimiser_step_on_the_cpu(teochatlas, tiny_llava, monkeypatch):
    """`iclr25 claims teochat --rung paper --force` on the CPU: the paper's configuration (LoRA r 128 / alpha 256,
    lr 2e-5, 2 epochs, batch 1 x 8) on 4 records is one optimiser step; both claims measured."""
    import torch

    from iclr25.teochat.finetune import IGNORE_INDEX, PAPER_CONFIG, LlavaLoRA

    assert (PAPER_CONFIG.lora_r, PAPER_CONFIG.lora_alpha, PAPER_CONFIG.lr, PAPER_CONFIG.epochs,
            PAPER_CONFIG.batch_size * PAPER_CONFIG.grad_accum) == (128, 256, 2e-5, 2, 8)
    monkeypatch.setenv(PAPER_DATA_ENV, str(teochatlas))
    monkeypatch.setenv(PAPER_BASE_ENV, str(tiny_llava))
    monkeypatch.setenv("ICLR25_DEVICE", "cpu")
    monkeypatch.delenv("ICLR25_SMOKE", raising=False)
    m = REGISTRY.measure("rtqa-temporal-beats-last-frame", 0, "paper")
    z = REGISTRY.measure("zero-shot-rtqa-beats-last-frame", 0, "paper")
    assert m.extra["train_steps"] == 1 and np.isfinite(m.extra["train_first_loss"])
    assert m.extra["questions"] == 2 and z.extra["abcd_questions"] == 1 and z.extra["cdvqa_questions"] == 1
    for x in (m, z):
        assert 0 <= x.value <= 1 and 0 <= x.reference <= 1
    # the loss is on the answer tokens only; one step moves LoRA and the projector, never the frozen weights
    model = LlavaLoRA(tiny_llava, seed=0, device="cpu")
    rec = read_records(teochatlas / "train/instruct.json", root=teochatlas)[0]
    ids, labels = model.encode(rec)
    kept = [t for t in labels if t != IGNORE_INDEX]
    assert model.tokenizer.decode(kept, skip_special_tokens=True) == rec.answer
    assert ids.count(model.base.image_token_id) == 3 * 16 and labels[-1] == model.tokenizer.eos_token_id
    frozen = {n: p.detach().clone() for n, p in model.model.named_parameters() if not p.requires_grad}
    proj = [p.detach().clone() for p in model.projector_params]
    log = model.train(read_records(teochatlas / "train/instruct.json", root=teochatlas)[:1] * 4)
    assert log["steps"] == 1
    assert any(torch.count_nonzero(p) for n, p in model.model.named_parameters() if "lora_B" in n)
    assert any(not torch.equal(a, b) for a, b in zip(proj, model.projector_params, strict=True))
    assert all(torch.equal(frozen[n], p) for n, p in model.model.named_parameters() if n in frozen)
    assert not any("vision_tower" in n and "lora" in n for n, _ in model.model.named_parameters())


def test_paper_rung_refused_on_the_cpu_without_force(monkeypatch, capsys):
    from iclr25.utils import device as device_mod
    from iclr25.utils.cli import main

    monkeypatch.setattr(device_mod, "accelerator_present", lambda: False)
    assert main(["claims", "teochat", "--rung", "paper"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "GPU-hours" in err[0] and "--force" in err[0]


@pytest.mark.parametrize(("text", "match"), [
    ('{"id": 1}', "not a JSON list"),
    ('[{"id": "a", "video": ["x.png"], "conversations": [{"from": "human", "value": "q"}, '
     '{"from": "gpt", "value": "a"}]}, 3]', r"record 1: expected a JSON object"),
    ('[{"id": "a", "conversations": []}]', r"record 0 \(id a\): no field 'video'"),
    ('[{"id": "a", "video": [], "conversations": []}]', r"field 'video' must be a non-empty list"),
    ('[{"id": "a", "video": ["x.png"], "conversations": [{"from": "human", "value": "q"}]}]',
     "no human question followed by a gpt answer"),
    ('[{"id": "a", "video": ["x.png"], "conversations": [{"from": "bot", "value": "q"}]}]',
     r"field 'conversations'\[0\] must be"),
    ('[{"id": "a", "video": ["x.png", "y.png"], "timestamp": ["2020-01-01"], "conversations": '
     '[{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}]}]', "field 'timestamp' must list one date"),
    ('[{"id": "a", "video": ["x.png"], "metadata": [{"timestamp": "01/02/2020"}], "conversations": '
     '[{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}]}]', "is not a date like"),
    ('[{"id": "a", "video": ["x.png"], "conversations": [{"from": "human", "value": "q"}, '
     '{"from": "gpt", "value": "a"}]}', "truncated JSON list"),
])
def test_malformed_teochatlas_files_are_one_line_errors_naming_file_and_field(tmp_path, text, match):
    f = tmp_path / "instruct.json"
    f.write_text(text)
    with pytest.raises(ValueError, match=match) as info:
        read_records(f)
    assert str(f) in str(info.value) and "\n" not in str(info.value)


def test_missing_frames_and_eval_sets_are_one_line_errors(tmp_path, teochatlas):
    from iclr25.teochat.finetune import run_paper

    f = tmp_path / "one.json"
    f.write_text('[{"id": "a", "video": ["missing.png"], "conversations": [{"from": "human", "value": "q"}, '
                 '{"from": "gpt", "value": "a"}]}]')
    (rec,) = read_records(f)
    with pytest.raises(FileNotFoundError, match="record a: frame .*missing.png not found"):
        rec.load_frames()
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_records(tmp_path / "nope.json")
    bad = tmp_path / "data"
    (bad / "eval").mkdir(parents=True)
    (bad / "eval/QFabric_TRE_RTQA.json").write_text((teochatlas / "eval/ABCD.json").read_text())
    with pytest.raises(ValueError, match=r"QFabric_TRE_RTQA.json: no record whose field 'task' contains 'rtqa'"):
        run_paper(bad, tmp_path)  # checked before any model loads
