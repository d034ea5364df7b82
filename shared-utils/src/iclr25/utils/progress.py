"""Progress bars that stay out of the way: tqdm on a terminal, silent when stderr is not a terminal, when
``ICLR25_QUIET=1``, or when tqdm (extra ``iclr25-utils[progress]``) is not installed."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

__all__ = ["progress", "progress_enabled"]

T = TypeVar("T")


def progress_enabled() -> bool:
    """True when bars should be drawn: stderr is a terminal and ``ICLR25_QUIET`` is not set to 1."""
    if os.environ.get("ICLR25_QUIET", "") not in ("", "0"):
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class _Silent:
    """The subset of tqdm's interface that callers use, doing nothing."""

    def __init__(self, iterable: Iterable[Any] | None) -> None:
        self._it = iterable

    def __iter__(self) -> Iterator[Any]:
        return iter(self._it if self._it is not None else ())

    def __enter__(self) -> _Silent:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: int = 1) -> None:
        return None

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        return None

    def set_description(self, *args: Any, **kwargs: Any) -> None:
        return None

    def close(self) -> None:
        return None


def progress(iterable: Iterable[T] | None = None, *, total: int | None = None, desc: str | None = None,
             disable: bool | None = None, **kwargs: Any) -> Any:
    """Wrap ``iterable`` in a tqdm bar when bars are enabled, else return a silent stand-in.

    Examples
    --------
    >>> list(progress(range(3), disable=True))
    [0, 1, 2]
    """
    if disable is None:
        disable = not progress_enabled()
    if not disable:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            disable = True
        else:
            return tqdm(iterable, total=total, desc=desc, file=sys.stderr, dynamic_ncols=True, **kwargs)
    return _Silent(iterable)
