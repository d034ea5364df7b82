"""TEOChat's metrics, with the reference code's defects fixed.

* Classification / QA: exact match after lower-casing and stripping punctuation.
* Localisation (change localisation, SRE, detection): **pixel F1**. Predicted boxes ``[x1, y1, x2, y2]`` (0-100)
  are parsed, rasterised on an ``R x R`` canvas (default 256) against the ground-truth polygons, and the
  confusion counts are accumulated over the whole split:

  .. math:: F_1 = \\frac{2\\,TP}{2\\,TP + FP + FN}.

  A pixel ``(i, j)`` is inside a shape when its centre ``(j + 1/2, i + 1/2)`` is (half-open on the right and
  bottom edges for boxes, computed in exact integer arithmetic).
* Damage classification: per-class pixel F1 inside each building polygon, combined with inverse-prevalence
  weights :math:`w_k = n_k^{-1} / \\sum_j n_j^{-1}` (``n_k`` = ground-truth pixels of class ``k``).

Defects of the reference (``eval/detection.py``, ``eval/inference.py``) not copied: an invalid answer adds the
building's pixels as false negatives (the reference read a still-empty mask, so malformed outputs were free);
a ground-truth polygon guard that really fires (the reference compared a Dataset object with strings); box
parse failures are counted and reported instead of skipped by ``except: pass``.

References: Irvin et al., TEOChat, ICLR 2025, Sec. 4 (metrics) and Table 1.
"""

from __future__ import annotations

import dataclasses
import re
import string
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["BoxParse", "parse_boxes", "rasterize_boxes", "rasterize_polygons", "check_boxes", "PixelF1",
           "pixel_f1", "DamageF1", "damage_f1", "normalize_answer", "accuracy", "shuffled_label_chance",
           "evaluate_predictions", "TaskScores"]

_BOX_RE = re.compile(r"\[\s*(-?\d+)\s*,?\s*(-?\d+)\s*,?\s*(-?\d+)\s*,?\s*(-?\d+)\s*\]")


@dataclasses.dataclass(frozen=True)
class BoxParse:
    """The boxes read from an answer (``valid`` False: malformed, which counts as a miss)."""

    boxes: tuple[tuple[int, int, int, int], ...]
    valid: bool


def parse_boxes(text: str) -> BoxParse:
    """Read ``[x1, y1, x2, y2]`` boxes (0-100, ``x1 < x2``, ``y1 < y2``) from a model answer.

    ``"none"`` is a valid empty answer. Anything else without a well-formed box, a bracket that does not close
    a box of four integers, or a coordinate outside 0-100 / an empty box makes the whole answer invalid.
    """
    if not isinstance(text, str):
        raise TypeError(f"answer must be a str, got {type(text).__name__}")
    stripped = text.strip().lower().rstrip(".")
    if stripped == "none":
        return BoxParse((), True)
    found = _BOX_RE.findall(text)
    if not found or text.count("[") != len(found) or text.count("]") != len(found):
        return BoxParse((), False)
    rest = _BOX_RE.sub(" ", text).replace(",", " ").strip()
    boxes = []
    for b in found:
        x1, y1, x2, y2 = (int(v) for v in b)
        if not (0 <= x1 < x2 <= 100 and 0 <= y1 < y2 <= 100):
            return BoxParse((), False)
        boxes.append((x1, y1, x2, y2))
    return BoxParse(tuple(boxes), rest == "")


def check_boxes(boxes: Any, name: str = "boxes") -> tuple[tuple[int, int, int, int], ...]:
    """Validate ground-truth boxes: a sequence of ``(x1, y1, x2, y2)`` integers with ``0 <= x1 < x2 <= 100``."""
    out = []
    try:
        items = list(boxes)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of (x1, y1, x2, y2) boxes, got {type(boxes).__name__}") from None
    for i, b in enumerate(items):
        arr = np.asarray(b)
        if arr.shape != (4,) or not np.issubdtype(arr.dtype, np.number) or not np.all(np.isfinite(arr)):
            raise ValueError(f"{name}[{i}] must be 4 finite numbers (x1, y1, x2, y2), got {b!r}")
        if not np.all(arr == np.round(arr)):
            raise ValueError(f"{name}[{i}] must be integer 0-100 coordinates, got {b!r}")
        x1, y1, x2, y2 = (int(v) for v in arr)
        if not (0 <= x1 < x2 <= 100 and 0 <= y1 < y2 <= 100):
            raise ValueError(f"{name}[{i}] = {b!r} is malformed: expected 0 <= x1 < x2 <= 100 and 0 <= y1 < y2 <= 100")
        out.append((x1, y1, x2, y2))
    return tuple(out)


