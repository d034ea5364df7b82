"""An OpenAI-compatible chat-completions endpoint as the assistant (the paper compares with GPT-4o and Gemini).

The frames of one sequence go in one user message, in chronological order, each as a PNG data URL preceded by
its reference and date (``Image 1 (2019-03-02):``), as TEOChat's interleaved prompt; the question follows.
Greedy (``temperature`` 0). The client is the federation's :class:`iclr25.utils.endpoint.ChatEndpoint`
(standard library only): every request has a timeout, a refused connection, HTTP 429 or a 5xx answer is
retried, and an unreachable server, an HTTP error or a reply that is not a chat completion is one
:class:`~iclr25.utils.endpoint.EndpointError` line naming the URL. The API key, if any, is read from an
environment variable, never from the command line.

References: Irvin et al., TEOChat, ICLR 2025, Sec. 4 (comparison with GPT-4o and Gemini 1.5 Pro).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from iclr25.utils.endpoint import ChatEndpoint, EndpointError, api_key_from_env, png_data_url, user_message

from .conversation import Example
from .synth import EOSequence

__all__ = ["EndpointAssistant", "EndpointError", "frame_data_url"]

#: appended to every question: the answer format of the box tasks
BOX_FORMAT = "Boxes are [x1, y1, x2, y2] in 0-100 coordinates."


def frame_data_url(frame: np.ndarray) -> str:
    """A uint8 ``(H, W, 3)`` frame as a ``data:image/png;base64,...`` URL (lossless)."""
    f = np.asarray(frame)
    if f.ndim != 3 or f.shape[-1] != 3 or f.dtype != np.uint8:
        raise ValueError(f"frame must be a uint8 (H, W, 3) array, got {f.dtype} {f.shape}")
    return png_data_url(f)


class EndpointAssistant:
    """Ask an OpenAI-compatible ``/v1/chat/completions`` endpoint about a dated frame sequence.

    ``url`` is the server's base URL (``http://127.0.0.1:8000/v1``) or the full ``.../chat/completions`` URL;
    ``api_key_env`` names an environment variable holding a bearer token; ``retries`` more tries after a refused
    connection, HTTP 429 or a 5xx (waiting ``backoff``, ``2·backoff``, ... seconds).
    """

    def __init__(self, url: str, model: str, *, timeout: float = 60.0, api_key_env: str | None = None,
                 max_tokens: int = 64, retries: int = 2, backoff: float = 1.0) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError("--endpoint-model must name the served model")
        self.client = ChatEndpoint(url, model, api_key=api_key_from_env(api_key_env), timeout=timeout,
                                   retries=retries, backoff=backoff, temperature=0.0, max_tokens=max_tokens)

    @property
    def url(self) -> str:
        """The full ``.../chat/completions`` address."""
        return self.client.url

    def messages(self, frames: np.ndarray, question: str, dates: Sequence[str] | None = None) -> list[dict]:
        """The one user message: text and image parts interleaved in chronological order."""
        n = len(frames)
        if dates is not None and len(dates) != n:
            raise ValueError(f"dates must give one date per frame ({n}), got {len(dates)}")
        parts = [f"These are {n} satellite images in chronological order:" if n > 1 else "This is a satellite image:"]
        for j, f in enumerate(frames):
            parts.append(f"Image {j + 1}" + (f" ({dates[j]})" if dates is not None else "") + ":")
            parts.append(frame_data_url(f))
        parts.append(f"{question} {BOX_FORMAT}")
        return [user_message(*parts)]

    def ask(self, frames: np.ndarray, question: str, dates: Sequence[str] | None = None) -> str:
        """The endpoint's answer about chronological uint8 frames ``(T, H, W, 3)``."""
        if not isinstance(question, str) or not question.strip():
            raise ValueError("question must be a non-empty string")
        frames = np.asarray(frames)
        if frames.ndim != 4 or frames.shape[-1] != 3 or len(frames) == 0:
            raise ValueError(f"frames must be (T, H, W, 3) with T >= 1, got {frames.shape}")
        return self.client.complete(self.messages(frames, question, dates)).strip()

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
