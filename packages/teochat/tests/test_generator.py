"""The generator's opt-in fix of issue 60 (``generate_sequences(..., balanced_looks=True)``): no footprint look in
one frame, first or last, marks a change more than half the time, in any scene type; the default draws are
unchanged (every committed number was measured on them)."""

from collections import Counter

import numpy as np

from iclr25.teochat.experiments import REPRO_SCENES
from iclr25.teochat.synth import generate_sequences


def test_no_look_in_one_frame_is_a_change_more_than_half_the_time():
    seqs = generate_sequences(150, seed=11, scenes=REPRO_SCENES, balanced_looks=True)
    for frame in (0, -1):
        changed, total = Counter(), Counter()
        for s in seqs:
            for b in s.buildings:
                for key in (b.statuses[frame], (s.scene, b.statuses[frame])):
                    total[key] += 1
                    changed[key] += b.change != "no_change"
        share = {k: changed[k] / total[k] for k in total}
        assert max(share.values()) <= 0.5, (frame, {k: round(v, 3) for k, v in share.items() if v > 0.5})
        # every look a change ends (or starts) in is there, among the changes and the static footprints alike
        assert {k for k in total if isinstance(k, str) and changed[k]} >= (
            {"cleared", "roofed", "minor_damage", "major_damage", "destroyed"} if frame == -1 else {"absent", "roofed"})
    assert sum(b.change != "no_change" for s in seqs for b in s.buildings) > 40  # changes are still drawn


def test_the_default_draws_are_unchanged():
    a = generate_sequences(30, seed=4, scenes=REPRO_SCENES)
    b = generate_sequences(30, seed=4, scenes=REPRO_SCENES, balanced_looks=False)
    assert all(np.array_equal(x.frames, y.frames) and x.buildings == y.buildings for x, y in zip(a, b, strict=True))
    # the unbalanced generator is the one issue 60 found readable from one frame: a minor-damage look is always
    # a change there
    looks = Counter((b.statuses[-1], b.change != "no_change") for s in a for b in s.buildings)
    assert looks[("minor_damage", False)] == 0
