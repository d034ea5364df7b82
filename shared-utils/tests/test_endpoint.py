"""iclr25.utils.endpoint against the stub server of iclr25.utils.testing: what is sent, retries, timeouts."""

import base64
import zlib

import numpy as np
import pytest

from iclr25.utils.endpoint import ChatEndpoint, EndpointError, api_key_from_env, png_data_url, user_message
from iclr25.utils.testing import stub_chat_server


def test_request_carries_model_key_options_and_image():
    with stub_chat_server(lambda body: f"{len(body['messages'][0]['content'])} parts") as stub:
        ep = ChatEndpoint(stub.url, "m1", api_key="sk-1", max_tokens=7, temperature=0.5)
        img = png_data_url(np.full((3, 4, 5), 0.5))  # channels first, floats
        assert ep.ask("Is it?", img) == "2 parts"
        req = stub.requests[0]
        assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-1"
        body = req["body"]
        assert body["model"] == "m1" and body["max_tokens"] == 7 and body["temperature"] == 0.5
        part = body["messages"][0]["content"][1]
        assert part["type"] == "image_url" and part["image_url"]["url"].startswith("data:image/png;base64,")


def test_png_is_a_valid_png_of_the_right_size():
    raw = base64.b64decode(png_data_url(np.zeros((5, 4, 3), np.uint8)).split(",", 1)[1])
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = int.from_bytes(raw[16:20], "big"), int.from_bytes(raw[20:24], "big")
    assert (w, h) == (4, 5)
    idat = raw[raw.index(b"IDAT") + 4: raw.index(b"IEND") - 8]
    assert len(zlib.decompress(idat)) == 5 * (1 + 4 * 3)
    with pytest.raises(ValueError, match="shape"):
        png_data_url(np.zeros((4, 4)))


def test_retries_then_fails_with_one_line():
    with stub_chat_server("yes", fail_first=2) as stub:
        assert ChatEndpoint(stub.url, "m", retries=2, backoff=0.01).complete([user_message("hi")]) == "yes"
        assert len(stub.requests) == 3
    with stub_chat_server("yes", fail_first=9) as stub:
        with pytest.raises(EndpointError, match=r"^--endpoint .*: HTTP 503 .*after 2 tries$"):
            ChatEndpoint(stub.url, "m", retries=1, backoff=0.01).ask("hi")


def test_timeout_and_unreachable_and_bad_options():
    with stub_chat_server("late", delay=1.5) as stub:
        with pytest.raises(EndpointError, match="no answer within --timeout 0.3 s"):
            ChatEndpoint(stub.url, "m", timeout=0.3, retries=0).ask("hi")
    with pytest.raises(EndpointError, match="unreachable"):
        ChatEndpoint("http://127.0.0.1:9/v1", "m", timeout=2, retries=0).ask("hi")
    for kw, msg in ((dict(url="ftp://x"), "--endpoint"), (dict(model=""), "--model"),
                    (dict(timeout=0), "--timeout"), (dict(max_tokens=0), "--max-tokens"),
                    (dict(retries=-1), "--http-retries"), (dict(temperature=float("nan")), "--temperature")):
        with pytest.raises(ValueError, match=msg):
            ChatEndpoint(**{"url": "http://h/v1", "model": "m", **kw})


def test_api_key_comes_from_the_environment(monkeypatch):
    assert api_key_from_env(None) is None
    monkeypatch.setenv("K_TEST", "abc")
    assert api_key_from_env("K_TEST") == "abc"
    monkeypatch.delenv("K_TEST")
    with pytest.raises(ValueError, match="--api-key-env K_TEST: the environment variable is not set"):
        api_key_from_env("K_TEST")


def test_a_redirect_to_another_origin_never_receives_the_key():
    with stub_chat_server("elsewhere") as other, stub_chat_server(redirect=other.url + "/chat/completions") as stub:
        with pytest.raises(EndpointError, match=r"HTTP 302 redirect to http://127\.0\.0\.1:\d+/v1/chat/completions; "
                                                r"redirects are not followed") as err:
            ChatEndpoint(stub.url, "m", api_key="sk-secret-123", retries=0).ask("hi")
        assert stub.requests[0]["auth"] == "Bearer sk-secret-123"  # the endpoint the user named gets it
        assert other.requests == []  # the server the redirect names gets nothing, key or not
        assert "sk-secret" not in str(err.value)


def test_a_dripping_endpoint_is_cut_at_the_timeout():
    import time

    with stub_chat_server("a long answer " * 20, drip=0.3) as stub:
        t0 = time.perf_counter()
        with pytest.raises(EndpointError, match="no answer within --timeout 1 s"):
            ChatEndpoint(stub.url, "m", timeout=1, retries=0).ask("hi")
        assert time.perf_counter() - t0 < 2.5


def test_the_key_is_in_no_message_or_repr():
    ep = ChatEndpoint("http://127.0.0.1:9/v1", "m", api_key="sk-secret-456", timeout=1, retries=0)
    assert "sk-secret" not in repr(ep)
    with pytest.raises(EndpointError) as err:
        ep.ask("hi")
    assert "sk-secret" not in str(err.value)
