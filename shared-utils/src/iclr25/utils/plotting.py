"""Consistent figures (extra ``iclr25-utils[plot]``): matplotlib on the Agg backend, one style, atomic saves."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ._atomic import atomic_path

__all__ = ["subplots", "savefig", "show", "STYLE"]

STYLE: dict[str, Any] = {
    "figure.dpi": 100,
    "savefig.dpi": 120,
    "savefig.bbox": "tight",
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "font.size": 10,
    "legend.frameon": False,
}


def _pyplot():
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError("figures need matplotlib: pip install 'iclr25-utils[plot]'") from exc
    if matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(STYLE)
    return plt


def subplots(nrows: int = 1, ncols: int = 1, *, size: tuple[float, float] = (4.0, 3.2), **kwargs: Any):
    """``plt.subplots`` in the house style; ``size`` is per panel (inches)."""
    plt = _pyplot()
    return plt.subplots(nrows, ncols, figsize=(size[0] * ncols, size[1] * nrows), **kwargs)


def savefig(fig: Any, path: str | os.PathLike[str], *, close: bool = True, **kwargs: Any) -> Path:
    """Save ``fig`` atomically (PNG unless the suffix says otherwise) and close it."""
    p = Path(path)
    if not p.suffix:
        raise ValueError(f"path must have a file suffix such as .png, got {str(p)!r}")
    with atomic_path(p) as tmp:
        fig.savefig(tmp, format=p.suffix.lstrip(".").lower(), **kwargs)
    if close:
        _pyplot().close(fig)
    return p


def show(fig: Any, *, close: bool = True) -> Any:
    """Show ``fig`` in a notebook as a PNG image, whatever matplotlib backend is active (Agg included), and
    return the ``IPython.display.Image``; outside IPython it only returns the PNG bytes."""
    import io  # noqa: PLC0415

    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    if close:
        _pyplot().close(fig)
    data = buf.getvalue()
    try:
        from IPython.display import Image, display  # noqa: PLC0415
    except ImportError:
        return data
    img = Image(data=data, format="png")
    display(img)
    return img
