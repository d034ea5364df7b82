"""Where a method computes: one ``--device`` for every torch and JAX command of the federation.

``--device {auto,cpu,cuda,cuda:N,mps}``: ``auto`` picks the accelerator when one is present (CUDA, then Apple's
MPS), else the CPU, so ``--device auto`` on a CPU-only machine gives the same numbers as ``--device cpu``. Asking
for a device that is not there is a one-line error naming ``--device`` (never a silent fall-back to the CPU).

Neither torch nor JAX is imported by this module until a function needs it, so every package can use it.

>>> parse_device("CUDA:1"), parse_device("auto")
('cuda:1', 'auto')
>>> parse_device("gpu")
Traceback (most recent call last):
ValueError: --device must be auto, cpu, cuda, cuda:N or mps, got 'gpu'
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["DEVICE_HELP", "DTYPES", "DEVICE_ENV", "add_device_argument", "parse_device", "default_device",
           "jax_gpus", "on_accelerator", "accelerator_present", "device_scope", "torch_device", "torch_generator",
           "torch_dtype", "jax_device", "to_cpu", "describe_device", "check_device_conformance"]

DEVICE_HELP = ("where to compute: auto (the accelerator when one is present, else the CPU), cpu, cuda, cuda:N or "
               "mps (default: %(default)s)")
DTYPES = ("float32", "bfloat16", "float16", "float64")
_SPEC = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")
#: ``iclr25 claims NAME --device X`` sets this, so measuring code that asks for ``device=None`` computes on X
DEVICE_ENV = "ICLR25_DEVICE"


def parse_device(spec: str, *, flag: str = "--device") -> str:
    """``spec`` normalised (lower case) after checking its form; the device itself is checked when resolved."""
    s = str(spec).strip().lower()
    if not _SPEC.match(s):
        raise ValueError(f"{flag} must be auto, cpu, cuda, cuda:N or mps, got {spec!r}")
    return s


def default_device() -> str:
    """The device a ``device=None`` argument means: ``$ICLR25_DEVICE`` when set (``iclr25 claims --device``),
    else ``auto``."""
    env = os.environ.get(DEVICE_ENV, "").strip()
    return parse_device(env, flag=DEVICE_ENV) if env else "auto"


class device_scope:  # noqa: N801 - a context manager, like open()
    """``with device_scope("cuda"):`` makes ``device=None`` (and the claims a package's ``repro`` measures through
    its registry) resolve to that device, restoring ``$ICLR25_DEVICE`` afterwards. Memoised measuring helpers
    key their caches by :func:`default_device` (and ``smoke_run()``), as the registry's own cache does."""

    def __init__(self, spec: str | None) -> None:
        self.spec = None if spec is None else parse_device(str(spec))

    def __enter__(self) -> str:
        self._old = os.environ.get(DEVICE_ENV)
        if self.spec is not None:
            os.environ[DEVICE_ENV] = self.spec
        return default_device()

    def __exit__(self, *exc: object) -> None:
        if self._old is None:
            os.environ.pop(DEVICE_ENV, None)
        else:
            os.environ[DEVICE_ENV] = self._old


def accelerator_present() -> bool:
    """Whether torch (CUDA or MPS) or JAX (a GPU) sees an accelerator, importing only what is installed; False
    when ``$ICLR25_DEVICE`` is ``cpu``."""
    import importlib.util  # noqa: PLC0415

    if os.environ.get(DEVICE_ENV, "").strip().lower() == "cpu":
        return False
    if importlib.util.find_spec("torch") is not None:
        import torch  # noqa: PLC0415

        mps = getattr(getattr(torch, "backends", None), "mps", None)
        if torch.cuda.is_available() or (mps is not None and mps.is_available()):
            return True
    if importlib.util.find_spec("jax") is not None:
        import jax  # noqa: PLC0415

        try:
            return bool(jax.devices("gpu"))
        except RuntimeError:
            return False
    return False


