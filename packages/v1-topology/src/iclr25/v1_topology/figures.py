"""Figures: orientation maps with their pinwheels, a colour key and a marker legend."""

from __future__ import annotations

from pathlib import Path

__all__ = ["plot_maps"]


def plot_maps(path: Path, panels: list[tuple[str, object, object]]) -> Path:
    """Orientation maps (hue = preferred orientation, brightness = selectivity) with pinwheels marked."""
    import numpy as np

    from iclr25.utils.plotting import savefig, subplots

    from .maps import pinwheels

    fig, axes = subplots(1, len(panels), size=(3.4, 3.4))
    axes = np.atleast_1d(axes)
    for ax, (title, theta, osi) in zip(axes, panels, strict=True):
        th = np.asarray(theta)
        hsv = np.stack([th / np.pi, np.ones_like(th), np.ones_like(th)], -1)
        if osi is not None:
            s = np.asarray(osi)
            hsv[..., 2] = 0.35 + 0.65 * np.clip(s / max(float(s.max()), 1e-9), 0, 1)
        from matplotlib.colors import hsv_to_rgb

        ax.imshow(hsv_to_rgb(hsv), origin="upper", interpolation="nearest")
        pw = pinwheels(np.exp(2j * th), periodic=True)
        if pw.count:
            pos = pw.positions[pw.charges > 0]
            neg = pw.positions[pw.charges < 0]
            ax.plot(pos[:, 1], pos[:, 0], "wo", ms=3.5, mec="k", mew=0.6, label="pinwheel +1")
            ax.plot(neg[:, 1], neg[:, 0], "ks", ms=3.0, mec="w", mew=0.6, label="pinwheel −1")
        ax.set_title(title, fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if handles:  # one marker legend under the panels, off the maps
        fig.legend(handles, labels, loc="lower center", ncol=len(handles), fontsize=6, frameon=False)
    # colour key: hue = preferred orientation (brightness = selectivity)
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    cb = fig.colorbar(ScalarMappable(norm=Normalize(0, 180), cmap="hsv"), ax=list(axes), fraction=0.03, pad=0.02,
                      ticks=[0, 45, 90, 135, 180])
    cb.set_label("preferred orientation (deg); brightness = OSI", fontsize=6)
    cb.ax.tick_params(labelsize=6)
    return savefig(fig, path)
