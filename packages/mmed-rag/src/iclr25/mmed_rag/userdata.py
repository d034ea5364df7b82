"""Your own images and reports: a folder of PNG/JPEG images with their reports in the layouts public chest X-ray
sets ship in, and findings read from the reports with a vocabulary you give (finding → report phrases).

Layouts read (``read_folder``; checked in this order):

- **R2Gen's** ``annotation.json`` (IU-Xray and MIMIC-CXR as most report-generation code ships them): a dict of
  splits (``train``, ``val``, ``test``), each a list of studies ``{"id", "report", "image_path": [paths relative to
  ROOT/images/], ...}``; every image of a study is one sample with the study's report.
- **IU-Xray (Open-i, as on Kaggle)**: ``indiana_reports.csv`` (``uid``, ``findings``, ``impression``, ...) and
  ``indiana_projections.csv`` (``uid``, ``filename``, ``projection``), images in ``ROOT/images/images_normalized/``
  (or ``ROOT/images/``); no split is given, so a study goes to ``test`` when CRC-32 of its uid is divisible by 5
  (one in five, the same on every machine), else to ``train``.
- **MIMIC-CXR-JPG**: ``mimic-cxr-2.0.0-split.csv`` (or ``.csv.gz``; ``dicom_id``, ``study_id``, ``subject_id``,
  ``split``), images ``ROOT/files/pXX/p<subject>/s<study>/<dicom>.jpg`` and the reports of MIMIC-CXR
  ``ROOT/files/pXX/p<subject>/s<study>.txt`` (``validate`` is read as ``val``).
- **Plain**: ``reports.csv`` or ``reports.json`` (a list of objects) with ``image`` (a path relative to ROOT; several
  separated by ``;``) and ``report``, optionally ``split`` (train / val / test; absent: the CRC-32 rule on the
  image path) and ``domain`` (radiology / pathology / ophthalmology; default ``--domain``).

The retrieval database (``db``) is the training split (as in the paper); ``val`` is read as ``test`` when a layout
has no ``test`` split. Images are read with Pillow, converted to RGB and resized to ``size`` × ``size``. DICOM
(``.dcm``, e.g. MIMIC-CXR's ``files/pXX/p<subject>/s<study>/<dicom>.dcm`` where no ``.jpg`` is there) is read with
pydicom (the ``dicom`` extra): the first frame, rescale slope/intercept applied, MONOCHROME1 inverted, scaled by its
own minimum and maximum to [0, 1] (grey copied to RGB).

Findings: a JSON vocabulary ``{"effusion": ["pleural effusion", "effusion"], ...}``. A report states a finding
when one of its phrases occurs in a sentence (whole words, case-insensitive); it states its absence when a
negation cue (``no``, ``not``, ``without``, ``negative for``, ``free of``, ``absence of``, ``resolved``) comes
before the phrase in that sentence with no "but", "however", "although", "though", "except" or "yet" between
them. A report that states neither counts as absent in ``labels`` (what the image is taken to show; the common
convention for report-derived labels) and is read as "nothing stated" when a retrieved report is read back. With no vocabulary, :data:`DEFAULT_VOCABULARY` (the package's four radiology
findings). The yes/no question about a finding is ``"is there <finding> ?"``.

References: Chen et al., *Generating Radiology Reports via Memory-driven Transformer* (R2Gen), EMNLP 2020
(``annotation.json``); Demner-Fushman et al. 2016 (IU-Xray / Open-i); Johnson et al. 2019 (MIMIC-CXR,
MIMIC-CXR-JPG); Chapman et al. 2001 (NegEx: negation cues before a finding in its sentence).
"""

from __future__ import annotations

import csv
import gzip
import json
import os
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .vocabulary import FindingVocabulary

__all__ = ["FindingVocabulary", "DEFAULT_VOCABULARY", "read_folder", "folder_layout", "is_report_folder",
           "UserDataError"]

#: The package's four radiology findings as a vocabulary (the default for a folder of chest X-rays).
DEFAULT_VOCABULARY = {"opacity": ["opacity", "opacities"], "cardiomegaly": ["cardiomegaly", "heart is enlarged"],
                      "effusion": ["pleural effusion", "effusion", "effusions"], "nodule": ["nodule", "nodules"]}
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".dcm", ".dicom")
_DICOM_SUFFIXES = (".dcm", ".dicom")


class UserDataError(ValueError):
    """A report folder that cannot be read: one line naming the file and what is wrong."""


# ------------------------------------------------------------------------------------------------ layouts
def _crc_split(key: str) -> str:
    return "test" if zlib.crc32(key.encode("utf-8")) % 5 == 0 else "train"


def _read_csv(path: Path) -> list[dict[str, str]]:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8", newline="") as f:
            return [{(k or "").strip().lower(): (v or "") for k, v in row.items()} for row in csv.DictReader(f)]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UserDataError(f"{path}: cannot read as CSV ({exc})") from exc


