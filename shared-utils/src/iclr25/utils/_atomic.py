"""Atomic file writes: write to a temporary file beside the target, then rename.

A failed write (an exception, a full disk, a killed process before the rename) never leaves a
half-written file at the target path, and an existing target keeps its old content.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


class WriteError(OSError):
    """An output could not be written; ``str()`` is the message alone, which names the file
    (``cannot write PATH: File too large``)."""

    def __str__(self) -> str:
        return str(self.strerror)


@functools.cache
def _file_mode() -> int:
    """The mode ``open()`` would give a new file (0o666 less the umask); mkstemp's files are 0o600."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "w", **open_kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file for writing and move it onto ``path`` only if the block succeeds.

    Parameters
    ----------
    path:
        Final destination. Its parent folder is created when missing.
    mode:
        ``"w"`` (text, UTF-8 by default) or ``"wb"`` (binary).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_write(d / "x.txt") as f:
    ...     _ = f.write("hello")
    >>> (d / "x.txt").read_text()
    'hello'
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    if "b" not in mode:
        open_kwargs.setdefault("encoding", "utf-8")
    # the file is closed (and synced) before atomic_path renames it into place
    with atomic_path(path) as tmp, open(tmp, mode, **open_kwargs) as handle:
        yield handle
        handle.flush()
        os.fsync(handle.fileno())


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path (same suffix) for writers that want a file name, then rename it onto ``path``.

    Use it with libraries that write by name (``np.savez``, ``fig.savefig``).
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=target.suffix, dir=target.parent)
    except OSError as exc:  # name the file the user asked for, not the temporary one
        raise type(exc)(exc.errno, f"cannot write here: {exc.strerror or exc}", str(target)) from None
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, _file_mode())
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and str(target) not in str(exc) and not isinstance(exc, FileNotFoundError):
            # a full disk or a file-size limit (EFBIG "File too large", numpy's "N requested and M written")
            # names the file the user asked for
            if exc.errno is not None:
                raise WriteError(exc.errno, f"cannot write {target}: {exc.strerror or exc}") from None
            raise WriteError(errno.EIO, f"cannot write {target}: {exc} (is the disk full, or a file-size limit "
                             "reached?)") from None
        raise
