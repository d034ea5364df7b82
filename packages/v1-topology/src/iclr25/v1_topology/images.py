"""Whitened natural images: the photographs that ship inside scikit-image and scikit-learn (nothing is
downloaded), or the user's own images (``.npy``/``.npz`` stacks, PNG/JPEG/TIFF files or folders, Olshausen's
``IMAGES.mat``, van Hateren ``.iml``), whitened with the Olshausen–Field filter.

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

__all__ = ["whiten", "builtin_images", "load_images", "read_images", "read_iml", "BUILTIN_NAMES", "FILE_SUFFIXES"]

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


#: Image files read from a folder (or named directly), besides .npy/.npz stacks and .mat files.
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff")
#: van Hateren's raw images: big-endian uint16, 1024 rows of 1536 pixels, no header (.iml; .imc calibrated).
VAN_HATEREN_SUFFIXES = (".iml", ".imc")
VAN_HATEREN_SHAPE = (1024, 1536)
FILE_SUFFIXES = (".npy", ".npz", ".mat", *IMAGE_SUFFIXES, *VAN_HATEREN_SUFFIXES)
_KIND = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".tif": "TIFF", ".tiff": "TIFF"}


def _why(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__


def _pil_frames(p: Path) -> list[np.ndarray]:
    """Every frame of a PNG/JPEG/TIFF (multi-page TIFFs give several), grey (RGB averaged, as for the
    built-in photographs; alpha dropped), float64 with the file's own value range (16-bit TIFFs kept)."""
    from PIL import Image, ImageSequence, UnidentifiedImageError  # noqa: PLC0415

    try:
        with Image.open(p) as im:
            frames = []
            for fr in ImageSequence.Iterator(im):
                if fr.mode in ("P", "PA", "LA", "1", "CMYK", "YCbCr", "HSV", "LAB"):
                    fr = fr.convert("RGB")  # noqa: PLW2901 - palette and other modes: RGB first
                frames.append(_grey(np.asarray(fr)))
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
        raise DataFileError(p, f"cannot read the image ({_why(exc)})") from None
    return frames


def _pil_size(p: Path) -> int:
    """Pixels of a PNG/JPEG/TIFF from its header (nothing decoded)."""
    from PIL import Image, UnidentifiedImageError  # noqa: PLC0415

    try:
        with Image.open(p) as im:
            return int(im.size[0] * im.size[1] * getattr(im, "n_frames", 1))
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise DataFileError(p, f"cannot read the image ({_why(exc)})") from None


def read_iml(path: str | os.PathLike[str]) -> np.ndarray:
    """A van Hateren ``.iml``/``.imc`` image: 1024 x 1536 big-endian uint16 (checked by the file size)."""
    p = Path(path)
    need = VAN_HATEREN_SHAPE[0] * VAN_HATEREN_SHAPE[1] * 2
    size = p.stat().st_size
    if size != need:
        raise DataFileError(p, f"not a van Hateren image: {size} bytes, expected {need} (1536 x 1024 big-endian "
                               "uint16, no header)")
    return np.fromfile(p, dtype=">u2").reshape(VAN_HATEREN_SHAPE).astype(np.float64)


def _mat_images(p: Path) -> tuple[np.ndarray, bool, str]:
    """``(stack (n, H, W), already whitened, key)`` of Olshausen's ``IMAGES.mat`` (whitened: ``IMAGES``) or
    ``IMAGES_RAW.mat`` (``IMAGESr``), stored (H, W, n) as MATLAB writes them."""
    import scipy.io  # noqa: PLC0415

    try:
        names = {name: shape for name, shape, _ in scipy.io.whosmat(p)}
    except (ValueError, TypeError, OSError, NotImplementedError) as exc:
        raise DataFileError(p, f"not a readable MATLAB v5 .mat file ({exc})") from None
    key = next((k for k in ("IMAGES", "IMAGESr") if k in names), None)
    if key is None:
        raise DataFileError(p, f"no IMAGES (whitened) or IMAGESr (raw) array; the file has {sorted(names)}")
    try:
        arr = np.asarray(scipy.io.loadmat(p, variable_names=[key])[key])
    except (ValueError, TypeError, OSError, NotImplementedError) as exc:
        raise DataFileError(p, f"cannot read {key} ({exc})") from None
    if arr.dtype.kind not in "fiu" or arr.ndim not in (2, 3):
        raise DataFileError(p, f"{key} must be a numeric (H, W, n) array, got {arr.dtype} {arr.shape}")
    stack = arr[None] if arr.ndim == 2 else np.moveaxis(arr, -1, 0)
    return stack.astype(np.float64), key == "IMAGES", key


