"""A user's own dated image sequences, and the generated data set on disk.

A sequence folder holds one image per date: PNG/JPEG (read with Pillow) or GeoTIFF (``.tif``/``.tiff``, read
with rasterio, the ``geotiff`` extra; the first three bands, percentile-stretched to 8 bit). Each frame's date
comes from ``dates.csv`` in the folder (``filename,YYYY-MM-DD`` lines) or from the file name
(``2021-06-30.png``, ``site_20210630.tif``). Frames are sorted by date, as TEOChat sorts by ``timestamp``;
more than ``max_frames`` (16 in the reference, ``MAX_IMAGE_LENGTH``) are thinned to an order-preserving,
*seeded* subset (the reference's ``order_pick_k`` used an unseeded ``np.random``).

The generated data set is one ``.npz``: ``frames`` (all frames, uint8), ``offsets``, ``dates`` and the
annotations as JSON (``meta``).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from iclr25.utils.io import DataFileError, read_npz, save_npz
from iclr25.utils.seeding import check_seed

from .synth import BuildingTrack, EOSequence

__all__ = ["IMAGE_SUFFIXES", "load_sequence", "parse_date", "save_dataset", "load_dataset", "resize_frames"]

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff")
_DATE_RE = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})")


def parse_date(text: str, *, where: str = "date") -> str:
    """``YYYY-MM-DD`` (or ``YYYYMMDD`` inside a name) -> ISO date string; ValueError naming ``where``."""
    m = _DATE_RE.search(str(text))
    if not m:
        raise ValueError(f"{where}: no date found (expected YYYY-MM-DD or YYYYMMDD), got {text!r}")
    try:
        return _dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))).isoformat()
    except ValueError:
        raise ValueError(f"{where}: {m.group(0)!r} is not a valid calendar date") from None


def _read_image(p: Path) -> np.ndarray:
    if p.stat().st_size == 0:
        raise DataFileError(p, "empty image file")
    if p.suffix.lower() in (".tif", ".tiff"):
        try:
            import rasterio  # noqa: PLC0415
        except ImportError:
            raise ImportError(f"{p}: reading GeoTIFF needs rasterio: pip install 'iclr25-teochat[geotiff]'") from None
        try:
            with rasterio.open(p) as src:
                arr = src.read()
        except Exception as exc:  # noqa: BLE001 - rasterio raises its own error types for corrupt files
            raise DataFileError(p, f"cannot read as GeoTIFF ({type(exc).__name__})") from None
        arr = np.moveaxis(arr, 0, -1).astype(np.float64)
        if arr.shape[-1] == 1:
            arr = np.repeat(arr, 3, axis=-1)
        arr = arr[..., :3]
        if not np.all(np.isfinite(arr)):
            arr = np.nan_to_num(arr, nan=float(np.nanmedian(arr)))
        lo, hi = np.percentile(arr, [2, 98])
        return (np.clip((arr - lo) / max(hi - lo, 1e-9), 0, 1) * 255).round().astype(np.uint8)
    from PIL import Image, UnidentifiedImageError  # noqa: PLC0415

    try:
        with Image.open(p) as im:
            return np.asarray(im.convert("RGB"), dtype=np.uint8)
    except (UnidentifiedImageError, OSError) as exc:
        raise DataFileError(p, f"cannot read as an image ({type(exc).__name__})") from None


def resize_frames(frames: np.ndarray, size: int) -> np.ndarray:
    """Resize uint8 ``(T, H, W, 3)`` frames to ``(T, size, size, 3)`` (anti-aliased, as an image processor)."""
    if frames.shape[1:3] == (size, size):
        return frames
    from skimage.transform import resize  # noqa: PLC0415

    out = np.stack([resize(f, (size, size), anti_aliasing=True, preserve_range=True) for f in frames])
    return out.round().clip(0, 255).astype(np.uint8)


class FramesThinnedWarning(UserWarning):
    """A sequence folder held more frames than the model takes; an order-preserving subset was used."""


def load_sequence(folder: str | os.PathLike[str], *, dates: Sequence[str] | None = None, max_frames: int = 16,
                  seed: int = 0) -> EOSequence:
    """Read a folder of dated frames into an :class:`EOSequence` sorted by date.

    ``dates`` (one per image file, in sorted file-name order) overrides ``dates.csv`` and the file names.
    Frames must all have the same size; at least one frame is needed. More than ``max_frames`` frames are
    thinned to an order-preserving seeded subset, with a :class:`FramesThinnedWarning` saying so.
    """
    if not isinstance(folder, (str, os.PathLike)):
        raise TypeError(f"folder must be a path, got {type(folder).__name__}")
    root = Path(folder)
    if not root.exists():
        raise FileNotFoundError(f"{root}: no such sequence folder")
    if not root.is_dir():
        raise ValueError(f"{root}: --sequence must be a folder of dated images ({', '.join(IMAGE_SUFFIXES)})")
    if isinstance(max_frames, bool) or not isinstance(max_frames, int) or max_frames < 1:
        raise ValueError(f"max_frames must be an integer >= 1, got {max_frames!r}")
    files = sorted(p for p in root.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file())
    if not files:
        raise ValueError(f"{root}: no images ({', '.join(IMAGE_SUFFIXES)}) in the sequence folder")
    if dates is not None:
        if len(dates) != len(files):
            raise ValueError(f"dates must give one date per image: {len(dates)} dates for {len(files)} images "
                             f"in {root}")
        found = [parse_date(d, where=f"dates[{i}]") for i, d in enumerate(dates)]
    else:
        table: dict[str, str] = {}
        csv = root / "dates.csv"
        if csv.is_file():
            for n, line in enumerate(csv.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                if not line.strip() or line.lstrip().startswith("#") or line.lower().startswith("file"):
                    continue
                parts = [x.strip() for x in line.split(",")]
                if len(parts) < 2:
                    raise ValueError(f"{csv}:{n}: expected 'filename,YYYY-MM-DD', got {line!r}")
                table[parts[0]] = parse_date(parts[1], where=f"{csv}:{n}")
        found = []
        for p in files:
            if p.name in table:
                found.append(table[p.name])
            elif _DATE_RE.search(p.stem):
                found.append(parse_date(p.stem, where=str(p)))
            else:
                raise ValueError(f"{p}: missing date: name the file by its date (YYYY-MM-DD) or list it in "
                                 f"{csv.name} as 'filename,YYYY-MM-DD'")
    frames = [_read_image(p) for p in files]
    shapes = {f.shape for f in frames}
    if len(shapes) > 1:
        detail = ", ".join(f"{p.name} {f.shape[1]}x{f.shape[0]}" for p, f in zip(files, frames, strict=True))
        raise ValueError(f"{root}: frames of different sizes ({detail}); every frame must have the same size")
    order = np.argsort([_dt.date.fromisoformat(d).toordinal() for d in found], kind="stable")
    if len(order) > max_frames:  # order-preserving, seeded subset (reference: order_pick_k, unseeded)
        rng = np.random.default_rng(check_seed(seed))
        order = order[np.sort(rng.choice(len(order), size=max_frames, replace=False))]
        kept = [found[i] for i in order]
        warnings.warn(f"{root}: {len(files)} frames, more than max_frames = {max_frames}; using an order-preserving "
                      f"seeded subset of {max_frames} (dates {kept[0]} ... {kept[-1]}), as TEOChat does "
                      "(MAX_IMAGE_LENGTH = 16)", FramesThinnedWarning, stacklevel=2)
    return EOSequence(frames=np.stack([frames[i] for i in order]), dates=tuple(found[i] for i in order),
                      name=root.name)


def save_dataset(path: str | os.PathLike[str], sequences: Sequence[EOSequence]) -> Path:
    """Write sequences (frames in their stored, shuffled order) and annotations to one ``.npz``."""
    if not sequences:
        raise ValueError("sequences must not be empty")
    frames = np.concatenate([s.frames for s in sequences])
    offsets = np.cumsum([0] + [s.n_frames for s in sequences])
    meta = [{"scene": s.scene, "name": s.name, "dates": list(s.dates), "flood": list(s.flood_frames),
             "buildings": [{"box": list(b.box), "statuses": list(b.statuses), "damage": b.damage}
                           for b in s.buildings]} for s in sequences]
    return save_npz(path, frames=frames, offsets=offsets, meta=np.array(json.dumps(meta)))


def load_dataset(path: str | os.PathLike[str]) -> list[EOSequence]:
    """Read a data set written by :func:`save_dataset` / ``iclr25 teochat generate``."""
    z = read_npz(path, required=("frames", "offsets", "meta"), what="teochat data set")
    p = Path(path)
    frames, offsets = z["frames"], z["offsets"]
    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.dtype != np.uint8:
        raise DataFileError(p, f"frames must be uint8 (N, H, W, 3), got {frames.dtype} {frames.shape}")
    try:
        meta = json.loads(str(z["meta"]))
    except json.JSONDecodeError as exc:
        raise DataFileError(p, f"meta is not JSON ({exc})") from None
    if offsets.ndim != 1 or len(offsets) != len(meta) + 1 or offsets[-1] != len(frames):
        raise DataFileError(p, "offsets do not match the frames and the annotations")
    out = []
    for i, m in enumerate(meta):
        try:
            out.append(EOSequence(
                frames=frames[offsets[i]:offsets[i + 1]], dates=tuple(m["dates"]), scene=m["scene"],
                buildings=tuple(BuildingTrack(tuple(b["box"]), tuple(b["statuses"]), b["damage"])
                                for b in m["buildings"]),
                flood_frames=tuple(m["flood"]), name=m["name"]))
        except (KeyError, TypeError) as exc:
            raise DataFileError(p, f"sequence {i}: malformed annotation ({exc})") from None
    return out
