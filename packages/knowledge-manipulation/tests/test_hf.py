"""The evaluation harness on a user's own Hugging Face causal LM: a tiny GPT-2 and a tiny Llama built from a
config with our word-level vocabulary and saved to a folder (nothing is downloaded)."""

import pytest

from iclr25.knowledge_manipulation import evaluate_hf, make_population
from iclr25.knowledge_manipulation.cli import main
from iclr25.knowledge_manipulation.experiments import build_tokenizer
from iclr25.knowledge_manipulation.hf_eval import build_prompt
from iclr25.knowledge_manipulation.tasks import build_task

TASKS = ["retrieval:birth_city", "classification:birth_month:mod2:cot", "comparison:birth_month",
         "inverse:birth_date+birth_city"]


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def tiny_hf_model(request, tmp_path_factory):
    pytest.importorskip("transformers")  # the hf extra; the isolated test env installs every extra
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    fast = build_tokenizer(make_population(12, seed=0)).to_hf()
    V = len(fast)
    torch.manual_seed(0)
    if request.param == "gpt2":
        model = GPT2LMHeadModel(GPT2Config(n_embd=16, n_layer=1, n_head=2, vocab_size=V, n_positions=512,
                                           bos_token_id=2, eos_token_id=2, pad_token_id=0))
    else:
        model = LlamaForCausalLM(LlamaConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                             num_attention_heads=2, num_key_value_heads=2, vocab_size=V,
                                             max_position_embeddings=512, bos_token_id=2, eos_token_id=2,
                                             pad_token_id=0))
    path = tmp_path_factory.mktemp(f"tiny-{request.param}")
    model.save_pretrained(path)
    fast.save_pretrained(path)
    return path


def test_tiny_hf_model_runs_every_task(tiny_hf_model):
    pop = make_population(12, seed=0)
    res = evaluate_hf(tiny_hf_model, pop, TASKS, shots=1, limit=2, context=True)
    assert [r.task for r in res] == TASKS
    for r in res:
        assert r.n == 2 and 0.0 <= r.accuracy <= 1.0 and len(r.examples) == 2


def test_cli_eval_hf_path(tiny_hf_model, tmp_path, capsys):
    from iclr25.utils.results import RunResult

    assert main(["eval", "--hf-path", str(tiny_hf_model), "--n", "12", "--limit", "2", "--shots", "0",
                 "--tasks", "retrieval:birth_city", "--out", str(tmp_path)]) == 0
    run = RunResult.load(tmp_path / "results.json")
    assert run.metric("retrieval:birth_city test").value is not None


def test_prompt_format():
    pop = make_population(6, seed=0)
    qas = build_task(pop, "comparison:birth_month:cot", people="train", n_pairs=3)
    text = build_prompt(qas[0], qas[1:], population=pop, context=True)
    assert text.count("Q: ") == 3 and text.endswith("A:") and pop.people[qas[0].person].name in text
    assert qas[1].answer in text
    with pytest.raises(ValueError, match="context=True needs the population"):
        build_prompt(qas[0], [], context=True)


def test_hf_path_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no config.json"):
        evaluate_hf(tmp_path, make_population(4), ["retrieval:birth_city"])
    with pytest.raises(ValueError, match="shots must be"):
        evaluate_hf(tmp_path, make_population(4), ["retrieval:birth_city"], shots=-1)


def test_parity_check_r5(tiny_hf_model):
    """The paper's R5 on a (tiny, untrained) model: the three questions are asked of the same people; with
    nothing retrieved, the stored-attribute accuracies are nan (an empty comparison, not a 0)."""
    import math

    from iclr25.knowledge_manipulation.hf_eval import parity_check

    pop = make_population(12, seed=0)
    r = parity_check(tiny_hf_model, pop, attribute="birth_month", modulus=2, shots=1, limit=3)
    assert r.n == 3 and r.attribute == "birth_month" and r.modulus == 2
    for v in (r.retrieval, r.no_cot, r.cot, r.chance):
        assert 0.0 <= v <= 1.0
    assert r.n_stored == round(r.retrieval * r.n)
    if r.n_stored == 0:
        assert math.isnan(r.no_cot_stored) and math.isnan(r.cot_stored)
    with pytest.raises(ValueError, match="classification|attribute"):
        parity_check(tiny_hf_model, pop, attribute="birth_city")


