"""The LLM agent: parsing, transcripts and replay, and both real back ends run end to end offline (a stub
OpenAI-compatible server on 127.0.0.1, a tiny Hugging Face model built from a config)."""

import json

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
from iclr25.utils.testing import stub_chat_server


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
    agent = LLMAgent(scripted, transcript=path, on_parse_failure="uniform")
    first = run_online(agent, L)
    assert agent.calls == 6 and agent.parse_failures == 2
    records = [json.loads(x) for x in path.read_text().splitlines()]
    assert len(records) == 6 and records[1]["parsed"] is False
    again = run_online(LLMAgent(replay_transcript(path), on_parse_failure="uniform"), L)
    np.testing.assert_array_equal(first.policies, again.policies)
    # a replay against other losses is refused: the prompts differ
    with pytest.raises(ValueError, match="prompt differs"):
        run_online(LLMAgent(replay_transcript(path), on_parse_failure="uniform"),
                   loss_sequences("uniform", T=6, d=2, n_seeds=1))


def test_prompt_lists_every_past_round():
    text = build_prompt(np.array([[0.5, 0.0], [0.0, 1.0]]), 2)
    assert "Round 1: action 1 = 0.500, action 2 = 0.000" in text and "Round 2:" in text and "round 3" in text


def _policy_answer(body):
    n_rounds = body["messages"][0]["content"].count("Round ")
    return "[0.7, 0.3]" if n_rounds % 2 else "Action 1: 20%, action 2: 80%"


def test_openai_compatible_endpoint_end_to_end():
    with stub_chat_server(_policy_answer) as stub:
        agent = LLMAgent(OpenAIChat(stub.url, "stub-model"))
        run = run_online(agent, loss_sequences("alternating", T=5, d=2, n_seeds=1))
        assert agent.calls == 5 and agent.parse_failures == 0
        last = stub.requests[-1]["body"]
        assert last["model"] == "stub-model" and last["temperature"] == 0.0
        np.testing.assert_allclose(run.policies[0, 0], [0.2, 0.8])


def test_unreachable_endpoint_is_a_clear_error():
    agent = LLMAgent(OpenAIChat("http://127.0.0.1:9/v1", "m", timeout=2))
    with pytest.raises(OSError, match="--endpoint http://127.0.0.1:9/v1/chat/completions: unreachable"):
        run_online(agent, loss_sequences("alternating", T=3, d=2, n_seeds=1))


def test_local_hugging_face_model_end_to_end(tiny_hf_model):
    from iclr25.llm_regret import HFCausalLM

    agent = LLMAgent(HFCausalLM(tiny_hf_model, max_new_tokens=6))
    run = run_online(agent, loss_sequences("alternating", T=3, d=2, n_seeds=1))
    # an untrained model answers nonsense: retried once, then counted and played as uniform
    assert agent.rounds == 3 and agent.calls == 3 + agent.retried and 0 <= agent.parse_failures <= 3
    assert np.allclose(run.policies.sum(axis=2), 1.0)


def test_hf_path_without_a_model_is_a_clear_error(tmp_path):
    from iclr25.llm_regret import HFCausalLM

    with pytest.raises(FileNotFoundError, match="no config.json"):
        HFCausalLM(tmp_path)


def test_an_endpoint_that_never_answers_fails_after_timeout(capsys):
    """A server that accepts the connection and never answers: `run --timeout 2` ends within 10 % of 2 s
    (a timeout is not retried), with one line naming --endpoint and the timeout."""
    import socket
    import time

    from iclr25.llm_regret.cli import main

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        t0 = time.perf_counter()
        rc = main(["run", "--agent", "llm", "--endpoint", url, "--model", "m", "--timeout", "2", "--T", "3"])
        elapsed = time.perf_counter() - t0
    finally:
        listener.close()
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "--endpoint" in err[0] and "--timeout 2" in err[0], err
    assert 1.9 <= elapsed <= 2.2, elapsed


# --------------------------------------------------------------------------- a model that does not answer
def never_answers(prompt):
    return "I am not able to help with that."


