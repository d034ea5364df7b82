"""Load a user's own Hugging Face model from a local folder, never from the hub.

Several packages let a researcher run the method on their own model (``--hf-path DIR``); they all need the
same checks: the folder holds a ``config.json``, ``transformers`` is installed (the package's ``hf`` extra),
the weights load with ``local_files_only=True`` (so nothing is downloaded), and a failure names the flag and
the folder in one line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["load_local_model"]


def load_local_model(path: str | os.PathLike[str], model_class: str = "AutoModelForCausalLM", *,
                     flag: str = "--hf-path", extra: str | None = None, what: str = "model",
                     tokenizer: bool = True) -> tuple[Any, Any]:
    """``(tokenizer, model)`` from a local Hugging Face folder, in eval mode; ``tokenizer`` is ``None`` when
    ``tokenizer=False``.

    Args:
        path: the folder (``config.json``, weights, tokenizer files).
        model_class: the ``transformers`` class to load with, by name (``"AutoModelForCausalLM"``,
            ``"LlavaForConditionalGeneration"``, ...).
        flag: the command-line flag the user typed, for error messages.
        extra: the install hint for ``transformers``, e.g. ``"iclr25-llm-regret[hf]"``.
        what: what the folder should hold, for error messages (``"LLaVA model"``).
        tokenizer: also load ``AutoTokenizer`` from the same folder.

    Raises:
        FileNotFoundError: ``path`` is not a folder, or has no ``config.json``.
        ImportError: ``transformers`` is not installed (the message says what to install).
        ValueError: the folder's files do not load as that class.
    """
    p = Path(path)
    if not p.is_dir():
        raise FileNotFoundError(f"{flag} {p}: no such folder (expected a Hugging Face {what} folder)")
    if not (p / "config.json").is_file():
        raise FileNotFoundError(f"{flag} {p}: no config.json (expected a Hugging Face {what} folder)")
    try:
        import transformers  # noqa: PLC0415 - an optional extra of the packages that call this
    except ImportError as exc:
        hint = f": pip install '{extra}'" if extra else ""
        raise ImportError(f"{flag} needs transformers{hint}") from exc
    cls = getattr(transformers, model_class, None)
    if cls is None:
        raise ValueError(f"transformers has no class {model_class!r} (model_class=)")
    try:
        tok = transformers.AutoTokenizer.from_pretrained(p, local_files_only=True) if tokenizer else None
        model = cls.from_pretrained(p, local_files_only=True)
    except (OSError, ValueError, KeyError) as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
        raise ValueError(f"{flag} {p}: cannot load a {what} ({first})") from None
    model.eval()
    return tok, model
