"""An OpenAI-compatible chat endpoint as the answering model of the RAG pipeline (a local server such as vLLM,
llama.cpp or Ollama's ``/v1``, or a hosted GPT-4o-class model): each image goes as a PNG data URL in the
standard ``image_url`` message part, the retrieved reports in the prompt (the reference's RAG-PT prompt,
:func:`iclr25.mmed_rag.hf.rag_prompt`), and the reply is read as "yes" or "no". Only the standard library is
used (``urllib``); every request takes ``timeout`` seconds at most.

References: Xia et al., *MMed-RAG*, ICLR 2025 (§4: GPT-4o-class models compared; the prompt of
``data/training/alignment/*``); the OpenAI chat-completions message format.
"""

from __future__ import annotations

import base64
import json
import re
import struct
import urllib.error
import urllib.request
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["EndpointVLM", "png_data_url", "parse_yes_no"]


def png_data_url(image: Any) -> str:
    """A (3, H, W) float image in [0, 1] (or uint8) as a ``data:image/png;base64,...`` URL (8-bit RGB PNG)."""
    a = np.asarray(image)
    if a.ndim != 3 or a.shape[0] != 3:
        raise ValueError(f"image must have shape (3, H, W), got {a.shape}")
    if a.dtype != np.uint8:
        a = np.round(np.clip(np.nan_to_num(a.astype(np.float64)), 0, 1) * 255).astype(np.uint8)
    h, w = a.shape[1:]
    rows = np.transpose(a, (1, 2, 0)).reshape(h, 3 * w)
    raw = b"".join(b"\x00" + rows[i].tobytes() for i in range(h))  # filter type 0 on every scanline

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def parse_yes_no(text: str) -> int:
    """1 for a reply whose first word is "yes", 0 for "no", −1 otherwise (an unreadable reply)."""
    m = re.match(r"\W*(yes|no)\b", text.strip().lower())
    return -1 if m is None else int(m.group(1) == "yes")


class EndpointVLM:
    """Yes/no answers from an OpenAI-compatible ``/chat/completions`` endpoint.

    ``url``: the API base (``http://127.0.0.1:8000/v1``) or the full ``.../chat/completions`` address;
    ``model``: the model name the server expects; ``api_key``: sent as ``Authorization: Bearer`` when given;
    ``timeout``: seconds per request (a slower or unreachable server raises ``OSError`` naming the URL).
    """

    def __init__(self, url: str, model: str, *, api_key: str | None = None, timeout: float = 30.0) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"--endpoint must be an http(s) URL, got {url!r}")
        if not (isinstance(timeout, (int, float)) and timeout > 0):
            raise ValueError(f"--timeout must be > 0 seconds, got {timeout!r}")
        base = url.rstrip("/")
        self.url = base if base.endswith("/chat/completions") else base + "/chat/completions"
        self.model, self.api_key, self.timeout = model, api_key, float(timeout)

    def ask(self, image: Any, prompt: str) -> str:
        """The text of the first choice for one image and prompt (temperature 0, at most 4 tokens)."""
        body = {"model": self.model, "temperature": 0, "max_tokens": 4,
                "messages": [{"role": "user", "content": [
                    {"type": "image_url", "image_url": {"url": png_data_url(image)}},
                    {"type": "text", "text": prompt}]}]}
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(self.url, data=json.dumps(body).encode(), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                reply = json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            raise OSError(f"--endpoint {self.url}: HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, TimeoutError) as exc:
            reason = getattr(exc, "reason", exc)
            raise OSError(f"--endpoint {self.url}: no answer within --timeout {self.timeout:g} s ({reason})") from None
        except json.JSONDecodeError:
            raise OSError(f"--endpoint {self.url}: the reply is not JSON") from None
        try:
            return str(reply["choices"][0]["message"]["content"])
        except (KeyError, IndexError, TypeError):
            raise OSError(f"--endpoint {self.url}: the reply has no choices[0].message.content") from None

    def answers(self, images: Any, prompts: Sequence[str]) -> np.ndarray:
        """Yes (1) / no (0) / unreadable (−1) for each (image, prompt) pair, one request each."""
        if len(images) != len(prompts):
            raise ValueError(f"mismatched counts: {len(images)} images, {len(prompts)} prompts")
        return np.array([parse_yes_no(self.ask(x, p)) for x, p in zip(images, prompts, strict=True)], np.int64)
