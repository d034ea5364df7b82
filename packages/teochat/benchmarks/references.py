"""References beside every temporal metric, at seeds the package never used (issue 60).

Per fresh seed (three seeds drawn from ``"iclr25-teochat references"``, the version and the date by
``iclr25.utils.claims.fresh_seeds``; never a seed of the claims, the ladders or the calibration), on the repro's
data (2400 training / 240 test sequences of the nine-task mix): TEOChat and the same model on the last frame only
(the repro's recipe: 500 steps x 16 questions, d=64, 2 layers; TEOChat is the one multi-task model), and the
shipped localisation checkpoints, each task scored beside references that no model is needed for. Every rule is
chosen on the *training* split of the seed (the dev split) and reported on its test split:

- ``question prior``: the most common training answer per question template (boxes blanked) and number of frames
  (the prompt says how many): reads no pixel (QA-style tasks);
- ``one frame (annotations)``: the best rule over what the last frame shows, read from the annotated look of each
  footprint (cleared lot, foundation, roof, half rubble, rubble; minor damage is drawn as an intact roof of
  another colour, visible only against an earlier frame, so one frame sees a roof there) and, for questions about
  the whole scene, the set of looks in it and whether the road is flooded: for box answers the best set of looks
  (every footprint whose look is in the set, no box cap), for a class answer the most common training answer per
  (question template, frame count, look);
- ``one frame (pixels)``: the same with each footprint's look read from the last frame's pixels (the majority
  look of the 5 training footprints nearest in mean colour and spread inside the footprint) instead of the
  annotations;
- ``every building`` without the 4-box cap (and with it, as the models answer), for box tasks;
- ``two-frame pixel difference``: the classic non-learned change detector, every footprint whose mean absolute
  difference between the first and the last frame (each frame's mean colour removed) is above a threshold chosen
  on the training split (change localisation).

The headline margin per task is TEOChat minus the strongest one-frame reference *on the test split* (the
strongest after the fact: the margin is not flattered), pooled over the seeds, with a 95 % bootstrap interval
over test questions (2,000 resamples; box tasks resample each question's pixel counts).

    python benchmarks/references.py --out benchmarks --docs docs --overwrite

Writes ``references.json`` (``--out``) and the generated table ``references.md`` (``--docs``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time
from collections import Counter
from pathlib import Path

import numpy as np
import torch
from _outputs import add_out, parse_checked  # the sibling module (benchmarks/ is the script's folder)

from iclr25.teochat.assistant import TrainConfig, train_assistant
from iclr25.teochat.conversation import TEMPORAL_TASKS, format_boxes, to_percent
from iclr25.teochat.experiments import REPRO_TASKS, make_data, question_template
from iclr25.teochat.metrics import damage_f1, evaluate_predictions, parse_boxes, rasterize_boxes
from iclr25.teochat.model import ModelConfig
from iclr25.teochat.pretrained import load_pretrained
from iclr25.teochat.repro import REPRO_RUNG, _vocab_size
from iclr25.utils.claims import fresh_seeds
from iclr25.utils.io import atomic_write

LOOKS = ("absent", "cleared", "foundation", "roofed", "minor_damage", "major_damage", "destroyed")
BOX = ("loc", "sre")
ONE_FRAME = ("question prior", "one frame (annotations)", "one frame (pixels)", "every building (no cap)",
             "every building (4-box cap)")
NAMES = {"tsc": "temporal scene classification (acc.)", "loc": "change localisation (pixel F1)",
         "damage": "damage classification (inv. F1)", "sre": "referring expressions (pixel F1)",
         "qa": "change QA (acc.)", "rqa": "region change QA (acc.)", "tre": "temporal referring (acc.)",
         "rtqa": "region temporal QA (acc.)"}


# ------------------------------------------------------------------------------------------ footprint features
def _last(seq) -> np.ndarray:
    f = seq.chronological().astype(np.float32) / 255.0
    return f - f.mean(axis=(1, 2), keepdims=True)


def _colour(seq, box) -> np.ndarray:
    """Mean and spread of each channel inside ``box`` in the last frame (rubble is textured, a roof is flat)."""
    x1, y1, x2, y2 = box
    px = seq.chronological()[-1, y1:y2, x1:x2].reshape(-1, 3).astype(np.float32) / 255.0
    return np.concatenate([px.mean(0), px.std(0)])


_DIFF: dict[tuple[int, tuple[int, ...]], float] = {}


def _diff(seq, box) -> float:
    key = (id(seq), tuple(box))
    if key not in _DIFF:
        x1, y1, x2, y2 = box
        f = _last(seq)
        _DIFF[key] = float(np.abs(f[-1, y1:y2, x1:x2] - f[0, y1:y2, x1:x2]).mean())
    return _DIFF[key]


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


def references(data, reader: LookReader) -> dict[str, dict[str, list[str]]]:
    """Per task, per reference, the answers to the test questions of that task."""
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
                refs["two-frame pixel difference"] = [
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


def _score(task: str, ex, answers) -> float:
    return float(evaluate_predictions(ex, answers).scores[task])


def _per_question(task: str, ex, answers) -> np.ndarray:
    """Per test question: correctness (accuracy tasks) or (tp, fp, fn) pixel counts (box tasks)."""
    if task in BOX:
        rows = []
        for e, a in zip(ex, answers, strict=True):
            p = parse_boxes(a)
            gt = rasterize_boxes(e.boxes, 256)
            pm = rasterize_boxes(p.boxes, 256) if p.valid else np.zeros_like(gt)
            rows.append(((pm & gt).sum(), (pm & ~gt).sum(), (~pm & gt).sum()))
        return np.asarray(rows, dtype=np.float64)
    return np.asarray([a.strip() == e.answer for e, a in zip(ex, answers, strict=True)], dtype=np.float64)


def _stat(task: str, rows: np.ndarray) -> float:
    if task in BOX:
        tp, fp, fn = rows.sum(0)
        return float(2 * tp / (2 * tp + fp + fn)) if 2 * tp + fp + fn else 1.0
    return float(rows.mean())


def bootstrap(task: str, model_rows: list[np.ndarray], ref_rows: list[np.ndarray], *, n: int = 2000,
              seed: int = 0) -> tuple[float, float, float]:
    """Pooled margin (model - reference) over the seeds' test questions and its 95 % percentile interval."""
    m, r = np.concatenate(model_rows), np.concatenate(ref_rows)
    rng = np.random.default_rng(seed)
    base = _stat(task, m) - _stat(task, r)
    draws = []
    for _ in range(n):
        i = rng.integers(0, len(m), len(m))
        draws.append(_stat(task, m[i]) - _stat(task, r[i]))
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return base, float(lo), float(hi)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-seeds", type=int, default=3)
    ap.add_argument("--date", default="2026-12-05", help="the date the fresh seeds are drawn from")
    ap.add_argument("--steps", type=int, default=REPRO_RUNG["steps"])
    ap.add_argument("--n-train", type=int, default=REPRO_RUNG["n_train"])
    ap.add_argument("--n-test", type=int, default=REPRO_RUNG["n_test"])
    add_out(ap, "--out", "results/teochat-references", ("references.json",))
    ap.add_argument("--docs", type=Path, default=None, help="folder for the generated table references.md")
    args = parse_checked(ap)
    torch.set_num_threads(1)
    import importlib.metadata

    version = importlib.metadata.version("iclr25-teochat")
    seeds = fresh_seeds("iclr25-teochat references", version, args.date, args.n_seeds)
    out = {"command": f"python benchmarks/references.py --n-seeds {args.n_seeds} --date {args.date} --steps "
                      f"{args.steps} --n-train {args.n_train} --n-test {args.n_test}",
           "version": version, "seeds": list(seeds), "torch": torch.__version__, "per_seed": {}}
    rows: dict[str, dict[str, list[np.ndarray]]] = {}
    shipped = {k: load_pretrained(k) for k in ("temporal", "last_frame")}
    for seed in seeds:
        t0 = time.process_time()
        data = make_data(args.n_train, args.n_test, seed=seed, tasks=REPRO_TASKS)
        refs = references(data, LookReader(data.train_seqs))
        answers: dict[str, dict[str, list[str]]] = {t: dict(r) for t, r in refs.items()}
        for name, last in (("TEOChat (multi-task)", False), ("last-frame model", True)):
            asst = train_assistant(data.train_seqs, data.train, seed=seed,
                                   model_config=ModelConfig(vocab_size=_vocab_size(), d_model=64, n_layers=2),
                                   config=TrainConfig(steps=args.steps, batch_size=REPRO_RUNG["batch_size"], lr=3e-3,
                                                      last_frame=last), desc=f"references {name} {seed}")
            ex = [e for e in data.test if e.task in answers]
            preds = asst.predict(ex, data.test_seqs)
            for task in answers:
                answers[task][name] = [p for p, e in zip(preds, ex, strict=True) if e.task == task]
        loc_ex = [e for e in data.test if e.task == "loc"]
        for key, label in (("temporal", "shipped TEOChat checkpoint (localisation only)"),
                           ("last_frame", "shipped last-frame checkpoint (localisation only)")):
            answers["loc"][label] = shipped[key].predict(loc_ex, data.test_seqs)
        per: dict[str, dict[str, float]] = {}
        for task, by in answers.items():
            ex = [e for e in data.test if e.task == task]
            per[task] = {}
            for name, ans in by.items():
                per[task][name] = _score(task, ex, ans)
                if task != "damage":
                    rows.setdefault(task, {}).setdefault(name, []).append(_per_question(task, ex, ans))
            if task == "damage":
                per[task]["no_damage for every building"] = damage_f1(
                    ["no_damage"] * len(ex), [e.answer for e in ex], [e.region for e in ex]).inv_weighted_f1
        out["per_seed"][str(seed)] = {"scores": per, "cpu_seconds": time.process_time() - t0,
                                      "test_questions": dict(Counter(e.task for e in data.test))}
        print(f"seed {seed}: " + "; ".join(f"{t} TEOChat {v['TEOChat (multi-task)']:.3f} best one-frame "
                                            f"{max(v.get(k, -1) for k in ONE_FRAME):.3f}" for t, v in per.items()),
              flush=True)
    head = {}
    for task, by in rows.items():
        one = [k for k in ONE_FRAME if k in by]
        pooled = {k: _stat(task, np.concatenate(v)) for k, v in by.items()}
        strongest = max(one, key=lambda k: pooled[k])
        m, lo, hi = bootstrap(task, by["TEOChat (multi-task)"], by[strongest])
        head[task] = {"pooled": pooled, "strongest_one_frame": strongest, "margin": m, "ci95": [lo, hi]}
    out["headline"] = head
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out / "references.json") as f:
        json.dump(out, f, indent=1)
    if args.docs is not None:
        args.docs.mkdir(parents=True, exist_ok=True)
        with atomic_write(args.docs / "references.md") as f:
            f.write(table(out))
    print(table(out))


