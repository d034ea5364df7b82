"""A wall-clock timer (``time.perf_counter``) usable as a context manager or decorator."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["Timer", "timed"]

F = TypeVar("F", bound=Callable[..., Any])


class Timer:
    """Measure elapsed seconds.

    Examples
    --------
    >>> with Timer() as t:
    ...     _ = sum(range(1000))
    >>> t.elapsed >= 0
    True
    """

    def __init__(self) -> None:
        self.start: float | None = None
        self.elapsed: float = 0.0

    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.start is not None
        self.elapsed = time.perf_counter() - self.start

    def __repr__(self) -> str:
        return f"Timer(elapsed={self.elapsed:.6f})"


def timed(fn: F) -> F:
    """Decorate ``fn`` so that each call stores its duration in ``fn.last_elapsed``."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            wrapper.last_elapsed = time.perf_counter() - t0  # type: ignore[attr-defined]

    wrapper.last_elapsed = None  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]
