"""`ask` with an OpenAI-compatible endpoint, tested against a stub server on 127.0.0.1 that checks each request
(model name, API key, the image as a PNG data URL, the retrieved reports in the prompt)."""

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from iclr25.mmed_rag.cli import main
from iclr25.mmed_rag.endpoint import EndpointVLM, parse_yes_no


class _Stub(BaseHTTPRequestHandler):
    seen: list = []
    delay = 0.0

    def do_POST(self):  # noqa: N802 - the http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append((self.path, self.headers.get("Authorization"), body))
        time.sleep(type(self).delay)
        out = json.dumps({"choices": [{"message": {"role": "assistant", "content": "Yes."}}]}).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (--timeout)

    def log_message(self, *args):
        pass


@pytest.fixture()
def stub():
    _Stub.seen, _Stub.delay = [], 0.0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def data_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("ask")
    data, index = root / "data", root / "index"
    assert main(["generate", "--out", str(data), "--n-train", "8", "--n-db", "8", "--n-test", "4"]) == 0
    assert main(["build-index", str(data), "--out", str(index), "--steps", "2", "--router-steps", "2",
                 "--backend", "numpy"]) == 0
    return data, index


def test_ask_an_endpoint_end_to_end(stub, data_index, tmp_path, monkeypatch):
    data, index = data_index
    monkeypatch.setenv("STUB_KEY", "sk-test")
    argv = ["ask", str(data), "--index", str(index), "--out", str(tmp_path / "o"), "--endpoint", stub,
            "--model", "stub-vlm", "--api-key-env", "STUB_KEY", "--limit", "6", "--timeout", "5"]
    assert main(argv) == 0
    assert len(_Stub.seen) >= 12  # 6 questions without and with reports, plus the conflict questions
    for path, auth, body in _Stub.seen:
        assert path == "/v1/chat/completions" and auth == "Bearer sk-test" and body["model"] == "stub-vlm"
        image, text = body["messages"][0]["content"]
        assert image["type"] == "image_url" and text["type"] == "text"
        head, b64 = image["image_url"]["url"].split(",", 1)
        assert head == "data:image/png;base64" and base64.b64decode(b64)[:8] == b"\x89PNG\r\n\x1a\n"
        assert "Please choose from [yes, no]" in text["text"]
    assert sum("reference report(s): 1. " in b["messages"][0]["content"][1]["text"] for _, _, b in _Stub.seen) >= 6
    metrics = {m["name"]: m["value"] for m in json.loads((tmp_path / "o" / "results.json").read_text())["metrics"]}
    # the stub always says "yes": a constant answer copies nothing (0.5) and scores the share of true "yes"
    assert metrics["copy rate (follows the reports against a contradicting real image, balanced)"] == 0.5
    assert metrics["VQA accuracy with the retrieved reports"] == metrics["VQA accuracy, always 'yes'"]


def test_ask_refuses_bad_flags_and_a_slow_endpoint(stub, data_index, tmp_path, capsys):
    data, index = data_index
    base = ["ask", str(data), "--index", str(index), "--out", str(tmp_path / "o")]
    assert main([*base, "--endpoint", stub]) == 2 and "--model" in capsys.readouterr().err
    assert main([*base, "--endpoint", stub, "--model", "m", "--hf-path", str(tmp_path)]) == 2
    assert "exactly one" in capsys.readouterr().err
    assert main([*base, "--endpoint", "ftp://x", "--model", "m"]) == 2 and "http" in capsys.readouterr().err
    _Stub.delay = 1.0
    assert main([*base, "--endpoint", stub, "--model", "m", "--timeout", "0.2", "--limit", "1"]) == 2
    assert "--timeout 0.2" in capsys.readouterr().err
    assert not (tmp_path / "o" / "results.json").exists()


def test_parse_yes_no_and_url():
    assert [parse_yes_no(t) for t in ("Yes.", " no, because", "**yes**", "maybe", "nothing")] == [1, 0, 1, -1, -1]
    assert EndpointVLM("http://h:1/v1/", "m").url == "http://h:1/v1/chat/completions"
    with pytest.raises(ValueError, match="--timeout"):
        EndpointVLM("http://h:1", "m", timeout=0)