def test_cli_parity(tiny_hf_model, tmp_path, capsys):
    from iclr25.utils.results import RunResult

    if "llama" in str(tiny_hf_model):
        pytest.skip("one model is enough for the command line")
    assert main(["eval", "--hf-path", str(tiny_hf_model), "--parity", "birth_year:mod2", "--n", "12", "--limit",
                 "2", "--shots", "1", "--out", str(tmp_path)]) == 0
    run = RunResult.load(tmp_path / "results.json")
    assert run.metric("birth_year retrieved (test people)").value is not None
    assert "R5" not in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--hf-path", "{missing}", "--parity", "birth_month"], "no such folder"),
    (["--hf-path", "{t5}", "--parity", "birth_month"], "not a causal language model"),
    (["--hf-path", "{t5}", "--parity", "birth_city"], "--parity 'birth_city'"),
    (["--hf-path", "{t5}", "--parity", "birth_month:mod1"], "M >= 2"),
    (["--model", "{t5}", "--parity", "birth_month"], "give --hf-path"),
    (["--hf-path", "{t5}", "--parity", "birth_month", "--tasks", "retrieval:birth_city"], "drop --tasks"),
])
def test_parity_errors_are_one_line(argv, message, tmp_path, capsys):
    pytest.importorskip("transformers")
    from transformers import T5Config

    t5 = tmp_path / "t5"
    T5Config(d_model=8, d_ff=16, num_layers=1, num_heads=1, d_kv=8, vocab_size=32).save_pretrained(t5)
    args = [a.format(missing=tmp_path / "nope", t5=t5) for a in argv]
    assert main(["eval", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_hf_dtype_device_and_device_map(tiny_hf_model, tmp_path, capsys):
    """--device / --dtype / --device-map on eval --hf-path (issue 59): float32 on the CPU gives the same answers
    as the default load and names the device in results.json; half precision on the CPU and --device-map without
    accelerate are one line each; --dtype without --hf-path is refused before any work."""
    import importlib.util

    from iclr25.knowledge_manipulation.hf_eval import HFCausalLM
    from iclr25.utils.results import RunResult

    runs = {}
    for extra in ([], ["--dtype", "float32"]):
        out = tmp_path / ("f32" if extra else "default")
        assert main(["eval", "--hf-path", str(tiny_hf_model), "--n", "12", "--limit", "2", "--shots", "0",
                     "--tasks", "retrieval:birth_city", "--device", "cpu", *extra, "--out", str(out)]) == 0
        runs[bool(extra)] = RunResult.load(out / "results.json")
    assert runs[True].machine["device"] == "cpu" and runs[True].config["dtype"] == "float32"
    assert runs[True].metric("retrieval:birth_city test").value == runs[False].metric("retrieval:birth_city test").value
    capsys.readouterr()
    with pytest.raises(ValueError, match="--dtype bfloat16 is for accelerators"):
        HFCausalLM(tiny_hf_model, device="cpu", dtype="bfloat16")
    if importlib.util.find_spec("accelerate") is None:
        assert main(["eval", "--hf-path", str(tiny_hf_model), "--n", "12", "--limit", "1", "--device-map", "auto",
                     "--tasks", "retrieval:birth_city"]) != 0
        err = capsys.readouterr().err.strip()
        assert "--device-map auto needs accelerate" in err and len(err.splitlines()) == 1
    assert main(["eval", "--model", str(tmp_path), "--dtype", "float16"]) == 2
    assert "--dtype is for --hf-path" in capsys.readouterr().err