def _box_range(a: int, b: int, size: int) -> tuple[int, int]:
    # pixel centre c + 1/2 inside [a R / 100, b R / 100)  <=>  2 a R <= 100 (2c + 1) < 2 b R
    lo = -((-(2 * a * size - 100)) // 200)  # ceil((2aR - 100) / 200)
    hi = -((-(2 * b * size - 100)) // 200)
    return max(lo, 0), min(hi, size)


def rasterize_boxes(boxes: Sequence[Sequence[int]], size: int = 256) -> np.ndarray:
    """Union mask ``(size, size)`` of 0-100 boxes (pixel-centre rule, exact)."""
    mask = np.zeros((size, size), dtype=bool)
    for x1, y1, x2, y2 in boxes:
        c0, c1 = _box_range(int(x1), int(x2), size)
        r0, r1 = _box_range(int(y1), int(y2), size)
        mask[r0:r1, c0:c1] = True
    return mask


def rasterize_polygons(polygons: Sequence[Any], size: int = 256, name: str = "polygons") -> np.ndarray:
    """Union mask of shapely polygons (or ``(N, 2)`` vertex arrays) in 0-100 coordinates, by pixel centres.

    This is the polygon guard the reference meant to have: each polygon must be a valid, non-empty polygon.
    """
    import shapely  # noqa: PLC0415

    mask = np.zeros((size, size), dtype=bool)
    if not len(polygons):
        return mask
    c = (np.arange(size) + 0.5) * 100.0 / size
    xx, yy = np.meshgrid(c, c)
    for i, p in enumerate(polygons):
        if not isinstance(p, shapely.Geometry):
            arr = np.asarray(p, dtype=float)
            if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] < 3 or not np.all(np.isfinite(arr)):
                raise ValueError(f"{name}[{i}] must be a polygon of at least 3 finite (x, y) vertices, "
                                 f"got shape {arr.shape}")
            p = shapely.Polygon(arr)
        if p.geom_type not in ("Polygon", "MultiPolygon") or p.is_empty or not p.is_valid or p.area <= 0:
            raise ValueError(f"{name}[{i}] is not a valid non-empty polygon ({p.geom_type}, area {p.area:.3g})")
        mask |= shapely.contains_xy(p, xx, yy)
    return mask


@dataclasses.dataclass(frozen=True)
class PixelF1:
    """Pixel F1 over a split: confusion counts, and the share of answers that could not be parsed."""

    f1: float
    precision: float
    recall: float
    tp: int
    fp: int
    fn: int
    n: int
    parse_failure_rate: float


def _f1(tp: int, fp: int, fn: int) -> float:
    den = 2 * tp + fp + fn
    return float(2 * tp / den) if den else 1.0


def pixel_f1(predictions: Sequence[str], targets: Sequence[Sequence[Any]], *, size: int = 256) -> PixelF1:
    """Pixel F1 of predicted box answers against ground-truth boxes/polygons, accumulated over the split.

    ``targets[i]`` is a list of 0-100 boxes ``(x1, y1, x2, y2)`` or shapely polygons. An invalid answer predicts
    nothing, so every ground-truth pixel of that example is a false negative.
    """
    if len(predictions) != len(targets):
        raise ValueError(f"predictions and targets must have the same length, got {len(predictions)} and "
                         f"{len(targets)}")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"size must be an integer >= 1, got {size!r}")
    tp = fp = fn = bad = 0
    for i, (pred, tgt) in enumerate(zip(predictions, targets, strict=True)):
        parsed = parse_boxes(pred)
        boxes = [t for t in tgt if not hasattr(t, "geom_type")]
        polys = [t for t in tgt if hasattr(t, "geom_type")]
        gt = rasterize_boxes(check_boxes(boxes, f"targets[{i}]"), size)
        if polys:
            gt |= rasterize_polygons(polys, size, f"targets[{i}]")
        if not parsed.valid:
            bad += 1
            fn += int(gt.sum())
            continue
        pm = rasterize_boxes(parsed.boxes, size)
        tp += int((pm & gt).sum())
        fp += int((pm & ~gt).sum())
        fn += int((~pm & gt).sum())
    prec = tp / (tp + fp) if tp + fp else 1.0
    rec = tp / (tp + fn) if tp + fn else 1.0
    n = len(predictions)
    return PixelF1(_f1(tp, fp, fn), float(prec), float(rec), tp, fp, fn, n, bad / n if n else 0.0)


def normalize_answer(text: str) -> str:
    """Lower-case, punctuation stripped (underscores kept), whitespace collapsed."""
    table = str.maketrans({c: " " for c in string.punctuation if c != "_"})
    return " ".join(str(text).lower().translate(table).split())


@dataclasses.dataclass(frozen=True)
class DamageF1:
    """Damage classification: per-class pixel F1, the inverse-prevalence weighted F1 and the invalid rate."""

    inv_weighted_f1: float
    per_class: dict[str, float]
    invalid_rate: float
    n: int


