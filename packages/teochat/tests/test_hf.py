"""The same prompts on a local Hugging Face LLaVA model, tested on a tiny one built from a config (never
downloaded)."""

import pytest

from iclr25.teochat import generate_sequences, make_examples


@pytest.fixture(scope="module")
def tiny_llava(tmp_path_factory):
    pytest.importorskip("transformers")  # the hf extra; the isolated test env installs every extra
    from iclr25.teochat import Vocabulary
    from iclr25.utils.hf import write_tiny_llava

    words = ["[UNK]", "[BOS]", "[EOS]", *Vocabulary().words[5:], "<image>"]
    return write_tiny_llava(tmp_path_factory.mktemp("tiny-llava"), words, unk="[UNK]", bos="[BOS]", eos="[EOS]",
                            pad="[EOS]", seed=0)


def test_local_llava_model_end_to_end(tiny_llava):
    from iclr25.teochat.hf import HFLlavaAssistant
    from iclr25.teochat.metrics import evaluate_predictions

    asst = HFLlavaAssistant(tiny_llava, max_new_tokens=4)
    assert asst.tokens_per_image == 16
    ids = asst.input_ids("user : these are 2 satellite images : image 1 : <image> image 2 : <image> q ? assistant :")
    assert ids.count(asst.image_token_id) == 32
    seqs = generate_sequences(3, seed=0, scenes=("construction_site",))
    ex = make_examples(seqs, tasks=["tsc", "loc"])[:4]
    preds = asst.predict(ex, seqs)
    assert len(preds) == 4 and all(isinstance(p, str) for p in preds)
    scores = evaluate_predictions(ex, preds)  # an untrained model: nonsense answers are scored, not crashes
    assert 0.0 <= scores["tsc"] <= 1.0 and 0.0 <= scores.parse_failures["loc"] <= 1.0


def test_hf_model_folder_without_config_is_a_clear_error(tmp_path):
    pytest.importorskip("transformers")
    from iclr25.teochat.hf import HFLlavaAssistant

    with pytest.raises(FileNotFoundError, match="--hf-model .*no config.json"):
        HFLlavaAssistant(tmp_path)


def test_a_non_llava_folder_is_refused_at_once_in_one_line(tmp_path, capsys):
    """A GPT-2 folder (or a Video-LLaVA/TEOChat release) is refused from its config.json, before any weights load."""
    import json
    import time

    from iclr25.teochat.cli import main

    gpt2 = tmp_path / "gpt2"
    gpt2.mkdir()
    (gpt2 / "config.json").write_text(json.dumps({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
                                                  "n_layer": 48, "n_embd": 6400}))
    seq = tmp_path / "site"
    seq.mkdir()
    t0 = time.perf_counter()
    assert main(["chat", "--hf-model", str(gpt2), "--sequence", str(seq), "--question", "what changed ?"]) == 2
    assert time.perf_counter() - t0 < 1.0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "model_type 'gpt2' is not a LLaVA" in err[0]
    from iclr25.teochat.hf import check_llava_folder

    with pytest.raises(ValueError, match=r"--hf-model .*model_type 'gpt2' is not a LLaVA"):
        check_llava_folder(gpt2)
    teochat = tmp_path / "teochat"
    teochat.mkdir()
    (teochat / "config.json").write_text(json.dumps({"model_type": "llava", "architectures": ["LlavaLlamaForCausalLM"],
                                                     "mm_image_tower": "LanguageBind/LanguageBind_Image",
                                                     "mm_projector_type": "mlp2x_gelu"}))
    with pytest.raises(ValueError, match="Video-LLaVA/TEOChat-style checkpoint .* transformers alone"):
        check_llava_folder(teochat)


def test_the_models_own_chat_template_and_normalisation_are_used(tiny_llava, tmp_path):
    import json
    import shutil

    from iclr25.teochat.hf import HFLlavaAssistant

    folder = tmp_path / "templated"
    shutil.copytree(tiny_llava, folder)
    tok_cfg = json.loads((folder / "tokenizer_config.json").read_text())
    tok_cfg["chat_template"] = "{% for m in messages %}user {{ m['content'] }} assistant :{% endfor %}"
    (folder / "tokenizer_config.json").write_text(json.dumps(tok_cfg))
    (folder / "preprocessor_config.json").write_text(json.dumps({"image_mean": [0.5, 0.5, 0.5],
                                                                 "image_std": [0.25, 0.25, 0.25]}))
    asst = HFLlavaAssistant(folder, max_new_tokens=2)
    text = asst.prompt_text(2, "what changed ?")
    assert text.startswith("user these are 2 satellite images") and text.endswith("assistant :")
    assert text.index("image 1 :") < text.index("image 2 :")  # image 1 is the earliest frame
    assert asst.image_mean == (0.5, 0.5, 0.5) and asst.image_std == (0.25, 0.25, 0.25)
    assert asst.input_ids(text).count(asst.image_token_id) == 32
