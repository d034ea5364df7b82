"""Memory readings for benchmarks and out-of-memory guards: peak and current resident set size of this process,
and the memory the machine has available.

On Linux they read ``/proc``; elsewhere :func:`peak_rss_bytes` and :func:`current_rss_bytes` fall back to
``resource.getrusage`` (the peak), :func:`available_memory_bytes` returns ``None`` and :func:`reset_peak_rss` does
nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["available_memory_bytes", "current_rss_bytes", "peak_rss_bytes", "reset_peak_rss"]


def _proc_field(path: str, field: str) -> int | None:
    """``field`` (a ``kB`` line such as ``VmHWM``) of a ``/proc`` file in bytes, or None where unreadable."""
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _ru_maxrss_bytes() -> int:
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024  # bytes on macOS, KiB on Linux


def peak_rss_bytes() -> int:
    """Peak resident set size of this process image in bytes (``VmHWM``, since the last :func:`reset_peak_rss`).

    ``VmHWM`` rather than ``ru_maxrss``: after a ``fork`` the latter still counts the parent's peak.

    Examples
    --------
    >>> now = current_rss_bytes()  # read first: the RSS may grow between two reads, the peak never falls
    >>> peak_rss_bytes() >= now > 0
    True
    """
    hwm = _proc_field("/proc/self/status", "VmHWM")
    return hwm if hwm is not None else _ru_maxrss_bytes()


def current_rss_bytes() -> int:
    """Resident set size of this process now, in bytes (``VmRSS``; the peak where ``/proc`` is missing)."""
    rss = _proc_field("/proc/self/status", "VmRSS")
    return rss if rss is not None else _ru_maxrss_bytes()


def reset_peak_rss() -> bool:
    """Reset this process's peak-RSS mark to its current RSS (Linux ``/proc/self/clear_refs``, value 5), so that
    :func:`peak_rss_bytes` measures one phase. Returns whether the reset was possible."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def available_memory_bytes() -> int | None:
    """Bytes of memory available for new allocations now (``MemAvailable`` of ``/proc/meminfo``), or None where
    unknown."""
    return _proc_field("/proc/meminfo", "MemAvailable")