def on_accelerator(spec: Any = None) -> bool:
    """Whether a ``--device`` value sends the work to an accelerator: ``cuda``, ``cuda:N`` and ``mps`` do,
    ``cpu`` does not, ``auto`` does when one is present (:func:`accelerator_present`); ``None`` reads
    ``$ICLR25_DEVICE``. For the size guards (``check_size(..., on_accelerator=...)``), before any work; a value
    that is not a device is not an accelerator (the command refuses it where it resolves the device).

    >>> on_accelerator("cpu"), on_accelerator("cuda:1"), on_accelerator("gpu")
    (False, True, False)
    """
    if spec is not None and not isinstance(spec, str):  # a torch.device or jax Device
        return getattr(spec, "type", getattr(spec, "platform", "cpu")) != "cpu"
    try:
        s = parse_device(default_device() if spec is None else spec)
    except ValueError:
        return False
    if s == "auto":
        return accelerator_present()
    return s != "cpu"


def _device_type(spec: str) -> str:
    try:
        return parse_device(spec)
    except ValueError as exc:  # argparse prints an ArgumentTypeError's own words
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--device ")) from None


def add_device_argument(parser: argparse.ArgumentParser, *, default: str = "auto", dtype: bool = False) -> None:
    """Add ``--device`` (and, with ``dtype=True``, ``--dtype``) to a command that computes."""
    parser.add_argument("--device", default=default, type=_device_type, metavar="{auto,cpu,cuda,cuda:N,mps}",
                        help=DEVICE_HELP)
    if dtype:
        parser.add_argument("--dtype", default=None, choices=DTYPES,
                            help="floating-point type of the model's weights (default: float32, or the model's own)")


def torch_device(spec: Any = "auto", *, flag: str = "--device") -> Any:
    """The ``torch.device`` for ``spec`` (a string, a ``torch.device``, or ``None``: :func:`default_device`).

    ``auto``: ``cuda`` when ``torch.cuda.is_available()``, else ``mps`` when available, else ``cpu``. ``cuda:N``
    beyond the visible devices, ``cuda`` without CUDA and ``mps`` without MPS are one-line errors naming ``flag``.
    """
    import torch  # noqa: PLC0415

    if isinstance(spec, torch.device):
        if spec.type not in ("cuda", "mps"):  # cpu, and stand-ins such as meta (check_device_conformance): as given
            return spec
        spec = str(spec)
    s = parse_device(default_device() if spec is None else spec, flag=flag)
    cuda = bool(torch.cuda.is_available())
    mps_backend = getattr(getattr(torch, "backends", None), "mps", None)
    mps = bool(mps_backend is not None and mps_backend.is_available())
    if s == "auto":
        return torch.device("cuda" if cuda else "mps" if mps else "cpu")
    if s.startswith("cuda"):
        if not cuda:
            raise ValueError(f"{flag} {s}: no CUDA device is visible to torch (torch.cuda.is_available() is False; "
                             "a CPU-only torch wheel?); use --device cpu or auto")
        if ":" in s:
            n = torch.cuda.device_count()
            if int(s.split(":")[1]) >= n:
                raise ValueError(f"{flag} {s}: only {n} CUDA device(s) are visible (cuda:0 to cuda:{n - 1})")
    if s == "mps" and not mps:
        raise ValueError(f"{flag} mps: Apple's MPS backend is not available here; use --device cpu or auto")
    return torch.device(s)


def torch_generator(device: Any, seed: int) -> Any:
    """A ``torch.Generator`` on ``device`` seeded with ``seed`` (random draws made where the step runs); ``None``
    on torch's ``meta`` device, which has none (pass it as ``generator=`` all the same)."""
    import torch  # noqa: PLC0415

    device = torch.device(device)
    if device.type == "meta":  # no generator exists there; draws made with generator=None still land on meta
        return None
    g = torch.Generator(device=device)
    g.manual_seed(int(seed))
    return g


