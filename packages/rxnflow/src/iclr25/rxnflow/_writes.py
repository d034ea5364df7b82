"""Write errors that name the file: a full disk or a file-size limit during a save is one line
``cannot write PATH: File too large``, whether it comes from Python's I/O (an ``OSError`` without a file name)
or from torch's checkpoint writer (a ``RuntimeError``)."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["WriteError", "naming_write_errors"]


class WriteError(OSError):
    """An output could not be written; ``str()`` is the message alone (it names the file)."""

    def __str__(self) -> str:
        return str(self.strerror)


@contextlib.contextmanager
def naming_write_errors(path: str | os.PathLike[str]) -> Iterator[None]:
    """Turn an ``OSError`` or torch's ``RuntimeError`` raised while ``path`` is written into a
    :class:`WriteError` whose message names ``path`` (``cannot write PATH: File too large``)."""
    try:
        yield
    except WriteError:
        raise
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        if reason.startswith("cannot write") and ": " in reason:  # already worded by iclr25.utils.io
            reason = reason.split(": ", 1)[1]
        name = exc.filename if exc.filename is not None and not Path(exc.filename).name.startswith(".") else path
        raise WriteError(exc.errno or errno.EIO, f"cannot write {name}: {reason}") from None
    except RuntimeError:  # torch.save reports a failed write (disk full, size limit) as a RuntimeError of its own
        raise WriteError(errno.EIO, f"cannot write {path}: the write failed (the disk is full, or a file-size "
                         "limit was reached)") from None
