"""An OpenAI-compatible ``/chat/completions`` client, standard library only: one place for the URL, the API key
from an environment variable, the timeout, the retries and the one-line errors every package's ``--endpoint``
gives.

A package wraps :class:`ChatEndpoint` with its own prompt (llm-regret's policy question, teochat's dated frames,
mmed-rag's image and reports); the stub server for its tests is :func:`iclr25.utils.testing.stub_chat_server`.

Examples
--------
>>> ep = ChatEndpoint("http://127.0.0.1:8000/v1", "my-model", timeout=5)
>>> ep.url
'http://127.0.0.1:8000/v1/chat/completions'
>>> parts = user_message("Is there a cat?", png_data_url(np.zeros((2, 2, 3), np.uint8))).get("content")
>>> " then ".join(part.get("type") for part in parts)
'text then image_url'
"""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import os
import struct
import time
import urllib.error
import urllib.request
import zlib
from typing import Any

import numpy as np

__all__ = ["ChatEndpoint", "EndpointError", "api_key_from_env", "png_data_url", "user_message"]

#: HTTP statuses worth another try (rate limit, a server busy or restarting).
RETRY_STATUS = (429, 500, 502, 503, 504)


class EndpointError(OSError):
    """The endpoint could not be reached, did not answer in time, or answered with something that is not a chat
    completion. The message is one line that names ``--endpoint`` and its URL (``run_main`` prints it, exit 2)."""


def api_key_from_env(name: str | None, *, option: str = "--api-key-env") -> str | None:
    """The bearer token held by the environment variable ``name`` (``None`` when no name is given). A key is never
    taken from the command line, where it would stay in the shell's history and the process list."""
    if not name:
        return None
    key = os.environ.get(name)
    if not key:
        raise ValueError(f"{option} {name}: the environment variable is not set")
    return key


def png_data_url(image: Any) -> str:
    """An RGB image as a ``data:image/png;base64,...`` URL (8-bit PNG, written with zlib alone).

    ``image``: uint8 ``(H, W, 3)``, or floats in [0, 1] as ``(H, W, 3)`` or channels-first ``(3, H, W)``.
    """
    a = np.asarray(image)
    if a.ndim == 3 and a.shape[0] == 3 and a.shape[-1] != 3:
        a = np.transpose(a, (1, 2, 0))
    if a.ndim != 3 or a.shape[-1] != 3:
        raise ValueError(f"image must have shape (H, W, 3) or (3, H, W), got {a.shape}")
    if a.dtype != np.uint8:
        a = np.round(np.clip(np.nan_to_num(a.astype(np.float64)), 0, 1) * 255).astype(np.uint8)
    h, w = a.shape[:2]
    rows = np.ascontiguousarray(a).reshape(h, 3 * w)
    raw = b"".join(b"\x00" + rows[i].tobytes() for i in range(h))  # filter type 0 on every scanline

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def user_message(*parts: str) -> dict[str, Any]:
    """One user message from text and image parts in order (a ``data:image/...`` string is an image part)."""
    content = [{"type": "image_url", "image_url": {"url": p}} if p.startswith("data:image/")
               else {"type": "text", "text": p} for p in parts]
    return {"role": "user", "content": content}


def _positive(value: Any, option: str, *, integer: bool = False, zero: bool = False) -> None:
    ok = (not isinstance(value, bool) and isinstance(value, (int, float))
          and math.isfinite(value) and (value >= 0 if zero else value > 0))
    if integer:
        ok = ok and isinstance(value, int)
    if not ok:
        kind = "an integer" if integer else "a number"
        raise ValueError(f"{option} must be {kind} {'>= 0' if zero else '> 0'}, got {value!r}")


@dataclasses.dataclass
class ChatEndpoint:
    """An OpenAI-compatible chat-completions endpoint.

    ``url``: the API base (``http://127.0.0.1:8000/v1``) or the full ``.../chat/completions`` address;
    ``model``: the name the server serves; ``api_key``: sent as ``Authorization: Bearer`` when given (read it
    with :func:`api_key_from_env`); ``timeout``: seconds to wait for each answer, final (an endpoint that accepts
    and never answers fails after it); ``retries``: more tries after a refused connection, HTTP 429 or a 5xx,
    waiting ``backoff``, ``2·backoff``, ... seconds; ``temperature`` and ``max_tokens`` go into every request.
    """

    url: str
    model: str
    api_key: str | None = dataclasses.field(default=None, repr=False)
    timeout: float = 60.0
    retries: int = 2
    backoff: float = 1.0
    temperature: float = 0.0
    max_tokens: int = 512

    def __post_init__(self) -> None:
        if not isinstance(self.url, str) or not self.url.startswith(("http://", "https://")):
            raise ValueError(f"--endpoint must be an http(s) URL such as http://127.0.0.1:8000/v1, got {self.url!r}")
        if not isinstance(self.model, str) or not self.model.strip():
            raise ValueError("--model must name the served model")
        _positive(self.timeout, "--timeout")
        _positive(self.retries, "--http-retries", integer=True, zero=True)
        _positive(self.backoff, "backoff", zero=True)
        _positive(self.temperature, "--temperature", zero=True)
        _positive(self.max_tokens, "--max-tokens", integer=True)
        base = self.url.rstrip("/")
        self.url = base if base.endswith("/chat/completions") else base + "/chat/completions"

    def _fail(self, why: str) -> EndpointError:
        return EndpointError(f"--endpoint {self.url}: {why}")

    def complete(self, messages: list[dict[str, Any]], **fields: Any) -> str:
        """The text of the first choice for ``messages`` (``fields`` override temperature, max_tokens, ...)."""
        body = {"model": self.model, "temperature": self.temperature, "max_tokens": self.max_tokens,
                "messages": messages, **fields}
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(self.url, data=json.dumps(body).encode(), headers=headers, method="POST")
        tries = ""
        for attempt in range(self.retries + 1):
            tries = f" after {attempt + 1} tries" if attempt else ""
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 - the user's URL
                    reply = json.loads(resp.read().decode("utf-8"))
                break
            except urllib.error.HTTPError as exc:
                if exc.code in RETRY_STATUS and attempt < self.retries:
                    time.sleep(self.backoff * 2 ** attempt)
                    continue
                raise self._fail(f"HTTP {exc.code} {exc.reason}{tries}") from None
            except (TimeoutError, urllib.error.URLError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                if isinstance(exc, TimeoutError) or isinstance(reason, TimeoutError):
                    raise self._fail(f"no answer within --timeout {self.timeout:g} s") from None
                if attempt < self.retries:
                    time.sleep(self.backoff * 2 ** attempt)
                    continue
                raise self._fail(f"unreachable{tries} ({reason})") from None
            except (UnicodeDecodeError, json.JSONDecodeError):
                raise self._fail("the reply is not JSON") from None
        try:
            return str(reply["choices"][0]["message"]["content"])
        except (KeyError, IndexError, TypeError):
            raise self._fail("the reply is not a chat completion (no choices[0].message.content)") from None

    def ask(self, *parts: str, **fields: Any) -> str:
        """One user message of text and image parts (see :func:`user_message`); the answer's text."""
        return self.complete([user_message(*parts)], **fields)