def _need(path: Path, rows: list[dict[str, str]], cols: Sequence[str]) -> None:
    if not rows:
        raise UserDataError(f"{path}: no rows")
    missing = [c for c in cols if c not in rows[0]]
    if missing:
        raise UserDataError(f"{path}: missing column(s) {missing}; it has {sorted(rows[0])}")


def _r2gen(root: Path) -> list[tuple[str, Path, str, str | None]]:
    path = root / "annotation.json"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserDataError(f"{path}: not JSON ({exc})") from exc
    if not isinstance(raw, dict):
        raise UserDataError(f"{path}: expected an object of splits (train / val / test)")
    out = []
    for split, studies in raw.items():
        for s in studies:
            if not isinstance(s, dict) or "report" not in s or "image_path" not in s:
                raise UserDataError(f"{path}: split {split!r}: each study needs 'report' and 'image_path'")
            for p in s["image_path"] if isinstance(s["image_path"], list) else [s["image_path"]]:
                out.append((split, root / "images" / p, str(s["report"]), None))
    return out


def _iu_xray(root: Path) -> list[tuple[str, Path, str, str | None]]:
    rp, pp = root / "indiana_reports.csv", root / "indiana_projections.csv"
    reports, projections = _read_csv(rp), _read_csv(pp)
    _need(rp, reports, ("uid", "findings", "impression"))
    _need(pp, projections, ("uid", "filename"))
    text = {r["uid"].strip(): " ".join(t for t in (r["findings"].strip(), r["impression"].strip()) if t)
            for r in reports}
    base = root / "images" / "images_normalized"
    base = base if base.is_dir() else root / "images"
    out = []
    for p in projections:
        uid = p["uid"].strip()
        if uid in text and text[uid]:
            out.append((_crc_split(uid), base / p["filename"].strip(), text[uid], None))
    return out


def _mimic(root: Path, split_csv: Path) -> list[tuple[str, Path, str, str | None]]:
    rows = _read_csv(split_csv)
    _need(split_csv, rows, ("dicom_id", "study_id", "subject_id", "split"))
    out = []
    for r in rows:
        subj, study = r["subject_id"].strip(), r["study_id"].strip()
        folder = root / "files" / f"p{subj[:2]}" / f"p{subj}"
        report = folder / f"s{study}.txt"
        if not report.is_file():
            raise UserDataError(f"{report}: the report of study {study} is missing (MIMIC-CXR's files/ tree)")
        split = {"validate": "val"}.get(r["split"].strip(), r["split"].strip())
        image = folder / f"s{study}" / f"{r['dicom_id'].strip()}.jpg"
        if not image.is_file() and image.with_suffix(".dcm").is_file():  # MIMIC-CXR's DICOM tree
            image = image.with_suffix(".dcm")
        out.append((split, image,
                    report.read_text(encoding="utf-8", errors="replace"), None))
    return out


def _plain(root: Path, path: Path) -> list[tuple[str, Path, str, str | None]]:
    if path.suffix == ".json":
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise UserDataError(f"{path}: not JSON ({exc})") from exc
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise UserDataError(f"{path}: expected a list of objects with 'image' and 'report'")
        rows = [{str(k).lower(): v for k, v in r.items()} for r in rows]
    else:
        rows = _read_csv(path)
    _need(path, rows, ("image", "report"))
    out = []
    for r in rows:
        images = r["image"] if isinstance(r["image"], list) else [x for x in str(r["image"]).split(";") if x.strip()]
        for im in images:
            split = str(r.get("split") or "").strip().lower() or _crc_split(str(im).strip())
            out.append((split, root / str(im).strip(), str(r["report"]), str(r.get("domain") or "").strip() or None))
    return out


def folder_layout(root: Path) -> str:
    """Which layout ``root`` holds (``r2gen``, ``iu-xray``, ``mimic-cxr``, ``plain``), or ``""``."""
    if (root / "annotation.json").is_file():
        return "r2gen"
    if (root / "indiana_reports.csv").is_file() and (root / "indiana_projections.csv").is_file():
        return "iu-xray"
    if any((root / f"mimic-cxr-2.0.0-split.csv{z}").is_file() for z in ("", ".gz")):
        return "mimic-cxr"
    if any((root / f"reports.{e}").is_file() for e in ("csv", "json")):
        return "plain"
    return ""


def is_report_folder(path: Path) -> bool:
    """True when ``path`` is a folder in one of the layouts :func:`read_folder` reads."""
    return path.is_dir() and bool(folder_layout(path))