def test_a_model_that_never_answers_is_not_reported_no_regret():
    """The trap of the issue: on the alternating sequence the uniform fallback is itself no-regret, so a model
    whose every answer is unreadable would pass the paper's test. The verdict must say undecided."""
    from iclr25.llm_regret import Uniform, no_regret_verdict, regret_statistics

    L = loss_sequences("alternating", T=25, d=2, n_seeds=1)
    agent = LLMAgent(never_answers)
    st = regret_statistics(run_online(agent, L).regret)
    assert agent.rounds == 25 and agent.parse_failures == 25 and agent.parse_failure_rate == 1.0
    assert agent.calls == 50 and agent.retried == 25  # one retry per round, with the parse error in the prompt
    assert "could not be read" in agent._records[1]["prompt"] and agent._records[1]["attempt"] == 1
    assert len(agent.failure_examples) == 3 and agent.failure_examples[0]["answer"] == never_answers("")
    # the statistics alone cannot tell it from a learner: uniform play passes them on this sequence
    uniform = regret_statistics(run_online(Uniform(), L).regret)
    assert no_regret_verdict(uniform).label == "no-regret" and no_regret_verdict(st).label == "no-regret"
    v = no_regret_verdict(st, parse_failure_rate=agent.parse_failure_rate)
    assert v.no_regret is None and v.label == "undecided" and "did not answer" in v.reason
    # at the threshold the statistics decide again; a rate just above it does not
    assert no_regret_verdict(st, parse_failure_rate=0.1).label == "no-regret"
    assert no_regret_verdict(st, parse_failure_rate=0.12).label == "undecided"


def test_retry_repairs_an_answer_and_stop_ends_the_run():
    from iclr25.llm_regret import ParseFailureError

    def second_try(prompt):
        return "[0.25, 0.75]" if "could not be read" in prompt else "let me think about it"

    L = loss_sequences("alternating", T=4, d=2, n_seeds=1)
    agent = LLMAgent(second_try)
    run = run_online(agent, L)
    assert agent.parse_failures == 0 and agent.retried == 4 and agent.calls == 8
    np.testing.assert_allclose(run.policies[0], [[0.25, 0.75]] * 4)
    agent = LLMAgent(second_try, on_parse_failure="uniform")
    run_online(agent, L)
    assert agent.parse_failures == 4 and agent.calls == 4
    with pytest.raises(ParseFailureError, match="round 1 could not be read"):
        run_online(LLMAgent(second_try, on_parse_failure="stop"), L)


def test_reasoning_in_think_tags_is_dropped_and_a_cut_answer_is_a_failure():
    assert parse_policy("<think>maybe [0.9, 0.1]? no</think> [0.3, 0.7]", 2).policy.tolist() == [0.3, 0.7]
    cut = parse_policy("<think>the losses alternate, so [0.5, 0.5] would", 2)
    assert not cut.ok and "ran out of tokens" in cut.reason


def test_bandit_prompt_shows_only_the_drawn_action():
    from iclr25.llm_regret import build_bandit_prompt

    text = build_bandit_prompt([(1, 0.25), (0, 1.0)], 3)
    assert "Round 1: action 2 was drawn, its loss was 0.250" in text and "Round 2: action 1 was drawn" in text
    assert "round 3" in text and "action 3 =" not in text
    seen = []

    def model(prompt):
        seen.append(prompt)
        return "[0.2, 0.3, 0.5]"

    agent = LLMAgent(model, feedback="bandit")
    run = run_online(agent, loss_sequences("uniform", T=6, d=3, n_seeds=1, seed=1), seed=3)
    assert run.feedback == "bandit" and agent.calls == 6 and agent.parse_failures == 0
    a, loss = run.actions[0, 0], run.losses[0, 0, run.actions[0, 0]]
    assert f"Round 1: action {a + 1} was drawn, its loss was {loss:.3f}" in seen[1]
    assert seen[5].count("was drawn, its loss was") == 5


# --------------------------------------------------------------------------- the endpoint's options
@pytest.fixture()
def recorder():
    with stub_chat_server("[0.6, 0.4]") as stub:
        yield stub


