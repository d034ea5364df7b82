"""The LLM agent: parsing, transcripts and replay, and both real back ends run end to end offline (a stub
OpenAI-compatible server on 127.0.0.1, a tiny Hugging Face model built from a config)."""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest

from iclr25.llm_regret import (
    LLMAgent,
    OpenAIChat,
    build_prompt,
    loss_sequences,
    parse_policy,
    replay_transcript,
    run_online,
)


@pytest.mark.parametrize("text, want", [
    ("[0.2, 0.8]", [0.2, 0.8]),
    ("I choose probabilities [0.25, 0.75] for the two actions.", [0.25, 0.75]),
    ("action 1: 30%, action 2: 70%", [0.3, 0.7]),
    ("Action 1 = 0.6\nAction 2 = 0.4", [0.6, 0.4]),
    ("```json\n[0.5, 0.49]\n```", [0.5 / 0.99, 0.49 / 0.99]),
    ("first [1, 2, 3] then final answer [0.1, 0.9]", [0.1, 0.9]),
])
def test_parse_policy_reads_messy_answers(text, want):
    p = parse_policy(text, 2)
    assert p.ok and np.allclose(p.policy, want)


@pytest.mark.parametrize("text", ["", "I don't know", "[0.7, 0.7]", "[-0.5, 1.5]", "[0.3]", None])
def test_parse_policy_counts_failures_and_falls_back_to_uniform(text):
    p = parse_policy(text, 2)
    assert not p.ok and np.allclose(p.policy, [0.5, 0.5]) and p.reason


def test_llm_agent_counts_parse_failures_and_replays_identically(tmp_path):
    answers = iter(["[0.9, 0.1]", "no idea", "action 1: 0.2, action 2: 0.8", "[0.5, 0.5]", "garbage", "[1, 0]"])

    def scripted(prompt):
        assert "Reply with the probabilities" in prompt
        return next(answers)

    L = loss_sequences("alternating", T=6, d=2, n_seeds=1)
    path = tmp_path / "t.jsonl"
    agent = LLMAgent(scripted, transcript=path)
    first = run_online(agent, L)
    assert agent.calls == 6 and agent.parse_failures == 2
    records = [json.loads(x) for x in path.read_text().splitlines()]
    assert len(records) == 6 and records[1]["parsed"] is False
    again = run_online(LLMAgent(replay_transcript(path)), L)
    np.testing.assert_array_equal(first.policies, again.policies)
    # a replay against other losses is refused: the prompts differ
    with pytest.raises(ValueError, match="prompt differs"):
        run_online(LLMAgent(replay_transcript(path)), loss_sequences("uniform", T=6, d=2, n_seeds=1))


def test_prompt_lists_every_past_round():
    text = build_prompt(np.array([[0.5, 0.0], [0.0, 1.0]]), 2)
    assert "Round 1: action 1 = 0.500, action 2 = 0.000" in text and "Round 2:" in text and "round 3" in text


class _Stub(BaseHTTPRequestHandler):
    seen: list = []

    def do_POST(self):  # noqa: N802 - the http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Stub.seen.append(body)
        n_rounds = body["messages"][0]["content"].count("Round ")
        reply = {"choices": [{"message": {"role": "assistant",
                                          "content": "[0.7, 0.3]" if n_rounds % 2 else "Action 1: 20%, action 2: 80%"}}]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        return None


def test_openai_compatible_endpoint_end_to_end():
    server = HTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        agent = LLMAgent(OpenAIChat(url, "stub-model"))
        run = run_online(agent, loss_sequences("alternating", T=5, d=2, n_seeds=1))
        assert agent.calls == 5 and agent.parse_failures == 0
        assert _Stub.seen[-1]["model"] == "stub-model" and _Stub.seen[-1]["temperature"] == 0.0
        np.testing.assert_allclose(run.policies[0, 0], [0.2, 0.8])
    finally:
        server.shutdown()


def test_unreachable_endpoint_is_a_clear_error():
    agent = LLMAgent(OpenAIChat("http://127.0.0.1:9/v1", "m", timeout=2))
    with pytest.raises(OSError, match="--endpoint http://127.0.0.1:9/v1: request failed"):
        run_online(agent, loss_sequences("alternating", T=3, d=2, n_seeds=1))


@pytest.fixture(scope="module")
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


def test_local_hugging_face_model_end_to_end(tiny_hf_model):
    from iclr25.llm_regret import HFCausalLM

    agent = LLMAgent(HFCausalLM(tiny_hf_model, max_new_tokens=6))
    run = run_online(agent, loss_sequences("alternating", T=3, d=2, n_seeds=1))
    assert agent.calls == 3  # an untrained model answers nonsense: counted, played as uniform
    assert 0 <= agent.parse_failures <= 3
    assert np.allclose(run.policies.sum(axis=2), 1.0)


def test_hf_path_without_a_model_is_a_clear_error(tmp_path):
    from iclr25.llm_regret import HFCausalLM

    with pytest.raises(FileNotFoundError, match="no config.json"):
        HFCausalLM(tmp_path)


def test_an_endpoint_that_never_answers_fails_after_timeout(capsys):
    """A server that accepts the connection and never answers: `run --timeout 1` ends in about a second, with
    one line naming --endpoint (it waited a fixed 60 s before)."""
    import socket
    import time

    from iclr25.llm_regret.cli import main

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        t0 = time.perf_counter()
        rc = main(["run", "--agent", "llm", "--endpoint", url, "--model", "m", "--timeout", "1", "--T", "3"])
        elapsed = time.perf_counter() - t0
    finally:
        listener.close()
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "--endpoint" in err[0], err
    assert elapsed < 15, elapsed