def torch_dtype(name: str | None, device: Any = None, *, needs_float64: bool = False) -> Any:
    """The torch dtype for ``--dtype`` ``name``; ``None`` gives float64 where the method needs it
    (``needs_float64``), else float32. bfloat16 and float16 on the CPU are refused (slow and inexact there)."""
    import torch  # noqa: PLC0415

    if name is None:
        return torch.float64 if needs_float64 else torch.float32
    if name not in DTYPES:
        raise ValueError(f"--dtype must be one of {', '.join(DTYPES)}, got {name!r}")
    if name in ("bfloat16", "float16") and device is not None and torch.device(device).type == "cpu":
        raise ValueError(f"--dtype {name} is for accelerators; on the CPU use float32")
    return getattr(torch, name)


def jax_gpus() -> list[Any]:
    """The GPUs JAX sees (``[]`` with a CPU-only jaxlib, or none present)."""
    import jax  # noqa: PLC0415

    try:
        return list(jax.devices("gpu"))
    except RuntimeError:
        return []


def jax_device(spec: Any = "auto", *, flag: str = "--device") -> Any:
    """The JAX device for ``spec``: ``auto`` is JAX's default device (a GPU with a CUDA jaxlib, else the CPU);
    ``cuda``/``cuda:N`` the N-th GPU; ``cpu`` the CPU; a ``jax.Device`` as given; ``None``: ``$ICLR25_DEVICE``,
    else ``auto``. Use it as ``with jax.default_device(jax_device(spec)):``. An absent device is a one-line
    ``ValueError`` naming ``flag``."""
    import jax  # noqa: PLC0415

    if hasattr(spec, "platform") and hasattr(spec, "id"):  # a jax.Device
        return spec
    s = parse_device(default_device() if spec is None else spec, flag=flag)
    if s == "auto":
        return jax.devices()[0]
    if s == "cpu":
        return jax.devices("cpu")[0]
    if s == "mps":
        raise ValueError(f"{flag} mps: JAX has no MPS backend here; use --device cpu or auto")
    gpus = jax_gpus()
    if not gpus:
        raise ValueError(f"{flag} {s}: JAX sees no GPU (install a CUDA jaxlib: pip install 'jax[cuda12]'); use "
                         "--device cpu or auto")
    i = int(s.split(":")[1]) if ":" in s else 0
    if i >= len(gpus):
        raise ValueError(f"{flag} {s}: only {len(gpus)} GPU(s) are visible to JAX")
    return gpus[i]


