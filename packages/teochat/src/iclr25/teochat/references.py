"""References that need no temporal model, beside every temporal metric (issue 60): rules over what one frame
shows, chosen on the training split (the dev split) and answered on the test split, the question / frame-count
prior, "every building" without the box cap, and the classic two-frame pixel difference.

- ``question prior``: the most common training answer per question template (boxes blanked) and number of frames
  (the prompt says how many): reads no pixel (QA-style tasks);
- ``one frame (annotations)``: the best rule over what the last frame shows, read from the annotated look of each
  footprint (cleared lot, foundation, roof, half rubble, rubble; minor damage is drawn as an intact roof of
  another colour, visible only against an earlier frame, so one frame sees a roof there) and, for questions about
  the whole scene, the set of looks in it and whether the road is flooded: for box answers the best set of looks
  (every footprint whose look is in the set, no box cap), for a class answer the most common training answer per
  (question template, frame count, look);
- ``one frame (pixels)``: the same with each footprint's look read from the last frame's pixels (the majority
  look of the 5 training footprints nearest in mean colour and spread inside the footprint);
- ``every building`` without the 4-box cap (and with it, as the models answer), for box tasks;
- ``two-frame pixel difference`` (not a one-frame reference): every footprint whose mean absolute difference
  between the first and the last frame (each frame's mean colour removed) is above a threshold chosen on the
  training split (change localisation).

Used by the repro rung's claims (:func:`one_frame_scores`) and ``benchmarks/references.py`` (fresh seeds).
"""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np

from .conversation import TEMPORAL_TASKS, format_boxes, to_percent
from .experiments import ExperimentData, question_template
from .metrics import evaluate_predictions, parse_boxes, rasterize_boxes

__all__ = ["BOX", "ONE_FRAME", "PIXEL_DIFFERENCE", "LookReader", "one_frame_look", "references", "one_frame_scores"]

LOOKS = ("absent", "cleared", "foundation", "roofed", "minor_damage", "major_damage", "destroyed")
#: the tasks answered with boxes
BOX = ("loc", "sre")
#: the references that see one frame at most (or none)
ONE_FRAME = ("question prior", "one frame (annotations)", "one frame (pixels)", "every building (no cap)",
             "every building (4-box cap)")
#: the classic two-frame change detector (change localisation)
PIXEL_DIFFERENCE = "two-frame pixel difference"


# ------------------------------------------------------------------------------------------ footprint features
def _last(seq) -> np.ndarray:
    f = seq.chronological().astype(np.float32) / 255.0
    return f - f.mean(axis=(1, 2), keepdims=True)


def _colour(seq, box) -> np.ndarray:
    """Mean and spread of each channel inside ``box`` in the last frame (rubble is textured, a roof is flat)."""
    x1, y1, x2, y2 = box
    px = seq.chronological()[-1, y1:y2, x1:x2].reshape(-1, 3).astype(np.float32) / 255.0
    return np.concatenate([px.mean(0), px.std(0)])


def _diff(seq, box) -> float:
    """Mean absolute difference inside ``box`` between the first and the last frame (each frame's mean colour
    removed): the classic two-frame change detector's score."""
    x1, y1, x2, y2 = box
    f = _last(seq)
    return float(np.abs(f[-1, y1:y2, x1:x2] - f[0, y1:y2, x1:x2]).mean())


def one_frame_look(status: str) -> str:
    """What one frame shows of a footprint's status: minor damage is drawn as an intact roof of another colour
    (visible only against an earlier frame), so one frame sees a roof."""
    return "roofed" if status == "minor_damage" else status


