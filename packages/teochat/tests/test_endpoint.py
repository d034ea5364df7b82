"""An OpenAI-compatible endpoint as the assistant, against the federation's stub server on 127.0.0.1
(``iclr25.utils.testing.stub_chat_server``), which records every request so the tests check what was sent."""

import base64
import io

import numpy as np
import pytest
from PIL import Image

from iclr25.teochat.endpoint import EndpointAssistant, EndpointError
from iclr25.utils.testing import stub_chat_server


def _boxes_and_count(body):
    n = sum(p["type"] == "image_url" for p in body["messages"][0]["content"])
    return f"[10, 10, 40, 40] n={n}"


def _png(url):
    assert url.startswith("data:image/png;base64,")
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB"))


def test_frames_go_as_dated_data_urls_in_chronological_order(monkeypatch):
    monkeypatch.setenv("STUB_KEY", "secret")
    frames = np.zeros((3, 8, 8, 3), dtype=np.uint8)
    frames[1] += 100
    frames[2, 2:5, 3:6] = (200, 10, 30)
    with stub_chat_server(_boxes_and_count) as stub:
        asst = EndpointAssistant(stub.url, "gpt-4o", timeout=5, api_key_env="STUB_KEY")
        answer = asst.ask(frames, "identify the buildings that changed .",
                          dates=["2020-01-01", "2020-06-01", "2021-01-01"])
    assert answer == "[10, 10, 40, 40] n=3"
    (req,) = stub.requests
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer secret"
    body = req["body"]
    assert body["model"] == "gpt-4o" and body["temperature"] == 0 and len(body["messages"]) == 1
    msg = body["messages"][0]
    assert msg["role"] == "user"
    kinds = [p["type"] for p in msg["content"]]
    # a header, then (date line, image) per frame, then the question
    assert kinds == ["text"] + ["text", "image_url"] * 3 + ["text"]
    texts = [p["text"] for p in msg["content"] if p["type"] == "text"]
    assert texts[0] == "These are 3 satellite images in chronological order:"
    assert texts[1:4] == ["Image 1 (2020-01-01):", "Image 2 (2020-06-01):", "Image 3 (2021-01-01):"]
    assert texts[-1].startswith("identify the buildings that changed .") and "0-100" in texts[-1]
    images = [_png(p["image_url"]["url"]) for p in msg["content"] if p["type"] == "image_url"]
    for got, sent in zip(images, frames, strict=True):  # the frames arrive in the order given, losslessly
        np.testing.assert_array_equal(got, sent)


def test_predict_sorts_by_date_and_single_image_tasks_send_one_frame():
    from iclr25.teochat.conversation import make_examples
    from iclr25.teochat.synth import generate_sequences

    seqs = generate_sequences(2, seed=3, size=16)
    ex = make_examples(seqs, seed=0, tasks=["tsc", "tsc1"])
    with stub_chat_server(_boxes_and_count) as stub:
        answers = EndpointAssistant(stub.url, "m", timeout=5).predict(ex, seqs)
    assert len(answers) == len(ex) == len(stub.requests)
    for e, req in zip(ex, stub.requests, strict=True):
        s = seqs[e.seq]
        parts = req["body"]["messages"][0]["content"]
        dates = [p["text"] for p in parts if p["type"] == "text" and p["text"].startswith("Image ")]
        want = [s.dates[i] for i in s.order]
        if e.frames is not None:
            want = [want[i] for i in e.frames]
        assert dates == [f"Image {j + 1} ({d}):" for j, d in enumerate(want)]
        assert dates and sorted(want) == want  # chronological
        chron = s.chronological()
        sent = [_png(p["image_url"]["url"]) for p in parts if p["type"] == "image_url"]
        idx = list(e.frames) if e.frames is not None else list(range(len(chron)))
        np.testing.assert_array_equal(np.stack(sent), chron[idx])


def test_busy_server_is_retried_and_errors_are_one_line():
    frames = np.zeros((1, 8, 8, 3), np.uint8)
    with stub_chat_server("none", fail_first=1) as stub:
        assert EndpointAssistant(stub.url, "m", timeout=5, backoff=0).ask(frames, "what changed ?") == "none"
    assert len(stub.requests) == 2  # one 503, then the answer
    with stub_chat_server("late", delay=2.0) as stub, pytest.raises(EndpointError, match="--timeout 0.5"):
        EndpointAssistant(stub.url, "m", timeout=0.5, retries=0).ask(frames, "what changed ?")
    with pytest.raises(ValueError, match="--timeout must be a number > 0"):
        EndpointAssistant("http://127.0.0.1:9/v1", "m", timeout=0)
    with pytest.raises(ValueError, match="--endpoint must be an http"):
        EndpointAssistant("ftp://x", "m")
    with pytest.raises(ValueError, match="--endpoint-model"):
        EndpointAssistant("http://127.0.0.1:9/v1", " ")
    with pytest.raises(ValueError, match="--api-key-env NO_SUCH_KEY_VAR"):
        EndpointAssistant("http://127.0.0.1:9/v1", "m", api_key_env="NO_SUCH_KEY_VAR")
    with pytest.raises(ValueError, match="dates must give one date per frame"):
        EndpointAssistant("http://127.0.0.1:9/v1", "m").ask(np.zeros((2, 8, 8, 3), np.uint8), "q", ["2020-01-01"])


def test_chat_command_against_the_stub(tmp_path, capsys):
    from iclr25.teochat.cli import main

    site = tmp_path / "site"
    site.mkdir()
    for d in ("2021-01-01", "2020-01-01"):  # file-name order is not date order on purpose
        Image.fromarray(np.full((8, 8, 3), 40 * (int(d[3]) + 1), np.uint8)).save(site / f"{d}.png")
    # a closed port: refused, one line, exit 2
    assert main(["chat", "--endpoint", "http://127.0.0.1:9/v1", "--endpoint-model", "m", "--timeout", "2",
                 "--sequence", str(site), "--question", "what changed ?"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--endpoint http://127.0.0.1:9/v1/chat/completions" in err[0]
    with stub_chat_server("[10, 10, 40, 40]") as stub:
        assert main(["chat", "--endpoint", stub.url, "--endpoint-model", "served", "--sequence", str(site),
                     "--question", "what changed ?"]) == 0
    assert "[10, 10, 40, 40]" in capsys.readouterr().out
    body = stub.requests[-1]["body"]
    assert body["model"] == "served"
    texts = [p["text"] for p in body["messages"][0]["content"] if p["type"] == "text"]
    assert texts[1:3] == ["Image 1 (2020-01-01):", "Image 2 (2021-01-01):"]
    first = [p for p in body["messages"][0]["content"] if p["type"] == "image_url"][0]
    assert (_png(first["image_url"]["url"]) == 40).all()  # the 2020 frame comes first
