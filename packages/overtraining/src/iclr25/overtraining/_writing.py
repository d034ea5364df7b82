"""Write errors that name the file: a full disk or a file-size limit (``RLIMIT_FSIZE``) used to read
``[Errno 27] File too large`` without saying which file the command was writing."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["WriteError", "writing", "WRITE_ERRNOS"]

#: errors of a write that ran out of room: a file-size limit, a full disk, a quota
WRITE_ERRNOS = (errno.EFBIG, errno.ENOSPC, errno.EDQUOT)


class WriteError(OSError):
    """A write that failed, with a message that names the file: ``cannot write PATH: File too large``."""

    def __str__(self) -> str:
        return str(self.strerror)


@contextlib.contextmanager
def writing(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Run a block that writes ``path``: an ``OSError`` that names no file and comes from a write that ran out of
    room (file too large, disk full, quota), or one that names only the temporary file of an atomic write,
    becomes :class:`WriteError` naming ``path``; other errors (those that name their file) pass unchanged."""
    target = Path(path)
    try:
        yield target
    except WriteError:
        raise
    except OSError as exc:
        if exc.filename is not None and not Path(str(exc.filename)).name.startswith("."):
            raise  # it names its file already (iclr25.utils' atomic writes name the target; a missing input)
        temporary = exc.filename is not None
        if exc.errno not in WRITE_ERRNOS and not temporary:
            raise  # not a write that ran out of room: its own message
        reason = exc.strerror or (os.strerror(exc.errno) if exc.errno else str(exc))
        raise WriteError(exc.errno, f"cannot write {target}: {reason}") from None
