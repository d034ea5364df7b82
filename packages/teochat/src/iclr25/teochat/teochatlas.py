"""A reader for TEOChatlas (``jirvin16/TEOChatlas``) as it lies on disk: the training and evaluation JSON files.

The layout of the released data set (the paper rung reads it from the folder in ``$ICLR25_TEOCHATLAS``)::

    train/instruct.json              the instruction data (554,071 records)
    eval/QFabric_TRE_RTQA.json       temporal referring and region temporal QA on QFabric (Table 1)
    eval/ABCD.json, eval/CDVQA.json  the zero-shot change detection and change QA sets (Sec. 5)
    train/..., eval/...              the images (the released tarballs, extracted)

Each file is a JSON list of records in the LLaVA / Video-LLaVA instruction format:

- ``conversations``: a list of turns ``{"from": "human" | "gpt", "value": str}``, human first, alternating; the
  first human turn holds a ``<video>`` tag where the frames go (``<image>`` for a single image);
- ``video``: the list of frame image paths of a temporal record (``image``: one path, a single-image record);
  a relative path is looked up beside the JSON file, then under the data set's folder;
- the frames' dates, ``"%Y-%m-%d"``: ``timestamp`` (a list, as in the evaluation files) or ``metadata`` (a list of
  ``{"timestamp": ...}``, as in the training file); the frames are sorted by them;
- ``id`` and ``task`` (optional; ``task`` names the evaluation subset, e.g. RTQA vs TRE in one file);
  other fields (``polygon``, ...) are kept in ``extra``.

Files are read as a stream (one record at a time: the training file is too large to load whole). Anything
malformed is a one-line ``ValueError`` naming the file, the record and the field. Images are decoded only when a
record's frames are asked for (:meth:`Record.load_frames`).

References: Irvin et al., TEOChat, ICLR 2025, Sec. 3 (TEOChatlas); reference ``videollava/train/train.py``
(``LazySupervisedDataset``: ``video``, ``metadata[i]["timestamp"]``, ``conversations``) and
``videollava/eval/inference.py`` (``video``, ``timestamp``, ``conversations``, ``task``).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np

__all__ = ["TRAIN_FILE", "EVAL_FILES", "Record", "iter_records", "read_records", "frame_prompt"]

#: the training file, relative to the data set's folder
TRAIN_FILE = "train/instruct.json"
#: the evaluation files of the paper rung's claims, relative to the data set's folder
EVAL_FILES = {"qfabric_tre_rtqa": "eval/QFabric_TRE_RTQA.json", "abcd": "eval/ABCD.json", "cdvqa": "eval/CDVQA.json"}
VIDEO_TAG, IMAGE_TAG = "<video>", "<image>"
_DATE = "%Y-%m-%d"
#: a record longer than this (characters) is refused as malformed rather than read into memory
_MAX_RECORD = 64 << 20
_KNOWN = {"id", "video", "image", "conversations", "timestamp", "metadata", "task"}


@dataclasses.dataclass(frozen=True)
class Record:
    """One TEOChatlas record: frame paths in chronological order, ``(human, gpt)`` turns, task, id."""

    id: str
    frames: tuple[Path, ...]
    turns: tuple[tuple[str, str], ...]
    task: str = ""
    temporal: bool = True
    extra: dict = dataclasses.field(default_factory=dict, compare=False)

    @property
    def question(self) -> str:
        return self.turns[0][0]

    @property
    def answer(self) -> str:
        return self.turns[0][1]

    def load_frames(self, *, last_only: bool = False) -> list[np.ndarray]:
        """The frames as uint8 ``(H, W, 3)`` RGB arrays (only the last one with ``last_only``); a missing or
        unreadable image is a one-line error naming it."""
        from PIL import Image, UnidentifiedImageError

        out = []
        for p in self.frames[-1:] if last_only else self.frames:
            try:
                with Image.open(p) as im:
                    out.append(np.asarray(im.convert("RGB"), dtype=np.uint8))
            except FileNotFoundError:
                raise FileNotFoundError(f"record {self.id}: frame {p} not found") from None
            except (OSError, UnidentifiedImageError) as exc:
                raise ValueError(f"record {self.id}: frame {p} is not a readable image ({type(exc).__name__})") from None
        return out


def _iter_json_list(path: Path, chunk: int = 1 << 20) -> Iterator[object]:
    """The items of a JSON list file, one at a time, without loading the file whole."""
    dec = json.JSONDecoder()
    try:
        f = open(path, encoding="utf-8")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file (expected a TEOChatlas JSON file)") from None
    with f:
        buf, pos, eof = "", 0, False

        def fill() -> bool:
            nonlocal buf, pos, eof
            if eof:
                return False
            try:
                more = f.read(chunk)
            except UnicodeDecodeError:
                raise ValueError(f"{path}: not UTF-8 text (expected a JSON list of records)") from None
            if not more:
                eof = True
                return False
            buf, pos = buf[pos:] + more, 0
            return True

        def skip_ws() -> None:
            nonlocal pos
            while True:
                while pos < len(buf) and buf[pos] in " \t\r\n":
                    pos += 1
                if pos < len(buf) or not fill():
                    return

        skip_ws()
        if pos >= len(buf) or buf[pos] != "[":
            raise ValueError(f"{path}: not a JSON list (expected a list of TEOChatlas records)")
        pos += 1
        skip_ws()
        if pos < len(buf) and buf[pos] == "]":
            return
        n = 0
        while True:
            skip_ws()
            while True:
                try:
                    item, end = dec.raw_decode(buf, pos)
                    # a value cut at the chunk's end (a number) decodes early: read on until a delimiter follows
                    j = end
                    while j < len(buf) and buf[j] in " \t\r\n":
                        j += 1
                    if (j == len(buf) or buf[j] not in ",]") and len(buf) - pos < _MAX_RECORD and fill():
                        continue
                    break
                except json.JSONDecodeError as exc:
                    if len(buf) - pos < _MAX_RECORD and fill():
                        continue
                    raise ValueError(f"{path}: record {n} is not valid JSON ({exc.msg})") from None
            yield item
            n += 1
            pos = end
            skip_ws()
            if pos < len(buf) and buf[pos] == ",":
                pos += 1
                continue
            if pos < len(buf) and buf[pos] == "]":
                return
            raise ValueError(f"{path}: record {n - 1} is not followed by ',' or ']' (truncated JSON list?)")


def _resolve(p: object, json_path: Path, root: Path | None, where: str, field: str) -> Path:
    if not isinstance(p, str) or not p.strip():
        raise ValueError(f"{where}: field {field!r} must hold image paths (strings), got {type(p).__name__}")
    q = Path(p)
    if q.is_absolute():
        return q
    for base in (json_path.parent, root):
        if base is not None and (base / q).exists():
            return base / q
    return (root or json_path.parent) / q


def _dates(rec: dict, n: int, where: str) -> list[str] | None:
    if "timestamp" in rec:
        ts, field = rec["timestamp"], "timestamp"
    elif "metadata" in rec:
        md = rec["metadata"]
        if not isinstance(md, list) or not all(isinstance(m, dict) for m in md):
            raise ValueError(f"{where}: field 'metadata' must be a list of objects, one per frame")
        if not md or "timestamp" not in md[0]:
            return None
        ts, field = [m.get("timestamp") for m in md], "metadata[].timestamp"
    else:
        return None
    if not isinstance(ts, list) or len(ts) != n:
        got = len(ts) if isinstance(ts, list) else type(ts).__name__
        raise ValueError(f"{where}: field {field!r} must list one date per frame ({n}), got {got}")
    for t in ts:
        try:
            _dt.datetime.strptime(str(t), _DATE)
        except ValueError:
            raise ValueError(f"{where}: field {field!r}: {t!r} is not a date like 2020-01-31") from None
    return [str(t) for t in ts]


def _turns(rec: dict, where: str) -> tuple[tuple[str, str], ...]:
    conv = rec.get("conversations")
    if not isinstance(conv, list) or not conv:
        raise ValueError(f"{where}: field 'conversations' must be a non-empty list of turns")
    turns = []
    for k, t in enumerate(conv):
        if not isinstance(t, dict) or not isinstance(t.get("value"), str) or t.get("from") not in ("human", "gpt"):
            raise ValueError(f"{where}: field 'conversations'[{k}] must be {{\"from\": \"human\" | \"gpt\", "
                             "\"value\": str}")
    if conv[0]["from"] != "human":  # as the reference: a leading assistant turn is skipped
        conv = conv[1:]
    for k, t in enumerate(conv):
        if t["from"] != ("human" if k % 2 == 0 else "gpt"):
            raise ValueError(f"{where}: field 'conversations' must alternate human / gpt turns (turn {k} is "
                             f"{t['from']!r})")
    for k in range(0, len(conv) - 1, 2):
        turns.append((conv[k]["value"], conv[k + 1]["value"]))
    if not turns:
        raise ValueError(f"{where}: field 'conversations' has no human question followed by a gpt answer")
    return tuple(turns)


def _record(rec: object, i: int, json_path: Path, root: Path | None, max_frames: int,
            rng: np.random.Generator) -> Record:
    where = f"{json_path}: record {i}"
    if not isinstance(rec, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(rec).__name__}")
    rid = str(rec.get("id", i))
    where = f"{json_path}: record {i} (id {rid})"
    if "video" in rec:
        paths, temporal = rec["video"], True
        if not isinstance(paths, list) or not paths:
            raise ValueError(f"{where}: field 'video' must be a non-empty list of frame paths")
        field = "video"
    elif "image" in rec:
        paths, temporal, field = rec["image"], False, "image"
        paths = paths if isinstance(paths, list) else [paths]
        if not paths:
            raise ValueError(f"{where}: field 'image' must be a path or a non-empty list of paths")
    else:
        raise ValueError(f"{where}: no field 'video' (frame paths) or 'image' (one image path)")
    frames = [_resolve(p, json_path, root, where, field) for p in paths]
    dates = _dates(rec, len(frames), where)
    idx = np.arange(len(frames))
    if len(idx) > max_frames:  # the reference's order_pick_k: an order-preserving random subset (seeded here)
        idx = np.sort(rng.choice(len(idx), size=max_frames, replace=False))
    if dates is not None:
        idx = sorted(idx.tolist(), key=lambda j: (_dt.datetime.strptime(dates[j], _DATE), j))
    task = rec.get("task", "")
    if not isinstance(task, str):
        raise ValueError(f"{where}: field 'task' must be a string, got {type(task).__name__}")
    return Record(rid, tuple(frames[j] for j in idx), _turns(rec, where), task, temporal,
                  {k: v for k, v in rec.items() if k not in _KNOWN})


def iter_records(path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None,
                 max_frames: int = 16, seed: int = 0) -> Iterator[Record]:
    """The records of one TEOChatlas JSON file, streamed (see the module docstring for the fields).

    ``root``: the data set's folder (relative image paths are looked up beside the file, then there);
    ``max_frames``: at most this many frames a record (the reference's ``MAX_IMAGE_LENGTH`` = 16: an
    order-preserving subset drawn with ``seed``); frames are sorted by their dates."""
    if isinstance(max_frames, bool) or not isinstance(max_frames, int) or max_frames < 1:
        raise ValueError(f"max_frames must be a positive integer, got {max_frames!r}")
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{p}: a folder, expected a TEOChatlas JSON file")
    rng = np.random.default_rng(seed)
    rt = None if root is None else Path(root)
    for i, rec in enumerate(_iter_json_list(p)):
        yield _record(rec, i, p, rt, max_frames, rng)


def read_records(path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None, max_frames: int = 16,
                 seed: int = 0, limit: int | None = None, task: str | None = None) -> list[Record]:
    """:func:`iter_records` as a list: the first ``limit`` records (all: ``None``) whose ``task`` contains ``task``
    (case-insensitive; all: ``None``)."""
    out: list[Record] = []
    want = None if task is None else task.lower()
    for r in iter_records(path, root=root, max_frames=max_frames, seed=seed):
        if want is not None and want not in r.task.lower():
            continue
        out.append(r)
        if limit is not None and len(out) >= limit:
            break
    return out


def frame_prompt(text: str, n_frames: int, *, temporal: bool = True, references: bool = True) -> str:
    """The first human turn as the model reads it (the reference's ``interleave`` strategy with its
    chronological prefix): "times:" becomes "times in chronological order:", the ``<video>`` tag becomes
    "Image 1: <image>Image 2: <image>...", a single image's ``<image>`` becomes "Image: <image>". A turn with
    no tag gets the images in front of it. Without ``references`` (the Video-LLaVA style) the images are bare
    ``<image>`` tags."""
    text = text.replace("times:", "times in chronological order:")
    if references:
        frames = "".join(f"Image {i + 1}: {IMAGE_TAG}" for i in range(n_frames))
        single = f"Image: {IMAGE_TAG}"
    else:
        frames, single = IMAGE_TAG * n_frames, IMAGE_TAG
    if VIDEO_TAG in text:
        text = text.replace(IMAGE_TAG, "").replace(VIDEO_TAG, frames, 1).replace(VIDEO_TAG, "")
    elif IMAGE_TAG in text and (not temporal or n_frames == 1):
        first = text.index(IMAGE_TAG)
        text = text[:first] + single + text[first + len(IMAGE_TAG):].replace(IMAGE_TAG, "")
    else:
        text = (single if n_frames == 1 else frames) + "\n" + text.replace(IMAGE_TAG, "")
    return text
