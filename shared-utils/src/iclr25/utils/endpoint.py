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
import contextlib
import dataclasses
import http.client
import json
import math
import os
import socket
import struct
import threading
import time
import urllib.parse
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
    with :func:`api_key_from_env`; never sent on to the server a redirect names, never in a message or ``repr``);
    ``timeout``: seconds each request may take in all, a deadline (an endpoint that never answers, or sends its
    answer a byte at a time, fails after it); ``retries``: more tries after a refused connection, HTTP 429 or a 5xx,
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

    def _post_once(self, data: bytes, headers: dict[str, str]) -> tuple[int, str, str | None, bytes]:
        """One POST, ended at ``timeout`` seconds however slowly the server sends: ``(status, reason, location,
        body)``. A watchdog shuts the socket down at the deadline, so a server that drips a byte at a time, or
        never answers, cannot hold the command past ``--timeout``."""
        parts = urllib.parse.urlsplit(self.url)
        deadline = time.monotonic() + self.timeout
        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = cls(parts.hostname or "", parts.port, timeout=self.timeout)
        expired = threading.Event()

        def cut() -> None:
            expired.set()
            sock = conn.sock
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

        watchdog = threading.Timer(self.timeout, cut)
        watchdog.daemon = True
        watchdog.start()
        try:
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            conn.request("POST", path, body=data, headers=headers)
            resp = conn.getresponse()
            chunks: list[bytes] = []
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or expired.is_set():
                    raise TimeoutError
                if conn.sock is not None:
                    conn.sock.settimeout(left)
                chunk = resp.read1(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
            if expired.is_set():
                raise TimeoutError
            return resp.status, resp.reason, resp.getheader("Location"), b"".join(chunks)
        except (OSError, http.client.HTTPException) as exc:
            if expired.is_set() or isinstance(exc, TimeoutError):
                raise TimeoutError from None
            raise
        finally:
            watchdog.cancel()
            conn.close()

    def complete(self, messages: list[dict[str, Any]], **fields: Any) -> str:
        """The text of the first choice for ``messages`` (``fields`` override temperature, max_tokens, ...).

        Each HTTP request ends within ``timeout`` seconds in all (a deadline, not a per-read limit). A redirect
        is never followed: the key would go with it to whatever server the ``Location`` names; the error names
        that server so the user can give the final URL as ``--endpoint``.
        """
        body = {"model": self.model, "temperature": self.temperature, "max_tokens": self.max_tokens,
                "messages": messages, **fields}
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        data = json.dumps(body).encode()
        tries = ""
        for attempt in range(self.retries + 1):
            tries = f" after {attempt + 1} tries" if attempt else ""
            try:
                status, reason, location, raw = self._post_once(data, headers)
            except TimeoutError:
                raise self._fail(f"no answer within --timeout {self.timeout:g} s") from None
            except (OSError, http.client.HTTPException) as exc:
                if attempt < self.retries:
                    time.sleep(self.backoff * 2 ** attempt)
                    continue
                raise self._fail(f"unreachable{tries} ({getattr(exc, 'strerror', None) or exc})") from None
            if 300 <= status < 400:
                where = urllib.parse.urlsplit(urllib.parse.urljoin(self.url, location or ""))
                target = f"{where.scheme}://{where.netloc}{where.path}" if location else "nowhere"
                raise self._fail(f"HTTP {status} redirect to {target}; redirects are not followed (the API key "
                                 "would go with them): give the final address as --endpoint")
            if status in RETRY_STATUS and attempt < self.retries:
                time.sleep(self.backoff * 2 ** attempt)
                continue
            if not 200 <= status < 300:
                raise self._fail(f"HTTP {status} {reason}{tries}")
            try:
                reply = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                raise self._fail("the reply is not JSON") from None
            break
        try:
            return str(reply["choices"][0]["message"]["content"])
        except (KeyError, IndexError, TypeError):
            raise self._fail("the reply is not a chat completion (no choices[0].message.content)") from None

    def ask(self, *parts: str, **fields: Any) -> str:
        """One user message of text and image parts (see :func:`user_message`); the answer's text."""
        return self.complete([user_message(*parts)], **fields)
