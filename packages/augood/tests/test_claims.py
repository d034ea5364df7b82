"""The paper's claims decided over seeds from the claims registry (``iclr25.augood.claims``), and the properties of
the metric and the partitions that are not claims of the paper (400-1,282 solubility molecules)."""

from pathlib import Path

import numpy as np
import pytest

from iclr25.augood import (
    au_good,
    ccpart,
    ccpart_sweep,
    compare_models,
    random_partition,
    scaffold_partition,
    threshold_grid,
)

THRESHOLDS = threshold_grid(0.30, 0.95, 0.05)


# 1. the paper's claims, over seeds -----------------------------------------------------------------------
from iclr25.augood.claims import REGISTRY  # noqa: E402

test_claim = REGISTRY.pytest_test("test")
# the committed claims.json (written by the repro rung) and claims-calibration.json agree with the registry
test_committed_claims = REGISTRY.pytest_committed_test(Path(__file__).parents[1])


@pytest.mark.parametrize("seed", [0, 1])
def test_label_balanced_ccpart_does_not_leak(small_sim, seed):
    sim, _, y, _ = small_sim
    dense = sim.toarray()
    parts = ccpart_sweep(sim, THRESHOLDS, seed=seed, labels=y)
    checked = 0
    for p in parts:
        if not p.viable:
            continue
        checked += 1
        rest = np.concatenate([p.train, p.valid])
        assert dense[np.ix_(p.test, rest)].max() < p.threshold, p.threshold
    assert checked >= 10  # the check ran on most of the grid


# 2. sizes -----------------------------------------------------------------------------------------------
def test_viable_test_fraction_in_range_and_nonviable_reported(solubility):
    from iclr25.augood import similarity_matrix

    sim = similarity_matrix(solubility.smiles)
    parts = ccpart_sweep(sim, THRESHOLDS, seed=0)
    for p in parts:
        assert p.test_fraction <= 0.2
        assert p.viable == (p.test_fraction >= 0.9 * 0.2)
        if p.viable:
            assert 0.18 <= p.test_fraction <= 0.2
    # at λ = 0.30 one giant component holds most of the 1,282 molecules: the test set cannot be filled
    assert not parts[0].viable and parts[0].test_fraction < 0.18
    assert all(p.viable for p in parts[3:])


# 3. disjoint row ids ------------------------------------------------------------------------------------
def _assert_partition(p, n):
    for a in (p.train, p.valid, p.test):
        assert a.dtype.kind == "i" and np.all(np.diff(a) > 0)
    joined = np.concatenate([p.train, p.valid, p.test])
    assert joined.size == n and np.array_equal(np.sort(joined), np.arange(n))


def test_partitions_are_disjoint_row_ids(small_sim):
    sim, _, y, smiles = small_sim
    n = sim.shape[0]
    parts = [*ccpart_sweep(sim, THRESHOLDS, seed=3), ccpart(sim, 0.5, labels=y),
             random_partition(n, seed=3), scaffold_partition(smiles, seed=3)]
    for p in parts:
        _assert_partition(p, n)
    r = random_partition(n, test_size=0.2, valid_size=0.1, seed=0)
    assert (r.test.size, r.valid.size) == (80, 40)
    # row ids of the full set: the validation rows are spread over all of range(n)
    assert r.valid.max() > n - r.test.size - r.valid.size


# 4. AU-GOOD bounds and deployment ordering -------------------------------------------------------------
def test_au_good_between_curve_min_and_max():
    rng = np.random.default_rng(0)
    for _ in range(200):
        k = rng.integers(2, 15)
        t = np.sort(rng.choice(np.arange(1, 100), k, replace=False)) / 100
        perf = rng.normal(size=k)
        perf[rng.random(k) < 0.2] = np.nan
        if np.isnan(perf).all():
            continue
        s = rng.random(rng.integers(1, 300))
        s[rng.random(s.size) < 0.1] = np.nan
        for mode in ("lowest_bin", "drop"):
            try:
                r = au_good(perf, s, t, unmatched=mode)
            except ValueError:
                assert mode == "drop"  # every item outside the bins
                continue
            assert np.nanmin(perf) - 1e-12 <= r.value <= np.nanmax(perf) + 1e-12
            assert r.weights.sum() == pytest.approx(1.0)
        u = au_good(perf, None, t)
        assert u.value == pytest.approx(np.nanmean(perf))


# 5. drop mode = the reference formula; default = drop + the dropped mass -------------------------------
def _reference_augood(values, thresholds, max_sim_present):
    """The note's formula: right-closed bins, weights = counts / sum; items beyond λ_K or absent dropped."""
    rows = np.asarray(max_sim_present)
    weights = []
    for idx, b in enumerate(thresholds):
        if idx == 0:
            weights.append((rows <= b).sum())
        else:
            weights.append(((rows > thresholds[idx - 1]) * (rows <= b)).sum())
    weights = np.array(weights) / np.sum(weights)
    return float(np.dot(weights, values))


def test_drop_mode_matches_reference_and_default_adds_the_dropped_mass(small_sim):
    from iclr25.augood import similarity_matrix

    sim, fp, _, smiles = small_sim
    train, deploy = smiles[:300], smiles[300:]
    S = similarity_matrix(deploy, train, min_threshold=0.4)  # some deployment rows store nothing
    t = threshold_grid(0.4, 0.85, 0.05)
    perf = np.linspace(0.2, 0.8, t.size) + np.random.default_rng(1).normal(0, 0.05, t.size)
    dense_max = S.toarray().max(axis=1)
    present = np.diff(S.indptr) > 0
    drop = au_good(perf, S, t, unmatched="drop")
    ref = _reference_augood(perf, t, dense_max[present])
    assert abs(drop.value - ref) <= 1e-12
    default = au_good(perf, S, t)
    m_low, m_high = default.n_unmatched / default.n_targets, default.n_above / default.n_targets
    assert m_low > 0 and m_high > 0  # both kinds of outside item occur here
    assert default.dropped_mass == pytest.approx(m_low + m_high)
    expected = (1 - m_low - m_high) * drop.value + m_low * perf[0] + m_high * perf[-1]
    assert abs(default.value - expected) <= 1e-12


# comparison --------------------------------------------------------------------------------------------
def test_compare_models_matches_scipy_and_holm():
    from scipy.stats import friedmanchisquare, wilcoxon

    rng = np.random.default_rng(0)
    vals = {"a": rng.normal(0.6, 0.1, 12), "b": rng.normal(0.5, 0.1, 12), "c": rng.normal(0.4, 0.1, 12)}
    cmp = compare_models(vals)
    names = list(vals)
    flat = []
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i != j:
                ref = wilcoxon(vals[a], vals[b], alternative="greater").pvalue
                assert abs(cmp.p_values[i, j] - ref) <= 1e-12
                flat.append(ref)
    m = len(flat)
    order = np.argsort(flat)
    adj = np.maximum.accumulate([min(1, (m - r) * flat[o]) for r, o in enumerate(order)])
    assert np.allclose(np.sort(cmp.p_holm[~np.eye(3, dtype=bool)]), np.sort(adj))
    assert cmp.friedman_p == pytest.approx(friedmanchisquare(*vals.values()).pvalue)
    assert cmp.ranking[0] == "a" and cmp.p_values[0, 2] < 0.05
