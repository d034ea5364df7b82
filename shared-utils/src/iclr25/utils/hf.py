"""Load a user's own Hugging Face model from a local folder, never from the hub.

Several packages let a researcher run the method on their own model (``--hf-path DIR``); they all need the
same checks: the folder holds a ``config.json``, ``transformers`` is installed (the package's ``hf`` extra),
the weights load with ``local_files_only=True`` (so nothing is downloaded), and a failure names the flag and
the folder in one line.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["DEVICE_MAPS", "load_local_model", "read_model_config", "tiny_llava", "write_tiny_llava"]

#: the ``--device-map`` values ``from_pretrained`` takes here (``accelerate`` places the layers itself)
DEVICE_MAPS = ("auto",)


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
                     tokenizer: bool = True, dtype: Any = None, device_map: str | None = None,
                     device: Any = None) -> tuple[Any, Any]:
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
        dtype: the weights' torch dtype, given to ``from_pretrained`` (``None``: as the folder loads, float32 for
            most), so a 7B model loads in 14 GB in ``torch.bfloat16``. Resolve a user's ``--dtype`` with
            :func:`iclr25.utils.device.torch_dtype` first (it refuses half precision on the CPU).
        device_map: ``"auto"``: ``from_pretrained`` places the layers over the visible GPUs (and the CPU)
            itself, which needs ``accelerate``; it overrides ``device``. ``None``: load, then move to ``device``.
        device: where the model goes when ``device_map`` is ``None`` (``None``: left where it loads, the CPU).

    Raises:
        FileNotFoundError: ``path`` is not a folder, or has no ``config.json``.
        ValueError: ``config.json`` is not a JSON object (:func:`read_model_config`).
        ValueError: ``device_map`` is not ``"auto"`` or ``None``.
        ImportError: ``transformers`` is not installed, or ``accelerate`` for a ``device_map`` (the message says
            what to install).
        ValueError: the folder's files do not load as that class.
    """
    p = Path(path)
    read_model_config(p, flag=flag, what=what)
    if device_map is not None and device_map not in DEVICE_MAPS:
        raise ValueError(f"--device-map must be one of {', '.join(DEVICE_MAPS)}, got {device_map!r}")
    if device_map is not None and importlib.util.find_spec("accelerate") is None:
        raise ImportError(f"--device-map {device_map} needs accelerate: pip install accelerate (or drop "
                          "--device-map and use --device)")
    try:
        import transformers  # noqa: PLC0415 - an optional extra of the packages that call this
    except ImportError as exc:
        hint = f": pip install '{extra}'" if extra else ""
        raise ImportError(f"{flag} needs transformers{hint}") from exc
    cls = getattr(transformers, model_class, None)
    if cls is None:
        raise ValueError(f"transformers has no class {model_class!r} (model_class=)")
    kw: dict[str, Any] = {}
    if dtype is not None:  # transformers >= 4.56 calls it dtype (torch_dtype before)
        major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
        kw["dtype" if (major, minor) >= (4, 56) else "torch_dtype"] = dtype
    if device_map is not None:
        kw["device_map"] = device_map
    try:
        tok = transformers.AutoTokenizer.from_pretrained(p, local_files_only=True) if tokenizer else None
        model = cls.from_pretrained(p, local_files_only=True, **kw)
    except (OSError, ValueError, KeyError) as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
        raise ValueError(f"{flag} {p}: cannot load a {what} ({first})") from None
    if device_map is None and device is not None:
        model = model.to(device)
    model.eval()
    return tok, model


