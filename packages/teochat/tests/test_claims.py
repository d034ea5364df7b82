"""The paper's claims at small scale (seeded): metric parity with a brute-force rasteriser, invalid answers as
misses (the reference's bug fixed), and a tiny run that classifies temporal scenes above chance."""

import numpy as np
import pytest

from iclr25.teochat import damage_f1, pixel_f1
from iclr25.teochat.conversation import format_boxes


def _brute_mask(boxes, size):
    """Pixel (i, j) is in box (x1, y1, x2, y2) (0-100) iff its centre is: x1 R/100 <= j + 1/2 < x2 R/100."""
    j = np.arange(size)
    cx = 100 * (2 * j + 1)  # 200 R * centre / R, in integers
    m = np.zeros((size, size), dtype=bool)
    for x1, y1, x2, y2 in boxes:
        inx = (cx >= 2 * x1 * size) & (cx < 2 * x2 * size)
        iny = (cx >= 2 * y1 * size) & (cx < 2 * y2 * size)
        m |= iny[:, None] & inx[None, :]
    return m


def _random_box(rng):
    x1, y1 = rng.integers(0, 99, size=2)
    return (int(x1), int(y1), int(rng.integers(x1 + 1, 101)), int(rng.integers(y1 + 1, 101)))


def test_pixel_f1_equals_brute_force_rasteriser_on_200_box_sets():
    rng = np.random.default_rng(0)
    n_invalid = 0
    for _ in range(200):
        n_ex = int(rng.integers(1, 4))
        preds, targets, tp, fp, fn = [], [], 0, 0, 0
        for _ in range(n_ex):
            gt = [_random_box(rng) for _ in range(int(rng.integers(0, 5)))]
            pb = [_random_box(rng) for _ in range(int(rng.integers(0, 5)))]
            text = format_boxes(pb)
            if rng.random() < 0.15:  # malformed answers: a miss for every ground-truth pixel
                text = rng.choice(["[12, 40, 31]", "[50, 10, 20, 30]", "boxes please", "[1, 2, 3, 104]"])
                pb = None
                n_invalid += 1
            preds.append(str(text))
            targets.append(gt)
            g = _brute_mask(gt, 256)
            p = _brute_mask(pb, 256) if pb is not None else np.zeros_like(g)
            tp += int((p & g).sum())
            fp += int((p & ~g).sum())
            fn += int((~p & g).sum())
        r = pixel_f1(preds, targets)
        assert (r.tp, r.fp, r.fn) == (tp, fp, fn)
        expect = 2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else 1.0
        assert r.f1 == expect
    assert n_invalid > 10


def test_invalid_answers_count_as_misses():
    gt = [[(10, 10, 50, 50)], [(60, 60, 90, 90)]]
    good = pixel_f1(["[10, 10, 50, 50]", "[60, 60, 90, 90]"], gt)
    assert good.f1 == 1.0 and good.parse_failure_rate == 0.0
    half = pixel_f1(["[10, 10, 50, 50]", "the building is at the top"], gt)
    assert half.parse_failure_rate == 0.5
    assert half.fn == int(_brute_mask(gt[1][0:1], 256).sum())  # every pixel of the unparsed example is missed
    assert half.f1 < 1.0
    # damage: an answer that is no class is a false negative of the true class (reference: added nothing)
    fixed = damage_f1(["destroyed", "banana"], ["destroyed", "destroyed"], [(0, 0, 50, 50), (50, 50, 100, 100)])
    assert fixed.per_class["destroyed"] == pytest.approx(2 / 3)
    assert fixed.invalid_rate == 0.5


def test_tiny_run_classifies_temporal_scenes_above_twice_chance():
    from iclr25.teochat import (
        ModelConfig,
        TrainConfig,
        Vocabulary,
        generate_sequences,
        make_examples,
        train_assistant,
    )
    from iclr25.teochat.metrics import accuracy
    from iclr25.teochat.synth import SCENES

    train = generate_sequences(400, seed=0)
    test = generate_sequences(160, seed=1)
    ex_tr = make_examples(train, tasks=["tsc"])
    ex_te = make_examples(test, tasks=["tsc"])
    asst = train_assistant(train, ex_tr, seed=0, config=TrainConfig(steps=80, batch_size=16, lr=3e-3),
                           model_config=ModelConfig(vocab_size=len(Vocabulary()), d_model=64, n_layers=2))
    acc = accuracy(asst.predict(ex_te, test), [e.answer for e in ex_te])
    assert acc > 2 / len(SCENES), acc
