"""TEOChatlas-style conversations: tasks, the word-level vocabulary, prompts with or without image references.

A prompt follows the reference's ``interleave`` strategy with its chronological prefix::

    user : these are 3 satellite images in chronological order : image 1 : <image> image 2 : <image>
    image 3 : <image> in which images is the building in [12, 40, 31, 59] complete ? assistant :

and, without references (the Video-LLaVA analog), ``... in chronological order : <image> <image> <image> ...``.
Single-image prompts read ``this is a satellite image : image 1 : <image> ...``. Boxes are written
``[x1, y1, x2, y2]`` in 0-100 percent coordinates, as in TEOChatlas.

References: Irvin et al., TEOChat, ICLR 2025, Sec. 3.1 (image references, chronological ordering) and
Table 1 (tasks); reference code ``videollava/train/train.py`` (``prompt_strategy="interleave"``,
``chronological_prefix``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

import numpy as np

from iclr25.utils.seeding import check_seed

from .synth import DAMAGE_LEVELS, SCENES, EOSequence

__all__ = ["TASKS", "TEMPORAL_TASKS", "ORDER_TASKS", "BOX_TASKS", "Example", "Vocabulary", "make_examples",
           "build_prompt", "to_percent", "format_boxes", "tokenize", "IMAGE", "MAX_BOXES"]

#: ``tsc1``, ``det1``, ``qa1`` are the single-image variants
TASKS = ("tsc", "loc", "damage", "sre", "qa", "rqa", "tre", "rtqa", "tsc1", "det1", "qa1")
TEMPORAL_TASKS = ("tsc", "loc", "damage", "sre", "qa", "rqa", "tre", "rtqa")
ORDER_TASKS = ("tre", "rtqa")
BOX_TASKS = ("loc", "sre", "det1")
IMAGE = "<image>"
MAX_BOXES = 4
_SPECIALS = ("<pad>", "<bos>", "<eos>", "<unk>", IMAGE)
_WORDS = """user assistant these are this is a satellite images image in chronological order identify the buildings
that changed what scene class of location damage level building were any destroyed constructed demolished new
with minor major no happened to which complete standing road flooded last status each how many none yes
absent cleared foundation roofed damaged no_change all""".split()
_TOKEN_RE = re.compile(r"\[|\]|:|\?|\.|<image>|[a-z0-9_]+")


def tokenize(text: str) -> list[str]:
    """Lower-cased word-level tokens; commas are separators (``[12, 40, 31, 59]`` -> ``[ 12 40 31 59 ]``)."""
    return _TOKEN_RE.findall(text.lower())


class Vocabulary:
    """The fixed word-level vocabulary: specials, the coordinate tokens ``0``-``100``, task words, classes."""

    def __init__(self) -> None:
        words = list(_SPECIALS) + [str(i) for i in range(101)] + ["[", "]", ":", "?", "."]
        for w in (*_WORDS, *SCENES, *DAMAGE_LEVELS):
            if w not in words:
                words.append(w)
        self.words = tuple(words)
        self.index = {w: i for i, w in enumerate(self.words)}
        self.pad, self.bos, self.eos, self.unk, self.image = (self.index[w] for w in _SPECIALS)

    def __len__(self) -> int:
        return len(self.words)

    @property
    def number_span(self) -> tuple[int, int]:
        """Ids ``[lo, hi)`` of the coordinate tokens ``0``..``100``."""
        return self.index["0"], self.index["100"] + 1

    def encode(self, text: str) -> list[int]:
        return [self.index.get(tok, self.unk) for tok in tokenize(text)]

    def decode(self, ids: Sequence[int]) -> str:
        """Tokens joined by spaces, up to the first ``<eos>``; boxes come back as ``[12, 40, 31, 59]``."""
        out: list[str] = []
        for i in ids:
            i = int(i)
            if i == self.eos:
                break
            if i in (self.pad, self.bos):
                continue
            out.append(self.words[i] if 0 <= i < len(self.words) else "<unk>")
        text = " ".join(out)
        text = re.sub(r"\[ ((?:\d+ ?)+)\]", lambda m: "[" + ", ".join(m.group(1).split()) + "]", text)
        return text


@dataclasses.dataclass(frozen=True)
class Example:
    """One question about one sequence.

    ``seq`` indexes the sequence list; ``frames`` names the chronological frames shown (``None``: all);
    ``boxes`` are the ground-truth boxes (percent) of a localisation task, ``region`` the building box
    (percent) of a damage question.
    """

    seq: int
    task: str
    question: str
    answer: str
    frames: tuple[int, ...] | None = None
    boxes: tuple[tuple[int, int, int, int], ...] = ()
    region: tuple[int, int, int, int] | None = None


def to_percent(box: Sequence[int], size: int) -> tuple[int, int, int, int]:
    """Pixel box ``(x1, y1, x2, y2)`` (half-open) of a ``size`` px frame -> 0-100 coordinates (rounded)."""
    x1, y1, x2, y2 = (int(round(100 * v / size)) for v in box)
    return (x1, y1, max(x2, x1 + 1), max(y2, y1 + 1))


def format_boxes(boxes: Sequence[Sequence[int]]) -> str:
    """``[x1, y1, x2, y2] [..]`` sorted top-left first, at most :data:`MAX_BOXES`; ``none`` when empty."""
    if not boxes:
        return "none"
    boxes = sorted(tuple(int(v) for v in b) for b in boxes)[:MAX_BOXES]
    return " ".join("[" + ", ".join(str(v) for v in b) + "]" for b in boxes)


def _images(idx: Sequence[int]) -> str:
    return " ".join(f"image {i + 1}" for i in idx) if len(idx) else "none"


def build_prompt(n_frames: int, question: str, *, references: bool = True, single: bool = False) -> str:
    """The user turn with one :data:`IMAGE` placeholder per frame (see the module docstring)."""
    if single or n_frames == 1:
        head = "this is a satellite image :"
        imgs = f"image 1 : {IMAGE}" if references else IMAGE
    else:
        head = f"these are {n_frames} satellite images in chronological order :"
        imgs = " ".join(f"image {i + 1} : {IMAGE}" if references else IMAGE for i in range(n_frames))
    return f"user : {head} {imgs} {question} assistant :"


def _examples_of(seq_id: int, s: EOSequence, rng: np.random.Generator) -> list[Example]:
    t, size = s.n_frames, s.size
    out: list[Example] = [Example(seq_id, "tsc", "what is the scene class of this location ?", s.scene)]
    k = int(rng.integers(t))
    out.append(Example(seq_id, "tsc1", "what is the scene class of this image ?", s.scene, frames=(k,)))
    visible = [b for b in s.buildings if b.statuses[k] in ("roofed", "minor_damage", "major_damage")]
    vis_boxes = tuple(to_percent(b.box, size) for b in visible)
    out.append(Example(seq_id, "det1", "identify all buildings in this image .", format_boxes(vis_boxes),
                       frames=(k,), boxes=vis_boxes[:MAX_BOXES]))
    out.append(Example(seq_id, "qa1", "how many buildings are in this image ?", str(min(len(visible), 4)),
                       frames=(k,)))
    if not s.buildings:
        if s.scene == "flooded_road" or any(s.flood_frames):
            pass
        else:
            return out
    changed = [b for b in s.buildings if b.change != "no_change"]
    if s.scene in ("residential", "construction_site", "demolition_site"):
        boxes = tuple(to_percent(b.box, size) for b in changed)[:MAX_BOXES]
        out.append(Example(seq_id, "loc", "identify the buildings that changed .", format_boxes(boxes), boxes=boxes))
        verb = ("destroyed", "constructed", "demolished")[int(rng.integers(3))]
        if verb == "destroyed":
            yes = any(b.damage == "destroyed" for b in s.buildings)
        else:
            yes = any(b.change == verb for b in s.buildings)
        out.append(Example(seq_id, "qa", f"were any buildings {verb} ?", "yes" if yes else "no"))
        b = s.buildings[int(rng.integers(len(s.buildings)))]
        box = to_percent(b.box, size)
        out.append(Example(seq_id, "rqa", f"what happened to the building in {format_boxes([box])} ?", b.change))
    if s.scene == "residential" and any(b.damage is not None for b in s.buildings):
        for b in s.buildings:  # every building: the xBD analog has few disaster scenes
            if b.damage is None:  # a static distractor footprint (a lot, rubble from before): no damage level
                continue
            box = to_percent(b.box, size)
            out.append(Example(seq_id, "damage",
                               f"what is the damage level of the building in {format_boxes([box])} ?",
                               str(b.damage), region=box))
        level = ("minor_damage", "major_damage", "destroyed")[int(rng.integers(3))]
        words = {"minor_damage": "with minor damage", "major_damage": "with major damage", "destroyed": "destroyed"}
        sel = tuple(to_percent(x.box, size) for x in s.buildings if x.damage == level)[:MAX_BOXES]
        out.append(Example(seq_id, "sre", f"identify the buildings {words[level]} .", format_boxes(sel), boxes=sel))
    if s.scene in ("construction_site", "demolition_site") and changed:
        new = s.scene == "construction_site"
        sel = tuple(to_percent(x.box, size) for x in changed)[:MAX_BOXES]
        out.append(Example(seq_id, "sre", f"identify the {'new' if new else 'demolished'} buildings .",
                           format_boxes(sel), boxes=sel))
        b = changed[int(rng.integers(len(changed)))]
        box = format_boxes([to_percent(b.box, size)])
        if new:
            idx = [j for j, st in enumerate(b.statuses) if st == "roofed"]
            q = f"in which images is the building in {box} complete ?"
        else:
            idx = [j for j, st in enumerate(b.statuses) if st == "roofed"]
            q = f"in which images is the building in {box} standing ?"
        out.append(Example(seq_id, "tre", q, _images(idx)))
        out.append(Example(seq_id, "rtqa", f"what is the status of the building in {box} in each image ?",
                           " ".join(b.statuses)))
    if s.scene == "flooded_road":
        idx = [j for j, f in enumerate(s.flood_frames) if f]
        out.append(Example(seq_id, "tre", "in which images is the road flooded ?", _images(idx)))
        out.append(Example(seq_id, "rtqa", "what is the status of the road in each image ?",
                           " ".join("flooded" if f else "no_change" for f in s.flood_frames)))
    return out


def make_examples(sequences: Sequence[EOSequence], *, seed: int = 0,
                  tasks: Sequence[str] | None = None) -> list[Example]:
    """Every applicable task question for each sequence (one random building per region task)."""
    rng = np.random.default_rng(check_seed(seed))
    keep = set(TASKS if tasks is None else tasks)
    unknown = keep - set(TASKS)
    if unknown:
        raise ValueError(f"tasks must be drawn from {TASKS}, got {sorted(unknown)}")
    out: list[Example] = []
    for i, s in enumerate(sequences):
        out.extend(e for e in _examples_of(i, s, rng) if e.task in keep)
    return out
