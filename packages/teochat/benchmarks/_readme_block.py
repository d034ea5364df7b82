"""Rewrite a generated block of the package README (between ``<!-- NAME:begin ... -->`` and
``<!-- NAME:end -->``) from a benchmark's JSON; shared by the benchmark scripts that keep a README table."""

from __future__ import annotations

from pathlib import Path

from iclr25.utils.io import atomic_write


def replace_block(readme: Path, begin: str, end: str, body: str) -> None:
    """Replace everything from ``begin`` up to ``end`` by ``begin + body`` (``body`` closes the begin comment);
    a README without both markers is an error that names them."""
    text = readme.read_text(encoding="utf-8")
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < i:
        raise SystemExit(f"{readme}: no {begin} ... {end} block")
    with atomic_write(readme) as f:
        f.write(text[:i] + begin + body + text[j:])
