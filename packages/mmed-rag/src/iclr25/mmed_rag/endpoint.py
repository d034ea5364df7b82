"""An OpenAI-compatible chat endpoint as the answering model of the RAG pipeline (a local server such as vLLM,
llama.cpp or Ollama's ``/v1``, or a hosted GPT-4o-class model): each image goes as a PNG data URL in the
standard ``image_url`` message part, the retrieved reports in the prompt (the reference's RAG-PT prompt,
:func:`iclr25.mmed_rag.hf.rag_prompt`), and the reply is read as "yes" or "no". The client is the federation's
:class:`iclr25.utils.endpoint.ChatEndpoint` (standard library only): every request takes ``timeout`` seconds at
most, a refused connection, HTTP 429 or a 5xx is retried, and every failure is one
:class:`~iclr25.utils.endpoint.EndpointError` line naming ``--endpoint`` and its URL.

References: Xia et al., *MMed-RAG*, ICLR 2025 (§4: GPT-4o-class models compared; the prompt of
``data/training/alignment/*``); the OpenAI chat-completions message format.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from iclr25.utils.endpoint import ChatEndpoint, EndpointError, png_data_url

__all__ = ["EndpointVLM", "EndpointError", "png_data_url", "parse_yes_no"]


def parse_yes_no(text: str) -> int:
    """1 for a reply whose first word is "yes", 0 for "no", −1 otherwise (an unreadable reply)."""
    m = re.match(r"\W*(yes|no)\b", text.strip().lower())
    return -1 if m is None else int(m.group(1) == "yes")


class EndpointVLM:
    """Yes/no answers from an OpenAI-compatible ``/chat/completions`` endpoint.

    ``url``: the API base (``http://127.0.0.1:8000/v1``) or the full ``.../chat/completions`` address;
    ``model``: the model name the server expects; ``api_key``: sent as ``Authorization: Bearer`` when given
    (the command line reads it from the environment variable ``--api-key-env`` names); ``timeout``: seconds per
    request (a slower or unreachable server raises :class:`~iclr25.utils.endpoint.EndpointError`, an
    ``OSError``, naming the URL); ``retries``: more tries after a refused connection, HTTP 429 or a 5xx.
    """

    def __init__(self, url: str, model: str, *, api_key: str | None = None, timeout: float = 30.0,
                 retries: int = 2, backoff: float = 1.0) -> None:
        self.client = ChatEndpoint(url, model, api_key=api_key, timeout=timeout, retries=retries, backoff=backoff,
                                   temperature=0.0, max_tokens=4)

    @property
    def url(self) -> str:
        """The full ``.../chat/completions`` address."""
        return self.client.url

    def ask(self, image: Any, prompt: str) -> str:
        """The text of the first choice for one (3, H, W) image and prompt (temperature 0, at most 4 tokens):
        one user message, the image part first, then the prompt."""
        return self.client.ask(png_data_url(image), prompt)

    def answers(self, images: Any, prompts: Sequence[str]) -> np.ndarray:
        """Yes (1) / no (0) / unreadable (−1) for each (image, prompt) pair, one request each."""
        if len(images) != len(prompts):
            raise ValueError(f"mismatched counts: {len(images)} images, {len(prompts)} prompts")
        return np.array([parse_yes_no(self.ask(x, p)) for x, p in zip(images, prompts, strict=True)], np.int64)
