"""The copy rate of issue 41: a shortcut (a constant answer, "noise image → yes") cannot pass as less copying."""

import numpy as np
import pytest

from iclr25.mmed_rag import copying, generate, make_report, noise_accuracy
from iclr25.mmed_rag.experiments import conflict_set, stated_answers


def test_constant_answers_score_one_half_and_copier_one():
    rng = np.random.default_rng(0)
    stated = (rng.random(200) < 0.3).astype(int)
    for const in (0, 1):
        c = copying(stated, np.full(200, const))
        assert c["copy_rate"] == 0.5
        assert c["follows_reports"] == pytest.approx(c["always_yes"] if const else c["always_no"])
    assert copying(stated, stated)["copy_rate"] == 1.0  # follows the reports
    assert copying(stated, 1 - stated)["copy_rate"] == 0.0  # follows the image (which shows 1 - stated)
    # the old metric: a model answering "yes" to every noise image is "right" at the share of true "yes"
    assert noise_accuracy(stated, np.ones(200, int)) == pytest.approx(stated.mean())


def test_conflict_images_contradict_the_reports():
    ds = generate(12, seed=3)
    # the reports of another image of the same domain, as a retriever would give
    ctx = [[ds.reports[(i + 1) % len(ds)], ds.reports[(i + 2) % len(ds)]] for i in range(len(ds))]
    items, images, stated = conflict_set(ds, ctx, seed=0)
    assert len(items) > 0 and set(np.unique(stated)) <= {0, 1}
    img, fnd = np.repeat(np.arange(len(ds)), 4)[items], np.tile(np.arange(4), len(ds))[items]
    # each replacement image is one of ds of the same domain with the opposite label on the asked finding
    for n, (i, f, s) in enumerate(zip(img, fnd, stated, strict=True)):
        j = int(np.flatnonzero((ds.images == images[n]).all(axis=(1, 2, 3)))[0])
        assert ds.domains[j] == ds.domains[i] and ds.labels[j, f] == 1 - s
    # majority of the reports that state the finding; a tie or silence is -1
    d = 0
    yes, no = make_report(d, [1, 0, 0, 0]), make_report(d, [0, 0, 0, 0])
    assert stated_answers([d, d, d], [[yes, yes, no], [yes, no], []], [0, 0, 0]).tolist() == [1, -1, -1]
