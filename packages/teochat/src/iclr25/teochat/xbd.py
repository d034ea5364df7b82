"""xBD-format data (Gupta et al., *xBD*, CVPR-W 2019; the xView2 challenge layout) as the package's samples.

A folder in xBD's layout holds ``images/<id>_pre_disaster.png`` and ``images/<id>_post_disaster.png`` (one pair
per tile) and ``labels/<id>_pre_disaster.json`` / ``labels/<id>_post_disaster.json``; the folder may also hold
such ``images``/``labels`` pairs one level down (``train/``, ``tier1/``, ``hold/``, ...). A label file is JSON:
``features.xy`` is a list of features, each with ``wkt`` (a ``POLYGON ((x y, x y, ...))`` in the image's pixel
coordinates) and ``properties`` (``feature_type``, ``uid`` and, in the post-disaster file, ``subtype``: the
damage level ``no-damage``, ``minor-damage``, ``major-damage``, ``destroyed`` or ``un-classified``);
``metadata.capture_date`` dates the image (``features.lng_lat`` repeats the polygons in degrees and is not read).

Each pair becomes one two-frame :class:`~iclr25.teochat.synth.EOSequence` of scene ``residential`` (the
package's xBD analog): the frames resized to ``size`` px, each building a
:class:`~iclr25.teochat.synth.BuildingTrack` whose box is its polygon's bounding box on the resized grid,
``roofed`` before and its damage look after (``no_damage`` -> ``roofed``, ``minor_damage``, ``major_damage``,
``destroyed``), its damage level from the post-disaster ``subtype``. So the package's questions apply as on
the generated data: change localisation ("identify the buildings that changed": the damaged ones), damage
classification per building, referring expressions by damage level. ``un-classified`` buildings (xView2 scores
none of them) and features that are not buildings are left out. Pairs are read in sorted order of their ids.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from iclr25.utils.io import DataFileError

from .synth import BuildingTrack, EOSequence

__all__ = ["XBD_DAMAGE", "read_xbd", "parse_wkt_polygon", "xbd_pairs", "write_xbd_fixture"]

#: xBD's damage subtypes -> the package's damage levels (``un-classified``: left out)
XBD_DAMAGE = {"no-damage": "no_damage", "minor-damage": "minor_damage", "major-damage": "major_damage",
              "destroyed": "destroyed"}
_LOOK = {"no_damage": "roofed", "minor_damage": "minor_damage", "major_damage": "major_damage",
         "destroyed": "destroyed"}
_NUM = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
#: placeholder dates when a label file gives none (the order, pre before post, is what the model reads)
_PRE_DATE, _POST_DATE = "2000-01-01", "2000-01-02"


def parse_wkt_polygon(text: str) -> np.ndarray:
    """The outer ring of a WKT ``POLYGON ((x y, ...), (...))`` (or the first polygon of a ``MULTIPOLYGON``) as an
    ``(n, 2)`` float array; ValueError for anything else."""
    t = str(text).strip()
    head = t.split("(", 1)[0].strip().upper()
    if head not in ("POLYGON", "MULTIPOLYGON") or "(" not in t:
        raise ValueError(f"not a WKT polygon: {t[:60]!r}")
    body = t[t.index("(") :].lstrip("( ")
    ring = body.split(")", 1)[0]
    pts = []
    for pair in ring.split(","):
        nums = _NUM.findall(pair)
        if len(nums) < 2:
            raise ValueError(f"not a WKT polygon (a vertex without x and y): {t[:60]!r}")
        pts.append((float(nums[0]), float(nums[1])))
    if len(pts) < 3:
        raise ValueError(f"not a WKT polygon (fewer than 3 vertices): {t[:60]!r}")
    return np.asarray(pts, dtype=np.float64)


def xbd_pairs(folder: str | os.PathLike[str]) -> list[tuple[str, Path, Path, Path, Path | None]]:
    """``(tile id, pre image, post image, post label, pre label or None)`` for every tile in ``folder``'s
    ``images``/``labels`` (and those one level down), sorted by id; errors name what is missing."""
    root = Path(folder)
    if not root.is_dir():
        raise FileNotFoundError(f"--xbd {root}: no such folder (expected xBD's images/ and labels/ folders)")
    bases = [root] if (root / "labels").is_dir() else []
    bases += sorted(p for p in root.iterdir() if p.is_dir() and (p / "labels").is_dir())
    if not bases:
        raise FileNotFoundError(f"--xbd {root}: no labels/ folder in it or one level down (xBD's layout: "
                                "images/<id>_pre_disaster.png, images/<id>_post_disaster.png, labels/<id>_*.json)")
    out = []
    for base in bases:
        for lab in sorted((base / "labels").glob("*_post_disaster.json")):
            tid = lab.name.removesuffix("_post_disaster.json")
            pre, post = (base / "images" / f"{tid}_{w}_disaster.png" for w in ("pre", "post"))
            for img in (pre, post):
                if not img.is_file():
                    raise FileNotFoundError(f"{lab}: its image {img} is missing")
            pre_lab = base / "labels" / f"{tid}_pre_disaster.json"
            out.append((tid, pre, post, lab, pre_lab if pre_lab.is_file() else None))
    if not out:
        raise FileNotFoundError(f"--xbd {root}: no labels/*_post_disaster.json file")
    return out


def _load_label(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        feats = data["features"]["xy"]
        if not isinstance(feats, list):
            raise TypeError("features.xy is not a list")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataFileError(path, f"not an xBD label file (JSON with features.xy: {type(exc).__name__})") from None
    return data


def _date(label: dict | None, fallback: str) -> str:
    from .sequences import parse_date  # noqa: PLC0415

    raw = ((label or {}).get("metadata") or {}).get("capture_date")
    try:
        return parse_date(raw) if raw else fallback
    except ValueError:
        return fallback


def _box(poly: np.ndarray, w: int, h: int, size: int) -> tuple[int, int, int, int] | None:
    """Bounding box of ``poly`` (pixels of a ``w`` x ``h`` image) on the ``size`` px grid, at least 1 px."""
    x1 = int(np.floor(np.clip(poly[:, 0].min(), 0, w) * size / w))
    x2 = int(np.ceil(np.clip(poly[:, 0].max(), 0, w) * size / w))
    y1 = int(np.floor(np.clip(poly[:, 1].min(), 0, h) * size / h))
    y2 = int(np.ceil(np.clip(poly[:, 1].max(), 0, h) * size / h))
    x1, y1 = min(x1, size - 1), min(y1, size - 1)
    x2, y2 = max(x2, x1 + 1), max(y2, y1 + 1)
    return (x1, y1, min(x2, size), min(y2, size))


def read_xbd(folder: str | os.PathLike[str], *, size: int = 32, limit: int | None = None) -> list[EOSequence]:
    """Every pre/post pair of an xBD-format ``folder`` as a two-frame sequence at ``size`` px (module docstring);
    ``limit`` reads the first pairs only."""
    from .sequences import _read_image, resize_frames  # noqa: PLC0415

    seqs = []
    for tid, pre, post, lab, pre_lab in xbd_pairs(folder)[:limit]:
        label = _load_label(lab)
        pre_label = _load_label(pre_lab) if pre_lab is not None else None
        a, b = _read_image(pre), _read_image(post)
        if a.shape != b.shape:
            raise DataFileError(post, f"its size {b.shape[1]}x{b.shape[0]} differs from the pre-disaster image's "
                                      f"{a.shape[1]}x{a.shape[0]}")
        h, w = a.shape[:2]
        buildings = []
        for i, feat in enumerate(label["features"]["xy"]):
            props = feat.get("properties") or {}
            if props.get("feature_type", "building") != "building":
                continue
            level = XBD_DAMAGE.get(str(props.get("subtype", "")))
            if level is None:  # un-classified, or a post label without a damage subtype
                continue
            try:
                poly = parse_wkt_polygon(feat.get("wkt", ""))
            except ValueError as exc:
                raise DataFileError(lab, f"feature {i}: {exc}") from None
            buildings.append(BuildingTrack(_box(poly, w, h, size), ("roofed", _LOOK[level]), damage=level))
        d0, d1 = _date(pre_label, _PRE_DATE), _date(label, _POST_DATE)
        if d1 <= d0:  # undated or same-day captures: the order of xBD's layout (pre before post)
            d0, d1 = _PRE_DATE, _POST_DATE
        frames = resize_frames(np.stack([a, b]), size)
        seqs.append(EOSequence(frames, (d0, d1), "residential", tuple(buildings), name=tid))
    return seqs


def write_xbd_fixture(folder: str | os.PathLike[str], sequences: Sequence[EOSequence], *,
                      scale: int = 4) -> Path:
    """Write ``sequences`` (two or more frames; the first and last are used) in xBD's layout under ``folder``:
    PNGs upscaled ``scale`` times, labels with WKT polygons in ``features.xy`` and damage subtypes (the tests'
    fixture and a way to try ``--xbd`` without the data set)."""
    from PIL import Image  # noqa: PLC0415

    root = Path(folder)
    (root / "images").mkdir(parents=True, exist_ok=True)
    (root / "labels").mkdir(parents=True, exist_ok=True)
    back = {v: k for k, v in XBD_DAMAGE.items()}
    for n, s in enumerate(sequences):
        tid = f"synthetic-disaster_{n:08d}"
        frames = s.chronological()
        dates = sorted(s.dates)
        for when, frame, date in (("pre", frames[0], dates[0]), ("post", frames[-1], dates[-1])):
            img = np.repeat(np.repeat(frame, scale, axis=0), scale, axis=1)
            Image.fromarray(img).save(root / "images" / f"{tid}_{when}_disaster.png")
            feats = []
            for k, bld in enumerate(s.buildings):
                if bld.damage is None:
                    continue
                x1, y1, x2, y2 = (v * scale for v in bld.box)
                props = {"feature_type": "building", "uid": f"{tid}-{k}"}
                if when == "post":
                    props["subtype"] = back[bld.damage]
                wkt = f"POLYGON (({x1} {y1}, {x2} {y1}, {x2} {y2}, {x1} {y2}, {x1} {y1}))"
                feats.append({"properties": props, "wkt": wkt})
            label = {"features": {"lng_lat": [], "xy": feats},
                     "metadata": {"width": int(img.shape[1]), "height": int(img.shape[0]),
                                  "disaster": "synthetic-disaster", "capture_date": f"{date}T10:00:00.000Z",
                                  "img_name": f"{tid}_{when}_disaster.png"}}
            (root / "labels" / f"{tid}_{when}_disaster.json").write_text(json.dumps(label), encoding="utf-8")
    return root
