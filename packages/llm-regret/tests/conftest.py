import pytest


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    import torch

    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def tiny_hf_model(tmp_path_factory):
    """A tiny GPT-2 and a word-level tokenizer, built from a config and saved: the folder layout a user's own
    model has. Nothing is downloaded."""
    pytest.importorskip("transformers")  # the hf extra; the isolated test env installs every extra
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    words = ["[UNK]", "[EOS]", "[", "]", ",", "0.5", "0.3", "0.7", "action", "1", "2", "=", "Round", ":"]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", eos_token="[EOS]", pad_token="[EOS]")
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(n_embd=16, n_layer=1, n_head=2, vocab_size=len(words), n_positions=2048,
                                       bos_token_id=1, eos_token_id=1))
    path = tmp_path_factory.mktemp("tiny-gpt2")
    model.save_pretrained(path)
    fast.save_pretrained(path)
    return path
