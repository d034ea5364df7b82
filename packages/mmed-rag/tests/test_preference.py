"""Preference pairs for report generation (the paper mines them for reports as well as VQA) and the DPO stage
on them; reading findings back from a report."""

import numpy as np
import pytest
import torch

from iclr25.mmed_rag import (
    Examples,
    PreferencePairs,
    TinyVLM,
    Vocab,
    generate,
    make_report,
    read_report,
    report_finding_accuracy,
    train_dpo,
)
from iclr25.mmed_rag import preference as pref
from iclr25.mmed_rag.vlm import REPORT_QUESTION, encode_prompts, token_logps


def test_read_report_recovers_every_label():
    rng = np.random.default_rng(0)
    for d in range(3):
        for _ in range(40):
            lab = rng.integers(0, 2, 4)
            assert read_report(d, make_report(d, lab, rng=rng)).tolist() == lab.tolist()
    # "no cardiomegaly" must not read as "cardiomegaly"; unstated and contradictory findings are -1
    assert read_report("radiology", "chest x ray . no cardiomegaly .").tolist() == [-1, 0, -1, -1]
    assert read_report("radiology", "cardiomegaly . heart size is normal . no nodule").tolist() == [-1, -1, -1, 0]
    acc = report_finding_accuracy([0, 0], ["no opacity . no cardiomegaly . no effusion . no nodule .", ""],
                                  [[0, 0, 0, 1], [0, 0, 0, 0]])
    np.testing.assert_allclose(acc, [0.75, 0.0])


@pytest.fixture(scope="module")
def report_data():
    ds = generate(2, seed=5)  # 6 images, 2 per domain
    ctx = [[ds.reports[(i + 1) % 6]] for i in range(6)]
    return ds, Examples(ds.images, ctx, [REPORT_QUESTION] * 6, list(ds.reports))


def test_report_pairs_follow_the_three_scenarios(report_data, monkeypatch):
    ds, data = report_data
    truth = list(ds.reports)
    wrong = [make_report(int(d), 1 - lab) for d, lab in zip(ds.domains, ds.labels, strict=True)]
    # the model's reports without context (g0), with context (g1) and from a noise image with context (gn)
    g0 = [wrong[0], truth[1], truth[2], wrong[3], truth[4], wrong[5]]
    g1 = [truth[0], wrong[1], truth[2], wrong[3], wrong[4], truth[5]]
    gn = [truth[0], wrong[1], wrong[2], truth[3], wrong[4], wrong[5]]
    calls = iter([g0, g1, gn])
    monkeypatch.setattr(pref, "generate_reports", lambda model, images, contexts: next(calls))
    pairs = pref.mine_report_preferences(None, data, ds.domains, ds.labels, seed=0)
    assert pairs.stats["report_cm"] == 2 and pairs.stats["report_oa1"] == 2 and pairs.stats["report_oa2"] == 2
    assert pairs.kind.tolist() == ["cm", "cm", "oa1", "oa1", "oa2", "oa2"]
    assert set(pairs.task.tolist()) == {"report"}
    assert pairs.chosen.answers == [truth[i] for i in (0, 3, 0, 5, 1, 4)]
    # D_cm: the same ground-truth report with a noise image; D_oa: the model's own wrong report, real image
    assert pairs.rejected.answers == [truth[0], truth[3], wrong[0], wrong[5], wrong[1], wrong[4]]
    assert not np.allclose(pairs.rejected.images[:2], pairs.chosen.images[:2])
    np.testing.assert_array_equal(pairs.rejected.images[2:], pairs.chosen.images[2:])
    assert pairs.chosen.contexts == pairs.rejected.contexts  # x_r in both prompts
    with pytest.raises(ValueError, match="threshold must lie in"):
        pref.mine_report_preferences(None, data, ds.domains, ds.labels, threshold=0)


def test_pairs_filter_and_concat(report_data):
    ds, data = report_data
    vqa = PreferencePairs(data.take([0, 1]), data.take([2, 3]), np.array(["oa1", "cm"]), {"cm": 1})
    rep = PreferencePairs(data.take([4]), data.take([5]), np.array(["cm"]), {"report_cm": 1}, np.array(["report"]))
    both = PreferencePairs.concat([vqa, rep])
    assert len(both) == 3 and both.stats == {"cm": 1, "report_cm": 1}
    assert both.only(("cm",), ("report",)).chosen.answers == [data.answers[4]]
    assert len(both.only(tasks=("vqa",))) == 2
    with pytest.raises(ValueError, match="tasks must be among"):
        both.only(tasks=("captioning",))