def test_cli_sends_max_tokens_temperature_and_the_key_from_the_environment(recorder, monkeypatch, capsys):
    from iclr25.llm_regret.cli import main

    monkeypatch.setenv("MY_LLM_KEY", "sk-test-123")
    rc = main(["run", "--agent", "llm", "--endpoint", recorder.url, "--model", "m", "--T", "3", "--max-tokens", "77",
               "--temperature", "0.5", "--api-key-env", "MY_LLM_KEY", "--json"])
    assert rc == 0
    body, auth = recorder.requests[0]["body"], recorder.requests[0]["auth"]
    assert body["max_tokens"] == 77 and body["temperature"] == 0.5 and auth == "Bearer sk-test-123"
    out = json.loads(capsys.readouterr().out)
    assert out["parse_failure_rate"] == 0.0 and out["verdict"] in ("no-regret", "not shown no-regret")
    main(["run", "--agent", "llm", "--endpoint", recorder.url, "--model", "m", "--T", "3", "--json"])
    assert recorder.requests[-1]["auth"] is None and recorder.requests[-1]["body"]["max_tokens"] == 512
    monkeypatch.delenv("MY_LLM_KEY")
    capsys.readouterr()
    rc = main(["run", "--agent", "llm", "--endpoint", recorder.url, "--model", "m", "--T", "3", "--api-key-env",
               "MY_LLM_KEY"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "--api-key-env MY_LLM_KEY" in err[0] and "not set" in err[0]


def test_http_errors_are_retried_with_backoff(recorder):
    recorder.fail_first = 2
    assert OpenAIChat(recorder.url, "m", retries=2, backoff=0.01)("hi") == "[0.6, 0.4]"
    assert len(recorder.requests) == 3
    recorder.requests.clear()
    recorder.fail_first = 5
    with pytest.raises(OSError, match="HTTP 503.*after 2 tries"):
        OpenAIChat(recorder.url, "m", retries=1, backoff=0.01)("hi")


def test_cli_run_of_a_model_that_never_answers_is_undecided(recorder, tmp_path, capsys):
    """End to end: the verdict and the parse-failure rate reach the table and results.json."""
    from iclr25.llm_regret.cli import main

    recorder.answer = never_answers("")
    rc = main(["run", "--agent", "llm", "--endpoint", recorder.url, "--model", "m", "--env", "alternating", "--T", "12",
               "--out", str(tmp_path / "r")])
    assert rc == 0
    text = capsys.readouterr().out
    assert "undecided" in text and "no-regret (" not in text and "unparsed answer, round 1" in text
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    metrics = {m["name"]: m["value"] for m in res["metrics"]}
    assert metrics["parse_failure_rate"] == 1.0 and res["notes"].startswith("verdict: undecided")
    assert res["config"]["parse_failure_examples"][0]["round"] == 1
    rc = main(["run", "--agent", "llm", "--endpoint", recorder.url, "--model", "m", "--T", "5",
               "--on-parse-failure", "stop"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "could not be read" in err[0]


def test_hf_model_uses_its_chat_template(tiny_hf_model):
    from transformers import AutoTokenizer

    from iclr25.llm_regret import HFCausalLM

    plain = HFCausalLM(tiny_hf_model, max_new_tokens=4)
    assert not plain.uses_chat_template and plain.format_prompt("Round 1 :") == "Round 1 :"
    tok = AutoTokenizer.from_pretrained(tiny_hf_model)
    tok.chat_template = "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }} {% endfor %}[assistant]"
    chat_dir = tiny_hf_model.parent / "tiny-chat"
    tok.save_pretrained(chat_dir)
    for f in tiny_hf_model.iterdir():
        if not (chat_dir / f.name).exists():
            (chat_dir / f.name).write_bytes(f.read_bytes())
    chat = HFCausalLM(chat_dir, max_new_tokens=4)
    assert chat.uses_chat_template
    assert chat.format_prompt("Round 1 :") == "[user] Round 1 : [assistant]"
    agent = LLMAgent(chat, on_parse_failure="uniform")
    run_online(agent, loss_sequences("alternating", T=2, d=2, n_seeds=1))
    assert agent.calls == 2