class LookReader:
    """A footprint's last-frame look from its pixels: the majority one-frame look (:func:`one_frame_look`) of the
    5 nearest training footprints in mean colour and spread (a one-frame pixel reader of the annotations)."""

    def __init__(self, seqs, *, k: int = 5, max_train: int = 6000, seed: int = 0) -> None:
        feats, looks = [], []
        for s in seqs:
            for b in s.buildings:
                feats.append(_colour(s, b.box))
                looks.append(one_frame_look(b.statuses[-1]))
        idx = np.random.default_rng(seed).permutation(len(feats))[:max_train]
        self.x = np.stack(feats)[idx]
        self.y = [looks[i] for i in idx]
        self.k = k
        self.cache: dict[tuple[int, tuple[int, ...]], str] = {}

    def __call__(self, seq, box) -> str:
        key = (id(seq), tuple(box))
        if key not in self.cache:
            d = ((self.x - _colour(seq, box)) ** 2).sum(1)
            near = np.argpartition(d, self.k)[:self.k]
            self.cache[key] = Counter(self.y[i] for i in near).most_common(1)[0][0]
        return self.cache[key]


def _area(box_pct) -> int:
    return int(rasterize_boxes([box_pct], 256).sum())


def _box_rule(train_q, test_q, feature):
    """The best set of footprint features for box answers, chosen on ``train_q`` (additive pixel counts: the
    footprints do not overlap), answered on ``test_q``: (answers, chosen set)."""
    def stats(qs):
        rows = []
        for e, s in qs:
            truth = set(e.boxes)
            for b in s.buildings:
                p = to_percent(b.box, s.size)
                rows.append((feature(e, s, b), p in truth, _area(p)))
            for t in truth:  # a truth box that is no footprint: never found
                if not any(to_percent(b.box, s.size) == t for b in s.buildings):
                    rows.append((None, True, _area(t)))
        return rows

    rows = stats(train_q)
    tot_truth = sum(a for _, t, a in rows if t)
    tp_of, fp_of = Counter(), Counter()
    for f, t, a in rows:
        if f is not None:
            (tp_of if t else fp_of)[f] += a
    # features (question template, look): the best set of looks per template, each on its own questions
    groups: dict[object, list] = {}
    for v in set(tp_of) | set(fp_of):
        groups.setdefault(v[0] if isinstance(v, tuple) else None, []).append(v)
    truth_of = Counter()
    for f, t, a in rows:
        if t:
            truth_of[f[0] if isinstance(f, tuple) else None] += a
    chosen: set = set()
    for g, values in groups.items():
        values = sorted(values, key=str)
        tot = truth_of[g] if len(groups) > 1 else tot_truth
        best, pick = -1.0, ()
        for r in range(len(values) + 1):
            for sub in itertools.combinations(values, r):
                tp, fp = sum(tp_of[v] for v in sub), sum(fp_of[v] for v in sub)
                den = tp + fp + tot
                f1 = 2 * tp / den if den else 1.0
                if f1 > best:
                    best, pick = f1, sub
        chosen |= set(pick)
    answers = [" ".join("[" + ", ".join(map(str, p)) + "]" for p in sorted(
        to_percent(b.box, s.size) for b in s.buildings if feature(e, s, b) in chosen)) or "none" for e, s in test_q]
    return answers, sorted(map(str, chosen))


def _class_rule(train_q, test_q, key, fallback):
    """The most common training answer per ``key(e, s)``, else ``fallback(e, s)``."""
    by: dict[object, Counter] = {}
    for e, s in train_q:
        by.setdefault(key(e, s), Counter())[e.answer] += 1
    return [by[key(e, s)].most_common(1)[0][0] if key(e, s) in by else fallback(e, s) for e, s in test_q]


def _queried(e, s):
    """The footprint a region question names (its box), else None."""
    p = parse_boxes(e.question) if "[" in e.question else None
    if not p or not p.boxes:
        return None
    for b in s.buildings:
        if to_percent(b.box, s.size) == p.boxes[0]:
            return b
    return None


def _scene_key(e, s, look):
    b = _queried(e, s)
    if b is not None:
        ev = look(s, b)
    else:
        ev = (tuple(sorted({look(s, x) for x in s.buildings})), bool(s.flood_frames and s.flood_frames[-1]))
    return (question_template(e.question), s.n_frames, ev)