def to_cpu(obj: Any) -> Any:
    """``obj`` with every torch tensor (and JAX array) moved to the CPU: in dicts, lists, tuples and dataclasses,
    recursively; anything else is returned as it is. Results leave a step this way before ``.numpy()``."""
    if hasattr(obj, "detach") and hasattr(obj, "cpu") and hasattr(obj, "device"):  # a torch tensor
        return obj.detach().cpu()
    if type(obj).__module__.startswith(("jax", "jaxlib")) and hasattr(obj, "devices"):
        import jax  # noqa: PLC0415

        return jax.device_get(obj)
    if isinstance(obj, Mapping):
        return type(obj)({k: to_cpu(v) for k, v in obj.items()}) if isinstance(obj, dict) else \
            {k: to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a named tuple
        return type(obj)(*(to_cpu(v) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_cpu(v) for v in obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.replace(obj, **{f.name: to_cpu(getattr(obj, f.name))
                                           for f in dataclasses.fields(obj) if f.init})
    return obj


def describe_device(device: Any) -> str:
    """A short name for run records: ``cpu``, ``cuda:0 (NVIDIA H100 80GB HBM3)``, ``mps``, or a JAX device."""
    kind = getattr(device, "type", None)
    if kind == "cuda":
        import torch  # noqa: PLC0415

        i = device.index if device.index is not None else torch.cuda.current_device()
        return f"cuda:{i} ({torch.cuda.get_device_name(i)})"
    if kind is not None:
        return str(device)
    platform = getattr(device, "platform", None)
    if platform is not None:
        return f"{platform}:{getattr(device, 'id', 0)} ({getattr(device, 'device_kind', '')})".replace(" ()", "")
    return str(device)


def _assume_nonzero() -> Any:
    """torch's switch that lets a meta tensor's ``nonzero`` (boolean-mask indexing) assume every element is
    selected, where this torch has it; otherwise a context that does nothing."""
    import contextlib  # noqa: PLC0415

    try:
        from torch.fx.experimental import _config  # noqa: PLC0415

        if hasattr(_config, "meta_nonzero_assume_all_nonzero"):
            return _config.patch(meta_nonzero_assume_all_nonzero=True)
    except ImportError:
        pass
    return contextlib.nullcontext()


def check_device_conformance(build: Any, step: Any = None) -> Any:
    """Run a model's forward (and one training step) with everything on a non-CPU stand-in device (torch's
    ``meta`` device, which allocates nothing), so a tensor made on the CPU inside the step is caught as a device
    mismatch on a machine without a GPU. For the packages' suites (issue 59).

    ``build(device)`` returns ``(module, inputs)``: the model and a batch (a tensor, a tuple or a dict of them),
    both on ``device``. ``step(module, inputs)``, when given, runs one training step (loss, backward, optimiser
    step); without it the check calls ``module(*inputs)`` / ``module(**inputs)``. Inside the check ``.item()`` on a
    meta tensor (and ``float``/``int``/``bool`` of one) gives ``0.0`` (``0``, ``False``) and ``.cpu()`` a CPU tensor
    of zeros of its shape, so logging and result conversion
    run; ``.numpy()`` straight on a device tensor fails, as it would on a GPU. A boolean-mask index (``x[mask]``,
    ``nonzero``) has a data-dependent size the stand-in cannot know: inside the check it selects every element
    (shapes stay consistent; values are never read). Returns what the step returned.
    Raises ``AssertionError`` naming the stand-in device and the error on any mismatch.
    """
    import torch  # noqa: PLC0415
    from torch.overrides import TorchFunctionMode  # noqa: PLC0415

    meta = torch.device("meta")

    class _HostReads(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            t = args[0] if args and isinstance(args[0], torch.Tensor) else None
            if t is not None and t.device.type == "meta":
                if func in (torch.Tensor.item, torch.Tensor.__float__):
                    return 0.0
                if func in (torch.Tensor.__int__, torch.Tensor.__index__):
                    return 0
                if func is torch.Tensor.__bool__:
                    return False
                if func is torch.Tensor.tolist:
                    return torch.zeros(t.shape, dtype=t.dtype).tolist()
                if func is torch.Tensor.cpu or (func is torch.Tensor.to and _to_cpu(args[1:], kwargs)):
                    return torch.zeros(t.shape, dtype=t.dtype)  # zeros, not empty: no NaN from stale memory
            return func(*args, **kwargs)

    def _to_cpu(rest: tuple, kwargs: dict) -> bool:
        target = kwargs.get("device", rest[0] if rest else None)
        return isinstance(target, (str, torch.device)) and torch.device(target).type == "cpu"

    module, inputs = build(meta)
    bad = [n for n, p in module.named_parameters() if p.device != meta]
    if bad:
        raise AssertionError(f"build(device) left parameters off the device: {bad[:5]}")
    try:
        with _HostReads(), _assume_nonzero():
            if step is not None:
                return step(module, inputs)
            if isinstance(inputs, dict):
                return module(**inputs)
            return module(*inputs) if isinstance(inputs, (tuple, list)) else module(inputs)
    except (RuntimeError, TypeError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "meta" in msg or "device" in msg or "numpy" in msg:
            raise AssertionError(f"with the model and inputs on a non-CPU device (torch's meta stand-in), the step "
                                 f"failed: {type(exc).__name__}: {msg}; create every tensor on the input's device "
                                 "(device=x.device) and call .cpu() before .numpy()") from exc
        raise
