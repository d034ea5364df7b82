"""The federation's output policy and size guard, shared by every command line.

Output policy (``check_out``): ``--out`` is checked before any work is done: it must not be an existing file, must
not be one of the command's inputs, and must be writable (its nearest existing parent folder is). Results go
into a new folder, or into an existing one without deleting anything the command did not write; a folder that
already holds a run (its ``results.json``) is written over only with ``--overwrite``. Nothing is ever deleted
or renamed.

Size guard (``check_size``): a command estimates the memory and time its sizes need and refuses (one line with
the estimate, exit 2) what cannot finish on this machine, unless the user passes ``--force``.

Both raise subclasses of ``ValueError``, so :func:`iclr25.utils.cli.run_main` prints them as one line and exits
with status 2.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["OutputError", "SizeError", "check_out", "check_file_name", "check_size", "MAX_SECONDS", "format_bytes",
           "format_seconds"]

#: Longest run the size guard accepts without ``--force`` (one day).
MAX_SECONDS = 24 * 3600.0


class OutputError(ValueError):
    """``--out`` cannot be used: an existing file, an input, not writable, or a previous run without --overwrite."""


class SizeError(ValueError):
    """A requested size needs more memory or time than this machine can give; ``--force`` runs it anyway."""


def check_out(out: str | os.PathLike[str], *, inputs: Iterable[str | os.PathLike[str]] = (),
              overwrite: bool = False, flag: str = "--out", run_files: Iterable[str] = ("results.json",),
              kind: str = "folder") -> Path:
    """Check an output path before any work; returns it as a :class:`~pathlib.Path`. Creates nothing.

    Parameters
    ----------
    out:
        The folder (``kind="folder"``) or file (``kind="file"``) the command will write.
    inputs:
        The command's input paths; ``out`` may not be one of them.
    overwrite:
        The user's ``--overwrite``: allow writing over a previous run (its ``run_files``) or an existing file.
    run_files:
        Files whose presence in an existing folder marks a previous run of this command.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> check_out(d / "new") == d / "new"
    True
    >>> (d / "run").mkdir(); _ = (d / "run" / "results.json").write_text("{}")
    >>> try:
    ...     check_out(d / "run")
    ... except OutputError as exc:
    ...     print(str(exc).split(" (")[0].endswith("already holds a run"))
    True
    """
    if kind not in ("folder", "file"):
        raise ValueError(f"kind must be 'folder' or 'file', got {kind!r}")
    path = Path(out)
    if str(out) == "":
        raise OutputError(f"{flag} is empty; give a {kind}")
    resolved = path.resolve()
    for inp in inputs:
        if inp is not None and Path(inp).resolve() == resolved:
            raise OutputError(f"{flag} {path} is also an input of this command; choose another {kind}")
    if kind == "folder":
        if path.exists() and not path.is_dir():
            raise OutputError(f"{flag} {path} is an existing file, not a folder; choose a new or existing folder")
        if path.is_dir() and not overwrite:
            previous = [f for f in run_files if (path / f).exists()]
            if previous:
                raise OutputError(f"{flag} {path} already holds a run ({', '.join(previous)}); pass --overwrite "
                                  "to write over it, or choose another folder")
    else:
        if path.is_dir():
            raise OutputError(f"{flag} {path} is a folder; give a file name")
        if path.exists() and not overwrite:
            raise OutputError(f"{flag} {path} exists; pass --overwrite to replace it, or choose another name")
    probe = path if path.is_dir() else path.parent
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise OutputError(f"{flag} {path}: {probe} is a file, so the {kind} cannot be created")
    target = path if path.is_dir() else probe
    if not os.access(target, os.W_OK | os.X_OK):
        raise OutputError(f"{flag} {path} cannot be written: {target} is not writable")
    return path


def check_file_name(path: str | os.PathLike[str], *, suffix: str, flag: str = "--out") -> Path:
    """An output file name a command will write: it ends in ``suffix``, is not a folder, and its folder exists.
    Checked before any work; creates nothing. Errors name ``flag``.

    >>> check_file_name("matrix.npy", suffix=".npy", flag="--out").name
    'matrix.npy'
    >>> check_file_name("matrix.csv", suffix=".npy")
    Traceback (most recent call last):
    ValueError: --out must name a .npy file, got 'matrix.csv'
    """
    path = Path(path)
    if path.suffix.lower() != suffix:
        raise ValueError(f"{flag} must name a {suffix} file, got {str(path)!r}")
    if path.is_dir():
        raise ValueError(f"{flag} {str(path)!r} is a folder; name a {suffix} file")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"{flag} {str(path)!r}: no such folder {str(path.parent)!r}")
    return path


def format_bytes(n: float) -> str:
    """``1.5e9`` -> ``'1.4 GiB'``."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"  # pragma: no cover


def format_seconds(s: float) -> str:
    """``7200`` -> ``'2.0 h'``."""
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    if s < 3 * 86400:
        return f"{s / 3600:.1f} h"
    if s < 3 * 365 * 86400:
        return f"{s / 86400:.0f} days"
    return f"{s / (365 * 86400):.2g} years"


def check_size(what: str, *, bytes_needed: float | None = None, seconds_needed: float | None = None,
               force: bool = False, max_seconds: float = MAX_SECONDS, available_bytes: float | None = None) -> None:
    """Refuse (``SizeError``) a request whose estimate cannot finish here, unless ``force``.

    ``what`` names the request and its flags (``"--T 1000000000000"``); the estimates are rough (an order of
    magnitude is enough to refuse 10^12). Memory is compared with ``MemAvailable``; time with ``max_seconds``.

    >>> check_size("--n 10", bytes_needed=80)
    >>> try:
    ...     check_size("--n 10**12", bytes_needed=8e12, available_bytes=16e9)
    ... except SizeError as exc:
    ...     print(str(exc)[:60])
    --n 10**12 needs about 7.3 TiB of memory, more than the 14.9
    """
    if force:
        return
    if bytes_needed is not None:
        if available_bytes is None:
            from .memory import available_memory_bytes  # noqa: PLC0415

            available_bytes = available_memory_bytes()
        if available_bytes is not None and bytes_needed > available_bytes:
            raise SizeError(f"{what} needs about {format_bytes(bytes_needed)} of memory, more than the "
                            f"{format_bytes(available_bytes)} available here; choose smaller sizes "
                            "(or pass --force to try anyway)")
    if seconds_needed is not None and seconds_needed > max_seconds:
        raise SizeError(f"{what} would take about {format_seconds(seconds_needed)} on this machine (the limit is "
                        f"{format_seconds(max_seconds)}); choose smaller sizes (or pass --force to run it anyway)")