def _normalise(img: np.ndarray) -> np.ndarray:
    sd = img.std()
    if sd == 0 or not np.isfinite(sd):
        raise ValueError("image is constant: it cannot be normalised")
    return (img - img.mean()) / sd


def _files(p: Path) -> list[Path]:
    if not p.is_dir():
        return [p]
    files = sorted(q for q in p.iterdir() if q.is_file() and q.suffix.lower() in FILE_SUFFIXES
                   and q.suffix.lower() not in (".npy", ".npz"))
    if not files:
        held = sorted(q.name for q in p.iterdir())[:5]
        raise DataFileError(p, f"no image files ({', '.join(FILE_SUFFIXES[2:])}) in the folder; it holds {held}")
    return files


def _estimate(files: list[Path]) -> int:
    """Pixels of all images, from headers and sizes only."""
    total = 0
    for q in files:
        s = q.suffix.lower()
        if s in VAN_HATEREN_SUFFIXES:
            total += VAN_HATEREN_SHAPE[0] * VAN_HATEREN_SHAPE[1]
        elif s == ".mat":
            total += q.stat().st_size // 4  # at least 4 bytes per stored value (single precision)
        else:
            total += _pil_size(q)
    return total


def read_images(path: str | os.PathLike[str], *, f0: float = 0.4, min_size: int = 16,
                force: bool = False) -> tuple[list[np.ndarray], str]:
    """The user's images, grey and whitened, and a line saying what was read.

    ``path``: a ``.npy``/``.npz`` stack (see :func:`load_images`); a PNG/JPEG/TIFF file (every page of a
    multi-page TIFF); Olshausen's ``IMAGES.mat`` (``IMAGES``, already whitened: only normalised) or
    ``IMAGES_RAW.mat`` (``IMAGESr``: whitened here); a van Hateren ``.iml``/``.imc`` (raw big-endian uint16
    1536 x 1024); or a folder of such image files (read one at a time, in name order). Colour is averaged to
    grey as for the built-in photographs; every image is whitened with the Olshausen-Field filter and
    normalised. The whitened set is held in memory (8 bytes a pixel): a set that cannot fit is refused with the
    estimate before anything is decoded, unless ``force``.
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file or folder")
    if p.is_file() and p.suffix.lower() in (".npy", ".npz"):
        imgs = _load_stack(p, f0=f0, min_size=min_size)
        return imgs, f"{p}: {len(imgs)} images from the array stack, whitened"
    if p.is_file() and p.suffix.lower() not in FILE_SUFFIXES:
        raise DataFileError(p, f"unsupported image format {p.suffix or '(no suffix)'!r}; expected a folder or one of "
                               f"{', '.join(FILE_SUFFIXES)}")
    files = _files(p)
    from iclr25.utils.guards import check_size  # noqa: PLC0415

    pixels = _estimate(files)
    check_size(f"--images {p} ({len(files)} files, {pixels} pixels)", bytes_needed=8 * pixels + 64 * 2**20,
               force=force)
    out: list[np.ndarray] = []
    kinds: dict[str, int] = {}
    for q in files:  # one file at a time: only the whitened images accumulate
        s = q.suffix.lower()
        if s == ".mat":
            stack, done, key = _mat_images(q)
            frames, kind = list(stack), f"{key} (.mat{', already whitened: normalised only' if done else ''})"
        elif s in VAN_HATEREN_SUFFIXES:
            frames, done, kind = [read_iml(q)], False, "van Hateren " + s
        else:
            frames, done, kind = _pil_frames(q), False, _KIND[s]
        for a in frames:
            if a.ndim != 2 or min(a.shape) < min_size:
                raise DataFileError(q, f"images must be at least {min_size}x{min_size} grey pixels, got {a.shape}")
            if not np.all(np.isfinite(a)):
                raise DataFileError(q, "the image holds NaN or inf")
            try:
                out.append(_normalise(a) if done else whiten(a, f0=f0))
            except ValueError as exc:
                raise DataFileError(q, str(exc)) from None
        kinds[kind] = kinds.get(kind, 0) + len(frames)
    what = ", ".join(f"{v} {k}" for k, v in kinds.items())
    return out, f"{p}: {len(out)} images ({what}), grey, whitened (f0 = {f0})"


def load_images(path: str | os.PathLike[str], *, f0: float = 0.4, min_size: int = 16,
                force: bool = False) -> list[np.ndarray]:
    """The user's images, grey and whitened (:func:`read_images` without the description)."""
    return read_images(path, f0=f0, min_size=min_size, force=force)[0]


def _load_stack(p: Path, *, f0: float, min_size: int) -> list[np.ndarray]:
    """The user's images: a ``.npy``/``.npz`` array of shape ``(H, W)`` or ``(n, H, W)`` (grey) or
    ``(n, H, W, 3)`` (colour, averaged), each whitened. Errors name the file."""
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