def damage_f1(predictions: Sequence[str], truths: Sequence[str], regions: Sequence[Sequence[int]], *,
              classes: Sequence[str] = ("no_damage", "minor_damage", "major_damage", "destroyed"),
              size: int = 256) -> DamageF1:
    """Per-class pixel F1 inside each building box, weighted by inverse class prevalence.

    .. math:: \\mathrm{F1}_{inv} = \\sum_k w_k F1_k, \\quad w_k = \\frac{1/n_k}{\\sum_j 1/n_j},

    over the classes present in the ground truth. An answer that is no class adds the building's pixels as
    false negatives of its true class (the reference's ``fn = gt_msk.sum()`` read an empty mask).
    """
    if not (len(predictions) == len(truths) == len(regions)):
        raise ValueError(f"predictions, truths and regions must have the same length, got {len(predictions)}, "
                         f"{len(truths)} and {len(regions)}")
    classes = tuple(classes)
    k = len(classes)
    tp, fp, fn, npix = (np.zeros(k, dtype=np.int64) for _ in range(4))
    bad = 0
    for i, (p, t, r) in enumerate(zip(predictions, truths, regions, strict=True)):
        t = normalize_answer(t)
        if t not in classes:
            raise ValueError(f"truths[{i}] must be one of {classes}, got {t!r}")
        area = int(rasterize_boxes(check_boxes([r], f"regions[{i}]"), size).sum())
        ti = classes.index(t)
        npix[ti] += area
        p = normalize_answer(p)
        if p not in classes:
            bad += 1
            fn[ti] += area
            continue
        pi = classes.index(p)
        if pi == ti:
            tp[ti] += area
        else:
            fp[pi] += area
            fn[ti] += area
    present = npix > 0
    f1 = {c: _f1(int(tp[j]), int(fp[j]), int(fn[j])) for j, c in enumerate(classes) if present[j]}
    w = np.where(present, 1.0 / np.maximum(npix, 1), 0.0)
    w = w / w.sum() if w.sum() > 0 else w
    score = float(sum(w[j] * f1[c] for j, c in enumerate(classes) if present[j]))
    n = len(predictions)
    return DamageF1(score, f1, bad / n if n else 0.0, n)


def accuracy(predictions: Sequence[str], answers: Sequence[str]) -> float:
    """Exact-match accuracy after :func:`normalize_answer`."""
    if len(predictions) != len(answers):
        raise ValueError(f"predictions and answers must have the same length, got {len(predictions)} and "
                         f"{len(answers)}")
    if not len(answers):
        return float("nan")
    return float(np.mean([normalize_answer(p) == normalize_answer(a) for p, a in zip(predictions, answers,
                                                                                    strict=True)]))


def shuffled_label_chance(answers: Sequence[str], *, seed: int = 0, n_perm: int = 200) -> float:
    """Chance level of exact match: mean accuracy of the answers against random permutations of themselves."""
    rng = np.random.default_rng(seed)
    norm = np.array([normalize_answer(a) for a in answers])
    if norm.size == 0:
        return float("nan")
    return float(np.mean([np.mean(norm == norm[rng.permutation(norm.size)]) for _ in range(n_perm)]))


@dataclasses.dataclass(frozen=True)
class TaskScores:
    """Per-task scores: accuracy for QA-style tasks, pixel F1 for box tasks, weighted F1 for damage."""

    scores: dict[str, float]
    counts: dict[str, int]
    parse_failures: dict[str, float]

    def __getitem__(self, task: str) -> float:
        return self.scores[task]


def evaluate_predictions(examples: Sequence[Any], predictions: Sequence[str], *, size: int = 256) -> TaskScores:
    """Score each task of ``examples`` (:class:`~iclr25.teochat.conversation.Example`) with its metric."""
    from .conversation import BOX_TASKS  # noqa: PLC0415

    if len(examples) != len(predictions):
        raise ValueError(f"examples and predictions must have the same length, got {len(examples)} and "
                         f"{len(predictions)}")
    by: dict[str, list[int]] = {}
    for i, e in enumerate(examples):
        by.setdefault(e.task, []).append(i)
    scores: dict[str, float] = {}
    counts: dict[str, int] = {}
    fails: dict[str, float] = {}
    for task, idx in sorted(by.items()):
        preds = [predictions[i] for i in idx]
        counts[task] = len(idx)
        if task in BOX_TASKS:
            r = pixel_f1(preds, [examples[i].boxes for i in idx], size=size)
            scores[task], fails[task] = r.f1, r.parse_failure_rate
        elif task == "damage":
            d = damage_f1(preds, [examples[i].answer for i in idx], [examples[i].region for i in idx], size=size)
            scores[task], fails[task] = d.inv_weighted_f1, d.invalid_rate
        else:
            scores[task] = accuracy(preds, [examples[i].answer for i in idx])
    return TaskScores(scores, counts, fails)
