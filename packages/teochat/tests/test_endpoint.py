"""An OpenAI-compatible endpoint as the assistant, against a stub server on 127.0.0.1 that checks the request."""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest
from PIL import Image

from iclr25.teochat.endpoint import EndpointAssistant, EndpointError


@pytest.fixture()
def stub():
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the http.server API
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
            if body.get("model") == "broken":
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b'{"oops": 1}')
                return
            parts = body["messages"][0]["content"]
            n = sum(p["type"] == "image_url" for p in parts)
            reply = {"choices": [{"message": {"role": "assistant", "content": f"[10, 10, 40, 40] n={n}"}}]}
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    server.shutdown()
    server.server_close()


def test_frames_go_as_dated_data_urls_in_chronological_order(stub, monkeypatch):
    url, seen = stub
    monkeypatch.setenv("STUB_KEY", "secret")
    asst = EndpointAssistant(url, "gpt-4o", timeout=5, api_key_env="STUB_KEY")
    frames = np.zeros((3, 8, 8, 3), dtype=np.uint8)
    frames[1] += 100
    answer = asst.ask(frames, "identify the buildings that changed .", dates=["2020-01-01", "2020-06-01", "2021-01-01"])
    assert answer == "[10, 10, 40, 40] n=3"
    req = seen[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer secret"
    body = req["body"]
    assert body["model"] == "gpt-4o" and body["temperature"] == 0
    parts = body["messages"][0]["content"]
    texts = [p["text"] for p in parts if p["type"] == "text"]
    assert texts[1] == "Image 1 (2020-01-01):" and texts[3] == "Image 3 (2021-01-01):"
    assert "identify the buildings that changed" in texts[-1]
    urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
    assert all(u.startswith("data:image/png;base64,") for u in urls)
    import base64
    import io

    second = np.asarray(Image.open(io.BytesIO(base64.b64decode(urls[1].split(",", 1)[1]))))
    assert (second == 100).all()  # the frames arrive in the order given, losslessly


def test_endpoint_errors_are_one_line(stub, tmp_path, capsys):
    url, _ = stub
    with pytest.raises(EndpointError, match="not a chat completion"):
        EndpointAssistant(url, "broken", timeout=5).ask(np.zeros((1, 8, 8, 3), np.uint8), "what changed ?")
    with pytest.raises(ValueError, match="--timeout must be a number of seconds > 0"):
        EndpointAssistant(url, "m", timeout=0)
    with pytest.raises(ValueError, match="--endpoint must be an http"):
        EndpointAssistant("ftp://x", "m")
    from iclr25.teochat.cli import main

    site = tmp_path / "site"
    site.mkdir()
    for d in ("2020-01-01", "2021-01-01"):
        Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(site / f"{d}.png")
    # a closed port: refused within the timeout, one line, exit 2
    assert main(["chat", "--endpoint", "http://127.0.0.1:9/v1", "--endpoint-model", "m", "--timeout", "2",
                 "--sequence", str(site), "--question", "what changed ?"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--endpoint http://127.0.0.1:9/v1/chat/completions" in err[0]
    assert main(["chat", "--endpoint", url, "--endpoint-model", "m", "--sequence", str(site),
                 "--question", "what changed ?"]) == 0
    assert "n=2" in capsys.readouterr().out