def test_dpo_on_report_pairs_moves_the_margin(report_data):
    ds, data = report_data
    torch.manual_seed(0)
    wrong = [make_report(int(d), 1 - lab) for d, lab in zip(ds.domains, ds.labels, strict=True)]
    vocab = Vocab.build(list(ds.reports) + wrong + [REPORT_QUESTION])
    model = TinyVLM(vocab).eval()
    rejected = Examples(data.images, data.contexts, data.questions, wrong)
    pairs = PreferencePairs(data, rejected, np.array(["oa1"] * 6), {}, np.array(["report"] * 6))
    ref = model.frozen_copy()

    def margin(m):
        with torch.no_grad():
            x = torch.as_tensor(data.images)
            pc = encode_prompts(vocab, data.contexts, data.questions, data.answers)
            pr = encode_prompts(vocab, data.contexts, data.questions, wrong)
            return float((token_logps(m, x, pc) - token_logps(m, x, pr)).mean())

    policy = model.frozen_copy()
    for p in policy.parameters():
        p.requires_grad_(True)
    policy, stats = train_dpo(policy, pairs, reference=ref, steps=15, lr=1e-3, seed=0)
    assert margin(policy) > margin(ref) + 1.0  # summed over ~20 report tokens: the chosen report gains
    assert stats["reward_accuracy"] > 0.8  # step 0 has policy == reference


def test_cross_modality_pairs_take_a_real_mismatched_image():
    """issue 41: D_cm's rejected image is a real image of another domain (or, as ablations, a same-domain
    image of the opposite class, or noise), and mining takes any model with ``vqa_yes_probability``."""
    from iclr25.mmed_rag.data import vqa_items
    from iclr25.mmed_rag.experiments import mismatched_images

    ds = generate(3, seed=1)
    img, fnd, ans = vqa_items(ds)
    lookup = {ds.images[i].tobytes(): i for i in range(len(ds))}
    mm = mismatched_images(ds, "mismatch", seed=0)
    src = np.array([lookup[x.tobytes()] for x in mm])
    assert np.all(ds.domains[src] != ds.domains[img])  # another domain, a real image of ds
    cf = mismatched_images(ds, "conflict", seed=0)
    src = np.array([lookup.get(x.tobytes(), -1) for x in cf])
    # the opposite class on the asked finding, same domain, wherever ds has such an image
    has = np.array([np.any((ds.domains == ds.domains[i]) & (ds.labels[:, f] != a)) for i, f, a in zip(img, fnd, ans)])
    assert has.sum() > len(img) // 2 and np.all(src >= 0)
    assert np.all(ds.domains[src[has]] == ds.domains[img[has]]) and np.all(ds.labels[src[has], fnd[has]] != ans[has])
    with pytest.raises(ValueError, match="mode must be one of"):
        mismatched_images(ds, "blur")

    class Copier:  # answers from the reports only, whatever the image: every pair it yields is D_cm
        def vqa_yes_probability(self, images, contexts, questions):
            return np.array([0.9 if c and "yes" in c[0] else 0.1 for c in contexts])

    data = Examples(ds.images[img], [["yes" if a else "no"] for a in ans], ["q"] * len(img),
                    ["yes" if a else "no" for a in ans])
    pairs = pref.mine_preferences(Copier(), data, cm_images=mm)
    # it copies with any image (D_cm: all), says "no" without reports (D_oa1: the "yes" questions), never D_oa2
    assert pairs.stats["cm"] == len(img) and pairs.stats["oa1"] == int(ans.sum()) and pairs.stats["oa2"] == 0
    np.testing.assert_array_equal(pairs.only(("cm",)).rejected.images, mm)
    with pytest.raises(ValueError, match="cm_images has shape"):
        pref.mine_preferences(Copier(), data, cm_images=mm[:2])


def test_report_cm_pairs_take_the_given_real_mismatched_image(report_data, monkeypatch):
    from iclr25.mmed_rag.experiments import mismatched_images

    ds, data = report_data
    other = mismatched_images(ds, "mismatch", seed=0, per="image")
    # each x_v* is a real image of ds from another domain (never noise, never the image itself)
    src = [int(np.flatnonzero((ds.images == o).all(axis=(1, 2, 3)))[0]) for o in other]
    assert all(ds.domains[j] != ds.domains[i] for i, j in enumerate(src))
    conflict = mismatched_images(ds, "conflict", seed=0, per="image")
    assert conflict.shape == ds.images.shape
    with pytest.raises(ValueError, match="per must be"):
        mismatched_images(ds, per="pixel")
    truth = list(ds.reports)
    calls = iter([[""] * 6, [""] * 6, truth])  # only the mismatched-image reports are right: 6 D_cm pairs
    monkeypatch.setattr(pref, "generate_reports", lambda model, images, contexts: next(calls))
    pairs = pref.mine_report_preferences(None, data, ds.domains, ds.labels, seed=0, cm_images=other)
    assert pairs.kind.tolist() == ["cm"] * 6
    np.testing.assert_array_equal(pairs.rejected.images, other)
    with pytest.raises(ValueError, match="cm_images has shape"):
        pref.mine_report_preferences(None, data, ds.domains, ds.labels, cm_images=other[:2])
