"""The Hugging Face path on a tiny LlavaForConditionalGeneration built from a config (never downloaded):
saved to a folder, loaded through the same code a user's model takes, scored with RAG prompts, one DPO step."""

import numpy as np
import pytest
import torch

from iclr25.mmed_rag import Vocab, generate
from iclr25.mmed_rag.hf import load_hf_vlm, rag_prompt
from iclr25.mmed_rag.text import words

CHAT = ("{% for m in messages %}user : {% if m['content'] is string %}{{ m['content'] }}{% else %}"
        "{% for c in m['content'] %}{% if c['type'] == 'image' %}<image> {% else %}{{ c['text'] }}{% endif %}"
        "{% endfor %}{% endif %}{% endfor %}{% if add_generation_prompt %} assistant :{% endif %}")


def _tiny_llava(folder, chat=False):
    from iclr25.mmed_rag.paper import TINY_LLAVA
    from iclr25.utils.hf import tiny_llava

    ds = generate(2, seed=0)
    extra = words(rag_prompt("is there a nodule ?", list(ds.reports[:2]))) + ["yes", "no"]
    vocab = Vocab.build(list(ds.reports) + [" ".join(extra)])
    toks = ["<pad>", "<unk>", "<image>"] + [t for t in vocab.tokens if not t.startswith("<")]
    tok, model = tiny_llava(toks, **TINY_LLAVA, seed=0)
    model.save_pretrained(folder)
    if chat:  # a chat template and an image processor, as a user's LLaVA folder has them
        from transformers import CLIPImageProcessor

        tok.chat_template = CHAT
        CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(folder)
    tok.save_pretrained(folder)
    return ds


def test_tiny_llava_rag_and_dpo(tmp_path):
    ds = _tiny_llava(tmp_path / "llava")
    vlm = load_hf_vlm(tmp_path / "llava")
    ref = load_hf_vlm(tmp_path / "llava")
    assert vlm.n_image_tokens == 16
    x = torch.as_tensor(ds.images[:2])
    prompts = [rag_prompt("is there a nodule ?", list(ds.reports[2:4])), rag_prompt("is there a nodule ?", [])]
    p = vlm.yes_probability(x, prompts)
    assert p.shape == (2,) and np.all((p > 0) & (p < 1))
    opt = torch.optim.Adam(vlm.model.parameters(), lr=1e-2)
    noise = torch.rand_like(x)
    first = vlm.dpo_step(ref, opt, x, noise, prompts, ["yes", "no"], ["yes", "no"])
    assert abs(float(first.loss.detach()) - np.log(2)) < 1e-5  # policy == reference at step 0
    for _ in range(4):
        last = vlm.dpo_step(ref, opt, x, noise, prompts, ["yes", "no"], ["yes", "no"])
    assert float(last.loss.detach()) < float(first.loss.detach())


def test_missing_or_corrupt_model_folder(tmp_path):
    # iclr25.utils.hf.load_local_model: one line naming the flag, the folder and what was expected
    with pytest.raises(FileNotFoundError, match=r"--hf-path .*: no config.json \(expected a Hugging Face LLaVA"):
        load_hf_vlm(tmp_path)
    with pytest.raises(FileNotFoundError, match="--model .*: no such folder"):
        load_hf_vlm(tmp_path / "nope", flag="--model")
    (tmp_path / "config.json").write_text('{"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]}')
    with pytest.raises(ValueError, match=r"--hf-path .*model_type 'gpt2'.*expected a LLaVA-style model"):
        load_hf_vlm(tmp_path)
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"--hf-path .*: config.json is not readable JSON"):
        load_hf_vlm(tmp_path)


