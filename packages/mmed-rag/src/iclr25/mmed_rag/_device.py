"""Where a command computes (issue 59): ``--device`` resolved once by the command line, named in results.json."""

from __future__ import annotations

from typing import Any

#: The commands whose tiny models (router, retrievers, VLM) are built with torch's default device set to
#: ``--device``: everything they create (models, images, prompts, batches) lands there; results come back with
#: ``.cpu()``. ``ask`` and ``align`` place a Hugging Face model themselves (``--dtype``, ``--device-map``).
TINY_MODEL_COMMANDS = ("demo", "repro", "build_index", "train", "evaluate")


def ran_on() -> str:
    """The device this run computes on, for results.json's ``machine.device``: torch's default device where a
    command set it, else ``--device`` / ``$ICLR25_DEVICE`` resolved."""
    import torch

    from iclr25.utils.device import describe_device, torch_device

    dev = torch.get_default_device()
    return describe_device(dev if dev.type != "cpu" else torch_device(None))


def run_on_device(name: str, args: Any, handler: Any) -> int:
    """``handler(args)`` with ``--device`` in force: an absent device is one line naming ``--device`` before any
    work; the tiny-model commands build everything on it (torch's default device, restored afterwards)."""
    import torch

    from iclr25.utils.device import device_scope, torch_device

    dev = torch_device(args.device)
    if getattr(args, "hf_path", None) is None and (getattr(args, "dtype", None) is not None
                                                   or getattr(args, "device_map", None) is not None):
        raise ValueError("--dtype and --device-map are for --hf-path (a Hugging Face LLaVA folder); the tiny "
                         "models run in float32 on --device")
    old = torch.get_default_device()
    with device_scope(args.device):
        if name in TINY_MODEL_COMMANDS and dev.type != "cpu":
            torch.set_default_device(dev)
        try:
            return handler(args)
        finally:
            torch.set_default_device(old)
