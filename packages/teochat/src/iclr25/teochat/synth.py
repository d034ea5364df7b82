"""``teosynth``: a procedural generator of dated temporal earth-observation sequences.

Each sequence is 2-5 RGB frames of one location with increasing dates, stored in a *shuffled* order (the
pipeline must sort them by date, as TEOChat sorts by ``timestamp``). A scene class drives an event program:

* ``residential``: 4-6 buildings that stay; in half of the scenes a disaster strikes one or two of them on the
  last frame with a damage level (``minor_damage`` = a roof colour change visible only relative to the earlier
  frames, ``major_damage`` = half the roof replaced by rubble, ``destroyed`` = a rubble patch), the others are
  ``no_damage`` (xBD analog);
* ``construction_site``: 4-6 buildings of which one or two are new (absent -> cleared -> foundation -> roofed;
  S2Looking / QFabric analog); ``demolition_site``: one or two of 4-6 are demolished (roofed -> cleared);
* ``flooded_road``: a road that a water polygon covers from some frame on;
* ``farm``, ``runway``, ``solar_farm``, ``parking_lot``: static layouts with seasonal / per-frame variation.

In every change scene the unchanged buildings stand in every frame, the last included, and 1-3 *static
distractor footprints* (:data:`DISTRACTOR_STATUSES`: a cleared lot, a rubble patch, a half-rubble roof or a
foundation, the same in every frame; ``no_change``, no damage level) look exactly like the last frame of a
demolition, a disaster or a construction stage. Which footprints changed can only be told by comparing frames:
neither the last frame alone (a cleared lot may have been cleared before the first frame) nor "every building"
answers it (the trivial answerers and a single-frame oracle are scored beside every model, issue 42). Since
0.5.0; the change scenes of 0.4 had 3-5 buildings and no distractors (the other scenes draw the same pixels).

Nuisances per frame (changes that are not building changes): brightness and colour shift, a seasonal tint of the
terrain, +-1 px misregistration, clouds.

References: Irvin et al., "TEOChat: A Large Vision-Language Assistant for Temporal Earth Observation Data",
ICLR 2025, Sec. 3 (TEOChatlas tasks); the generator is this package's substitute for the imagery.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt

import numpy as np
from scipy import ndimage

from iclr25.utils.seeding import check_seed

__all__ = ["SCENES", "CHANGE_SCENES", "DAMAGE_LEVELS", "STATUSES", "DISTRACTOR_STATUSES", "BuildingTrack", "EOSequence", "generate_sequence",
           "generate_sequences"]

SCENES = ("residential", "construction_site", "demolition_site", "flooded_road", "farm", "runway", "solar_farm",
          "parking_lot")
DAMAGE_LEVELS = ("no_damage", "minor_damage", "major_damage", "destroyed")
#: statuses of a building footprint in one frame
STATUSES = ("absent", "cleared", "foundation", "roofed", "minor_damage", "major_damage", "destroyed")

_ROOFS = np.array([[0.75, 0.2, 0.2], [0.2, 0.3, 0.75], [0.9, 0.9, 0.9], [0.9, 0.55, 0.1], [0.15, 0.6, 0.6]],
                  dtype=np.float32)
_CLEARED = np.array([0.62, 0.52, 0.36], dtype=np.float32)
_FOUNDATION = np.array([0.45, 0.45, 0.47], dtype=np.float32)
_WATER = np.array([0.1, 0.25, 0.55], dtype=np.float32)
_ROAD = np.array([0.35, 0.35, 0.35], dtype=np.float32)


@dataclasses.dataclass(frozen=True)
class BuildingTrack:
    """One building footprint: its pixel box ``(x1, y1, x2, y2)`` (half-open) and its status per frame, in
    chronological order; ``damage`` is its damage level where a disaster struck (else ``None``)."""

    box: tuple[int, int, int, int]
    statuses: tuple[str, ...]
    damage: str | None = None

    @property
    def change(self) -> str:
        """``constructed``, ``demolished``, ``damaged`` or ``no_change`` between the first and last frame."""
        first, last = self.statuses[0], self.statuses[-1]
        if first != "roofed" and last == "roofed":
            return "constructed"
        if first == "roofed" and last == "cleared":
            return "demolished"
        if self.damage not in (None, "no_damage"):
            return "damaged"
        return "no_change"


@dataclasses.dataclass(frozen=True)
class EOSequence:
    """A dated image sequence of one location.

    ``frames`` is ``(T, H, W, 3)`` uint8 and ``dates`` (``"YYYY-MM-DD"``) in the *stored* order, which may be
    shuffled; ``order`` is the chronological order (``frames[order]`` is sorted by date). Annotations
    (``buildings``, ``flood_frames``) are chronological.
    """

    frames: np.ndarray
    dates: tuple[str, ...]
    scene: str = ""
    buildings: tuple[BuildingTrack, ...] = ()
    flood_frames: tuple[bool, ...] = ()
    name: str = ""

    @property
    def n_frames(self) -> int:
        return int(self.frames.shape[0])

    @property
    def size(self) -> int:
        return int(self.frames.shape[1])

    @property
    def order(self) -> np.ndarray:
        """Indices that sort the stored frames chronologically (stable on equal dates)."""
        return np.argsort(np.array([_dt.date.fromisoformat(d).toordinal() for d in self.dates]), kind="stable")

    def chronological(self) -> np.ndarray:
        """The frames sorted by date, ``(T, H, W, 3)`` uint8."""
        return self.frames[self.order]


# ------------------------------------------------------------------------------------------ rendering
def _terrain(rng: np.random.Generator, s: int) -> np.ndarray:
    t = ndimage.gaussian_filter(rng.normal(size=(s, s)), sigma=s / 10)
    t = (t - t.min()) / (np.ptp(t) + 1e-9)
    green, brown = np.array([0.22, 0.42, 0.18]), np.array([0.45, 0.38, 0.24])
    img = green[None, None] * (1 - t[..., None]) + brown[None, None] * t[..., None]
    img = img + rng.normal(scale=0.02, size=(s, s, 3))
    return img.astype(np.float32)


def _place_boxes(rng: np.random.Generator, s: int, n: int, free: np.ndarray, lo: int, hi: int
                 ) -> list[tuple[int, int, int, int]]:
    boxes: list[tuple[int, int, int, int]] = []
    for _ in range(200):
        if len(boxes) == n:
            break
        w, h = (int(v) for v in rng.integers(lo, hi + 1, size=2))
        x1, y1 = int(rng.integers(1, s - w)), int(rng.integers(1, s - h))
        if free[max(0, y1 - 1):y1 + h + 1, max(0, x1 - 1):x1 + w + 1].all():
            boxes.append((x1, y1, x1 + w, y1 + h))
            free[max(0, y1 - 1):y1 + h + 1, max(0, x1 - 1):x1 + w + 1] = False
    return boxes


def _draw_building(img: np.ndarray, box: tuple[int, int, int, int], status: str, roof: np.ndarray,
                   alt_roof: np.ndarray, rubble: np.ndarray, half: int) -> None:
    x1, y1, x2, y2 = box
    if status == "absent":
        return
    if status == "cleared":
        img[y1:y2, x1:x2] = _CLEARED
        return
    if status == "foundation":
        img[y1:y2, x1:x2] = _FOUNDATION
        return
    if status == "destroyed":
        img[y1:y2, x1:x2] = rubble[y1:y2, x1:x2]
        return
    img[y1:y2, x1:x2] = alt_roof if status == "minor_damage" else roof
    img[y1:y2, x1] *= 0.7  # a shadowed edge, so adjacent roofs stay separable
    img[y2 - 1, x1:x2] *= 0.7
    if status == "major_damage":
        if half == 0:
            xm = (x1 + x2) // 2
            img[y1:y2, x1:xm] = rubble[y1:y2, x1:xm]
        else:
            ym = (y1 + y2) // 2
            img[y1:ym, x1:x2] = rubble[y1:ym, x1:x2]


def _road_mask(rng: np.random.Generator, s: int, horizontal: bool | None = None) -> np.ndarray:
    m = np.zeros((s, s), dtype=bool)
    horizontal = bool(rng.integers(2)) if horizontal is None else horizontal
    c, w = int(rng.integers(s // 4, 3 * s // 4)), max(2, s // 12)
    if horizontal:
        m[c:c + w] = True
    else:
        m[:, c:c + w] = True
    return m


def _dates(rng: np.random.Generator, t: int) -> list[str]:
    start = _dt.date(2015, 1, 1) + _dt.timedelta(days=int(rng.integers(0, 365 * 7)))
    gaps = rng.integers(20, 400, size=t - 1)
    days = np.concatenate([[0], np.cumsum(gaps)])
    return [(start + _dt.timedelta(days=int(d))).isoformat() for d in days]


def _nuisance(rng: np.random.Generator, img: np.ndarray, clouds: float) -> np.ndarray:
    s = img.shape[0]
    out = img * rng.uniform(0.85, 1.15) + rng.normal(scale=0.03, size=3)
    dy, dx = (int(v) for v in rng.integers(-1, 2, size=2))
    out = np.roll(out, (dy, dx), axis=(0, 1))
    if rng.random() < clouds:
        c = ndimage.gaussian_filter(rng.normal(size=(s, s)), sigma=s / 8)
        c = np.clip((c - np.quantile(c, 0.8)) / (np.ptp(c) + 1e-9) * 6, 0, 0.8)[..., None]
        out = out * (1 - c) + 0.95 * c
    return out


#: scenes whose ``loc`` question asks which buildings changed (they carry the static distractor footprints)
CHANGE_SCENES = ("residential", "construction_site", "demolition_site")
#: the look of a static distractor footprint, the same in every frame (``no_change``): a cleared lot, a
#: foundation, a half-rubble roof or a rubble patch that were there before the first frame. Each looks like the
#: last frame of a change (demolished, major damage, destroyed) or of a construction stage, so that one frame
#: cannot tell a change from a distractor (issue 42).
DISTRACTOR_STATUSES = ("cleared", "destroyed", "major_damage", "foundation")


def _frame_count(rng: np.random.Generator, scene: str, n_frames: int | None) -> int:
    t = int(rng.integers(2, 6)) if n_frames is None else int(n_frames)
    if scene == "construction_site":
        t = max(t, 3)  # room for at least one construction stage between the first and the last frame
    return t


def _track_statuses(rng: np.random.Generator, scene: str, t: int, changes: bool, disaster: bool
                    ) -> tuple[list[str], str | None]:
    """Statuses (chronological) and damage level of one building of a building scene."""
    st = ["roofed"] * t
    damage = None
    if disaster:
        damage = DAMAGE_LEVELS[1 + int(rng.choice(3, p=[0.4, 0.3, 0.3]))] if changes else "no_damage"
        st[-1] = "roofed" if damage == "no_damage" else damage
    elif scene == "construction_site" and changes:
        start = int(rng.integers(1, t - 1)) if t > 2 else 1
        stages = ["cleared", "foundation", "roofed"]
        st = ["absent"] * t
        for j in range(start, t):
            st[j] = stages[min(j - start, 2)]
        st[-1] = "roofed"  # the change must be complete in the last frame
    elif scene == "demolition_site" and changes:
        when = int(rng.integers(1, t))
        st = ["roofed"] * when + ["cleared"] * (t - when)
    return st, damage


def _building_tracks(rng: np.random.Generator, scene: str, s: int, t: int, free: np.ndarray,
                     balanced: bool = False) -> list[BuildingTrack]:
    """The buildings of a building scene, then (change scenes only) the static distractor footprints; with
    ``balanced``, first one static twin per changed building, showing its last-frame look in every frame (and,
    for a constructed building, an empty footprint: its first-frame look), so that no look marks a change."""
    lo, hi = max(4, s // 6), max(6, s // 4)
    change_scene = scene in CHANGE_SCENES
    n_b = int(rng.integers(4, 7)) if change_scene else int(rng.integers(1, 3))
    boxes = _place_boxes(rng, s, n_b, free, lo, hi)
    disaster = scene == "residential" and rng.random() < 0.5
    # the buildings that change: one or two, never all of them, so that the unchanged ones (visible in
    # every frame, the last included) are distractors that only a comparison across time tells apart
    n_change = 0
    if scene in ("construction_site", "demolition_site") or disaster:
        n_change = min(int(rng.integers(1, 3)), max(1, len(boxes) - 1))
    changing = set(rng.choice(len(boxes), size=n_change, replace=False).tolist()) if boxes else set()
    tracks = []
    for k, box in enumerate(boxes):
        st, damage = _track_statuses(rng, scene, t, k in changing, disaster)
        tracks.append(BuildingTrack(box, tuple(st), damage))
    if balanced:
        tracks = _twins(rng, tracks, s, t, free, lo, hi, disaster)
    if change_scene:
        n_d = int(rng.integers(1, 4))
        for box in _place_boxes(rng, s, n_d, free, lo, hi):
            look = DISTRACTOR_STATUSES[int(rng.integers(len(DISTRACTOR_STATUSES)))]
            tracks.append(BuildingTrack(box, (look,) * t, None))
    return tracks


def _twins(rng: np.random.Generator, tracks: list[BuildingTrack], s: int, t: int, free: np.ndarray, lo: int,
           hi: int, disaster: bool) -> list[BuildingTrack]:
    """Per changed building, static footprints with its first- and last-frame looks (issue 60: each look a change
    ends in appears at least as often without a change, in the same scene); a change with no room for its twins
    is drawn unchanged instead."""
    out, twins = [], []
    for b in tracks:
        if b.change == "no_change":
            out.append(b)
            continue
        looks = [b.statuses[-1]] + ([b.statuses[0]] if b.statuses[0] != "roofed" else [])
        boxes = _place_boxes(rng, s, len(looks), free, lo, hi)
        if len(boxes) < len(looks):  # no room: the building stays as it was (the placed boxes stay free-marked)
            out.append(BuildingTrack(b.box, ("roofed",) * t, "no_damage" if disaster else None))
            continue
        out.append(b)
        twins += [BuildingTrack(box, (look,) * t, None) for box, look in zip(boxes, looks, strict=True)]
    return out + twins


def _flood_water(rng: np.random.Generator, s: int, t: int, road: np.ndarray) -> tuple[list[bool], np.ndarray]:
    when = int(rng.integers(1, t))
    rr = ndimage.binary_dilation(road, iterations=int(rng.integers(2, 4)))
    blob = ndimage.gaussian_filter(rng.normal(size=(s, s)), sigma=s / 8) > -0.05
    return [j >= when for j in range(t)], rr & blob | road


def _farm_frames(rng: np.random.Generator, base: np.ndarray, t: int) -> list[np.ndarray]:
    s = base.shape[0]
    horizontal = bool(rng.integers(2))
    w = int(rng.integers(3, 6))
    phase = rng.uniform(0, 2 * np.pi)
    out = []
    for j in range(t):
        img = base.copy()
        for k in range(0, s, w):
            season = 0.5 + 0.5 * np.sin(phase + 1.3 * j + k)
            col = np.array([0.25 + 0.5 * season, 0.5, 0.15], dtype=np.float32)
            if horizontal:
                img[k:k + w - 1] = col
            else:
                img[:, k:k + w - 1] = col
        out.append(img)
    return out


def _parking_frames(rng: np.random.Generator, base: np.ndarray, t: int) -> list[np.ndarray]:
    s = base.shape[0]
    x0, y0 = int(rng.integers(0, s // 4)), int(rng.integers(0, s // 4))
    x1, y1 = int(rng.integers(3 * s // 4, s)), int(rng.integers(3 * s // 4, s))
    out = []
    for _ in range(t):
        img = base.copy()
        img[y0:y1, x0:x1] = np.array([0.3, 0.3, 0.32])
        for _ in range(int(rng.integers(4, 12))):
            cy, cx = int(rng.integers(y0, max(y0 + 1, y1 - 2))), int(rng.integers(x0, max(x0 + 1, x1 - 1)))
            img[cy:cy + 2, cx:cx + 1] = _ROOFS[int(rng.integers(len(_ROOFS)))]
        out.append(img)
    return out


def _static_layout(rng: np.random.Generator, scene: str, s: int, static: np.ndarray, static_mask: np.ndarray
                   ) -> None:
    """Draw the static layout of a ``runway`` or ``solar_farm`` into ``static`` / ``static_mask``."""
    if scene == "runway":
        m = ndimage.binary_dilation(_road_mask(rng, s), iterations=2)
        static[m], static_mask[m] = np.array([0.5, 0.5, 0.52]), True
        ys, xs = np.nonzero(m)
        cy, cx = int(np.median(ys)), int(np.median(xs))
        if np.ptp(xs) > np.ptp(ys):
            for x in range(1, s, 4):
                static[cy, x:x + 2] = 0.95
        else:
            for y in range(1, s, 4):
                static[y:y + 2, cx] = 0.95
    elif scene == "solar_farm":
        x0, y0 = int(rng.integers(0, s // 4)), int(rng.integers(0, s // 4))
        for y in range(y0, s - 2, 4):
            for x in range(x0, s - 2, 5):
                static[y:y + 3, x:x + 4], static_mask[y:y + 3, x:x + 4] = np.array([0.08, 0.12, 0.3]), True


def _render(rng: np.random.Generator, base: np.ndarray, per_frame: list[np.ndarray] | None, static: np.ndarray,
            static_mask: np.ndarray, tracks: list[BuildingTrack], flood: list[bool], water: np.ndarray | None,
            clouds: float) -> np.ndarray:
    """The chronological frames ``(T, H, W, 3)`` uint8: terrain, season, layout, water, buildings, nuisances."""
    s, t = base.shape[0], len(flood)
    roofs = [(_ROOFS[int(rng.integers(len(_ROOFS)))]) for _ in tracks]
    alts = [_ROOFS[(int(np.nonzero((_ROOFS == r).all(1))[0][0]) + int(rng.integers(1, len(_ROOFS)))) % len(_ROOFS)]
            for r in roofs]
    rubble = (0.35 + 0.3 * rng.random((s, s, 1)) * np.array([1.0, 0.9, 0.8])).astype(np.float32)
    halves = rng.integers(0, 2, size=len(tracks))
    season = rng.uniform(-0.08, 0.08, size=t)  # a distractor change: the terrain greens and browns over time
    frames = []
    for j in range(t):
        img = per_frame[j].copy() if per_frame is not None else base.copy()
        if per_frame is None:
            img = img + season[j] * np.array([0.6, -0.4, 0.2], dtype=np.float32)
        img[static_mask] = static[static_mask]
        if water is not None and flood[j]:
            img[water] = _WATER
        for tr, roof, alt, half in zip(tracks, roofs, alts, halves, strict=True):
            _draw_building(img, tr.box, tr.statuses[j], roof, alt, rubble, int(half))
        frames.append(_nuisance(rng, img, clouds))
    return (np.clip(np.stack(frames), 0, 1) * 255).round().astype(np.uint8)


def generate_sequence(rng: np.random.Generator, *, size: int = 32, scene: str | None = None,
                      n_frames: int | None = None, clouds: float = 0.1, shuffle: bool = True,
                      name: str = "", balanced_looks: bool = False) -> EOSequence:
    """Draw one sequence with ``rng`` (see the module docstring for the scene programs; ``balanced_looks``:
    :func:`generate_sequences`)."""
    s = size
    scene = SCENES[int(rng.integers(len(SCENES)))] if scene is None else scene
    if scene not in SCENES:
        raise ValueError(f"scene must be one of {SCENES}, got {scene!r}")
    t = _frame_count(rng, scene, n_frames)
    base = _terrain(rng, s)
    free = np.ones((s, s), dtype=bool)
    static = np.zeros((s, s, 3), dtype=np.float32)
    static_mask = np.zeros((s, s), dtype=bool)
    tracks: list[BuildingTrack] = []
    flood, water = [False] * t, None
    per_frame: list[np.ndarray] | None = None
    if scene in (*CHANGE_SCENES, "flooded_road"):
        if scene == "flooded_road":
            road = _road_mask(rng, s)
            static[road], static_mask[road] = _ROAD, True
            free &= ~ndimage.binary_dilation(road, iterations=2)
        tracks = _building_tracks(rng, scene, s, t, free, balanced_looks)
        if scene == "flooded_road":
            flood, water = _flood_water(rng, s, t, static_mask)
    elif scene == "farm":
        per_frame = _farm_frames(rng, base, t)
    elif scene == "parking_lot":
        per_frame = _parking_frames(rng, base, t)
    else:
        _static_layout(rng, scene, s, static, static_mask)
    frames_u8 = _render(rng, base, per_frame, static, static_mask, tracks, flood, water, clouds)
    dates = _dates(rng, t)
    perm = rng.permutation(t) if shuffle else np.arange(t)
    return EOSequence(frames=frames_u8[perm], dates=tuple(dates[i] for i in perm), scene=scene,
                      buildings=tuple(tracks), flood_frames=tuple(flood), name=name)


def generate_sequences(n: int, *, seed: int = 0, size: int = 32, clouds: float = 0.1,
                       scenes: tuple[str, ...] | None = None, balanced_looks: bool = False) -> list[EOSequence]:
    """``n`` sequences with scene classes drawn uniformly from ``scenes`` (default: all eight).

    ``balanced_looks`` (issue 60): each changed building gets static twins in its scene showing its first- and
    last-frame looks in every frame, so that a footprint's look in one frame (first or last) is a change at most
    half the time (``tests/test_generator.py``). Off here (the 0.5-0.7 draws, bit-identical); on by default in
    :func:`iclr25.teochat.experiments.make_data`, the data of the repro rung's claims, since 0.8."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 16:
        raise ValueError(f"size must be an integer >= 16 (pixels), got {size!r}")
    if not 0.0 <= clouds <= 1.0:
        raise ValueError(f"clouds must be a probability in [0, 1], got {clouds!r}")
    scenes = SCENES if scenes is None else tuple(scenes)
    for sc in scenes:
        if sc not in SCENES:
            raise ValueError(f"scenes must be drawn from {SCENES}, got {sc!r}")
    rng = np.random.default_rng(check_seed(seed))
    return [generate_sequence(rng, size=int(size), scene=scenes[int(rng.integers(len(scenes)))], clouds=clouds,
                              name=f"seq{i:05d}", balanced_looks=balanced_looks) for i in range(n)]