def table(out: dict) -> str:
    """The generated markdown table of ``references.json``."""
    seeds = out["seeds"]
    lines = [f"# TEOChat beside references that need no model (issue 60; generated by `{out['command']}`, "
             f"iclr25-teochat {out['version']}; do not edit)", "",
             f"Fresh seeds {', '.join(map(str, seeds))} (never used by the package); per task the test-split score "
             "at each seed; rules chosen on each seed's training split. The margin is TEOChat minus the strongest "
             "one-frame reference on the test split, pooled over the seeds, with its 95 % bootstrap interval "
             "over test questions (damage: no interval).", "",
             "| task | model or reference | " + " | ".join(f"seed {s}" for s in seeds) + " |",
             "|---|---|" + "---|" * len(seeds)]
    for task in NAMES:
        per = [out["per_seed"][str(s)]["scores"].get(task) for s in seeds]
        if not all(per):
            continue
        for name in per[0]:
            vals = " | ".join(f"{p.get(name, float('nan')):.3f}" for p in per)
            lines.append(f"| {NAMES[task]} | {name} | {vals} |")
    lines += ["", "| task | strongest one-frame reference | TEOChat minus it (pooled) | 95 % interval | TEOChat "
                  "ahead? |", "|---|---|---|---|---|"]
    for task, h in out["headline"].items():
        lo, hi = h["ci95"]
        verdict = "yes" if lo > 0 else "no: the reference is ahead" if hi < 0 else "not resolved"
        lines.append(f"| {NAMES[task]} | {h['strongest_one_frame']} | {h['margin']:+.3f} | [{lo:+.3f}, {hi:+.3f}] "
                     f"| {verdict} |")
    mean_cpu = statistics.fmean(v["cpu_seconds"] for v in out["per_seed"].values())
    lines += ["", f"CPU per seed: {mean_cpu:.0f} s (one thread; both models trained with the repro's recipe).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