def tiny_llava(vocab: Sequence[str], *, unk: str, pad: str, image_token: str = "<image>", bos: str | None = None,
               eos: str | None = None, text_ids: Mapping[str, int] | None = None, punctuation: bool = False,
               vision_layers: int = 2, vision_feature_layer: int | None = None, seed: int = 0) -> tuple[Any, Any]:
    """``(tokenizer, model)``: a tiny random ``LlavaForConditionalGeneration`` (a CLIP vision tower of width 32 on
    32 x 32 images in 8 px patches, 16 image tokens; a 2-layer Llama of width 32) and an offline word-level
    tokenizer over ``vocab``, for the one-step CPU runs of a paper rung (``--smoke``, tests). Never trained: it
    exercises a 7B model's code path, not a claim. Built from configs, so nothing is downloaded.

    Args:
        vocab: the tokenizer's words in id order (every special token below among them).
        unk: the tokenizer's unknown-word token.
        pad: its padding token.
        image_token: the word that stands for an image (the model's ``image_token_index``).
        bos: its begin-of-sequence token (``None``: none).
        eos: its end-of-sequence token (``None``: none).
        text_ids: the text config's ``bos_token_id``/``eos_token_id``/``pad_token_id``; default: the ids of
            ``bos``, ``eos`` and ``pad`` in ``vocab`` (``bos``/``eos`` of ``None``: 1).
        punctuation: split punctuation off words too (else white space only).
        vision_layers: the CLIP tower's layers.
        vision_feature_layer: the CLIP layer LLaVA reads (``None``: the config's default).
        seed: ``torch.manual_seed`` before the weights are drawn (same arguments, same weights).

    Needs ``transformers`` (the calling package's ``hf`` extra). Save both with ``save_pretrained`` or use
    :func:`write_tiny_llava`. The vocabulary is checked first, without importing anything:

    >>> tiny_llava(["a", "b"], unk="<unk>", pad="<pad>")
    Traceback (most recent call last):
    ...
    ValueError: vocab must hold each word once, the special tokens among them (missing: ['<unk>', '<pad>', '<image>'])
    """
    vocab = list(vocab)
    missing = [w for w in (unk, pad, bos, eos, image_token) if w is not None and w not in vocab]
    if missing or len(set(vocab)) != len(vocab):
        raise ValueError(f"vocab must hold each word once, the special tokens among them (missing: {missing})")
    import torch  # noqa: PLC0415 - the hf extra of the calling package
    from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: PLC0415
    from transformers import (  # noqa: PLC0415
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        PreTrainedTokenizerFast,
    )

    split = pre_tokenizers.WhitespaceSplit()
    tk = Tokenizer(models.WordLevel({w: i for i, w in enumerate(vocab)}, unk_token=unk))
    tk.pre_tokenizer = pre_tokenizers.Sequence([split, pre_tokenizers.Punctuation()]) if punctuation else split
    specials = {k: v for k, v in (("unk_token", unk), ("pad_token", pad), ("bos_token", bos), ("eos_token", eos))
                if v is not None}
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, **specials)
    ids = dict(text_ids) if text_ids is not None else {
        "bos_token_id": vocab.index(bos) if bos is not None else 1,
        "eos_token_id": vocab.index(eos) if eos is not None else 1, "pad_token_id": vocab.index(pad)}
    extra = {} if vision_feature_layer is None else {"vision_feature_layer": vision_feature_layer}
    torch.manual_seed(seed)
    cfg = LlavaConfig(vision_config=CLIPVisionConfig(hidden_size=32, intermediate_size=64,
                                                     num_hidden_layers=vision_layers, num_attention_heads=2,
                                                     image_size=32, patch_size=8),
                      text_config=LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                              num_attention_heads=2, num_key_value_heads=2, vocab_size=len(vocab),
                                              **ids),
                      image_token_index=vocab.index(image_token), **extra)
    return tok, LlavaForConditionalGeneration(cfg)


def write_tiny_llava(folder: str | os.PathLike[str], vocab: Sequence[str], **kwargs: Any) -> Path:
    """:func:`tiny_llava` (same keyword arguments) saved as a Hugging Face folder (created if missing), which
    :func:`load_local_model` reads like a user's own LLaVA; returns the folder."""
    tok, model = tiny_llava(vocab, **kwargs)
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path
