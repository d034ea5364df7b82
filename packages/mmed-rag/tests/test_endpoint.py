"""`ask` with an OpenAI-compatible endpoint (the federation's ``iclr25.utils.endpoint.ChatEndpoint``), tested
against the shared stub server on 127.0.0.1 (``iclr25.utils.testing.stub_chat_server``), which records each
request so the test checks what was sent: model name, API key, the image as a PNG data URL, the retrieved
reports in the prompt."""

import base64
import json

import pytest

from iclr25.mmed_rag.cli import main
from iclr25.mmed_rag.endpoint import EndpointVLM, parse_yes_no
from iclr25.utils.testing import stub_chat_server


@pytest.fixture()
def stub():
    with stub_chat_server("Yes.") as server:
        yield server


def test_ask_an_endpoint_end_to_end(stub, data_index, tmp_path, monkeypatch):
    data, index = data_index
    monkeypatch.setenv("STUB_KEY", "sk-test")
    stub.fail_first = 1  # a busy server (HTTP 503) is tried again
    argv = ["ask", str(data), "--index", str(index), "--out", str(tmp_path / "o"), "--endpoint", stub.url,
            "--model", "stub-vlm", "--api-key-env", "STUB_KEY", "--limit", "6", "--timeout", "5"]
    assert main(argv) == 0
    seen = stub.requests[1:]
    assert len(seen) >= 12  # 6 questions without and with reports, plus the conflict questions
    for req in stub.requests:
        body = req["body"]
        assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test"
        assert body["model"] == "stub-vlm" and body["temperature"] == 0
        image, text = body["messages"][0]["content"]
        assert image["type"] == "image_url" and text["type"] == "text"
        head, b64 = image["image_url"]["url"].split(",", 1)
        assert head == "data:image/png;base64" and base64.b64decode(b64)[:8] == b"\x89PNG\r\n\x1a\n"
        assert "Please choose from [yes, no]" in text["text"]
    assert sum("reference report(s): 1. " in r["body"]["messages"][0]["content"][1]["text"] for r in seen) >= 6
    metrics = {m["name"]: m["value"] for m in json.loads((tmp_path / "o" / "results.json").read_text())["metrics"]}
    # the stub always says "yes": a constant answer copies nothing (0.5) and scores the share of true "yes"
    assert metrics["copy rate (follows the reports against a contradicting real image, balanced)"] == 0.5
    assert metrics["VQA accuracy with the retrieved reports"] == metrics["VQA accuracy, always 'yes'"]


def test_ask_refuses_bad_flags_and_a_slow_endpoint(stub, data_index, tmp_path, capsys, monkeypatch):
    data, index = data_index
    base = ["ask", str(data), "--index", str(index), "--out", str(tmp_path / "o")]
    assert main([*base, "--endpoint", stub.url]) == 2 and "--model" in capsys.readouterr().err
    (tmp_path / "hf").mkdir()
    assert main([*base, "--endpoint", stub.url, "--model", "m", "--hf-path", str(tmp_path / "hf")]) == 2
    assert "exactly one" in capsys.readouterr().err
    assert main([*base, "--endpoint", "ftp://x", "--model", "m"]) == 2 and "http" in capsys.readouterr().err
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    assert main([*base, "--endpoint", stub.url, "--model", "m", "--api-key-env", "NO_SUCH_KEY_VAR"]) == 2
    assert "--api-key-env NO_SUCH_KEY_VAR" in capsys.readouterr().err
    assert not stub.requests  # refused before any request
    stub.delay = 1.0
    assert main([*base, "--endpoint", stub.url, "--model", "m", "--timeout", "0.2", "--limit", "1"]) == 2
    err = capsys.readouterr().err
    assert "--timeout 0.2" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o" / "results.json").exists()


def test_parse_yes_no_and_url():
    assert [parse_yes_no(t) for t in ("Yes.", " no, because", "**yes**", "maybe", "nothing")] == [1, 0, 1, -1, -1]
    assert EndpointVLM("http://h:1/v1/", "m").url == "http://h:1/v1/chat/completions"
    with pytest.raises(ValueError, match="--timeout"):
        EndpointVLM("http://h:1", "m", timeout=0)
