"""An OpenAI-compatible chat-completions endpoint as the assistant (the paper compares with GPT-4o and Gemini).

The frames of one sequence go in one user message, in chronological order, each as a PNG data URL preceded by
its reference and date (``image 1 (2019-03-02):``), as TEOChat's interleaved prompt; the question follows.
Greedy (``temperature`` 0). Every request has a timeout; an unreachable server, an HTTP error or a reply that
is not a chat completion is one ``EndpointError`` line naming the URL. The API key, if any, is read from an
environment variable, never from the command line.

References: Irvin et al., TEOChat, ICLR 2025, Sec. 4 (comparison with GPT-4o and Gemini 1.5 Pro).
"""

from __future__ import annotations

import base64
import io
import json
import math
import os
import urllib.error
import urllib.request
from collections.abc import Sequence

import numpy as np

from .conversation import Example
from .synth import EOSequence

__all__ = ["EndpointAssistant", "EndpointError", "frame_data_url"]


class EndpointError(ConnectionError):
    """The endpoint could not be reached or answered with something that is not a chat completion."""


def frame_data_url(frame: np.ndarray) -> str:
    """A uint8 ``(H, W, 3)`` frame as a ``data:image/png;base64,...`` URL."""
    from PIL import Image  # noqa: PLC0415

    f = np.asarray(frame)
    if f.ndim != 3 or f.shape[-1] != 3 or f.dtype != np.uint8:
        raise ValueError(f"frame must be a uint8 (H, W, 3) array, got {f.dtype} {f.shape}")
    buf = io.BytesIO()
    Image.fromarray(f).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


class EndpointAssistant:
    """Ask an OpenAI-compatible ``/v1/chat/completions`` endpoint about a dated frame sequence.

    ``url`` is the server's base URL (``http://127.0.0.1:8000/v1``) or the full ``.../chat/completions`` URL;
    ``api_key_env`` names an environment variable holding a bearer token.
    """

    def __init__(self, url: str, model: str, *, timeout: float = 60.0, api_key_env: str | None = None,
                 max_tokens: int = 64) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"--endpoint must be an http(s) URL, got {url!r}")
        if not isinstance(model, str) or not model.strip():
            raise ValueError("--endpoint-model must name the served model")
        if not (isinstance(timeout, (int, float)) and math.isfinite(timeout) and timeout > 0):
            raise ValueError(f"--timeout must be a number of seconds > 0, got {timeout!r}")
        self.url = url.rstrip("/")
        if not self.url.endswith("/chat/completions"):
            self.url += "/chat/completions"
        self.model, self.timeout, self.max_tokens = model, float(timeout), int(max_tokens)
        self.api_key = None
        if api_key_env:
            self.api_key = os.environ.get(api_key_env)
            if not self.api_key:
                raise ValueError(f"--api-key-env {api_key_env}: the environment variable is not set")

    def messages(self, frames: np.ndarray, question: str, dates: Sequence[str] | None = None) -> list[dict]:
        """The one user message: text and image parts interleaved in chronological order."""
        n = len(frames)
        if dates is not None and len(dates) != n:
            raise ValueError(f"dates must give one date per frame ({n}), got {len(dates)}")
        head = (f"These are {n} satellite images in chronological order:" if n > 1
                else "This is a satellite image:")
        parts: list[dict] = [{"type": "text", "text": head}]
        for j, f in enumerate(frames):
            label = f"Image {j + 1}" + (f" ({dates[j]})" if dates is not None else "") + ":"
            parts.append({"type": "text", "text": label})
            parts.append({"type": "image_url", "image_url": {"url": frame_data_url(f)}})
        parts.append({"type": "text", "text": question + " Boxes are [x1, y1, x2, y2] in 0-100 coordinates."})
        return [{"role": "user", "content": parts}]

    def ask(self, frames: np.ndarray, question: str, dates: Sequence[str] | None = None) -> str:
        """The endpoint's answer about chronological uint8 frames ``(T, H, W, 3)``."""
        if not isinstance(question, str) or not question.strip():
            raise ValueError("question must be a non-empty string")
        frames = np.asarray(frames)
        if frames.ndim != 4 or frames.shape[-1] != 3:
            raise ValueError(f"frames must be (T, H, W, 3), got {frames.shape}")
        body = json.dumps({"model": self.model, "messages": self.messages(frames, question, dates),
                           "temperature": 0, "max_tokens": self.max_tokens}).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 - the user's own URL
                reply = json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            raise EndpointError(f"--endpoint {self.url}: HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            why = getattr(exc, "reason", exc)
            raise EndpointError(f"--endpoint {self.url}: unreachable or no answer within --timeout "
                                f"{self.timeout:g} s ({why})") from None
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise EndpointError(f"--endpoint {self.url}: the reply is not JSON") from None
        try:
            return str(reply["choices"][0]["message"]["content"]).strip()
        except (KeyError, IndexError, TypeError):
            raise EndpointError(f"--endpoint {self.url}: the reply is not a chat completion "
                                "(no choices[0].message.content)") from None

    def predict(self, examples: Sequence[Example], sequences: Sequence[EOSequence]) -> list[str]:
        """Answers to ``examples`` (single-image tasks show their one frame)."""
        out = []
        for e in examples:
            s = sequences[e.seq]
            chron = s.chronological()
            dates = [s.dates[i] for i in s.order]
            idx = list(e.frames) if e.frames is not None else list(range(len(chron)))
            out.append(self.ask(chron[idx], e.question, [dates[i] for i in idx]))
        return out
