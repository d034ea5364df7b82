"""Issue 61's readable regime: grey histogram-equalised images (the domain is not in the colour), the image-only
supervised CNN reference and the mean-colour shortcut check, and the rung that decides the two RAG claims."""

import dataclasses

import numpy as np
import pytest

from iclr25.mmed_rag import claims
from iclr25.mmed_rag.data import generate, harmonize
from iclr25.mmed_rag.experiments import REFERENCES, strongest_reference
from iclr25.mmed_rag.supervised import fit_image_only, image_only_accuracy, mean_colour_domain_accuracy


def test_harmonize_gives_every_image_the_same_histogram():
    ds = generate(6, seed=1)
    h = harmonize(ds.images)
    assert h.shape == ds.images.shape and h.dtype == np.float32
    assert np.array_equal(h[:, 0], h[:, 2])  # grey
    flat = np.sort(h[:, 0].reshape(len(h), -1), axis=1)
    assert np.allclose(flat, flat[0])  # one histogram for every image
    # the order of grey levels (what a finding changes) is kept
    g = ds.images.mean(axis=1).reshape(len(h), -1)
    assert np.array_equal(np.argsort(g[0], kind="stable"), np.argsort(h[0, 0].ravel(), kind="stable"))
    with pytest.raises(ValueError, match="images"):
        harmonize(np.full((2, 3, 8, 8), np.nan))


def test_harmonized_domains_defeat_the_mean_colour_classifier():
    colour, grey = generate(30, seed=2), generate(30, seed=2, harmonized=True)
    test_c, test_g = generate(20, seed=3), generate(20, seed=3, harmonized=True)
    assert mean_colour_domain_accuracy(colour, test_c) > 0.95  # the shortcut of the colour regime
    assert mean_colour_domain_accuracy(grey, test_g) < 0.45  # chance is 1/3
    assert np.array_equal(grey.labels, colour.labels) and grey.reports == colour.reports  # same draws otherwise


def test_image_only_cnn_reads_visible_findings():
    train = generate(20, contrast=(1.0, 1.0), prevalence=0.5, harmonized=True, seed=4)
    model = fit_image_only(train, steps=40, batch_size=32, seed=0)
    assert image_only_accuracy(model, train) > 0.7  # the answer prior is ~0.5 here
    p = model.yes_probability(train.images[:3], train.domains[:3], [0, 1, 2])
    assert p.shape == (3,) and np.all((p > 0) & (p < 1))
    with pytest.raises(ValueError, match="steps"):
        fit_image_only(train, steps=0)


def test_readable_rung_decides_the_two_rag_claims_against_the_strongest_references():
    cfg = claims.READABLE
    assert cfg.harmonized and cfg.contrast[0] >= 0.7 and cfg.prevalence == 0.5 and cfg.image_only_steps > 0
    assert 0 < cfg.label_noise < 0.5  # retrieved reports right often, not always
    ids = claims.REGISTRY.claims_at("readable")
    assert sorted(ids) == ["rag-beats-strongest-without-retrieval", "rag-pt-beats-strongest-rag"]
    assert set(claims.NO_RETRIEVAL) | set(claims.RAG_WITHOUT_PT) == set(REFERENCES)  # every reference, once
    assert not set(claims.NO_RETRIEVAL) & set(claims.RAG_WITHOUT_PT)
    m = dict.fromkeys(REFERENCES, 0.5) | {"acc_image_only": 0.8, "acc_retrieval_vote_gap": 0.85}
    assert strongest_reference(m) == ("acc_retrieval_vote_gap", 0.85)
    m |= {"acc_mmed_rag": 0.82, "yes_rate_mmed_rag": 0.5}
    claims.METRICS[("readable", -1)] = m
    claims._FULL.add(("readable", -1))
    try:
        out = claims._readable_claims(-1, "readable")
    finally:
        claims.METRICS.pop(("readable", -1))
        claims._FULL.discard(("readable", -1))
    assert out["rag-beats-strongest-without-retrieval"].reference == 0.8
    assert out["rag-pt-beats-strongest-rag"].reference == 0.85
    assert out["rag-pt-beats-strongest-rag"].alive and dataclasses.is_dataclass(cfg)
