"""The paper's claims over seeds, from the claims registry (``iclr25.teochat.claims``: at the test rung, region
temporal QA by TEOChat vs a single-image model, in domain and zero shot; the committed claims.json and
claims-calibration.json), plus metric parity
with a brute-force rasteriser and invalid answers as misses (the reference's bug fixed)."""

from pathlib import Path

import numpy as np
import pytest

from iclr25.teochat import damage_f1, pixel_f1
from iclr25.teochat.claims import REGISTRY
from iclr25.teochat.conversation import format_boxes

test_claim = REGISTRY.pytest_test("test")
test_committed_claims = REGISTRY.pytest_committed_test(Path(__file__).resolve().parents[1])


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


def test_repro_rung_decides_its_claims_over_three_seeds_and_writes_every_seed(tmp_path):
    """The repro command's path at a toy size: three seeds, every repro claim decided, claims.json and a
    results.md with one value per seed."""
    import json

    from iclr25.teochat.claims import repro_report
    from iclr25.teochat.report import write_repro
    from iclr25.teochat.repro import run_repro
    from iclr25.utils.results import RunResult

    results = {s: run_repro(seed=s, n_train=24, n_test=16, steps=2, batch_size=4, specialist_steps=2, ladder=[1, 2])
               for s in (0, 1, 2)}
    report = repro_report(results, command="test", load=(1.0, 1.0, 1.0))
    # every claim measured on the ReproResult (the rtqa pair comes from rtqa_measurements, passed as extra=)
    assert {r.claim.id for r in report.results} == {c for c in REGISTRY.claims_at("repro") if c.startswith("repro-")}
    assert all(len(r.values) == 3 for r in report.results)
    write_repro(RunResult.start("iclr25-teochat", "repro"), results, tmp_path, report)
    claims = json.loads((tmp_path / "claims.json").read_text())
    assert claims["rung"] == "repro" and claims["load_at_start"] == [1.0, 1.0, 1.0]
    md = (tmp_path / "results.md").read_text()
    assert "seeds 0, 1, 2" in md and "every building" in md