def references(data: ExperimentData, reader: LookReader | None = None) -> dict[str, dict[str, list[str]]]:
    """Per task, per reference, the answers to the test questions of that task (``reader``: the pixel look
    reader, by default fitted on ``data``'s training sequences)."""
    reader = LookReader(data.train_seqs) if reader is None else reader
    tr = {t: [(e, data.train_seqs[e.seq]) for e in data.train if e.task == t] for t in TEMPORAL_TASKS}
    te = {t: [(e, data.test_seqs[e.seq]) for e in data.test if e.task == t] for t in TEMPORAL_TASKS}
    ann = lambda s, b: one_frame_look(b.statuses[-1])  # noqa: E731
    pix = lambda s, b: reader(s, b.box)  # noqa: E731
    out: dict[str, dict[str, list[str]]] = {}
    for task in TEMPORAL_TASKS:
        if not te[task] or not tr[task]:
            continue
        refs: dict[str, list[str]] = {}
        if task in BOX:
            refs["one frame (annotations)"], _ = _box_rule(
                tr[task], te[task], lambda e, s, b: (question_template(e.question), ann(s, b)))
            refs["one frame (pixels)"], _ = _box_rule(
                tr[task], te[task], lambda e, s, b: (question_template(e.question), pix(s, b)))
            refs["every building (no cap)"] = [
                " ".join("[" + ", ".join(map(str, p)) + "]" for p in sorted(to_percent(b.box, s.size)
                                                                            for b in s.buildings)) or "none"
                for e, s in te[task]]
            refs["every building (4-box cap)"] = [format_boxes([to_percent(b.box, s.size) for b in s.buildings])
                                                  for e, s in te[task]]
            if task == "loc":
                thr = _diff_threshold(tr[task])
                refs[PIXEL_DIFFERENCE] = [
                    " ".join("[" + ", ".join(map(str, p)) + "]" for p in sorted(
                        to_percent(b.box, s.size) for b in s.buildings if _diff(s, b.box) > thr)) or "none"
                    for e, s in te[task]]
            out[task] = refs
            continue
        prior = Counter(e.answer for e, _ in tr[task]).most_common(1)[0][0]
        qp = lambda e, s: (question_template(e.question), s.n_frames)  # noqa: E731
        refs["question prior"] = _class_rule(tr[task], te[task], qp, lambda e, s, prior=prior: prior)
        qprior = dict(zip([id(e) for e, _ in te[task]], refs["question prior"], strict=True))
        for name, look in (("one frame (annotations)", ann), ("one frame (pixels)", pix)):
            refs[name] = _class_rule(tr[task], te[task], lambda e, s, look=look: _scene_key(e, s, look),
                                     lambda e, s, qprior=qprior: qprior[id(e)])
        out[task] = refs
    return out


def _diff_threshold(train_q) -> float:
    """The pixel-difference threshold with the best pooled F1 on the training questions (over 39 quantiles of the
    footprints' differences; additive pixel counts, the footprints do not overlap)."""
    rows = []
    for e, s in train_q:
        truth = set(e.boxes)
        rows += [(_diff(s, b.box), to_percent(b.box, s.size) in truth, _area(to_percent(b.box, s.size)))
                 for b in s.buildings]
    d = np.array([r[0] for r in rows])
    t = np.array([r[1] for r in rows])
    a = np.array([r[2] for r in rows], dtype=np.float64)
    tot = a[t].sum() + sum(_area(x) for e, s in train_q for x in e.boxes
                           if x not in {to_percent(b.box, s.size) for b in s.buildings})
    best, thr = -1.0, 0.0
    for q in np.quantile(d, np.linspace(0.025, 0.975, 39)):
        sel = d > q
        tp, fp = a[sel & t].sum(), a[sel & ~t].sum()
        f1 = 2 * tp / (tp + fp + tot) if tp + fp + tot else 1.0
        if f1 > best:
            best, thr = f1, float(q)
    return thr


def one_frame_scores(data: ExperimentData, reader: LookReader | None = None) -> dict[str, dict[str, float]]:
    """Per temporal task, each reference's test-split score (:func:`references`; accuracy, pixel F1, or the
    damage inverse-prevalence F1)."""
    out: dict[str, dict[str, float]] = {}
    for task, by in references(data, reader).items():
        ex = [e for e in data.test if e.task == task]
        out[task] = {name: float(evaluate_predictions(ex, ans).scores[task]) for name, ans in by.items()}
    return out
