"""Consistent figures (extra ``iclr25-utils[plot]``): matplotlib on the Agg backend, one style, atomic saves, and
a check of what a reader needs (:func:`figure_problems`: a title, axis labels, a colour bar where colour carries
a value), which :func:`savefig` records when ``$ICLR25_FIGURE_LOG`` names a file (``make figure-check``) and
enforces when ``$ICLR25_FIGURE_CHECK=strict``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ._atomic import atomic_path

__all__ = ["subplots", "savefig", "show", "figure_problems", "STYLE", "FIGURE_LOG_ENV", "FIGURE_CHECK_ENV"]

#: a file :func:`savefig` appends each saved figure's problems to (one ``path: problem`` line each)
FIGURE_LOG_ENV = "ICLR25_FIGURE_LOG"
#: ``strict``: :func:`savefig` refuses a figure with problems (a ``ValueError`` listing them)
FIGURE_CHECK_ENV = "ICLR25_FIGURE_CHECK"

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


def _is_colorbar(ax: Any) -> bool:
    return getattr(ax, "_colorbar", None) is not None or ax.get_label() == "<colorbar>"


def _scale(m: Any) -> tuple:
    """What a colour bar of ``m`` would show: its colour map and limits."""
    norm = getattr(m, "norm", None)
    cmap = getattr(m, "cmap", None)
    return (getattr(cmap, "name", None), type(norm).__name__, getattr(norm, "vmin", None), getattr(norm, "vmax", None))


def figure_problems(fig: Any) -> list[str]:
    """What a reader of ``fig`` would miss (issue 66), one line each: no title saying what it shows (a suptitle or
    an axes title); a panel that draws data with no label on an axis it shows; an image or mesh whose colour
    carries a value (a colour map, not RGB) without a colour bar (one bar serves every panel drawn on its colour map
    and limits); scattered points coloured by value with neither a colour bar nor a legend. Panels with their axes turned off (pictures, molecule drawings) need no labels.

    >>> fig, ax = subplots()
    >>> _ = ax.plot([0, 1], [1, 0])
    >>> figure_problems(fig)
    ['no title (fig.suptitle or an axes title) says what the figure shows', 'panel 1: no x-axis label', 'panel 1: no y-axis label']
    >>> _ = ax.set(title="loss per epoch", xlabel="epoch", ylabel="loss")
    >>> figure_problems(fig)
    []
    """
    probs: list[str] = []
    axes = [ax for ax in fig.axes if ax.get_visible() and not _is_colorbar(ax)]
    # one colour bar serves every mappable drawn on the same scale (colour map and limits) in the figure
    scales = {_scale(m) for ax in axes for m in (*ax.images, *ax.collections) if getattr(m, "colorbar", None)}

    def has_bar(m: Any) -> bool:
        return getattr(m, "colorbar", None) is not None or _scale(m) in scales

    sup = getattr(fig, "_suptitle", None)
    if not ((sup is not None and sup.get_text().strip()) or any(ax.get_title().strip() for ax in axes)):
        probs.append("no title (fig.suptitle or an axes title) says what the figure shows")
    for i, ax in enumerate(axes, 1):
        name = f"panel {i}" + (f" ({ax.get_title().strip()!r})" if ax.get_title().strip() else "")
        has_data = bool(ax.lines or ax.collections or ax.patches or ax.images)
        if ax.axison and has_data and not ax.images:
            # a panel sharing an axis with a labelled one (sharex/sharey) is read through that label
            shared_x = any(o.get_xlabel().strip() for o in ax.get_shared_x_axes().get_siblings(ax) if o is not ax)
            shared_y = any(o.get_ylabel().strip() for o in ax.get_shared_y_axes().get_siblings(ax) if o is not ax)
            if ax.xaxis.get_visible() and not ax.get_xlabel().strip() and not shared_x:
                probs.append(f"{name}: no x-axis label")
            if ax.yaxis.get_visible() and not ax.get_ylabel().strip() and not shared_y:
                probs.append(f"{name}: no y-axis label")
        valued = [im for im in ax.images if getattr(im.get_array(), "ndim", 3) == 2]
        valued += [c for c in ax.collections if type(c).__name__ in ("QuadMesh", "PolyCollection", "TriMesh")
                   and c.get_array() is not None]
        if not all(has_bar(m) for m in valued):
            probs.append(f"{name}: colour carries a value but there is no colour bar")
        points = [c for c in ax.collections if type(c).__name__ == "PathCollection" and c.get_array() is not None]
        if not all(has_bar(m) for m in points) and ax.get_legend() is None:
            probs.append(f"{name}: points coloured by value with neither a colour bar nor a legend")
    return probs


def _check_figure(fig: Any, name: str) -> None:
    """Log ``fig``'s problems to ``$ICLR25_FIGURE_LOG`` as ``name: problem`` lines; raise under strict."""
    problems = figure_problems(fig) if (os.environ.get(FIGURE_LOG_ENV) or os.environ.get(FIGURE_CHECK_ENV)) else []
    if problems and os.environ.get(FIGURE_CHECK_ENV, "").strip().lower() == "strict":
        raise ValueError(f"{name}: " + "; ".join(problems))
    if problems and os.environ.get(FIGURE_LOG_ENV):
        with open(os.environ[FIGURE_LOG_ENV], "a", encoding="utf-8") as log:
            log.writelines(f"{name}: {line}\n" for line in problems)


def savefig(fig: Any, path: str | os.PathLike[str], *, close: bool = True, **kwargs: Any) -> Path:
    """Save ``fig`` atomically (PNG unless the suffix says otherwise) and close it. Its
    :func:`figure_problems` are appended to the file ``$ICLR25_FIGURE_LOG`` names, when set, and refuse the save
    when ``$ICLR25_FIGURE_CHECK`` is ``strict``."""
    p = Path(path)
    if not p.suffix:
        raise ValueError(f"path must have a file suffix such as .png, got {str(p)!r}")
    _check_figure(fig, p.name)
    with atomic_path(p) as tmp:
        fig.savefig(tmp, format=p.suffix.lstrip(".").lower(), **kwargs)
    if close:
        _pyplot().close(fig)
    return p


def show(fig: Any, *, close: bool = True) -> bytes | None:
    """Show ``fig`` in a notebook as a PNG image, whatever matplotlib backend is active (Agg included), and return
    None (so that ``show(fig)`` as a cell's last line does not show it twice); outside IPython it only returns the
    PNG bytes. Like :func:`savefig`, its
    :func:`figure_problems` go to ``$ICLR25_FIGURE_LOG`` and refuse it under ``$ICLR25_FIGURE_CHECK=strict`` (the
    gallery runs that way)."""
    import io  # noqa: PLC0415

    _check_figure(fig, "shown figure")
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    if close:
        _pyplot().close(fig)
    data = buf.getvalue()
    try:
        from IPython.display import Image, display  # noqa: PLC0415
    except ImportError:
        return data
    display(Image(data=data, format="png"))
    return None
