"""The approximate (MinHash LSH) path: no false positives, exact values, recall at the design level."""

import numpy as np
import pytest

from iclr25.augood import similarity_matrix
from iclr25.augood.neighbours import approximate_similarity_matrix, lsh_plan, pair_recall


@pytest.mark.parametrize("threshold", [0.45, 0.6])
def test_lsh_finds_the_exact_pairs_with_their_exact_values(small_sim, threshold):
    fp = small_sim[1]
    exact = similarity_matrix(fp, min_threshold=threshold)
    approx, plan, checked = approximate_similarity_matrix(fp, min_threshold=threshold, seed=3, return_plan=True)
    assert plan.miss_at_threshold <= 0.005 and checked > 0
    # every stored pair is a true pair with the exact float32 value (verification is exact)
    both = approx.multiply(exact > 0)
    assert both.nnz == approx.nnz
    np.testing.assert_array_equal(approx.toarray()[approx.toarray() > 0], exact.toarray()[approx.toarray() > 0])
    assert (approx != approx.T).nnz == 0 and approx.diagonal().max() == 0
    recall = approx.nnz / exact.nnz
    assert recall >= 0.99, recall
    # pair_recall on all rows agrees with the direct count; on a sample it is an estimate of it
    r_all, k_all = pair_recall(approx, fp, threshold)
    assert k_all == exact.nnz and r_all == pytest.approx(recall)
    r_sample, k_sample = pair_recall(approx, fp, threshold, n_queries=100, seed=1)
    assert 0 < k_sample < k_all and r_sample >= 0.95


def test_too_few_bands_lose_pairs_and_the_plan_says_so(small_sim):
    fp = small_sim[1]
    exact = similarity_matrix(fp, min_threshold=0.45).nnz
    weak, plan, _ = approximate_similarity_matrix(fp, min_threshold=0.45, rows_per_band=6, n_bands=2,
                                                  return_plan=True)
    assert plan.miss_at_threshold > 0.9
    assert weak.nnz < 0.5 * exact  # the recall measurement is not vacuous: a bad plan shows up


def test_plan_meets_the_design_miss_rate():
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    fp = sp.csr_matrix((rng.random((300, 256)) < 0.1).astype(np.int16))
    for t in (0.5, 0.7):
        plan = lsh_plan(fp, t, recall=0.99)
        assert (1 - t ** plan.rows_per_band) ** plan.n_bands <= 0.005 + 1e-12
    with pytest.raises(ValueError, match="needs more than max_hashes"):
        lsh_plan(fp, 0.05, recall=0.999999, max_hashes=10)
    with pytest.raises(ValueError, match="min_threshold must be > 0"):
        approximate_similarity_matrix(fp, min_threshold=0.0)
    with pytest.raises(ValueError, match=r"recall must be in \(0, 1\)"):
        approximate_similarity_matrix(fp, min_threshold=0.5, recall=1.0)


@pytest.mark.parametrize("backend", ["threading", None])
def test_lsh_in_parallel_gives_the_same_pairs(small_sim, backend):
    fp = small_sim[1]
    one = approximate_similarity_matrix(fp, min_threshold=0.5, seed=2)
    two = approximate_similarity_matrix(fp, min_threshold=0.5, seed=2, n_jobs=2, backend=backend)
    assert (one != two).nnz == 0