def _entries(root: Path) -> list[tuple[str, Path, str, str | None]]:
    kind = folder_layout(root)
    if kind == "r2gen":
        return _r2gen(root)
    if kind == "iu-xray":
        return _iu_xray(root)
    if kind == "mimic-cxr":
        z = root / "mimic-cxr-2.0.0-split.csv"
        return _mimic(root, z if z.is_file() else root / "mimic-cxr-2.0.0-split.csv.gz")
    if kind == "plain":
        p = root / "reports.csv"
        return _plain(root, p if p.is_file() else root / "reports.json")
    raise UserDataError(f"{root}: no annotation.json, indiana_reports.csv + indiana_projections.csv, "
                        "mimic-cxr-2.0.0-split.csv or reports.csv/.json here")


def _dicom_pixels(path: Path) -> np.ndarray:
    """A DICOM file's first frame as float (H, W) or (H, W, 3) in [0, 1] (pydicom, the ``dicom`` extra)."""
    try:
        import pydicom
    except ImportError:
        raise UserDataError(f"{path}: reading DICOM needs pydicom (pip install 'iclr25-mmed-rag[dicom]')") from None
    if not path.is_file():
        raise FileNotFoundError(f"{path}: image listed in the reports file is missing")
    try:
        ds = pydicom.dcmread(path)
        arr = np.asarray(ds.pixel_array, dtype=np.float64)
    except Exception as exc:  # pydicom raises many kinds (InvalidDicomError, missing pixel data, codecs)
        raise UserDataError(f"{path}: cannot read the DICOM image ({type(exc).__name__}: {exc})") from exc
    rgb = int(getattr(ds, "SamplesPerPixel", 1)) == 3
    if arr.ndim == (4 if rgb else 3):  # several frames: the first
        arr = arr[0]
    if arr.ndim != (3 if rgb else 2):
        raise UserDataError(f"{path}: DICOM pixel data of shape {arr.shape} is not one 2-D image")
    arr = arr * float(getattr(ds, "RescaleSlope", 1) or 1) + float(getattr(ds, "RescaleIntercept", 0) or 0)
    if str(getattr(ds, "PhotometricInterpretation", "")).upper() == "MONOCHROME1":
        arr = arr.max() - arr
    lo, hi = float(arr.min()), float(arr.max())
    return (arr - lo) / (hi - lo) if hi > lo else np.zeros_like(arr)


def _load_image(path: Path, size: int) -> np.ndarray:
    from PIL import Image, UnidentifiedImageError

    if path.suffix.lower() not in _IMAGE_SUFFIXES:
        raise UserDataError(f"{path}: not a PNG, JPEG or DICOM (.dcm) file")
    if path.suffix.lower() in _DICOM_SUFFIXES:
        pix = np.round(_dicom_pixels(path) * 255).astype(np.uint8)
        im = Image.fromarray(pix).convert("RGB").resize((size, size), Image.BILINEAR)
        return np.asarray(im, dtype=np.float32).transpose(2, 0, 1) / 255.0
    try:
        with Image.open(path) as im:
            im = im.convert("RGB").resize((size, size), Image.BILINEAR)
            return np.asarray(im, dtype=np.float32).transpose(2, 0, 1) / 255.0
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: image listed in the reports file is missing") from None
    except (UnidentifiedImageError, OSError) as exc:
        raise UserDataError(f"{path}: cannot read the image ({exc})") from exc


def read_folder(root: str | os.PathLike[str], split: str, *, vocabulary: FindingVocabulary | None = None,
                size: int = 32, domain: str = "radiology") -> Any:
    """The split ``split`` (``train``, ``db`` = train, ``test``; ``val`` when there is no test) of a report folder
    as a :class:`~iclr25.mmed_rag.data.MedDataset` whose ``labels`` and ``report_labels`` are the findings its
    reports state (``vocabulary``, default :data:`DEFAULT_VOCABULARY`), carrying the vocabulary."""
    from .data import MedDataset, domain_index

    root = Path(root)
    vocab = vocabulary or FindingVocabulary.from_mapping(DEFAULT_VOCABULARY)
    entries = _entries(root)
    have = {e[0] for e in entries}
    want = {"db": "train"}.get(split, split)
    if want == "test" and "test" not in have and "val" in have:
        want = "val"
    rows = [e for e in entries if e[0] == want]
    if not rows:
        raise UserDataError(f"{root}: no {want!r} images (splits there: {', '.join(sorted(have)) or 'none'})")
    images = np.stack([_load_image(p, size) for _, p, _, _ in rows])
    try:
        doms = np.array([domain_index(d or domain) for *_, d in rows], np.int64)
    except ValueError as exc:
        raise UserDataError(f"{root}: {exc}") from exc
    reports = tuple(" ".join(r.split()) for _, _, r, _ in rows)
    labels = vocab.labels(reports)
    return MedDataset(images, doms, labels, labels.copy(), reports, vocabulary=vocab)