def test_own_llava_end_to_end_from_the_command_line(tmp_path):
    """index your own data, align (mine pairs with the HF model, DPO, evaluate) and ask with the result: a tiny
    LLaVA with a chat template and an image processor."""
    import json

    from iclr25.mmed_rag.cli import main
    from iclr25.mmed_rag.hf import load_hf_vlm

    _tiny_llava(tmp_path / "llava", chat=True)
    hf = load_hf_vlm(tmp_path / "llava")
    assert hf.image_processor is not None and hf.chat_text("is it ?").startswith("user : <image>")
    assert hf._ids("is it ?").count(hf.image_token_id) == hf.n_image_tokens
    assert tuple(hf.pixels(np.zeros((1, 3, 20, 20), np.float32)).shape) == (1, 3, 32, 32)
    data, index, out = tmp_path / "data", tmp_path / "index", tmp_path / "o"
    assert main(["generate", "--out", str(data), "--n-train", "6", "--n-db", "6", "--n-test", "3"]) == 0
    assert main(["build-index", str(data), "--out", str(index), "--steps", "2", "--router-steps", "2",
                 "--backend", "numpy"]) == 0
    assert main(["align", str(data), "--index", str(index), "--hf-path", str(tmp_path / "llava"), "--out",
                 str(out), "--mine", "24", "--limit", "12", "--steps", "3", "--lr", "1e-3", "--lora", "off"]) == 0
    res = json.loads((out / "results.json").read_text())
    got = {m["name"]: m["value"] for m in res["metrics"]}
    assert sum(got[f"pairs {k}"] for k in ("cm", "oa1", "oa2")) > 0
    assert abs(got["DPO first_loss"] - np.log(2)) < 1e-4  # policy == frozen reference at step 0
    assert (out / "model" / "config.json").is_file() and (out / "model" / "preprocessor_config.json").is_file()
    assert main(["ask", str(data), "--index", str(index), "--hf-path", str(out / "model"), "--out",
                 str(tmp_path / "a"), "--limit", "6"]) == 0
    names = {m["name"] for m in json.loads((tmp_path / "a" / "results.json").read_text())["metrics"]}
    assert {"VQA accuracy with the retrieved reports", "unreadable replies (neither yes nor no)"} <= names
    # --out holding a previous run: refused before any work
    assert main(["align", str(data), "--index", str(index), "--hf-path", str(tmp_path / "llava"), "--out",
                 str(out)]) == 2
    # the aligned folder is whole or refused: manifest.json written last, checked when it is loaded again
    from iclr25.utils.checkpoints import verify_manifest

    assert "model.safetensors" in verify_manifest(out / "model", ["config.json"])["files"]
    cfg = out / "model" / "preprocessor_config.json"
    cfg.write_text(cfg.read_text() + "\n")  # same settings, other bytes: not the folder align saved
    assert main(["ask", str(data), "--index", str(index), "--hf-path", str(out / "model"), "--out",
                 str(tmp_path / "a2"), "--limit", "6"]) == 2


def test_own_llava_lora_dpo_through_peft_end_to_end(tmp_path):
    """align --lora on: LoRA adapters through peft on the language model's attention projections, the
    reference being the same network with the adapters disabled (so the first DPO loss is exactly log 2), merged
    back into a plain LLaVA folder: the attention weights moved, everything else (vision tower, projector,
    embeddings, MLPs) is bit for bit the starting model's."""
    import json

    from safetensors.torch import load_file

    from iclr25.mmed_rag.cli import main
    from iclr25.mmed_rag.hf import load_hf_vlm

    pytest.importorskip("peft", reason="the hf extra declares peft")  # never skipped in the package's env
    _tiny_llava(tmp_path / "llava", chat=True)
    data, index, out = tmp_path / "data", tmp_path / "index", tmp_path / "o"
    assert main(["generate", "--out", str(data), "--n-train", "6", "--n-db", "6", "--n-test", "3"]) == 0
    assert main(["build-index", str(data), "--out", str(index), "--steps", "2", "--router-steps", "2",
                 "--backend", "numpy"]) == 0
    assert main(["align", str(data), "--index", str(index), "--hf-path", str(tmp_path / "llava"), "--out",
                 str(out), "--mine", "24", "--limit", "12", "--steps", "4", "--lr", "1e-2", "--lora", "on"]) == 0
    res = json.loads((out / "results.json").read_text())
    got = {m["name"]: m["value"] for m in res["metrics"]}
    assert res["notes"].startswith("DPO mode: lora")
    assert abs(got["DPO first_loss"] - np.log(2)) < 1e-4  # adapters start at zero: policy == reference
    # the reference stays frozen (adapters disabled) while the adapters move: the later losses leave log 2
    assert abs(got["DPO loss"] - np.log(2)) > 1e-4
    # merged back: a plain LLaVA folder (no adapter files), same parameter names and shapes
    assert not (out / "model" / "adapter_config.json").exists()
    before, after = load_file(tmp_path / "llava" / "model.safetensors"), load_file(out / "model" / "model.safetensors")
    assert before.keys() == after.keys()
    attn = ("q_proj", "k_proj", "v_proj", "o_proj")
    moved = {k for k in before if not torch.equal(before[k], after[k])}
    assert moved and all("language_model" in k and any(a in k for a in attn) for k in moved), sorted(moved)
    assert load_hf_vlm(out / "model").n_image_tokens == 16
