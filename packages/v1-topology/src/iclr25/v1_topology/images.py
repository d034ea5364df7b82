"""Whitened natural images: the photographs that ship inside scikit-image and scikit-learn (nothing is
downloaded), or the user's own ``.npy``/``.npz`` stack, whitened with the Olshausen–Field filter.

References:
    Olshausen & Field (1997) Vision Res. 37:3311 (whitening filter R(f) = f·exp(−(f/f0)^4));
    King, Zylberberg & DeWeese (2013) J. Neurosci. (E-I Net inputs); paper note §2 "Stimuli".
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np

from iclr25.utils.guards import check_real
from iclr25.utils.io import DataFileError, read_array

__all__ = ["whiten", "builtin_images", "load_images", "BUILTIN_NAMES"]

#: scikit-image photographs that ship in its wheel (see the offline check), plus scikit-learn's two samples.
BUILTIN_NAMES = ("camera", "astronaut", "coffee", "chelsea", "rocket", "grass", "gravel", "brick",
                 "sklearn:china", "sklearn:flower")


def whiten(image: np.ndarray, *, f0: float = 0.4) -> np.ndarray:
    """Olshausen–Field whitening of one grey image, normalised to zero mean and unit variance.

    .. math:: \\hat I_w(\\mathbf f) = \\hat I(\\mathbf f)\\,|\\mathbf f|\\,e^{-(|\\mathbf f|/f_0)^4}

    with ``f`` in cycles per pixel (``f0`` = 0.4 is OF's 200 cycles per 512-pixel picture).
    """
    img = np.asarray(image, dtype=np.float64)
    if img.ndim != 2 or min(img.shape) < 16:
        raise ValueError(f"image must be a 2-D grey image of at least 16x16 pixels, got shape {img.shape}")
    if not np.all(np.isfinite(img)):
        raise ValueError("image must be finite (no NaN/inf)")
    if not (0 < f0 <= 0.5):
        raise ValueError(f"f0 must be in (0, 0.5] cycles per pixel, got {f0}")
    img = img - img.mean()
    fy = np.fft.fftfreq(img.shape[0])[:, None]
    fx = np.fft.fftfreq(img.shape[1])[None, :]
    f = np.sqrt(fx ** 2 + fy ** 2)
    out = np.real(np.fft.ifft2(np.fft.fft2(img) * f * np.exp(-((f / f0) ** 4))))
    sd = out.std()
    if sd == 0:
        raise ValueError("image is constant: it cannot be whitened")
    return (out - out.mean()) / sd


def _grey(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 3:
        a = a[..., :3].mean(axis=-1)
    return a


@functools.lru_cache(maxsize=4)
def _builtin(f0: float) -> tuple[np.ndarray, ...]:
    import skimage.data as skd

    out = []
    for name in BUILTIN_NAMES:
        if name.startswith("sklearn:"):
            from sklearn.datasets import load_sample_image

            out.append(whiten(_grey(load_sample_image(name.split(":")[1] + ".jpg")), f0=f0))
        else:
            out.append(whiten(_grey(getattr(skd, name)()), f0=f0))
    for a in out:
        a.setflags(write=False)
    return tuple(out)


def builtin_images(*, f0: float = 0.4) -> list[np.ndarray]:
    """The ten built-in photographs, grey, whitened (cached per process; read-only arrays)."""
    return list(_builtin(float(f0)))


def load_images(path: str | os.PathLike[str], *, f0: float = 0.4, min_size: int = 16) -> list[np.ndarray]:
    """The user's images: a ``.npy``/``.npz`` array of shape ``(H, W)`` or ``(n, H, W)`` (grey) or
    ``(n, H, W, 3)`` (colour, averaged), each whitened. Errors name the file."""
    p = Path(path)
    arr = read_array(p, what="image stack")
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
        raise DataFileError(p, f"images must be numeric, got dtype {arr.dtype}")
    if arr.ndim == 2:
        arr = arr[None]
    elif arr.ndim == 4 and arr.shape[-1] in (3, 4):
        arr = arr[..., :3].mean(-1)
    if arr.ndim != 3 or arr.shape[0] == 0:
        raise DataFileError(p, f"expected (H, W), (n, H, W) or (n, H, W, 3) images, got shape {arr.shape}")
    if min(arr.shape[1:]) < min_size:
        raise DataFileError(p, f"images must be at least {min_size}x{min_size} pixels, got {arr.shape[1:]}")
    try:  # complex (never cast to its real part), NaN/inf or overflowing pixels: one line naming the file
        arr = check_real(arr, "the images")
    except (TypeError, ValueError) as exc:
        raise DataFileError(p, str(exc)) from None
    try:
        return [whiten(a, f0=f0) for a in arr]
    except ValueError as exc:
        raise DataFileError(p, str(exc)) from exc
