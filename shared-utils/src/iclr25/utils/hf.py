"""Load a user's own Hugging Face model from a local folder, never from the hub.

Several packages let a researcher run the method on their own model (``--hf-path DIR``); they all need the
same checks: the folder holds a ``config.json``, ``transformers`` is installed (the package's ``hf`` extra),
the weights load with ``local_files_only=True`` (so nothing is downloaded), and a failure names the flag and
the folder in one line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["load_local_model", "read_model_config"]


def read_model_config(path: str | os.PathLike[str], *, flag: str = "--hf-path", what: str = "model") -> dict:
    """The ``config.json`` of a local Hugging Face folder as a dict, read before any weights (to refuse a model
    of the wrong kind in one line, in well under a second).

    Raises ``FileNotFoundError`` for a missing folder or ``config.json`` and ``ValueError`` for a file that is
    not a JSON object; each message names ``flag`` and the folder, and says ``what`` the folder should hold.

    >>> read_model_config("/no/such/folder", what="LLaVA model")
    Traceback (most recent call last):
    ...
    FileNotFoundError: --hf-path /no/such/folder: no such folder (expected a Hugging Face LLaVA model folder)
    """
    p = Path(path)
    if not p.is_dir():
        raise FileNotFoundError(f"{flag} {p}: no such folder (expected a Hugging Face {what} folder)")
    cfg_file = p / "config.json"
    if not cfg_file.is_file():
        raise FileNotFoundError(f"{flag} {p}: no config.json (expected a Hugging Face {what} folder)")
    try:
        cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        detail = (str(exc).splitlines() or [type(exc).__name__])[0][:120]
        raise ValueError(f"{flag} {p}: config.json is not readable JSON ({detail})") from None
    if not isinstance(cfg, dict):
        raise ValueError(f"{flag} {p}: config.json is not a JSON object (expected a Hugging Face {what} folder)")
    return cfg


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
        ValueError: ``config.json`` is not a JSON object (:func:`read_model_config`).
        ImportError: ``transformers`` is not installed (the message says what to install).
        ValueError: the folder's files do not load as that class.
    """
    p = Path(path)
    read_model_config(p, flag=flag, what=what)
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
