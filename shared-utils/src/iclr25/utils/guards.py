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
from typing import Any

__all__ = ["OutputError", "SizeError", "check_real", "MAX_ABS", "check_out", "check_file_name", "check_size", "MAX_SECONDS", "format_bytes",
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

    The rules are :func:`iclr25.utils.outputs.check_output_path`'s (inputs compared by path and inode, symbolic
    links never replaced, the nearest existing parent writable); a command declares its outputs with
    :func:`iclr25.utils.outputs.add_output` and has them checked by ``run_main`` without calling this.

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
    from .outputs import check_output_path  # noqa: PLC0415 - outputs imports OutputError from here

    return check_output_path(out, flag=flag, kind=kind, overwrite=overwrite, inputs=inputs, run_files=run_files)


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
               force: bool = False, max_seconds: float = MAX_SECONDS, available_bytes: float | None = None,
               on_accelerator: bool = False) -> None:
    """Refuse (``SizeError``) a request whose estimate cannot finish here, unless ``force``.

    ``what`` names the request and its flags (``"--T 1000000000000"``); the estimates are rough (an order of
    magnitude is enough to refuse 10^12). Memory is compared with ``MemAvailable``; time with ``max_seconds``.
    ``on_accelerator``: the work runs on a GPU (``--device cuda``, or ``auto`` with one present), where a CPU
    time estimate says nothing: only the memory is checked (issue 59: a paper-scale run on a GPU needed
    ``--force``).

    >>> check_size("--epochs 10**6", seconds_needed=1e9, on_accelerator=True)  # not judged by CPU time

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
    if seconds_needed is not None and seconds_needed > max_seconds and not on_accelerator:
        raise SizeError(f"{what} would take about {format_seconds(seconds_needed)} on this machine (the limit is "
                        f"{format_seconds(max_seconds)}); choose smaller sizes (or pass --force to run it anyway)")


#: Largest magnitude :func:`check_real` accepts: its square, and sums of a million such squares, stay finite in
#: float64 (1e150² = 1e300 < 1.8e308).
MAX_ABS = 1e150


def check_real(values: Any, name: str, *, max_abs: float = MAX_ABS, allow_nan: bool = False) -> Any:
    """``values`` as a real floating-point NumPy array, or a one-line error naming ``name``.

    Refuses complex numbers (``TypeError``: never silently cast to their real part), non-numeric data, NaN and
    infinity (``ValueError``; NaN allowed with ``allow_nan``, e.g. for missing entries a weight masks) and entries
    larger than ``max_abs`` in magnitude, whose squares would overflow (``ValueError``, asking to rescale).

    >>> check_real([1, 2], "--x").dtype
    dtype('float64')
    >>> check_real([1 + 2j], "A.npy")
    Traceback (most recent call last):
    TypeError: A.npy holds complex numbers (complex128); give real values (their real part is never taken silently)
    >>> check_real([1e200], "M.npz")
    Traceback (most recent call last):
    ValueError: M.npz has entries up to 1e+200 in magnitude, beyond 1e+150 where squares overflow; rescale it (divide by a constant)
    """
    import numpy as np  # noqa: PLC0415 - guards is imported by every command line; numpy only when used

    arr = np.asarray(values)
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} holds complex numbers ({arr.dtype}); give real values (their real part is never "
                        "taken silently)")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold numbers, got {arr.dtype} values")
    arr = arr.astype(np.float64, copy=False) if arr.dtype.kind != "f" else arr
    finite = np.isfinite(arr)
    if not finite.all():
        bad = ~finite & ~np.isnan(arr) if allow_nan else ~finite
        if bad.any():
            kind = "infinite values" if allow_nan or not np.isnan(arr).any() else "NaN or infinite values"
            raise ValueError(f"{name} has {int(bad.sum())} {kind}; give finite numbers")
    if arr.size:
        top = float(np.nanmax(np.abs(arr))) if np.isfinite(arr).any() else 0.0
        if top > max_abs:
            raise ValueError(f"{name} has entries up to {top:.3g} in magnitude, beyond {max_abs:.0e} where squares "
                             "overflow; rescale it (divide by a constant)")
    return arr
